"""Conclude: finish and attribute a session's summary, once, after its last window.

This is the one place a scan's summary gets its final counts, times and verdict.
"""

from __future__ import annotations

from typing import Any

from musetui.core.fingerprints import segments
from musetui.core.fingerprints.attribution import attribute
from musetui.core.model import SessionSummary, parse_time
from musetui.core.scan import linetimes
from musetui.core.scan.evidence import Resolver
from musetui.core.scan.stages import Observed, ScanObserver, Validated, Window
from musetui.core.scan.state import ScanState

__all__ = ["conclude", "lookup"]

_LOOKUP: Any = None


def lookup() -> Any:
    """The model catalogue's lookup, loaded once per process (built-in plus the user's file)."""
    global _LOOKUP
    if _LOOKUP is None:
        from musetui.core.fingerprints.catalogue_lookup import (
            scan_lookup,  # pydantic only for a user's file
        )

        _LOOKUP = scan_lookup()
    return _LOOKUP


def conclude(
    summary: SessionSummary,
    observer: ScanObserver,
    state: ScanState,
    window: Window,
    checked: Validated,
    seen: Observed,
    attribute_session: bool,
) -> None:
    """Finish ``summary`` from the scan's ``state``: counts, times, the observer's last word, and the attribution.

    ``window``, ``checked`` and ``seen`` are the last window, its records and what observing it
    gave: the fields of its evidence are named from its lines, and its records' verdicts and
    times make the session's segments.
    """
    summary.items = state.items
    summary.malformed_lines = state.malformed_count
    summary.malformed = list(state.malformed)
    observer.finish()
    summary.started_at = parse_time(state.first_time)
    summary.ended_at = parse_time(state.last_time)
    if attribute_session:
        located, catalogue = state.located, lookup()
        # (the resolver names the fields of located artifacts: none to name without them)
        resolver = Resolver(window.lines, state.sse, window.base_line, seen.kept) if located else None
        summary.attribution = attribute(summary, located, catalogue, resolver)
        lines, probe, records = window.lines, seen.probe, checked.records
        raw_time = None if seen.observe_all else (lambda i: probe.time(lines[i]))
        before = (state.items - len(records), state.last_record_line)
        segments.conclude_lines(
            summary, located, catalogue, records, window.base_line, seen.times, raw_time, before,
            observer.merged_lines,
        )  # fmt: skip
        backwards = linetimes.reason(state.clock)
        if backwards is not None:
            segments.add_reason(summary.attribution, backwards)
