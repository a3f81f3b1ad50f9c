"""Small text helpers shared by the widgets: safe text, short ids, times, sizes and paths."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from rich.text import Text

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
