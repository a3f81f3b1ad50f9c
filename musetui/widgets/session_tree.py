"""The session tree: roots and formats, then parent sessions and their subagents.

A Line-API view of our own (no widget, and no layout pass, per row): the nodes hold the
structure and the expansion state, a flat list of the visible nodes is rebuilt in one
pass after each structural change (an expand, a re-sort, a batch of sessions), and only
the rows on screen are rendered, each cached per (row, width, cursor, focus, hover,
generation). A cursor move repaints two rows. Labels are rendered from the summaries,
so verdicts and flags that arrive late (fleet outliers are known only when indexing
ends) show without rebuilding. Children are added lazily, when their parent is first
expanded.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from musetui.messages import FocusBack, SessionDrill
from musetui.model import FORMATS, SessionSummary
from musetui.theme import provider_style
from musetui.widgets.repaint import set_virtual_height
from musetui.widgets.styling import PartStyles, cursor_colours
from musetui.widgets.text import clean, when

#: The glyph of a session flagged as a fleet outlier, and of other flags.
OUTLIER_GLYPH = "⚑"
FLAG_GLYPH = "!"
#: The model column's width when the row is short of room (it is shown whole when it fits).
MODEL_WIDTH = 16
#: Id prefixes are at least this long (longer when siblings share more).
MIN_PREFIX = 6
MAX_PREFIX = 20
#: Tree orders: the walk (path) order, newest first, by provider, biggest first.
SORTS = ("path", "time", "provider", "size")
#: One line explaining the row glyphs and numbers (under the tree, and in the help).
LEGEND = "⚑ outlier · ! other flag · ✗n malformed lines · n = items · ▸ +n⚑ flagged inside · via: router"


@dataclass(frozen=True, slots=True)
class Group:
    """A tree group: one format found under one root."""

    root: str
    format: str
    title: str


@dataclass(frozen=True, slots=True)
class RootSummary:
    """The fleet row of one root when several are open: its rank and summary (see musetui.fleet)."""

    root: str
    text: str


NodeData = Group | SessionSummary | RootSummary
#: A run of a row's text and its style (None: the row's own).
Piece = tuple[str, Style | None]


def session_sort_key(s: SessionSummary) -> tuple[str, str]:
    """The order of sessions within a group (the walk order)."""
    return (s.root, s.path)


def sort_sessions(sessions: Iterable[SessionSummary], order: str) -> list[SessionSummary]:
    """Siblings in the tree's order: ``path`` (as found), ``time`` (newest first), ``provider``, ``size``."""
    items = list(sessions)
    if order == "time":
        items.sort(key=lambda s: -(s.started_at or 0.0))
    elif order == "provider":
        items.sort(key=lambda s: (s.attribution.provider, s.attribution.host or "", -(s.started_at or 0.0)))
    elif order == "size":
        items.sort(key=lambda s: -s.size)
    return items


def unique_prefix_length(ids: Iterable[str], minimum: int = MIN_PREFIX, maximum: int = MAX_PREFIX) -> int:
    """The shortest prefix length (at least ``minimum``, at most ``maximum``) that tells every id apart.

    Prefixes of a length that tells the ids apart tell them apart at every greater length,
    so the length is found by bisection, each step one set of slices: a group of thousands
    of siblings costs a few milliseconds.
    """
    distinct = set(ids)
    n = len(distinct)
    lo, hi = minimum, maximum
    if n < 2 or lo >= hi or len({i[:lo] for i in distinct}) == n:
        return min(lo, hi)
    while hi - lo > 1:  # prefixes of lo collide; those of hi tell apart (or hi is the cap)
        mid = (lo + hi) // 2
        if len({i[:mid] for i in distinct}) == n:
            hi = mid
        else:
            lo = mid
    return hi


def id_prefix(value: str, length: int) -> str:
    """The first ``length`` characters of an id (``…`` marks a cut one)."""
    value = clean(value)
    return value if len(value) <= length else value[:length] + "…"


def format_rank(fmt: str) -> int:
    """Groups of one root are shown in the order of :data:`musetui.model.FORMATS`."""
    try:
        return FORMATS.index(fmt)
    except ValueError:
        return len(FORMATS)


def provider_label(s: SessionSummary) -> str:
    """``openai/azure``: the attributed provider, with the host when it is known."""
    a = s.attribution
    return f"{a.provider}/{a.host}" if a.host else a.provider


def route_label(s: SessionSummary) -> str:
    """``via openrouter``: the router the responses passed through, or empty."""
    via = s.attribution.via
    return f"via {via}" if via else ""


def flag_glyph(s: SessionSummary) -> str:
    """``⚑`` for a fleet outlier, ``!`` for any other flag, a space otherwise."""
    flags = s.attribution.flags
    if "outlier" in flags:
        return OUTLIER_GLYPH
    return FLAG_GLYPH if flags else " "


class Node:
    """One row of the tree (a group, a session or a fleet summary) with its children and state."""

    __slots__ = ("_by_provider", "_by_size", "_by_time", "_children", "_expanded", "_label", "_line", "_seq", "_tree", "allow_expand", "data", "parent")

    def __init__(
        self,
        tree: SessionTree,
        parent: Node | None,
        data: NodeData | None,
        *,
        expanded: bool = False,
        allow_expand: bool = False,
        seq: int = 0,
    ) -> None:
        self._tree = tree
        self.parent = parent
        self.data = data
        self._children: list[Node] = []
        self._expanded = expanded
        self.allow_expand = allow_expand
        self._line = -1
        #: The session row's label runs, with the key they were built for (see SessionTree._session_label).
        self._label: tuple[tuple[object, ...], list[Piece]] | None = None
        #: The session's place among its siblings as found, and its keys for each order
        #: (see sort_sessions), read by C-level sorts (attrgetter), so a re-sort costs no Python per node.
        self._seq = seq
        if isinstance(data, SessionSummary):
            self._by_time = -(data.started_at or 0.0)
            self._by_provider = (data.attribution.provider, data.attribution.host or "")
            self._by_size = -data.size

    def __repr__(self) -> str:
        return f"<Node {self.label.plain!r}>"

    @property
    def children(self) -> tuple[Node, ...]:
        """The child nodes, in display order."""
        return tuple(self._children)

    @property
    def label(self) -> Text:
        """The node's plain name (never markup): a group's title, a session's id (or path), a fleet row."""
        data = self.data
        if isinstance(data, Group):
            name = data.title
        elif isinstance(data, SessionSummary):
            name = data.session_id or data.path
        elif isinstance(data, RootSummary):
            name = data.text
        else:
            name = "sessions"
        return Text(name)

    @property
    def is_expanded(self) -> bool:
        """True when the node's children are shown."""
        return self._expanded

    @property
    def is_root(self) -> bool:
        """True for the (hidden) root of the tree."""
        return self.parent is None

    @property
    def is_last(self) -> bool:
        """True when the node is the last of its siblings (its guide ends here)."""
        parent = self.parent
        return parent is None or not parent._children or parent._children[-1] is self

    @property
    def line(self) -> int:
        """The node's row in the tree, or -1 when it is not shown (an ancestor is collapsed)."""
        return self._line if self._tree._shows(self) else -1

    def expand(self) -> Node:
        """Show the node's children (loading them on first use)."""
        if self.allow_expand and not self._expanded:
            self._tree._expand(self)
            self._tree._changed()
        return self

    def collapse(self) -> Node:
        """Hide the node's children."""
        if self._expanded and self.parent is not None:
            self._expanded = False
            self._tree._changed()
        return self

    def toggle(self) -> Node:
        """Expand a collapsed node, collapse an expanded one."""
        return self.collapse() if self._expanded else self.expand()


