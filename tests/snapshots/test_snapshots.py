"""Snapshot tests of the layout and colours: main screen, help screen, outlier selected."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from musetui.app import MuseApp

SIZE = (160, 48)
ROOT = "sample_transcripts"


async def _settle(pilot: Pilot[Any]) -> None:
    for _ in range(4):
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
        await pilot.pause(0.15)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause(0.3)
    await pilot.pause()


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
    assert snap_compare(
        MuseApp([ROOT]), terminal_size=SIZE, run_before=_keys("o", "enter", "j", "j", "j", "3")
    )


# The layout at common terminal sizes: after o then 5, the outlier's evidence is on screen.


def test_size_80x24_evidence(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(80, 24), run_before=_keys("o", "5"))


def test_size_120x30_evidence(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(120, 30), run_before=_keys("o", "5"))


def test_size_200x50_evidence(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(200, 50), run_before=_keys("o", "5"))


def test_size_80x24_tree(snap_compare: Any) -> None:
    assert snap_compare(MuseApp([ROOT]), terminal_size=(80, 24), run_before=_keys("o"))
