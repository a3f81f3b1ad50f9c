"""The session tree: roots and formats, then parent sessions and their subagents.

Labels are rendered from the summaries on every repaint, so verdicts and flags that
arrive late (fleet outliers are known only when indexing ends) show without rebuilding.
Children are added lazily, when their parent is first expanded.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from musetui.messages import FocusBack, SessionDrill
from musetui.model import FORMATS, SessionSummary
from musetui.theme import provider_style, readable
from musetui.widgets.styling import component_style
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
    """The shortest prefix length (at least ``minimum``) that tells every id apart from the others."""
    ordered = sorted(set(ids))
    need = minimum
    for a, b in itertools.pairwise(ordered):
        common = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            common += 1
        need = max(need, common + 1)
    return min(need, maximum)


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


class SessionTree(Tree[NodeData]):
    """Every indexed session, grouped by root and format, then parent → subagents."""

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
        Binding(
            "space",
            "toggle_node",
            "Toggle",
            show=False,
            id="tree.toggle",
            tooltip="Expand or collapse",
        ),
    ]

    DEFAULT_CSS = """
    SessionTree {
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
    }
    SessionTree > .tree--guides, SessionTree > .tree--guides-selected,
    SessionTree > .tree--guides-hover, SessionTree:focus > .tree--guides-selected,
    SessionTree:focus > .tree--guides-hover {
        color: $text-muted;
    }
    SessionTree > .session-tree--group {
        color: $primary;
        text-style: bold;
    }
    SessionTree > .session-tree--dim {
        color: $text-muted;
    }
    SessionTree > .session-tree--outlier {
        color: $error;
        text-style: bold;
    }
    SessionTree > .session-tree--flag {
        color: $warning;
        text-style: bold;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-tree--group",
        "session-tree--dim",
        "session-tree--outlier",
        "session-tree--flag",
    }

    def __init__(self, root_labels: dict[str, str] | None = None, *, id: str | None = None) -> None:
        super().__init__("sessions", id=id)
        self.show_root = False
        self.auto_expand = False
        self.guide_depth = 2
        self.root_labels: dict[str, str] = dict(root_labels or {})
        self.provider_filter: str | None = None
        self.flagged_only = False
        self.session_order = "path"
        self._prefix_cache: dict[object, int] = {}
        self._flagged_cache: dict[str, int] = {}
        self._width_cache: tuple[int, int, int] | None = None
        self._sessions: list[SessionSummary] = []
        self._by_key: dict[str, SessionSummary] = {}
        self._ids: dict[tuple[str, str], SessionSummary] = {}
        self._kids: dict[str, list[SessionSummary]] = {}
        self._parent_of: dict[str, str] = {}
        self._top: dict[tuple[str, str], list[SessionSummary]] = {}
        self._group_nodes: dict[tuple[str, str], TreeNode[NodeData]] = {}
        self._session_nodes: dict[str, TreeNode[NodeData]] = {}
        self._loaded: set[str] = set()
        self._final = False
        self._order_cache: list[SessionSummary] | None = None
        self._count_cache: dict[tuple[str, str], int] | None = None
        self._part_styles: dict[str, Style] = {}
        self.fleet_rows: dict[str, str] = {}  # root -> its summary row, in fleet rank order

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
        if self._matches(s):
            return True
        return any(self._visible(c) for c in self._kids.get(s.key, []))

    def ordered(self) -> list[SessionSummary]:
        """Every visible session in display order (groups, parents, then their subagents)."""
        if self._order_cache is None:
            out: list[SessionSummary] = []

            def walk(items: Iterable[SessionSummary]) -> None:
                for s in sort_sessions(items, self.session_order):
                    if not self._visible(s):
                        continue
                    out.append(s)
                    walk(self._kids.get(s.key, []))

            for gkey in self._group_order():
                walk(self._top.get(gkey, []))
            self._order_cache = out
        return self._order_cache

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

    def add_sessions(self, batch: Iterable[SessionSummary]) -> None:
        """Add newly indexed sessions, linking them to parents already seen.

        The label caches are updated for what the batch touches only (its groups and parents),
        so adding a slice costs the slice, not the whole tree.
        """
        added: list[SessionSummary] = []
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
                self._link_child(parent, s)
            else:
                self._top.setdefault((s.root, s.format), []).append(s)
                self._add_top_node(s)
        self._order_cache = None
        self._count_cache = None
        for s in added:
            pk = self._parent_of.get(s.key)
            self._prefix_cache.pop(pk if pk else (s.root, s.format), None)
        if any(s.attribution.flags for s in added):
            self._flagged_cache.clear()
        if self._width_cache is not None and added:
            wp, wi, wm = self._width_cache
            self._width_cache = (
                min(16, max(wp, *(len(provider_label(s)) for s in added))),
                max(wi, *(len(str(s.items)) for s in added)),
                min(32, max(wm, *(len(s.declared_model or s.label or "-") for s in added))),
            )
        if self.session_order != "path":
            self.rebuild()

    def remove_sessions(self, batch: Iterable[SessionSummary]) -> None:
        """Forget sessions whose files are gone (live follow), and rebuild the nodes."""
        gone = {s.key for s in batch if s.key in self._by_key}
        if not gone:
            return
        self._sessions = [s for s in self._sessions if s.key not in gone]
        for key in gone:
            del self._by_key[key]
        self._ids = {k: v for k, v in self._ids.items() if v.key not in gone}
        self._kids = {p: [c for c in cs if c.key not in gone] for p, cs in self._kids.items() if p not in gone}
        self._parent_of = {c: p for c, p in self._parent_of.items() if c not in gone and p not in gone}
        self._top = {
            g: kept for g, tops in self._top.items() if (kept := [s for s in tops if s.key not in gone])
        }
        self.rebuild()

    def _link_child(self, parent: SessionSummary, child: SessionSummary) -> None:
        self._kids.setdefault(parent.key, []).append(child)
        self._parent_of[child.key] = parent.key
        pnode = self._session_nodes.get(parent.key)
        if pnode is None:
            return
        if parent.key in self._loaded:
            if self._visible(child):
                self._add_session_node(pnode, child)
        elif not pnode.allow_expand:
            pnode.allow_expand = True
            self._invalidate()

    def finalize(
        self, top: list[SessionSummary], children: dict[str, list[SessionSummary]]
    ) -> None:
        """Adopt the index's final parent links; rebuild only if they differ from ours."""
        self._final = True
        parent_of = {c.key: p for p, cs in children.items() for c in cs}
        if parent_of != self._parent_of or {s.key for s in top} != {
            s.key for lst in self._top.values() for s in lst
        }:
            self._kids = {k: list(v) for k, v in children.items()}
            self._parent_of = parent_of
            self._top = {}
            for s in top:
                self._top.setdefault((s.root, s.format), []).append(s)
            self.rebuild()
        else:
            self._order_cache = None
            self._count_cache = None
            self._prefix_cache.clear()
            self._flagged_cache.clear()
            if self.flagged_only or self.session_order != "path":
                self.rebuild()  # flags (fleet outliers) are final only now
            else:
                self.refresh_labels()

    def refresh_labels(self) -> None:
        """Repaint every label (verdicts and flags may have changed)."""
        self._invalidate()

    # ------------------------------------------------------------------ nodes

    def _group_title(self, root: str, fmt: str) -> str:
        if len(self.root_labels) <= 1 and (not self.root_labels or root in self.root_labels):
            return fmt
        label = self.root_labels.get(root) or root
        return f"{label} › {fmt}"

    def _ensure_group(self, root: str, fmt: str) -> TreeNode[NodeData]:
        key = (root, fmt)
        node = self._group_nodes.get(key)
        if node is not None:
            return node
        group = Group(root, fmt, self._group_title(root, fmt))
        order = self._group_order()
        before: TreeNode[NodeData] | None = None
        idx = order.index(key) if key in order else len(order)
        for later in order[idx + 1 :]:
            if later in self._group_nodes:
                before = self._group_nodes[later]
                break
        if before is not None:
            node = self.root.add(Text(group.title), group, before=before, expand=True)
        else:
            node = self.root.add(Text(group.title), group, expand=True)
        self._group_nodes[key] = node
        return node

    def _add_top_node(self, s: SessionSummary) -> None:
        if not self._visible(s):
            return
        gnode = self._ensure_group(s.root, s.format)
        self._add_session_node(gnode, s)

    def _add_session_node(
        self, parent: TreeNode[NodeData], s: SessionSummary
    ) -> TreeNode[NodeData]:
        has_children = any(self._visible(c) for c in self._kids.get(s.key, []))
        # A Text, never a str: Tree would parse a str label as markup (a session id is data).
        node = parent.add(Text(s.session_id or s.path), s, allow_expand=has_children)
        self._session_nodes[s.key] = node
        return node

    def _load_children(self, node: TreeNode[NodeData]) -> None:
        data = node.data
        if not isinstance(data, SessionSummary) or data.key in self._loaded:
            return
        self._loaded.add(data.key)
        for c in sort_sessions(self._kids.get(data.key, []), self.session_order):
            if self._visible(c):
                self._add_session_node(node, c)

    def _on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeData]) -> None:
        self._load_children(event.node)

    def rebuild(self) -> None:
        """Rebuild every node (after a filter change or new parent links), keeping the cursor."""
        current = self.current_session()
        expanded = {k for k, n in self._session_nodes.items() if n.is_expanded}
        collapsed_groups = {k for k, n in self._group_nodes.items() if not n.is_expanded}
        self.clear()
        self._group_nodes = {}
        self._session_nodes = {}
        self._loaded = set()
        self._order_cache = None
        self._count_cache = None
        self._prefix_cache.clear()
        self._flagged_cache.clear()
        summarised: set[str] = set()
        for gkey in self._group_order():
            tops = [s for s in sort_sessions(self._top.get(gkey, []), self.session_order) if self._visible(s)]
            if not tops:
                continue
            if gkey[0] in self.fleet_rows and gkey[0] not in summarised:
                summarised.add(gkey[0])
                row = RootSummary(gkey[0], self.fleet_rows[gkey[0]])
                self.root.add_leaf(Text(row.text), row)
            gnode = self._ensure_group(*gkey)
            for s in tops:
                self._add_session_node(gnode, s)
            if gkey in collapsed_groups:
                gnode.collapse()
        for key in list(expanded):
            node = self._session_nodes.get(key)
            if node is not None:
                self._load_children(node)
                node.expand()
        if current is not None and self._visible(current):
            self.reveal(current)
        elif self.root.children:
            self.move_cursor(self.root.children[0])

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
        self.rebuild()

    def action_first(self) -> None:
        """g: the first line of the tree."""
        if self.last_line >= 0:
            self.cursor_line = 0
            self.scroll_home(animate=False)

    def action_last(self) -> None:
        """G: the last line of the tree."""
        if self.last_line >= 0:
            self.cursor_line = self.last_line
            self.scroll_end(animate=False)

    def current_session(self) -> SessionSummary | None:
        """The session under the cursor, if the cursor is on a session."""
        node = self.cursor_node
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

    def node_for(self, s: SessionSummary) -> TreeNode[NodeData] | None:
        """The node of ``s``, expanding (and loading) its ancestors as needed."""
        node: TreeNode[NodeData] | None
        if s.key in self._session_nodes:
            node = self._session_nodes[s.key]
        else:
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
        parent = node.parent
        while parent is not None and parent is not self.root:
            if isinstance(parent.data, SessionSummary):
                self._load_children(parent)
            if not parent.is_expanded:
                parent.expand()
            parent = parent.parent
        return node

    def reveal(self, s: SessionSummary) -> bool:
        """Move the cursor to ``s`` (expanding its ancestors); False if it is not shown."""
        node = self.node_for(s)
        if node is None:
            return False
        _ = self.last_line  # rebuild the line table so the node knows its line
        self.center_scroll = True
        try:
            self.move_cursor(node)
        finally:
            self.center_scroll = False
        return True

    # ------------------------------------------------------------------ actions

    def action_drill(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if isinstance(node.data, SessionSummary):
            if node.allow_expand and not node.is_expanded:
                node.expand()
            self.post_message(SessionDrill(node.data))
        else:
            node.toggle()

    def action_back(self) -> None:
        node = self.cursor_node
        if node is None:
            self.post_message(FocusBack("tree"))
            return
        if node.allow_expand and node.is_expanded and node.children:
            node.collapse()
            return
        parent = node.parent
        if parent is not None and parent is not self.root:
            self.move_cursor(parent)

    # ------------------------------------------------------------------ labels

    def render_label(self, node: TreeNode[NodeData], base_style: Style, style: Style) -> Text:
        data = node.data
        on_cursor = node is self.cursor_node
        room = max(8, self._label_room(node))
        if isinstance(data, Group):
            text = self._group_label(node, data)
        elif isinstance(data, SessionSummary):
            text = self._session_label(data, node, room)
        elif isinstance(data, RootSummary):
            text = Text(clean(data.text), style=self._part("session-tree--dim"), no_wrap=True)
        else:
            text = Text(clean(str(node.label)))
        if on_cursor:
            # Every cell of the cursor row takes the cursor's colours (made readable):
            # part colours (provider, dim) on the cursor background fell to about 1:1.
            text = Text(text.plain, style=self._cursor_style(style), no_wrap=True, end="")
        else:
            text.stylize_before(style)
        if text.cell_len > room:
            text.truncate(room, overflow="ellipsis")
        if node.allow_expand:
            icon = "▾ " if node.is_expanded else "▸ "
            return Text.assemble((icon, base_style), text)
        return Text.assemble(("  ", base_style), text) if isinstance(data, SessionSummary) else text

    def _label_room(self, node: TreeNode[NodeData]) -> int:
        """Cells left for a label after the guides and the expand icon."""
        width = self.scrollable_content_region.width or self.size.width or 80
        return width - _depth(node) * self.guide_depth - 2

    def _cursor_style(self, style: Style) -> Style:
        key = f"cursor-{self.has_focus}-{style.bgcolor}-{style.color}"
        cached = self._part_styles.get(key)
        if cached is not None:
            return cached
        base = self.rich_style
        bg_rich = style.bgcolor or base.bgcolor
        fg_rich = style.color or base.color
        bg = Color.from_rich_color(bg_rich) if bg_rich is not None else self.background_colors[1]
        fg = Color.from_rich_color(fg_rich) if fg_rich is not None else bg.get_contrast_text(1.0)
        fixed = readable(fg, bg)
        out = Style(color=fixed.rich_color, bgcolor=bg.rich_color, bold=True)
        self._part_styles[key] = out
        return out

    def _group_label(self, node: TreeNode[NodeData], group: Group) -> Text:
        text = Text(clean(group.title), style=self._part("session-tree--group"))
        gkey = (group.root, group.format)
        text.append(f"  ({self._group_count(gkey)})", style=self._part("session-tree--dim"))
        flagged = self._group_flagged(gkey)
        if flagged:
            text.append(f" {flagged}⚑", style=self._part("session-tree--flag"))
        return text

    def _group_count(self, gkey: tuple[str, str]) -> int:
        """Sessions shown under a group (tops and their descendants), cached until the next change."""
        if self._count_cache is None:
            self._count_cache = {}
        count = self._count_cache.get(gkey)
        if count is None:
            tops = [s for s in self._top.get(gkey, []) if self._visible(s)]
            count = len(tops) + sum(1 for s in tops for _ in self._descendants(s))
            self._count_cache[gkey] = count
        return count

    def _group_flagged(self, gkey: tuple[str, str]) -> int:
        key = f"group:{gkey[0]}\0{gkey[1]}"
        n = self._flagged_cache.get(key)
        if n is None:
            tops = [s for s in self._top.get(gkey, []) if self._visible(s)]
            n = sum(1 for s in tops if s.attribution.flags) + sum(self.flagged_inside(s) for s in tops)
            self._flagged_cache[key] = n
        return n

    def flagged_inside(self, s: SessionSummary) -> int:
        """How many descendants of ``s`` are flagged (shown on a collapsed parent)."""
        n = self._flagged_cache.get(s.key)
        if n is None:
            n = sum(1 for d in self._descendants(s) if d.attribution.flags)
            self._flagged_cache[s.key] = n
        return n

    def get_label_width(self, node: TreeNode[NodeData]) -> int:
        """Labels fit the widget's width (they are cut to it), so no row scrolls sideways."""
        return max(8, (self.scrollable_content_region.width or self.size.width or 40) - 8)

    def _descendants(self, s: SessionSummary) -> Iterator[SessionSummary]:
        for c in self._kids.get(s.key, []):
            if self._visible(c):
                yield c
                yield from self._descendants(c)

    def _part(self, name: str) -> Style:
        style = self._part_styles.get(name)
        if style is None:
            style = self._part_styles[name] = component_style(self, name)
        return style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._part_styles.clear()

    def _prefix_length(self, node: TreeNode[NodeData]) -> int:
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

    def _session_label(self, s: SessionSummary, node: TreeNode[NodeData] | None = None, room: int = 200) -> Text:
        """``⚑ 01a05efe-0 09-01 22:01 openai/azure   14 muse-special  Audit site/ for…``."""
        dim = self._part("session-tree--dim")
        glyph = flag_glyph(s)
        if glyph == OUTLIER_GLYPH:
            glyph_style = self._part("session-tree--outlier")
        elif glyph == FLAG_GLYPH:
            glyph_style = self._part("session-tree--flag")
        else:
            glyph_style = Style()
        ident = id_prefix(_ident(s), self._prefix_length(node) if node is not None else MIN_PREFIX)
        provider = provider_label(s)
        model_full = clean(s.declared_model or s.label or "-", 60)
        inside = self.flagged_inside(s) if node is not None and node.allow_expand and not node.is_expanded else 0
        wp, wi, wm = self._widths()
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
        text = Text(end="", no_wrap=True)
        text.append(glyph + " ", style=glyph_style)
        text.append(ident)
        text.append(" ")
        if show_time:
            text.append(when(s.started_at), style=dim)
            text.append(" ")
        pbg = self.background_colors[1]
        pstyle = provider_style(self.app.theme_variables, s.attribution.provider, pbg) + Style(bold=True)
        text.append(provider.ljust(wp), style=pstyle)
        text.append(" ")
        text.append(str(s.items).rjust(wi), style=dim)
        text.append(" ")
        if route:  # the route before the model: it is part of the verdict, the model is what was declared
            text.append(route + " ", style=pstyle)
        text.append(model)
        if s.malformed_lines:
            text.append(f" ✗{s.malformed_lines}", style=self._part("session-tree--flag"))
        if inside:
            text.append(f" +{inside}⚑", style=self._part("session-tree--flag"))
        spare = room - text.cell_len
        if s.title and spare >= 12:
            text.append("  ")
            text.append(clean(s.title, max(0, room - text.cell_len)), style=dim)
        return text

    def _widths(self) -> tuple[int, int, int]:
        """Column widths (provider, items, model) that fit every session in the tree."""
        if self._width_cache is None:
            sessions = self._sessions
            wp = max((len(provider_label(s)) for s in sessions), default=6)
            wi = max((len(str(s.items)) for s in sessions), default=1)
            wm = max((len(s.declared_model or s.label or "-") for s in sessions), default=1)
            self._width_cache = (min(wp, 16), wi, min(wm, 32))
        return self._width_cache


def _ident(s: SessionSummary) -> str:
    return s.session_id or os.path.basename(s.path)


def _depth(node: TreeNode[NodeData]) -> int:
    depth = 0
    parent = node.parent
    while parent is not None and parent.parent is not None:
        depth += 1
        parent = parent.parent
    return depth
