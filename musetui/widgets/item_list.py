"""The item stream of one session: a Line-API list, one row per item, no widget per item.

Rows are rendered only when visible and cached per (item, cursor, focus, width), so a
session of 100,000 items opens as fast as its items can be parsed.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, ClassVar, get_args

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.reactive import reactive
from textual.strip import Strip

from musetui.core.model import Item, ItemKind, Segment
from musetui.messages import FocusBack, ItemDrill, ItemHighlighted
from musetui.theme import provider_style
from musetui.widgets.repaint import set_virtual_height
from musetui.widgets.styling import PartStyles, cursor_colours
from musetui.widgets.text import LineView, clean, hms, human_size, short_id

KINDS: tuple[str, ...] = get_args(ItemKind)
ROLE_ABBREV = {
    "assistant": "asst",
    "user": "user",
    "system": "sys",
    "developer": "dev",
    "tool": "tool",
    "model": "modl",
    "function": "func",
}
REASONING_MARK = {
    "visible": "vis",
    "encrypted": "enc",
    "redacted": "red",
    "empty-signature": "∅sig",
}
BLOB_KEYS = (
    "encrypted_content",
    "signature",
    "thought_signature",
    "thoughtSignature",
    "data",
    "redacted",
)
TIME_W, KIND_W, ROLE_W, ID_W = 8, 11, 4, 14
#: The narrowest list that shows the short-id column, and the role column (the text keeps the rest).
ID_COLUMN_MIN, ROLE_COLUMN_MIN = 72, 56
#: A switched session's rows start with their segment's provider: its name (``▌openai``) from
#: this width, else its initial, both in the provider's colour (never colour alone).
SEGMENT_LABEL_MIN, SEGMENT_W = 64, 9


def kind_class(kind: str) -> str:
    """The component class of an item kind (``item-list--tool-call`` …)."""
    k = kind if kind in KINDS else "unknown"
    return "item-list--" + k.replace("_", "-")


def blob_length(raw: Any, depth: int = 0) -> int:
    """The length of the longest encrypted/signature string in an item's JSON."""
    best = 0
    if depth > 12:
        return 0
    if isinstance(raw, dict):
        for k, v in raw.items():
            if isinstance(v, str) and k in BLOB_KEYS:
                best = max(best, len(v))
            elif isinstance(v, dict | list):
                best = max(best, blob_length(v, depth + 1))
    elif isinstance(raw, list):
        for v in raw[:200]:
            best = max(best, blob_length(v, depth + 1))
    return best


def reasoning_marker(item: Item) -> str:
    """``vis``, ``enc 1.2k``, ``red`` or ``∅sig`` for reasoning items; empty otherwise."""
    if not item.reasoning:
        return ""
    mark = REASONING_MARK.get(item.reasoning, clean(item.reasoning, 6))
    if item.reasoning == "encrypted":
        n = blob_length(item.raw)
        if n:
            mark += " " + human_size(n)
    return mark


def preview(item: Item, limit: int = 300) -> str:
    """The row's text: tool name first, then the item's text on one line."""
    parts: list[str] = []
    if item.name and item.name != item.subkind:
        parts.append(clean(item.name, 40))
    if item.text:
        body = clean(item.text, max(1, limit))
        parts.append(f'"{body}' if item.kind in ("message", "tool_result") else body)
    elif item.subkind:
        parts.append(clean(item.subkind, 40))
    out = " ".join(parts)
    return out if len(out) <= limit else out[: max(0, limit - 1)] + "…"


def mark_terms(text: Text, terms: Sequence[str], style: Style) -> int:
    """Style every case-insensitive occurrence of ``terms`` in ``text``; returns how many."""
    plain = text.plain.lower()
    n = 0
    for term in terms:
        t = term.lower()
        if not t:
            continue
        start = plain.find(t)
        while start >= 0:
            text.stylize(style, start, start + len(t))
            n += 1
            start = plain.find(t, start + len(t))
    return n


