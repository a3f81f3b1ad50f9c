"""Core data types shared by the sources, the fingerprint engine, the index and the UI.

Nothing here imports Textual: the headless core (CLI, library users) depends on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

from musetui.core._pickling import reduce_by_fields
from musetui.core.safetext import json_name

if TYPE_CHECKING:
    from musetui.core.reasons import Reason

Provider = Literal[
    "openai",
    "anthropic",
    "meta",
    "moonshot",
    "google",
    "deepseek",
    "xai",
    "groq",
    "mistral",
    "alibaba",
    "zhipu",
    "amazon",
    "unknown",
]
Host = Literal["azure", "bedrock", "vertex", "fireworks"]
#: Routers a response can pass through (the scan record's ``via``).
Via = Literal["openrouter", "litellm", "portkey", "helicone", "huggingface", "snowflake"]
PROVIDERS: tuple[str, ...] = get_args(Provider)
HOSTS: tuple[str, ...] = get_args(Host)
VIAS: tuple[str, ...] = get_args(Via)
FLAGS: tuple[str, ...] = (
    "declared-mismatch",
    "time-mismatch",
    "imitation-id",
    "mixed-providers",
    "truncated-blob",
    "provider-switch",
    "outlier",
)

#: The scan record's ``usage`` fields: input (prompt, cached included), output, cached input, reasoning output.
USAGE_FIELDS: tuple[str, ...] = ("input", "output", "cached", "reasoning")
#: The ``usage`` of a transcript that records no tokens (copied per record).
_NO_USAGE: dict[str, int | None] = dict.fromkeys(USAGE_FIELDS)

ItemKind = Literal[
    "message",
    "reasoning",
    "tool_call",
    "tool_result",
    "meta",
    "usage",
    "event",
    "summary",
    "unknown",
]


def iso(ts: float | None) -> str | None:
    """Render unix seconds as ISO-8601 UTC with a trailing Z (None stays None)."""
    text = _ISO.get(ts)  # (a record names each of its times twice or more: its own, its segments')
    if text is not None or ts is None:
        return text
    if type(ts) is float and 0.0 <= ts < _LAST_HOUR:
        # datetime.fromtimestamp's own steps: the fraction to microseconds, rounded half to even
        # (a carry moves to the next second), then the hour's text (remembered), the minutes and seconds
        frac, whole = math.modf(ts)
        us = round(frac * 1e6)
        if us >= 1000000:
            whole += 1.0
            us -= 1000000
        hour, rem = divmod(int(whole), 3600)
        head = _HOURS.get(hour)
        if head is None:
            head = _hour_text(hour)
        minute, second = divmod(rem, 60)
        text = f"{head}{_D2[minute]}:{_D2[second]}.{_D3[us // 1000]}Z"
    else:
        text = _iso_text(ts)
        if text is None:
            return None
    if len(_ISO) >= ISO_MEMO_MAX:
        _ISO.clear()
    _ISO[ts] = text
    return text


def _hour_text(hour: int) -> str:
    """``YYYY-MM-DDTHH:`` of an hour since the epoch (remembered)."""
    text = _iso_text(hour * 3600.0)
    assert text is not None  # (an hour below _LAST_HOUR renders)
    if len(_HOURS) >= ISO_MEMO_MAX:
        _HOURS.clear()
    head = _HOURS[hour] = text[:14]
    return head


def _iso_text(ts: float) -> str | None:
    """:func:`iso` of any time, by :meth:`datetime.fromtimestamp` (None: not a representable time)."""
    try:
        dt = datetime.fromtimestamp(ts, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    # dt.isoformat(timespec="milliseconds") with Z for +00:00, from tables (a third of its cost)
    y = dt.year
    d2 = _D2
    text = (
        f"{y if y >= 1000 else f'{y:04d}'}-{d2[dt.month]}-{d2[dt.day]}T{d2[dt.hour]}:{d2[dt.minute]}:"
        f"{d2[dt.second]}.{_D3[dt.microsecond // 1000]}Z"
    )
    return text


def _round3(x: float) -> float:
    """``round(x, 3)``, remembered per value (confidences take few values; ``round`` to digits formats the float)."""
    if type(x) is not float or not x:  # (an int rounds to an int; -0.0 == 0.0 as a key)
        return round(x, 3)
    got = _ROUND3.get(x)
    if got is None:
        if len(_ROUND3) >= ISO_MEMO_MAX:
            _ROUND3.clear()
        got = _ROUND3[x] = round(x, 3)
    return got


_ROUND3: dict[float, float] = {}
#: The times :func:`iso` rendered last, by value (at most :data:`ISO_MEMO_MAX`; past it, the memo starts again).
_ISO: dict[float | None, str] = {}
ISO_MEMO_MAX = 1024
#: ``YYYY-MM-DDTHH:`` per hour since the epoch (at most :data:`ISO_MEMO_MAX`).
_HOURS: dict[int, str] = {}
#: The first time :func:`iso` renders by :meth:`datetime.fromtimestamp` alone (year 10000 and past it).
_LAST_HOUR = 253402300800.0 - 3600.0


def _fmt_delta(delta: float) -> str:
    if abs(delta) < 1:
        return "0 s"
    sign = "+" if delta > 0 else "−"
    a = abs(delta)
    if a < 120:
        return f"{sign}{a:.0f} s"
    if a < 7200:
        return f"{sign}{a / 60:.1f} min"
    if a < 172800:
        return f"{sign}{a / 3600:.1f} h"
    return f"{sign}{a / 86400:.1f} d"


def fmt_gap(t: float, ref: float) -> str:
    """The time from ``ref`` to ``t`` as every view shows it (``0 s``, ``+1 s``, ``−19.0 d``).

    Times are shown cut to the whole second (``22:01:43`` for 22:01:43.9), so the gap is taken
    between the cut times: an id minted at 22:01:44 beside a line recorded at 22:01:43.2 reads
    ``+1 s``, as the two clocks on screen do, not ``0 s``. This is the one rule for shown deltas.
    """
    return _fmt_delta(float(math.floor(t) - math.floor(ref)))


_D2 = [f"{i:02d}" for i in range(100)]
_D3 = [f"{i:03d}" for i in range(1000)]


def parse_time(value: Any) -> float | None:
    """Turn a transcript time (RFC 3339 string, unix s, ms or µs number) into unix seconds."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        v = float(value)
        if v <= 0:
            return None
        if v > 1e17:  # nanoseconds
            return v / 1e9
        if v > 1e14:  # microseconds (Muse recorded_at)
            return v / 1e6
        if v > 1e11:  # milliseconds
            return v / 1e3
        return v
    if isinstance(value, str) and 10 <= len(value) <= 40 and value[:4].isdigit():
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.timestamp()
    return None


