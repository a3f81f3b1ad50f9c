"""The ``/`` search view: a live query over every indexed session, results with highlights."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Input, Static
from textual.worker import get_current_worker

from musetui.core.model import SessionSummary
from musetui.messages import SearchFailed, SearchResults
from musetui.widgets.search import RESULTS_CAP, HitChosen, QueryInput, SearchResultsList
from musetui.widgets.text import clean

#: How words match case (as musetui.core.search.query.CaseMode, not imported here: it loads the engine).
CaseMode = Literal["smart", "match", "ignore"]
#: Typing pauses this long before the search runs.
DEBOUNCE_S = 0.15
#: With this many sessions, opening the search starts its worker processes right away.
WARM_POOL_SESSIONS = 2000
#: While indexing, the open query is re-run at most this often (seconds).
RERUN_S = 1.0
#: Stop counting (and keeping) hits beyond this many; the list holds every hit kept.
COUNT_LIMIT = RESULTS_CAP
HINT = (
    'words · "phrase" · /regex/ · provider: host: model: format: kind: role: id: flag: has: after: before:'
    " · -term · a|b\n"
    "enter: jump to the hit · ↓: the results · esc: close (the hits stay for n/N) · ? on the main screen: full syntax"
)


@dataclass
class SearchState:
    """The last query and its hits, kept by the main screen for n/N."""

    query: str = ""
    hits: list[Any] = field(default_factory=list)
    total: int = 0
    done: bool = True
    error: str = ""
    position: int = -1
    generation: int = 0
    #: How words match case: ``smart``, ``match`` or ``ignore`` (alt+c cycles them).
    case: CaseMode = "smart"
    #: Bare words are regular expressions (alt+r).
    regex: bool = False

    def hit_terms(self, abspath: str) -> dict[int, list[str]]:
        """The matched text in the session file ``abspath``, per line."""
        out: dict[int, list[str]] = {}
        if not self.query.strip():
            return out
        for hit in self.hits:
            if getattr(hit, "abspath", None) != abspath:
                continue
            snippet = getattr(hit, "snippet", "") or ""
            terms = out.setdefault(int(getattr(hit, "line", 0) or 0), [])
            for span in getattr(hit, "match_spans", ()) or ():
                try:
                    term = snippet[int(span[0]) : int(span[1])]
                except (TypeError, ValueError, IndexError):
                    continue
                if term and term not in terms:
                    terms.append(term)
        return out

    def status_text(self) -> str:
        """The status line's search part: the query and where n/N stand (empty without a query)."""
        if not self.query.strip():
            return ""
        pos = f"hit {self.position + 1} of {len(self.hits):,}" if self.position >= 0 else f"{len(self.hits):,} hits"
        return f"/{clean(self.query, 40)}: {pos} (n/N)"

    def step(self, step: int) -> Any | None:
        """Move to the next (``+1``) or previous (``-1``) hit, wrapping; return it (None: no hits)."""
        if not self.hits:
            return None
        self.position = (
            (self.position + step) % len(self.hits) if self.position >= 0 else (0 if step > 0 else len(self.hits) - 1)
        )
        return self.hits[self.position]


#: The case modes in the order alt+c goes through them, and how the toggle names each.
CASE_MODES: tuple[CaseMode, ...] = ("smart", "match", "ignore")
CASE_LABELS = {"smart": "Aa smart case", "match": "Aa match case", "ignore": "aa ignore case"}


