"""Open one session on demand: its items (pread + orjson), their raw lines and decoded fingerprints."""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from typing import Any

import orjson

from musetui.core import sources
from musetui.core.diagnostics import internal_error
from musetui.core.fingerprints import extract
from musetui.core.fingerprints.types import Decoded
from musetui.core.model import Diagnostic, Item, SessionSummary
from musetui.core.reader import (
    MAX_LINE_BYTES,
    TooLarge,
    is_sse,
    open_regular,
    read_file,
    read_range,
    sse_payload,
)
from musetui.core.sources.base import Record
from musetui.core.sources.registry import LOOKUP, identify, is_capture


@dataclass(slots=True)
class OpenedSession:
    """A session's items, with the bytes they came from."""

    summary: SessionSummary
    items: list[Item]
    data: Any  # the file's bytes, or a FileView of a file too large to hold
    line_starts: list[int] = field(default_factory=list)
    #: What went wrong while building the items (an ``internal error``: the generic view is shown).
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def raw(self, item: Item) -> bytes:
        """The raw bytes of an item's line(s), exactly as in the file.

        A line over the line limit (a malformed filler row) gives only its first
        MAX_LINE_BYTES: a 2 GB line is never read into memory to be shown.
        """
        return bytes(self.data[item.offset : item.offset + min(item.length, MAX_LINE_BYTES)])

    def decoded(self, item: Item) -> list[Decoded]:
        """Every fingerprint in the item, via the full schema-agnostic walk."""
        return [dec for dec, _path in self.decoded_with_paths(item)]

    def decoded_with_paths(self, item: Item) -> list[tuple[Decoded, str]]:
        """Every fingerprint in the item with the field path where it sits (each value once)."""
        objs = item.raw if isinstance(item.raw, list) else [item.raw]
        out: list[tuple[Decoded, str]] = []
        seen: set[str] = set()
        for obj in objs:
            for dec, _key, path in extract.walk_record(obj):
                if dec.value in seen and dec.value:
                    continue
                seen.add(dec.value)
                out.append((dec, path))
        return out


def read_records(data: bytes, path: str = "") -> tuple[list[Record], list[int]]:
    """Parse every line (or the whole document) of a file into records, as the scanner reads it."""
    lines = data.split(b"\n")
    starts: list[int] = []
    pos = 0
    for ln in lines:
        starts.append(pos)
        pos += len(ln) + 1
    shape = identify(path, data)
    if shape.document is not None:
        whole = shape.document
        objs = whole if isinstance(whole, list) else [whole]
        length = len(data.rstrip())
        return [Record(1, 0, length, o) for o in objs], starts
    return _line_records(lines, starts, is_sse(data)), starts


def _line_records(lines: list[bytes], starts: list[int], sse: bool, base_line: int = 0) -> list[Record]:
    """The records of JSON Lines (or SSE lines); ``starts`` are their file offsets."""
    records: list[Record] = []
    for i, ln in enumerate(lines):
        stripped_line = ln.strip()
        line = sse_payload(stripped_line) if sse else stripped_line
        if not line or len(line) > MAX_LINE_BYTES:  # over the limit: malformed, as the scan said
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        records.append(Record(base_line + i + 1, starts[i], len(ln.rstrip(b"\r")), obj))
    return records


class FileView:
    """Slices of a file read on demand (pread), for a session too large to hold in memory."""

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, span: slice) -> bytes:
        start, stop, _step = span.indices(self.size)
        return read_range(self.path, start, max(0, stop - start)) if stop > start else b""

    def find(self, sub: bytes, start: int = 0, end: int | None = None) -> int:
        """Like ``bytes.find``, reading 1 MiB at a time."""
        stop = self.size if end is None else min(end, self.size)
        pos = max(0, start)
        while pos < stop:
            chunk = self[pos : min(stop, pos + 2**20)]
            if not chunk:
                break
            i = chunk.find(sub)
            if i >= 0:
                return pos + i
            pos += max(1, len(chunk) - len(sub) + 1)
        return -1


def windowed_line_starts(path: str, limit: int) -> tuple[array[int], array[int]]:
    """Offsets and 1-based numbers of every non-blank line of the first ``limit`` bytes of a file.

    What ``widgets.lazy_session.line_starts`` gives for bytes in memory, read a window at a
    time (a line longer than a window is found by its end, never held).
    """
    from musetui.core.scan.windows import find_newline as _find_newline
    from musetui.core.scan.windows import pread as _pread
    from musetui.core.scanner import WINDOW_BYTES

    starts: array[int] = array("q")
    numbers: array[int] = array("q")
    fd = open_regular(path)
    try:
        pos = 0
        line = 1
        while pos < limit:
            chunk = _pread(fd, min(WINDOW_BYTES, limit - pos), pos)
            if not chunk:
                break
            cut = len(chunk) if pos + len(chunk) >= limit else chunk.rfind(b"\n") + 1
            if cut == 0:  # one line longer than a window
                starts.append(pos)
                numbers.append(line)
                end = _find_newline(fd, pos + len(chunk), limit)
                pos = end + 1 if end >= 0 else limit
                line += 1
                continue
            i = 0
            while i < cut:
                nl = chunk.find(b"\n", i, cut)
                stop = cut if nl < 0 else nl
                if stop > i and not chunk[i:stop].isspace():
                    starts.append(pos + i)
                    numbers.append(line)
                if nl < 0:
                    break
                i = nl + 1
                line += 1
            pos += cut
    finally:
        os.close(fd)
    return starts, numbers


