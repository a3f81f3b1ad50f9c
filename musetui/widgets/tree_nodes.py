"""The session tree's nodes: the structure on screen, the expansion state, and the rows laid out.

One node per group, fleet row and laid-out session (a session gets its node when its parent
is first expanded), kept in the order the forest gives (see
:class:`~musetui.core.session_forest.SessionForest`). After a structural change the visible
nodes are laid out again in one pass into :attr:`TreeNodes.rows`; the widget is told by the
``changed`` callback, to keep its cursor and scroll position.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping

from rich.text import Text

from musetui.core.model import SessionSummary
from musetui.core.session_forest import GroupKey, SessionForest
from musetui.widgets.tree_rows import Group, LabelCache, NodeData, RootSummary


class Node:
    """One row of the tree (a group, a session or a fleet summary) with its children and state."""

    __slots__ = (
        "_by_provider",
        "_by_size",
        "_by_time",
        "_children",
        "_expanded",
        "_line",
        "_owner",
        "_seq",
        "allow_expand",
        "data",
        "label_cache",
        "parent",
    )

    def __init__(
        self,
        owner: TreeNodes,
        parent: Node | None,
        data: NodeData | None,
        *,
        expanded: bool = False,
        allow_expand: bool = False,
        seq: int = 0,
    ) -> None:
        self._owner = owner
        self.parent = parent
        self.data = data
        self._children: list[Node] = []
        self._expanded = expanded
        self.allow_expand = allow_expand
        self._line = -1
        #: The session row's label runs, with the key they were built for (kept by :class:`~musetui.widgets.tree_rows.TreeRows`).
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
        return self._owner.line_of(self)

    def expand(self) -> Node:
        """Show the node's children (loading them on first use)."""
        if self.allow_expand and not self._expanded:
            self._owner.expand(self)
            self._owner.changed()
        return self

    def collapse(self) -> Node:
        """Hide the node's children."""
        if self._expanded and self.parent is not None:
            self._expanded = False
            self._owner.changed()
        return self

    def toggle(self) -> Node:
        """Expand a collapsed node, collapse an expanded one."""
        return self.collapse() if self._expanded else self.expand()


