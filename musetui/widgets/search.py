"""The search results list: one two-line entry per hit, the match highlighted (Line API)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.color import Color
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input

from musetui.theme import readable
from musetui.widgets.text import clean, clean_name, short_id

#: The most hits kept for one query (the list holds them all; counting stops there too).
RESULTS_CAP = 100_000


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
    path = clean_name(getattr(hit, "path", "") or "", 200)
    line = f":{getattr(hit, 'line', '?')}"
    # The path gives way on its left, so the line number stays on a narrow screen.
    room = min(60, max(8, width - head.cell_len - len(line) - 2))
    if len(path) > room:
        path = "…" + path[-(room - 1) :]
    head.append(path + line, style="cyan")
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
        highlight_snippet(getattr(hit, "snippet", "") or "", getattr(hit, "match_spans", ()) or (), width)
    )
    if snippet.cell_len > width:
        snippet.truncate(width, overflow="ellipsis")
    head.append("\n")
    head.append_text(snippet)
    return head


class QueryInput(Input):
    """The query box: its editing keys (ctrl+u, backspace …) apply in the order they were typed.

    An Input inserts a typed letter as soon as the key reaches it, but runs a bound key
    (ctrl+u, backspace) only after the key has bubbled up to the app; in a fast burst the
    letters typed after ctrl+u then landed before it was applied. Here bound keys run as
    they arrive, in the same queue as the letters.
    """

    async def _on_key(self, event: events.Key) -> None:
        action = _EDIT_KEYS.get(event.key)
        if action is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(action)
            return
        await super()._on_key(event)


def _edit_keys() -> dict[str, str]:
    """Input's own editing keys and their actions (not the scrolling keys it inherits)."""
    keys: dict[str, str] = {}
    for b in Input.BINDINGS:
        if isinstance(b, Binding):
            for key in b.key.split(","):
                keys.setdefault(key.strip(), b.action)
    return keys


_EDIT_KEYS = _edit_keys()


@dataclass
class HitChosen(Message):
    """Enter (or a click) on a result: the index of the hit in the list."""

    index: int


class SearchResultsList(ScrollView, can_focus=True):
    """Every hit of the current query, two lines each, rendered only when visible (Line API).

    No widget per hit and no cap: a query with 100,000 hits lists them all, and the cursor
    (``highlighted``) reaches each one.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "cursor(1)", "Down", show=False, id="results.down", tooltip="Next hit"),
        Binding("up,k", "cursor(-1)", "Up", show=False, id="results.up", tooltip="Previous hit"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="results.page_down", tooltip="Next page of hits"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="results.page_up", tooltip="Previous page of hits"),
        Binding("home,g", "first", "First", show=False, id="results.first", tooltip="First hit"),
        Binding("end,G", "last", "Last", show=False, id="results.last", tooltip="Last hit"),
        Binding("enter", "choose", "Jump", show=False, id="results.choose", tooltip="Jump to the hit"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"results--cursor", "results--number", "results--path", "results--dim"}

    DEFAULT_CSS = """
    SearchResultsList {
        background: $surface;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        & > .results--cursor { background: $block-cursor-blurred-background; }
        &:focus > .results--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: bold;
        }
        & > .results--number { color: $text-muted; }
        & > .results--path { color: $secondary; }
        & > .results--dim { color: $text-muted; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hits: Sequence[Any] = ()
        self.highlighted: int | None = None
        self._cache: LRUCache[tuple[int, int, bool, bool, int], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] = {}

    @property
    def option_count(self) -> int:
        """How many hits are listed (all of them)."""
        return len(self.hits)

    def prompt(self, index: int) -> Text:
        """The two lines of hit ``index`` as plain Text (number, session, place; snippet)."""
        return hit_prompt(self.hits[index], index + 1, self._width())

    def show_hits(self, hits: Sequence[Any]) -> None:
        """List ``hits`` (all of them), keeping the cursor where it was when it still fits."""
        same_start = bool(self.hits) and len(hits) >= len(self.hits) and hits[:1] == self.hits[:1]
        self.hits = list(hits)
        self._cache.clear()
        self.virtual_size = Size(0, 2 * len(self.hits))
        if not self.hits:
            self.highlighted = None
        elif self.highlighted is None or not same_start:
            self.highlighted = 0
            self.scroll_to(y=0, animate=False, immediate=True)
        else:
            self.highlighted = min(self.highlighted, len(self.hits) - 1)
        self.refresh()

    def move_to(self, index: int) -> None:
        """Put the cursor on hit ``index`` (clamped) and scroll it into view."""
        if not self.hits:
            return
        old = self.highlighted
        self.highlighted = max(0, min(index, len(self.hits) - 1))
        if old != self.highlighted:
            self._cache.clear()
        height = self.scrollable_content_region.height or self.size.height or 2
        top = round(self.scroll_y)
        row = 2 * self.highlighted
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row + 2 > top + height:
            self.scroll_to(y=row + 2 - height, animate=False, immediate=True)
        self.refresh()

    def action_cursor(self, step: int) -> None:
        self.move_to((self.highlighted if self.highlighted is not None else -1) + step)

    def action_page(self, step: int) -> None:
        rows = max(1, (self.scrollable_content_region.height or 2) // 2 - 1)
        self.move_to((self.highlighted or 0) + step * rows)

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(len(self.hits) - 1)

    def action_choose(self) -> None:
        if self.highlighted is not None and self.hits:
            self.post_message(HitChosen(self.highlighted))

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = (round(self.scroll_y) + offset.y) // 2
        if 0 <= index < len(self.hits):
            if index == self.highlighted:
                self.post_message(HitChosen(index))
            self.move_to(index)

    def _on_focus(self, event: events.Focus) -> None:
        self._cache.clear()
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self._cache.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    def _on_resize(self, event: events.Resize) -> None:
        self._cache.clear()

    def _width(self) -> int:
        return max(20, (self.scrollable_content_region.width or self.size.width or 80))

    def _cursor_style(self) -> Style:
        style = self._styles.get("cursor")
        if style is None:
            raw = self.rich_style + self.get_component_rich_style("results--cursor")
            bg = Color.from_rich_color(raw.bgcolor) if raw.bgcolor is not None else self.background_colors[1]
            fg = Color.from_rich_color(raw.color) if raw.color is not None else bg.get_contrast_text(1.0)
            style = self._styles["cursor"] = Style(color=readable(fg, bg).rich_color, bgcolor=bg.rich_color, bold=True)
        return style

    def render_line(self, y: int) -> Strip:
        width = self._width()
        base = self.rich_style
        row = round(self.scroll_y) + y
        index, part = divmod(row, 2)
        if index >= len(self.hits):
            return Strip.blank(width, base)
        on_cursor = index == self.highlighted
        key = (index, part, on_cursor, self.has_focus, width)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        lines = hit_prompt(self.hits[index], index + 1, width).split("\n")
        text = lines[part] if part < len(lines) else Text("")
        style = self._cursor_style() if on_cursor else base
        if on_cursor:
            # The match keeps an underline on the cursor row, where reverse video would not read.
            plain = Text(text.plain, end="")
            for span in text.spans:
                if "reverse" in str(span.style):
                    plain.stylize("underline", span.start, span.end)
            text = plain
        text.stylize_before(style)
        text.truncate(width, overflow="ellipsis")
        strip = Strip(list(text.render(self.app.console, end=""))).adjust_cell_length(width, style)
        self._cache[key] = strip
        return strip
