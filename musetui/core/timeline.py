"""Sessions over time (``musetui timeline``): buckets per provider and host, and first-seen events.

The input is a list of :class:`Row`: one per session, or, for a session whose provider or
host changes, one per segment (its start time and first line, from the record's
``segments``). Everything else is computed here, once: the
UTC buckets, the sessions and items per attributed provider and host in each, and the
first-seen events (the first row of each provider, host and declared-model combination).
The views (the text chart, ``--json``) only format a :class:`Timeline`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

By = Literal["hour", "day", "week"]
BYS: tuple[By, ...] = ("hour", "day", "week")
#: Bucket lengths in seconds.
SECONDS: dict[str, int] = {"hour": 3600, "day": 86400, "week": 7 * 86400}
#: 1970-01-05, the first Monday after the epoch: weeks start on Mondays, 00:00 UTC.
_MONDAY = 4 * 86400
#: The default bucket is chosen from the span of the dated rows: hours below this, then days.
HOUR_SPAN_MAX = 2 * 86400
DAY_SPAN_MAX = 90 * 86400

Key = tuple[str, str | None]  # (provider, host)


@dataclass(frozen=True, slots=True)
class Row:
    """One stretch of attributed work: a session, or one of its segments.

    ``root`` is the directory ``path`` is relative to (a scan record's ``root``); ``line`` is
    the first line of the stretch; ``time`` is when it started (unix seconds, None when the
    transcript records no time); ``key`` identifies the session for the app (its abspath).
    """

    time: float | None
    provider: str
    host: str | None
    declared_model: str | None
    root: str
    path: str
    line: int
    items: int
    key: str = ""


@dataclass(slots=True)
class Bucket:
    """One time bucket (``start`` None: the rows without a time) and its counts per provider and host."""

    start: float | None
    by: By
    counts: dict[Key, list[int]] = field(default_factory=dict)  # key -> [sessions, items]

    @property
    def sessions(self) -> int:
        """Rows in this bucket."""
        return sum(c[0] for c in self.counts.values())

    @property
    def items(self) -> int:
        """Items of the rows in this bucket."""
        return sum(c[1] for c in self.counts.values())

    def ordered(self) -> list[tuple[Key, int, int]]:
        """``(key, sessions, items)``, most sessions first, then by provider and host."""
        return sorted(((k, c[0], c[1]) for k, c in self.counts.items()), key=lambda t: (-t[1], t[0][0], t[0][1] or ""))

    def record(self) -> dict[str, Any]:
        """The inner object of ``{"bucket": ...}`` (docs/cli.md: "A timeline")."""
        end = None if self.start is None else self.start + SECONDS[self.by]
        return {
            "start": iso_utc(self.start),
            "end": iso_utc(end),
            "by": self.by,
            "sessions": self.sessions,
            "items": self.items,
            "providers": [{"provider": k[0], "host": k[1], "sessions": n, "items": i} for k, n, i in self.ordered()],
        }


@dataclass(frozen=True, slots=True)
class FirstSeen:
    """The first row of one (provider, host, declared model) combination."""

    row: Row
    bucket: float | None

    def record(self) -> dict[str, Any]:
        """The inner object of ``{"first_seen": ...}`` (docs/cli.md: "A timeline")."""
        from musetui.core.safetext import json_name

        r = self.row
        return {
            "provider": r.provider,
            "host": r.host,
            "declared_model": r.declared_model,
            "time": iso_utc(r.time),
            "bucket": iso_utc(self.bucket),
            "root": json_name(r.root),
            "path": json_name(r.path),
            "line": r.line,
        }


@dataclass(slots=True)
class Timeline:
    """Buckets (non-empty ones, oldest first, the undated last) and first-seen events (oldest first)."""

    by: By
    chosen: bool  # True when ``by`` was chosen from the span, not given
    span: float | None  # seconds from the first dated row to the last
    first: float | None  # the first dated row's time
    buckets: list[Bucket]
    first_seen: list[FirstSeen]
    keys: list[Key]  # every (provider, host), most sessions first

    @property
    def sessions(self) -> int:
        """Rows in every bucket."""
        return sum(b.sessions for b in self.buckets)

    @property
    def items(self) -> int:
        """Items in every bucket."""
        return sum(b.items for b in self.buckets)

    def dated(self) -> list[Bucket]:
        """The buckets that have a start time."""
        return [b for b in self.buckets if b.start is not None]


def iso_utc(ts: float | None) -> str | None:
    """``ts`` as the scan records write times (``2026-09-01T22:00:00.000Z``), None when it has none."""
    from musetui.core.model import iso

    return iso(ts)


def _valid(ts: float | None) -> float | None:
    """``ts`` when it is a time a calendar can show (finite, years 1..9998), else None."""
    if ts is None or not math.isfinite(ts):
        return None
    try:
        datetime.fromtimestamp(ts, UTC) + timedelta(days=8)
    except (OverflowError, OSError, ValueError):
        return None
    return ts


def bucket_start(ts: float, by: By) -> float:
    """The start of the UTC bucket holding ``ts``: the hour, the day, or the week from Monday 00:00."""
    size = SECONDS[by]
    offset = _MONDAY if by == "week" else 0
    return math.floor((ts - offset) / size) * size + offset


def choose_by(span: float | None) -> By:
    """The default bucket for a span of ``span`` seconds: hour under 2 days, day under 90 days, else week."""
    if span is None or span < HOUR_SPAN_MAX:
        return "hour"
    return "day" if span < DAY_SPAN_MAX else "week"


def _first_key(r: Row) -> tuple[int, float, str, str, int]:
    """Which row of a combination comes first: the earliest dated one, then by root, path and line."""
    return (0 if r.time is not None else 1, r.time or 0.0, r.root, r.path, r.line)


def build(rows: Iterable[Row], by: By | None = None) -> Timeline:
    """The timeline of ``rows``: per-bucket counts and first-seen events.

    Args:
        rows: the stretches to count (a row's items all count in the bucket it starts in).
        by: the bucket; None chooses it from the span (:func:`choose_by`).

    Returns:
        The timeline, its buckets sparse (only those holding a row).
    """
    rows = [r if _valid(r.time) is not None or r.time is None else _undated(r) for r in rows]
    times = [r.time for r in rows if r.time is not None]
    span = (max(times) - min(times)) if times else None
    chosen = by is None
    use: By = choose_by(span) if by is None else by
    buckets: dict[float | None, Bucket] = {}
    firsts: dict[tuple[str, str | None, str | None], Row] = {}
    totals: dict[Key, int] = {}
    for r in rows:
        start = None if r.time is None else bucket_start(r.time, use)
        b = buckets.get(start)
        if b is None:
            b = buckets[start] = Bucket(start, use)
        key = (r.provider, r.host)
        c = b.counts.setdefault(key, [0, 0])
        c[0] += 1
        c[1] += r.items
        totals[key] = totals.get(key, 0) + 1
        combo = (r.provider, r.host, r.declared_model)
        old = firsts.get(combo)
        if old is None or _first_key(r) < _first_key(old):
            firsts[combo] = r
    order = sorted(buckets.values(), key=lambda b: (b.start is None, b.start or 0.0))
    events = [FirstSeen(r, None if r.time is None else bucket_start(r.time, use)) for r in firsts.values()]
    events.sort(key=lambda e: (_first_key(e.row), e.row.provider, e.row.host or "", e.row.declared_model or ""))
    keys = sorted(totals, key=lambda k: (-totals[k], k[0], k[1] or ""))
    return Timeline(use, chosen, span, min(times) if times else None, order, events, keys)


def _undated(r: Row) -> Row:
    """``r`` without its time (a time no calendar can show counts as none)."""
    return Row(None, r.provider, r.host, r.declared_model, r.root, r.path, r.line, r.items, r.key)


def rows_from_sessions(sessions: Iterable[Any], names: dict[str, str] | None = None) -> list[Row]:
    """One row per session (:class:`~musetui.core.model.SessionSummary`): its start, line 1, its items.

    A session with more than one segment gives a row per segment instead: its provider, host,
    start, first line and items (so a switched session counts once for each provider it used).

    Args:
        sessions: the indexed sessions.
        names: absolute root directory -> the root as the user gave it (the rows' ``root``).
    """
    names = names or {}
    out = []
    for s in sessions:
        a = s.attribution
        root = names.get(s.root_dir, s.root_dir)
        segs = _switched(s)
        if segs is None:
            out.append(
                Row(s.started_at, a.provider or "unknown", a.host, s.declared_model, root, s.path, 1, s.items, s.key)
            )
            continue
        for g in segs:
            t = g.started_at if g.started_at is not None else s.started_at
            out.append(Row(t, g.provider, g.host, s.declared_model, root, s.path, g.first_line, g.items, s.key))
    return out


def _switched(s: Any) -> list[Any] | None:
    """The segments of a session that has more than one (read from its stored record only when it may)."""
    if not s.segments:
        rec = s.stored_record
        if rec is None or b'},{"first_line":' not in rec:  # (one segment at most: the record is not parsed)
            return None
    from musetui.core.segment_read import segments_of

    segs = segments_of(s)
    return segs if len(segs) > 1 else None


_ROW_FIELDS = ("time", "provider", "host", "declared_model", "root", "path", "line", "items", "key")
#: The stored rows' one key (the result cache keeps JSON records).
_BLOB_KEY = "timeline_rows"


def rows_blob(rows: Sequence[Row]) -> bytes | None:
    """``rows`` for the result cache: one record, ``{"timeline_rows": [...]}``, each row the array of :data:`_ROW_FIELDS`.

    None when a name cannot be written as JSON. One record, not a line per row of named fields:
    a warm ``timeline`` reads it in one ``orjson.loads``.
    """
    import orjson

    try:
        return orjson.dumps({_BLOB_KEY: [[getattr(r, f) for f in _ROW_FIELDS] for r in rows]})
    except TypeError:  # (a name that is not UTF-8: not cached, read from the index each time)
        return None


def _row_ok(
    t: object, p: object, h: object, m: object, root: object, path: object, ln: object, items: object, key: object
) -> bool:
    """Whether one stored row has the types a :class:`Row` holds."""
    return (
        (t is None or type(t) in (int, float))
        and type(p) is str
        and type(root) is str
        and type(path) is str
        and type(key) is str
        and type(ln) is int
        and type(items) is int
        and (h is None or type(h) is str)
        and (m is None or type(m) is str)
    )


def rows_from_blob(blob: bytes) -> list[Row] | None:
    """The rows :func:`rows_blob` wrote, or None when the blob is not such rows (another layout, or damaged)."""
    import orjson

    try:
        stored = orjson.loads(blob)
    except orjson.JSONDecodeError:
        return None
    stored = stored.get(_BLOB_KEY) if type(stored) is dict else None
    if type(stored) is not list:
        return None
    width = len(_ROW_FIELDS)
    out = []
    for v in stored:
        if type(v) is not list or len(v) != width or not _row_ok(*v):
            return None
        out.append(Row(*v))
    return out


def json_lines(t: Timeline) -> Iterator[bytes]:
    """``timeline --json``: one ``{"bucket": ...}`` per bucket, then one ``{"first_seen": ...}`` per event."""
    from musetui.core.diagnostics import record_json

    for b in t.buckets:
        yield record_json({"bucket": b.record()})
    for e in t.first_seen:
        yield record_json({"first_seen": e.record()})


# ---------------------------------------------------------------- glyphs and labels


def key_label(key: Key) -> str:
    """``openai/azure``, ``meta``."""
    return key[0] + (f"/{key[1]}" if key[1] else "")


def glyphs(keys: Sequence[Key]) -> dict[Key, str]:
    """One distinct glyph per (provider, host), for charts that must not depend on colour.

    A provider's initial in capitals comes first (``O`` openai); a hosted provider takes a
    letter of its host first (``Z`` openai/azure when ``A`` is taken); then the provider's
    other letters, then lower case, then any letter or digit; ``unknown`` is ``?``.
    """
    out: dict[Key, str] = {}
    used: set[str] = set()
    spare = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    for key in keys:
        provider, host = key
        cands: list[str] = ["?"] if provider == "unknown" and not host else []
        letters = list(host) if host else [provider[:1]]
        cands += [c.upper() for c in letters] + [c.upper() for c in provider]
        cands += [c.lower() for c in [*letters, *provider]] + list(spare)
        g = next((c for c in cands if c.isascii() and (c.isalnum() or c == "?") and c not in used), "#")
        used.add(g)
        out[key] = g
    return out


def bucket_label(start: float | None, by: By) -> str:
    """``2026-09-01 22:00`` (hour), ``2026-09-01`` (day, and a week by its Monday), ``undated``."""
    if start is None:
        return "undated"
    dt = datetime.fromtimestamp(start, UTC)
    return dt.strftime("%Y-%m-%d %H:%M") if by == "hour" else dt.strftime("%Y-%m-%d")


def minute_label(ts: float | None) -> str:
    """``2026-09-01 22:01`` (UTC, cut to the minute), ``undated``."""
    if ts is None:
        return "undated"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M")


def span_text(span: float | None) -> str:
    """``2h 42m``, ``3d 4h``, ``2y 31d``: a span, roughly."""
    if span is None:
        return "no times"
    s = int(span)
    if s < 3600:
        return f"{s // 60}m {s % 60}s"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60}m"
    if s < 365 * 86400:
        return f"{s // 86400}d {s % 86400 // 3600}h"
    return f"{s // (365 * 86400)}y {s % (365 * 86400) // 86400}d"


def bar_cells(counts: Sequence[tuple[Key, int]], unit: float, room: int) -> list[tuple[Key, int]]:
    """How many cells each key gets: ``count / unit`` rounded, at least 1 for a key present, ``room`` at most."""
    cells = [(k, max(1, round(n / unit))) for k, n in counts if n > 0]
    while sum(c for _, c in cells) > room:
        i = max(range(len(cells)), key=lambda j: cells[j][1])
        if cells[i][1] <= 1:
            break
        cells[i] = (cells[i][0], cells[i][1] - 1)
    return cells


def unit_for(t: Timeline, room: int) -> int:
    """Sessions per glyph so the fullest bucket fits ``room`` cells (1 when it fits already)."""
    most = max((b.sessions for b in t.buckets), default=0)
    return max(1, math.ceil(most / max(1, room)))
