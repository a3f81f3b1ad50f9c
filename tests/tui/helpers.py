"""Helpers for driving the app under Pilot."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from musetui.app import MuseApp
from musetui.core.model import SessionSummary
from musetui.screens.main import MainScreen

OUTLIER_ID = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"
SIZE = (160, 48)


async def _workers_done(pilot: Pilot[Any]) -> None:
    """Wait for every worker except the live-follow poller (it runs until the app exits)."""
    for _ in range(20):
        try:
            pending = [w for w in pilot.app.workers if w.group != "follow"]
            if pending:  # (an empty list would mean "all workers" to Textual)
                await pilot.app.workers.wait_for_complete(pending)
        except WorkerCancelled:  # an exclusive worker replaced by a newer one
            continue
        return


async def settle(pilot: Pilot[Any], rounds: int = 3) -> None:
    """Wait for workers, timers (debounces) and the messages they post."""
    for _ in range(rounds):
        await _workers_done(pilot)
        await pilot.pause(0.12)
    await _workers_done(pilot)
    await pilot.pause()


async def press(pilot: Pilot[Any], *keys: str) -> None:
    """Press keys one by one, settling after each."""
    for key in keys:
        await pilot.press(key)
        await settle(pilot, rounds=2)


def main(app: MuseApp) -> MainScreen:
    """The app's main screen."""
    return app.main_screen


def current(app: MuseApp) -> SessionSummary:
    """The current session (fails the test when there is none)."""
    s = app.main_screen.current
    assert s is not None, "no session selected"
    return s


def item_rows(app: MuseApp) -> list[str]:
    """The plain text of the item list's visible rows."""
    items = app.main_screen.items
    return [items.render_line(y).text for y in range(items.size.height)]


def tree_rows(app: MuseApp) -> list[str]:
    """The plain text of the session tree's visible rows."""
    tree = app.main_screen.session_tree
    return [tree.render_line(y).text for y in range(tree.size.height)]
