"""Keys a newcomer looks for: go to a line, case and regex in the search, ] in the help, p, live D."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from musetui.app import MuseApp
from musetui.core.model import Diagnostic, SessionSummary
from musetui.messages import IndexRefreshed
from musetui.screens.diagnostics import DiagnosticsScreen
from musetui.screens.main import MainScreen
from musetui.screens.provider_filter import ProviderFilterScreen
from musetui.screens.search import SearchScreen
from musetui.widgets.help import binding_rows
from musetui.widgets.search import hit_prompt

from .helpers import main, press, settle

pytest.importorskip("musetui.core.search")

CALL_ID = "call_vRYeJ5ycDgP6BwLGJEtinVF6"


async def _query(pilot: Pilot[Any], text: str) -> None:
    """Type ``text`` in the search box and run it now (enter runs a changed query at once)."""
    await pilot.press("ctrl+u", *text, "enter")
    await settle(pilot)


async def test_search_case_and_regex_toggles(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        view = app.screen
        assert isinstance(view, SearchScreen)
        st = main(app).search_state
        await _query(pilot, CALL_ID.lower())
        assert st.total == 2  # smart case: a lowercase word ignores case
        await press(pilot, "alt+c")
        assert st.case == "match" and st.total == 0
        assert "match case" in str(view.query_one("#search-case").label)  # type: ignore[attr-defined]
        await press(pilot, "alt+c")
        assert st.case == "ignore" and st.total == 2
        await _query(pilot, "call_vRYeJ5yc.*nVF6")
        assert st.total == 0  # a plain word: the dot and star are text
        await press(pilot, "alt+r")
        assert st.regex and st.total == 2
        assert "regex" in str(view.query_one("#search-regex").label)  # type: ignore[attr-defined]
        await press(pilot, "alt+r", "alt+c")
        assert not st.regex and st.case == "smart"


def test_a_hit_keeps_its_line_number_at_80_columns() -> None:
    class Hit:
        session_id = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"
        path = "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/subagents/01a05efe-03bb-72c8-854a-4c1c088cc3b9/session.jsonl"
        line = 17
        item_kind = "tool_call"
        field = "payload.event.tool_calls[0].call_id"
        snippet = "x"
        match_spans = ()

    head = hit_prompt(Hit(), 3, 70).plain.splitlines()[0]
    assert "session.jsonl:17" in head and len(head) <= 70


def test_help_names_keys_as_typed() -> None:
    keys = [k for k, _ in binding_rows(MainScreen.BINDINGS)]
    assert "]" in keys and "[" in keys
    assert not any("square_bracket" in k or "colon" in k for k in keys)


async def test_p_lists_only_providers_with_sessions(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "p")
        assert isinstance(app.screen, ProviderFilterScreen)
        options = app.screen.query_one("OptionList")
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]  # type: ignore[attr-defined]
        assert ids[1:] == ["openai", "meta", "anthropic"]


async def test_the_diagnostics_view_follows_live_refreshes(sample_root: str, tmp_path: Path) -> None:
    root = tmp_path / "codex"  # (the whole sample has one diagnostic: its planted unknown Muse event kind)
    shutil.copytree(Path(sample_root) / "codex", root)
    app = MuseApp([str(root)])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        scr = main(app)
        await press(pilot, "D")
        view = app.screen
        assert isinstance(view, DiagnosticsScreen) and view.total == 0
        assert view.query_one("#diagnostics-empty").display
        grown = [
            Diagnostic("claude/x.jsonl", 3, "malformed JSON line"),
            Diagnostic("claude/x.jsonl", 5, "malformed JSON line"),
        ]
        scr.post_message(IndexRefreshed([], [], [], [], {}, grown))
        await settle(pilot)
        assert view.total == 2 and "Diagnostics · 2 in" in str(view.query_one("#diagnostics-dialog").border_title)
        assert not view.query_one("#diagnostics-empty").display
        assert view.query_one("#diagnostics-list").option_count == len(view.groups) > 0  # type: ignore[attr-defined]


async def test_the_tree_sums_up_its_sessions_and_p_each_provider(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        scr = main(app)
        left = scr.query_one("#left")
        for _ in range(1000):  # the totals are counted on a short timer after the sessions come
            if left.border_subtitle:
                break
            await pilot.pause()
        sessions = scr.session_tree.sessions
        items = sum(s.items for s in sessions)
        assert str(left.border_subtitle) == f"{len(sessions)} sessions · {items} items · 2026-09-01"
        await press(pilot, "p")
        options = app.screen.query_one("OptionList")
        rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]  # type: ignore[attr-defined]
        openai = sum(s.items for s in sessions if s.attribution.provider == "openai")
        assert any(f"4 sessions · {openai} items · 2026-09-01" in r and "openai" in r for r in rows), rows


def test_a_tally_counts_sessions_items_and_the_dates_they_span() -> None:
    from musetui.screens.summary import Tally

    t = Tally()
    assert t.text() == "0 sessions · 0 items"
    for started, items in ((1_788_300_000.0, 3), (None, 1), (1_788_300_000.0 + 86_400 * 400, 2)):
        s = SessionSummary(
            path="x", abspath="/x", root="/", format="f", format_rule="r", items=items, started_at=started
        )
        t.add(s)
    assert t.text() == "3 sessions · 6 items · 2026-09-01 → 2027-10-06"
