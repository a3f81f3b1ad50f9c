"""The session tree widget: roots and formats, then parent sessions and their subagents.

A Line-API view of our own (no widget, and no layout pass, per row) in three parts: the
:class:`~musetui.session_forest.SessionForest` holds the sessions, their links, the
filters and the order; the nodes here hold the structure on screen and the expansion
state; :class:`~musetui.widgets.tree_rows.TreeRows` builds each row's runs. A flat list
of the visible nodes is rebuilt in one pass after each structural change (an expand, a
re-sort, a batch of sessions), and only the rows on screen are rendered, each cached per
(row, width, cursor, focus, hover, generation). A cursor move repaints two rows. Labels
are rendered from the summaries, so verdicts and flags that arrive late (fleet outliers
are known only when indexing ends) show without rebuilding. Children get nodes lazily,
when their parent is first expanded.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from musetui.messages import FocusBack, SessionDrill
from musetui.model import SessionSummary
from musetui.session_forest import (
    MAX_PREFIX,
    MIN_PREFIX,
    SORTS,
    GroupKey,
    SessionForest,
    format_rank,
    session_sort_key,
    sort_sessions,
    unique_prefix_length,
)
from musetui.widgets.repaint import set_virtual_height
from musetui.widgets.styling import PartStyles
from musetui.widgets.tree_rows import (
    FLAG_GLYPH,
    LEGEND,
    MODEL_WIDTH,
    OUTLIER_GLYPH,
    Group,
    LabelCache,
    NodeData,
    Piece,
    RootSummary,
    TreeRows,
    flag_glyph,
    id_prefix,
    node_depth,
    provider_label,
    route_label,
    to_strip,
)

__all__ = [
    "FLAG_GLYPH",
    "LEGEND",
    "MAX_PREFIX",
    "MIN_PREFIX",
    "MODEL_WIDTH",
    "OUTLIER_GLYPH",
    "SORTS",
    "Group",
    "Node",
    "NodeData",
    "Piece",
    "RootSummary",
    "SessionTree",
    "flag_glyph",
    "format_rank",
    "id_prefix",
    "provider_label",
    "route_label",
    "session_sort_key",
    "sort_sessions",
    "unique_prefix_length",
]


class Node:
    """One row of the tree (a group, a session or a fleet summary) with its children and state."""

    __slots__ = ("_by_provider", "_by_size", "_by_time", "_children", "_expanded", "_line", "_seq", "_tree", "allow_expand", "data", "label_cache", "parent")

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
        #: The session row's label runs, with the key they were built for (kept by :class:`TreeRows`).
        self.label_cache: LabelCache | None = None
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
        self.forest = SessionForest(root_labels)
        self._styles = PartStyles(self)
        self._styles_focus: bool | None = None
        self._painter = TreeRows(self, self.forest, self._styles, self.guide_depth)
        #: Every session's node, kept across rebuilds: a filter toggled off again makes no node anew.
        self._pool: dict[str, Node] = {}
        self._group_nodes: dict[GroupKey, Node] = {}
        self._session_nodes: dict[str, Node] = {}
        self._loaded: set[str] = set()
        self.fleet_rows: dict[str, str] = {}  # root -> its summary row, in fleet rank order
        #: The visible nodes, top to bottom (rebuilt by _changed after each structural change).
        self._rows: list[Node] = []
        self._cursor: Node | None = None
        self.hover_line = -1
        #: Bumped whenever a row's text may have changed (structure, labels, styles): part of the cache key.
        self._generation = 0
        self._strips: LRUCache[tuple[int, int, bool, bool, bool, int], Strip] = LRUCache(1024)

    # ------------------------------------------------------------------ the forest's state

    @property
    def root_labels(self) -> Mapping[str, str]:
        """The roots' display labels, in rank order (their groups' order)."""
        return self.forest.root_labels

    @root_labels.setter
    def root_labels(self, labels: Mapping[str, str]) -> None:
        self.forest.root_labels = labels

    @property
    def provider_filter(self) -> str | None:
        """The provider shown alone (see :meth:`set_filter`), or None."""
        return self.forest.provider_filter

    @property
    def flagged_only(self) -> bool:
        """True when only flagged sessions (and their ancestors) are shown."""
        return self.forest.flagged_only

    @property
    def session_order(self) -> str:
        """The sibling order (see :meth:`set_sort`)."""
        return self.forest.order

    @property
    def filtered(self) -> bool:
        """True when a provider or flagged-only filter hides sessions."""
        return self.forest.filtered

    @property
    def sessions(self) -> list[SessionSummary]:
        """Every session added so far, in arrival (walk) order."""
        return self.forest.sessions

    def summary(self, key: str) -> SessionSummary | None:
        """The session with this key, if indexed."""
        return self.forest.summary(key)

    def parent_of(self, s: SessionSummary) -> SessionSummary | None:
        """The parent session of ``s`` in the tree, if any."""
        return self.forest.parent_of(s)

    def children_of(self, s: SessionSummary) -> list[SessionSummary]:
        """The subagent sessions of ``s``."""
        return self.forest.children_of(s)

    def session_ancestors(self, s: SessionSummary) -> Iterator[SessionSummary]:
        """The parent, grandparent … of ``s``."""
        return self.forest.ancestors(s)

    def is_shown(self, s: SessionSummary) -> bool:
        """Shown under the filters: it matches, or one of its descendants does."""
        return self.forest.is_shown(s)

    def ordered(self) -> list[SessionSummary]:
        """Every visible session in display order (groups, parents, then their subagents)."""
        return self.forest.ordered()

    def flagged_sessions(self) -> list[SessionSummary]:
        """The flagged sessions of :meth:`ordered`, in that order (see :meth:`SessionForest.flagged_sessions`)."""
        return self.forest.flagged_sessions()

    def flagged_inside(self, s: SessionSummary) -> int:
        """How many descendants of ``s`` are flagged (shown on a collapsed parent)."""
        return self.forest.flagged_inside(s)

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
        labels = self.forest.root_labels
        ranked = [r for r, _ in rows if r in labels]
        self.forest.root_labels = {r: labels[r] for r in ranked + [r for r in labels if r not in ranked]}
        self.rebuild()

    def add_sessions(self, batch: Iterable[SessionSummary]) -> None:
        """Add newly indexed sessions, linking them to parents already seen.

        Nodes are made for what the batch touches only (its groups and loaded parents), and
        only the siblings the batch joined are sorted again (under a sort, or where a node
        came late), so adding a slice costs the slice (and one pass over the visible rows),
        not the whole tree.
        """
        forest = self.forest
        added = forest.add(batch)
        if not added:
            return
        joined: dict[int, Node] = {}
        late: dict[int, Node] = {}
        for s in added:
            if forest.is_shown(s):
                self._place(s, joined, late)
        self._painter.sessions_added(added)
        if forest.order != "path":
            late.update(joined)
        for pnode in late.values():
            self._sort_children(pnode)
        self._changed()

    def _place(self, s: SessionSummary, joined: dict[int, Node], late: dict[int, Node], *, shown_late: bool = False) -> Node | None:
        """Give the shown session ``s`` a node under its group or its loaded parent; returns it (None: not laid out).

        A parent a filter hid until a child of this batch matched gets its node here too
        (``shown_late``: after its siblings, which are sorted again). Each parent whose
        children grew is kept in ``joined`` (or ``late``).
        """
        nodes = self._session_nodes
        forest = self.forest
        parent = forest.parent_of(s)
        pnode: Node | None
        if parent is None:
            pnode = self._ensure_group(s.root, s.format)
        else:
            pnode = nodes.get(parent.key)
            if pnode is None and forest.filtered:
                pnode = self._place(parent, joined, late, shown_late=True)
            if pnode is None:
                return None
            pnode.allow_expand = True
            if parent.key not in self._loaded:
                return None
        self._add_session_nodes(pnode, [(forest.place(s), s)])
        (late if shown_late else joined)[id(pnode)] = pnode
        return nodes[s.key]

    def remove_sessions(self, batch: Iterable[SessionSummary]) -> None:
        """Forget sessions whose files are gone (live follow), and rebuild the nodes."""
        batch = list(batch)
        if not self.forest.remove(batch):
            return
        for s in batch:
            self._pool.pop(s.key, None)
        self._painter.sessions_removed()
        self.rebuild()

    def finalize(self, top: list[SessionSummary], children: dict[str, list[SessionSummary]]) -> None:
        """Adopt the index's final parent links; rebuild only if they differ from ours."""
        self._painter.labels_changed()  # (fleet verdicts and flags were set on the summaries in place)
        if self.forest.adopt(top, children) or self.forest.flagged_only or self.forest.order != "path":
            self.rebuild()  # (flags, such as fleet outliers, are final only now)
        else:
            self.refresh_labels()

    def refresh_labels(self) -> None:
        """Repaint every label (verdicts and flags may have changed)."""
        self._painter.labels_changed()
        self._generation += 1
        self.refresh()

    def forget_labels(self) -> None:
        """Drop every node's kept label (each is built again on its next paint)."""
        for node in (*self._pool.values(), *self._group_nodes.values()):
            node.label_cache = None

    # ------------------------------------------------------------------ nodes

    @property
    def session_nodes(self) -> list[Node]:
        """The nodes of the sessions laid out since the last rebuild (shown or under a collapsed node)."""
        return list(self._session_nodes.values())

    def _group_title(self, root: str, fmt: str) -> str:
        labels = self.forest.root_labels
        if len(labels) <= 1 and (not labels or root in labels):
            return fmt
        label = labels.get(root) or root
        return f"{label} › {fmt}"

    def _ensure_group(self, root: str, fmt: str) -> Node:
        key = (root, fmt)
        node = self._group_nodes.get(key)
        if node is not None:
            return node
        group = Group(root, fmt, self._group_title(root, fmt))
        node = Node(self, self.root, group, expanded=True, allow_expand=True)
        order = self.forest.group_order()
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

    def _add_session_nodes(self, parent: Node, found: Iterable[tuple[int, SessionSummary]]) -> None:
        """Nodes for sessions (each with its place among its siblings as found) after ``parent``'s last child.

        One loop with every lookup bound once: a rebuild without a filter makes a node for
        each of the ~19,000 tops of the bench corpus.
        """
        kids = self.forest.children
        pool = self._pool
        nodes = self._session_nodes
        append = parent._children.append
        shown = self.forest.shown_keys()
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
        forest = self.forest
        self._add_session_nodes(node, [(i, c) for i, c in enumerate(forest.children_of(data)) if forest.is_shown(c)])
        _sort_nodes(node._children, forest.order)

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
        forest = self.forest
        summarised: set[str] = set()
        shown = forest.shown_keys()
        for gkey in forest.group_order():
            found = forest.tops(gkey)
            tops = [(i, s) for i, s in enumerate(found) if s.key in shown] if shown is not None else list(enumerate(found))
            if not tops:
                continue
            if gkey[0] in self.fleet_rows and gkey[0] not in summarised:
                summarised.add(gkey[0])
                row = RootSummary(gkey[0], self.fleet_rows[gkey[0]])
                self.root._children.append(Node(self, self.root, row))
            gnode = self._ensure_group(*gkey)
            self._add_session_nodes(gnode, tops)
            _sort_nodes(gnode._children, forest.order)
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
        if current is not None and forest.is_shown(current) and self.reveal(current):
            return
        if self.root._children:
            self.move_cursor(self.root._children[0])

    def set_filter(self, provider: str | None) -> None:
        """Show only sessions attributed to ``provider`` (and their ancestors); None shows all."""
        if self.forest.set_filter(provider):
            self.rebuild()

    def clear_filters(self) -> None:
        """Drop the provider and flagged-only filters."""
        if self.forest.clear_filters():
            self.rebuild()

    def set_flagged_only(self, on: bool) -> None:
        """Show only flagged sessions (and their ancestors)."""
        if self.forest.set_flagged_only(on):
            self.rebuild()

    def set_sort(self, order: str) -> None:
        """Order siblings by ``path``, ``time``, ``provider`` or ``size`` (see :data:`SORTS`)."""
        if self.forest.set_order(order):
            self._reorder()

    def _sort_children(self, parent: Node) -> None:
        """Put ``parent``'s child nodes in the forest's order (as :func:`sort_sessions` orders them)."""
        if len(parent._children) > 1:
            _sort_nodes(parent._children, self.forest.order)

    def _reorder(self) -> None:
        """Put the nodes there are in the forest's order: siblings are re-sorted in place, none is made again."""
        current = self.current_session()
        parents = list(self._group_nodes.values())
        parents += [n for k, n in self._session_nodes.items() if k in self._loaded and n._children]
        for parent in parents:
            self._sort_children(parent)
        self._changed()
        if current is not None:
            self.reveal(current)

    def current_session(self) -> SessionSummary | None:
        """The session under the cursor, if the cursor is on a session."""
        node = self._cursor
        if node is not None and isinstance(node.data, SessionSummary):
            return node.data
        return None

    def node_for(self, s: SessionSummary) -> Node | None:
        """The node of ``s``, expanding (and loading) its ancestors as needed."""
        node = self._session_nodes.get(s.key)
        if node is None:
            chain = list(self.forest.ancestors(s))
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
        icon = node_depth(node) * self.guide_depth
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
            line_style = base + self._painter.line_hover() if hover else base
            strip = self._strips[key] = to_strip(self.row_pieces(rows[line], cursor, width), width, line_style)
        return strip

    def row_pieces(self, node: Node, cursor: bool = False, width: int | None = None) -> list[Piece]:
        """The row of ``node`` as (text, style) runs (see :meth:`TreeRows.pieces`); ``width`` is the tree's when not given."""
        if width is None:
            width = self.scrollable_content_region.width or self.size.width or 80
        return self._painter.pieces(node, cursor, width)


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


def _next_sibling(node: Node) -> Node | None:
    parent = node.parent
    if parent is None:
        return None
    siblings = parent._children
    i = siblings.index(node)
    return siblings[i + 1] if i + 1 < len(siblings) else None
