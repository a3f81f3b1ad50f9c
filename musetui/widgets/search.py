"""The search results list: one two-line entry per hit, the match highlighted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from musetui.widgets.text import clean, short_id

#: The most hits listed (the status line still counts all of them).
RESULTS_CAP = 500
#: Entries added to the list at a time (10-25 ms of the UI thread; a screenful is about 20).
ADD_CHUNK = 20
#: Seconds between two chunks: the event loop handles keys and paints in between.
ADD_PAUSE_S = 0.005


def highlight_snippet(snippet: str, spans: Sequence[Any], width: int = 200) -> Text:
    """The snippet as safe text, with every ``(start, end)`` span highlighted."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    pos = 0
    norm: list[tuple[int, int]] = []
    for span in spans or ():
        try:
            start, end = int(span[0]), int(span[1])
        except (TypeError, ValueError, IndexError):
            continue
        start = max(0, min(start, len(snippet)))
        end = max(start, min(end, len(snippet)))
        if end > start:
            norm.append((start, end))
    norm.sort()
    for start, end in norm:
        if start < pos:
            start = pos
        if end <= start:
            continue
        text.append(clean(snippet[pos:start]))
        text.append(clean(snippet[start:end]), style="bold reverse")
        pos = end
    text.append(clean(snippet[pos:]))
    if text.cell_len > width:
        text.truncate(width, overflow="ellipsis")
    return text


def hit_prompt(hit: Any, number: int, width: int = 200) -> Text:
    """``12  01a05efe…88b9  muse-vm/…/session.jsonl:4  payload.event.message_id`` + snippet."""
    head = Text(no_wrap=True, overflow="ellipsis", end="")
    head.append(f"{number:>4} ", style="dim")
    head.append(short_id(getattr(hit, "session_id", None) or "?"), style="bold")
    head.append("  ")
    path = clean(getattr(hit, "path", "") or "", 200)
    if len(path) > 60:
        path = "…" + path[-59:]
    head.append(f"{path}:{getattr(hit, 'line', '?')}", style="cyan")
    kind = getattr(hit, "item_kind", None)
    if kind:
        head.append(f"  {clean(kind, 20)}", style="dim")
    field = getattr(hit, "field", None)
    if field:
        head.append(f"  {clean(field, 60)}", style="dim italic")
    if head.cell_len > width:
        head.truncate(width, overflow="ellipsis")
    snippet = Text("      ", no_wrap=True, overflow="ellipsis", end="")
    snippet.append_text(
        highlight_snippet(
            getattr(hit, "snippet", "") or "", getattr(hit, "match_spans", ()) or (), width
        )
    )
    if snippet.cell_len > width:
        snippet.truncate(width, overflow="ellipsis")
    head.append("\n")
    head.append_text(snippet)
    return head


class SearchResultsList(OptionList):
    """The hits of the current query (capped at :data:`RESULTS_CAP`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="results.down", tooltip="Next hit"),
        Binding("k", "cursor_up", "Up", show=False, id="results.up", tooltip="Previous hit"),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the hits to list, and the width their entries are made for
        self._listed: list[Any] = []
        self._width = 0
        self._adding = False

    def show_hits(self, hits: Sequence[Any]) -> None:
        """List ``hits`` (keeping the highlight where possible).

        A running search reports the hits so far every quarter second: when they extend
        what is listed (the same hit objects first), only the new ones are added. Entries
        are added :data:`ADD_CHUNK` at a time, with a pause between chunks: 500 at once held
        the UI thread for 0.1-0.35 s, 100 at once for up to 0.12 s.
        """
        keep = self.highlighted
        width = max(40, (self.scrollable_content_region.width or self.app.size.width - 10) - 2)
        wanted = list(hits[:RESULTS_CAP])
        listed = self._listed
        extends = (
            width == self._width
            and len(wanted) >= len(listed)
            and all(a is b for a, b in zip(listed, wanted, strict=False))
        )
        if not extends:
            self.clear_options()
        self._listed, self._width = wanted, width
        self._add_chunk()
        if wanted and (not extends or self.highlighted is None):
            self.highlighted = min(keep or 0, self.option_count - 1)

    def _add_chunk(self) -> None:
        """Add the next entries of the list; the rest after a pause."""
        self._adding = False
        n, wanted, width = self.option_count, self._listed, self._width
        if n >= len(wanted):
            return
        self.add_options(
            Option(hit_prompt(h, i + 1, width), id=str(i))
            for i, h in enumerate(wanted[n : n + ADD_CHUNK], start=n)
        )
        if self.option_count < len(wanted):
            self._adding = True
            self.set_timer(ADD_PAUSE_S, self._next_chunk)

    def _next_chunk(self) -> None:
        if self._adding:
            self._add_chunk()
