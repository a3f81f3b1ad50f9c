"""Scan one transcript file into a :class:`SessionSummary` (the hot path).

Per file: one read-only read (a large file: window by window), then the stages of
:mod:`musetui.core.scan` per window: split into lines; lines validated with simdjson;
the format sniffed and the records observed (most only gleaned from their bytes by the
format's probe); fingerprints found by one Hyperscan pass over the raw bytes and located;
and, after the last window, the summary concluded and attributed.
"""

from __future__ import annotations

import codecs
import os
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from musetui.core import sources
from musetui.core.budget import Budget
from musetui.core.diagnostics import internal_error, unread
from musetui.core.fingerprints import extract, segments
from musetui.core.fingerprints.attribution import TOL_AFTER_CREATED_S, Located, attribute
from musetui.core.fingerprints.exchanges import judge_exchanges
from musetui.core.model import Diagnostic, Malformed, SessionSummary, parse_time
from musetui.core.reader import (
    MAX_LINE_BYTES,
    NotRegularFile,
    TooLarge,
    change_note,
    is_sse,
    open_regular,
    read_file,
    read_range,
)
from musetui.core.scan import linetimes, windows
from musetui.core.scan.conclude import conclude, lookup
from musetui.core.scan.evidence import extract_evidence, name_fields
from musetui.core.scan.observe import observe, presniff, record_times
from musetui.core.scan.stages import ScanObserver, Window
from musetui.core.scan.state import Outcome, ScanState, new_state
from musetui.core.scan.validate import LONE_CR, validate
from musetui.core.sources.layouts import JSON_LAYOUT
from musetui.core.sources.registry import LOOKUP, identify, sniff_first, zone_table

__all__ = [
    "LONE_CR",
    "Diagnostic",
    "Outcome",
    "ScanOptions",
    "ScanState",
    "prepare",
    "resume_file",
    "scan_bytes",
    "scan_file",
]

#: Malformed lines listed per session (all are counted).
MAX_LISTED_MALFORMED = 200
#: Files larger than this are scanned in windows of this size (cut at line ends), so that
#: memory stays bounded whatever the file's size. A window holds any line up to MAX_LINE_BYTES.
WINDOW_BYTES = 2 * MAX_LINE_BYTES
#: Bytes of one file scanned at most (``MUSETUI_MAX_FILE_BYTES``); past it, a diagnostic and the prefix.
MAX_FILE_BYTES = 16 * 1024**3
#: Lines scanned at a time: a file or window of more is scanned in slices of this many lines, so
#: that the per-line objects (each line's bytes, offset, time) stay bounded however short the lines.
WINDOW_LINES = 1 << 18


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """What a scan of one file keeps beside its summary."""

    keep_offsets: bool = False  # each record's byte offset (the item view's index)
    attribute_session: bool = True  # find and weigh the evidence (False: the summary only)
    want_state: bool = False  # what resuming after an append needs


_OPTIONS: dict[tuple[bool, bool, bool], ScanOptions] = {}


def _options(keep_offsets: bool, attribute_session: bool, want_state: bool) -> ScanOptions:
    """The (shared, frozen) options of these values: one of eight, not a new object per file."""
    key = (keep_offsets, attribute_session, want_state)
    opts = _OPTIONS.get(key)
    if opts is None:
        opts = _OPTIONS[key] = ScanOptions(*key)
    return opts


#: Byte-order marks of text that is not UTF-8 (UTF-32 first: its little-endian mark starts with UTF-16's).
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)  # fmt: skip


#: The bytes a mark of :data:`_BOMS` starts with.
_BOM_LEADS = frozenset(bom[0] for bom, _name in _BOMS)


