"""Snapshot tests of the layout and colours: main screen, help screen, outlier selected."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from musetui.app import MuseApp
from musetui.settle import settle as _settle

SIZE = (160, 48)
ROOT = "sample_transcripts"


def _keys(*keys: str) -> Callable[[Pilot[Any]], Any]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _settle(pilot)
        for key in keys:
            await pilot.press(key)
            await _settle(pilot)

    return run_before


def test_main_screen(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=SIZE, run_before=_keys())


def test_help_screen(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=SIZE, run_before=_keys("question_mark"))


def test_outlier_selected(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=SIZE, run_before=_keys("o"))


def test_outlier_item_signature(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=SIZE, run_before=_keys("o", "enter", "j", "j", "j", "3"))


# The layout at the common terminal sizes: after o, the outlier's evidence is on screen (pane 5).


def test_size_80x24_evidence(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(80, 24), run_before=_keys("o"))


def test_size_100x30_evidence(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(100, 30), run_before=_keys("o"))


def test_size_120x30_evidence(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(120, 30), run_before=_keys("o"))


def test_size_160x40_evidence(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(160, 40), run_before=_keys("o"))


def test_size_200x50_evidence(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(200, 50), run_before=_keys("o"))


def test_size_80x24_tree(snap_compare: Any) -> None:
    """At 80 columns one part shows at a time: esc after o comes back to the tree, on the outlier."""
    assert snap_compare(MuseApp([ROOT]), terminal_size=(80, 24), run_before=_keys("o", "escape"))


def test_search_toggles_80x24(snap_compare: Any) -> None:
    """The search view at 80 columns: the case and regex toggles under the query, hits with their line."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await _keys("slash")(pilot)
        pilot.app.screen.query_one(Input).cursor_blink = False  # (a blinking cursor is a coin toss)
        for key in (*"call_", "alt+r"):
            await pilot.press(key)
            await _settle(pilot)

    assert snap_compare(MuseApp([ROOT]), terminal_size=(80, 24), run_before=run_before)
