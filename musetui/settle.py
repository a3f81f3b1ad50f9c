"""Waiting until the app has nothing left to do, under Pilot (the tests and the screenshot script).

"Nothing left" is a set of conditions, not a delay: no worker runs (but the live-follow
poller, which runs until the app exits), no one-shot timer (a debounce) is due on any
screen or widget, the main screen has opened what it was asked to, and the message queues
are empty. A fixed sleep is either too short on a busy machine or wasted on an idle one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

#: The worker group that runs for the app's whole life (live follow): never waited for.
FOREVER_GROUPS = frozenset({"follow"})
#: Rounds of waiting for workers (each one replaced by a newer one starts a round).
MAX_ROUNDS = 10_000
#: How often a due timer or a condition is asked about: a poll, not a delay.
POLL_S = 0.01


def pending_timer(node: DOMNode) -> bool:
    """True when a one-shot timer (``set_timer``: a debounce, a deferred refresh) of ``node`` is still due."""
    for timer in list(getattr(node, "_timers", ())):
        task = getattr(timer, "_task", None)
        if getattr(timer, "_repeat", None) == 0 and task is not None and not task.done():
            return True
    return False


def busy(app: App[Any]) -> bool:
    """True while a worker runs, a one-shot timer is due, or the main screen waits to open or index."""
    if any(w.is_running for w in app.workers if w.group not in FOREVER_GROUPS):
        return True
    nodes: list[DOMNode] = [app]
    for screen in app.screen_stack:
        nodes.append(screen)
        nodes.extend(screen.walk_children(with_self=False))
    if any(pending_timer(node) for node in nodes):
        return True
    try:
        scr = app.main_screen  # type: ignore[attr-defined]
    except (AttributeError, LookupError):  # another app, or the main screen not pushed yet
        return False
    return bool(
        getattr(scr, "_pane_timer", None) is not None
        or getattr(scr, "_opening_key", None) is not None
        or not getattr(scr, "finished", True)
    )


async def workers_done(app: App[Any]) -> None:
    """Wait for every worker but the live-follow poller (one replaced by a newer one counts as done)."""
    for _ in range(MAX_ROUNDS):
        pending = [w for w in app.workers if w.group not in FOREVER_GROUPS]
        if not pending:  # (an empty list would mean "every worker" to Textual)
            return
        try:
            await app.workers.wait_for_complete(pending)
        except WorkerCancelled:  # an exclusive worker replaced by a newer one
            continue
        return


async def settle(pilot: Pilot[Any], timeout: float = 60.0) -> None:
    """Wait until :func:`busy` is false, then for the messages that last step posted.

    ``timeout`` only bounds a hang (a screen that never finishes): the caller's assertions then say what is wrong.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await workers_done(pilot.app)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        if not busy(pilot.app):
            break
        if not any(w.is_running for w in pilot.app.workers if w.group not in FOREVER_GROUPS):
            await pilot.pause(POLL_S)  # a timer is due: let the loop run until it fires
    await pilot.pause()


async def wait_for(
    pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 10.0, poll: float = POLL_S
) -> bool:
    """Wait until ``condition()`` holds (True), or ``timeout`` seconds pass (False).

    For what no message or worker of the app announces (a file changed under a live root, an
    indexing worker that has started): ``poll`` is how often it is asked, not a delay.
    """
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        await pilot.pause(poll)
