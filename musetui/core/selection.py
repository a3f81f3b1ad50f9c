"""Which sessions a ``report`` or a ``bundle`` covers: the filters both commands take.

``--flagged``, ``--provider P``, ``--since T``, ``--until T`` and ``--session ID``. A filter
given twice (``--provider openai --provider meta``) keeps sessions matching either value;
different filters must all hold. Times are UTC dates or date-times as ``search`` reads
them (``2026-09-01``, ``2026-09-01T22``, ``2026-09-01T22:01:03Z``), and a time names its
whole period: ``--until 2026-09-01`` keeps that day.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from musetui.core.model import SessionSummary
from musetui.core.search.timeterms import time_window


class FilterError(ValueError):
    """A filter value that cannot be read (a time that is not a date)."""


@dataclass(frozen=True, slots=True)
class Filters:
    """The session filters of ``report`` and ``bundle``, as given."""

    flagged: bool = False
    providers: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    sessions: tuple[str, ...] = ()
    _since_t: float | None = field(default=None, repr=False, compare=False)
    _until_t: float | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(
        cls,
        *,
        flagged: bool = False,
        providers: Iterable[str] = (),
        since: str | None = None,
        until: str | None = None,
        sessions: Iterable[str] = (),
    ) -> Filters:
        """Filters from command-line values (``--provider a,b`` is two providers).

        Raises:
            FilterError: when ``since`` or ``until`` is not a date or date-time.
        """
        names = tuple(dict.fromkeys(p.strip().lower() for v in providers for p in v.split(",") if p.strip()))
        return cls(
            flagged,
            names,
            since,
            until,
            tuple(sessions),
            _window(since, "--since")[0] if since else None,
            _window(until, "--until")[1] if until else None,
        )

    @property
    def active(self) -> bool:
        """Whether any filter is set (otherwise every session is kept)."""
        return bool(self.flagged or self.providers or self.since or self.until or self.sessions)

    def describe(self) -> dict[str, Any]:
        """The filters as given, for the chain of custody (empty when none is set)."""
        out: dict[str, Any] = {}
        if self.flagged:
            out["flagged"] = True
        if self.providers:
            out["provider"] = list(self.providers)
        if self.since:
            out["since"] = self.since
        if self.until:
            out["until"] = self.until
        if self.sessions:
            out["session"] = list(self.sessions)
        return out

    def keeps(self, s: SessionSummary) -> bool:
        """Whether session ``s`` passes every filter."""
        a = s.attribution
        if self.flagged and not a.flags:
            return False
        if self.providers and a.provider not in self.providers:
            return False
        if self._since_t is not None:
            last = s.ended_at if s.ended_at is not None else s.started_at
            if last is None or last < self._since_t:
                return False
        if self._until_t is not None and (s.started_at is None or s.started_at >= self._until_t):
            return False
        return not self.sessions or any(_names(s, want) for want in self.sessions)

    def select(self, sessions: Sequence[SessionSummary]) -> list[SessionSummary]:
        """The sessions that pass, in their order."""
        if not self.active:
            return list(sessions)
        return [s for s in sessions if self.keeps(s)]


def _window(text: str, option: str) -> tuple[float, float]:
    window = time_window(text)
    if window is None:
        raise FilterError(f"{option} {text!r} is not a UTC date or date-time (2026-09-01, 2026-09-01T22:01:03Z)")
    return window


def _names(s: SessionSummary, want: str) -> bool:
    """``--session ID``: the session id, a prefix of it (4 characters or more), or the session's file."""
    sid = s.session_id or ""
    if want == sid or (len(want) >= 4 and sid.startswith(want)):
        return True
    return want == s.path or os.path.abspath(want) == os.path.abspath(s.abspath)
