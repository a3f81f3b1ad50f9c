"""What every format adapter provides, and small helpers for reading parsed records.

Adapters see records in two shapes: during a scan, lazy ``simdjson`` proxies (read
with :func:`dig`, never kept past the call); when a session is opened, plain dicts
from ``orjson``. :func:`dig` works on both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from musetui.core.drift import Kinds, Watch
from musetui.core.model import USAGE_FIELDS, Item, SessionSummary, parse_time

#: Zone of a record: model output (provenance) or quoted input (prompts, tool results).
ZONE_MODEL = 0
ZONE_QUOTED = 1


def file_stem(path: str) -> str:
    """A file's name without its extension (nor a ``.gz`` after it): ``c.yaml.gz`` -> ``c``."""
    name = os.path.basename(path)
    if name[-3:].lower() == ".gz":
        name = name[:-3]
    return os.path.splitext(name)[0]


def dig(doc: Any, *keys: str) -> Any:
    """Follow ``keys`` through nested mappings; None when any step is missing or not a mapping."""
    try:
        for key in keys:
            doc = doc.get(key)
    except (AttributeError, TypeError, ValueError):
        return None
    return doc


def text_of(value: Any) -> str | None:
    """The value if it is a string, else None."""
    return value if isinstance(value, str) else None


@dataclass(slots=True)
class Record:
    """One parsed record (usually one line) of a session, for building items."""

    line: int
    offset: int
    length: int
    obj: Any


class Observer:
    """Collects summary fields while a file is scanned, one record at a time.

    Subclasses override :meth:`observe`; it returns the record's raw time value and zone.
    The summary's ``started_at``/``ended_at`` come from the first and last record times.
    """

    #: Checks every record's kind and keys against the format's known tables (None: not checked).
    watch: Watch | None = None
    #: The lines of records that continue an earlier record's item (not items of their own), in order.
    merged_lines: Sequence[int] = ()

    def __init__(self, summary: SessionSummary) -> None:
        self.summary = summary

    def observe(self, doc: Any, line: int) -> tuple[Any, int]:
        """Read what the summary needs from one record; return (raw time, zone)."""
        return None, ZONE_MODEL

    def finish(self) -> None:
        """Called once after the last record."""

    def raw_finish(self, data: bytes) -> None:
        """Called once with the file's bytes, for counts cheaper to take from raw bytes."""

    def offer_title(self, text: Any, *, named: bool = False) -> None:
        """Set the session title: a name the harness gave (``named``) wins over the first user message."""
        if not isinstance(text, str) or not text.strip():
            return
        if named or self.summary.title is None:
            self.summary.title = preview(text, 120)

    def add_usage(self, input: Any = None, output: Any = None, cached: Any = None, reasoning: Any = None) -> None:
        """Add token counts to the session's usage; a count the record does not hold (not an int) stays unknown."""
        # (unrolled: Muse adds a model call's counts from most of its lines; a loop over name/value pairs
        # cost ~11 k instructions a call, this ~3 k)
        has_i = type(input) is int and input >= 0
        has_o = type(output) is int and output >= 0
        has_c = type(cached) is int and cached >= 0
        has_r = type(reasoning) is int and reasoning >= 0
        if not (has_i or has_o or has_c or has_r):
            return
        s = self.summary
        usage = s.usage
        if usage is None:
            usage = s.usage = dict.fromkeys(USAGE_FIELDS)
        if has_i:
            before = usage["input"]
            usage["input"] = input if before is None else before + input
        if has_o:
            before = usage["output"]
            usage["output"] = output if before is None else before + output
        if has_c:
            before = usage["cached"]
            usage["cached"] = cached if before is None else before + cached
        if has_r:
            before = usage["reasoning"]
            usage["reasoning"] = reasoning if before is None else before + reasoning

    def declare_model(self, model: str | None) -> None:
        """Count a declared model; the first one seen becomes ``declared_model``."""
        if not model or model == "<synthetic>":
            return
        s = self.summary
        s.models[model] = s.models.get(model, 0) + 1
        if s.declared_model is None:
            s.declared_model = model


def record_time(value: Any) -> float | None:
    """Parse a raw record time (kept raw during scans to stay cheap)."""
    return parse_time(value)


