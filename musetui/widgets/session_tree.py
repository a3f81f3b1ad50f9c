"""The session tree widget: roots and formats, then parent sessions and their subagents.

A Line-API view of our own (no widget, and no layout pass, per row), in three parts behind
this widget: the :class:`~musetui.core.session_forest.SessionForest` holds the sessions, their
links, the filters and the order (headless); :class:`~musetui.widgets.tree_nodes.TreeNodes`
holds the nodes on screen, their expansion, and the flat list of visible rows, laid out
again in one pass after each structural change (an expand, a re-sort, a batch of
sessions); :class:`~musetui.widgets.tree_rows.TreeRows` builds each row's runs. The widget
keeps the cursor, the scrolling, the keys and the mouse, and renders only the rows on
screen, each cached per (row, width, cursor, focus, hover, generation). A cursor move
repaints two rows. Labels are rendered from the summaries, so verdicts and flags that
arrive late (fleet outliers are known only when indexing ends) show without rebuilding.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

from textual import events
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from musetui.core.model import SessionSummary
from musetui.core.session_forest import SessionForest
from musetui.messages import FocusBack, SessionDrill
from musetui.widgets.repaint import set_virtual_height
from musetui.widgets.styling import PartStyles
from musetui.widgets.text import LineView
from musetui.widgets.tree_keys import (
    TREE_BINDINGS,
    next_sibling,
    parent_next_sibling,
    parent_of,
    previous_sibling,
)
from musetui.widgets.tree_nodes import Node, TreeNodes
from musetui.widgets.tree_rows import Piece, TreeRows, node_depth, to_strip


class SessionTree(LineView, can_focus=True):
    """Every indexed session, grouped by root and format, then parent → subagents."""

    class NodeHighlighted(Message):
        """The cursor moved to another node."""

        def __init__(self, tree: SessionTree, node: Node) -> None:
            self.node = node
            self._tree = tree
            super().__init__()

        @property
        def control(self) -> SessionTree:
            return self._tree

    class RowsChanged(Message):
        """The tree shows another number of rows (the screen sizes the tree's box by them)."""

    BINDINGS: ClassVar[list[BindingType]] = TREE_BINDINGS

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
        #: The sessions, their links, the filters and the order (headless).
        self.forest = SessionForest(root_labels)
        self._tree_layout = TreeNodes(self.forest, self._changed)
        self.root = self._tree_layout.root
        self._styles = PartStyles(self)
        self._styles_focus: bool | None = None
        self._painter = TreeRows(self, self.forest, self._styles, self.guide_depth, lambda: self._tree_layout.rows)
        self.fleet_rows: dict[str, str] = {}  # root -> its summary row, in fleet rank order
        self._cursor: Node | None = None
        self.hover_line = -1
        #: Bumped whenever a row's text may have changed (structure, labels, styles): part of the cache key.
        self._generation = 0
        self._strips: LRUCache[tuple[int, int, bool, bool, bool, int], Strip] = LRUCache(1024)
        #: The column headers shown over the rows, if any (repainted when the rows change).
        self.header: Widget | None = None

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
        old_line = cursor.line if cursor is not None else -1
        nodes = self._tree_layout
        nodes.lay_out()
        rows = nodes.rows
        shows = nodes.shows
        self._generation += 1
        if self.header is not None:
            self.header.refresh()
        if len(rows) != self.virtual_size.height:
            self.post_message(self.RowsChanged())
        set_virtual_height(self, len(rows))
        if self.scroll_y > self.max_scroll_y:
            self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
        if cursor is not None and not shows(cursor):
            target: Node | None = cursor.parent
            while target is not None and target.parent is not None and not shows(target):
                target = target.parent
            if target is None or target.parent is None or not shows(target):
                target = rows[min(max(old_line, 0), len(rows) - 1)] if rows else None
            self._set_cursor(target)
        elif cursor is not None and old_line >= 0 and cursor.line != old_line:
            top = round(self.scroll_y)
            height = self._height()
            if top <= old_line < top + height:  # it was on screen: it stays where it was
                self.scroll_to(y=top + cursor.line - old_line, animate=False, force=True)
            self._scroll_cursor_visible()
        self.refresh()

    def _height(self) -> int:
        return self.scrollable_content_region.height or self.size.height

    @property
    def row_count(self) -> int:
        """How many rows the tree shows (its expanded nodes)."""
        return len(self._tree_layout.rows)

    def content_width(self) -> int | None:
        """The columns the tree's box needs to show its rows' columns whole, or None before any row."""
        return self._painter.natural_width(self._tree_layout.rows)

    @property
    def last_line(self) -> int:
        """The last row's number (-1 when the tree is empty)."""
        return len(self._tree_layout.rows) - 1

    @property
    def cursor_node(self) -> Node | None:
        """The node under the cursor."""
        return self._cursor

    @property
    def cursor_line(self) -> int:
        """The cursor's row, or -1 when there is no cursor."""
        cursor = self._cursor
        return self._tree_layout.line_of(cursor) if cursor is not None else -1

    @cursor_line.setter
    def cursor_line(self, line: int) -> None:
        self.move_cursor_to_line(line)

    def get_node_at_line(self, line: int) -> Node | None:
        """The node shown on row ``line``."""
        rows = self._tree_layout.rows
        return rows[line] if 0 <= line < len(rows) else None

    def move_cursor_to_line(self, line: int, *, center: bool = False) -> None:
        """Put the cursor on row ``line`` (clamped to the rows there are) and scroll it into view."""
        rows = self._tree_layout.rows
        if rows:
            self.move_cursor(rows[max(0, min(line, len(rows) - 1))], center=center)

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
            self.post_message(self.NodeHighlighted(self, node))

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
        """Add newly indexed sessions, linking them to parents already seen (see :meth:`TreeNodes.add`)."""
        added = self.forest.add(batch)
        if added:
            self._tree_layout.add(added)
            self._painter.sessions_added(added)
            self._changed()

    def remove_sessions(self, batch: Iterable[SessionSummary]) -> None:
        """Forget sessions whose files are gone (live follow), and rebuild the nodes."""
        batch = list(batch)
        if self.forest.remove(batch):
            self._tree_layout.forget(batch)
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
        self._tree_layout.forget_labels()

    # ------------------------------------------------------------------ nodes

    @property
    def session_nodes(self) -> list[Node]:
        """The nodes of the sessions made since the last rebuild (shown or under a collapsed node)."""
        return self._tree_layout.session_nodes

    def clear(self) -> SessionTree:
        """Drop every node and the cursor (the sessions stay)."""
        self._tree_layout.clear()
        self._cursor = None
        self._changed()
        return self

    def rebuild(self) -> None:
        """Rebuild every node (after a filter change or new parent links), keeping the cursor."""
        current = self.current_session()
        self._tree_layout.rebuild(self.fleet_rows)
        self._cursor = None
        self._changed()
        if current is not None and self.forest.is_shown(current) and self.reveal(current):
            return
        if self.root.children:
            self.move_cursor(self.root.children[0])

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
        """Order siblings by ``path``, ``time``, ``provider`` or ``size`` (see :data:`SORTS`): re-sorted in place."""
        if self.forest.set_order(order):
            current = self.current_session()
            self._tree_layout.reorder()
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
        return self._tree_layout.node_for(s)

    def reveal(self, s: SessionSummary) -> bool:
        """Move the cursor to ``s`` (expanding its ancestors), centred; False if it is not shown."""
        node = self._tree_layout.node_for(s)
        if node is None or not self._tree_layout.shows(node):
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
        if self._tree_layout.rows:
            self.move_cursor(self._tree_layout.rows[0])

    def action_last(self) -> None:
        """G: the last line of the tree."""
        if self._tree_layout.rows:
            self.move_cursor(self._tree_layout.rows[-1])

    def action_toggle_node(self) -> None:
        node = self._cursor
        if node is not None and node.allow_expand:
            node.toggle()

    def action_toggle_expand_all(self) -> None:
        """Expand every sibling of the cursor's node when all are collapsed, else collapse them all."""
        node = self._cursor
        if node is None or node.parent is None:
            return
        siblings = [n for n in node.parent.children if n.allow_expand]
        self._tree_layout.set_expanded(siblings, all(not n.is_expanded for n in siblings))
        self._changed()

    def _go(self, target: Node | None) -> None:
        """Move the cursor to ``target``, if there is one (a key with nowhere to go does nothing)."""
        if target is not None:
            self.move_cursor(target)

    def action_cursor_parent(self) -> None:
        self._go(parent_of(self._cursor, self.root))

    def action_cursor_parent_next_sibling(self) -> None:
        self._go(parent_next_sibling(self._cursor, self.root))

    def action_cursor_previous_sibling(self) -> None:
        self._go(previous_sibling(self._cursor, self.root))

    def action_cursor_next_sibling(self) -> None:
        self._go(next_sibling(self._cursor, self.root))

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
        if node.allow_expand and node.is_expanded and node.children:
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
        return (line, offset.x) if 0 <= line < len(self._tree_layout.rows) else None

    async def _on_click(self, event: events.Click) -> None:
        at = self._row_at(event)
        if at is None:
            return
        line, x = at
        node = self._tree_layout.rows[line]
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
        if self.header is not None:
            self.header.refresh()

    def header_pieces(self) -> list[Piece]:
        """The column headers over the rows (see :meth:`TreeRows.header_pieces`)."""
        return self._painter.header_pieces(self.scrollable_content_region.width or self.size.width or 80)

    def style_changed(self) -> None:
        self._styles.clear()
        self._generation += 1

    # ------------------------------------------------------------------ rendering

    def render_line(self, y: int) -> Strip:
        width = self.paint()[1]  # (the tree paints in its own base style, tinted when focused)
        focus = self.has_focus
        if focus != self._styles_focus:  # the focused tree has its own tint and cursor colours
            self._styles_focus = focus
            self._styles.clear()
        base = self._styles.base()
        line = self.row_index(y)
        rows = self._tree_layout.rows
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
