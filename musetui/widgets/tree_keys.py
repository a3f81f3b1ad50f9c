"""The session tree's keys: the bindings (data), and where each sibling move takes the cursor.

Kept apart from :class:`~musetui.widgets.session_tree.SessionTree`, which applies them; the
help screen lists them from ``SessionTree.BINDINGS``. The moves are pure functions of the
tree's nodes: each returns the node the cursor goes to, or None to stay.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

from musetui.widgets.tree_nodes import Node

TREE_BINDINGS: list[BindingType] = [
    Binding(
        "down,j",
        "cursor_down",
        "Down",
        show=False,
        id="tree.down",
        tooltip="Next line of the tree",
    ),
    Binding("up,k", "cursor_up", "Up", show=False, id="tree.up", tooltip="Previous line of the tree"),
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


def _sibling_after(node: Node) -> Node | None:
    parent = node.parent
    if parent is None:
        return None
    siblings = parent.children
    i = siblings.index(node)
    return siblings[i + 1] if i + 1 < len(siblings) else None


def parent_of(node: Node | None, root: Node) -> Node | None:
    """shift+left: up to the parent (never to the hidden root)."""
    if node is not None and node.parent is not None and node.parent is not root:
        return node.parent
    return None


def parent_next_sibling(node: Node | None, root: Node) -> Node | None:
    """shift+right: the parent's next sibling."""
    parent = parent_of(node, root)
    return _sibling_after(parent) if parent is not None else None


def previous_sibling(node: Node | None, root: Node) -> Node | None:
    """shift+up: the previous sibling, or the parent for the first one."""
    if node is None or node.parent is None:
        return None
    siblings = node.parent.children
    i = siblings.index(node)
    if i > 0:
        return siblings[i - 1]
    return parent_of(node, root)


def next_sibling(node: Node | None, root: Node) -> Node | None:
    """shift+down: the next sibling, or the parent's next one for the last."""
    if node is None:
        return None
    target = _sibling_after(node)
    if target is None:
        target = parent_next_sibling(node, root)
    return target
