"""What scanning one file produced (:class:`Outcome`), and what continuing it after an append needs (:class:`ScanState`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from musetui.core._pickling import reduce_by_fields
from musetui.core.fingerprints.attribution import Located
from musetui.core.model import Diagnostic, Malformed, SessionSummary
from musetui.core.scan.linetimes import Clock

__all__ = ["Outcome", "ScanState", "new_state"]


@dataclass(slots=True)
class Outcome:
    """What scanning one file produced."""

    __reduce__ = reduce_by_fields

    summary: SessionSummary | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    offsets: bytes = b""  # array('Q') of record start offsets, when requested
    state: Any = None  # a ScanState when the scan can be resumed after an append


@dataclass(slots=True)
class ScanState:
    """Everything needed to continue scanning a file after its last complete line.

    ``frozen`` is the (summary, observer) pair *before* the summary was finished and
    attributed, so resuming never applies a one-time step twice: a copy, as the text of its
    plain data (see :func:`musetui.core.stored.freeze`).
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
    record_starts: bytes  # array('Q') of every record's start, only when the scan keeps offsets (else empty)
    binary: bool = False  # NUL bytes seen at the start (a binary file, when no record is found)
    last_record_line: int = 0  # the line of the last record read (where the last segment ends)
    clock: Clock = field(default_factory=Clock)  # the line times so far (time-mismatch when they run backwards)
    #: The digest of the bytes before ``offset`` (see :func:`musetui.core.stored.prefix_of`), when the
    #: scan that made this state held them; not stored with it (its blob keeps the digest apart).
    prefix: str | None = None


def new_state(sse: bool) -> ScanState:
    """The state of a scan that has read nothing yet."""
    return ScanState(b"", None, sse, 0, 0, 0, [], 0, [], {}, set(), None, None, b"")
