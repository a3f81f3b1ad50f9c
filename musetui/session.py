"""Open one session on demand: its items (pread + orjson), their raw lines and decoded fingerprints."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from musetui import sources
from musetui.fingerprints import extract
from musetui.fingerprints.types import Decoded
from musetui.model import Item, SessionSummary
from musetui.reader import MAX_LINE_BYTES, is_sse, read_file, sse_payload
from musetui.sources.base import Record


@dataclass(slots=True)
class OpenedSession:
    """A session's items, with the bytes they came from."""

    summary: SessionSummary
    items: list[Item]
    data: bytes
    line_starts: list[int] = field(default_factory=list)

    def raw(self, item: Item) -> bytes:
        """The raw bytes of an item's line(s), exactly as in the file."""
        return self.data[item.offset : item.offset + item.length]

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


def read_records(data: bytes) -> tuple[list[Record], list[int]]:
    """Parse every line (or the whole document) of a file into records."""
    stripped = data.lstrip()
    lines = data.split(b"\n")
    starts: list[int] = []
    pos = 0
    for ln in lines:
        starts.append(pos)
        pos += len(ln) + 1
    records: list[Record] = []
    if stripped[:1] in (b"{", b"[") and len(lines) > 1:
        first = lines[0].strip()
        whole = None
        if first in (b"{", b"["):
            try:
                whole = orjson.loads(data)
            except orjson.JSONDecodeError:
                whole = None
        else:
            try:
                orjson.loads(first)
            except orjson.JSONDecodeError:
                try:
                    whole = orjson.loads(data)
                except orjson.JSONDecodeError:
                    whole = None
        if whole is not None:
            objs = whole if isinstance(whole, list) else [whole]
            length = len(data.rstrip())
            return [Record(1, 0, length, o) for o in objs], starts
    sse = is_sse(data)
    for i, ln in enumerate(lines):
        stripped_line = ln.strip()
        line = sse_payload(stripped_line) if sse else stripped_line
        if not line or len(line) > MAX_LINE_BYTES:  # over the limit: malformed, as the scan said
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        records.append(Record(i + 1, starts[i], len(ln.rstrip(b"\r")), obj))
    return records, starts


def open_session(summary: SessionSummary) -> OpenedSession:
    """Read and parse a session's file into items (read-only; up to the scanned size)."""
    fd = read_file(summary.abspath, 0, summary.read_bytes or None)
    if summary.format == sources.http_capture.FORMAT:
        records = sources.http_capture.records(fd.data, summary.path)
        starts = [0, *(i + 1 for i, c in enumerate(fd.data) if c == 10)]
        return OpenedSession(summary, sources.build_items(summary.format, records), fd.data, starts)
    records, starts = read_records(fd.data)
    items = sources.build_items(summary.format, records)
    return OpenedSession(summary, items, fd.data, starts)
