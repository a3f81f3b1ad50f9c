"""Reading a session's segments, as every view shows them: from the scan, or from a stored record.

Building them (each item's own verdict, the runs, the flags) is :mod:`musetui.core.fingerprints.segments`,
which needs the attribution engine; the views need only this, so the app's first frame does not
wait for that engine.
"""

from __future__ import annotations

from collections.abc import Sequence

from musetui.core.model import Segment, SessionSummary, parse_time

__all__ = ["describe_segment", "segment_at", "segments_of", "who"]


def who(provider: str, host: str | None) -> str:
    """``openai/azure``, or the provider alone."""
    return f"{provider}/{host}" if host else provider


def segments_of(summary: SessionSummary) -> list[Segment]:
    """The session's segments: computed by the scan, or read from a light summary's stored record."""
    if summary.segments or summary.record_z is None:
        return summary.segments
    import orjson

    try:
        got = orjson.loads(summary.stored_record or b"{}").get("segments") or []
        return [
            Segment(g["first_line"], g["last_line"], g["items"], g["provider"], g["host"],
                    parse_time(g["started_at"]), parse_time(g["ended_at"]))
            for g in got
        ]  # fmt: skip
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return []


def segment_at(segments: Sequence[Segment], line: int) -> Segment | None:
    """The segment holding ``line`` (the last that starts at or before it), or None."""
    best: Segment | None = None
    for g in segments:
        if g.first_line <= line:
            best = g
    return best


def describe_segment(segments: Sequence[Segment], g: Segment) -> str:
    """``segment 2 of 2: lines 19–22 (4 items), openai``: one segment in words (the pane, ``show`` and ``y``)."""
    n = f"{g.items:,} item{'' if g.items == 1 else 's'}"
    k = next((i for i, x in enumerate(segments) if x is g), 0) + 1
    return f"segment {k} of {len(segments)}: lines {g.first_line}–{g.last_line} ({n}), {who(g.provider, g.host)}"
