"""Scan one transcript file into a :class:`SessionSummary` (the hot path).

Per file: one read-only read; lines validated with simdjson (lazy: only the fields an
adapter asks for are materialised); fingerprints found by three regex passes over
the raw bytes; a handful of lines re-parsed with orjson to name evidence fields.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import simdjson

from musetui import sources
from musetui.fingerprints import extract
from musetui.fingerprints.attribution import EXAMPLES, TOL_AFTER_CREATED_S, Located, attribute
from musetui.fingerprints.catalogue import load_catalogue
from musetui.model import Malformed, SessionSummary, parse_time
from musetui.reader import MAX_DOCUMENT_BYTES, MAX_LINE_BYTES, NotRegularFile, read_file
from musetui.sources.base import ZONE_MODEL

#: Malformed lines listed per session (all are counted).
MAX_LISTED_MALFORMED = 200


@dataclass(slots=True)
class Diagnostic:
    """A problem found while scanning, located as precisely as possible."""

    path: str
    line: int  # 0 when it concerns the whole file
    message: str

    def text(self) -> str:
        """``path:line: message`` (line omitted when 0)."""
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


@dataclass(slots=True)
class Outcome:
    """What scanning one file produced."""

    summary: SessionSummary | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    offsets: bytes = b""  # array('Q') of record start offsets, when requested


def _classify(exc: BaseException, line: bytes, partial_last: bool, grew: bool) -> str:
    msg = str(exc)
    if partial_last:
        return "truncated: last line is incomplete (no newline; the file may still be being written)"
    if b"\x00" in line[:4096]:
        return "binary data (NUL bytes), not JSON"
    if isinstance(exc, UnicodeDecodeError) or "UTF8" in msg or "UTF-8" in msg:
        return "invalid UTF-8"
    if "DEPTH" in msg or "depth" in msg:
        return "nested deeper than the parser limit (1024 levels)"
    if "STRING_ERROR" in msg:
        return "invalid JSON string (bad escape or lone surrogate)"
    if "TAPE_ERROR" in msg:
        return "invalid JSON (truncated or broken structure)"
    return "invalid JSON (" + msg.split(":", 1)[0][:60] + ")"


def _split(data: bytes) -> tuple[list[bytes], list[int], bool]:
    """Split into lines; returns (lines, start offsets, whether the last line had no newline)."""
    lines = data.split(b"\n")
    partial = True
    if lines and lines[-1] == b"":
        lines.pop()
        partial = False
    starts: list[int] = []
    pos = 0
    append = starts.append
    for ln in lines:
        append(pos)
        pos += len(ln) + 1
    return lines, starts, partial and bool(lines)


def scan_file(
    abspath: str,
    relpath: str,
    root: str,
    *,
    keep_offsets: bool = False,
    attribute_session: bool = True,
) -> Outcome:
    """Scan one file. Never raises for bad content; OS errors become diagnostics."""
    try:
        fd = read_file(abspath)
    except NotRegularFile as exc:
        return Outcome(None, [Diagnostic(relpath, 0, f"skipped: {exc}")])
    except OSError as exc:
        return Outcome(None, [Diagnostic(relpath, 0, f"unreadable: {exc.strerror or exc}")])
    data = fd.data
    summary = SessionSummary(
        path=relpath,
        abspath=abspath,
        root=root,
        format="generic",
        format_rule="",
        size=fd.size,
        mtime_ns=fd.mtime_ns,
        inode=fd.inode,
        device=fd.device,
        read_bytes=len(data),
    )
    if not data.strip():
        return Outcome(None, [Diagnostic(relpath, 0, "empty file: no records")])
    return scan_bytes(data, summary, grew=fd.grew, keep_offsets=keep_offsets, attribute_session=attribute_session)


def scan_bytes(
    data: bytes,
    summary: SessionSummary,
    *,
    grew: bool = False,
    keep_offsets: bool = False,
    attribute_session: bool = True,
) -> Outcome:
    """Scan the bytes of one file into ``summary``."""
    relpath = summary.path
    diags: list[Diagnostic] = []
    lines, starts, partial_last = _split(data)
    if partial_last and grew:
        # Growing file: stop at the last complete line; the rest is read next time.
        dropped = len(lines[-1])
        lines.pop()
        starts.pop()
        partial_last = False
        summary.read_bytes -= dropped
        summary.notes.append(f"file grew during the scan: read up to byte {summary.read_bytes} (last complete line)")
    n = len(lines)
    times: list[Any] = [None] * n
    zones = bytearray(n)
    record_starts = array("Q")
    malformed: list[Malformed] = []
    parser = simdjson.Parser()
    observer = None
    fmt: str | None = None
    rule = ""
    pending: list[int] = []  # record lines seen before the format was known
    sse = data[:6] in (b"data: ", b"event:") or data[:5] == b"data:"
    document: Any = None
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"[") and n > 1 and len(data) <= MAX_DOCUMENT_BYTES:
        first = lines[0].strip()
        if first in (b"{", b"[") or not _parses(parser, first):
            try:
                document = orjson.loads(data)
            except orjson.JSONDecodeError:
                document = None
    if document is not None:
        return _scan_document(data, document, summary, starts, keep_offsets, attribute_session)

    items = 0
    records: list[int] = []  # line indices of valid records
    probe = sources.probe_for("generic")
    observe_all = True
    for i in range(n):
        line = lines[i]
        if not line:
            continue
        c = line[0]
        if c in (32, 9, 13):
            line = line.strip()
            if not line:
                continue
        elif line[-1] == 13:
            line = line[:-1]
        if sse:
            if line.startswith(b"data:"):
                line = line[5:].strip()
                if line == b"[DONE]" or not line:
                    continue
            elif line.startswith((b"event:", b"id:", b":", b"retry:")):
                continue
        if len(line) > MAX_LINE_BYTES:
            malformed.append(Malformed(i + 1, starts[i], f"line of {len(line):,} bytes exceeds the {MAX_LINE_BYTES // 2**20} MiB limit"))
            continue
        try:
            doc = parser.parse(line)
        except (ValueError, RuntimeError, UnicodeDecodeError) as exc:
            malformed.append(Malformed(i + 1, starts[i], _classify(exc, line, partial_last and i == n - 1, grew)))
            continue
        items += 1
        records.append(i)
        if observer is None:
            found = sources.sniff(doc)
            if found is None and items < 8 and i < n - 1:
                pending.append(i)
                del doc
                continue
            fmt, rule = found if found else ("generic", "generic: no format rule matched the first records")
            summary.format, summary.format_rule = fmt, rule
            observer = sources.observer_for(fmt, summary)
            probe = sources.probe_for(fmt)
            observe_all = probe.observe_all
            for j in pending:
                pdoc = parser.parse(_clean(lines[j], sse))
                times[j], zones[j] = observer.observe(pdoc, j + 1)
                del pdoc
            pending.clear()
            times[i], zones[i] = observer.observe(doc, i + 1)
        elif observe_all or probe.glean(line, observer):
            times[i], zones[i] = observer.observe(doc, i + 1)
        del doc
    if observer is None:
        if pending:
            summary.format, summary.format_rule = "generic", "generic: no format rule matched the first records"
            observer = sources.observer_for("generic", summary)
            for j in pending:
                pdoc = parser.parse(_clean(lines[j], sse))
                times[j], zones[j] = observer.observe(pdoc, j + 1)
                del pdoc
        else:
            for m in malformed[:MAX_LISTED_MALFORMED]:
                diags.append(Diagnostic(relpath, m.line, f"malformed: {m.reason}"))
            what = "binary file" if b"\x00" in data[:8192] else "no JSON records"
            diags.append(Diagnostic(relpath, 0, f"{what}: {len(malformed)} malformed lines, nothing to index"))
            return Outcome(None, diags)
    if keep_offsets:
        record_starts.extend(starts[i] for i in records)
    summary.items = items
    summary.malformed_lines = len(malformed)
    summary.malformed = malformed[:MAX_LISTED_MALFORMED]
    for m in summary.malformed:
        diags.append(Diagnostic(relpath, m.line, f"malformed: {m.reason}"))
    if len(malformed) > MAX_LISTED_MALFORMED:
        diags.append(Diagnostic(relpath, 0, f"… {len(malformed) - MAX_LISTED_MALFORMED} more malformed lines"))
    observer.raw_finish(data)
    observer.finish()
    if not observe_all:
        # Times of unobserved lines come from the raw probe, only where needed.
        for i in records:
            if times[i] is None:
                times[i] = probe.time(lines[i])
                if times[i] is not None:
                    break
        for i in reversed(records):
            if times[i] is None:
                times[i] = probe.time(lines[i])
                if times[i] is not None:
                    break
    _set_span(summary, times)
    if attribute_session:
        if summary.format in sources.API_FORMATS:
            located = _walk_lines(lines, starts, times, zones, sse)
        else:
            located = _raw_evidence(data, starts, lines, times, zones, None if observe_all else probe)
        resolver = _Resolver(lines, sse)
        summary.attribution = attribute(summary, located, _lookup(), resolver)
    return Outcome(summary, diags, record_starts.tobytes() if keep_offsets else b"")


_LOOKUP: Any = None


def _lookup() -> Any:
    """The model catalogue's lookup, loaded once per process (built-in plus the user's file)."""
    global _LOOKUP
    if _LOOKUP is None:
        _LOOKUP = load_catalogue().lookup
    return _LOOKUP


def _clean(line: bytes, sse: bool) -> bytes:
    line = line.strip()
    if sse and line.startswith(b"data:"):
        line = line[5:].strip()
    return line


def _parses(parser: Any, line: bytes) -> bool:
    try:
        doc = parser.parse(line)
    except (ValueError, RuntimeError, UnicodeDecodeError):
        return False
    del doc
    return True


def _set_span(summary: SessionSummary, times: list[Any]) -> None:
    first = next((t for t in times if t is not None), None)
    last = next((t for t in reversed(times) if t is not None), None)
    summary.started_at = parse_time(first)
    summary.ended_at = parse_time(last)


class _Resolver:
    """Names the field path of an artifact by re-parsing its line (cached)."""

    def __init__(self, lines: list[bytes], sse: bool) -> None:
        self.lines = lines
        self.sse = sse
        self.cache: dict[int, Any] = {}

    def __call__(self, loc: Located) -> str:
        idx = loc.line - 1
        if idx < 0 or idx >= len(self.lines):
            return ""
        if idx not in self.cache:
            try:
                self.cache[idx] = orjson.loads(_clean(self.lines[idx], self.sse))
            except orjson.JSONDecodeError:
                self.cache[idx] = None
        obj = self.cache[idx]
        if obj is None:
            return ""
        key = loc.decoded.value if loc.decoded.detector.startswith("key") else None
        return extract.field_path(obj, loc.decoded.value, key) or ""


def _raw_evidence(
    data: bytes,
    starts: list[int],
    lines: list[bytes],
    times: list[Any],
    zones: bytearray,
    probe: Any,
) -> list[Located]:
    """Locate the raw-pass hits; time-less artifacts of one shape collapse to a few examples and a count.

    With a ``probe``, the zone and time of a hit's line are read from its raw bytes (the
    line was validated but never observed).
    """
    out: list[Located] = []
    parsed_time: dict[int, float | None] = {}
    zone_of: dict[int, int] = {}
    collapsed: dict[tuple[str, str, str | None, int], list[Located]] = {}
    n_lines = len(times)
    for hit in extract.scan_raw(data, starts):
        li = hit.line_index
        dec = hit.decoded
        if not 0 <= li < n_lines:
            continue
        zone = zone_of.get(li)
        if zone is None:
            zone = zone_of[li] = probe.zone(lines[li]) if probe is not None else zones[li]
        if dec.time is None and not dec.problems:
            key = (dec.detector, dec.shape, dec.provider, zone)
            group = collapsed.get(key)
            if group is None:
                group = collapsed[key] = []
            if len(group) >= EXAMPLES:
                group[-1].count += 1
                continue
            if hit.value is not None and hit.value != dec.value:
                dec = replace(dec, value=hit.value)
            loc = Located(dec, li + 1, hit.field or "", zone, None)
            group.append(loc)
            out.append(loc)
            continue
        if li not in parsed_time:
            raw = times[li]
            if raw is None and probe is not None:
                raw = probe.time(lines[li])
            parsed_time[li] = parse_time(raw)
        out.append(Located(dec, li + 1, hit.field or "", zone, parsed_time[li]))
    return out


def _walk_lines(lines: list[bytes], starts: list[int], times: list[Any], zones: bytearray, sse: bool) -> list[Located]:
    """Full walk of every record (API captures are small): every string through the decoders."""
    out: list[Located] = []
    seen: set[str] = set()
    for i, line in enumerate(lines):
        if times[i] is None and not line.strip():
            continue
        try:
            obj = orjson.loads(_clean(line, sse))
        except orjson.JSONDecodeError:
            continue
        t = parse_time(times[i])
        for dec, _key, path in extract.walk_record(obj):
            if dec.value in seen and dec.value:
                continue
            seen.add(dec.value)
            out.append(Located(dec, i + 1, path, zones[i], t, after_tol=TOL_AFTER_CREATED_S))
    return out


def _scan_document(
    data: bytes, document: Any, summary: SessionSummary, starts: list[int], keep_offsets: bool, attribute_session: bool
) -> Outcome:
    """A whole-file JSON document (a pretty-printed API response, or a JSON array)."""
    records = document if isinstance(document, list) else [document]
    found = None
    for rec in records[:8]:
        found = sources.sniff(rec)
        if found:
            break
    fmt, rule = found if found else ("generic", "generic: JSON document, no format rule matched")
    summary.format, summary.format_rule = fmt, rule + " (whole-file JSON document)"
    observer = sources.observer_for(fmt, summary)
    first_time = None
    for rec in records:
        t, _zone = observer.observe(rec, 1)
        first_time = first_time if first_time is not None else t
    observer.finish()
    summary.items = len(records)
    summary.started_at = summary.ended_at = parse_time(first_time)
    if attribute_session:
        located: list[Located] = []
        seen: set[str] = set()
        t = summary.started_at
        from bisect import bisect_right

        for rec in records:
            for dec, _key, path in extract.walk_record(rec):
                if dec.value in seen and dec.value:
                    continue
                seen.add(dec.value)
                needle = (dec.value or (_key or "")).encode("utf-8", "replace")
                pos = data.find(needle) if needle else -1
                line = bisect_right(starts, pos) if pos >= 0 else 1
                located.append(Located(dec, line, path, ZONE_MODEL, t, after_tol=TOL_AFTER_CREATED_S))
        summary.attribution = attribute(summary, located, _lookup())
    offs = array("Q", [0]).tobytes() if keep_offsets else b""
    return Outcome(summary, [], offs)


def relpath_of(path: str, root: str) -> str:
    """``path`` relative to ``root`` with ``/`` separators (the scan record's ``path``)."""
    rel = os.path.relpath(path, root) if os.path.isdir(root) else os.path.basename(path)
    return rel.replace(os.sep, "/")
