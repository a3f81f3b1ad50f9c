"""The session tree as a Line-API view: after every change its rows equal a fresh build,
``o`` reveals the flagged session, the cursor stays on its session as sessions arrive, a
cursor move repaints only the two rows it touches, and the mouse works.

The sessions are indexed from a generated corpus (and the bundled sample) by the real app.
"""

from __future__ import annotations

import collections
import itertools
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from musetui.app import MuseApp
from musetui.core.model import SessionSummary
from musetui.core.session_forest import SORTS, SessionForest, unique_prefix_length
from musetui.widgets.session_tree import SessionTree
from musetui.widgets.tree_nodes import Node
from musetui.widgets.tree_rows import OUTLIER_GLYPH
from musetui_synth.corpus import generate

from .helpers import main, press, settle

SIZE = (120, 30)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated tree of about 2 MiB: 100 sessions of every format, two of them fleet outliers."""
    root = tmp_path_factory.mktemp("tree") / "gen"
    generate(root, 2.0, 3)
    return root


Row = tuple[str, bool, bool]


def rows_of(tree: SessionTree) -> list[Row]:
    """Every row: the session key (or group title), expanded, expandable."""
    out: list[Row] = []
    for line in range(tree.last_line + 1):
        node = tree.get_node_at_line(line)
        assert node is not None and node.line == line
        name = node.data.key if isinstance(node.data, SessionSummary) else node.label.plain
        out.append((name, node.is_expanded, node.allow_expand))
    return out


def texts_of(tree: SessionTree) -> list[str]:
    """Every row's plain text, rendered at the tree's width (off screen rows too)."""
    return [
        "".join(t for t, _ in tree.row_pieces(n))
        for n in (tree.get_node_at_line(i) for i in range(tree.last_line + 1))
        if n
    ]


def expanded_sessions(tree: SessionTree) -> list[SessionSummary]:
    return [
        n.data
        for n in (tree.get_node_at_line(i) for i in range(tree.last_line + 1))
        if n and n.is_expanded and isinstance(n.data, SessionSummary)
    ]


class OneTree(App[None]):
    """Just a session tree, to build afresh from the sessions of another."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.width = width

    def compose(self) -> ComposeResult:
        tree = SessionTree(id="tree")
        tree.styles.width = self.width
        yield tree


async def indexed_sessions(corpus: Path) -> list[SessionSummary]:
    """Every session of ``corpus`` as the app indexes it (for a bare tree to be fed)."""
    source = MuseApp([str(corpus)])
    async with source.run_test(size=SIZE) as pilot:
        await settle(pilot)
        return list(main(source).session_tree.sessions)


@asynccontextmanager
async def focused_tree(
    corpus: Path, width: int, size: tuple[int, int]
) -> AsyncIterator[tuple[Pilot[None], SessionTree]]:
    """A bare tree ``width`` cells wide holding every session of ``corpus``, focused."""
    sessions = await indexed_sessions(corpus)
    app = OneTree(width)
    async with app.run_test(size=size) as pilot:
        tree = app.query_one(SessionTree)
        tree.add_sessions(sessions)
        tree.focus()
        yield pilot, tree


async def fresh_build(tree: SessionTree) -> tuple[list[Row], list[str], str | None]:
    """The rows, row texts and cursor session of a new tree given the same sessions and state."""
    app = OneTree(tree.size.width)
    async with app.run_test(size=(tree.size.width + 10, 30)) as pilot:
        fresh = app.query_one(SessionTree)
        fresh.root_labels = dict(tree.root_labels)
        fresh.add_sessions(tree.sessions)
        # The parent links the index gave (finalize), in their order: the ``path`` order is theirs.
        fresh.finalize(*tree.forest.links())
        fresh.set_filter(tree.provider_filter)
        fresh.set_flagged_only(tree.flagged_only)
        fresh.set_sort(tree.session_order)
        for s in expanded_sessions(tree):
            node = fresh.node_for(s)
            assert node is not None
            node.expand()
        for gnode in tree.root.children:
            if gnode.allow_expand and not gnode.is_expanded:
                match = [n for n in fresh.root.children if n.label.plain == gnode.label.plain]
                assert match
                match[0].collapse()
        cur = tree.current_session()
        if cur is not None:
            assert fresh.reveal(cur)
        await pilot.pause()
        got = fresh.current_session()
        return rows_of(fresh), texts_of(fresh), got.key if got else None


