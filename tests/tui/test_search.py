"""Pilot tests of the / search view: live query, results, enter, n/N and query errors."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import musetui.core.search  # noqa: F401  (a hard dependency: a broken import must fail, not skip)
from musetui.app import MuseApp
from musetui.screens.main import MainScreen
from musetui.screens.search import SearchScreen
from musetui.widgets.item_list import ItemList
from musetui.widgets.search import SearchResultsList, highlight_snippet

from .helpers import OUTLIER_ID, SIZE, current, main, press, settle

CALL_ID = "call_vRYeJ5ycDgP6BwLGJEtinVF6"


async def _search(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*text)
    await settle(pilot)  # the debounce, the search worker, its hits


async def test_slash_live_results_enter_and_n_N(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        assert isinstance(app.screen, SearchScreen)
        await _search(pilot, CALL_ID)
        st = main(app).search_state
        assert st.done and st.total == 2
        assert [h.line for h in st.hits] == [5, 7]
        assert "2 of 2 hits" in app.screen.status_text().plain
        results = app.screen.query_one(SearchResultsList)
        assert results.option_count == 2
        await press(pilot, "down", "enter")
        assert isinstance(app.screen, MainScreen)
        assert current(app).session_id == OUTLIER_ID
        assert isinstance(app.focused, ItemList)
        item = main(app).items.current
        assert item is not None and item.line == 5
        assert "hit 1 of 2" in main(app).status.search_text
        await press(pilot, "n")
        assert main(app).items.current.line == 7  # type: ignore[union-attr]
        await press(pilot, "n")
        assert main(app).items.current.line == 5  # type: ignore[union-attr]
        await press(pilot, "N")
        assert main(app).items.current.line == 7  # type: ignore[union-attr]


async def test_enter_in_the_input_jumps_to_the_first_hit(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        await _search(pilot, CALL_ID)
        await press(pilot, "enter")
        assert isinstance(app.screen, MainScreen)
        assert main(app).items.current.line == 5  # type: ignore[union-attr]


async def test_invalid_query_is_a_message_not_a_crash(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        await _search(pilot, "/(/")
        assert isinstance(app.screen, SearchScreen)
        status = app.screen.status_text().plain
        assert status.startswith("✗")
        app.screen.query_one("Input").value = ""  # type: ignore[attr-defined]
        await _search(pilot, "nosuchfield:x")
        assert app.screen.status_text().plain.startswith("✗")
        await press(pilot, "escape")
        assert isinstance(app.screen, MainScreen)
        await press(pilot, "n")
        assert app.is_running


async def test_n_without_a_search_says_so(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "n", "N")
        assert app.is_running
        assert main(app).current is None


async def test_escape_keeps_hits_for_n(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        await _search(pilot, CALL_ID)
        await press(pilot, "escape", "n")
        assert current(app).session_id == OUTLIER_ID
        assert main(app).items.current.line == 5  # type: ignore[union-attr]


def test_snippet_highlight_is_plain_text() -> None:
    text = highlight_snippet("a [bold]x\x1b[2J call_X b", [(15, 21)])
    assert "[bold]" in text.plain and "\x1b" not in text.plain
    assert any(span.style == "bold reverse" for span in text.spans)


async def test_workers_do_not_repr_their_arguments_on_the_ui_thread(
    sample_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual describes a worker by repr() of its arguments unless told otherwise: for the
    index or every session of a big tree, that repr froze the app for seconds."""
    from typing import Any

    monkeypatch.setenv("MUSETUI_LIVE_INTERVAL", "0.2")
    app = MuseApp([sample_root])
    described: list[str] = []
    add_worker = app.workers.add_worker

    def recording(worker: Any, start: bool = True, exclusive: bool = True) -> None:
        described.append(worker.description)
        add_worker(worker, start=start, exclusive=exclusive)

    monkeypatch.setattr(app.workers, "add_worker", recording)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o")  # opens a session (the open worker)
        await press(pilot, "slash")
        await _search(pilot, "muse")  # the search worker
    assert {"live follow", "search", "open a session"} <= set(described), described
    assert all(len(d) < 40 for d in described), described