def not_utf8(relpath: str, head: bytes) -> Outcome | None:
    """The outcome of a file whose byte-order mark says UTF-16 or UTF-32 (None: any other file)."""
    if not head or head[0] not in _BOM_LEADS:
        return None
    for bom, name in _BOMS:
        if head.startswith(bom):
            return Outcome(None, [Diagnostic(relpath, 0, f"{name} text (BOM): not read; musetui reads UTF-8 JSON")])
    return None


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
        return _scan_file(abspath, relpath, root, _options(keep_offsets, attribute_session, want_state))
    except Exception as exc:  # the per-file boundary: one file's failure is that file's diagnostic
        return Outcome(None, [internal_error(relpath, exc)])


def _scan_file(abspath: str, relpath: str, root: str, opts: ScanOptions) -> Outcome:
    try:
        fd = read_file(abspath, whole_max=WINDOW_BYTES)
    except TooLarge:
        return _scan_windows(abspath, relpath, root, opts)
    except NotRegularFile as exc:
        return Outcome(None, [Diagnostic(relpath, 0, f"skipped: {exc}")])
    except OSError as exc:
        return Outcome(None, [Diagnostic(relpath, 0, f"unreadable: {exc.strerror or exc}")])
    data = fd.data
    summary = SessionSummary(  # positional, in field order (keywords cost a third of the object)
        relpath, abspath, root, "generic", "", None, None, None, None, 0, 0, [], None, None,
        fd.size, fd.mtime_ns, fd.inode, fd.device, len(data),
    )  # fmt: skip
    if fd.expanded:
        summary.notes.append(
            f"gzip file: its lines and byte offsets are those of the {len(data):,} bytes it expands to"
        )
    if fd.note:
        summary.notes.append(fd.note)
    changed = [Diagnostic(relpath, 0, fd.note)] if fd.note and not fd.expanded else []  # (it shrank)
    if not data or data.isspace():  # (what ``not data.strip()`` says, without copying the file)
        return Outcome(None, [*changed, Diagnostic(relpath, 0, "empty file: no records")])
    if (other := not_utf8(relpath, data[:4])) is not None:
        return other
    budget = None  # (a capture's: lines files need none)
    if fd.expanded:  # the gzip layer spends the file's budget too
        budget = Budget()
        budget.charge(len(data))
    out = _scan_whole(data, summary, opts, grew=fd.grew, budget=budget)
    out.diagnostics[:0] = changed
    return out


def max_file_bytes() -> int:
    """The per-file scan limit in bytes (the ``max_file_bytes`` setting)."""
    from musetui.core.settings import current

    return current().max_file_bytes


def _scan_windows(abspath: str, relpath: str, root: str, opts: ScanOptions) -> Outcome:
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
        )  # fmt: skip
        state = new_state(False)
        diags: list[Diagnostic] = []
        observer: ScanObserver | None = None
        pos = 0
        tail = b""
        while pos < limit:
            chunk = windows.pread(fd, min(WINDOW_BYTES, limit - pos), pos)
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
                pos = _skip_long_line(fd, chunk, pos, limit, state, relpath, diags)
                continue
            window = chunk[:cut] if cut < len(chunk) else chunk
            del chunk
            out, observer = _scan_sliced(window, summary, observer, state, opts, grew=False, final=False)
            del window
            diags.extend(out.diagnostics)
            pos = state.offset
        shrank, now = change_note(abspath, fd, st, pos + len(tail), limit if limit >= size else pos)
        grew = now.st_size > size and shrank is None
    finally:
        os.close(fd)
    if shrank:
        diags.append(Diagnostic(relpath, 0, shrank))
        summary.notes.append(shrank)
    if limit < size:
        diags.append(
            Diagnostic(
                relpath,
                0,
                f"file of {size:,} bytes exceeds the {limit:,}-byte scan limit: scanned up to byte {pos:,} (line {state.n_lines})",
            )
        )
        summary.notes.append(f"partial scan: the first {pos:,} of {size:,} bytes (the scan limit)")
    summary.read_bytes = pos + len(tail)
    out = _scan_sliced(tail, summary, observer, state, opts, grew=grew)[0]
    out.diagnostics = diags + out.diagnostics
    return out


