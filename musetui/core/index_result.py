"""What a scan of an index's roots produced: files, sessions, diagnostics, tree, resume states and counters.

An :class:`~musetui.core.index.Index` holds one :class:`IndexResult`. Each scan run installs a
new one as it starts (the index swaps its results as a whole, never field by field), and live
follow (:meth:`Index.refresh`) keeps it up to date.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from musetui.core.fingerprints.outliers import mark_outliers
from musetui.core.model import Diagnostic, SessionSummary
from musetui.core.scanner import Outcome
from musetui.core.session_links import link_sessions
from musetui.core.walk import FileEntry

__all__ = ["IndexResult"]


@dataclass(slots=True)
class IndexResult:
    """The files walked and what their scan found, with the counts of how it was read."""

    files: list[FileEntry] = field(default_factory=list)
    sessions: list[SessionSummary] = field(default_factory=list)
    by_key: dict[str, SessionSummary] = field(default_factory=dict)
    #: The record offsets of each session (by key), when the index keeps them.
    offsets: dict[str, bytes] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    #: The session tree (see :meth:`finalize`): each session's children by key, and the sessions at the top.
    children: dict[str, list[SessionSummary]] = field(default_factory=dict)
    top: list[SessionSummary] = field(default_factory=list)
    #: Live follow: the scan states of active files, each with the digest of the bytes before its offset.
    states: dict[str, tuple[Any, str]] = field(default_factory=dict)
    cache_hits: int = 0  # files whose stored outcome was reused
    scanned_files: int = 0  # files read whole
    resumed: int = 0  # files resumed from their stored state after an append
    resumed_bytes: int = 0  # the appended bytes those read

    def take(self, outcome: Outcome) -> None:
        """Keep a file's outcome: its diagnostics, its session and the session's offsets."""
        self.diagnostics.extend(outcome.diagnostics)
        if outcome.summary is not None:
            self.add(outcome.summary)
            if outcome.offsets:
                self.offsets[outcome.summary.key] = outcome.offsets

    def add(self, s: SessionSummary) -> None:
        """Add a session."""
        self.sessions.append(s)
        self.by_key[s.key] = s

    def drop(self, s: SessionSummary) -> None:
        """Drop a session."""
        self.sessions.remove(s)
        self.by_key.pop(s.key, None)

    def finalize(self) -> None:
        """Link parents and children, note orphans, and flag fleet outliers."""
        self.children, self.top = link_sessions(self.sessions)
        mark_outliers(self.sessions)
