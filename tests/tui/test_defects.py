"""The small defects of issue 13, each with a test: progress, pager, g/G, filters and copy,
empty trees, sizes, plurals, and the diagnostics view."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from textual.widgets import OptionList

from musetui.app import MuseApp
from musetui.core.diagnostics import group
from musetui.core.model import Diagnostic
from musetui.messages import IndexProgress
from musetui.screens.diagnostics import DiagnosticsScreen
from musetui.screens.main import pager_command
from musetui.screens.provider_filter import ProviderFilterScreen
from musetui.widgets.header import MuseHeader

from .helpers import OUTLIER_ID, SIZE, current, main, press, settle


def _show(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "musetui", "show", *args], capture_output=True, text=True, check=True)
    return out.stdout


async def test_progress_never_runs_backwards_and_counts_agree(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        scr.progress_fraction = 0.0  # as when indexing starts
        seen: list[int] = []
        # While the walk streams, the byte total grows faster than the bytes read.
        for done, total in ((50, 100), (60, 200), (70, 400), (390, 400), (100, 1000)):
            scr.post_message(IndexProgress(1, 2, done, total, 99))
            await pilot.pause()
            text = scr.status.index_text
            seen.append(int(text.split("%")[0].split()[-1]))
            n = len(scr.session_tree.sessions)
            assert f"{n:,} sessions" in text  # the status counts what the header counts
            header = scr.query_one(MuseHeader).render()
            assert f"{n:,} sessions" in header.plain  # type: ignore[union-attr]
        assert seen == sorted(seen) and seen[0] == 50 and seen[-1] == 97


async def test_while_files_are_still_found_no_share_is_claimed(sample_root: str) -> None:
    """Before the walk ends the totals still grow: the status counts files instead of showing a bar."""
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        scr.progress_fraction = 0.0
        scr.post_message(IndexProgress(62, 64, 840, 1000, 62, False))  # 64 files found so far, of 20,000
        await pilot.pause()
        text = scr.status.index_text
        assert text.startswith("Finding files: 64 found, 62 read") and "%" not in text
        assert "64 files found" in scr.query_one(MuseHeader).progress and "%" not in scr.query_one(MuseHeader).progress
        assert scr.progress_fraction == 0.0  # 84% of what was found so far is not 84% done
        scr.post_message(IndexProgress(100, 20_000, 5_000, 1_000_000, 100, True))
        await pilot.pause()
        assert "0%" in scr.status.index_text and "20,000 files" in scr.status.index_text


def test_the_walk_reports_files_found_before_it_ends(tmp_path: Path) -> None:
    from musetui.core.index import WALK_TICK, Index

    for i in range(WALK_TICK * 2 + 3):
        (tmp_path / f"s{i}.jsonl").write_bytes(b'{"type": "message", "role": "user", "content": "hi"}\n')
    ticks: list[tuple[int, bool]] = []
    idx = Index([str(tmp_path)], workers=1)
    progress = [p for _o, p in idx.iter_scan(tick=lambda p: ticks.append((p.total, p.walked)))]
    assert ticks[:2] == [(WALK_TICK, False), (WALK_TICK * 2, False)] and ticks[-1] == (WALK_TICK * 2 + 3, True)
    assert all(p.walked for p in progress)  # every file here was read after the walk


def test_pager_command_starts_at_the_line() -> None:
    assert pager_command(["less", "-S"], "/x/s.jsonl", 42) == ["less", "-S", "+42g", "/x/s.jsonl"]
    assert pager_command(["/usr/bin/vim", "-R"], "/x/s.jsonl", 7) == ["/usr/bin/vim", "-R", "+7", "/x/s.jsonl"]
    assert pager_command(["bat"], "/x/s.jsonl", 7) == ["bat", "/x/s.jsonl"]
    assert pager_command(["less"], "/x/s.jsonl", None) == ["less", "/x/s.jsonl"]


async def test_pager_opens_at_the_selected_item(sample_root: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PAGER", "less")
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "enter", "j", "j", "j")
        main(app).evidence.open_in_pager()  # suspending is not possible under Pilot: the command is kept
        assert main(app).evidence.last_pager_command == ["less", "+4g", current(app).abspath]


async def test_g_and_G_in_the_tree(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = main(app).session_tree
        await press(pilot, "G")
        assert tree.cursor_line == tree.last_line > 0
        await press(pilot, "g")
        assert tree.cursor_line == 0


async def test_y_after_a_p_filter_copies_the_item_the_user_sees(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "enter", "j", "j", "j")
        scr = main(app)
        assert scr.items.current is not None and scr.items.current.line == 4
        await press(pilot, "p")
        assert isinstance(app.screen, ProviderFilterScreen)
        options = app.screen.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        options.highlighted = ids.index("openai")
        await press(pilot, "enter")
        assert scr.session_tree.provider_filter == "openai"
        assert scr.items.has_focus and scr.selected_item() is not None
        await press(pilot, "y")
        assert app.clipboard == _show(current(app).abspath, "--line", "4")


async def test_flagged_only_and_sort(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        await press(pilot, "f")
        shown = scr.session_tree.ordered()
        assert [s.session_id for s in shown if s.attribution.flags] == [OUTLIER_ID]
        assert all(s.attribution.flags or scr.session_tree.flagged_inside(s) for s in shown)
        await press(pilot, "escape")
        assert len(scr.session_tree.ordered()) == 11
        await press(pilot, "s")  # newest first
        assert scr.session_tree.session_order == "time"
        tops = [n.data for n in scr.session_tree.root.children[0].children]
        times = [s.started_at or 0 for s in tops]  # type: ignore[union-attr]
        assert times == sorted(times, reverse=True)
        await press(pilot, "s", "s")
        assert scr.session_tree.session_order == "size"


async def test_empty_tree_says_no_transcripts_found(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = MuseApp([str(empty)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert main(app).status.index_text.startswith(f"No transcripts found under {empty}")
    cli = subprocess.run([sys.executable, "-m", "musetui", "scan", str(empty)], capture_output=True, text=True)
    assert cli.returncode == 0
    assert f"musetui: no transcripts found under {empty}" in cli.stderr


def test_cache_info_gives_human_sizes(tmp_path: Path) -> None:
    env = {**os.environ, "MUSETUI_CACHE_DIR": str(tmp_path / "c")}
    subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "sample_transcripts"], env=env, capture_output=True, check=True
    )
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "cache", "info"], env=env, capture_output=True, text=True, check=True
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("size: "))
    assert line.split()[2] in ("kB", "MB", "GB") and "bytes)" in line


async def test_one_item_is_singular_and_sizes_are_human(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        one = next(s for s in scr.session_tree.sessions if s.items == 1)
        assert scr.navigator.jump_to_session(one.key)
        await settle(pilot)
        title = str(scr.query_one("#middle").border_title)
        assert "· 1 item" in title and "1 items" not in title
        await press(pilot, "1")
        assert " kB (" in scr.pane("raw").plain


def _diag_tree(root: Path) -> None:
    good = [json.dumps({"type": "message", "role": "user", "content": f"line {i}"}) for i in range(5)]
    good.insert(2, '{"truncated": ')
    (root / "good.jsonl").write_text("\n".join(good) + "\n")
    (root / "blob.jsonl").write_bytes(b"\n".join(bytes([0, 159, 146, 150, 1, 2, 255]) * 3 for _ in range(494)))


def test_repeated_diagnostics_of_one_file_are_one_group() -> None:
    """The view groups with the same function as stderr: one line per file and kind."""
    groups = group(
        [Diagnostic("b.jsonl", i, "malformed: binary data") for i in range(1, 495)]
        + [Diagnostic("a.jsonl", 3, "malformed: truncated JSON")]
    )
    assert [g.count for g in groups] == [494, 1]
    assert groups[0].text() == "b.jsonl: 494 malformed lines (first at 1: binary data)"
    assert groups[1].text() == "a.jsonl:3: malformed: truncated JSON"


async def test_diagnostics_view_lists_groups_and_jumps_to_the_session(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    _diag_tree(root)
    app = MuseApp([str(root)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        assert scr.diagnostics, "the scan reported no diagnostics"
        assert "(D)" in scr.status.index_text
        await press(pilot, "D")
        view = app.screen
        assert isinstance(view, DiagnosticsScreen)
        texts = [g.text() for g in view.groups]
        assert any(t.startswith("blob.jsonl") for t in texts), texts
        blob = [t for t in texts if t.startswith("blob.jsonl")]
        assert blob == ["blob.jsonl: binary file: 494 lines"], blob  # grouped, not a line each
        good = next(i for i, g in enumerate(view.groups) if g.path == "good.jsonl")
        ol = view.query_one(OptionList)
        ol.highlighted = good
        await press(pilot, "enter")
        assert app.screen is scr
        assert current(app).abspath == str(root / "good.jsonl")


async def test_sorting_in_place_gives_the_rows_a_rebuild_gives(sample_root: str) -> None:
    """``s`` re-sorts the nodes there are (no node made again); the rows, expanded parents and cursor match a rebuild."""
    from musetui.core.model import SessionSummary
    from musetui.core.session_forest import SORTS

    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = main(app).session_tree
        parent = next(s for s in tree.sessions if s.format == "muse" and tree.children_of(s))
        tree.reveal(tree.children_of(parent)[-1])  # a loaded, expanded parent, the cursor on its last child
        await pilot.pause()

        def rows() -> list[str]:
            out = []
            for line in range(tree.last_line + 1):
                node = tree.get_node_at_line(line)
                assert node is not None
                out.append(node.data.key if isinstance(node.data, SessionSummary) else str(node.label))
            return out

        for order in [*SORTS[1:], SORTS[0]]:
            before = tree.current_session()
            nodes = set(map(id, tree.session_nodes))
            tree.set_sort(order)
            await pilot.pause()
            in_place = rows()
            assert set(map(id, tree.session_nodes)) == nodes  # the same node objects
            assert tree.current_session() is before
            tree.rebuild()
            await pilot.pause()
            assert rows() == in_place, order
            assert tree.current_session() is before