def _skip_long_line(
    fd: int, chunk: bytes, pos: int, limit: int, state: ScanState, relpath: str, diags: list[Diagnostic]
) -> int:
    """Step over a line at ``pos`` longer than a window (malformed); returns the offset after it."""
    end = windows.find_newline(fd, pos + len(chunk), limit)
    stop = end if end >= 0 else limit
    state.n_lines += 1
    state.malformed_count += 1
    reason = f"line of {stop - pos:,} bytes exceeds the {MAX_LINE_BYTES // 2**20} MiB limit"
    if len(state.malformed) < MAX_LISTED_MALFORMED:
        state.malformed.append(Malformed(state.n_lines, pos, reason))
        diags.append(Diagnostic(relpath, state.n_lines, f"malformed: {reason}"))
    if pos == 0 and chunk.find(b"\x00", 0, 8192) >= 0:
        state.binary = True
    state.offset = stop + 1 if end >= 0 else limit
    return state.offset


def resume_file(state: ScanState, abspath: str, *, keep_offsets: bool = False) -> Outcome | None:
    """Continue a scan from ``state.offset``, reading only the appended bytes.

    Returns None when the file cannot be resumed (it shrank, or the byte before the
    resume point is no longer a newline, or ``keep_offsets`` and the state kept no record
    offsets, or resuming failed): the caller rescans it whole.
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
    if not keep_offsets:
        state.record_starts = b""
    elif len(state.record_starts) != 8 * state.items:  # (a state kept without its record offsets)
        return None
    from musetui.core.stored import thaw

    summary, observer = thaw(state.frozen, state.fmt)
    summary.size, summary.mtime_ns, summary.inode, summary.device = fd.size, fd.mtime_ns, fd.inode, fd.device
    summary.read_bytes = state.offset + len(fd.data)
    opts = _options(keep_offsets, True, True)
    return _scan_sliced(fd.data, summary, observer, state, opts, grew=fd.grew)[0]


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
    return _scan_whole(data, summary, _options(keep_offsets, attribute_session, want_state), grew=grew, budget=budget)


def _scan_whole(
    data: bytes, summary: SessionSummary, opts: ScanOptions, *, grew: bool, budget: Budget | None
) -> Outcome:
    shape = identify(summary.path, data)
    if shape.kind == "capture":
        return _scan_capture(
            data,
            summary,
            shape.layout or JSON_LAYOUT,
            shape.document,
            opts.keep_offsets,
            opts.attribute_session,
            budget or Budget(),
        )
    if shape.kind == "document":
        _lines, starts, _partial = windows.split(data)
        return _scan_document(data, shape.document, summary, starts, opts.keep_offsets, opts.attribute_session)
    return _scan_sliced(data, summary, None, new_state(is_sse(data)), opts, grew=grew)[0]


def _scan_sliced(
    data: bytes,
    summary: SessionSummary,
    observer: ScanObserver | None,
    state: ScanState,
    opts: ScanOptions,
    *,
    grew: bool,
    final: bool = True,
) -> tuple[Outcome, ScanObserver | None]:
    """:func:`_scan_lines` on ``data``, :data:`WINDOW_LINES` lines at a time (memory per line O(1)).

    Returns the outcome and the observer. Only the last slice of a ``final`` window concludes;
    most files are one slice, split once.
    """
    diags: list[Diagnostic] = []
    split = windows.split_upto(data, 0, WINDOW_LINES)
    pos = 0
    offsets: array[int] | None = None  # the record offsets while slicing (one array, not a copy per slice)
    if split[3] < len(data) and opts.keep_offsets:
        offsets = array("Q")
        offsets.frombytes(state.record_starts)
        state.record_starts = b""
    while split[3] < len(data):
        end = split[3]
        out, observer = _scan_lines(data[pos:end], summary, observer, state, opts, grew=False, final=False,
                                    split=split[:3], offsets=offsets, last_slice=False)  # fmt: skip
        diags.extend(out.diagnostics)
        pos = end
        split = windows.split_upto(data, pos, WINDOW_LINES)
    out, observer = _scan_lines(data[pos:] if pos else data, summary, observer, state, opts, grew=grew, final=final,
                                split=split[:3], offsets=offsets)  # fmt: skip
    if diags:
        out.diagnostics = diags + out.diagnostics
    return out, observer


def _scan_lines(
    data: bytes,
    summary: SessionSummary,
    observer: ScanObserver | None,
    state: ScanState,
    opts: ScanOptions,
    *,
    grew: bool,
    final: bool,
    split: tuple[list[bytes], list[int], bool] | None = None,
    offsets: array[int] | None = None,
    last_slice: bool = True,
) -> tuple[Outcome, ScanObserver | None]:
    """The stages on the lines of ``data`` (which starts at ``state.offset``); returns the outcome and the observer.

    Unless ``final``, nothing is concluded: the state moves past ``data``, for the next window.
    ``split``: ``data`` already split (:func:`windows.split`). ``offsets``: the record offsets
    so far, extended in place (``state.record_starts`` is set from it on the ``last_slice``).
    """
    window = windows.window(data, state.n_lines, state.offset, summary, grew, split)
    pre, head = None, None
    if observer is None:  # the first record may decide the format: then validation also feeds the drift watch
        head = presniff(window, state.sse, MAX_LINE_BYTES)
        if head is not None:
            pre = head[0]
            summary.format, summary.format_rule = pre.fmt, pre.rule
            observer = sources.observer_for(pre.fmt, summary)
    checked = validate(window, state.sse, grew, MAX_LINE_BYTES, observer.watch if observer is not None else None)
    if head is not None and (not checked.records or checked.records[0] != head[1]):  # (presniff mirrors validate)
        raise AssertionError("presniff and validate disagree on the first record")
    seen = observe(window, checked, summary, observer, state.fmt, pre)
    diags = _note_malformed(summary.path, checked.malformed, state)
    if window.base_off == 0 and data.find(b"\x00", 0, 8192) >= 0:
        state.binary = True
    observer = seen.observer
    if observer is None:
        if not final:
            _advance(state, window)
            return Outcome(None, diags), None
        what = "binary file" if state.binary else "no JSON records"
        diags.append(Diagnostic(summary.path, 0, f"{what}: {state.malformed_count} malformed lines, nothing to index"))
        return Outcome(None, diags), None
    state.fmt = seen.fmt
    state.items += len(checked.records)
    if checked.records:
        state.last_record_line = window.base_line + checked.records[-1] + 1
    if opts.keep_offsets:  # (not for a resume state alone: 8 bytes a record, 90 MB for 32 MiB of `{}` lines)
        offs = offsets if offsets is not None else array("Q", state.record_starts)
        starts = window.starts
        offs.extend(starts[i] for i in checked.records)
        if last_slice:
            state.record_starts = offs.tobytes()
    observer.raw_finish(data)
    first, last = record_times(window, checked, seen)
    if opts.attribute_session:
        linetimes.track(state.clock, checked.records, checked.texts, seen.times, seen.probe, seen.observe_all,
                        window.base_line)  # fmt: skip
    if first is not None and state.first_time is None:
        state.first_time = first
    if last is not None:
        state.last_time = last
    located_before = len(state.located)
    if opts.attribute_session:
        state.located.extend(extract_evidence(data, window, seen, state))
    if not final:
        if opts.attribute_session:  # name the fields now: this window's lines are gone at the end
            name_fields(window, seen, state.sse, state.located[located_before:])
        _advance(state, window)
        return Outcome(None, diags), observer
    complete = not window.partial_last or not window.lines
    if opts.want_state and complete:
        from musetui.core.stored import freeze, prefix_of

        state.frozen = freeze(summary, observer)
        _advance(state, window)
        state.prefix = prefix_of(data, window.base_off, state.offset)
    # Conclude on the live objects (the frozen copy stays pre-finish).
    conclude(summary, observer, state, window, checked, seen, opts.attribute_session)
    if observer.watch is not None:  # format drift: one diagnostic per unknown name, at its first line
        diags.extend(observer.watch.diagnostics(summary.path, state.fmt or "generic"))
    out = Outcome(summary, diags, state.record_starts if opts.keep_offsets else b"")
    if opts.want_state and complete:
        out.state = state
    return out, observer


def _note_malformed(relpath: str, malformed: list[Malformed], state: ScanState) -> list[Diagnostic]:
    """Count a window's malformed lines, list the first (up to :data:`MAX_LISTED_MALFORMED` per file); returns their diagnostics."""
    if not malformed:
        return []
    room = max(0, MAX_LISTED_MALFORMED - len(state.malformed))
    state.malformed.extend(malformed[:room])
    state.malformed_count += len(malformed)
    diags = [Diagnostic(relpath, m.line, f"malformed: {m.reason}") for m in malformed[:room]]
    if len(malformed) > room:
        diags.append(Diagnostic(relpath, 0, f"… {len(malformed) - room} more malformed lines"))
    return diags