class SessionTree(ScrollView, can_focus=True):
    """Every indexed session, grouped by root and format, then parent → subagents."""

    class NodeHighlighted(Message):
        """The cursor moved to another node."""

        def __init__(self, node: Node) -> None:
            self.node = node
            super().__init__()

        @property
        def control(self) -> SessionTree:
            return self.node._tree

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "down,j",
            "cursor_down",
            "Down",
            show=False,
            id="tree.down",
            tooltip="Next line of the tree",
        ),
        Binding(
            "up,k", "cursor_up", "Up", show=False, id="tree.up", tooltip="Previous line of the tree"
        ),
        Binding(
            "enter,l",
            "drill",
            "Open",
            show=False,
            id="tree.drill",
            tooltip="Open the session's items (or expand a group)",
        ),
        Binding(
            "h,backspace",
            "back",
            "Back",
            show=False,
            id="tree.back",
            tooltip="Collapse the node, or go up to its parent",
        ),
        Binding("home,g", "first", "First", show=False, id="tree.first", tooltip="First line of the tree"),
        Binding("end,G", "last", "Last", show=False, id="tree.last", tooltip="Last line of the tree"),
        Binding("pagedown", "page_down", "Page down", show=False, id="tree.page_down", tooltip="A page down"),
        Binding("pageup", "page_up", "Page up", show=False, id="tree.page_up", tooltip="A page up"),
        Binding(
            "space",
            "toggle_node",
            "Toggle",
            show=False,
            id="tree.toggle",
            tooltip="Expand or collapse",
        ),
        Binding(
            "shift+space",
            "toggle_expand_all",
            "Toggle siblings",
            show=False,
            id="tree.toggle_siblings",
            tooltip="Expand every sibling, or collapse them all",
        ),
        Binding("shift+left", "cursor_parent", "Parent", show=False, id="tree.parent", tooltip="Up to the parent"),
        Binding(
            "shift+right",
            "cursor_parent_next_sibling",
            "Next of parent",
            show=False,
            id="tree.parent_next",
            tooltip="The parent's next sibling",
        ),
        Binding(
            "shift+up",
            "cursor_previous_sibling",
            "Previous sibling",
            show=False,
            id="tree.previous_sibling",
            tooltip="The previous sibling (or the parent)",
        ),
        Binding(
            "shift+down",
            "cursor_next_sibling",
            "Next sibling",
            show=False,
            id="tree.next_sibling",
            tooltip="The next sibling (or the parent's next one)",
        ),
    ]

    DEFAULT_CSS = """
    SessionTree {
        background: $surface;
        color: $foreground;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
        overflow-y: auto;
        &:focus { background-tint: $foreground 5%; }
        & > .session-tree--guides { color: $foreground-muted; }
        & > .session-tree--cursor {
            text-style: $block-cursor-blurred-text-style;
            background: $block-cursor-blurred-background;
        }
        &:focus > .session-tree--cursor {
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }
        &:nocolor > .session-tree--cursor { text-style: reverse; }
        & > .session-tree--highlight-line { background: $block-hover-background; }
        & > .session-tree--group {
            color: $primary;
            text-style: bold;
        }
        & > .session-tree--dim { color: $text-muted; }
        & > .session-tree--outlier {
            color: $error;
            text-style: bold;
        }
        & > .session-tree--flag {
            color: $warning;
            text-style: bold;
        }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-tree--cursor",
        "session-tree--guides",
        "session-tree--highlight-line",
        "session-tree--group",
        "session-tree--dim",
        "session-tree--outlier",
        "session-tree--flag",
    }

    #: Cells of indentation per level below the groups.
    guide_depth = 2

    def __init__(self, root_labels: dict[str, str] | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.root = Node(self, None, None, expanded=True, allow_expand=True)
        self.root_labels: dict[str, str] = dict(root_labels or {})
        self.provider_filter: str | None = None
        self.flagged_only = False
        self.session_order = "path"
        self._prefix_cache: dict[object, int] = {}
        self._width_cache: tuple[int, int, int] | None = None
        #: Per filter state (see _filter_state), kept until the sessions change, so a filter
        #: toggled back finds them: the keys shown (each match and its ancestors), each
        #: group's (shown, flagged) counts, and each collapsed parent's flagged descendants.
        self._shown_keys: dict[tuple[str | None, bool], set[str]] = {}
        self._count_cache: dict[tuple[str | None, bool], dict[tuple[str, str], tuple[int, int]]] = {}
        self._flagged_cache: dict[tuple[str | None, bool], dict[str, int]] = {}
        #: Every session's node, kept across rebuilds: a filter toggled off again makes no node anew.
        self._pool: dict[str, Node] = {}
        self._sessions: list[SessionSummary] = []
        self._by_key: dict[str, SessionSummary] = {}
        self._ids: dict[tuple[str, str], SessionSummary] = {}
        self._kids: dict[str, list[SessionSummary]] = {}
        self._parent_of: dict[str, str] = {}
        self._top: dict[tuple[str, str], list[SessionSummary]] = {}
        self._group_nodes: dict[tuple[str, str], Node] = {}
        self._session_nodes: dict[str, Node] = {}
        self._loaded: set[str] = set()
        self._final = False
        self._order_cache: list[SessionSummary] | None = None
        self._flagged_order: list[SessionSummary] | None = None
        self._styles = PartStyles(self)
        self._styles_focus: bool | None = None
        #: Bumped when the summaries' labels may read differently (their verdicts and flags
        #: set in place, sessions added or gone): part of each node's cached label key.
        self._label_epoch = 0
        self.fleet_rows: dict[str, str] = {}  # root -> its summary row, in fleet rank order
        #: The visible nodes, top to bottom (rebuilt by _changed after each structural change).
        self._rows: list[Node] = []
        self._cursor: Node | None = None
        self.hover_line = -1
        #: Bumped whenever a row's text may have changed (structure, labels, styles): part of the cache key.
        self._generation = 0
        self._strips: LRUCache[tuple[int, int, bool, bool, bool, int], Strip] = LRUCache(1024)

    # ------------------------------------------------------------------ rows and cursor

    def _changed(self) -> None:
        """Lay the visible nodes out again (one pass over them), keeping the cursor on its node.

        The cursor keeps its place on the screen when it was on screen; when its node is no
        longer shown (an ancestor collapsed, or the node is gone) it moves to the nearest
        shown ancestor, or else stays on the same line.
        """
        cursor = self._cursor
        old_line = cursor._line if cursor is not None and self._shows(cursor) else -1
        rows: list[Node] = []
        append = rows.append
        stack = [iter(self.root._children)]
        while stack:
            for node in stack[-1]:
                node._line = len(rows)
                append(node)
                if node._expanded and node._children:
                    stack.append(iter(node._children))
                    break
            else:
                stack.pop()
        self._rows = rows
        self._generation += 1
        set_virtual_height(self, len(rows))
        if self.scroll_y > self.max_scroll_y:
            self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
        if cursor is not None and not self._shows(cursor):
            target: Node | None = cursor.parent
            while target is not None and target.parent is not None and not self._shows(target):
                target = target.parent
            if target is None or target.parent is None or not self._shows(target):
                target = rows[min(max(old_line, 0), len(rows) - 1)] if rows else None
            self._set_cursor(target)
        elif cursor is not None and old_line >= 0 and cursor._line != old_line:
            top = round(self.scroll_y)
            height = self._height()
            if top <= old_line < top + height:  # it was on screen: it stays where it was
                self.scroll_to(y=top + cursor._line - old_line, animate=False, force=True)
            self._scroll_cursor_visible()
        self.refresh()

    def _shows(self, node: Node) -> bool:
        """True when ``node`` is one of the rows laid out."""
        line = node._line
        return 0 <= line < len(self._rows) and self._rows[line] is node

    def _height(self) -> int:
        return self.scrollable_content_region.height or self.size.height

    @property
    def last_line(self) -> int:
        """The last row's number (-1 when the tree is empty)."""
        return len(self._rows) - 1

    @property
    def cursor_node(self) -> Node | None:
        """The node under the cursor."""
        return self._cursor

    @property
    def cursor_line(self) -> int:
        """The cursor's row, or -1 when there is no cursor."""
        cursor = self._cursor
        return cursor._line if cursor is not None and self._shows(cursor) else -1

    @cursor_line.setter
    def cursor_line(self, line: int) -> None:
        self.move_cursor_to_line(line)

    def get_node_at_line(self, line: int) -> Node | None:
        """The node shown on row ``line``."""
        return self._rows[line] if 0 <= line < len(self._rows) else None

    def move_cursor_to_line(self, line: int, *, center: bool = False) -> None:
        """Put the cursor on row ``line`` (clamped to the rows there are) and scroll it into view."""
        if self._rows:
            self.move_cursor(self._rows[max(0, min(line, len(self._rows) - 1))], center=center)

    def move_cursor(self, node: Node | None, animate: bool = False, *, center: bool = False) -> None:
        """Put the cursor on ``node`` and scroll it into view (centred if asked)."""
        self._set_cursor(node)
        self._scroll_cursor_visible(center=center)

    def _set_cursor(self, node: Node | None) -> None:
        old = self._cursor
        old_line = self.cursor_line
        self._cursor = node
        if old_line >= 0:
            self.refresh_line(old_line)
        new_line = self.cursor_line
        if new_line >= 0 and new_line != old_line:
            self.refresh_line(new_line)
        if node is not None and node is not old:
            self.post_message(self.NodeHighlighted(node))

    def _scroll_cursor_visible(self, *, center: bool = False) -> None:
        line = self.cursor_line
        height = self._height()
        if line < 0 or height <= 0:
            return
        top = round(self.scroll_y)
        if center:
            self.scroll_to(y=line + 0.5 - height / 2, animate=False, force=True)
        elif line < top:
            self.scroll_to(y=line, animate=False, force=True)
        elif line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False, force=True)

    def _clear_nodes(self) -> None:
        """Drop every node (the sessions stay): a rebuild follows."""
        self.root._children = []
        self._group_nodes = {}
        self._session_nodes = {}
        self._loaded = set()

    def _expand(self, node: Node) -> None:
        """Expand ``node`` (its children loaded on first use) without laying the rows out."""
        self._load_children(node)
        node._expanded = True

    # ------------------------------------------------------------------ data

    def set_fleet(self, rows: list[tuple[str, str]]) -> None:
        """Show one summary row per root, and order the roots as ranked (most unusual first)."""
        if rows == list(self.fleet_rows.items()):
            return
        self.fleet_rows = dict(rows)
        ranked = [r for r, _ in rows if r in self.root_labels]
        self.root_labels = {r: self.root_labels[r] for r in ranked + [r for r in self.root_labels if r not in ranked]}
        self.rebuild()

    @property
    def sessions(self) -> list[SessionSummary]:
        """Every session added so far, in arrival (walk) order."""
        return self._sessions

    def summary(self, key: str) -> SessionSummary | None:
        """The session with this key, if indexed."""
        return self._by_key.get(key)

    def parent_of(self, s: SessionSummary) -> SessionSummary | None:
        """The parent session of ``s`` in the tree, if any."""
        pk = self._parent_of.get(s.key)
        return self._by_key.get(pk) if pk else None

    def children_of(self, s: SessionSummary) -> list[SessionSummary]:
        """The subagent sessions of ``s``."""
        return self._kids.get(s.key, [])

    def _matches(self, s: SessionSummary) -> bool:
        if self.flagged_only and not s.attribution.flags:
            return False
        return self.provider_filter is None or s.attribution.provider == self.provider_filter

    @property
    def filtered(self) -> bool:
        """True when a provider or flagged-only filter hides sessions."""
        return self.provider_filter is not None or self.flagged_only

    def is_shown(self, s: SessionSummary) -> bool:
        """Shown under the filters: it matches, or one of its descendants does."""
        return self._visible(s)

    def _visible(self, s: SessionSummary) -> bool:
        """Shown under the filter: it matches, or one of its descendants does."""
        return not self.filtered or s.key in self._shown()

    def _filter_state(self) -> tuple[str | None, bool]:
        return (self.provider_filter, self.flagged_only)

    def _shown(self) -> set[str]:
        """The keys shown under the filters: each match and its ancestors (one pass, cached until a change)."""
        state = self._filter_state()
        shown = self._shown_keys.get(state)
        if shown is None:
            shown = set()
            parent_of = self._parent_of
            for s in self._sessions:
                if self._matches(s):
                    key: str | None = s.key
                    while key is not None and key not in shown:
                        shown.add(key)
                        key = parent_of.get(key)
            self._shown_keys[state] = shown
        return shown

    def ordered(self) -> list[SessionSummary]:
        """Every visible session in display order (groups, parents, then their subagents)."""
        if self._order_cache is None:
            out: list[SessionSummary] = []

            kids = self._kids

            def walk(items: list[SessionSummary]) -> None:
                for s in sort_sessions(items, self.session_order) if len(items) > 1 else items:
                    if not self._visible(s):
                        continue
                    out.append(s)
                    below = kids.get(s.key)
                    if below:
                        walk(below)

            for gkey in self._group_order():
                walk(self._top.get(gkey, []))
            self._order_cache = out
        return self._order_cache

    def flagged_sessions(self) -> list[SessionSummary]:
        """The flagged sessions of :meth:`ordered`, in that order, without walking every session.

        Only the subtrees holding a flagged session are visited: their tops are put in order
        by the same sort as their group's nodes, the subagents below by :func:`sort_sessions`
        (a stable sort of a subset keeps the subset's order in the whole). So ``o`` costs the
        flagged sessions, not the tree. Cached until the sessions, filters or order change.
        """
        if self._flagged_order is None:
            marked: set[str] = set()
            tops: dict[tuple[str, str], list[Node]] = {}
            parent_of = self._parent_of
            for s in self._sessions:
                if not s.attribution.flags:
                    continue
                key = s.key
                while key not in marked:
                    marked.add(key)
                    up = parent_of.get(key)
                    if up is None:  # a top: its node (there is one when it is shown) joins its group's list
                        node = self._session_nodes.get(key)
                        if node is not None and node.parent is not None and isinstance(node.parent.data, Group):
                            tops.setdefault((node.parent.data.root, node.parent.data.format), []).append(node)
                        break
                    key = up
            out: list[SessionSummary] = []
            kids = self._kids
            stack: list[Iterator[SessionSummary]] = []
            for gkey in reversed(self._group_order()):
                nodes = tops.get(gkey)
                if nodes:
                    _sort_nodes(nodes, self.session_order)
                    stack.append(iter([n.data for n in nodes if isinstance(n.data, SessionSummary)]))
            while stack:
                for s in stack[-1]:
                    if not self._visible(s):
                        continue
                    if s.attribution.flags:
                        out.append(s)
                    below = [c for c in kids.get(s.key, ()) if c.key in marked]
                    if below:
                        stack.append(iter(sort_sessions(below, self.session_order)))
                        break
                else:
                    stack.pop()
            self._flagged_order = out
        return self._flagged_order

    def _group_order(self) -> list[tuple[str, str]]:
        roots = list(self.root_labels)
        return sorted(
            self._top,
            key=lambda g: (
                roots.index(g[0]) if g[0] in roots else len(roots),
                format_rank(g[1]),
                g[1],
            ),
        )

    def _alias(self, s: SessionSummary) -> str | None:
        if s.format != "muse":
            return None
        parts = s.path.split("/")
        return parts[-2] if len(parts) >= 2 and parts[-1] == "session.jsonl" else None

    def _data_changed(self) -> None:
        """The sessions, their links or their flags changed: every derived cache is stale."""
        self._order_changed()
        self._count_cache.clear()
        self._shown_keys.clear()
        self._flagged_cache.clear()

    def _order_changed(self) -> None:
        """The rows' order or filter changed: the display orders are stale."""
        self._order_cache = None
        self._flagged_order = None

    def add_sessions(self, batch: Iterable[SessionSummary]) -> None:
        """Add newly indexed sessions, linking them to parents already seen.

        The label caches are updated for what the batch touches only (its groups and parents),
        and under a sort only the siblings the batch joined are sorted again, so adding a
        slice costs the slice (and one pass over the visible rows), not the whole tree.
        """
        added: list[SessionSummary] = []
        touched: dict[int, Node] = {}
        for s in batch:
            if s.key in self._by_key:
                continue
            added.append(s)
            self._sessions.append(s)
            self._by_key[s.key] = s
            if s.session_id:
                self._ids.setdefault((s.root, s.session_id), s)
            alias = self._alias(s)
            if alias:
                self._ids.setdefault((s.root, alias), s)
            parent = self._ids.get((s.root, s.parent_session_id)) if s.parent_session_id else None
            if parent is not None and parent is not s:
                self._shown_keys.clear()
                pnode = self._link_child(parent, s)
            else:
                self._top.setdefault((s.root, s.format), []).append(s)
                pnode = self._add_top_node(s)
            if pnode is not None:
                touched[id(pnode)] = pnode
        if not added:
            return
        self._data_changed()
        for s in added:
            pk = self._parent_of.get(s.key)
            self._prefix_cache.pop(pk if pk else (s.root, s.format), None)
        if self._width_cache is not None:
            wp, wi, wm = self._width_cache
            self._width_cache = (
                min(16, max(wp, *(len(provider_label(s)) for s in added))),
                max(wi, *(len(str(s.items)) for s in added)),
                min(32, max(wm, *(len(s.declared_model or s.label or "-") for s in added))),
            )
        if self.session_order != "path":
            for pnode in touched.values():
                self._sort_children(pnode)
        self._changed()

    def remove_sessions(self, batch: Iterable[SessionSummary]) -> None:
        """Forget sessions whose files are gone (live follow), and rebuild the nodes."""
        gone = {s.key for s in batch if s.key in self._by_key}
        if not gone:
            return
        self._sessions = [s for s in self._sessions if s.key not in gone]
        for key in gone:
            del self._by_key[key]
            self._pool.pop(key, None)
        self._ids = {k: v for k, v in self._ids.items() if v.key not in gone}
        self._kids = {p: [c for c in cs if c.key not in gone] for p, cs in self._kids.items() if p not in gone}
        self._parent_of = {c: p for c, p in self._parent_of.items() if c not in gone and p not in gone}
        self._top = {
            g: kept for g, tops in self._top.items() if (kept := [s for s in tops if s.key not in gone])
        }
        self._width_cache = None
        self._prefix_cache.clear()
        self._data_changed()
        self.rebuild()

    def _link_child(self, parent: SessionSummary, child: SessionSummary) -> Node | None:
        """Record ``child`` under ``parent``; returns the parent's node when a child node was added."""
        siblings = self._kids.setdefault(parent.key, [])
        siblings.append(child)
        self._parent_of[child.key] = parent.key
        pnode = self._session_nodes.get(parent.key)
        if pnode is None:
            return None
        if parent.key in self._loaded:
            if self._visible(child):
                self._add_session_node(pnode, child, len(siblings) - 1)
                return pnode
        elif not pnode.allow_expand:
            pnode.allow_expand = True
        return None

    def finalize(
        self, top: list[SessionSummary], children: dict[str, list[SessionSummary]]
    ) -> None:
        """Adopt the index's final parent links; rebuild only if they differ from ours."""
        self._final = True
        self._label_epoch += 1  # (fleet verdicts and flags were set on the summaries in place)
        parent_of = {c.key: p for p, cs in children.items() for c in cs}
        if parent_of != self._parent_of or {s.key for s in top} != {
            s.key for lst in self._top.values() for s in lst
        }:
            self._kids = {k: list(v) for k, v in children.items()}
            self._parent_of = parent_of
            self._top = {}
            for s in top:
                self._top.setdefault((s.root, s.format), []).append(s)
            self._prefix_cache.clear()
            self._data_changed()
            self.rebuild()
        else:
            self._data_changed()
            self._prefix_cache.clear()
            if self.flagged_only or self.session_order != "path":
                self.rebuild()  # flags (fleet outliers) are final only now
            else:
                self.refresh_labels()

    def refresh_labels(self) -> None:
        """Repaint every label (verdicts and flags may have changed)."""
        self._label_epoch += 1
        self._generation += 1
        self.refresh()

    # ------------------------------------------------------------------ nodes

    def _group_title(self, root: str, fmt: str) -> str:
        if len(self.root_labels) <= 1 and (not self.root_labels or root in self.root_labels):
            return fmt
        label = self.root_labels.get(root) or root
        return f"{label} › {fmt}"

    def _ensure_group(self, root: str, fmt: str) -> Node:
        key = (root, fmt)
        node = self._group_nodes.get(key)
        if node is not None:
            return node
        group = Group(root, fmt, self._group_title(root, fmt))
        node = Node(self, self.root, group, expanded=True, allow_expand=True)
        order = self._group_order()
        idx = order.index(key) if key in order else len(order)
        siblings = self.root._children
        for later in order[idx + 1 :]:
            before = self._group_nodes.get(later)
            if before is not None:
                siblings.insert(siblings.index(before), node)
                break
        else:
            siblings.append(node)
        self._group_nodes[key] = node
        return node

    def _add_top_node(self, s: SessionSummary) -> Node | None:
        if not self._visible(s):
            return None
        gnode = self._ensure_group(s.root, s.format)
        self._add_session_node(gnode, s, len(self._top[(s.root, s.format)]) - 1)
        return gnode

    def _add_session_node(self, parent: Node, s: SessionSummary, seq: int) -> None:
        """A node for ``s``, the ``seq``-th of its siblings as found, after ``parent``'s last child."""
        self._add_session_nodes(parent, [(seq, s)])

    def _add_session_nodes(self, parent: Node, found: Iterable[tuple[int, SessionSummary]]) -> None:
        """Nodes for sessions (each with its place among its siblings as found) after ``parent``'s last child.

        One loop with every lookup bound once: a rebuild without a filter makes a node for
        each of the ~19,000 tops of the bench corpus.
        """
        kids = self._kids
        pool = self._pool
        nodes = self._session_nodes
        append = parent._children.append
        shown = self._shown() if self.filtered else None
        for seq, s in found:
            key = s.key
            below = kids.get(key)
            has_children = bool(below) and (shown is None or any(c.key in shown for c in below or ()))
            node = pool.get(key)
            if node is None or node.data is not s:
                node = pool[key] = Node(self, parent, s, allow_expand=has_children, seq=seq)
            else:  # (the same session's node from an earlier build, made like new)
                node.parent = parent
                if node._children:
                    node._children = []
                node._expanded = False
                node.allow_expand = has_children
                node._seq = seq
            append(node)
            nodes[key] = node

    def _load_children(self, node: Node) -> None:
        data = node.data
        if not isinstance(data, SessionSummary) or data.key in self._loaded:
            return
        self._loaded.add(data.key)
        for i, c in enumerate(self._kids.get(data.key, [])):
            if self._visible(c):
                self._add_session_node(node, c, i)
        _sort_nodes(node._children, self.session_order)

    def clear(self) -> SessionTree:
        """Drop every node and the cursor (the sessions stay)."""
        self._clear_nodes()
        self._cursor = None
        self._changed()
        return self

    def rebuild(self) -> None:
        """Rebuild every node (after a filter change or new parent links), keeping the cursor."""
        current = self.current_session()
        expanded = {k for k, n in self._session_nodes.items() if n._expanded}
        collapsed_groups = {k for k, n in self._group_nodes.items() if not n._expanded}
        self._clear_nodes()
        self._order_changed()
        summarised: set[str] = set()
        shown = self._shown() if self.filtered else None
        for gkey in self._group_order():
            found = self._top.get(gkey, [])
            tops = [(i, s) for i, s in enumerate(found) if s.key in shown] if shown is not None else list(enumerate(found))
            if not tops:
                continue
            if gkey[0] in self.fleet_rows and gkey[0] not in summarised:
                summarised.add(gkey[0])
                row = RootSummary(gkey[0], self.fleet_rows[gkey[0]])
                self.root._children.append(Node(self, self.root, row))
            gnode = self._ensure_group(*gkey)
            self._add_session_nodes(gnode, tops)
            _sort_nodes(gnode._children, self.session_order)
            if gkey in collapsed_groups:
                gnode._expanded = False
        # Parents before their children: a child's node exists once its parent is loaded.
        pending = expanded
        while pending:
            left = set()
            for key in pending:
                node = self._session_nodes.get(key)
                if node is None:
                    left.add(key)
                elif node.allow_expand:
                    self._expand(node)
            if len(left) == len(pending):
                break
            pending = left
        self._cursor = None
        self._changed()
        if current is not None and self._visible(current) and self.reveal(current):
            return
        if self.root._children:
            self.move_cursor(self.root._children[0])

    def set_filter(self, provider: str | None) -> None:
        """Show only sessions attributed to ``provider`` (and their ancestors); None shows all."""
        if provider == self.provider_filter:
            return
        self.provider_filter = provider
        self.rebuild()

    def clear_filters(self) -> None:
        """Drop the provider and flagged-only filters."""
        if self.filtered:
            self.provider_filter = None
            self.flagged_only = False
            self.rebuild()

    def set_flagged_only(self, on: bool) -> None:
        """Show only flagged sessions (and their ancestors)."""
        if on == self.flagged_only:
            return
        self.flagged_only = on
        self.rebuild()

    def set_sort(self, order: str) -> None:
        """Order siblings by ``path``, ``time``, ``provider`` or ``size`` (see :data:`SORTS`)."""
        if order not in SORTS or order == self.session_order:
            return
        self.session_order = order
        self._reorder()

    def _sort_children(self, parent: Node) -> None:
        """Put ``parent``'s child nodes in ``session_order`` (as :func:`sort_sessions` orders them)."""
        if len(parent._children) > 1:
            _sort_nodes(parent._children, self.session_order)

    def _reorder(self) -> None:
        """Put the nodes there are in ``session_order``: siblings are re-sorted in place, none is made again."""
        current = self.current_session()
        parents = list(self._group_nodes.values())
        parents += [n for k, n in self._session_nodes.items() if k in self._loaded and n._children]
        for parent in parents:
            self._sort_children(parent)
        self._order_changed()
        self._changed()
        if current is not None:
            self.reveal(current)

    def current_session(self) -> SessionSummary | None:
        """The session under the cursor, if the cursor is on a session."""
        node = self._cursor
        if node is not None and isinstance(node.data, SessionSummary):
            return node.data
        return None

    def session_ancestors(self, s: SessionSummary) -> Iterator[SessionSummary]:
        """The parent, grandparent … of ``s``."""
        seen: set[str] = set()
        key = self._parent_of.get(s.key)
        while key and key not in seen:
            seen.add(key)
            parent = self._by_key.get(key)
            if parent is None:
                return
            yield parent
            key = self._parent_of.get(key)

    def node_for(self, s: SessionSummary) -> Node | None:
        """The node of ``s``, expanding (and loading) its ancestors as needed."""
        node = self._session_nodes.get(s.key)
        if node is None:
            chain = list(self.session_ancestors(s))
            chain.reverse()
            for anc in chain:
                anode = self._session_nodes.get(anc.key)
                if anode is None:
                    return None
                self._load_children(anode)
            node = self._session_nodes.get(s.key)
            if node is None:
                return None
        changed = False
        parent = node.parent
        while parent is not None and parent is not self.root:
            if not parent._expanded:
                self._expand(parent)
                changed = True
            parent = parent.parent
        if changed:
            self._changed()
        return node

    def reveal(self, s: SessionSummary) -> bool:
        """Move the cursor to ``s`` (expanding its ancestors), centred; False if it is not shown."""
        node = self.node_for(s)
        if node is None or not self._shows(node):
            return False
        self.move_cursor(node, center=True)
        return True

    # ------------------------------------------------------------------ actions

    def action_cursor_down(self) -> None:
        self.move_cursor_to_line(self.cursor_line + 1 if self._cursor is not None else 0)

    def action_cursor_up(self) -> None:
        self.move_cursor_to_line(self.cursor_line - 1 if self._cursor is not None else self.last_line)

    def action_page_down(self) -> None:
        self.move_cursor_to_line(max(0, self.cursor_line) + max(1, self._height() - 1))

    def action_page_up(self) -> None:
        self.move_cursor_to_line(max(0, self.cursor_line) - max(1, self._height() - 1))

    def action_first(self) -> None:
        """g: the first line of the tree."""
        if self._rows:
            self.move_cursor(self._rows[0])

    def action_last(self) -> None:
        """G: the last line of the tree."""
        if self._rows:
            self.move_cursor(self._rows[-1])

    def action_toggle_node(self) -> None:
        node = self._cursor
        if node is not None and node.allow_expand:
            node.toggle()

    def action_toggle_expand_all(self) -> None:
        """Expand every sibling of the cursor's node when all are collapsed, else collapse them all."""
        node = self._cursor
        if node is None or node.parent is None:
            return
        siblings = [n for n in node.parent._children if n.allow_expand]
        if all(not n._expanded for n in siblings):
            for n in siblings:
                self._expand(n)
        else:
            for n in siblings:
                n._expanded = False
        self._changed()

    def action_cursor_parent(self) -> None:
        node = self._cursor
        if node is not None and node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)

    def action_cursor_parent_next_sibling(self) -> None:
        node = self._cursor
        if node is not None and node.parent is not None and node.parent is not self.root:
            target = _next_sibling(node.parent)
            if target is not None:
                self.move_cursor(target)

    def action_cursor_previous_sibling(self) -> None:
        node = self._cursor
        if node is None or node.parent is None:
            return
        siblings = node.parent._children
        i = siblings.index(node)
        if i > 0:
            self.move_cursor(siblings[i - 1])
        elif node.parent is not self.root:
            self.move_cursor(node.parent)

    def action_cursor_next_sibling(self) -> None:
        node = self._cursor
        if node is None:
            return
        target = _next_sibling(node)
        if target is None and node.parent is not None and node.parent is not self.root:
            target = _next_sibling(node.parent)
        if target is not None:
            self.move_cursor(target)

    def action_drill(self) -> None:
        node = self._cursor
        if node is None:
            return
        if isinstance(node.data, SessionSummary):
            if node.allow_expand and not node.is_expanded:
                node.expand()
            self.post_message(SessionDrill(node.data))
        else:
            node.toggle()

    def action_back(self) -> None:
        node = self._cursor
        if node is None:
            self.post_message(FocusBack("tree"))
            return
        if node.allow_expand and node.is_expanded and node._children:
            node.collapse()
            return
        parent = node.parent
        if parent is not None and parent is not self.root:
            self.move_cursor(parent)

    # ------------------------------------------------------------------ mouse and focus

    def _row_at(self, event: events.MouseEvent) -> tuple[int, int] | None:
        """The (row, column) under the pointer, if it is on a row."""
        offset = event.get_content_offset(self)
        if offset is None:
            return None
        line = round(self.scroll_y) + offset.y
        return (line, offset.x) if 0 <= line < len(self._rows) else None

    async def _on_click(self, event: events.Click) -> None:
        at = self._row_at(event)
        if at is None:
            return
        line, x = at
        node = self._rows[line]
        self.move_cursor(node)
        icon = _depth(node) * self.guide_depth
        if node.allow_expand and icon <= x < icon + 2:  # the ▸/▾ toggles
            node.toggle()

    def _on_mouse_move(self, event: events.MouseMove) -> None:
        at = self._row_at(event)
        self._set_hover(at[0] if at is not None else -1)

    def _on_leave(self, event: events.Leave) -> None:
        self._set_hover(-1)

    def _set_hover(self, line: int) -> None:
        old = self.hover_line
        if line == old:
            return
        self.hover_line = line
        for y in (old, line):
            if y >= 0:
                self.refresh_line(y)

    def _on_focus(self, event: events.Focus) -> None:
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self.refresh()

    def _on_resize(self, event: events.Resize) -> None:
        self._scroll_cursor_visible()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._generation += 1

    # ------------------------------------------------------------------ rendering

    def render_lines(self, crop: Region) -> list[Strip]:
        # The width is found once per paint, not once per row (it walks the widget's geometry).
        self._paint_width = self.scrollable_content_region.width or self.size.width
        try:
            return super().render_lines(crop)
        finally:
            self._paint_width = 0

    def render_line(self, y: int) -> Strip:
        width = self._paint_width or self.scrollable_content_region.width or self.size.width
        focus = self.has_focus
        if focus != self._styles_focus:  # the focused tree has its own tint and cursor colours
            self._styles_focus = focus
            self._styles.clear()
        base = self._styles.base()
        line = round(self.scroll_y) + y
        rows = self._rows
        if not 0 <= line < len(rows):
            return Strip.blank(width, base)
        cursor = line == self.cursor_line
        hover = line == self.hover_line
        key = (line, width, cursor, focus, hover, self._generation)
        strip = self._strips.get(key)
        if strip is None:
            line_style = base + self._line_hover() if hover else base
            strip = self._strips[key] = _strip(self.row_pieces(rows[line], cursor, width), width, line_style)
        return strip

    def row_pieces(self, node: Node, cursor: bool = False, width: int | None = None) -> list[Piece]:
        """The row of ``node`` as (text, style) runs: guides, the ▸/▾ icon, the label cut to the room left.

        On the cursor row every cell of the label takes the cursor's readable colours: part
        colours (provider, dim) on the cursor background fell to about 1:1. Rows are built
        as runs, not rich ``Text``, so a screenful renders in a few milliseconds. ``width``
        is the tree's (found when not given).
        """
        data = node.data
        if width is None:
            width = self.scrollable_content_region.width or self.size.width or 80
        depth = _depth(node)
        room = max(8, width - depth * self.guide_depth - 2)
        label: list[Piece]
        if isinstance(data, Group):
            label = self._group_label(data)
        elif isinstance(data, SessionSummary):
            label = self._session_label(data, node, room)
        elif isinstance(data, RootSummary):
            label = [(clean(data.text), self._part("session-tree--dim"))]
        else:
            label = [(clean(node.label.plain), None)]
        if cursor:
            label = [("".join(t for t, _ in label), self._cursor_style())]
        pieces: list[Piece] = []
        guides = _guides(node)
        if guides:
            pieces.append((guides, self._part("session-tree--guides")))
        if node.allow_expand:
            pieces.append(("▾ " if node._expanded else "▸ ", None))
        elif isinstance(data, SessionSummary):
            pieces.append(("  ", None))
        pieces += _fit(label, room)
        return pieces

    def _line_hover(self) -> Style:
        style = self._styles.get("hover", lambda: self.get_component_rich_style("session-tree--highlight-line"))
        return Style(bgcolor=style.bgcolor)

    def _cursor_style(self) -> Style:
        """The cursor row's style: its background, and a foreground readable on it (>= 4.5:1)."""

        def make() -> Style:
            raw, fg, bg = cursor_colours(self, self._styles.base(), "session-tree--cursor")
            return Style(color=fg.rich_color, bgcolor=bg.rich_color, bold=True, reverse=raw.reverse or None)

        return self._styles.get("cursor", make)

    def _provider_style(self, provider: str) -> Style:
        return self._styles.get(
            "provider:" + provider,
            lambda: provider_style(self.app.theme_variables, provider, self.background_colors[1]) + Style(bold=True),
        )

    def _group_label(self, group: Group) -> list[Piece]:
        count, flagged = self._group_stats((group.root, group.format))
        style = self._part("session-tree--group")  # (under the count and flags too: bold)
        label: list[Piece] = [
            (clean(group.title), style),
            (f"  ({count})", style + self._part("session-tree--dim")),
        ]
        if flagged:
            label.append((f" {flagged}⚑", style + self._part("session-tree--flag")))
        return label

    def _group_stats(self, gkey: tuple[str, str]) -> tuple[int, int]:
        """Sessions shown under a group (tops and their descendants) and how many are flagged.

        One pass over the group, cached per filter state until the sessions change.
        """
        cache = self._count_cache.setdefault(self._filter_state(), {})
        stats = cache.get(gkey)
        if stats is None:
            kids = self._kids
            shown = self._shown() if self.filtered else None
            count = flagged = 0
            stack = list(self._top.get(gkey, []))
            while stack:
                s = stack.pop()
                key = s.key
                if shown is not None and key not in shown:
                    continue
                count += 1
                if s.attribution.flags:
                    flagged += 1
                below = kids.get(key)
                if below:
                    stack.extend(below)
            stats = cache[gkey] = (count, flagged)
        return stats

    def flagged_inside(self, s: SessionSummary) -> int:
        """How many descendants of ``s`` are flagged (shown on a collapsed parent)."""
        cache = self._flagged_cache.setdefault(self._filter_state(), {})
        n = cache.get(s.key)
        if n is None:
            n = cache[s.key] = sum(1 for d in self._descendants(s) if d.attribution.flags)
        return n

    def _descendants(self, s: SessionSummary) -> Iterator[SessionSummary]:
        for c in self._kids.get(s.key, []):
            if self._visible(c):
                yield c
                yield from self._descendants(c)

    def _part(self, name: str) -> Style:
        return self._styles.part(name)

    def _prefix_length(self, node: Node) -> int:
        parent = node.parent
        data = parent.data if parent is not None else None
        if isinstance(data, SessionSummary):
            cache_key: object = data.key
            siblings = self._kids.get(data.key, [])
        elif isinstance(data, Group):
            cache_key = (data.root, data.format)
            siblings = self._top.get((data.root, data.format), [])
        else:
            return MIN_PREFIX
        n = self._prefix_cache.get(cache_key)
        if n is None:
            n = self._prefix_cache[cache_key] = unique_prefix_length(_ident(s) for s in siblings)
        return n

    def _session_label(self, s: SessionSummary, node: Node | None = None, room: int = 200) -> list[Piece]:
        """``⚑ 01a05efe-0 09-01 22:01 openai/azure   14 muse-special  Audit site/ for…``, as runs.

        A node keeps its label across repaints (a scroll, a sort, a collapse above it): it is
        built again only when something it shows changes, each part of its key: the room,
        the id prefix its siblings need, the ``+n⚑`` badge, the column widths, the styles,
        and the summaries themselves (``_label_epoch``).
        """
        prefix = self._prefix_length(node) if node is not None else MIN_PREFIX
        inside = self.flagged_inside(s) if node is not None and node.allow_expand and not node.is_expanded else 0
        widths = self._widths()
        key = (self._label_epoch, self._styles.epoch, room, prefix, inside, widths)
        if node is not None:
            cached = node._label
            if cached is not None and cached[0] == key and node.data is s:
                return cached[1]
        out = self._build_session_label(s, room, prefix, inside, widths)
        if node is not None:
            node._label = (key, out)
        return out

    def _build_session_label(
        self, s: SessionSummary, room: int, prefix: int, inside: int, widths: tuple[int, int, int]
    ) -> list[Piece]:
        dim = self._part("session-tree--dim")
        glyph = flag_glyph(s)
        glyph_style: Style | None = None
        if glyph == OUTLIER_GLYPH:
            glyph_style = self._part("session-tree--outlier")
        elif glyph == FLAG_GLYPH:
            glyph_style = self._part("session-tree--flag")
        ident = id_prefix(_ident(s), prefix)
        provider = provider_label(s)
        model_full = clean(s.declared_model or s.label or "-", 60)
        wp, wi, wm = widths
        # Columns: glyph, id, [time], provider, items, model, [title]. The model is cut only
        # when the row has no room for it; the time and then the title come when it has.
        base = 2 + len(ident) + 1 + wp + 1 + wi + 1
        show_time = room - base - min(wm, 20) >= 12  # one decision for the rows of a depth
        if show_time:
            base += 12
        route = route_label(s)
        if route:  # (it takes the model's room, not the time's: the columns stay aligned)
            base += len(route) + 1
        model = clean(model_full, max(4, room - base)) if len(model_full) > room - base else model_full
        pstyle = self._provider_style(s.attribution.provider)
        out: list[Piece] = [(glyph + " ", glyph_style), (ident + " ", None)]
        if show_time:
            out.append((when(s.started_at), dim))
            out.append((" ", None))
        out.append((provider.ljust(wp), pstyle))
        out.append((" ", None))
        out.append((str(s.items).rjust(wi), dim))
        out.append((" ", None))
        if route:  # the route before the model: it is part of the verdict, the model is what was declared
            out.append((route + " ", pstyle))
        out.append((model, None))
        if s.malformed_lines:
            out.append((f" ✗{s.malformed_lines}", self._part("session-tree--flag")))
        if inside:
            out.append((f" +{inside}⚑", self._part("session-tree--flag")))
        used = sum(cell_len(t) for t, _ in out)
        if s.title and room - used >= 12:
            out.append(("  ", None))
            out.append((clean(s.title, max(0, room - used - 2)), dim))
        return out

    def _widths(self) -> tuple[int, int, int]:
        """Column widths (provider, items, model) that fit every session in the tree."""
        if self._width_cache is None:
            sessions = self._sessions
            wp = max((len(provider_label(s)) for s in sessions), default=6)
            wi = max((len(str(s.items)) for s in sessions), default=1)
            wm = max((len(s.declared_model or s.label or "-") for s in sessions), default=1)
            self._width_cache = (min(wp, 16), wi, min(wm, 32))
        return self._width_cache


