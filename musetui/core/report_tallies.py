"""What the evidence report counts, once for both its views (Markdown and HTML): flagged
sessions in reading order, sessions per provider, host or model, declared versus attributed,
and the time span.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from musetui.core.model import SessionSummary

#: Flags in the order a reader should look at them (outliers first).
FLAG_ORDER = ("outlier", "declared-mismatch", "mixed-providers", "imitation-id", "time-mismatch", "truncated-blob")


def flag_rank(s: SessionSummary) -> tuple[int, int, str, str]:
    """Sort key for flagged sessions: outliers first, then by the most serious flag, then by path."""
    flags = s.attribution.flags
    first = min((FLAG_ORDER.index(f) for f in flags if f in FLAG_ORDER), default=len(FLAG_ORDER))
    return (first, -len(flags), s.root, s.path)


def flagged_sessions(sessions: Iterable[SessionSummary]) -> list[SessionSummary]:
    """Every session with a flag, outliers first."""
    return sorted((s for s in sessions if s.attribution.flags), key=flag_rank)


def provider_of(s: SessionSummary) -> str:
    """The attributed provider: a key for :func:`counts`."""
    return s.attribution.provider


def host_of(s: SessionSummary) -> str:
    """The attributed host, ``-`` for none."""
    return s.attribution.host or "-"


def declared_model_of(s: SessionSummary) -> str:
    """The declared model, ``-`` for none."""
    return s.declared_model or "-"


def counts(sessions: Sequence[SessionSummary], key: Callable[[SessionSummary], str]) -> list[tuple[str, int]]:
    """``(value, sessions)`` pairs, most frequent first, ties by value."""
    c = Counter(key(s) for s in sessions)
    return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))


def declared_vs_attributed(sessions: Sequence[SessionSummary]) -> list[tuple[str, str, str, str, int, int]]:
    """Rows ``(declared provider, declared model, provider, host, sessions, of which declared-mismatch)``."""
    rows: dict[tuple[str, str, str, str], list[int]] = {}
    for s in sessions:
        k = (s.declared_provider or "-", s.declared_model or "-", s.attribution.provider, host_of(s))
        r = rows.setdefault(k, [0, 0])
        r[0] += 1
        r[1] += "declared-mismatch" in s.attribution.flags
    return sorted(((*k, n, m) for k, (n, m) in rows.items()), key=lambda r: (-r[4], r[:4]))


def time_span(sessions: Sequence[SessionSummary]) -> tuple[float | None, float | None]:
    """The earliest start and latest end recorded in the sessions."""
    starts = [s.started_at for s in sessions if s.started_at is not None]
    ends = [s.ended_at or s.started_at for s in sessions if (s.ended_at or s.started_at) is not None]
    return (min(starts) if starts else None, max(e for e in ends if e is not None) if ends else None)
