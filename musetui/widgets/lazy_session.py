"""Open very large JSONL sessions lazily: one row per line, items parsed a window at a time.

``open_session`` parses every line before anything shows (seconds for 100,000 items).
Here only the line offsets are found up front (one pass of ``bytes.find``); the records
of a window of lines go through the format's own item builder when a row of that window
is first drawn. Rows whose line was merged into the item above (or kept no item) show a
short placeholder, so row ``r`` is always the ``r``-th non-empty line of the file.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

import orjson

from musetui.core import sources
from musetui.core.model import Item, SessionSummary
from musetui.core.reader import MAX_LINE_BYTES, read_file
from musetui.core.session import OpenedSession
from musetui.core.sources.base import Record

#: Sessions with at least this many items open lazily (JSON Lines formats only).
LAZY_MIN_ITEMS = 20_000
#: Lines parsed together (the item builders see a window at a time).
WINDOW = 512
#: Parsed windows kept in memory.
MAX_WINDOWS = 64
#: Lines parsed beyond each side of a window, so split messages crossing its edge merge whole.
LOOKAROUND = 64


def can_open_lazily(summary: SessionSummary) -> bool:
    """True for big sessions of a line-per-record format (not whole-document API captures)."""
    return summary.items >= LAZY_MIN_ITEMS and summary.format not in sources.API_FORMATS


_BLANK = frozenset(b" \t\r\x0b\x0c")


def line_starts(data: bytes) -> tuple[array[int], array[int]]:
    """Offsets and 1-based numbers of every non-empty line of ``data``."""
    starts: array[int] = array("q")
    numbers: array[int] = array("q")
    pos = 0
    line = 1
    size = len(data)
    find = data.find
    while pos < size:
        nl = find(b"\n", pos)
        end = size if nl < 0 else nl
        if end > pos and (data[pos] not in _BLANK or not data[pos:end].isspace()):
            starts.append(pos)
            numbers.append(line)
        if nl < 0:
            break
        pos = nl + 1
        line += 1
    return starts, numbers


class LazyItems(Sequence[Item]):
    """A read-only sequence of items, one per non-empty line, parsed on demand."""

    def __init__(self, fmt: str, data: bytes, starts: array[int], numbers: array[int]) -> None:
        self.format = fmt
        self.data = data
        self.starts = starts
        self.numbers = numbers
        self._windows: dict[int, list[Item]] = {}

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | Sequence[Item]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self.starts)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        window = index // WINDOW
        items = self._windows.get(window)
        if items is None:
            items = self._parse(window)
            if len(self._windows) >= MAX_WINDOWS:
                self._windows.pop(next(iter(self._windows)))
            self._windows[window] = items
        return items[index - window * WINDOW]

    def __iter__(self) -> Iterator[Item]:
        for i in range(len(self)):
            yield self[i]

    def index_for_line(self, line: int) -> int | None:
        """The row of the last non-empty line at or before ``line``."""
        numbers = self.numbers
        lo, hi = 0, len(numbers)
        while lo < hi:
            mid = (lo + hi) // 2
            if numbers[mid] <= line:
                lo = mid + 1
            else:
                hi = mid
        if not numbers:
            return None
        return max(0, lo - 1)

    def _span(self, row: int) -> tuple[int, int]:
        start = self.starts[row]
        nl = self.data.find(b"\n", start)
        end = len(self.data) if nl < 0 else nl
        if end > start and self.data[end - 1 : end] == b"\r":
            end -= 1
        return start, end

    def _parse(self, window: int) -> list[Item]:
        first = window * WINDOW
        last = min(len(self.starts), first + WINDOW)
        # Parse a margin on both sides: an API message split over several lines may start
        # before the window (its continuation rows here are "merged") or end after it.
        lo = max(0, first - LOOKAROUND)
        hi = min(len(self.starts), last + LOOKAROUND)
        records, row_of_line, fillers = self._records(lo, hi, first, last)
        try:
            built = sources.build_items(self.format, records)
        except Exception as exc:  # an adapter bug must not blank the list
            built = []
            for rec in records:
                bad = row_of_line[rec.line]
                if first <= bad < last:
                    fillers[bad] = Item(bad, rec.line, rec.offset, rec.length, "unknown", raw=rec.obj, text=f"({exc})")
        out: list[Item | None] = [None] * (last - first)
        for item in built:
            row = row_of_line.get(item.line, -1)
            if first <= row < last and out[row - first] is None:
                item.index = row
                out[row - first] = item
            for merged_line in item.merged:
                nrow = row_of_line.get(merged_line, -1)
                if first <= nrow < last and out[nrow - first] is None and nrow not in fillers:
                    start, end = self._span(nrow)
                    out[nrow - first] = Item(
                        nrow,
                        merged_line,
                        start,
                        end - start,
                        "meta",
                        subkind="merged",
                        text=f"(merged into the item on line {item.line})",
                    )
        return [self._gap(first + i, fillers) if item is None else item for i, item in enumerate(out)]

    def _records(self, lo: int, hi: int, first: int, last: int) -> tuple[list[Record], dict[int, int], dict[int, Item]]:
        """The records of rows ``lo`` to ``hi``, the row of each line, and the malformed rows from ``first`` to ``last``."""
        records: list[Record] = []
        row_of_line: dict[int, int] = {}
        fillers: dict[int, Item] = {}
        for row in range(lo, hi):
            start, end = self._span(row)
            line_no = self.numbers[row]
            row_of_line[line_no] = row
            if end - start > MAX_LINE_BYTES:  # malformed, as the scan said
                if first <= row < last:
                    fillers[row] = Item(
                        row,
                        line_no,
                        start,
                        end - start,
                        "unknown",
                        text=f"malformed line: {end - start:,} bytes, over the {MAX_LINE_BYTES // 2**20} MiB limit",
                    )
                continue
            try:
                obj = orjson.loads(self.data[start:end])
            except orjson.JSONDecodeError as exc:
                if first <= row < last:
                    fillers[row] = Item(row, line_no, start, end - start, "unknown", text=f"malformed line: {exc}")
                continue
            records.append(Record(line_no, start, end - start, obj))
        return records, row_of_line, fillers

    def _gap(self, row: int, fillers: dict[int, Item]) -> Item:
        """The row of a line that gave no item: its malformed line's, or a placeholder."""
        if row in fillers:
            return fillers[row]
        start, end = self._span(row)
        return Item(
            row, self.numbers[row], start, end - start, "meta", subkind="no item", text="(this line produced no item)"
        )


def open_lazily(summary: SessionSummary) -> OpenedSession:
    """Read a session's bytes and line offsets; its items parse when first shown."""
    from musetui.core.reader import TooLarge
    from musetui.core.scanner import WINDOW_BYTES
    from musetui.core.session import FileView, windowed_line_starts

    try:
        fd = read_file(summary.abspath, 0, summary.read_bytes or None, whole_max=WINDOW_BYTES)
    except TooLarge as exc:  # bounded memory: line offsets found a window at a time, lines read when shown
        size = min(int(exc.args[0]), summary.read_bytes or int(exc.args[0]))
        view = FileView(summary.abspath, size)
        starts, numbers = windowed_line_starts(summary.abspath, size)
        return OpenedSession(summary, LazyItems(summary.format, view, starts, numbers), view)  # type: ignore[arg-type]
    starts, numbers = line_starts(fd.data)
    items = LazyItems(summary.format, fd.data, starts, numbers)
    return OpenedSession(summary, items, fd.data)  # type: ignore[arg-type]


def sibling(items: LazyItems) -> LazyItems:
    """Another view of the same lines with its own cache (for a worker thread)."""
    return LazyItems(items.format, items.data, items.starts, items.numbers)