_BY_SEQ = operator.attrgetter("_seq")
_BY_TIME = operator.attrgetter("_by_time")
_BY_PROVIDER = operator.attrgetter("_by_provider")
_BY_SIZE = operator.attrgetter("_by_size")


def _sort_nodes(nodes: list[Node], order: str) -> None:
    """Sort sibling session nodes in place as :func:`sort_sessions` sorts their sessions.

    From the found order, by stable sorts on keys kept on the nodes: ties stay in the found
    order, as in a fresh build, and no Python runs per node (``provider`` is by provider and
    host, then newest first: two stable passes).
    """
    if len(nodes) < 2:
        return
    nodes.sort(key=_BY_SEQ)
    if order == "time":
        nodes.sort(key=_BY_TIME)
    elif order == "provider":
        nodes.sort(key=_BY_TIME)
        nodes.sort(key=_BY_PROVIDER)
    elif order == "size":
        nodes.sort(key=_BY_SIZE)


def _fit(pieces: list[Piece], room: int) -> list[Piece]:
    """The runs cut to ``room`` cells, the last one kept ending in ``…`` (as ``Text.truncate`` does)."""
    if sum(cell_len(t) for t, _ in pieces) <= room:
        return pieces
    out: list[Piece] = []
    left = room - 1
    for text, style in pieces:
        n = cell_len(text)
        if n <= left:
            out.append((text, style))
            left -= n
            continue
        if left > 0:
            out.append((set_cell_size(text, left), style))
        out.append(("…", style))
        break
    return out