async def test_searches_reuse_worker_processes_and_the_app_stops_them(
    sample_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from musetui.core.search import executor as search_mod
    from musetui.core.search import run_search
    from musetui.screens import search as search_screen

    monkeypatch.setattr(search_mod, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(search_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(search_screen, "WARM_POOL_SESSIONS", 1)
    serial = [(h.path, h.line) for h in run_search([sample_root], "muse", workers=1)]
    app = MuseApp([sample_root], workers=2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        await settle(pilot)
        pool = app.search_pool()
        first = pool.executor()
        assert len(first._processes) == 2  # started when the search opened
        await _search(pilot, "muse")
        st = main(app).search_state
        assert st.done and [(h.path, h.line) for h in st.hits] == serial
        await pilot.press("ctrl+u")
        await _search(pilot, "muse")
        assert main(app).search_state.done and pool.executor() is first  # the same processes
    assert pool._executor is None  # the app stopped them on exit


async def test_results_list_keeps_the_cursor_while_a_search_reports_more_hits(sample_root: str) -> None:
    """Progress reports extend the list and keep the cursor; a new query's list starts at the top."""
    from musetui.core.search import run_search

    hits = list(run_search([sample_root], "call_"))
    assert len(hits) > 6
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        results = app.screen.query_one(SearchResultsList)
        results.show_hits(hits[:3])
        results.move_to(2)
        results.show_hits(hits[:6])  # the same hits first: the cursor stays
        assert results.option_count == 6 and results.highlighted == 2
        assert [results.prompt(i).plain.split()[0] for i in range(6)] == [str(i) for i in range(1, 7)]
        results.show_hits(hits[1:4])  # another list: back to the top
        assert results.option_count == 3 and results.highlighted == 0
        results.show_hits([])
        assert results.option_count == 0 and results.highlighted is None


def _needle_tree(root: Path, per_file: tuple[int, ...]) -> int:
    """Generic JSONL sessions with ``needle`` on every line; returns the number of lines."""
    for n, count in enumerate(per_file):
        lines = [
            json.dumps({"type": "message", "role": "user", "content": f"needle {n}-{i} of the haystack"})
            for i in range(count)
        ]
        (root / f"s{n}.jsonl").write_text("\n".join(lines) + "\n")
    return sum(per_file)


async def test_every_hit_is_reachable_646_of_646(tmp_path: Path) -> None:
    """The CLI finds 646 hits; the view lists 646, its cursor reaches the last, n/N walk them all."""
    import subprocess
    import sys

    root = tmp_path / "tree"
    root.mkdir()
    assert _needle_tree(root, (300, 200, 146)) == 646
    cli = subprocess.run(
        [sys.executable, "-m", "musetui", "search", str(root), "needle", "--json", "--no-cache"],
        capture_output=True,
        text=True,
        check=True,
    )
    cli_hits = [json.loads(x) for x in cli.stdout.splitlines() if x.strip()]
    assert len(cli_hits) == 646
    app = MuseApp([str(root)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        await _search(pilot, "needle")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        st = main(app).search_state
        assert st.done and st.total == 646 and len(st.hits) == 646
        assert "646 of 646 hits" in screen.status_text().plain
        results = screen.query_one(SearchResultsList)
        assert results.option_count == 646
        got = {(h.path, h.line) for h in st.hits}
        assert got == {(h["path"], h["line"]) for h in cli_hits}
        await press(pilot, "down", "end")
        assert results.highlighted == 645
        rows = [results.render_line(y).text for y in range(results.size.height)]
        assert any(r.lstrip().startswith("646 ") for r in rows), rows
        await press(pilot, "enter")
        assert isinstance(app.screen, MainScreen)
        assert "hit 646 of 646" in main(app).status.search_text
        last = st.hits[645]
        assert current(app).abspath == last.abspath
        assert main(app).items.current is not None and main(app).items.current.line == last.line
        await press(pilot, "n")
        assert "hit 1 of 646" in main(app).status.search_text
        await press(pilot, "N")
        assert "hit 646 of 646" in main(app).status.search_text
        for _ in range(3):
            await press(pilot, "N")
        assert "hit 643 of 646" in main(app).status.search_text
        assert main(app).items.current.line == st.hits[642].line  # type: ignore[union-attr]


async def test_the_index_is_frozen_for_the_cycle_collector_until_exit(sample_root: str) -> None:
    """Indexing done: its objects skip full collections (UI stalls); the app hands them back."""
    import gc

    gc.unfreeze()
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert main(app).finished and gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


async def test_changes_during_indexing_rerun_the_query_and_the_last_one_is_never_dropped(
    sample_root: str,
) -> None:
    """Re-runs are at most one per RERUN_S; a change inside that window runs after it."""
    from musetui.screens.search import RERUN_S

    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await _search(pilot, CALL_ID)
        runs: list[str] = []
        times: list[float] = []
        original = screen.start

        def counting(query: str) -> None:
            runs.append(query)
            times.append(time.monotonic())
            original(query)

        screen.start = counting  # type: ignore[method-assign]
        window = time.monotonic()
        for _ in range(3):
            screen.sessions_changed()
        assert runs == [CALL_ID]  # the first at once; the others wait for the window to end
        await settle(pilot)  # the window's timer fires, then the trailing run
        assert runs == [CALL_ID, CALL_ID]  # one trailing run for the changes in the window
        assert times[1] - window >= RERUN_S * 0.9  # … after the window, not at once
        await settle(pilot)
        assert main(app).search_state.total == 2


async def test_the_hit_is_highlighted_in_the_item_row_and_the_raw_pane(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        await _search(pilot, "Verifying")
        await press(pilot, "enter", "z")  # the items zoomed: the row's text has room
        scr = main(app)
        assert scr.zoomed == "items"
        item = scr.items.current
        assert item is not None and item.line in scr.items.hit_terms
        # the row under the cursor underlines the match; another hit row shows it reversed
        strip = scr.items.render_line(scr.items.cursor - round(scr.items.scroll_y))
        marked = "".join(seg.text for seg in strip if seg.style is not None and seg.style.underline)
        assert marked == "Verifying"
        await press(pilot, "k")  # off the hit row: the match shows in reverse video
        strip = scr.items.render_line(scr.items.cursor + 1 - round(scr.items.scroll_y))
        marked = "".join(seg.text for seg in strip if seg.style is not None and seg.style.reverse)
        assert marked == "Verifying"
        await press(pilot, "j", "escape")
        assert scr.zoomed is None
        await press(pilot, "l", "1")
        assert "1 match of the search highlighted" in scr.pane("raw").plain
