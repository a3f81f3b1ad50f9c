"""Scan one transcript file into a :class:`SessionSummary` (the hot path).

Per file: one read-only read; lines validated with simdjson (lazy: only the fields an
adapter asks for are materialised); fingerprints found by one Hyperscan pass over the raw
bytes (:mod:`musetui.core.fingerprints.extract`) and located, zoned and named by
:mod:`musetui.core.scan_evidence`, which re-parses a handful of lines with orjson to name fields.
"""

from __future__ import annotations

import codecs
import os
import pickle
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import orjson
import simdjson

from musetui.core import sources
from musetui.core._pickling import reduce_by_fields
from musetui.core.budget import Budget
from musetui.core.diagnostics import LineError, internal_error, unread
from musetui.core.fingerprints import extract
from musetui.core.fingerprints.attribution import TOL_AFTER_CREATED_S, Located, attribute
from musetui.core.fingerprints.exchanges import judge_exchanges
from musetui.core.model import Diagnostic, Malformed, SessionSummary, parse_time
from musetui.core.reader import (
    MAX_LINE_BYTES,
    NotRegularFile,
    TooLarge,
    is_sse,
    open_regular,
    read_file,
    read_range,
    shrank_note,
    sse_payload,
)
from musetui.core.scan_evidence import Resolver, clean, raw_evidence, walk_lines
from musetui.core.sources.layouts import JSON_LAYOUT
from musetui.core.sources.registry import GENERIC_RULE, Sniffer, identify, sniff_first
from musetui.core.sources.zones import for_format as zone_table
from musetui.core.validate import keep_parser, thread_parser

__all__ = ["Diagnostic", "Outcome", "ScanState", "prepare", "resume_file", "scan_bytes", "scan_file"]

#: Malformed lines listed per session (all are counted).
MAX_LISTED_MALFORMED = 200


@dataclass(slots=True)
class Outcome:
    """What scanning one file produced."""

    __reduce__ = reduce_by_fields

    summary: SessionSummary | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    offsets: bytes = b""  # array('Q') of record start offsets, when requested
    state: Any = None  # a ScanState when the scan can be resumed after an append


#: Byte-order marks of text that is not UTF-8 (UTF-32 first: its little-endian mark starts with UTF-16's).
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)
#: A line that fails to parse and holds a CR that ends no line: lone-CR (classic Mac OS) line ends.
LONE_CR = "lone CR line ends (classic Mac OS): musetui reads lines ending in LF or CRLF"


