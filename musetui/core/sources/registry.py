"""The format registry: every transcript format, in sniffing order, and the questions asked of it.

Each format module declares its :class:`~musetui.core.sources.spec.Format` once (``SPEC``); this
module lists them. The scanner, search, ``show``, the app and the report ask the registry, and
never a format module by name: adding a format means one module and one entry in
:data:`FORMATS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from musetui.core.drift import Watch
from musetui.core.model import Item, SessionSummary
from musetui.core.reader import MAX_DOCUMENT_BYTES
from musetui.core.sources import (
    api,
    bedrock,
    claude_code,
    codex,
    generic,
    http_capture,
    muse,
)
from musetui.core.sources.base import Observer, Probe, Record
from musetui.core.sources.layouts import JSON_LAYOUT, claims
from musetui.core.sources.spec import Format
from musetui.core.sources.zones import EVERYWHERE, Zones
from musetui.core.validate import parses


class _Lookup:
    """The registry's answers that a capture asks of it for its response bodies (see :class:`~.spec.Lookup`)."""

    __slots__ = ()

    def sniff_first(self, records: list[Any]) -> tuple[str, str] | None:
        return sniff_first(records)

    def zone_table(self, fmt: str | None) -> Zones:
        return zone_table(fmt)

    def build_items(self, fmt: str, records: list[Record]) -> list[Item]:
        return build_items(fmt, records)


#: What the registry hands a format that holds other formats' records, and the callers of its readers.
LOOKUP = _Lookup()

#: Every format, in the order its sniffer is tried on a record.
FORMATS: tuple[Format, ...] = (
    muse.SPEC,
    codex.SPEC,
    claude_code.SPEC,
    *api.SPECS,
    bedrock.SPEC,
    http_capture.spec(LOOKUP),
    generic.SPEC,
)

GENERIC = generic.FORMAT
#: The first records a stream is sniffed on; past them, it is ``generic``.
SNIFF_RECORDS = 8
#: The rule of a stream that no format's sniffer recognised.
GENERIC_RULE = "generic: no format rule matched the first records"

#: Every format's name (a scan record's ``format``), in the same order: the values of the
#: ``format:`` search filter, and the order in which a root's groups are shown.
NAMES: tuple[str, ...] = tuple(f.name for f in FORMATS)

_BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}
# Each format's zone table is part of its entry; the scan's hot path looks it up by name.
_ZONES: dict[str, Zones] = {f.name: f.zones for f in FORMATS if f.zones is not None}
_SNIFFERS = tuple((f.name, f.sniff) for f in FORMATS if f.sniff is not None)
_PROBES: dict[str, Probe] = {}

#: The raw API body formats (their evidence is walked record by record).
API_FORMATS = frozenset(f.name for f in FORMATS if f.api_body)


def spec(name: str) -> Format:
    """The registry entry of a format (``generic`` for a name it does not know)."""
    return _BY_NAME.get(name) or _BY_NAME[GENERIC]


def sniff(obj: Any) -> tuple[str, str] | None:
    """Recognise one parsed record; returns (format, the rule that decided) or None."""
    for name, sniff_one in _SNIFFERS:
        rule = sniff_one(obj)
        if rule:
            return name, rule
    return None


def sniff_first(records: list[Any]) -> tuple[str, str] | None:
    """(format, rule) of the first of a document's first :data:`SNIFF_RECORDS` records that a format recognises."""
    for rec in records[:SNIFF_RECORDS]:
        found = sniff(rec)
        if found is not None:
            return found
    return None


def zone_table(fmt: str | None) -> Zones:
    """The zone table of ``fmt``'s entry (:data:`~.zones.EVERYWHERE` for a format that declares none)."""
    return _ZONES.get(fmt or "", EVERYWHERE)


def observer_for(fmt: str, summary: SessionSummary) -> Observer:
    """The scan-time observer for a format (with a drift watch when the format declares what it knows)."""
    entry = _BY_NAME.get(fmt) or _BY_NAME[GENERIC]  # (spec, inline)
    observer = entry.observer(summary)
    if entry.known is not None:
        observer.watch = Watch(entry.known)
    return observer


def probe_for(fmt: str) -> Probe:
    """Byte-level line probes for a format (stateless: each is made once per process)."""
    probe = _PROBES.get(fmt)
    if probe is None:
        probe = _PROBES[fmt] = spec(fmt).probe()
    return probe