def _strip(pieces: list[Piece], width: int, line_style: Style) -> Strip:
    """The runs as one strip of exactly ``width`` cells, runs of one style joined, padded in ``line_style``.

    (Built in one go: Textual's ``adjust_cell_length`` and ``simplify`` would each make a new
    strip, and a full tree repaints every row.)
    """
    segments: list[Segment] = []
    used = 0
    run_text = ""
    run_style = line_style
    for text, style in pieces:
        if not text or used >= width:
            continue
        n = cell_len(text)
        if used + n > width:
            text = set_cell_size(text, width - used)
            n = width - used
        used += n
        full = line_style + style if style else line_style
        if full == run_style:
            run_text += text
        else:
            if run_text:
                segments.append(Segment(run_text, run_style))
            run_text, run_style = text, full
    if used < width:
        if run_style == line_style:
            run_text += " " * (width - used)
        else:
            if run_text:
                segments.append(Segment(run_text, run_style))
            run_text, run_style = " " * (width - used), line_style
    if run_text:
        segments.append(Segment(run_text, run_style))
    return Strip(segments, width)


def _ident(s: SessionSummary) -> str:
    return s.session_id or os.path.basename(s.path)


def _depth(node: Node) -> int:
    """Levels below the groups (a group is 0, a session under it 1, a subagent 2 …)."""
    depth = 0
    parent = node.parent
    while parent is not None and parent.parent is not None:
        depth += 1
        parent = parent.parent
    return depth


def _guides(node: Node) -> str:
    """The guide cells before a node's row: ``│ `` or blanks per ancestor level, then ``├ `` or ``└ ``."""
    parent = node.parent
    if parent is None or parent.parent is None:
        return ""
    cells = ["└ " if node.is_last else "├ "]
    while parent is not None and parent.parent is not None and parent.parent.parent is not None:
        cells.append("  " if parent.is_last else "│ ")
        parent = parent.parent
    return "".join(reversed(cells))


def _next_sibling(node: Node) -> Node | None:
    parent = node.parent
    if parent is None:
        return None
    siblings = parent._children
    i = siblings.index(node)
    return siblings[i + 1] if i + 1 < len(siblings) else None