def _advance(state: ScanState, window: Window) -> None:
    """Move the state past every line of ``window`` and its newline."""
    lines = window.lines
    state.n_lines = window.base_line + len(lines)
    state.offset = window.base_off + (window.rel_starts[-1] + len(lines[-1]) + 1 if lines else 0)


def prepare() -> None:
    """Build what every scan in this process needs (the model catalogue, the fingerprint database).

    Call it before forking workers, so that they inherit both instead of each building them.
    """
    lookup()
    extract.prepare()


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
    watch = observer.watch
    for rec in records:
        t, _zone = observer.observe(rec, 1)
        if watch is not None:
            watch(rec, 1)
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
                located.append(
                    Located(
                        dec, line, path, zone_of(path, dec.detector.startswith("key")), t, after_tol=TOL_AFTER_CREATED_S
                    )
                )
        summary.attribution = attribute(summary, located, lookup())
        segments.one_segment(summary, 1, max(1, len(starts)))
    offs = array("Q", [0]).tobytes() if keep_offsets else b""
    return Outcome(summary, watch.diagnostics(summary.path, fmt) if watch is not None else [], offs)


def _scan_capture(
    data: bytes,
    summary: SessionSummary,
    kind: str,
    document: Any,
    keep_offsets: bool,
    attribute_session: bool,
    budget: Budget,
) -> Outcome:
    """A VCR cassette or HAR log: one session, one item per interaction (see sources.http_capture)."""
    cap = sources.http_capture
    spans: list[Any] = []
    try:
        located, offsets = cap.scan(data, summary, kind, LOOKUP, document, spans, budget)
    except cap.NotACapture as exc:  # a name that suggests a capture, and no exchange in it: said, not silent
        return Outcome(None, [unread(summary.path, str(exc))])
    except cap.CaptureError as exc:
        return Outcome(None, [Diagnostic(summary.path, 0, f"unreadable HTTP capture: {exc}")])
    if attribute_session:
        summary.attribution = attribute(summary, located, lookup())
        judge_exchanges(summary, located, lookup(), spans)
    over = budget.diagnostic()
    diags = [Diagnostic(summary.path, 0, over)] if over else []
    return Outcome(summary, diags, array("Q", offsets).tobytes() if keep_offsets else b"")


def relpath_of(path: str, root: str) -> str:
    """``path`` relative to ``root`` with ``/`` separators (the scan record's ``path``)."""
    rel = os.path.relpath(path, root) if os.path.isdir(root) else os.path.basename(path)
    return rel.replace(os.sep, "/")