def index_for_line(items: Sequence[Item], line: int) -> int | None:
    """The index of the last item starting at or before ``line`` (binary search)."""
    fast = getattr(items, "index_for_line", None)
    if callable(fast):
        result = fast(line)
        return result if isinstance(result, int) else None
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid].line <= line:
            lo = mid + 1
        else:
            hi = mid
    idx = lo - 1
    if idx < 0:
        return 0 if items else None
    return idx


class ItemList(LineView, can_focus=True):
    """One line per item: time, kind, role, short id, reasoning marker and a preview."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "cursor_down", "Down", show=False, id="items.down", tooltip="Next item"),
        Binding("up,k", "cursor_up", "Up", show=False, id="items.up", tooltip="Previous item"),
        Binding(
            "pagedown",
            "page_down",
            "Page down",
            show=False,
            id="items.page_down",
            tooltip="Next page",
        ),
        Binding("pageup", "page_up", "Page up", show=False, id="items.page_up", tooltip="Previous page"),
        Binding("home,g", "first", "First", show=False, id="items.first", tooltip="First item"),
        Binding("end,G", "last", "Last", show=False, id="items.last", tooltip="Last item"),
        Binding(
            "enter,l",
            "drill",
            "Details",
            show=False,
            id="items.drill",
            tooltip="Move into the side panes",
        ),
        Binding(
            "h,backspace",
            "back",
            "Back",
            show=False,
            id="items.back",
            tooltip="Back to the session tree",
        ),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "item-list--cursor",
        "item-list--time",
        "item-list--line",
        "item-list--dim",
        "item-list--id",
        "item-list--visible",
        "item-list--encrypted",
        "item-list--redacted",
        "item-list--empty",
        *(kind_class(k) for k in KINDS),
    }

    DEFAULT_CSS = """
    ItemList {
        background: $surface;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        & > .item-list--cursor { background: $block-cursor-blurred-background; }
        &:focus > .item-list--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: bold;
        }
        & > .item-list--time { color: $text-muted; }
        & > .item-list--line { color: $text-muted; }
        & > .item-list--dim { color: $text-muted; }
        & > .item-list--id { color: $secondary; }
        & > .item-list--message { color: $text; text-style: bold; }
        & > .item-list--reasoning { color: $accent; }
        & > .item-list--tool-call { color: $primary; }
        & > .item-list--tool-result { color: $success; }
        & > .item-list--meta { color: $text-muted; }
        & > .item-list--usage { color: $text-muted; }
        & > .item-list--event { color: $secondary; }
        & > .item-list--summary { color: $warning; }
        & > .item-list--unknown { color: $error; }
        & > .item-list--visible { color: $success; }
        & > .item-list--encrypted { color: $warning; text-style: bold; }
        & > .item-list--redacted { color: $error; text-style: bold; }
        & > .item-list--empty { color: $text-muted; text-style: italic; }
    }
    """

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: Sequence[Item] = ()
        self.placeholder = "Select a session in the tree (enter) to list its items."
        self._cache: LRUCache[tuple[int, bool, bool, int], Strip] = LRUCache(2048)
        self._markers: dict[int, str] = {}
        self._styles = PartStyles(self)
        #: The current search's matched text per line of this session (highlighted in the rows).
        self.hit_terms: dict[int, list[str]] = {}
        #: The open session's segments when it switches provider (else none: no gutter).
        self.segments: Sequence[Segment] = ()
        self._segment_starts: list[int] = []

    def set_segments(self, segments: Sequence[Segment]) -> None:
        """Show each row's segment provider in a gutter, when the session has two segments or more."""
        self.segments = tuple(segments) if len(segments) > 1 else ()
        self._segment_starts = [g.first_line for g in self.segments]
        self._cache.clear()
        self.refresh()

    def segment_of(self, item: Item) -> Segment | None:
        """The segment holding ``item`` (None when the session never switches)."""
        if not self.segments:
            return None
        return self.segments[max(0, bisect_right(self._segment_starts, item.line) - 1)]

    def next_switch(self, step: int = 1) -> int | None:
        """Put the cursor on the first item of the next (``step`` -1: previous) segment, wrapping.

        Returns:
            The line of the switch, or None when the open session never switches.
        """
        switches = self._segment_starts[1:]
        here = self.current
        if not switches or here is None:
            return None
        if step > 0:
            line = next((x for x in switches if x > here.line), switches[0])
        else:
            line = next((x for x in reversed(switches) if x < here.line), switches[-1])
        self.move_to_line(line)
        return line

    def set_hit_terms(self, terms: dict[int, list[str]]) -> None:
        """Highlight these matched strings on the rows of these lines."""
        if terms != self.hit_terms:
            self.hit_terms = terms
            self._cache.clear()
            self.refresh()

    # ------------------------------------------------------------------ data

    def set_items(self, items: Sequence[Item], cursor: int = 0, *, keep_height: bool = False) -> None:
        """Show a new item sequence (no per-item work happens here).

        ``keep_height`` with no items keeps the scrollable height (and so the scrollbar) of
        the list shown before: a session opening next lays the screen out again only if its
        own rows need the scrollbar gone or back.
        """
        self.items = items
        self._cache.clear()
        self._markers.clear()
        set_virtual_height(self, len(items) if items or not keep_height else self.virtual_size.height)
        self.set_reactive(ItemList.cursor, max(0, min(cursor, len(items) - 1)))
        self.scroll_to(y=0, animate=False, immediate=True)
        self._scroll_cursor_visible()
        self.refresh()
        if items:
            self.post_message(ItemHighlighted(self.cursor))

    def clear(self, placeholder: str | None = None, *, keep_height: bool = False) -> None:
        """Show no items (with an explanation); see :meth:`set_items` for ``keep_height``."""
        if placeholder is not None:
            self.placeholder = placeholder
        self.set_items((), keep_height=keep_height)

    @property
    def current(self) -> Item | None:
        """The item under the cursor."""
        if 0 <= self.cursor < len(self.items):
            return self.items[self.cursor]
        return None

    def index_for_line(self, line: int) -> int | None:
        """The index of the item holding physical line ``line``."""
        return index_for_line(self.items, line)

    def move_to_line(self, line: int) -> bool:
        """Put the cursor on the item at ``line``; False if the list is empty."""
        idx = self.index_for_line(line)
        if idx is None:
            return False
        self.cursor = idx
        return True

    # ------------------------------------------------------------------ cursor

    def validate_cursor(self, value: int) -> int:
        if not self.items:
            return 0
        return max(0, min(value, len(self.items) - 1))

    def watch_cursor(self, old: int, new: int) -> None:
        self._cache_drop(old)
        self._cache_drop(new)
        self.refresh_line(old)
        self.refresh_line(new)
        self._scroll_cursor_visible()
        if self.items:
            self.post_message(ItemHighlighted(new))

    def _cache_drop(self, index: int) -> None:
        width = self.size.width
        for cur in (True, False):
            for foc in (True, False):
                self._cache.discard((index, cur, foc, width))

    def _scroll_cursor_visible(self) -> None:
        height = self.scrollable_content_region.height or self.size.height
        if height <= 0:
            return
        top = round(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_page_down(self) -> None:
        self.cursor += max(1, self.scrollable_content_region.height - 1)

    def action_page_up(self) -> None:
        self.cursor -= max(1, self.scrollable_content_region.height - 1)

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = len(self.items) - 1

    def action_drill(self) -> None:
        if self.items:
            self.post_message(ItemDrill(self.cursor))

    def action_back(self) -> None:
        self.post_message(FocusBack("items"))

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = round(self.scroll_y) + offset.y
        if 0 <= index < len(self.items):
            self.cursor = index

    def _on_focus(self, event: events.Focus) -> None:
        self._styles.clear()
        self._cache.clear()
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self._styles.clear()
        self._cache.clear()
        self.refresh()

    def style_changed(self) -> None:
        self._styles.clear()
        self._cache.clear()

    def _on_resize(self, event: events.Resize) -> None:
        self._cache.clear()
        self._scroll_cursor_visible()

    # ------------------------------------------------------------------ rendering

    def _part(self, name: str) -> Style:
        return self._styles.part(name)

    def _base(self) -> Style:
        return self._styles.base()

    def _cursor_style(self) -> Style:
        """The cursor row's style: its background, and a foreground readable on it (>= 4.5:1)."""

        def make() -> Style:
            raw, fg, bg = cursor_colours(self, self._base(), "item-list--cursor")
            return Style(color=fg.rich_color, bgcolor=bg.rich_color, bold=raw.bold)

        return self._styles.get("cursor", make)

    def render_line(self, y: int) -> Strip:
        base, width = self.paint()
        index = self.row_index(y)
        if not self.items:
            if y == 1:
                text = Text("  " + self.placeholder, style=self._part("item-list--empty"), end="")
                return self._strip(text, width, base)
            return self.blank_row()
        if index >= len(self.items):
            return self.blank_row()
        key = (index, index == self.cursor, self.has_focus, width)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        item = self.items[index]
        text = self._row(item, width)
        terms = self.hit_terms.get(item.line)
        if index == self.cursor:
            # One readable colour for the whole cursor row: part colours on the cursor
            # background fell to about 1:1. A search hit is underlined there.
            style = self._cursor_style()
            text = Text(text.plain, no_wrap=True, end="")
            if terms:
                mark_terms(text, terms, Style(underline=True))
        else:
            style = base
            if terms:
                mark_terms(text, terms, Style(reverse=True, bold=True))
        strip = self._strip(text, width, style)
        self._cache[key] = strip
        return strip

    def _strip(self, text: Text, width: int, style: Style) -> Strip:
        text.stylize_before(style)
        if text.cell_len > width:
            text.truncate(width, overflow="ellipsis")
        segments = list(text.render(self.app.console, end=""))
        return Strip(segments).adjust_cell_length(width, style).simplify()

    def _provider_style(self, provider: str) -> Style:
        """A provider's colour (its theme variable), readable on this list's background."""
        return provider_style(self.app.theme_variables, provider, self.background_colors[1]) + Style(bold=True)

    def line_width(self) -> int:
        """Cells of the line-number column: the digits of the session's last line."""
        return len(str(self.items[-1].line)) if self.items else 1

    def _row(self, item: Item, width: int = 200) -> Text:
        text = Text(no_wrap=True, end="")
        seg = self.segment_of(item)
        if seg is not None:
            style = self._styles.get(f"provider:{seg.provider}", lambda: self._provider_style(seg.provider))
            label = (
                f"▌{seg.provider[:SEGMENT_W].ljust(SEGMENT_W)}"
                if width >= SEGMENT_LABEL_MIN
                else seg.provider[:1].upper()
            )
            text.append(label, style=style)
            text.append(" ")
        text.append(str(item.line).rjust(self.line_width()), style=self._part("item-list--line"))
        text.append(" ")
        text.append(hms(item.time), style=self._part("item-list--time"))
        text.append(" ")
        text.append(item.kind[:KIND_W].ljust(KIND_W), style=self._part(kind_class(item.kind)))
        text.append(" ")
        if width >= ROLE_COLUMN_MIN:
            role = ROLE_ABBREV.get(item.role or "", clean(item.role or "", ROLE_W))
            text.append(role[:ROLE_W].ljust(ROLE_W), style=self._part("item-list--dim"))
            text.append(" ")
        if width >= ID_COLUMN_MIN:
            ident = ""
            if item.ids:
                ident = short_id(item.ids[0], 7, 4)
                if len(item.ids) > 1:
                    ident += f"+{len(item.ids) - 1}"
            text.append(ident[:ID_W].ljust(ID_W), style=self._part("item-list--id"))
            text.append(" ")
        mark = self._markers.get(item.index)
        if mark is None:
            mark = self._markers[item.index] = reasoning_marker(item)
        if mark:
            mstyle = {
                "visible": "item-list--visible",
                "encrypted": "item-list--encrypted",
                "redacted": "item-list--redacted",
            }.get(item.reasoning or "", "item-list--dim")
            text.append(mark, style=self._part(mstyle))
            text.append(" ")
        room = max(0, width - text.cell_len)
        text.append(preview(item, room + 1))
        return text
