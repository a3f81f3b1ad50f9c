"""The summary of the sessions shown: how many, their items and the dates they span, per provider.

Pure arithmetic over the summaries (no Textual): the tree's border shows the totals, the
``p`` list each provider's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from musetui.core.model import SessionSummary


@dataclass(slots=True)
class Tally:
    """Sessions, items and the first and last start time (UTC epoch seconds) of some sessions."""

    sessions: int = 0
    items: int = 0
    first: float | None = None
    last: float | None = None

    def add(self, s: SessionSummary) -> None:
        """Count session ``s`` in."""
        self.sessions += 1
        self.items += s.items
        t = s.started_at
        if t is not None:
            self.first = t if self.first is None else min(self.first, t)
            self.last = t if self.last is None else max(self.last, t)

    def span(self) -> str:
        """``2026-09-01 → 2026-09-03`` (one date when they are the same; empty without times)."""
        if self.first is None or self.last is None:
            return ""
        try:
            a, b = (datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d") for t in (self.first, self.last))
        except (OverflowError, OSError, ValueError):
            return ""
        return a if a == b else f"{a} → {b}"

    def text(self) -> str:
        """``11 sessions · 186 items · 2026-09-01``."""
        parts = [
            f"{self.sessions:,} session{'s' if self.sessions != 1 else ''}",
            f"{self.items:,} item{'s' if self.items != 1 else ''}",
        ]
        span = self.span()
        return " · ".join([*parts, span] if span else parts)


def tally(sessions: Iterable[SessionSummary]) -> tuple[Tally, dict[str, Tally]]:
    """The totals of ``sessions``, and the tally of each attributed provider."""
    total = Tally()
    per: dict[str, Tally] = {}
    for s in sessions:
        total.add(s)
        per.setdefault(s.attribution.provider, Tally()).add(s)
    return total, per