def build_items(fmt: str, records: list[Record]) -> list[Item]:
    """Items of an opened session, by format."""
    return spec(fmt).items(records)


def is_capture(fmt: str) -> bool:
    """Whether sessions of this format are captures (one item per exchange)."""
    return spec(fmt).layout == "capture"


def family_root(path: str) -> str | None:
    """The root of the transcript tree that a file's path lays out, or None: the file stands alone.

    Each format knows its own tree (:attr:`Format.family_root`): a Muse ``sessions`` folder, a
    Codex folder above ``YYYY/MM/DD``, a Claude Code ``projects`` folder. A path that lays out none
    names no family: never its mere directory, which may hold anything.
    """
    parts = path.split(os.sep)
    for f in FORMATS:
        if f.family_root is not None:
            root = f.family_root(parts)
            if root is not None:
                return root
    return None


class Sniffer:
    """Recognises a stream's format from its first records (at most :data:`SNIFF_RECORDS`).

    The caller holds back the records offered before the format is known, and replays them to
    the observer once :meth:`offer` decides.
    """

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def offer(self, obj: Any, last: bool = False) -> tuple[str, str] | None:
        """(format, rule) once decided; None: hold this record back and offer the next.

        Args:
            obj: the next record.
            last: no record follows (the stream, or this window of it, ends here).
        """
        self.count += 1
        found = sniff(obj)
        if found is None and self.count < SNIFF_RECORDS and not last:
            return None
        return found or (GENERIC, GENERIC_RULE)


Kind = Literal["capture", "document", "lines"]


@dataclass(frozen=True, slots=True)
class Shape:
    """How a file is read: a capture (of a layout), one whole JSON document, or lines."""

    kind: Kind
    layout: str | None = None
    document: Any = None


LINES = Shape("lines")


def identify(path: str, data: bytes) -> Shape:
    """How the file at ``path`` holding ``data`` is read (the one decision scan, search and ``show`` share).

    A name that claims a capture layout decides; otherwise a file whose first line is not a
    JSON record is tried as one whole JSON document (a capture, when its content shows one),
    and a one-line file may be a minified capture. Anything else is read line by line.
    """
    max_document = MAX_DOCUMENT_BYTES
    layout = claims(path, data)
    if layout is not None:
        return Shape("capture", layout)
    nl = data.find(b"\n")
    lead = data[:1]
    if lead in _SPACE:  # (the first byte after any leading white space)
        lead = data.lstrip()[:1]
    if lead in (b"{", b"[") and nl >= 0 and len(data) <= max_document:
        first_line = data[:nl].strip()
        if first_line in (b"{", b"[") or not parses(first_line):
            try:
                document = orjson.loads(data)
            except orjson.JSONDecodeError:
                document = None
            if document is not None:
                if http_capture.is_capture_document(document):
                    return Shape("capture", JSON_LAYOUT, document)
                return Shape("document", None, document)
    if (nl < 0 or nl == len(data) - 1) and lead in (
        b"{",
        b"[",
    ):  # one line: a minified HAR or cassette, or a compact array
        # (each asks for its own first byte, ``lead``: an object may be a capture, an array a document)
        document = _one_line_capture(data) if lead == b"{" else None
        if document is not None:
            return Shape("capture", JSON_LAYOUT, document)
        array = _one_line_array(data) if lead == b"[" else None
        if array is not None:
            return Shape("document", None, array)
    return LINES


#: Each byte ``bytes.lstrip`` strips, as a one-byte string (and the empty string: an empty file).
_SPACE = frozenset([b"", b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c"])


def _one_line_array(data: bytes) -> list[Any] | None:
    """The records of a one-line JSON array whose first records a format recognises, else None.

    ``json.dump`` without ``indent`` writes a saved run (a Claude Code headless run's messages,
    say) as one line: it reads as the same records as the indented array does.
    """
    if len(data) > MAX_DOCUMENT_BYTES or data.lstrip()[:1] != b"[":
        return None
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, list) or sniff_first(document) is None:
        return None
    return document


def _one_line_capture(data: bytes) -> Any:
    """The document of a one-line file that is an HTTP capture (HAR or JSON cassette), else None."""
    if (
        len(data) > MAX_DOCUMENT_BYTES
        or data.lstrip()[:1] != b"{"
        or (data.find(b'"request"') < 0 and data.find(b'"log"') < 0 and data.find(b'"status"') < 0)
    ):
        return None
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return document if http_capture.is_capture_document(document) else None