@dataclass(slots=True)
class Evidence:
    """One decoded fingerprint, located in the transcript.

    The eight public fields are exactly DESIGN.md's evidence record; `count` and
    `time`/`delta_s` are kept for scoring and display.
    """

    __reduce__ = reduce_by_fields

    detector: str
    provider: str | None
    host: str | None
    weight: float
    line: int
    field: str
    value: str
    detail: str
    count: int = 1
    time: float | None = None
    delta_s: float | None = None
    tag: str = "verified"

    def record(self) -> dict[str, Any]:
        """The contract form used in `scan --json`."""
        w = self.weight
        r3 = _ROUND3.get(w) if type(w) is float else None  # (_round3, its memo read inline: a call per evidence)
        return {
            "detector": self.detector,
            "provider": self.provider,
            "host": self.host,
            "weight": r3 if r3 is not None else _round3(w),
            "line": self.line,
            "field": self.field,
            "value": self.value,
            "detail": self.detail,
        }


@dataclass(slots=True)
class Diagnostic:
    """A problem found while walking or scanning, located as precisely as possible."""

    __reduce__ = reduce_by_fields

    path: str
    line: int  # 0 when it concerns the whole file
    message: str

    def text(self) -> str:
        """``path:line: message`` (line omitted when 0)."""
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


@dataclass(slots=True)
class Malformed:
    """A line that could not be read as JSON, with the reason."""

    __reduce__ = reduce_by_fields

    line: int
    offset: int
    reason: str


@dataclass(slots=True)
class Segment:
    """A maximal run of items whose own verdicts agree (DESIGN.md's ``segments``; see fingerprints.segments)."""

    __reduce__ = reduce_by_fields

    first_line: int
    last_line: int
    items: int
    provider: str
    host: str | None = None
    started_at: float | None = None
    ended_at: float | None = None

    def record(self) -> dict[str, Any]:
        """The contract form used in `scan --json`."""
        return {
            "first_line": self.first_line,
            "last_line": self.last_line,
            "items": self.items,
            "provider": self.provider,
            "host": self.host,
            "started_at": iso(self.started_at),
            "ended_at": iso(self.ended_at),
        }


@dataclass(slots=True)
class Attribution:
    """The verdict for one session."""

    __reduce__ = reduce_by_fields

    provider: str = "unknown"
    host: str | None = None
    confidence: float = 0.0
    via: str | None = None
    flags: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    summary: str = ""
    #: Why each flag was raised (see :mod:`musetui.core.reasons`): every view prints these sentences.
    reasons: list[Reason] = field(default_factory=list)


