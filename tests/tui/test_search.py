"""Pilot tests of the / search view: live query, results, enter, n/N and query errors."""

from __future__ import annotations

import pytest

from musetui.app import MuseApp
from musetui.screens.main import MainScreen
from musetui.screens.search import SearchScreen
from musetui.widgets.item_list import ItemList
from musetui.widgets.search import SearchResultsList, highlight_snippet

from .helpers import OUTLIER_ID, SIZE, current, main, press, settle

pytest.importorskip("musetui.search")

CALL_ID = "call_vRYeJ5ycDgP6BwLGJEtinVF6"


async def _search(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*text)
    await pilot.pause(0.3)
    await settle(pilot)


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
    from musetui.screens import search as search_screen
    from musetui.search import executor as search_mod

    monkeypatch.setattr(search_mod, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(search_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(search_screen, "WARM_POOL_SESSIONS", 1)
    serial = [(h.path, h.line) for h in search_mod.run_search([sample_root], "muse", workers=1)]
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


async def test_results_list_adds_only_new_hits_while_a_search_runs(sample_root: str) -> None:
    """Progress reports extend the list; a different list (a new query) replaces it."""
    from musetui.search import run_search

    hits = list(run_search([sample_root], "call_"))
    assert len(hits) > 6
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        results = app.screen.query_one(SearchResultsList)
        results.show_hits(hits[:3])
        first = results.get_option_at_index(0)
        results.show_hits(hits[:6])  # the same hits first: appended
        assert results.option_count == 6 and results.get_option_at_index(0) is first
        assert [str(results.get_option_at_index(i).prompt).split()[0] for i in range(6)] == [
            str(i) for i in range(1, 7)
        ]
        results.show_hits(hits[1:4])  # not an extension: rebuilt
        assert results.option_count == 3 and results.get_option_at_index(0) is not first
        assert results.highlighted == 0
        results.show_hits([])
        assert results.option_count == 0


async def test_a_long_result_list_is_added_a_chunk_per_refresh(sample_root: str) -> None:
    from musetui.search import run_search
    from musetui.widgets.search import ADD_CHUNK, RESULTS_CAP

    found = list(run_search([sample_root], "/./"))
    hits = (found * (RESULTS_CAP // len(found) + 2))[: RESULTS_CAP + 20]
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        results = app.screen.query_one(SearchResultsList)
        results.show_hits(hits)
        assert results.option_count == ADD_CHUNK and results.highlighted == 0
        for _ in range(100):  # a chunk per pause: at most 5 s on a slow machine
            if results.option_count == RESULTS_CAP:
                break
            await pilot.pause(0.05)
        assert results.option_count == RESULTS_CAP
        last = results.get_option_at_index(RESULTS_CAP - 1)
        assert str(last.prompt).split()[0] == str(RESULTS_CAP)


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
        original = screen.start

        def counting(query: str) -> None:
            runs.append(query)
            original(query)

        screen.start = counting  # type: ignore[method-assign]
        for _ in range(3):
            screen.sessions_changed()
        assert runs == [CALL_ID]  # the first at once; the others wait for the window to end
        await pilot.pause(RERUN_S + 0.3)
        assert runs == [CALL_ID, CALL_ID]  # one trailing run for the changes in the window
        await settle(pilot)
        assert main(app).search_state.total == 2
