"""What the scanner's stages hand each other, and the typed shape of each stage.

Each stage returns a value (never fills an argument): a :class:`Window` is split into lines,
validated into :class:`Validated`, observed into :class:`Observed`; the evidence stage returns
the located fingerprints, and the conclude stage finishes the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from musetui.core.model import Malformed, SessionSummary

if TYPE_CHECKING:
    from musetui.core.fingerprints.attribution import Located
    from musetui.core.scan.state import ScanState

__all__ = [
    "Conclude",
    "EvidenceStage",
    "LineProbe",
    "ObserveStage",
    "Observed",
    "ScanObserver",
    "Validate",
    "Validated",
    "Window",
]


class RecordWatch(Protocol):
    """Format drift: sees every record of a file, in line order (see :class:`musetui.core.drift.Watch`)."""

    def __call__(self, doc: Any, line: int) -> tuple[str | None, str | None]:
        """Check one record; returns its kind and nested kind as read (strings, else None)."""
        ...

    def diagnostics(self, path: str, fmt: str) -> list[Any]: ...


class ScanObserver(Protocol):
    """A format's observer: reads what the summary needs from records (see :class:`musetui.core.sources.base.Observer`)."""

    @property
    def watch(self) -> RecordWatch | None:
        """The format's drift watch (None: the format lists no known kinds)."""
        ...

    @property
    def merged_lines(self) -> Sequence[int]:
        """The lines of records that continue an earlier record's item (not items of their own), in order."""
        ...

    def observe(self, doc: Any, line: int) -> tuple[Any, int]:
        """Read one record; return (its raw time, its zone)."""
        ...

    def raw_finish(self, data: bytes) -> None:
        """Take counts cheaper read from a window's raw bytes."""
        ...

    def finish(self) -> None:
        """Called once, after the last record."""
        ...


class LineProbe(Protocol):
    """A format's byte-level questions about one raw line (see :class:`musetui.core.sources.base.Probe`)."""

    @property
    def observe_all(self) -> bool:
        """Whether every record goes to the observer (no line is gleaned from its bytes)."""
        ...

    def glean(self, line: bytes, observer: Any, kinds: tuple[str | None, str | None] | None = None) -> bool:
        """Take what the summary needs from the bytes; True when a full observe is still needed.

        ``observer`` is the observer of the probe's own format (so typed by the format); ``kinds``:
        the record's kind and nested kind as the drift watch read them (None: not read).
        """
        ...

    def zone(self, line: bytes) -> int:
        """Model output or quoted input, from the raw line."""
        ...

    def time(self, line: bytes) -> Any:
        """The raw recorded time of the line (None when unknown)."""
        ...

    @property
    def time_key(self) -> bytes:
        """The bytes :meth:`time` looks for (``b'"timestamp":"'``), before the time value; empty: none."""
        ...

    @property
    def time_in_place(self) -> bool:
        """Whether a file's lines have their :attr:`time_key` at one place (so their times are cut there)."""
        ...

    @property
    def skip(self) -> frozenset[tuple[str | None, str | None]]:
        """Kinds of records :meth:`glean` never asks to observe nor takes anything from (not shown to it)."""
        ...


@dataclass(slots=True)
class Window:
    """Lines of a file's bytes, from ``base_off`` (byte) and ``base_line`` (lines before it)."""

    lines: list[bytes]
    rel_starts: list[int]  # each line's start, from the window's first byte
    starts: list[int]  # each line's start in the file
    partial_last: bool  # the last line has no newline
    base_line: int
    base_off: int
    size: int  # bytes in the window


@dataclass(slots=True)
class Validated:
    """The records of a window: their line indices, their JSON text, and the lines that are not records."""

    records: list[int]
    texts: list[bytes]  # each record's JSON (the line trimmed; an SSE line's payload)
    malformed: list[Malformed] = field(default_factory=list)
    kinds: list[tuple[str | None, str | None]] | None = None  # each record's kinds, as the drift watch read them


@dataclass(slots=True)
class Observed:
    """What observing a window's records gave: its format's observer and probe, and each line's time and zone."""

    observer: ScanObserver | None  # None: no record yet (a later window may have some)
    fmt: str | None
    probe: LineProbe
    observe_all: bool
    times: list[Any]  # per line: the raw time an observer read (None: not observed, or no time)
    zones: bytearray  # per line: the zone an observer read
    kept: dict[int, Any]  # line index -> the record as orjson read it (for naming evidence fields)


class Validate(Protocol):
    """The validate stage: which lines of a window are records (a bulk validator has this shape too)."""

    def __call__(self, window: Window, sse: bool, grew: bool, max_line: int) -> Validated: ...


class ObserveStage(Protocol):
    """The sniff-and-observe stage."""

    def __call__(
        self,
        window: Window,
        checked: Validated,
        summary: SessionSummary,
        observer: ScanObserver | None,
        fmt: str | None,
    ) -> Observed: ...


class EvidenceStage(Protocol):
    """The evidence stage: the fingerprints in a window, located (a bulk counter has this shape too)."""

    def __call__(self, data: bytes, window: Window, seen: Observed, state: ScanState) -> list[Located]: ...


class Conclude(Protocol):
    """The conclude stage: finish and attribute the summary once, after the last window."""

    def __call__(
        self,
        summary: SessionSummary,
        observer: ScanObserver,
        state: ScanState,
        window: Window,
        seen: Observed,
        attribute_session: bool,
    ) -> None: ...