def _open_windows(summary: SessionSummary) -> OpenedSession:
    """Open a large JSON Lines session window by window (see :func:`musetui.core.scanner._scan_windows`).

    Only the parsed records are kept; a line longer than a window is skipped unread, as
    the scan reported it malformed. Raw lines are read again when shown (:class:`FileView`).
    """
    from musetui.core.scan.windows import find_newline as _find_newline
    from musetui.core.scan.windows import pread as _pread
    from musetui.core.scanner import WINDOW_BYTES

    fd = open_regular(summary.abspath)
    records: list[Record] = []
    starts: list[int] = []
    try:
        size = os.fstat(fd).st_size
        limit = min(size, summary.read_bytes or size)
        pos = 0
        line_no = 0
        sse = False
        while pos < limit:
            chunk = _pread(fd, min(WINDOW_BYTES, limit - pos), pos)
            if not chunk:
                break
            if pos == 0:
                sse = is_sse(chunk)
            cut = len(chunk) if pos + len(chunk) >= limit else chunk.rfind(b"\n") + 1
            if cut == 0:  # a line longer than a window: malformed, skipped unread
                end = _find_newline(fd, pos + len(chunk), limit)
                starts.append(pos)
                line_no += 1
                pos = end + 1 if end >= 0 else limit
                continue
            window = chunk[:cut] if cut < len(chunk) else chunk
            del chunk
            lines = window.split(b"\n")
            if window.endswith(b"\n"):
                lines.pop()
            local: list[int] = []
            at = pos
            for ln in lines:
                local.append(at)
                at += len(ln) + 1
            records.extend(_line_records(lines, local, sse, line_no))
            starts.extend(local)
            line_no += len(lines)
            pos += len(window)
            del window, lines
    finally:
        os.close(fd)
    items, diags = build_items_safely(summary.format, records, summary.path)
    return OpenedSession(summary, items, FileView(summary.abspath, limit), starts, diags)


def open_session(summary: SessionSummary) -> OpenedSession:
    """Read and parse a session's file into items (read-only; up to the scanned size)."""
    from musetui.core.scanner import WINDOW_BYTES

    try:
        fd = read_file(summary.abspath, 0, summary.read_bytes or None, whole_max=WINDOW_BYTES)
    except TooLarge:
        return _open_windows(summary)
    if is_capture(summary.format):
        records = sources.http_capture.records(fd.data, summary.path, LOOKUP)
        starts = [0, *(i + 1 for i, c in enumerate(fd.data) if c == 10)]
        items, diags = build_items_safely(summary.format, records, summary.path)
        return OpenedSession(summary, items, fd.data, starts, diags)
    records, starts = read_records(fd.data, summary.path)
    items, diags = build_items_safely(summary.format, records, summary.path)
    return OpenedSession(summary, items, fd.data, starts, diags)


def build_items_safely(fmt: str, records: list[Record], path: str) -> tuple[list[Item], list[Diagnostic]]:
    """Items of a session, behind the per-file boundary.

    When the format's item builder fails on this file (a bug), the records are shown as
    generic items instead, and the failure becomes the file's ``internal error`` diagnostic.
    """
    try:
        return sources.build_items(fmt, records), []
    except Exception as exc:
        diag = internal_error(path, exc)
    try:
        return sources.build_items("generic", records), [diag]
    except Exception as exc:
        return [], [diag, internal_error(path, exc)]


#: ``show --line`` of a JSON Lines session with at least this many items parses only the lines near it.
NEAR_MIN_ITEMS = 20_000
#: Lines parsed on each side of the line asked for (an item merged from several lines stays whole).
NEAR_LINES = 1024


def open_near(summary: SessionSummary, line: int) -> OpenedSession:
    """The items of the lines near ``line`` (for ``show --line``), in memory bounded by the lines read.

    A session of many items (JSON Lines, not a whole document or a capture) is not parsed whole:
    the offset of line ``line - NEAR_LINES`` is found by counting newlines a chunk at a time, and
    only the lines from there to ``line + NEAR_LINES`` are parsed, by the same item builder as
    :func:`open_session`. Any other session is opened whole.
    """
    from musetui.core.scanner import WINDOW_BYTES

    if summary.items < NEAR_MIN_ITEMS or summary.format in sources.API_FORMATS or is_capture(summary.format):
        return open_session(summary)
    try:
        data: Any = read_file(summary.abspath, 0, summary.read_bytes or None, whole_max=WINDOW_BYTES).data
        limit = len(data)
    except TooLarge as exc:
        limit = min(int(exc.args[0]), summary.read_bytes or int(exc.args[0]))
        data = FileView(summary.abspath, limit)
    first = max(1, line - NEAR_LINES)
    pos = _line_offset(data, limit, first)
    block = bytes(data[pos : min(limit, pos + WINDOW_BYTES)])
    parts = block.split(b"\n", 2 * NEAR_LINES + 1)
    # The last part is what follows the last newline split on: kept only as the file's own last line.
    lines = parts if len(parts) <= 2 * NEAR_LINES + 1 and pos + len(block) >= limit else parts[:-1]
    starts: list[int] = []
    at = pos
    for ln in lines:
        starts.append(at)
        at += len(ln) + 1
    records = _line_records(lines, starts, is_sse(bytes(data[:8])), first - 1)
    items, diags = build_items_safely(summary.format, records, summary.path)
    return OpenedSession(summary, items, data, [], diags)


def _line_offset(data: Any, limit: int, line: int) -> int:
    """The offset of 1-based ``line`` of ``data`` (bytes or a FileView), counting newlines 16 MiB at a time."""
    todo = line - 1
    pos = 0
    while todo > 0 and pos < limit:
        chunk = bytes(data[pos : min(limit, pos + 16 * 1024 * 1024)])
        k = chunk.count(b"\n")
        if k < todo:
            todo -= k
            pos += len(chunk)
            continue
        i = -1
        for _ in range(todo):
            i = chunk.find(b"\n", i + 1)
        return pos + i + 1
    return pos
