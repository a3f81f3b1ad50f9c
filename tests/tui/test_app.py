"""Pilot tests: every key of DESIGN.md and every pane, on the bundled sample."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import TabbedContent

from musetui.app import MuseApp
from musetui.screens.help import HelpScreen
from musetui.screens.main import MainScreen
from musetui.screens.provider_filter import ProviderFilterScreen
from musetui.widgets.item_list import ItemList
from musetui.widgets.panes import DetailPane
from musetui.widgets.session_tree import SessionTree

from .helpers import OUTLIER_ID, SIZE, current, item_rows, main, press, settle, tree_rows, wait_for

OUTLIER_FILE = Path(
    "sample_transcripts/muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/subagents/"
    "01a05efe-03bb-72c8-854a-4c1c088cc3b9/session.jsonl"
)


def _line4() -> dict:  # type: ignore[type-arg]
    """The outlier's line 4: its first encrypted reasoning item."""
    return json.loads(OUTLIER_FILE.read_text().splitlines()[3])  # type: ignore[no-any-return]


async def test_first_paint_fills_the_tree(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        assert isinstance(app.screen, MainScreen)
        assert len(scr.session_tree.sessions) == 11
        assert scr.status.index_text.startswith("Indexed: 11 sessions")
        assert "1 outlier" in scr.status.index_text
        header = scr.query_one("#header").render()
        plain = header.plain  # type: ignore[union-attr]
        assert "11 sessions" in plain and "openai 4" in plain and "meta 4" in plain
        assert isinstance(app.focused, SessionTree)
        rows = "\n".join(tree_rows(app))
        assert "muse" in rows and "codex" in rows and "claude-code" in rows
        assert "avocado-1.3" in rows and "meta" in rows


async def test_o_pressed_before_indexing_ends_jumps_when_it_ends(sample_root: str, tmp_path: Path) -> None:
    """o then 5 typed at once on start: the outlier is selected when indexing ends, its evidence shown."""
    # The sample alone is indexed within the first frame (read ahead while the app starts), so
    # the keys would come too late on a busy machine: 300 more sessions keep the index going.
    tree = tmp_path / "tree"
    shutil.copytree(sample_root, tree / "sample")
    parent = next(Path(sample_root).glob("muse-vm/sessions/*/session.jsonl")).read_bytes()
    for n in range(300):
        (tree / "zz-vm" / "sessions" / f"{n:03}").mkdir(parents=True)
        (tree / "zz-vm" / "sessions" / f"{n:03}" / "session.jsonl").write_bytes(parent)
    app = MuseApp([str(tree)])
    async with app.run_test(size=(80, 24)) as pilot:
        scr = main(app)
        assert not scr.finished, "indexing already over: the test would not cover a deferred o"
        await pilot.press("o", "5")
        await settle(pilot)
        assert scr.finished and scr.navigator.pending_flagged is None
        assert current(app).session_id == OUTLIER_ID
        evidence = scr.pane("evidence")
        evidence.render_now()
        assert "outlier" in evidence.plain and "openai-item-id" in evidence.plain
        assert scr.part_of(app.focused) == "panes", "the panes the user asked for with 5 stay in front"


async def test_o_lands_on_the_outlier_and_panes_show_the_proof(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o")
        s = current(app)
        assert s.session_id == OUTLIER_ID
        assert s.declared_model == "muse-special"
        assert (s.attribution.provider, s.attribution.host) == ("openai", "azure")
        assert "outlier" in s.attribution.flags
        tree = main(app).session_tree
        assert tree.cursor_node is not None and tree.cursor_node.data is s
        cursor_row = tree_rows(app)[tree.cursor_line]
        assert "⚑" in cursor_row and "muse-special" in cursor_row and "openai/azure" in cursor_row
        ids = main(app).pane("ids")
        ids.render_now()
        assert _line4()["payload"]["event"]["message_id"] in ids.plain
        assert "Δ 0 s from line 4" in ids.plain
        assert "call_+24" in ids.plain
        await press(pilot, "3")
        sig = main(app).pane("signature").plain
        assert "fernet" in sig and "version 0x80" in sig and "structure ok" in sig
        assert "Δ 0 s" in sig


async def test_O_goes_backwards_and_wraps(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "O")
        assert current(app).session_id == OUTLIER_ID
        await press(pilot, "o")
        assert current(app).session_id == OUTLIER_ID


async def test_j_k_enter_l_h_backspace(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        tree = scr.session_tree
        assert tree.cursor_line == 0
        await press(pilot, "j")
        assert tree.cursor_line == 1
        assert current(app).session_id == "01a05efc-7bb7-7cd1-8155-66af75f0734c"
        await press(pilot, "down", "k")
        assert tree.cursor_line == 1
        await press(pilot, "up")
        assert tree.cursor_line == 0
        await press(pilot, "j", "enter")
        assert isinstance(app.focused, ItemList)
        assert len(scr.items.items) == 30
        await press(pilot, "j", "j")
        assert scr.items.cursor == 2
        await press(pilot, "k")
        assert scr.items.cursor == 1
        await press(pilot, "l")
        assert isinstance(app.focused, DetailPane)
        await press(pilot, "h")
        assert isinstance(app.focused, ItemList)
        await press(pilot, "backspace")
        assert isinstance(app.focused, SessionTree)
        await press(pilot, "enter")
        assert isinstance(app.focused, ItemList)
        await press(pilot, "h")
        assert isinstance(app.focused, SessionTree)
        node = tree.cursor_node
        assert node is not None and node.is_expanded
        await press(pilot, "h")
        assert not node.is_expanded
        await press(pilot, "h")
        assert tree.cursor_line == 0


async def test_tab_cycles_focus(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        seen = []
        for _ in range(3):
            await press(pilot, "tab")
            seen.append(type(app.focused).__name__)
        assert seen[0] == "ItemList"
        assert issubclass(type(app.focused), SessionTree)
        assert any(isinstance(n, TabbedContent) for n in app.query("DetailPane").first().ancestors)
        await press(pilot, "shift+tab")
        assert isinstance(app.focused, DetailPane)


@pytest.mark.parametrize(
    ("key", "pane_id", "expect"),
    [
        ("1", "raw", "session.jsonl:4"),
        ("2", "ids", "IDs on line 4"),
        ("3", "signature", "Signatures on line 4"),
        ("4", "reasoning", "encrypted, "),
        ("5", "evidence", "[verified]"),
    ],
)
async def test_panes_1_to_5_on_an_item(sample_root: str, key: str, pane_id: str, expect: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "enter", "j", "j", "j", key)
        scr = main(app)
        assert scr.tabs.active == pane_id
        item = scr.items.current
        assert item is not None and item.line == 4 and item.reasoning == "encrypted"
        pane = scr.pane(pane_id)
        assert expect in pane.plain


async def test_item_panes_detail(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "enter", "j", "j", "j")
        scr = main(app)
        for pane_id in ("raw", "ids", "signature", "reasoning", "evidence"):
            scr.action_pane(pane_id)
        raw = scr.pane("raw").plain
        item = scr.items.current
        assert item is not None
        assert f"bytes {item.offset:,}–{item.offset + item.length:,} ({item.length:,} bytes)" in raw
        assert f'"message_id": "{_line4()["payload"]["event"]["message_id"]}"' in raw
        ids = scr.pane("ids").plain
        assert "layout new50" in ids and "marker 8196" in ids and "store byte 00" in ids
        reasoning = scr.pane("reasoning").plain
        blob = _line4()["payload"]["event"]["signature"]
        assert f"encrypted, {len(blob):,} bytes, minted 2026-09-01 22:01:4" in reasoning
        assert "Planning the audit" in reasoning
        evidence = scr.pane("evidence").plain
        assert "openai (host azure) · confidence" in evidence and "outlier" in evidence
        assert "▸ [verified] openai-item-id" in evidence
        rows = item_rows(app)
        assert rows[3].split()[:3] == ["4", "22:01:43", "reasoning"]  # the line number leads the row
        assert "enc 1.1k" in rows[3]


async def test_session_level_panes(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o")
        scr = main(app)
        for key, needle in (
            ("1", "Scan record"),
            ("2", "IDs in this session"),
            ("3", "Signatures and blobs in this session"),
            ("4", "Reasoning in this session: 3 items (3 encrypted)"),
            ("5", "Evidence records"),
        ):
            await press(pilot, key)
            assert needle in scr.pane(scr.tabs.active or "").plain


def _show(*args: str) -> str:
    """What ``musetui show`` prints (the real CLI, in a subprocess)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "musetui", "show", *args], capture_output=True, text=True, check=True)
    return out.stdout


async def test_y_copies_the_session_report_exactly_as_show(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "y")
        s = current(app)
        assert app.clipboard == _show(s.abspath)
        assert f"session `{OUTLIER_ID}`" in app.clipboard
        assert "flags: outlier" in app.clipboard
        sha = hashlib.sha256(Path(s.abspath).read_bytes()).hexdigest()
        size = Path(s.abspath).stat().st_size
        assert f"sha256 of the file:** `{sha}` ({size:,} bytes" in app.clipboard
        assert "modified 20" in app.clipboard


async def test_y_copies_the_item_report_exactly_as_show(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "enter", "j", "j", "j", "y")
        s = current(app)
        assert app.clipboard == _show(s.abspath, "--line", "4")
        assert "line 4" in app.clipboard and "sha256" in app.clipboard


async def test_Y_copies_the_raw_line(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "enter", "j", "j", "j", "Y")
        s = current(app)
        lines = Path(s.abspath).read_bytes().split(b"\n")
        assert app.clipboard == lines[3].decode()


async def test_y_with_nothing_selected_warns(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "y", "Y")
        assert app.clipboard == ""


async def test_p_filters_by_provider(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "p")
        assert isinstance(app.screen, ProviderFilterScreen)
        options = app.screen.query_one("OptionList")
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]  # type: ignore[attr-defined]
        options.highlighted = ids.index("anthropic")  # type: ignore[attr-defined]
        await press(pilot, "enter")
        scr = main(app)
        assert isinstance(app.screen, MainScreen)
        assert scr.session_tree.provider_filter == "anthropic"
        shown = scr.session_tree.ordered()
        assert shown and all(s.attribution.provider == "anthropic" for s in shown)
        assert "provider: anthropic" in scr.status.filter_text
        await press(pilot, "escape")
        assert scr.session_tree.provider_filter is None
        assert len(scr.session_tree.ordered()) == 11


async def test_p_then_escape_keeps_the_filter(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "p", "escape")
        assert isinstance(app.screen, MainScreen)
        assert main(app).session_tree.provider_filter is None


async def test_help_lists_every_key_and_the_query_help(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        from io import StringIO

        from rich.console import Console

        from musetui.widgets.help import binding_rows, query_help

        buf = StringIO()
        Console(file=buf, width=120, color_system=None).print(app.screen.content)
        text = buf.getvalue()
        for keys in (
            "j",
            "k",
            "enter / l",
            "h / backspace",
            "tab",
            "1",
            "5",
            "/",
            "n",
            "N",
            "o",
            "O",
            "p",
            "y",
            "Y",
            "?",
            "q",
        ):
            assert keys in text, keys
        for _keys, what in binding_rows(MainScreen.BINDINGS):
            assert what[:30] in text.replace("\n", " ") or what.split()[0] in text
        first_line = query_help().strip().splitlines()[0]
        assert first_line[:40] in text
        await press(pilot, "escape")
        assert isinstance(app.screen, MainScreen)


async def test_ctrl_p_palette_copy_path(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"copy path")
        await settle(pilot)
        await press(pilot, "enter")
        assert isinstance(app.screen, MainScreen)
        assert app.clipboard == current(app).abspath


async def test_palette_provider_offers_the_commands(sample_root: str) -> None:
    from musetui.commands import MuseCommands

    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        provider = MuseCommands(app.screen)
        titles = [hit.text async for hit in provider.discover()]
        for title in (
            "session: copy evidence",
            "session: copy path",
            "session: open raw in $PAGER",
            "filter: all providers",
            "filter: provider openai",
        ):
            assert title in titles
        hits = [hit async for hit in provider.search(OUTLIER_ID[-12:])]
        jump = [h for h in hits if (h.text or "").startswith("jump: session")]
        assert jump and OUTLIER_ID in (jump[0].text or "")
        jump[0].command()
        await settle(pilot)
        assert current(app).session_id == OUTLIER_ID
        # Models, titles and paths match too.
        for query in ("muse-special", "Audit site", "01a05efe-03bb-72c8-854a-4c1c088cc3b9/session.jsonl"):
            found = [h async for h in provider.search(query)]
            assert any(OUTLIER_ID in (h.text or "") for h in found), query
        filt = [h async for h in provider.search("filter: provider meta")]
        filt[0].command()
        await settle(pilot)
        assert main(app).session_tree.provider_filter == "meta"


async def test_q_quits_with_status_0(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_escape_stops_indexing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import musetui.core.index as index_mod

    src = Path("sample_transcripts/codex/sessions/2026/09/01")
    files = sorted(src.glob("*.jsonl"))
    for i in range(120):
        (tmp_path / f"s{i:03d}.jsonl").write_bytes(files[i % len(files)].read_bytes())
    real = index_mod._scan_entry

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(0.02)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(index_mod, "_scan_entry", slow)
    app = MuseApp([str(tmp_path)], workers=1, use_cache=False)
    async with app.run_test(size=SIZE) as pilot:
        scr = main(app)
        assert await wait_for(pilot, lambda: "Esc to stop" in scr.status.index_text)  # indexing has begun
        assert scr.indexing
        await pilot.press("escape")
        await settle(pilot)
        assert not scr.indexing
        assert scr.status.index_text.startswith("Stopped at")
        assert 0 < len(scr.session_tree.sessions) < 120


async def test_other_themes_work(sample_root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUSETUI_THEME", "textual-light")
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "textual-light"
        assert app.theme_variables["provider-openai"]
        await press(pilot, "o")
        assert "openai/azure" in tree_rows(app)[main(app).session_tree.cursor_line]
        app.theme = "musetui"
        await settle(pilot)
        assert "openai/azure" in tree_rows(app)[main(app).session_tree.cursor_line]


async def test_warm_cache_rebuilds_the_same_tree(sample_root: str) -> None:
    for _run in range(2):
        app = MuseApp([sample_root], use_cache=True)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            tree = main(app).session_tree
            parent = next(s for s in tree.sessions if s.session_id == "01a05efc-7bb7-7cd1-8155-66af75f0734c")
            assert len(tree.children_of(parent)) == 4
            first, second = tree.ordered()[:2]
            assert first is parent
            assert tree.parent_of(second) is parent
            assert tree.cursor_line == 0
            await press(pilot, "o")
            assert current(app).session_id == OUTLIER_ID


async def test_empty_root_and_a_vanished_session(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = MuseApp([str(empty)], use_cache=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert main(app).status.index_text.startswith(f"No transcripts found under {empty}")
        await press(pilot, "o", "y", "Y", "n", "enter", "j", "5")
        assert app.is_running and app.clipboard == ""
    src = OUTLIER_FILE
    root = tmp_path / "one" / "sessions" / "x"
    root.mkdir(parents=True)
    target = root / "session.jsonl"
    target.write_bytes(src.read_bytes())
    app = MuseApp([str(tmp_path / "one")], use_cache=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        target.unlink()
        await press(pilot, "j", "enter")
        assert app.is_running
        assert "Could not open" in main(app).items.placeholder


async def test_the_outlier_is_stated_as_a_fleet_comparison(sample_root: str) -> None:
    """FINGERPRINTS.md tags (verified/source/guess) are for fingerprints; the outlier is a comparison, stated with its flag."""
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "5")
        plain = main(app).pane("evidence").plain
        assert "flag outlier: provider openai differs from 3 of 3 sibling sessions (meta)" in plain
        assert "] outlier" not in plain  # not listed among the tagged evidence records
        assert "[verified] openai-item-id" in plain
