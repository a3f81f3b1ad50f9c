"""The session tree's column headers: one row over the tree, each name above its column."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from musetui.widgets.session_tree import SessionTree


class TreeHeader(Widget):
    """The session tree's column headers: one row, each name above its column."""

    DEFAULT_CSS = """
    TreeHeader {
        height: 1;
        background: $surface;
        color: $text-muted;
        text-style: bold;
    }
    """

    def __init__(self, tree: SessionTree, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._tree = tree
        tree.header = self

    def render(self) -> Text:
        text = Text(no_wrap=True, end="")
        for piece, _style in self._tree.header_pieces():
            text.append(piece)
        return text
