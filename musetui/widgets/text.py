"""Small text helpers shared by the widgets (safe text, short ids, times, sizes and paths), and their Line-API base."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.strip import Strip

from musetui.core.safetext import escape_name, one_line, strip_controls


def clean(value: object, limit: int | None = None) -> str:
    """Transcript text as one safe line (see :func:`musetui.core.safetext.one_line`), cut to ``limit``."""
    text = value if isinstance(value, str) else str(value)
    if limit is not None and len(text) > limit * 4:
        text = text[: limit * 4]
    return _cut(one_line(text), limit)


def clean_name(value: object, limit: int | None = None) -> str:
    """A name (id, model, path) as one line, invisible characters shown (see :func:`musetui.core.safetext.escape_name`)."""
    text = value if isinstance(value, str) else str(value)
    if limit is not None and len(text) > limit * 4:
        text = text[: limit * 4]
    return _cut(escape_name(text), limit)


def _cut(text: str, limit: int | None) -> str:
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return text


def clean_block(value: str, limit: int = 200_000) -> str:
    """Transcript data as a safe multi-line block (controls stripped, size capped)."""
    text = value[:limit]
    text = strip_controls(text)
    if len(value) > limit:
        text += f"\n… ({len(value) - limit:,} more characters not shown)"
    return text


def safe(value: object, style: str = "", limit: int | None = None) -> Text:
    """A rich Text of transcript data: never parsed as markup, controls stripped."""
    return Text(clean(value, limit), style=style, no_wrap=limit is not None, end="")


def short_id(value: str | None, head: int = 8, tail: int = 4) -> str:
    """``01a05efc…734c``: enough of an id to tell siblings apart."""
    if not value:
        return "?"
    value = clean_name(value)
    if len(value) <= head + tail + 1:
        return value
    return f"{value[:head]}…{value[-tail:]}"


def hms(ts: float | None) -> str:
    """``22:01:03`` (UTC), or blanks when there is no time."""
    if ts is None:
        return "--:--:--"
    try:
        return datetime.fromtimestamp(ts, tz=UTC).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return "??:??:??"


def when(ts: float | None) -> str:
    """``09-01 22:01`` (UTC, month-day hour:minute), or blanks when there is no time."""
    if ts is None:
        return "--/-- --:--"
    try:
        return datetime.fromtimestamp(ts, tz=UTC).strftime("%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "??-?? ??:??"


def stamp(ts: float | None) -> str:
    """``2026-09-01 22:01:03Z`` (UTC), or ``?``."""
    if ts is None:
        return "?"
    try:
        return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return "?"


def human_size(n: int) -> str:
    """``1.2k``, ``34k``, ``1.5M``: compact byte counts for narrow columns."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def display_root(root: str) -> str:
    """A root as the user would write it (``~`` for the home directory)."""
    home = os.path.expanduser("~")
    if home and home != "/" and (root == home or root.startswith(home + os.sep)):
        return "~" + root[len(home) :]
    return root


def tail_path(path: str, limit: int) -> str:
    """The end of a long path, cut on the left: ``…/subagents/01a05efe…/session.jsonl``."""
    text = clean_name(path)
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


class LineView(ScrollView):
    """A ScrollView drawn with the Line API (one Strip per visible row) that paints its own blank rows.

    Shared by the Line-API widgets (the item list, the panes): the base style and the width are
    resolved once per paint, not once per row (``rich_style`` walks every ancestor's CSS); rows
    past the content are painted in the base style (Textual 6 leaves that to the widget); and a
    change of CSS drops what a subclass cached from the old styles (:meth:`style_changed`).
    """

    _paint: tuple[Style, int] | None = None

    def paint_width(self) -> int:
        """The width a row is painted at (the content region, inside the scrollbar)."""
        return self.scrollable_content_region.width or self.size.width

    def paint(self) -> tuple[Style, int]:
        """(base style, width) of the paint under way, or of one now when a row is drawn alone."""
        return self._paint if self._paint is not None else (self.rich_style, self.paint_width())

    def render_lines(self, crop: Region) -> list[Strip]:
        self._paint = (self.rich_style, self.paint_width())
        try:
            return super().render_lines(crop)
        finally:
            self._paint = None

    def blank_row(self) -> Strip:
        """A row with nothing on it, in the base style."""
        base, width = self.paint()
        return Strip.blank(width, base)

    def row_index(self, y: int) -> int:
        """The content row shown at screen row ``y``."""
        return round(self.scroll_y) + y

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.style_changed()
        self.refresh()

    def style_changed(self) -> None:
        """Drop whatever was cached from the old styles (nothing here)."""
