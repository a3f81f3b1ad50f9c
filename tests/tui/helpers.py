"""Helpers for driving the app under Pilot."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from musetui.app import MuseApp
from musetui.core.model import SessionSummary
from musetui.screens.main import MainScreen
from musetui.settle import settle as settle_app
from musetui.settle import wait_for

OUTLIER_ID = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"
SIZE = (160, 48)

__all__ = ["OUTLIER_ID", "SIZE", "current", "item_rows", "main", "press", "settle", "tree_rows", "wait_for"]


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for workers, due timers (debounces) and the messages they post: no fixed delay (musetui.settle)."""
    await settle_app(pilot)


async def press(pilot: Pilot[Any], *keys: str) -> None:
    """Press keys one by one, settling after each."""
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


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
