"""What the registry knows of one format, and of one capture recorder's file layout.

A format module declares its :class:`Format` once; :mod:`musetui.core.sources.registry` lists the
declarations in sniffing order. Nothing here imports a format module, so every format module
can import this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from musetui.core.drift import Known
from musetui.core.model import Item, SessionSummary
from musetui.core.sources.base import Observer, Probe, Record
from musetui.core.sources.zones import Zones

#: How a format's file is laid out: a stream of JSON records (JSON Lines, SSE, or one whole JSON
#: document), or a recorder's capture of HTTP exchanges (one item per exchange).
Layout = Literal["records", "capture"]

#: A parsed record -> the rule that recognised it (None: not this format).
Sniff = Callable[[Any], "str | None"]

#: A path's parts (split on ``os.sep``) -> the directory of its family, when the layout names one.
FamilyRoot = Callable[[Sequence[str]], "str | None"]


@dataclass(frozen=True, slots=True)
class Format:
    """One transcript format: how it is recognised, observed, opened and laid out on disk.

    Attributes:
        name: the scan record's ``format``.
        layout: ``records`` or ``capture``.
        sniff: recognises one of the first records (None: never sniffed; chosen another way).
        observer: the scan-time observer that fills a session summary.
        probe: byte-level line questions, so most lines are never parsed twice (stateless).
        items: the items of an opened session.
        family_root: the root of the transcript tree a file's path lays out (its parent, siblings and
            fleet: what a scan of that tree compares it with), from the path alone; None when the
            path is not this format's layout (the file is then read alone).
        api_body: raw API response bodies (their evidence is walked record by record).
        zones: which fields the serving stack writes (the rest is quoted); None: every field counts.
        known: the record kinds and top-level keys the format knows (the rest is drift); None: not checked.
    """

    name: str
    layout: Layout
    sniff: Sniff | None
    observer: Callable[[SessionSummary], Observer]
    items: Callable[[list[Record]], list[Item]]
    probe: Callable[[], Probe] = Probe
    family_root: FamilyRoot | None = None
    api_body: bool = False
    zones: Zones | None = None
    known: Known | None = None


class Lookup(Protocol):
    """The registry's answers, for a format whose files hold other formats' records (a capture's bodies).

    The registry hands its own (:data:`musetui.core.sources.registry.LOOKUP`) to such a format's
    entry and to the callers of its readers: a format module never imports the registry.
    """

    def sniff_first(self, records: list[Any]) -> tuple[str, str] | None:
        """(format, rule) of the first of ``records`` that a format recognises, or None."""
        ...

    def zone_table(self, fmt: str | None) -> Zones:
        """The zone table of format ``fmt``."""
        ...

    def build_items(self, fmt: str, records: list[Record]) -> list[Item]:
        """The items of records of format ``fmt``."""
        ...


#: One recorder's file -> its exchanges and the file's line starts (``document``: already parsed;
#: then the file's read budget, :class:`musetui.core.budget.Budget`, or None for the default one).
ParseCapture = Callable[[bytes, Any, Any], "tuple[list[Any], list[int]]"]


@dataclass(frozen=True, slots=True)
class CaptureLayout:
    """One recorder's file layout (VCR cassettes, HAR logs, Go ``httprr`` traces, …).

    Attributes:
        name: the layout's name (``vcr``, ``har``, ``httprr``).
        suffixes: file names that claim the layout (matched lower-case, after any ``.gz``).
        parse: reads the file into exchanges.
        magic: the bytes such a file starts with, when the layout has them.
    """

    name: str
    suffixes: tuple[str, ...]
    parse: ParseCapture
    magic: bytes = b""