@dataclass(slots=True)
class SessionSummary:
    """What the index keeps per session: enough for the tree, the scan record and outliers."""

    __reduce__ = reduce_by_fields

    path: str  # relative to the root it was found under, with '/' separators
    abspath: str
    root: str
    format: str
    format_rule: str
    session_id: str | None = None
    parent_session_id: str | None = None
    declared_provider: str | None = None
    declared_model: str | None = None
    items: int = 0
    malformed_lines: int = 0
    malformed: list[Malformed] = field(default_factory=list)
    started_at: float | None = None
    ended_at: float | None = None
    size: int = 0
    mtime_ns: int = 0
    inode: int = 0
    device: int = 0
    read_bytes: int = 0
    attribution: Attribution = field(default_factory=Attribution)
    notes: list[str] = field(default_factory=list)
    label: str | None = None  # e.g. Codex agent_nickname, Claude agent id
    models: dict[str, int] = field(default_factory=dict)  # every declared model seen, with counts
    #: A one-line title: Claude Code's ``summary``, Codex's thread name, else the first user message.
    title: str | None = None
    #: Token totals ``{input, output, cached, reasoning}`` where the transcript records them (None: never recorded).
    usage: dict[str, int | None] | None = None
    #: A light summary read from the cache: evidence, malformed lines and notes are not
    #: loaded; its scan record (JSON, before fleet outliers) is kept packed (see :attr:`stored_record`).
    record_z: bytes | None = None
    #: The runs of agreeing item verdicts (empty until the scan concludes, or in a light summary).
    segments: list[Segment] = field(default_factory=list)

    @property
    def stored_record(self) -> bytes | None:
        """A light summary's scan record as JSON text, before fleet outliers (None for a full summary)."""
        if self.record_z is None:
            return None
        from musetui.core.packed import unpack_record

        return unpack_record(self.record_z)

    @property
    def root_dir(self) -> str:
        """The directory ``path`` is relative to (``root``, or its directory when the root is this file)."""
        if self.root == self.abspath:
            import os

            return os.path.dirname(self.root)
        return self.root

    @property
    def key(self) -> str:
        """A stable identity for the session within one scan."""
        return self.abspath

    @property
    def muse_dir_id(self) -> str | None:
        """A Muse session's directory name (``…/<name>/session.jsonl``), which its subagents give as their parent's id."""
        if self.format != "muse":
            return None
        import os

        head, name = os.path.split(self.abspath)  # (not the root-relative path: the same id under any root)
        return (os.path.basename(head) or None) if name == "session.jsonl" else None

    def record(self) -> dict[str, Any]:
        """The scan record of DESIGN.md, field for field."""
        a = self.attribution
        if self.record_z is not None:
            import orjson

            rec: dict[str, Any] = orjson.loads(self.stored_record or b"")
            rec["flags"] = list(a.flags)
            extra = [e.record() for e in a.evidence if e.detector == "outlier"]
            rec["evidence"] = extra + [e for e in rec["evidence"] if e["detector"] != "outlier"]
            return rec
        evidence, segments, usage = a.evidence, self.segments, self.usage
        root, path = self.root_dir, self.path
        return {  # (json_name keeps an ASCII name as it is)
            "root": root if root.isascii() else json_name(root),
            "path": path if path.isascii() else json_name(path),
            "session_id": self.session_id,
            "parent_session_id": self.parent_session_id,
            "format": self.format,
            "declared_provider": self.declared_provider,
            "declared_model": self.declared_model,
            "provider": a.provider,
            "host": a.host,
            "via": a.via,
            "confidence": _round3(a.confidence),
            "flags": list(a.flags),
            "evidence": [e.record() for e in evidence] if evidence else [],
            "items": self.items,
            "malformed_lines": self.malformed_lines,
            "started_at": iso(self.started_at),
            "ended_at": iso(self.ended_at),
            "segments": [g.record() for g in segments] if segments else [],
            "usage": dict(usage) if usage is not None else _NO_USAGE.copy(),
        }


@dataclass(slots=True)
class Item:
    """One transcript item, parsed on demand when a session is opened."""

    index: int
    line: int  # 1-based physical line of the item's (first) record
    offset: int  # byte offset of that line
    length: int  # byte length of the line(s), without the newline
    kind: str
    role: str | None = None
    time: float | None = None
    name: str | None = None  # tool name, event kind …
    ids: list[str] = field(default_factory=list)
    text: str = ""
    reasoning: str | None = None  # visible | encrypted | redacted | empty-signature
    subkind: str | None = None  # the format's own type (e.g. Codex payload.type)
    lines: int = 1  # physical lines merged into this item
    raw: Any = None  # the parsed JSON of the line(s)
    merged: list[int] = field(default_factory=list)  # 1-based lines merged in after ``line``