def preview(text: str, limit: int = 240) -> str:
    """A single-line preview of ``text`` for lists."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


#: Nesting below which item builders stop descending (orjson accepts up to 1024 levels).
MAX_DEPTH = 200


def json_text(value: Any) -> str:
    """``value`` as compact JSON text, whatever its depth (levels past :data:`MAX_DEPTH` become ``"…"``)."""
    import orjson

    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson stops at 255 levels (and refuses non-JSON values)
        return orjson.dumps(_capped(value, MAX_DEPTH), default=str).decode()


def as_text(value: Any) -> str:
    """A JSON value as display text: strings as they are, other values as JSON (any depth)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool | int | float):
        return str(value)
    return json_text(value)


def _capped(value: Any, depth: int) -> Any:
    """A copy of ``value`` with everything nested deeper than ``depth`` replaced by ``"…"``."""
    if isinstance(value, dict):
        return {str(k): _capped(v, depth - 1) for k, v in value.items()} if depth > 0 else "…"
    if isinstance(value, list):
        return [_capped(v, depth - 1) for v in value] if depth > 0 else "…"
    return value


def content_text(content: Any, depth: int = 0) -> str:
    """Flatten message content (a string, or a list of typed blocks) to text."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list) and depth < MAX_DEPTH:
        for block in content:
            if isinstance(block, dict):
                for key in ("text", "thinking", "output_text", "input_text", "content"):
                    v = block.get(key)
                    if isinstance(v, str):
                        parts.append(v)
                        break
                    if isinstance(v, list):
                        parts.append(content_text(v, depth + 1))
                        break
            elif isinstance(block, str):
                parts.append(block)
    return "\n".join(p for p in parts if p)


def new_item(rec: Record, index: int, kind: str, **kw: Any) -> Item:
    """Build an :class:`Item` located at ``rec``."""
    return Item(index=index, line=rec.line, offset=rec.offset, length=rec.length, kind=kind, raw=rec.obj, **kw)


class Probe:
    """Cheap byte-level questions about one raw line, so most lines are never observed.

    The scanner validates every line, but calls the (slower) :class:`Observer` only on
    lines :meth:`wants` says carry summary fields; evidence lines get their time and
    zone from :meth:`time` and :meth:`zone` without a second parse.
    """

    observe_all = True
    #: The bytes :meth:`time` looks for, just before a line's time value (empty: it reads no time).
    time_key = b""
    #: Whether a file's lines have the time key at one place (the scan then cuts their times there).
    time_in_place = False
    #: Kinds (as the drift watch reads them) of records :meth:`glean` never asks to observe, nor takes anything
    #: from: the scan passes them by without calling it.
    skip: frozenset[Kinds] = frozenset()

    def wants(self, line: bytes) -> bool:
        """Whether the observer must see this record."""
        return True

    def glean(self, line: bytes, observer: Any, kinds: Kinds | None = None) -> bool:
        """Take what the summary needs straight from the bytes; True when a full observe is still needed.

        ``observer`` is the observer of the probe's own format (so each format types it as its own);
        ``kinds``: the record's kind and nested kind as the format's drift watch read them (None: not read).
        """
        return self.wants(line)

    def zone(self, line: bytes) -> int:
        """Model output or quoted input, from the raw line."""
        return ZONE_MODEL

    def time(self, line: bytes) -> Any:
        """The raw recorded time of the line (None when unknown)."""
        return None


def find_string_value(line: bytes, key: bytes, limit: int = -1) -> bytes | None:
    """The raw string value of ``"key":"…"`` in ``line`` (first occurrence), or None."""
    j = line.find(key, 0, limit) if limit > 0 else line.find(key)
    if j < 0:
        return None
    j += len(key)
    k = line.find(b'"', j)
    return line[j:k] if k >= 0 else None


def find_number_value(line: bytes, key: bytes) -> int | None:
    """The integer value of ``"key":123`` in ``line`` (first occurrence), or None."""
    j = line.find(key)
    if j < 0:
        return None
    m = _DIGITS(line, j + len(key))  # (one match: a loop over the digits cost ~1 k instructions a digit)
    return int(m[0]) if m is not None else None


#: ASCII digits (a bytes pattern's ``\d`` is ``[0-9]``).
_DIGITS = re.compile(rb"\d+").match


def as_dict(value: Any) -> dict[str, Any]:
    """The value if it is a dict, else an empty dict (typed access to parsed JSON)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """The value if it is a list, else an empty list."""
    return value if isinstance(value, list) else []