class SearchScreen(ModalScreen[int | None]):
    """Returns the index of the chosen hit in ``state.hits``, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "alt+c",
            "cycle_case",
            "case",
            priority=True,
            id="search.case",
            tooltip="Words match case: smart (if they have a capital) → always → never",
        ),
        Binding(
            "alt+r",
            "toggle_regex",
            "regex",
            priority=True,
            id="search.regex",
            tooltip="Bare words are regular expressions (as /…/ makes one)",
        ),
        Binding(
            "escape",
            "close",
            "Close",
            id="search.close",
            tooltip="Close the search (hits stay for n/N)",
        ),
        Binding(
            "down",
            "to_results",
            "Results",
            show=False,
            id="search.results",
            tooltip="Move to the results",
        ),
    ]

    def __init__(self, state: SearchState, sessions: Callable[[], Sequence[SessionSummary]]) -> None:
        super().__init__()
        self.state = state
        self._sessions = sessions
        self._timer: Timer | None = None
        self._last_rerun = 0.0
        self._rerun_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="search-dialog") as v:
            v.border_title = "Search all sessions"
            yield QueryInput(
                value=self.state.query,
                placeholder="query, e.g. provider:openai has:encrypted",
                id="search-input",
            )
            with Horizontal(id="search-toggles"):
                yield Button(CASE_LABELS[self.state.case], id="search-case", compact=True, tooltip="alt+c")
                yield Button(self._regex_label(), id="search-regex", compact=True, tooltip="alt+r")
                yield Static("alt+c · alt+r", id="search-toggle-keys", markup=False)
            yield Static("", id="search-status", markup=False)
            yield SearchResultsList(id="search-results")
            yield Static(Text(HINT, style="dim"), id="search-hint")

    def _regex_label(self) -> str:
        return ".* regex words" if self.state.regex else ".* plain words"

    def action_cycle_case(self) -> None:
        """alt+c: smart case → match case → ignore case; the query runs again."""
        st = self.state
        st.case = CASE_MODES[(CASE_MODES.index(st.case) + 1) % len(CASE_MODES)]
        self._toggled()

    def action_toggle_regex(self) -> None:
        """alt+r: bare words as regular expressions, or as plain words; the query runs again."""
        self.state.regex = not self.state.regex
        self._toggled()

    def _toggled(self) -> None:
        st = self.state
        case, regex = self.query_one("#search-case", Button), self.query_one("#search-regex", Button)
        case.label = CASE_LABELS[st.case]
        case.set_class(st.case != "smart", "-on")
        regex.label = self._regex_label()
        regex.set_class(st.regex, "-on")
        if st.query.strip():
            self.start(st.query)

    @on(Button.Pressed, "#search-case")
    def _case_pressed(self) -> None:
        self.action_cycle_case()

    @on(Button.Pressed, "#search-regex")
    def _regex_pressed(self) -> None:
        self.action_toggle_regex()

    def on_mount(self) -> None:
        for button in self.query(Button):
            button.can_focus = False  # the query box keeps the keys
        self.query_one("#search-case").set_class(self.state.case != "smart", "-on")
        self.query_one("#search-regex").set_class(self.state.regex, "-on")
        # Focus now, not after a refresh: keys typed right after / go straight to the box.
        self.set_focus(self.query_one(Input), scroll_visible=False)
        self._show()
        if len(self._sessions()) >= WARM_POOL_SESSIONS:
            self.warm_pool()

    @work(thread=True, exclusive=True, group="search-pool", exit_on_error=False, description="start search workers")
    def warm_pool(self) -> None:
        """Start the search worker processes while the query is typed (big trees only)."""
        pool = getattr(self.app, "search_pool", None)
        if pool is not None:
            pool().warm()

    # ------------------------------------------------------------------ running

    @on(Input.Changed, "#search-input")
    def _changed(self, event: Input.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_S, lambda: self.start(event.value))

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if event.value != self.state.query or self.state.error:
            self.start(event.value)
            return
        if self.state.hits:
            self.dismiss(0)

    def start(self, query: str) -> None:
        """Run ``query`` now (cancelling a running search)."""
        st = self.state
        st.generation += 1
        st.query = query
        st.error = ""
        st.position = -1
        if not query.strip():
            self.workers.cancel_group(self, "search")
            st.hits, st.total, st.done = [], 0, True
            self._show()
            return
        st.done = False
        self._show()
        self.run_search(st.generation, query, list(self._sessions()), st.case, st.regex)

    def sessions_changed(self) -> None:
        """Indexing found more sessions: re-run the query.

        At most once every :data:`RERUN_S`; a change within that time is not dropped but
        re-runs the query when it ends (the last sessions found are always searched).
        """
        if not self.state.query.strip():
            return
        wait = self._last_rerun + RERUN_S - time.monotonic()
        if wait <= 0:
            self._rerun()
        elif self._rerun_timer is None:
            self._rerun_timer = self.set_timer(wait, self._rerun)

    def _rerun(self) -> None:
        self._rerun_timer = None
        self._last_rerun = time.monotonic()
        if self.state.query.strip():
            self.start(self.state.query)

    # (An explicit description: Textual would otherwise repr() every session on the UI thread.)
    @work(thread=True, exclusive=True, group="search", exit_on_error=False, description="search")
    def run_search(
        self, generation: int, query: str, sessions: list[SessionSummary], case: CaseMode = "smart", regex: bool = False
    ) -> None:
        """Search ``sessions`` in a thread; posts SearchResults / SearchFailed only."""
        worker = get_current_worker()
        try:
            from musetui.core.search import QueryError, parse_query, search_sessions
        except ImportError as exc:
            self.post_message(SearchFailed(generation, query, f"search is unavailable: {exc}"))
            return
        try:
            parsed = parse_query(query, case=case, regex_words=regex)
        except QueryError as exc:
            self.post_message(SearchFailed(generation, query, str(exc)))
            return
        hits: list[Any] = []
        total = 0
        last = time.monotonic()

        def cancelled() -> bool:
            return worker.is_cancelled

        try:
            pool = getattr(self.app, "search_pool", None)
            for hit in search_sessions(sessions, parsed, cancelled=cancelled, pool=pool() if pool else None):
                if worker.is_cancelled:
                    return
                total += 1
                if len(hits) < RESULTS_CAP:
                    hits.append(hit)
                if total >= COUNT_LIMIT:
                    break
                now = time.monotonic()
                if now - last > 0.25:
                    last = now
                    self.post_message(SearchResults(generation, query, list(hits), total, False))
        except QueryError as exc:
            self.post_message(SearchFailed(generation, query, str(exc)))
            return
        except Exception as exc:  # a search must never take the app down
            self.post_message(SearchFailed(generation, query, f"search failed: {type(exc).__name__}: {exc}"))
            return
        if not worker.is_cancelled:
            self.post_message(SearchResults(generation, query, hits, total, True))

    @on(SearchResults)
    def _results(self, message: SearchResults) -> None:
        st = self.state
        if message.generation != st.generation:
            return
        st.hits, st.total, st.done, st.error = message.hits, message.total, message.done, ""
        self._show()

    @on(SearchFailed)
    def _failed(self, message: SearchFailed) -> None:
        st = self.state
        if message.generation != st.generation:
            return
        st.hits, st.total, st.done, st.error = [], 0, True, message.error
        self._show()

    # ------------------------------------------------------------------ display

    def status_text(self) -> Text:
        """``12 of 40 hits`` / ``searching… 3 hits so far`` / the query error."""
        st = self.state
        if st.error:
            return Text(f"✗ {clean(st.error, 300)}", style="bold red")
        if not st.query.strip():
            return Text("Type a query. Results update as you type.", style="dim")
        shown = len(st.hits)
        if not st.done:
            return Text(f"searching… {st.total:,} hits so far", style="italic")
        if st.total == 0:
            return Text("no hits", style="bold")
        if st.total >= COUNT_LIMIT:
            return Text(f"{shown:,} hits listed (the search stopped at {COUNT_LIMIT:,})", style="bold")
        return Text(f"{shown:,} of {st.total:,} hits", style="bold")

    def _show(self) -> None:
        self.query_one("#search-status", Static).update(self.status_text())
        self.query_one(SearchResultsList).show_hits(self.state.hits)

    # ------------------------------------------------------------------ actions

    @on(HitChosen)
    def _chosen(self, event: HitChosen) -> None:
        self.dismiss(event.index)

    def action_to_results(self) -> None:
        results = self.query_one(SearchResultsList)
        if results.option_count:
            results.focus()
            if results.highlighted is None:
                results.move_to(0)

    def action_close(self) -> None:
        if not self.state.done:
            self.workers.cancel_group(self, "search")
            self.state.done = True
        self.dismiss(None)
