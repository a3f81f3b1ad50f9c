"""Keys typed straight after ``/`` reach the search box in the order typed."""

from __future__ import annotations

import unicodedata
from typing import Any

from textual import events
from textual.keys import _character_to_key
from textual.pilot import Pilot
from textual.widgets import Input

from musetui.app import MuseApp
from musetui.screens.search import SearchScreen

from .helpers import SIZE, main, settle

QUERY = "provider:openai has:encrypted flag:outlier"


def burst(pilot: Pilot[Any], keys: list[str]) -> None:
    """Queue every key at once, as a terminal delivers a fast typist's (or a paste's) bytes."""
    app = pilot.app
    driver = app._driver
    assert driver is not None
    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        char: str | None
        try:
            char = unicodedata.lookup(name.upper().replace("_", " ")) if len(name) > 1 else key
        except KeyError:
            char = None
        if name in ("backspace", "ctrl+u", "ctrl+w", "enter", "escape"):
            char = None
        if len(key) == 1:
            char = key
        event = events.Key(name, char)
        event.set_sender(app)
        driver.send_message(event)


def typed(text: str) -> list[str]:
    return list(text)


async def test_a_burst_of_edits_after_slash_runs_the_typed_query(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # An old query to clear, then: / and, before the view has opened, ctrl+u, letters,
        # backspaces and more letters.
        main(app).search_state.query = "stale words"
        keys = [
            "slash",
            "ctrl+u",
            *typed("provider:opx"),
            "backspace",
            *typed("enai has:encrypted"),
            *typed(" flag:outlierZZ"),
            "backspace",
            "backspace",
        ]
        burst(pilot, keys)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        assert screen.query_one(Input).value == QUERY
        assert screen.state.query == QUERY  # the query that ran
        assert screen.state.done and not screen.state.error
        assert screen.state.total == len(screen.state.hits) > 0


async def test_ctrl_u_in_the_middle_of_a_burst_clears_what_came_before(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, ["slash", *typed("wrong words"), "ctrl+u", *typed(QUERY)])
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        assert screen.query_one(Input).value == QUERY
        assert screen.state.query == QUERY
