"""Command-palette provider: session commands, provider filters and jump-to-session."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from musetui.core.model import PROVIDERS
from musetui.screens.host import CommandHost, PaletteHost
from musetui.widgets.text import clean, short_id

#: At most this many sessions are offered as "jump:" commands per keystroke.
JUMP_LIMIT = 20_000


class MuseCommands(Provider):
    """``session: copy evidence`` · ``session: copy path`` · ``session: open raw in $PAGER`` ·
    ``filter: provider …`` · ``jump: session …``."""

    def _main(self) -> CommandHost | None:
        for screen in reversed(self.app.screen_stack):
            if isinstance(screen, PaletteHost):
                return screen.palette_host()
        return None

    def _commands(self) -> Iterator[tuple[str, Callable[[], object], str]]:
        main = self._main()
        if main is None:
            return
        yield ("session: copy evidence", main.action_copy_evidence, "Copy the evidence report (y)")
        yield (
            "session: copy raw line",
            main.action_copy_raw,
            "Copy the raw line of the selected item (Y)",
        )
        yield ("session: copy path", main.evidence.copy_path, "Copy the session file's path")
        yield (
            "session: open raw in $PAGER",
            main.evidence.open_in_pager,
            "Read the raw session file in your pager",
        )
        yield (
            "session: next flagged",
            main.action_next_flagged,
            "Jump to the next flagged session (o)",
        )
        yield ("session: mark for diff", main.action_mark_for_diff, "Mark this session to compare another with it (m)")
        yield (
            "session: diff with the marked session",
            main.action_diff_marked,
            "Fingerprint profiles side by side (M)",
        )
        yield ("search: all sessions", main.action_search, "Open the search view (/)")
        yield ("view: timeline", main.action_timeline, "Sessions per provider over time; first-seen events (T)")
        yield ("view: diagnostics", main.action_diagnostics, "Unreadable files and malformed lines, grouped (D)")
        yield (
            "view: zoom the focused part",
            main.action_zoom,
            "Tree, items or panes fill the screen; esc comes back (z)",
        )
        yield ("view: wider tree", partial(main.action_tree_width, 1), "Make the session tree wider (])")
        yield ("view: narrower tree", partial(main.action_tree_width, -1), "Make the session tree narrower ([)")
        yield (
            "filter: flagged only",
            main.action_toggle_flagged,
            "Only flagged sessions and their parents; again: all (f)",
        )
        for order, what in (
            ("path", "as found on disk"),
            ("time", "newest first"),
            ("provider", "by attributed provider"),
            ("size", "biggest file first"),
        ):
            yield (
                f"sort: by {order}",
                partial(main.navigator.set_sort, order),
                f"Order the tree's sessions {what} (s cycles)",
            )
        yield (
            "report: write evidence report",
            main.evidence.write_report,
            "Write the HTML evidence report of the open roots",
        )
        yield (
            "filter: all providers",
            partial(main.navigator.apply_filter, None),
            "Clear the provider filter",
        )
        counts = main.feed.provider_counts()
        for p in PROVIDERS:
            if counts.get(p):
                yield (
                    f"filter: provider {p}",
                    partial(main.navigator.apply_filter, p),
                    f"{counts[p]} sessions",
                )

    async def discover(self) -> Hits:
        for title, command, help_text in self._commands():
            yield DiscoveryHit(Content(title), command, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, command, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, _highlight(matcher, title), command, text=title, help=help_text)
        main = self._main()
        if main is None:
            return
        for s in main.session_tree.sessions[:JUMP_LIMIT]:
            ident = clean(s.session_id or s.path, 80)
            # Ids, models, titles and paths all match.
            title = f"jump: session {ident} {clean(s.declared_model or '', 40)} {clean(s.title or '', 60)} {clean(s.path, 120)}"
            score = matcher.match(title)
            if score > 0:
                label = f"{clean(s.declared_model or '-', 30)} · {s.attribution.provider}"
                if s.attribution.flags:
                    label += " · ⚑ " + ", ".join(s.attribution.flags)
                yield Hit(
                    score,
                    _highlight(matcher, title),
                    partial(main.navigator.jump_to_session, s.key),
                    text=title,
                    help=f"{short_id(s.session_id)} · {label} · {clean(s.path, 80)}",
                )


def _highlight(matcher: object, candidate: str) -> Content:
    """The candidate as plain Content (never markup), with the fuzzy-matched letters bold."""
    content = Content(candidate)
    fuzzy = getattr(matcher, "fuzzy_search", None)
    query = getattr(matcher, "query", "")
    if fuzzy is None:
        return content
    try:
        score, offsets = fuzzy.match(query, candidate)
    except Exception:
        return content
    if not score:
        return content
    for offset in offsets:
        if 0 <= offset < len(candidate) and not candidate[offset].isspace():
            content = content.stylize("bold reverse", offset, offset + 1)
    return content