async def assert_like_fresh(tree: SessionTree, what: str) -> None:
    # o's order (walked over the flagged subtrees only) is the flagged part of the full order.
    assert tree.flagged_sessions() == [s for s in tree.ordered() if s.attribution.flags], what
    rows, texts, cursor = await fresh_build(tree)
    assert rows_of(tree) == rows, what
    assert texts_of(tree) == texts, what
    cur = tree.current_session()
    assert (cur.key if cur else None) == cursor, what
    line = tree.cursor_line
    top = round(tree.scroll_y)
    assert top <= line < top + tree.scrollable_content_region.height, f"{what}: the cursor is off screen"


async def test_rows_cursor_and_expansion_after_every_sort_and_filter_equal_a_fresh_build(corpus: Path) -> None:
    app = MuseApp([str(corpus)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        tree = scr.session_tree
        parents = [s for s in tree.sessions if tree.children_of(s)]
        assert len(parents) >= 3
        for p in parents[:3]:  # three parents expanded, the cursor on the last one's last child
            assert tree.reveal(tree.children_of(p)[-1])
        tree.focus()
        await pilot.pause()
        await assert_like_fresh(tree, "before")
        for order in [*SORTS[1:], SORTS[0]]:
            before = tree.current_session()
            await press(pilot, "s")
            assert tree.session_order == order
            assert tree.current_session() is before
            await assert_like_fresh(tree, order)
        await press(pilot, "f")
        assert tree.flagged_only
        await assert_like_fresh(tree, "flagged only")
        await press(pilot, "s")  # a sort under the filter
        await assert_like_fresh(tree, "flagged only, sorted")
        await press(pilot, "f", "s", "s", "s")
        assert not tree.flagged_only and tree.session_order == "path"
        await assert_like_fresh(tree, "all again")


async def test_o_reveals_each_flagged_session_on_screen(corpus: Path) -> None:
    app = MuseApp([str(corpus)])
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        scr = main(app)
        tree = scr.session_tree
        flagged = scr.navigator.flagged_order()
        assert len(flagged) >= 2
        assert tree.last_line + 1 > tree.scrollable_content_region.height, "the tree must be taller than the screen"
        assert any(tree.parent_of(s) for s in flagged), "a flagged subagent: o must expand its parent"
        visited = []
        for _ in flagged:
            await press(pilot, "o")
            s = scr.current
            assert s is not None and s.attribution.flags
            node = tree.cursor_node
            assert node is not None and node.data is s
            for anc in tree.session_ancestors(s):
                anode = tree.node_for(anc)
                assert anode is not None and anode.is_expanded
            top = round(tree.scroll_y)
            assert top <= tree.cursor_line < top + tree.scrollable_content_region.height
            row = tree.render_line(tree.cursor_line - top).text
            assert ("⚑" in row or "!" in row) and s.attribution.provider in row
            visited.append(s.key)
        assert visited == [s.key for s in flagged]
        await press(pilot, "o")  # it wraps
        assert scr.current is not None and scr.current.key == flagged[0].key


async def test_the_cursor_stays_on_its_session_as_sessions_arrive_and_go(corpus: Path) -> None:
    sessions = await indexed_sessions(corpus)
    app = OneTree(80)
    async with app.run_test(size=(90, 20)) as pilot:
        tree = app.query_one(SessionTree)
        tree.set_sort("time")  # newer sessions go above older ones
        first, rest = sessions[::2], sessions[1::2]
        tree.add_sessions(first)
        target = sorted(first, key=lambda s: -(s.started_at or 0))[len(first) // 2]
        assert tree.reveal(target)
        await pilot.pause()
        on_screen = tree.cursor_line - round(tree.scroll_y)
        for i in range(0, len(rest), 7):
            tree.add_sessions(rest[i : i + 7])
            await pilot.pause()
            assert tree.current_session() is target
            assert tree.cursor_line - round(tree.scroll_y) == on_screen, "the cursor keeps its place on the screen"
        assert tree.cursor_line > 0
        victims = [s for s in sessions if s is not target and tree.parent_of(s) is None and not tree.children_of(s)][:5]
        tree.remove_sessions(victims)
        await pilot.pause()
        assert tree.current_session() is target
        assert all(tree.node_for(v) is None for v in victims)
        # The same rows as a tree given only the survivors, in the same batches.
        fresh = SessionTree()
        await app.mount(fresh)
        fresh.set_sort("time")
        fresh.add_sessions([s for s in first if s not in victims])
        for i in range(0, len(rest), 7):
            fresh.add_sessions([s for s in rest[i : i + 7] if s not in victims])
        for s in expanded_sessions(tree):
            node = fresh.node_for(s)
            assert node is not None
            node.expand()
        assert rows_of(fresh) == rows_of(tree)


@pytest.mark.parametrize("flagged_only", [False, True])
async def test_sessions_arriving_under_a_filter_get_the_rows_a_rebuild_gives(corpus: Path, flagged_only: bool) -> None:
    """Each shown session of a batch gets its row as it arrives, a parent a filter hid too once a child matches."""
    sessions = await indexed_sessions(corpus)
    app = OneTree(100)
    async with app.run_test(size=(110, 30)) as pilot:
        tree = app.query_one(SessionTree)
        if flagged_only:
            tree.set_flagged_only(True)
        else:  # the provider of a subagent whose parent is another's: the parent is shown for it
            forest = SessionForest()
            forest.add(sessions)
            mixed = [
                c.attribution.provider
                for p in forest.sessions
                for c in forest.children_of(p)
                if c.attribution.provider != p.attribution.provider
            ]
            assert mixed
            tree.set_filter(collections.Counter(mixed).most_common(1)[0][0])
        for i in range(0, len(sessions), 7):
            tree.add_sessions(sessions[i : i + 7])
        await pilot.pause()
        arrived = rows_of(tree)
        assert any(expandable for _, _, expandable in arrived), "a parent is shown under the filter"
        tree.rebuild()
        await pilot.pause()
        assert rows_of(tree) == arrived


async def test_a_cursor_move_repaints_only_its_two_rows(corpus: Path) -> None:
    async with focused_tree(corpus, 80, (90, 20)) as (pilot, tree):
        tree.move_cursor_to_line(3)
        await pilot.pause()
        await pilot.pause()
        drawn: list[int] = []
        built: list[Node] = []
        render_line, row_pieces = tree.render_line, tree.row_pieces

        def spy_line(y: int) -> Any:
            drawn.append(y)
            return render_line(y)

        def spy_pieces(node: Node, cursor: bool = False, width: int | None = None) -> Any:
            built.append(node)
            return row_pieces(node, cursor, width)

        tree.render_line = spy_line  # type: ignore[method-assign]
        tree.row_pieces = spy_pieces  # type: ignore[method-assign]
        await pilot.press("j")
        await pilot.pause()
        assert tree.cursor_line == 4
        assert set(drawn) == {3, 4}, drawn
        assert {n.line for n in built} == {3, 4}
        drawn.clear()
        built.clear()
        await pilot.press("k", "j")  # back and forth: the rows come from the cache
        await pilot.pause()
        assert set(drawn) <= {3, 4} and len(built) == 0


async def test_mouse_click_moves_the_cursor_the_icon_toggles_and_the_wheel_scrolls(corpus: Path) -> None:
    app = MuseApp([str(corpus)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = main(app).session_tree
        parent_line = next(
            i
            for i in range(tree.last_line + 1)
            if (n := tree.get_node_at_line(i)) and n.allow_expand and not n.is_expanded
        )
        node = tree.get_node_at_line(parent_line)
        assert node is not None and parent_line < tree.scrollable_content_region.height
        await pilot.click(tree, offset=(20, parent_line))  # on the label: the cursor moves there
        assert tree.cursor_node is node and not node.is_expanded
        await pilot.click(tree, offset=(2, parent_line))  # on the ▸ (after its guide): it expands
        assert node.is_expanded and tree.cursor_node is node
        assert tree.get_node_at_line(parent_line + 1) in node.children
        await pilot.click(tree, offset=(2, parent_line))
        assert not node.is_expanded
        assert tree.scroll_y == 0
        await pilot._post_mouse_events([events.MouseScrollDown], tree, offset=(10, 5))
        await pilot.pause()
        assert tree.scroll_y > 0
        top = round(tree.scroll_y)
        assert (
            tree.render_line(0).text.strip()
            == "".join(t for t, _ in tree.row_pieces(tree.get_node_at_line(top))).strip()
        )  # type: ignore[arg-type]


async def test_G_and_g_scroll_to_the_ends_of_a_long_tree(corpus: Path) -> None:
    app = MuseApp([str(corpus)])
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        tree = main(app).session_tree
        tree.focus()
        await press(pilot, "G")
        height = tree.scrollable_content_region.height
        assert tree.cursor_line == tree.last_line > height
        assert round(tree.scroll_y) == tree.last_line - height + 1
        await press(pilot, "pageup")
        assert tree.cursor_line == tree.last_line - (height - 1)
        await press(pilot, "g")
        assert tree.cursor_line == 0 and tree.scroll_y == 0
        await press(pilot, "space")  # the first group collapses: one row per group is left
        groups = [n for n in tree.root.children if n.allow_expand]
        assert not groups[0].is_expanded and tree.last_line >= len(groups) - 1
        await press(pilot, "space")
        assert groups[0].is_expanded


def _pairwise_prefix_length(ids: list[str], minimum: int, maximum: int) -> int:
    """The definition: one more than the longest prefix two distinct ids share, within the bounds."""
    ordered = sorted(set(ids))
    need = minimum
    for a, b in itertools.pairwise(ordered):
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        need = max(need, common + 1)
    return min(need, maximum)


def test_the_unique_prefix_length_is_the_shortest_that_tells_the_ids_apart() -> None:
    rng = random.Random(7)
    for _ in range(400):
        stem = "".join(rng.choice("0a") for _ in range(rng.randint(0, 24)))
        ids = [
            stem[: rng.randint(0, len(stem))] + "".join(rng.choice("01ab") for _ in range(rng.randint(0, 8)))
            for _ in range(rng.randint(0, 30))
        ]
        ids += rng.sample(ids, min(len(ids), 3))  # duplicates count once
        lo = rng.randint(0, 8)
        hi = rng.randint(lo, 22) if rng.random() < 0.9 else rng.randint(0, 8)  # (sometimes a cap below the floor)
        assert unique_prefix_length(ids, lo, hi) == _pairwise_prefix_length(ids, lo, hi), (ids, lo, hi)


def _pieces(tree: SessionTree) -> list[list[tuple[str, Any]]]:
    return [tree.row_pieces(n) for n in (tree.get_node_at_line(i) for i in range(tree.last_line + 1)) if n]


def _uncached_pieces(tree: SessionTree) -> list[list[tuple[str, Any]]]:
    """Every row built afresh: each node's kept label dropped first."""
    tree.forget_labels()
    return _pieces(tree)


async def test_kept_labels_follow_flags_set_in_place_the_width_the_badge_and_the_focus(corpus: Path) -> None:
    """A node keeps its label across repaints; after each change it shows what a fresh build shows."""
    async with focused_tree(corpus, 100, (110, 30)) as (pilot, tree):
        app = pilot.app
        await pilot.pause()
        kept = _pieces(tree)
        assert kept == _uncached_pieces(tree)

        # A verdict's flags set in place (as the fleet outliers are when indexing ends).
        line, node = next(
            (i, n)
            for i in range(1, tree.last_line + 1)
            if (n := tree.get_node_at_line(i))
            and isinstance(n.data, SessionSummary)
            and not n.data.attribution.flags
            and not n.allow_expand
        )
        assert isinstance(node.data, SessionSummary)
        before = "".join(t for t, _ in tree.row_pieces(node))
        node.data.attribution.flags.append("outlier")
        try:
            tree.finalize(*tree.forest.links())
            await pilot.pause()
            after = "".join(t for t, _ in tree.row_pieces(node))
            assert after != before and OUTLIER_GLYPH in after
            assert _pieces(tree) == _uncached_pieces(tree)
            assert tree.render_line(line - round(tree.scroll_y)).text.rstrip() == after.rstrip()
        finally:
            node.data.attribution.flags.remove("outlier")
            tree.refresh_labels()
        await pilot.pause()
        assert OUTLIER_GLYPH not in "".join(t for t, _ in tree.row_pieces(node))

        # A narrower tree: the labels are cut to the new room.
        wide = _pieces(tree)
        tree.styles.width = 60
        await pilot.pause()
        narrow = _pieces(tree)
        assert narrow != wide
        assert narrow == _uncached_pieces(tree)

        # The +n⚐ badge of a parent with a flagged subagent: on while collapsed, off when expanded.
        parent = next(
            n
            for n in tree.root.children[0].children
            if n.allow_expand and isinstance(n.data, SessionSummary) and not n.is_expanded
        )
        assert isinstance(parent.data, SessionSummary)
        child = tree.children_of(parent.data)[0]
        child.attribution.flags.append("declared-mismatch")
        try:
            tree.finalize(*tree.forest.links())
            await pilot.pause()
            badge = f"+{tree.flagged_inside(parent.data)}⚐"
            assert badge in "".join(t for t, _ in tree.row_pieces(parent))
            parent.expand()
            await pilot.pause()
            assert "⚐" not in "".join(t for t, _ in tree.row_pieces(parent))
            assert _pieces(tree) == _uncached_pieces(tree)
            parent.collapse()
            await pilot.pause()
            assert badge in "".join(t for t, _ in tree.row_pieces(parent))
        finally:
            child.attribution.flags.remove("declared-mismatch")
            tree.refresh_labels()

        # The focus (the focused tree has its own tint and styles) and a new theme.
        for change in ("blur", "theme"):
            if change == "blur":
                tree.blur()
            else:
                app.theme = "textual-light"
            await pilot.pause()
            for line in range(tree.size.height):
                tree.render_line(line)
            assert _pieces(tree) == _uncached_pieces(tree), change
