"""The help screen: every key, and the search query language."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from musetui.widgets.help import help_renderable


class HelpScreen(ModalScreen[None]):
    """Lists the bindings of the main screen and its widgets, then the query help."""

    content: RenderableType = ""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,question_mark,q",
            "dismiss_help",
            "Close",
            id="help.close",
            tooltip="Close the help",
        ),
        Binding("down,j", "scroll('down')", "Down", show=False, id="help.down", tooltip="Scroll down"),
        Binding("up,k", "scroll('up')", "Up", show=False, id="help.up", tooltip="Scroll up"),
    ]

    def __init__(self, everywhere: Sequence[BindingType]) -> None:
        super().__init__()
        #: The keys of the screen that opened the help, and the app's.
        self.everywhere = list(everywhere)

    def compose(self) -> ComposeResult:
        from musetui.screens.diagnostics import DiagnosticsScreen
        from musetui.screens.search import SearchScreen
        from musetui.screens.timeline import TimelineScreen
        from musetui.widgets.item_list import ItemList
        from musetui.widgets.panes import DetailPane
        from musetui.widgets.search import SearchResultsList
        from musetui.widgets.session_tree import SessionTree
        from musetui.widgets.tree_rows import LEGEND

        sections = [
            ("Everywhere", self.everywhere),
            ("Session tree", SessionTree.BINDINGS),
            ("Item list", ItemList.BINDINGS),
            ("Side panes", DetailPane.BINDINGS),
            ("Search view (/)", [*SearchScreen.BINDINGS, *SearchResultsList.BINDINGS]),
            ("Diagnostics view (D)", DiagnosticsScreen.BINDINGS),
            ("Timeline view (T)", TimelineScreen.BINDINGS),
        ]
        self.content = help_renderable(sections, legend=LEGEND)
        with Vertical(id="help-dialog") as v:
            v.border_title = "Help · esc to close"
            with VerticalScroll(id="help-scroll"):
                yield Static(self.content, id="help-body")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)

    def action_scroll(self, direction: str) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        if direction == "down":
            scroll.scroll_down()
        else:
            scroll.scroll_up()