class TreeNodes:
    """The nodes of a forest's groups and sessions, and the rows they lay out to.

    Args:
        forest: the sessions, links, filters and order the nodes follow.
        changed: called after each change of the structure a node makes itself (an expand,
            a collapse), once :meth:`lay_out` is due.
    """

    def __init__(self, forest: SessionForest, changed: Callable[[], None]) -> None:
        self._forest = forest
        self._changed = changed
        self.root = Node(self, None, None, expanded=True, allow_expand=True)
        #: The visible nodes, top to bottom (see :meth:`lay_out`).
        self.rows: list[Node] = []
        #: Every session's node, kept across rebuilds: a filter toggled off again makes no node anew.
        self._pool: dict[str, Node] = {}
        self._group_nodes: dict[GroupKey, Node] = {}
        self._session_nodes: dict[str, Node] = {}
        self._loaded: set[str] = set()

    # ------------------------------------------------------------------ rows

    def lay_out(self) -> None:
        """Lay the visible nodes out again into :attr:`rows` (one pass over them)."""
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
        self.rows = rows

    def shows(self, node: Node) -> bool:
        """True when ``node`` is one of the rows laid out."""
        line = node._line
        return 0 <= line < len(self.rows) and self.rows[line] is node

    def line_of(self, node: Node) -> int:
        """The row of ``node``, or -1 when it is not laid out (an ancestor is collapsed, or it is gone)."""
        line = node._line
        rows = self.rows
        return line if 0 <= line < len(rows) and rows[line] is node else -1

    def changed(self) -> None:
        """Tell the widget the structure changed (it lays the rows out again)."""
        self._changed()

    @property
    def session_nodes(self) -> list[Node]:
        """The nodes of the sessions made since the last rebuild (shown or under a collapsed node)."""
        return list(self._session_nodes.values())

    def forget_labels(self) -> None:
        """Drop every node's kept label (each is built again on its next paint)."""
        for node in (*self._pool.values(), *self._group_nodes.values()):
            node.label_cache = None

    # ------------------------------------------------------------------ expanding

    def expand(self, node: Node) -> None:
        """Expand ``node`` (its children loaded on first use) without laying the rows out."""
        self._load_children(node)
        node._expanded = True

    def set_expanded(self, nodes: Iterable[Node], on: bool) -> None:
        """Expand (loading) or collapse each of ``nodes`` without laying the rows out."""
        for node in nodes:
            if on:
                self.expand(node)
            else:
                node._expanded = False

    def node_for(self, s: SessionSummary) -> Node | None:
        """The node of ``s``, expanding (and loading) its ancestors as needed (then :meth:`changed`)."""
        node = self._session_nodes.get(s.key)
        if node is None:
            chain = list(self._forest.ancestors(s))
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
                self.expand(parent)
                changed = True
            parent = parent.parent
        if changed:
            self._changed()
        return node

    # ------------------------------------------------------------------ building

    def clear(self) -> None:
        """Drop every node (the sessions stay): a rebuild follows."""
        self.root._children = []
        self._group_nodes = {}
        self._session_nodes = {}
        self._loaded = set()

    def add(self, added: list[SessionSummary]) -> None:
        """Nodes for sessions just added to the forest, where they are laid out (no lay-out).

        Nodes are made for what the batch touches only (its groups and loaded parents): the
        tops first, one run per group, then the subagents. Only the siblings the batch
        joined are sorted again (under a sort, or where a node came late), so adding a
        slice costs the slice, not the whole tree.
        """
        forest = self._forest
        shown = forest.shown_keys()
        parent_of = forest.parent_of
        place = forest.place
        tops: dict[GroupKey, list[tuple[int, SessionSummary]]] = {}
        subagents: list[SessionSummary] = []
        for s in added:
            if shown is not None and s.key not in shown:
                continue
            if parent_of(s) is None:
                tops.setdefault((s.root, s.format), []).append((place(s), s))
            else:
                subagents.append(s)
        joined: dict[int, Node] = {}
        late: dict[int, Node] = {}
        for (root, fmt), found in tops.items():
            gnode = self._ensure_group(root, fmt)
            self._add_session_nodes(gnode, found)
            joined[id(gnode)] = gnode
        for s in subagents:
            self._place(s, joined, late)
        if forest.order != "path":
            late.update(joined)
        for pnode in late.values():
            _sort_children(pnode, forest.order)

    def _place(
        self, s: SessionSummary, joined: dict[int, Node], late: dict[int, Node], *, shown_late: bool = False
    ) -> Node | None:
        """Give the shown session ``s`` a node under its group or its loaded parent; returns it (None: not laid out).

        A parent a filter hid until a child of this batch matched gets its node here too
        (``shown_late``: after its siblings, which are sorted again). Each parent whose
        children grew is kept in ``joined`` (or ``late``).
        """
        nodes = self._session_nodes
        forest = self._forest
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

    def forget(self, gone: Iterable[SessionSummary]) -> None:
        """Drop the kept nodes of sessions removed from the forest (a rebuild follows)."""
        for s in gone:
            self._pool.pop(s.key, None)

    def rebuild(self, fleet_rows: Mapping[str, str]) -> None:
        """Make every node again (kept ones reused), keeping the expanded sessions and collapsed groups.

        Args:
            fleet_rows: a summary row per root (shown before its first group), if any.
        """
        expanded = {k for k, n in self._session_nodes.items() if n._expanded}
        collapsed_groups = {k for k, n in self._group_nodes.items() if not n._expanded}
        self.clear()
        forest = self._forest
        summarised: set[str] = set()
        shown = forest.shown_keys()
        for gkey in forest.group_order():
            found = forest.tops(gkey)
            tops = (
                [(i, s) for i, s in enumerate(found) if s.key in shown] if shown is not None else list(enumerate(found))
            )
            if not tops:
                continue
            if gkey[0] in fleet_rows and gkey[0] not in summarised:
                summarised.add(gkey[0])
                row = RootSummary(gkey[0], fleet_rows[gkey[0]])
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
                    self.expand(node)
            if len(left) == len(pending):
                break
            pending = left

    def reorder(self) -> None:
        """Put the nodes there are in the forest's order: siblings are re-sorted in place, none is made again."""
        order = self._forest.order
        parents = list(self._group_nodes.values())
        parents += [n for k, n in self._session_nodes.items() if k in self._loaded and n._children]
        for parent in parents:
            _sort_children(parent, order)

    def _group_title(self, root: str, fmt: str) -> str:
        labels = self._forest.root_labels
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
        order = self._forest.group_order()
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
        kids = self._forest.children
        pool = self._pool
        nodes = self._session_nodes
        append = parent._children.append
        shown = self._forest.shown_keys()
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
        forest = self._forest
        self._add_session_nodes(node, [(i, c) for i, c in enumerate(forest.children_of(data)) if forest.is_shown(c)])
        _sort_nodes(node._children, forest.order)


_BY_SEQ = operator.attrgetter("_seq")
_BY_TIME = operator.attrgetter("_by_time")
_BY_PROVIDER = operator.attrgetter("_by_provider")
_BY_SIZE = operator.attrgetter("_by_size")


def _sort_children(parent: Node, order: str) -> None:
    """Put ``parent``'s child nodes in ``order`` (as :func:`~musetui.core.session_forest.sort_sessions` orders them)."""
    if len(parent._children) > 1:
        _sort_nodes(parent._children, order)


def _sort_nodes(nodes: list[Node], order: str) -> None:
    """Sort sibling session nodes in place as :func:`~musetui.core.session_forest.sort_sessions` sorts their sessions.

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
