"""Getting around the main screen's sessions: flagged ones, search hits, by key, filters and orders.

:class:`Navigator` belongs to the main screen. It moves the tree (reveal, focus, filters,
order) and chooses sessions through the screen's selection (``select_session``, and
``pending_line`` / ``pending_focus_items`` for where the opened session's cursor goes).
It also links the ``/`` search view to the screen: the view keeps its query and hits in
the screen's :class:`~musetui.screens.search.SearchState`, which ``n`` and ``N`` walk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from musetui.core.model import SessionSummary
from musetui.core.session_forest import SORTS
from musetui.screens.search import SearchScreen
from musetui.widgets.repaint import set_border_title

if TYPE_CHECKING:
    from musetui.screens.host import NavigatorHost

#: How the status line names each tree order.
SORT_NAMES = {"path": "path", "time": "newest first", "provider": "provider", "size": "biggest first"}


class Navigator:
    """o/O, /, n/N, p, f, s and D for one main screen, and the palette's jumps, filters and sorts."""

    def __init__(self, screen: NavigatorHost) -> None:
        self.screen = screen
        #: o/O pressed before indexing ended with nothing flagged yet: the step to take when it ends.
        self.pending_flagged: int | None = None

    # ------------------------------------------------------------------ flagged sessions

    def flagged_order(self) -> list[SessionSummary]:
        """Flagged sessions in the order o visits them: outliers first, then other flags."""
        order = self.screen.session_tree.flagged_sessions()
        outliers = [s for s in order if "outlier" in s.attribution.flags]
        others = [s for s in order if s.attribution.flags and "outlier" not in s.attribution.flags]
        return outliers + others

    def go_flagged(self, step: int, keep_part: bool = False) -> None:
        """Select the next (or previous) flagged session; before indexing ends, go there when it does.

        ``keep_part`` keeps the focus where the user moved it meanwhile (a deferred jump after
        ``o`` then ``5`` shows the evidence, not the tree).
        """
        screen = self.screen
        order = self.flagged_order()
        if not order:
            if not screen.finished:
                self.pending_flagged = step
                screen.notify("Indexing: o jumps to the first flagged session when it ends", timeout=3)
            else:
                screen.notify("No flagged sessions", timeout=3)
            return
        cur = screen.current
        keys = [s.key for s in order]
        if cur is not None and cur.key in keys:
            pos = (keys.index(cur.key) + step) % len(order)
        else:
            pos = 0 if step > 0 else len(order) - 1
        target = order[pos]
        screen.session_tree.reveal(target)
        if not (keep_part and screen.part_of(screen.focused) == "panes"):
            screen.session_tree.focus()
        screen.select_session(target, immediate=True)
        # The evidence is why the session is flagged: pane 5 shows it (alone on a narrow screen).
        screen.action_pane("evidence")

    def indexing_finished(self) -> None:
        """Take the o/O step pressed while indexing had flagged nothing yet."""
        if self.pending_flagged is not None:
            step, self.pending_flagged = self.pending_flagged, None
            self.go_flagged(step, keep_part=True)

    # ------------------------------------------------------------------ jumps

    def jump_to_session(self, key: str) -> bool:
        """Select the session with this key (palette: jump to a session by id)."""
        screen = self.screen
        s = screen.session_tree.summary(key)
        if s is None:
            return False
        if screen.session_tree.filtered and not screen.session_tree.is_shown(s):
            self.clear_filters()
        screen.session_tree.reveal(s)
        screen.session_tree.focus()
        screen.select_session(s, immediate=True)
        return True

    def goto_line(self) -> None:
        """: (or ctrl+g): ask for a line of the open session's file; its item takes the cursor."""
        screen = self.screen
        opened = screen.opened
        if opened is None or not opened.items:
            screen.notify("Open a session first (enter in the tree).", timeout=3)
            return
        from musetui.screens.goto_line import GotoLineScreen

        def done(line: int | None) -> None:
            if line is not None and screen.opened is opened:
                screen.items.move_to_line(line)
                screen.show_part("items")
                screen.apply_layout()
                screen.items.focus()

        screen.app.push_screen(GotoLineScreen(opened.items[-1].line), done)

    def diagnostics(self) -> None:
        """D: the diagnostics (unreadable files, malformed lines), grouped by file and reason."""
        from musetui.screens.diagnostics import DiagnosticsScreen

        screen = self.screen

        def done(key: str | None) -> None:
            if key is not None:
                self.jump_to_session(key)

        def key_of(path: str) -> str | None:
            s = screen.session_tree.summary(path)
            return s.key if s is not None else None

        screen.app.push_screen(DiagnosticsScreen(screen.diagnostics, screen.roots, key_of), done)

    def timeline(self) -> None:
        """T: the timeline of the indexed sessions; an event chosen opens its session at its line."""
        from musetui.core.timeline import build, rows_from_sessions
        from musetui.screens.timeline import At, TimelineScreen

        screen = self.screen
        sessions = screen.session_tree.sessions
        if not sessions:
            screen.notify("No sessions indexed yet.", timeout=3)
            return

        def done(at: At | None) -> None:
            if at is not None:
                self.jump_to_hit(at)

        screen.app.push_screen(TimelineScreen(build(rows_from_sessions(sessions))), done)

    def diagnostics_changed(self) -> None:
        """Show the screen's diagnostics in an open ``D`` view (live follow found more)."""
        from musetui.screens.diagnostics import DiagnosticsScreen

        for view in self.screen.app.screen_stack:
            if isinstance(view, DiagnosticsScreen):
                view.set_diagnostics(self.screen.diagnostics)

    # ------------------------------------------------------------------ search

    async def search(self) -> None:
        """/: open the search view, and wait until its query box has the focus.

        A priority binding runs before the app hands on the next key; waiting for the
        view to mount here means every key typed after / reaches the box, in order.
        """
        screen = self.screen
        await screen.app.push_screen(
            SearchScreen(screen.search_state, lambda: list(screen.session_tree.sessions)),
            self._search_done,
        )

    def sessions_changed(self) -> None:
        """Tell an open search view that sessions came, changed or went (it re-runs its query)."""
        for view in self.screen.app.screen_stack:
            if isinstance(view, SearchScreen):
                view.sessions_changed()
                return

    def hit_terms_for(self, s: SessionSummary) -> dict[int, list[str]]:
        """The current search's matched text in session ``s``, per line."""
        return self.screen.search_state.hit_terms(s.abspath)

    def _search_done(self, index: int | None) -> None:
        screen = self.screen
        st = screen.search_state
        self.update_search_status()
        if screen.opened is not None:
            screen.items.set_hit_terms(self.hit_terms_for(screen.opened.summary))
        if index is None or not (0 <= index < len(st.hits)):
            return
        st.position = index
        self.jump_to_hit(st.hits[index])

    def update_search_status(self) -> None:
        self.screen.status.search_text = self.screen.search_state.status_text()

    def jump_to_hit(self, hit: Any) -> None:
        """Select the hit's session, open it and put the item cursor on the hit's line."""
        screen = self.screen
        s = screen.session_tree.summary(getattr(hit, "abspath", ""))
        if s is None:
            screen.notify("That session is not in the index.", severity="warning", timeout=3)
            return
        if screen.session_tree.filtered and not screen.session_tree.is_shown(s):
            self.clear_filters()
        screen.pending_line = int(getattr(hit, "line", 0) or 0) or None
        screen.pending_focus_items = True
        screen.session_tree.reveal(s)
        screen.select_session(s, immediate=True)
        self.update_search_status()

    def walk_hits(self, step: int) -> None:
        """n (``+1``) and N (``-1``): the next or previous hit of the last search."""
        hit = self.screen.search_state.step(step)
        if hit is None:
            self.screen.notify("No search hits: press / to search.", timeout=3)
            return
        self.jump_to_hit(hit)

    # ------------------------------------------------------------------ filters and order

    def filter_provider(self) -> None:
        """p: choose the one provider whose sessions the tree shows."""
        from musetui.screens.provider_filter import ALL, ProviderFilterScreen

        screen = self.screen

        def done(choice: str | None) -> None:
            if choice is None:
                return
            self.apply_filter(None if choice == ALL else choice)

        screen.app.push_screen(
            ProviderFilterScreen(
                screen.feed.provider_counts(), screen.session_tree.provider_filter, screen.feed.tallies()
            ),
            done,
        )

    def apply_filter(self, provider: str | None) -> None:
        """Filter the tree by attributed provider (None: show all).

        The focus stays where it was while the current session is still shown, so ``y``
        copies what the user sees selected; else the tree takes it.
        """
        self.screen.session_tree.set_filter(provider)
        self._filters_changed()

    def _filters_changed(self) -> None:
        screen = self.screen
        tree = screen.session_tree
        parts = []
        if tree.provider_filter:
            parts.append(f"provider: {tree.provider_filter} (p)")
        if tree.flagged_only:
            parts.append("flagged only (f)")
        screen.status.filter_text = " · ".join(parts) + (" · esc clears" if parts else "")
        cur = screen.current
        if cur is None or not tree.is_shown(cur) or screen.part_of(screen.focused) is None:
            tree.focus()

    def clear_filters(self) -> None:
        """Show every session again (no provider, no flagged-only filter)."""
        self.screen.session_tree.clear_filters()
        self._filters_changed()

    def toggle_flagged(self) -> None:
        """f: only flagged sessions (and the parents they sit under), or all again."""
        tree = self.screen.session_tree
        tree.set_flagged_only(not tree.flagged_only)
        self._filters_changed()

    def cycle_sort(self) -> None:
        """s: the next tree order (path, newest first, provider, size)."""
        tree = self.screen.session_tree
        self.set_sort(SORTS[(SORTS.index(tree.session_order) + 1) % len(SORTS)])

    def set_sort(self, order: str) -> None:
        """Order the tree's siblings by ``order`` (one of :data:`SORTS`)."""
        screen = self.screen
        screen.session_tree.set_sort(order)
        name = SORT_NAMES.get(order, order)
        set_border_title(screen.query_one("#left"), Text("Sessions" if order == "path" else f"Sessions · by {name}"))
        screen.notify(f"Sessions sorted by {name}", timeout=2)
