"""What the main screen's helpers and the command palette may use of the main screen (narrow protocols).

The helpers (:mod:`~musetui.screens.tree_feed`, :mod:`~musetui.screens.evidence`,
:mod:`~musetui.screens.diff`, :mod:`~musetui.screens.navigation`) and the palette
(:mod:`musetui.commands`) receive the screen typed as one of these, never as
``MainScreen``: each names the part of the screen it reads, and none of them imports the
screen (which imports them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload, runtime_checkable

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.timer import Timer
    from textual.widget import Widget
    from textual.worker import Worker

    from musetui.core.model import Item, SessionSummary
    from musetui.core.session import OpenedSession
    from musetui.screens.indexing import IndexDriver
    from musetui.screens.search import SearchState
    from musetui.screens.summary import Tally
    from musetui.widgets.header import StatusLine
    from musetui.widgets.item_list import ItemList
    from musetui.widgets.session_tree import SessionTree

W = TypeVar("W", bound="Widget")


class ScreenBase(Protocol):
    """The Textual side of a screen that the helpers use (notify, workers, timers, queries)."""

    @property
    def app(self) -> App[Any]: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def run_worker(
        self,
        work: Callable[[], None],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[None]: ...

    def call_later(self, callback: Callable[[], object]) -> bool: ...

    def set_timer(self, delay: float, callback: Callable[[], object] | None = None) -> Timer: ...

    @overload
    def query_one(self, selector: str) -> Widget: ...

    @overload
    def query_one(self, selector: type[W]) -> W: ...


class SessionsListener(Protocol):
    """Told when sessions came, changed or went (an open search view re-runs its query)."""

    def sessions_changed(self) -> None: ...


class Counts(Protocol):
    """Sessions per provider, as the header counts them."""

    def provider_counts(self) -> dict[str, int]: ...

    def tallies(self) -> dict[str, Tally]: ...


class FeedHost(ScreenBase, Protocol):
    """What :class:`~musetui.screens.tree_feed.TreeFeed` uses: the tree, the roots, the choice made."""

    roots: list[str]

    @property
    def current(self) -> SessionSummary | None: ...

    @property
    def session_tree(self) -> SessionTree: ...

    @property
    def navigator(self) -> SessionsListener: ...


class DiffHost(ScreenBase, Protocol):
    """What :class:`~musetui.screens.diff.DiffMarks` uses: the current session and how to name its file."""

    @property
    def current(self) -> SessionSummary | None: ...

    def display_path(self, s: SessionSummary) -> str: ...


class ExportHost(DiffHost, Protocol):
    """What :class:`~musetui.screens.evidence.EvidenceExport` uses: the selection, the index, the roots."""

    roots: list[str]
    indexer: IndexDriver

    @property
    def opened(self) -> OpenedSession | None: ...

    @property
    def items(self) -> ItemList: ...

    def selected_item(self) -> Item | None: ...

    def refresh(self) -> object: ...


class NavigatorHost(FeedHost, Protocol):
    """What :class:`~musetui.screens.navigation.Navigator` uses: the selection, the parts, the search."""

    pending_line: int | None
    pending_focus_items: bool
    finished: bool
    diagnostics: list[Any]
    search_state: SearchState

    @property
    def opened(self) -> OpenedSession | None: ...

    @property
    def focused(self) -> Widget | None: ...

    @property
    def items(self) -> ItemList: ...

    @property
    def status(self) -> StatusLine: ...

    @property
    def feed(self) -> Counts: ...

    def select_session(self, summary: SessionSummary, *, immediate: bool = False) -> None: ...

    def part_of(self, widget: Any) -> str | None: ...

    def show_part(self, part: str) -> None: ...

    def apply_layout(self) -> None: ...

    def action_pane(self, pane_id: str) -> None: ...


class ExportCommands(Protocol):
    """The palette's export commands."""

    def copy_path(self) -> None: ...

    def open_in_pager(self) -> None: ...

    def write_report(self) -> None: ...


class NavigationCommands(Protocol):
    """The palette's orders, filters and jumps."""

    def set_sort(self, order: str) -> None: ...

    def apply_filter(self, provider: str | None) -> None: ...

    def jump_to_session(self, key: str) -> bool: ...


class CommandHost(Protocol):
    """What the command palette drives on the main screen."""

    @property
    def evidence(self) -> ExportCommands: ...

    @property
    def navigator(self) -> NavigationCommands: ...

    @property
    def feed(self) -> Counts: ...

    @property
    def session_tree(self) -> SessionTree: ...

    def action_copy_evidence(self) -> None: ...

    def action_copy_raw(self) -> None: ...

    def action_next_flagged(self) -> None: ...

    def action_mark_for_diff(self) -> None: ...

    def action_diff_marked(self) -> None: ...

    async def action_search(self) -> None: ...

    def action_timeline(self) -> None: ...

    def action_diagnostics(self) -> None: ...

    def action_zoom(self) -> None: ...

    def action_tree_width(self, step: int) -> None: ...

    def action_toggle_flagged(self) -> None: ...


@runtime_checkable
class PaletteHost(Protocol):
    """A screen whose commands the palette offers (the main screen); methods only, so ``isinstance`` can check it."""

    def palette_host(self) -> CommandHost: ...