def not_utf8(relpath: str, head: bytes) -> Outcome | None:
    """The outcome of a file whose byte-order mark says UTF-16 or UTF-32 (None: any other file)."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return Outcome(None, [Diagnostic(relpath, 0, f"{name} text (BOM): not read; musetui reads UTF-8 JSON")])
    return None


def _classify(exc: BaseException, line: bytes, partial_last: bool, grew: bool) -> str:
    msg = str(exc)
    if b"\r" in line.rstrip(b"\r"):
        return LONE_CR
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
    return _split_upto(data)[:3]


def _split_upto(data: bytes, base: int = 0, cap: int = -1) -> tuple[list[bytes], list[int], bool, int]:
    """Split ``data[base:]`` into lines, at most ``cap`` of them (-1: all).

    Returns (lines, their start offsets from ``base``, whether the last line had no newline,
    the offset where the split stopped: ``len(data)``, or just after the ``cap``-th line).
    ``bytes.find`` (memchr) per line, not ``bytes.split``: CPython splits on one byte with a
    plain byte loop, about four instructions per byte, a twentieth of a cold scan.
    """
    lines: list[bytes] = []
    starts: list[int] = []
    add_line = lines.append
    add_start = starts.append
    find = data.find
    pos = base
    left = cap
    j = find(b"\n", pos)
    while j >= 0:
        add_start(pos - base)
        add_line(data[pos:j])
        pos = j + 1
        left -= 1
        if not left:
            return lines, starts, False, pos
        j = find(b"\n", pos)
    partial = pos < len(data)
    if partial:
        add_start(pos - base)
        add_line(data[pos:])
    return lines, starts, partial, len(data)


@dataclass(slots=True)
class ScanState:
    """Everything needed to continue scanning a file after its last complete line.

    ``frozen`` is the pickled (summary, observer) pair *before* the summary was finished
    and attributed, so resuming never applies a one-time step twice.
    """

    __reduce__ = reduce_by_fields

    frozen: bytes
    fmt: str | None
    sse: bool
    n_lines: int  # physical lines consumed
    offset: int  # bytes consumed; always just after a newline
    items: int
    malformed: list[Malformed]
    malformed_count: int
    located: list[Located]
    collapsed: dict[tuple[str, str, str | None, int], list[Located]]
    seen: set[bytes]
    first_time: Any
    last_time: Any
    record_starts: bytes
    binary: bool = False  # NUL bytes seen at the start (a binary file, when no record is found)


def scan_file(
    abspath: str,
    relpath: str,
    root: str,
    *,
    keep_offsets: bool = False,
    attribute_session: bool = True,
    want_state: bool = False,
) -> Outcome:
    """Scan one file. Never raises: OS errors, bad content and bugs become diagnostics of this file."""
    try:
        return _scan_file(abspath, relpath, root, keep_offsets, attribute_session, want_state)
    except Exception as exc:  # the per-file boundary: one file's failure is that file's diagnostic
        return Outcome(None, [internal_error(relpath, exc)])


def _scan_file(
    abspath: str, relpath: str, root: str, keep_offsets: bool, attribute_session: bool, want_state: bool
) -> Outcome:
    try:
        fd = read_file(abspath, whole_max=WINDOW_BYTES)
    except TooLarge:
        return _scan_windows(abspath, relpath, root, keep_offsets, attribute_session, want_state)
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
    if fd.expanded:
        summary.notes.append(f"gzip file: its lines and byte offsets are those of the {len(data):,} bytes it expands to")
    if fd.note:
        summary.notes.append(fd.note)
    changed = [Diagnostic(relpath, 0, fd.note)] if fd.note and not fd.expanded else []  # (it shrank)
    if not data.strip():
        return Outcome(None, [*changed, Diagnostic(relpath, 0, "empty file: no records")])
    if (other := not_utf8(relpath, data[:4])) is not None:
        return other
    budget = Budget()
    if fd.expanded:  # the gzip layer spends the file's budget too
        budget.charge(len(data))
    out = scan_bytes(
        data, summary, grew=fd.grew, keep_offsets=keep_offsets, attribute_session=attribute_session, want_state=want_state,
        budget=budget,
    )
    out.diagnostics[:0] = changed
    return out


#: Files larger than this are scanned in windows of this size (cut at line ends), so that
#: memory stays bounded whatever the file's size. A window holds any line up to MAX_LINE_BYTES.
WINDOW_BYTES = 2 * MAX_LINE_BYTES
#: Bytes of one file scanned at most (``MUSETUI_MAX_FILE_BYTES``); past it, a diagnostic and the prefix.
MAX_FILE_BYTES = 16 * 1024**3
#: Lines scanned at a time: a file or window of more is scanned in slices of this many lines, so
#: that the per-line objects (each line's bytes, offset, time) stay bounded however short the lines.
WINDOW_LINES = 1 << 18
#: Bytes of observed lines whose parse is kept for naming evidence fields (per file or window).
KEEP_PARSED_BYTES = 4 * 1024 * 1024
#: Evidence whose field is named per window (the rest keep the raw pass's field, if any).
WINDOW_RESOLVED = 256


def max_file_bytes() -> int:
    """The per-file scan limit in bytes (the ``max_file_bytes`` setting)."""
    from musetui.core.settings import current

    return current().max_file_bytes


def _scan_windows(
    abspath: str, relpath: str, root: str, keep_offsets: bool, attribute_session: bool, want_state: bool
) -> Outcome:
    """Scan a large file window by window (pread), never holding more than a window of it.

    A line longer than a window is skipped by looking for its end (and reported as
    malformed, as any line over MAX_LINE_BYTES is); a file over :func:`max_file_bytes` is
    scanned up to the last line end before the limit, with a diagnostic.
    """
    try:
        fd = open_regular(abspath)
    except NotRegularFile as exc:
        return Outcome(None, [Diagnostic(relpath, 0, f"skipped: {exc}")])
    except OSError as exc:
        return Outcome(None, [Diagnostic(relpath, 0, f"unreadable: {exc.strerror or exc}")])
    try:
        st = os.fstat(fd)
        size = st.st_size
        limit = min(size, max_file_bytes())
        summary = SessionSummary(
            path=relpath, abspath=abspath, root=root, format="generic", format_rule="", size=size,
            mtime_ns=st.st_mtime_ns, inode=st.st_ino, device=st.st_dev, read_bytes=0,
        )
        state = ScanState(b"", None, False, 0, 0, 0, [], 0, [], {}, set(), None, None, b"")
        diags: list[Diagnostic] = []
        carry: list[Any] = [None]
        observer: Any = None
        pos = 0
        tail = b""
        while pos < limit:
            chunk = _pread(fd, min(WINDOW_BYTES, limit - pos), pos)
            if not chunk:
                break
            if pos == 0:
                if (other := not_utf8(relpath, chunk[:4])) is not None:
                    return other
                state.sse = is_sse(chunk)
            at_limit = pos + len(chunk) >= limit
            if at_limit and limit >= size:
                tail = chunk  # the last window: concluded below
                break
            cut = chunk.rfind(b"\n") + 1
            if cut == 0 and at_limit:
                break  # the line cut by the scan limit is left out
            if cut == 0:  # one line longer than a window: find its end, never holding it
                end = _find_newline(fd, pos + len(chunk), limit)
                stop = end if end >= 0 else limit
                state.n_lines += 1
                state.malformed_count += 1
                reason = f"line of {stop - pos:,} bytes exceeds the {MAX_LINE_BYTES // 2**20} MiB limit"
                if len(state.malformed) < MAX_LISTED_MALFORMED:
                    state.malformed.append(Malformed(state.n_lines, pos, reason))
                    diags.append(Diagnostic(relpath, state.n_lines, f"malformed: {reason}"))
                if pos == 0 and b"\x00" in chunk[:8192]:
                    state.binary = True
                del chunk
                pos = stop + 1 if end >= 0 else limit
                state.offset = pos
                continue
            window = chunk[:cut] if cut < len(chunk) else chunk
            del chunk
            out = _scan_sliced(window, summary, observer, state, grew=False, keep_offsets=keep_offsets,
                               attribute_session=attribute_session, want_state=want_state, carry=carry)
            del window
            observer = carry[0]
            diags.extend(out.diagnostics)
            pos = state.offset
        now = os.fstat(fd)
        shrank = shrank_note(abspath, st, pos + len(tail), limit if limit >= size else pos, now)
        grew = now.st_size > size and shrank is None
    finally:
        os.close(fd)
    if shrank:
        diags.append(Diagnostic(relpath, 0, shrank))
        summary.notes.append(shrank)
    if limit < size:
        diags.append(Diagnostic(relpath, 0, f"file of {size:,} bytes exceeds the {limit:,}-byte scan limit: scanned up to byte {pos:,} (line {state.n_lines})"))
        summary.notes.append(f"partial scan: the first {pos:,} of {size:,} bytes (the scan limit)")
    summary.read_bytes = pos + len(tail)
    out = _scan_sliced(tail, summary, observer, state, grew=grew, keep_offsets=keep_offsets,
                       attribute_session=attribute_session, want_state=want_state)
    out.diagnostics = diags + out.diagnostics
    return out


def _pread(fd: int, length: int, pos: int) -> bytes:
    """Up to ``length`` bytes at ``pos`` (fewer only at the end of the file)."""
    chunks: list[bytes] = []
    got = 0
    while got < length:
        chunk = os.pread(fd, min(length - got, 16 * 1024 * 1024), pos + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _find_newline(fd: int, pos: int, limit: int) -> int:
    """The offset of the first newline at or after ``pos`` (before ``limit``), or -1."""
    while pos < limit:
        chunk = os.pread(fd, min(8 * 1024 * 1024, limit - pos), pos)
        if not chunk:
            return -1
        i = chunk.find(b"\n")
        if i >= 0:
            return pos + i
        pos += len(chunk)
    return -1


def resume_file(state: ScanState, abspath: str, *, keep_offsets: bool = False) -> Outcome | None:
    """Continue a scan from ``state.offset``, reading only the appended bytes.

    Returns None when the file cannot be resumed (it shrank, or the byte before the
    resume point is no longer a newline, or resuming failed): the caller rescans it whole.
    """
    try:
        return _resume_file(state, abspath, keep_offsets)
    except Exception:  # the whole-file rescan has its own boundary, and reports
        return None


def _resume_file(state: ScanState, abspath: str, keep_offsets: bool) -> Outcome | None:
    try:
        if state.offset <= 0 or read_range(abspath, state.offset - 1, 1) != b"\n":
            return None
        fd = read_file(abspath, state.offset, whole_max=WINDOW_BYTES)
    except OSError:
        return None
    if fd.size < state.offset or fd.note:  # (it shrank, or was replaced, as it was read: rescan it whole)
        return None
    summary, observer = pickle.loads(state.frozen)
    summary.size, summary.mtime_ns, summary.inode, summary.device = fd.size, fd.mtime_ns, fd.inode, fd.device
    summary.read_bytes = state.offset + len(fd.data)
    return _scan_sliced(fd.data, summary, observer, state, grew=fd.grew, keep_offsets=keep_offsets, attribute_session=True, want_state=True)


def scan_bytes(
    data: bytes,
    summary: SessionSummary,
    *,
    grew: bool = False,
    keep_offsets: bool = False,
    attribute_session: bool = True,
    want_state: bool = False,
    budget: Budget | None = None,
) -> Outcome:
    """Scan the bytes of one whole file into ``summary`` (a capture within ``budget``, else a fresh one)."""
    shape = identify(summary.path, data)
    if shape.kind == "capture":
        return _scan_capture(
            data, summary, shape.layout or JSON_LAYOUT, shape.document, keep_offsets, attribute_session, budget or Budget()
        )
    if shape.kind == "document":
        _lines, starts, _partial = _split(data)
        return _scan_document(data, shape.document, summary, starts, keep_offsets, attribute_session)
    state = ScanState(
        frozen=b"",
        fmt=None,
        sse=is_sse(data),
        n_lines=0,
        offset=0,
        items=0,
        malformed=[],
        malformed_count=0,
        located=[],
        collapsed={},
        seen=set(),
        first_time=None,
        last_time=None,
        record_starts=b"",
    )
    return _scan_sliced(data, summary, None, state, grew=grew, keep_offsets=keep_offsets,
                        attribute_session=attribute_session, want_state=want_state)


def _scan_sliced(
    data: bytes,
    summary: SessionSummary,
    observer: Any,
    state: ScanState,
    *,
    grew: bool,
    keep_offsets: bool,
    attribute_session: bool,
    want_state: bool,
    carry: list[Any] | None = None,
) -> Outcome:
    """:func:`_scan_lines` on ``data``, :data:`WINDOW_LINES` lines at a time (memory per line O(1)).

    A slice that is not the last is scanned as a window (``carry``); most files are one slice,
    split once, as before.
    """
    diags: list[Diagnostic] = []
    split = _split_upto(data, 0, WINDOW_LINES)
    pos = 0
    offsets: array[int] | None = None  # the record offsets while slicing (one array, not a copy per slice)
    if split[3] < len(data) and (keep_offsets or want_state):
        offsets = array("Q")
        offsets.frombytes(state.record_starts)
        state.record_starts = b""
    while split[3] < len(data):
        end = split[3]
        slot: list[Any] = [None]
        out = _scan_lines(data[pos:end], summary, observer, state, grew=False, keep_offsets=keep_offsets,
                          attribute_session=attribute_session, want_state=want_state, carry=slot, split=split[:3],
                          offsets=offsets, last_slice=False)
        diags.extend(out.diagnostics)
        observer = slot[0]
        pos = end
        split = _split_upto(data, pos, WINDOW_LINES)
    out = _scan_lines(data[pos:] if pos else data, summary, observer, state, grew=grew, keep_offsets=keep_offsets,
                      attribute_session=attribute_session, want_state=want_state, carry=carry, split=split[:3],
                      offsets=offsets)
    if diags:
        out.diagnostics = diags + out.diagnostics
    return out


def _scan_lines(
    data: bytes,
    summary: SessionSummary,
    observer: Any,
    state: ScanState,
    *,
    grew: bool,
    keep_offsets: bool,
    attribute_session: bool,
    want_state: bool,
    carry: list[Any] | None = None,
    split: tuple[list[bytes], list[int], bool] | None = None,
    offsets: array[int] | None = None,
    last_slice: bool = True,
) -> Outcome:
    """Validate and observe the lines of ``data`` (which starts at ``state.offset``), then conclude.

    With ``carry`` (a window of a large file, not its last), nothing is concluded: the state
    moves past ``data`` and ``carry[0]`` receives the observer, for the next window. ``split``:
    ``data`` already split (:func:`_split`'s first three values). ``offsets``: the record offsets
    so far, extended in place (``state.record_starts`` is set from it on the ``last_slice``).
    """
    relpath = summary.path
    diags: list[Diagnostic] = []
    base_off = state.offset
    base_line = state.n_lines
    lines, rel_starts, partial_last = split if split is not None else _split(data)
    if partial_last and grew:
        # Growing file: stop at the last complete line; the rest is read next time.
        dropped = len(lines[-1])
        lines.pop()
        rel_starts.pop()
        partial_last = False
        summary.read_bytes -= dropped
        summary.notes = [n for n in summary.notes if not n.startswith("file grew during the scan")]
        summary.notes.append(f"file grew during the scan: read up to byte {summary.read_bytes} (last complete line)")
    n = len(lines)
    starts = [base_off + x for x in rel_starts] if base_off else rel_starts
    times: list[Any] = [None] * n
    zones = bytearray(n)
    parser = thread_parser()
    sse = state.sse
    fmt = state.fmt
    pending: list[int] = []  # record lines seen before the format was known
    sniffer = Sniffer()
    records: list[int] = []  # indices (in this chunk) of valid records
    malformed: list[Malformed] = []
    probe = sources.probe_for(fmt or "generic")
    observe_all = probe.observe_all
    glean = probe.glean
    parse = parser.parse
    add_record = records.append
    kept: dict[int, Any] = {}  # observed lines as orjson read them, for the field resolver
    kept_bytes = 0
    items = 0
    watch = observer.watch if observer is not None else None  # format drift (musetui.core.drift)
    i = -1
    try:
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
                payload = sse_payload(line)
                if payload is None:
                    continue
                line = payload
            if len(line) > MAX_LINE_BYTES:
                malformed.append(Malformed(base_line + i + 1, starts[i], f"line of {len(line):,} bytes exceeds the {MAX_LINE_BYTES // 2**20} MiB limit"))
                continue
            try:
                doc = parse(line)
            except (ValueError, RuntimeError, UnicodeDecodeError) as exc:
                doc, parser = _second_opinion(exc, line, parser)
                parse = parser.parse
                if doc is None:
                    malformed.append(Malformed(base_line + i + 1, starts[i], _classify(exc, line, partial_last and i == n - 1, grew)))
                    continue
            items += 1
            add_record(i)
            if watch is not None:
                watch(doc, base_line + i + 1)
            if observer is not None and not observe_all:
                if not glean(line, observer):
                    del doc  # (a live proxy would refuse the parser's next document)
                    continue
                try:
                    rec = orjson.loads(line)  # _record(line, doc), keeping the parse for the resolver
                except orjson.JSONDecodeError:
                    rec = doc
                else:
                    if kept_bytes < KEEP_PARSED_BYTES:
                        kept_bytes += len(line)
                        kept[i] = rec
                t, zones[i] = observer.observe(rec, base_line + i + 1)
                del doc, rec
                if t is not None and type(t) is not str and type(t) is not int and type(t) is not float:
                    t = None  # an object or array where a time belongs: no time (and no parser proxy kept)
                times[i] = t
                continue
            if observer is None:
                doc = _record(line, doc)
                found = sniffer.offer(doc, last=i == n - 1)
                if found is None:
                    pending.append(i)
                    del doc
                    continue
                fmt, rule = found
                summary.format, summary.format_rule = fmt, rule
                observer = sources.observer_for(fmt, summary)
                watch = observer.watch
                if watch is not None:
                    watch(doc, base_line + i + 1)
                probe = sources.probe_for(fmt)
                observe_all = probe.observe_all
                glean = probe.glean
                # The held-back lines are parsed by a second parser: ``doc`` is still alive.
                _observe_pending(pending, lines, sse, observer, base_line, times, zones)
                pending.clear()
                times[i], zones[i] = observer.observe(doc, base_line + i + 1)
            elif observe_all or probe.glean(line, observer):
                times[i], zones[i] = observer.observe(_record(line, doc), base_line + i + 1)
            del doc
            t = times[i]
            if t is not None and type(t) is not str and type(t) is not int and type(t) is not float:
                times[i] = t = None  # an object or array where a time belongs: no time (and no parser proxy kept)
    except Exception as exc:
        raise LineError(base_line + i + 1, exc) from exc
    # Keep the parser (or its replacement, when the old one refused re-use) unless its buffers
    # may have grown to a big line's size.
    keep_parser(parser, len(data))
    if observer is None and pending:
        fmt = "generic"
        summary.format, summary.format_rule = fmt, GENERIC_RULE
        observer = sources.observer_for(fmt, summary)
        probe = sources.probe_for(fmt)
        observe_all = True
        _observe_pending(pending, lines, sse, observer, base_line, times, zones)
    room = max(0, MAX_LISTED_MALFORMED - len(state.malformed))
    state.malformed.extend(malformed[:room])
    state.malformed_count += len(malformed)
    for m in malformed[:room]:
        diags.append(Diagnostic(relpath, m.line, f"malformed: {m.reason}"))
    if len(malformed) > room:
        diags.append(Diagnostic(relpath, 0, f"… {len(malformed) - room} more malformed lines"))
    if base_off == 0 and b"\x00" in data[:8192]:
        state.binary = True
    if observer is None:
        if carry is not None:
            state.n_lines = base_line + n
            state.offset = base_off + (rel_starts[-1] + len(lines[-1]) + 1 if lines else 0)
            carry[0] = None
            return Outcome(None, diags)
        what = "binary file" if state.binary else "no JSON records"
        diags.append(Diagnostic(relpath, 0, f"{what}: {state.malformed_count} malformed lines, nothing to index"))
        return Outcome(None, diags)
    state.fmt = fmt
    state.items += items
    if keep_offsets or want_state:
        if offsets is None:
            offs = array("Q")
            offs.frombytes(state.record_starts)
        else:
            offs = offsets
        offs.extend(starts[i] for i in records)
        if last_slice:
            state.record_starts = offs.tobytes()
    observer.raw_finish(data)
    # Record times: the first ever, and the last of this chunk (raw probes where unobserved).
    for i in records:
        t = times[i] if times[i] is not None or observe_all else probe.time(lines[i])
        if t is not None:
            if state.first_time is None:
                state.first_time = t
            break
    for i in reversed(records):
        t = times[i] if times[i] is not None or observe_all else probe.time(lines[i])
        if t is not None:
            state.last_time = t
            break
    located_before = len(state.located)
    if attribute_session:
        if fmt in sources.API_FORMATS:
            state.located.extend(walk_lines(lines, base_line, times, zones, sse, state.seen, fmt))
        else:
            state.located.extend(
                raw_evidence(data, rel_starts, base_line, lines, times, zones, None if observe_all else probe, state)
            )
    consumed = rel_starts[-1] + len(lines[-1]) + 1 if lines else 0  # every line and its newline
    if carry is not None:
        if attribute_session:  # name the fields now: this window's lines are gone at the end
            resolver = Resolver(lines, sse, base_line, kept)
            todo = [loc for loc in state.located[located_before:] if not loc.field]
            for loc in todo[:WINDOW_RESOLVED]:
                loc.field = resolver(loc)
        state.n_lines = base_line + n
        state.offset = base_off + consumed
        carry[0] = observer
        return Outcome(None, diags)
    complete = not partial_last or not lines
    if want_state and complete:
        state.frozen = pickle.dumps((summary, observer), protocol=pickle.HIGHEST_PROTOCOL)
        state.n_lines = base_line + n
        state.offset = base_off + consumed
    # Conclude on the live objects (the frozen copy stays pre-finish).
    summary.items = state.items
    summary.malformed_lines = state.malformed_count
    summary.malformed = list(state.malformed)
    observer.finish()
    if watch is not None:
        diags.extend(watch.diagnostics(relpath, fmt or "generic"))
    summary.started_at = parse_time(state.first_time)
    summary.ended_at = parse_time(state.last_time)
    if attribute_session:
        resolver = Resolver(lines, sse, base_line, kept)
        summary.attribution = attribute(summary, state.located, _lookup(), resolver)
    out = Outcome(summary, diags, state.record_starts if keep_offsets else b"")
    if want_state and complete:
        out.state = state
    return out


_LOOKUP: Any = None


def _lookup() -> Any:
    """The model catalogue's lookup, loaded once per process (built-in plus the user's file)."""
    global _LOOKUP
    if _LOOKUP is None:
        from musetui.core.fingerprints.catalogue_lookup import (
            scan_lookup,  # pydantic only for a user's file
        )

        _LOOKUP = scan_lookup()
    return _LOOKUP


def prepare() -> None:
    """Build what every scan in this process needs (the model catalogue, the fingerprint database).

    Call it before forking workers, so that they inherit both instead of each building them.
    """
    _lookup()
    extract.prepare()


def _second_opinion(exc: BaseException, line: bytes, parser: Any) -> tuple[Any, Any]:
    """A line simdjson refused, judged by orjson (the reference parser); returns (record or None, parser).

    orjson decides what a record is everywhere (the item view and search use it): a line
    simdjson cannot hold (an integer beyond 64 bits) is still a record when orjson reads it.
    A parser that refuses to be re-used (a proxy of its last document is still alive) is
    replaced, and the line parsed again.
    """
    if isinstance(exc, RuntimeError) and "re-use" in str(exc):
        parser = simdjson.Parser()
        try:
            return parser.parse(line), parser
        except (ValueError, RuntimeError, UnicodeDecodeError):
            pass
    try:
        return orjson.loads(line), parser
    except orjson.JSONDecodeError:
        return None, parser


def _record(line: bytes, doc: Any) -> Any:
    """The record an observer sees: the line as orjson reads it (else ``doc``, simdjson's view).

    simdjson only validates the lines; the few that an observer reads are parsed again by
    orjson, the parser of the item view and of search, so that all three agree on what a
    line holds (the last of duplicate keys wins, as in orjson, JSON.parse and Python's json).
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return doc


def _parse_any(parser: Any, line: bytes) -> Any:
    """One line as a record (simdjson, else orjson), or None when it is not JSON."""
    try:
        return parser.parse(line)
    except (ValueError, RuntimeError, UnicodeDecodeError) as exc:
        return _second_opinion(exc, line, parser)[0]


def _observe_pending(
    pending: list[int], lines: list[bytes], sse: bool, observer: Any, base_line: int, times: list[Any], zones: bytearray
) -> None:
    """Observe the lines held back while the format was unknown, with a parser of their own."""
    if not pending:
        return
    parser = simdjson.Parser()
    for j in pending:
        line = clean(lines[j], sse)
        pdoc = _record(line, None) or _parse_any(parser, line)
        if pdoc is None:
            continue
        t, zones[j] = observer.observe(pdoc, base_line + j + 1)
        if observer.watch is not None:
            observer.watch(pdoc, base_line + j + 1)
        del pdoc
        times[j] = t if t is None or type(t) in (str, int, float) else None
        t = None


def _scan_document(
    data: bytes, document: Any, summary: SessionSummary, starts: list[int], keep_offsets: bool, attribute_session: bool
) -> Outcome:
    """A whole-file JSON document (a pretty-printed API response, or a JSON array)."""
    records = document if isinstance(document, list) else [document]
    found = sniff_first(records)
    fmt, rule = found if found else ("generic", "generic: JSON document, no format rule matched")
    summary.format, summary.format_rule = fmt, rule + " (whole-file JSON document)"
    observer = sources.observer_for(fmt, summary)
    first_time = None
    for rec in records:
        t, _zone = observer.observe(rec, 1)
        if observer.watch is not None:
            observer.watch(rec, 1)
        first_time = first_time if first_time is not None else t
    observer.finish()
    summary.items = len(records)
    summary.started_at = summary.ended_at = parse_time(first_time)
    if attribute_session:
        located: list[Located] = []
        seen: set[str] = set()
        t = summary.started_at
        zone_of = zone_table(fmt).zone_of
        for rec in records:
            for dec, _key, path in sources.walk_record(rec):
                if dec.value in seen and dec.value:
                    continue
                seen.add(dec.value)
                needle = (dec.value or (_key or "")).encode("utf-8", "replace")
                pos = data.find(needle) if needle else -1
                line = bisect_right(starts, pos) if pos >= 0 else 1
                located.append(Located(dec, line, path, zone_of(path, dec.detector.startswith("key")), t, after_tol=TOL_AFTER_CREATED_S))
        summary.attribution = attribute(summary, located, _lookup())
    offs = array("Q", [0]).tobytes() if keep_offsets else b""
    return Outcome(summary, observer.watch.diagnostics(summary.path, fmt) if observer.watch is not None else [], offs)


def _scan_capture(
    data: bytes, summary: SessionSummary, kind: str, document: Any, keep_offsets: bool, attribute_session: bool,
    budget: Budget,
) -> Outcome:
    """A VCR cassette or HAR log: one session, one item per interaction (see sources.http_capture)."""
    cap = sources.http_capture
    spans: list[Any] = []
    try:
        located, offsets = cap.scan(data, summary, kind, document, spans, budget)
    except cap.NotACapture as exc:  # a name that suggests a capture, and no exchange in it: said, not silent
        return Outcome(None, [unread(summary.path, str(exc))])
    except cap.CaptureError as exc:
        return Outcome(None, [Diagnostic(summary.path, 0, f"unreadable HTTP capture: {exc}")])
    if attribute_session:
        summary.attribution = attribute(summary, located, _lookup())
        judge_exchanges(summary, located, _lookup(), spans)
    over = budget.diagnostic()
    diags = [Diagnostic(summary.path, 0, over)] if over else []
    return Outcome(summary, diags, array("Q", offsets).tobytes() if keep_offsets else b"")


def relpath_of(path: str, root: str) -> str:
    """``path`` relative to ``root`` with ``/`` separators (the scan record's ``path``)."""
    rel = os.path.relpath(path, root) if os.path.isdir(root) else os.path.basename(path)
    return rel.replace(os.sep, "/")
