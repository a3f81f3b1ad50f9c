"""Sniff and observe: a window's format from its first records, then what each record tells the summary.

Most records are never parsed twice: the format's probe gleans what it needs from the raw
bytes and says which records the (slower) observer must see, as orjson reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import simdjson

from musetui.core import sources
from musetui.core.diagnostics import LineError
from musetui.core.drift import NO_KINDS, Kinds
from musetui.core.model import SessionSummary
from musetui.core.scan.stages import (
    LineProbe,
    Observed,
    RecordWatch,
    ScanObserver,
    Validated,
    Window,
)
from musetui.core.scan.validate import parse_any, record
from musetui.core.sources.registry import GENERIC, GENERIC_RULE, SNIFF_RECORDS, Sniffer
from musetui.core.sources.registry import sniff as sniff_record

__all__ = ["Sniffed", "observe", "presniff", "record_times", "sniff", "watch_records"]

#: Bytes of observed lines whose parse is kept for naming evidence fields (per file or window).
KEEP_PARSED_BYTES = 4 * 1024 * 1024


@dataclass(slots=True)
class Sniffed:
    """The format of a window's first records, and how many of them the decision took.

    ``decider`` is the index (in the window's records) of the record that decided, with
    ``doc`` its parse; the records before it were held back. None: no record decided, and
    every record was held back (the format is generic).
    """

    fmt: str
    rule: str
    decider: int | None
    doc: Any = None


def sniff(window: Window, checked: Validated) -> Sniffed | None:
    """The format, from the first records of ``window`` (None: the window has no record)."""
    records, texts = checked.records, checked.texts
    if not records:
        return None
    sniffer = Sniffer()
    last_line = len(window.lines) - 1
    k = -1
    try:
        for k, i in enumerate(records):
            doc = record(texts[k])
            found = sniffer.offer(doc, last=i == last_line)
            if found is not None:
                return Sniffed(found[0], found[1], k, doc)
            del doc
    except Exception as exc:
        raise LineError(window.base_line + records[k] + 1, exc) from exc
    return Sniffed(GENERIC, GENERIC_RULE, None)


def presniff(window: Window, sse: bool, max_line: int) -> tuple[Sniffed, int] | None:
    """The format from the window's first record, read before validation, when that record decides it.

    Validation can then show the format's drift watch every record as it parses it (no second
    parse of the first window). Returns the decision and the record's line index; None when the
    first record does not decide alone (it is held back and the format sniffed after validation,
    as before), or is not plainly a record. The trimming mirrors :func:`~musetui.core.scan.validate.validate`.
    """
    if sse:
        return None
    lines = window.lines
    last_line = len(lines) - 1
    for i, raw in enumerate(lines):
        line = raw
        if not line:
            continue
        if line[0] in (32, 9, 13):
            line = line.strip()
            if not line:
                continue
        elif line[-1] == 13:
            line = line[:-1]
        if len(line) > max_line:
            return None
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        # (what ``Sniffer().offer(doc, last=i == last_line)`` decides on a first record, without the object)
        found = sniff_record(doc)
        if found is None:
            if i != last_line and SNIFF_RECORDS > 1:
                return None  # (held back)
            found = GENERIC, GENERIC_RULE
        return Sniffed(found[0], found[1], 0, doc), i
    return None


def observe(
    window: Window,
    checked: Validated,
    summary: SessionSummary,
    observer: ScanObserver | None,
    fmt: str | None,
    pre: Sniffed | None = None,
) -> Observed:
    """Observe the records of ``window``: sniffing the format first when no ``observer`` is known yet.

    ``pre``: the format was decided from the first record before validation (:func:`presniff`),
    and ``observer`` made for it: that record is observed here, as the deciding record is.
    """
    n = len(window.lines)
    times: list[Any] = [None] * n
    zones = bytearray(n)
    start = 0
    if pre is not None and observer is not None:
        fmt = pre.fmt
        i = checked.records[0]
        t, zones[i] = observer.observe(pre.doc, window.base_line + i + 1)
        times[i] = t if t is None or type(t) is str or type(t) is int or type(t) is float else None  # (_plain_time)
        start = 1
    elif observer is None:
        found = sniff(window, checked)
        if found is None:
            return Observed(None, fmt, sources.probe_for(fmt or "generic"), True, times, zones, {})
        fmt = found.fmt
        summary.format, summary.format_rule = fmt, found.rule
        observer = sources.observer_for(fmt, summary)
        held = found.decider if found.decider is not None else len(checked.records)
        if observer.watch is not None:  # validation ran before the format was known: drift sees this window now
            watch_records(window, checked, observer.watch)
        _observe_held(window, checked, held, observer, times, zones)
        if found.decider is not None:
            i = checked.records[held]
            times[i], zones[i] = observer.observe(found.doc, window.base_line + i + 1)
            times[i] = _plain_time(times[i])
        start = held + 1
    probe: LineProbe = sources.probe_for(fmt or "generic")
    observe_all = probe.observe_all or start > len(checked.records)  # (a generic fallback: every record was observed)
    kept = _observe_rest(window, checked, start, observer, probe, times, zones)
    return Observed(observer, fmt, probe, observe_all, times, zones, kept)


def watch_records(window: Window, checked: Validated, watch: RecordWatch) -> None:
    """Show the drift ``watch`` every record of ``window`` (the first window: its format was sniffed after validation).

    What it reads of each record is kept in ``checked.kinds``, as validation keeps it.
    """
    parser = simdjson.Parser()
    base_line = window.base_line
    kinds: list[Kinds] = []
    for i, line in zip(checked.records, checked.texts, strict=True):
        doc = parse_any(parser, line)
        kinds.append(watch(doc, base_line + i + 1) if doc is not None else NO_KINDS)
        del doc
    checked.kinds = kinds


def _observe_held(
    window: Window, checked: Validated, held: int, observer: ScanObserver, times: list[Any], zones: bytearray
) -> None:
    """Observe the records held back while the format was unknown, with a parser of their own."""
    if not held:
        return
    parser = simdjson.Parser()
    base_line = window.base_line
    records, texts = checked.records, checked.texts
    for k in range(held):
        j = records[k]
        line = texts[k]
        try:
            pdoc = _orjson_or_none(line) or parse_any(parser, line)
        except Exception as exc:
            raise LineError(base_line + j + 1, exc) from exc
        if pdoc is None:
            continue
        try:
            t, zones[j] = observer.observe(pdoc, base_line + j + 1)
        except Exception as exc:
            raise LineError(base_line + j + 1, exc) from exc
        del pdoc
        times[j] = _plain_time(t)


def _observe_rest(
    window: Window,
    checked: Validated,
    start: int,
    observer: ScanObserver,
    probe: LineProbe,
    times: list[Any],
    zones: bytearray,
) -> dict[int, Any]:
    """Observe the records from ``start`` on: those the probe cannot glean from their bytes; returns the parses kept."""
    records, texts = checked.records, checked.texts
    if start >= len(records):  # (nothing left to observe: a one-record window)
        return {}
    # (what the drift watch read of each record: the probe need not look for it in the bytes)
    reads: Sequence[Kinds | None] = [None] * len(records) if checked.kinds is None else checked.kinds
    if start:
        records, texts, reads = records[start:], texts[start:], reads[start:]
    base_line = window.base_line
    kept: dict[int, Any] = {}
    kept_bytes = 0
    see = observer.observe
    i = -1
    try:
        if probe.observe_all:
            for i, line in zip(records, texts, strict=True):
                t, zones[i] = see(record(line), base_line + i + 1)
                times[i] = t if t is None or type(t) is str or type(t) is int or type(t) is float else None
            return kept
        glean = probe.glean
        skip = probe.skip  # (kinds glean would pass by: not called; ~0.4 k instructions a plain Muse line less)
        loads = orjson.loads
        for i, line, read in zip(records, texts, reads, strict=True):
            if read in skip or not glean(line, observer, read):
                continue
            try:
                rec = loads(line)
            except orjson.JSONDecodeError:
                rec = parse_any(simdjson.Parser(), line)
            else:
                if kept_bytes < KEEP_PARSED_BYTES:
                    kept_bytes += len(line)
                    kept[i] = rec
            t, zones[i] = see(rec, base_line + i + 1)
            del rec
            # (an object or array where a time belongs: no time, and no parser proxy kept)
            times[i] = t if t is None or type(t) is str or type(t) is int or type(t) is float else None
    except Exception as exc:
        raise LineError(base_line + i + 1, exc) from exc
    return kept


def _orjson_or_none(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _plain_time(t: Any) -> Any:
    """A raw time as observed: a string or a number; anything else is no time."""
    return t if t is None or type(t) in (str, int, float) else None


def record_times(window: Window, checked: Validated, seen: Observed) -> tuple[Any, Any]:
    """The raw times of the window's first and last timed records (the probe's, where a record was not observed)."""
    times, lines = seen.times, window.lines
    probe_time = seen.probe.time
    observe_all = seen.observe_all
    first = last = None
    for i in checked.records:
        first = times[i] if times[i] is not None or observe_all else probe_time(lines[i])
        if first is not None:
            break
    for i in reversed(checked.records):
        last = times[i] if times[i] is not None or observe_all else probe_time(lines[i])
        if last is not None:
            break
    return first, last
