"""The main screen: session tree, item stream and evidence panes, driven from the keyboard.

Workers (indexing, opening a session, decoding it) only post messages; the handlers here
own the screen's state: the selection (the current session, its items and decoded values)
and what the panes show. The rest sits beside it:

- :mod:`~musetui.screens.main_parts`: the parts (tree, items, panes) composed and fitted to
  the terminal, zoom and focus moves (the base class);
- :mod:`~musetui.screens.indexing`: the scan and the live follow (run in worker threads);
- :mod:`~musetui.screens.tree_feed`: the tree filling from the index, the header's counts;
- :mod:`~musetui.screens.opening`: reading and decoding a session (in the ``open`` worker);
- :mod:`~musetui.screens.navigation`: o/O, search and n/N, filters, orders, jumps;
- :mod:`~musetui.screens.evidence`: y/Y, the file's path, the pager, the HTML report;
- :mod:`~musetui.screens.layout` and :mod:`~musetui.screens.main_bindings`: the layout's
  arithmetic and the keys (data, no state).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.binding import BindingType
from textual.markup import escape
from textual.timer import Timer
from textual.widgets import TabbedContent, Tabs
from textual.worker import Worker, get_current_worker

from musetui.core.fingerprints.types import Decoded
from musetui.core.model import Item, SessionSummary
from musetui.core.pager import pager_command, safe_less_options
from musetui.core.segment_read import segments_of
from musetui.messages import (
    DiffReady,
    FocusBack,
    IndexFailed,
    IndexFinished,
    IndexProgress,
    IndexRefreshed,
    ItemDrill,
    ItemHighlighted,
    ReportReady,
    SessionDecoded,
    SessionDrill,
    SessionOpened,
    SessionOpenFailed,
    SessionsFound,
    SessionsReplaced,
)
from musetui.screens.diff import DiffMarks
from musetui.screens.evidence import EvidenceExport
from musetui.screens.indexing import IndexDriver, finished_text, progress_texts, refreshed_text
from musetui.screens.main_bindings import MAIN_BINDINGS
from musetui.screens.main_parts import PANE_IDS, PartsScreen
from musetui.screens.navigation import Navigator
from musetui.screens.opening import decode_session, session_reader, warm_imports
from musetui.screens.search import SearchState
from musetui.screens.tree_feed import TreeFeed, freeze_long_lived
from musetui.widgets.header import MuseHeader
from musetui.widgets.item_list import ItemList, index_for_line
from musetui.widgets.panes import PaneContext
from musetui.widgets.repaint import set_border_title
from musetui.widgets.session_tree import SessionTree
from musetui.widgets.text import clean, short_id, tail_path
from musetui.widgets.tree_nodes import Node
from musetui.widgets.tree_rows import flag_glyph, provider_label, route_label

if TYPE_CHECKING:
    from musetui.core.early import HeadStart
    from musetui.core.session import OpenedSession
    from musetui.screens.host import CommandHost

__all__ = ["PANE_IDS", "MainScreen", "pager_command", "safe_less_options"]

#: Moving the tree cursor opens the session after this pause.
OPEN_DEBOUNCE_S = 0.06
#: Moving the item cursor re-renders the panes after this pause (key repeat stays fast).
PANE_DEBOUNCE_S = 0.04


class MainScreen(PartsScreen):
    """Tree · items · panes, with the header, a status line and the footer."""

    BINDINGS: ClassVar[list[BindingType]] = MAIN_BINDINGS

    def __init__(
        self,
        roots: Sequence[str],
        *,
        workers: int | None = None,
        use_cache: bool = True,
        head: HeadStart | None = None,
    ) -> None:
        super().__init__(roots)
        self.use_cache = use_cache
        #: The scan and the live follow: run in worker threads, they post what they find here.
        self.indexer = IndexDriver(self.roots, workers=workers, use_cache=use_cache, head=head)
        self.live_updates = 0
        self.indexing = False
        self.index_done = 0
        self.index_total = 0
        self.index_elapsed = 0.0
        self.finished = False
        self.current: SessionSummary | None = None
        self.opened: OpenedSession | None = None
        self.session_decoded: list[tuple[int, Decoded]] | None = None
        self.session_decoded_capped = False
        self.session_reasoning: list[tuple[int, int, str, str]] | None = None
        self.pending_line: int | None = None
        self.pending_focus_items = False
        self.search_state = SearchState()
        #: The tree filling from the index, and the header's counts.
        self.feed = TreeFeed(self)
        #: y, Y, the file's path, the pager and the HTML report.
        self.evidence = EvidenceExport(self)
        #: m marks a session, M compares it with the one under the cursor.
        self.diffs = DiffMarks(self)
        #: o/O, /, n/N, p, f, s, D and the palette's jumps.
        self.navigator = Navigator(self)
        self._open_timer: Timer | None = None
        self._pane_timer: Timer | None = None
        self._pane_generation = 0
        self._opening_key: str | None = None
        self._index_worker: Worker[None] | None = None
        self._started = time.monotonic()
        self.first_batch_at: float | None = None
        self.last_open_seconds: float | None = None
        self.progress_fraction = 0.0
        self.selection_from = "tree"
        self.diagnostics: list[Any] = []

    def palette_host(self) -> CommandHost:
        """The commands the palette offers are this screen's."""
        return self

    # ------------------------------------------------------------------ layout

    def on_mount(self) -> None:
        self.query_one("#left").border_title = Text("Sessions")
        self.query_one("#middle").border_title = Text("Items")
        for tabs in self.query(Tabs):
            tabs.can_focus = False
        self.session_tree.focus()
        self.apply_layout()
        self.status.index_text = "Indexing… · Esc to stop"
        early = self.indexer.first_frame_sessions()
        if early:  # read ahead while the app started: the first frame shows these rows
            self.first_batch_at = time.monotonic() - self._started
            self.feed.add(early, everything=True)
        self._refresh_panes()
        freeze_long_lived()
        self._index_worker = self.run_index()

    # ------------------------------------------------------------------ indexing

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def run_index(self) -> None:
        """Scan the roots in a thread (:meth:`IndexDriver.scan` posts the sessions and the progress)."""
        worker = get_current_worker()
        self.indexer.scan(self.post_message, lambda: worker.is_cancelled)

    @on(SessionsFound)
    def _sessions_found(self, message: SessionsFound) -> None:
        if self.first_batch_at is None:
            self.first_batch_at = time.monotonic() - self._started
        self.feed.add(message.sessions)

    @on(SessionsReplaced)
    def _sessions_replaced(self, message: SessionsReplaced) -> None:
        self.feed.replace(message.removed, message.added)

    @on(IndexProgress)
    def _progress(self, message: IndexProgress) -> None:
        self.index_done, self.index_total = message.done, message.total
        self.indexing = True
        sessions = len(self.session_tree.sessions)  # the header's count, so the two agree
        status, header, self.progress_fraction = progress_texts(message, sessions, self.progress_fraction)
        self.status.index_text = status
        self.query_one(MuseHeader).progress = header

    @on(IndexFinished)
    def _finished(self, message: IndexFinished) -> None:
        self.feed.add_pending(everything=True)
        self.indexing = False
        self.finished = True
        self.index_elapsed = message.elapsed
        self.diagnostics = list(message.diagnostic_list)
        tree = self.session_tree
        self.feed.finish(message.top, message.children)
        text = finished_text(message, tree.sessions, self.index_done, self.index_total, self.roots)
        if not tree.sessions and not message.cancelled:
            self.items.clear(text + ".")
        index = self.indexer.index
        if not message.cancelled and index is not None and self.indexer.live_interval > 0:
            text += " · live"
            self.follow_index(index)
        self.status.index_text = text
        self.navigator.indexing_finished()
        self.query_one(MuseHeader).progress = ""
        self.feed.update_header(recount=True)
        self._pane_generation += 1  # (fleet flags and notes were set on the summaries in place)
        self._refresh_panes()
        self.navigator.sessions_changed()
        freeze_long_lived()
        self._warm_imports()
        # o's order, made once the finished tree has painted rather than on the first o.
        self.call_after_refresh(self.session_tree.flagged_sessions)

    @work(thread=True, exclusive=True, group="warm", exit_on_error=False, description="warm imports")
    def _warm_imports(self) -> None:
        """Import what opening a session needs while the app is idle (:func:`warm_imports`)."""
        warm_imports()

    # (An explicit description: Textual would otherwise repr() the arguments, the whole
    # index here, on the UI thread; for 19,000 sessions that froze the app for 1.8 s.)
    @work(thread=True, exclusive=True, group="follow", exit_on_error=False, description="live follow")
    def follow_index(self, index: Any) -> None:
        """Live follow in a thread (:meth:`IndexDriver.follow` polls the roots and posts what changed)."""
        worker = get_current_worker()
        self.indexer.follow(index, self.post_message, lambda: worker.is_cancelled)

    @on(IndexRefreshed)
    def _refreshed(self, message: IndexRefreshed) -> None:
        self.feed.refresh(message)
        if message.diagnostic_list or self.diagnostics:
            self.diagnostics = list(message.diagnostic_list)
            self.navigator.diagnostics_changed()
        self.live_updates += 1
        self.status.index_text = refreshed_text(message, self.session_tree.sessions, time.strftime("%H:%M:%S"))
        current = self.current
        if current is not None and any(s.key == current.key for s in message.changed):
            item = self.selected_item()
            if item is not None:
                self.pending_line = item.line
            self.opened = None
            self._set_items_title(current)
            self._start_open(current)
        self._pane_generation += 1
        self._refresh_panes()
        self.navigator.sessions_changed()

    @on(IndexFailed)
    def _index_failed(self, message: IndexFailed) -> None:
        self.indexing = False
        self.query_one(MuseHeader).progress = ""
        self.status.index_text = f"Indexing failed: {clean(message.error, 200)}"

    # ------------------------------------------------------------------ opening sessions

    @on(SessionTree.NodeHighlighted)
    def _node_highlighted(self, event: SessionTree.NodeHighlighted) -> None:
        node: Node = event.node
        if node is not self.session_tree.cursor_node:
            return  # stale: the tree re-posts highlights when lines move under the cursor
        data = node.data
        if isinstance(data, SessionSummary):
            self.select_session(data)
        else:
            self.current = None
            self._opening_key = None
            self._cancel_open_timer()
            self.opened = None
            self.session_decoded = None
            self.session_reasoning = None
            self.items.clear("Select a session in the tree (enter) to list its items.")
            set_border_title(self.query_one("#middle"), Text("Items"))
            self.status.where_text = ""
            self._refresh_panes()

    def select_session(self, summary: SessionSummary, *, immediate: bool = False) -> None:
        """Make ``summary`` the current session; its items open in a worker (debounced)."""
        if (
            self.current is not None
            and self.current.key == summary.key
            and self.opened is not None
            and self.opened.summary.key == summary.key
        ):
            self._apply_pending()
            return
        if self._opening_key == summary.key and self.current is not None and self.current.key == summary.key:
            return
        if self.current is None or self.current.key != summary.key:
            self.current = summary
            self.opened = None
            self.session_decoded = None
            self.session_reasoning = None
            self.items.clear("opening…", keep_height=True)
            self._set_items_title(summary)
            self.status.where_text = tail_path(self.display_path(summary), 70)
            self._refresh_panes()
        self._cancel_open_timer()
        if immediate:
            self._start_open(summary)
        else:
            self._open_timer = self.set_timer(OPEN_DEBOUNCE_S, lambda: self._start_open(summary))

    def _start_open(self, summary: SessionSummary) -> None:
        """Open ``summary`` once the frame showing the selection is painted.

        The worker reads and parses in a thread that shares the GIL with this one: started
        at once, it slowed the very frame that shows the key's effect (``o`` painted in 60-140
        ms on the bench tree, its own work about 40 ms). One frame later, it costs that frame nothing.
        """
        self._opening_key = summary.key
        self.call_after_refresh(self._open_if_still_wanted, summary)

    def _open_if_still_wanted(self, summary: SessionSummary) -> None:
        if self._opening_key == summary.key and self.current is not None and self.current.key == summary.key:
            self.open_session(summary)

    def _cancel_open_timer(self) -> None:
        if self._open_timer is not None:
            self._open_timer.stop()
            self._open_timer = None

    def _set_items_title(self, s: SessionSummary) -> None:
        title = Text("Items: ")
        title.append(short_id(s.session_id or os.path.basename(s.path)))
        route = f" {route_label(s)}" if s.attribution.via else ""
        title.append(f" · {provider_label(s)}{clean(route, 40)} · {s.items:,} item{'s' if s.items != 1 else ''}")
        if s.attribution.flags:
            title.append(f" · {flag_glyph(s)} " + ", ".join(s.attribution.flags))  # ⚑ outlier, ! another flag
        set_border_title(self.query_one("#middle"), title)

    @work(thread=True, exclusive=True, group="open", exit_on_error=False, description="open a session")
    def open_session(self, summary: SessionSummary) -> None:
        """Read a session's items in a thread (lazily when it is huge), then decode it for the panes."""
        read = session_reader()
        worker = get_current_worker()
        started = time.monotonic()
        try:
            opened = read(summary)
        except Exception as exc:
            self.post_message(SessionOpenFailed(summary.key, f"{type(exc).__name__}: {exc}"))
            return
        if worker.is_cancelled:
            return
        self.post_message(SessionOpened(summary.key, opened, time.monotonic() - started))
        decoding = decode_session(opened, lambda: worker.is_cancelled)
        if decoding is not None and not worker.is_cancelled:
            self.post_message(SessionDecoded(summary.key, *decoding))

    @on(SessionOpened)
    def _opened(self, message: SessionOpened) -> None:
        if self._opening_key == message.key:
            self._opening_key = None
        if self.current is None or self.current.key != message.key:
            return
        self.opened = message.opened
        self.last_open_seconds = message.elapsed
        cursor = 0
        if self.pending_line is not None:
            idx = index_for_line(message.opened.items, self.pending_line)
            cursor = idx if idx is not None else 0
        self.items.set_segments(segments_of(message.opened.summary))
        self.refresh_bindings()  # (w is in the footer while the open session switches provider)
        self.items.set_items(message.opened.items, cursor)
        self.items.set_hit_terms(self.navigator.hit_terms_for(message.opened.summary))
        self._apply_pending()
        self._refresh_panes()

    def _apply_pending(self) -> None:
        if self.pending_line is not None:
            self.items.move_to_line(self.pending_line)
            self.pending_line = None
        if self.pending_focus_items:
            self.pending_focus_items = False
            self.items.focus()
            self._refresh_panes()

    @on(SessionOpenFailed)
    def _open_failed(self, message: SessionOpenFailed) -> None:
        if self._opening_key == message.key:
            self._opening_key = None
        if self.current is None or self.current.key != message.key:
            return
        self.items.clear(f"Could not open this session: {clean(message.error, 200)}")
        self.notify(escape(f"Could not open the session: {clean(message.error, 200)}"), severity="error")

    @on(SessionDecoded)
    def _decoded(self, message: SessionDecoded) -> None:
        if self.current is None or self.current.key != message.key:
            return
        self.session_decoded = message.decoded
        self.session_decoded_capped = message.capped
        self.session_reasoning = message.reasoning
        self._refresh_panes()

    # ------------------------------------------------------------------ items and panes

    def item_mode(self) -> bool:
        """True when the focus is in the item list or the panes: an item is selected."""
        focused = self.focused
        if focused is None or self.opened is None:
            return False
        if isinstance(focused, ItemList):
            return True
        in_panes = any(isinstance(n, TabbedContent) for n in focused.ancestors_with_self)
        return in_panes and self.selection_from == "items"

    def selected_item(self) -> Item | None:
        """The item the panes and ``y`` refer to, or None when the session is selected."""
        if not self.item_mode():
            return None
        return self.items.current

    @on(ItemHighlighted)
    def _item_highlighted(self, message: ItemHighlighted) -> None:
        item = self.items.current
        if item is not None and self.current is not None:
            self.status.where_text = f"{tail_path(self.display_path(self.current), 70)}:{item.line}"
        if self._pane_timer is not None:
            self._pane_timer.stop()
        self._pane_timer = self.set_timer(PANE_DEBOUNCE_S, self._refresh_panes)

    @on(ItemDrill)
    def _item_drill(self, message: ItemDrill) -> None:
        self.pane(self.tabs.active or "raw").focus()

    @on(SessionDrill)
    def _session_drill(self, message: SessionDrill) -> None:
        if self.opened is not None and self.opened.summary.key == message.summary.key:
            self.items.focus()
            return
        self.pending_focus_items = True
        self.select_session(message.summary, immediate=True)

    @on(FocusBack)
    def _focus_back(self, message: FocusBack) -> None:
        if message.origin == "pane":
            self.items.focus()
        elif message.origin == "items":
            self.session_tree.focus()

    def on_descendant_focus(self, event: Any) -> None:
        focused = self.focused
        if isinstance(focused, SessionTree):
            self.selection_from = "tree"
        elif isinstance(focused, ItemList):
            self.selection_from = "items"
        part = self.part_of(focused)
        if part is not None:
            self.show_part(part)
        self._refresh_panes()

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._refresh_panes()

    def pane_context(self) -> PaneContext:
        """The context every pane renders: the session, and the item if one is selected."""
        s = self.current
        item = self.selected_item()
        decoded: Sequence[Decoded] = ()
        if item is not None and self.opened is not None:
            try:
                decoded = self.opened.decoded(item)
            except Exception:
                decoded = ()
        return PaneContext(
            summary=s,
            display_path=self.display_path(s) if s is not None else "",
            opened=self.opened,
            item=item,
            decoded=decoded,
            session_decoded=self.session_decoded,
            session_decoded_capped=self.session_decoded_capped,
            session_reasoning=self.session_reasoning,
            hit_terms=self.items.hit_terms.get(item.line, ()) if item is not None else (),
            generation=self._pane_generation,
        )

    def _refresh_panes(self) -> None:
        if self._pane_timer is not None:
            self._pane_timer.stop()
            self._pane_timer = None
        if not self.is_mounted:
            return
        ctx = self.pane_context()
        active = self.tabs.active or "raw"
        for pane_id in PANE_IDS:
            self.pane(pane_id).set_context(ctx, pane_id == active)

    # ------------------------------------------------------------------ actions

    def action_next_flagged(self) -> None:
        """o: the next flagged session (outliers first)."""
        self.navigator.go_flagged(+1)

    def action_prev_flagged(self) -> None:
        """O: the previous flagged session."""
        self.navigator.go_flagged(-1)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer w (next provider switch) only while the open session has one."""
        return bool(self.items.segments) if action == "next_switch" else True

    def action_next_switch(self) -> None:
        """w: the next provider switch inside the open session (its first item)."""
        if self.items.next_switch(+1) is None:
            self.notify("No provider switch in this session", timeout=3)
        else:
            self.items.focus()

    def action_copy_evidence(self) -> None:
        """y: the item's report when an item is selected, else the session's (``musetui show``)."""
        self.evidence.copy_evidence()

    @on(ReportReady)
    def _report_ready(self, message: ReportReady) -> None:
        self.evidence.report_ready(message)

    def action_copy_raw(self) -> None:
        """Y: the raw line of the selected item (or of the item under the list cursor)."""
        self.evidence.copy_raw()

    async def action_search(self) -> None:
        """/: open the search view (its query box has the focus when this returns)."""
        await self.navigator.search()

    def action_next_hit(self) -> None:
        """n: the next search hit."""
        self.navigator.walk_hits(+1)

    def action_prev_hit(self) -> None:
        """N: the previous search hit."""
        self.navigator.walk_hits(-1)

    def action_filter_provider(self) -> None:
        """p: show only the sessions of one provider."""
        self.navigator.filter_provider()

    def action_toggle_flagged(self) -> None:
        """f: only flagged sessions (and the parents they sit under), or all again."""
        self.navigator.toggle_flagged()

    def action_cycle_sort(self) -> None:
        """s: the next tree order (path, newest first, provider, size)."""
        self.navigator.cycle_sort()

    def action_escape(self) -> None:
        if self.zoomed is not None:
            self.action_zoom()
            return
        if self.indexing and self._index_worker is not None and not self._index_worker.is_finished:
            self._index_worker.cancel()
            self.status.index_text = f"Stopping at {self.index_done:,}/{self.index_total:,} files…"
            return
        if self.session_tree.filtered:
            self.navigator.clear_filters()
            return
        if self.focused is not self.session_tree:
            self.session_tree.focus()

    def action_goto_line(self) -> None:
        """: (or ctrl+g): put the item cursor on a line of the open session's file."""
        self.navigator.goto_line()

    def action_diagnostics(self) -> None:
        """D: the diagnostics (unreadable files, malformed lines), grouped by file and reason."""
        self.navigator.diagnostics()

    def action_mark_for_diff(self) -> None:
        """m: mark the session under the cursor for a diff."""
        self.diffs.mark()

    def action_diff_marked(self) -> None:
        """M: the marked session and the one under the cursor, side by side."""
        self.diffs.diff()

    def action_timeline(self) -> None:
        """T: sessions per provider over time, and the first-seen events."""
        self.navigator.timeline()

    @on(DiffReady)
    def _diff_ready(self, message: DiffReady) -> None:
        self.diffs.ready(message)

    def action_help(self) -> None:
        from musetui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen([*self.BINDINGS, *self.app.BINDINGS]))
