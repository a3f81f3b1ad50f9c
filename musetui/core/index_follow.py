"""Live follow: take what changed on disk into an index's result (:meth:`musetui.core.index.Index.refresh`).

Unchanged files are skipped; an appended file resumes from its last complete line when its
scan state is held (files modified within the active window keep one); other changed files
are rescanned whole; vanished files are dropped. When anything changed, the tree and the
outliers are computed again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from musetui.core import stored
from musetui.core.index_result import IndexResult
from musetui.core.model import SessionSummary
from musetui.core.scanner import Outcome, resume_file
from musetui.core.walk import FileEntry

__all__ = ["Refresh", "refresh"]


@dataclass(slots=True)
class Refresh:
    """What :meth:`Index.refresh` changed."""

    added: list[SessionSummary] = field(default_factory=list)
    changed: list[SessionSummary] = field(default_factory=list)
    removed: list[SessionSummary] = field(default_factory=list)
    resumed: int = 0
    rescanned: int = 0
    bytes_read: int = 0


def refresh(
    held: IndexResult,
    files: list[FileEntry],
    window: float,
    keep_offsets: bool,
    rescan: Callable[[FileEntry], Outcome],
) -> Refresh:
    """Take the files of a new walk into ``held``; return what changed.

    Args:
        held: the index's result, brought up to date in place (the sessions in it stay the same objects).
        files: the roots walked again now.
        window: files modified within this many seconds keep their scan state (for their next append).
        keep_offsets: resumed sessions keep their record offsets.
        rescan: reads a file whole, keeping its scan state.
    """
    previous = {e.abspath: e for e in held.files}
    by_path = {s.abspath: s for s in held.sessions}
    changes = Refresh()
    now_ns = time.time_ns()
    for e in files:
        old = previous.get(e.abspath)
        if old is not None and (old.dev, old.ino, old.size, old.mtime_ns) == (e.dev, e.ino, e.size, e.mtime_ns):
            continue
        outcome = _resume(held, e, old, keep_offsets, changes)
        resumed = outcome is not None  # (its diagnostics are the appended lines' own)
        if outcome is None:
            outcome = rescan(e)
            changes.bytes_read += e.size
            changes.rescanned += 1
        _hold_state(held, e, outcome, now_ns, window)
        held.diagnostics.extend(
            d for d in outcome.diagnostics if resumed or "malformed" not in d.message or old is None
        )
        _take(held, outcome, by_path.get(e.abspath), changes)
    present = {e.abspath for e in files}
    for path, s in list(by_path.items()):
        if path not in present:
            held.drop(s)
            held.states.pop(path, None)
            changes.removed.append(s)
    held.files = files
    if changes.added or changes.changed or changes.removed:
        _reflag(held, changes)
    return changes


def _resume(
    held: IndexResult, e: FileEntry, old: FileEntry | None, keep_offsets: bool, changes: Refresh
) -> Outcome | None:
    """The outcome of an append to a file whose scan state is held, read from that state; else None."""
    kept = held.states.get(e.abspath)
    if (
        kept is None
        or old is None
        or (old.dev, old.ino) != (e.dev, e.ino)
        or e.size <= old.size
        or stored.prefix_digest(e.abspath, kept[0].offset) != kept[1]  # a rewrite, not an append
    ):
        return None
    state = kept[0]
    before = state.offset
    outcome = resume_file(state, e.abspath, keep_offsets=keep_offsets)
    if outcome is not None and outcome.summary is not None:
        changes.bytes_read += outcome.summary.read_bytes - before
        changes.resumed += 1
    return outcome


def _hold_state(held: IndexResult, e: FileEntry, outcome: Outcome, now_ns: int, window: float) -> None:
    """Keep the file's scan state (with the digest of the bytes before its offset) while it is active, else forget it."""
    s = outcome.summary
    prefix = (
        stored.prefix_digest(e.abspath, outcome.state.offset, (s.size, s.mtime_ns, s.inode))
        if outcome.state is not None and s is not None and now_ns - e.mtime_ns < window * 1e9
        else None
    )
    if prefix is not None:
        held.states[e.abspath] = (outcome.state, prefix)
    else:
        held.states.pop(e.abspath, None)
    outcome.state = None


def _take(held: IndexResult, outcome: Outcome, prev: SessionSummary | None, changes: Refresh) -> None:
    """A changed file's session: the object everyone holds, updated in place; or dropped; or added."""
    if prev is not None and outcome.summary is not None:
        for f in dataclasses.fields(prev):
            setattr(prev, f.name, getattr(outcome.summary, f.name))
        changes.changed.append(prev)
    elif prev is not None:
        held.drop(prev)
        changes.removed.append(prev)
    elif outcome.summary is not None:
        held.add(outcome.summary)
        changes.added.append(outcome.summary)


def _reflag(held: IndexResult, changes: Refresh) -> None:
    """Link the tree and flag outliers again; a session whose flags moved counts as changed."""
    before_flags = {s.key: tuple(s.attribution.flags) for s in held.sessions}
    held.finalize()
    moved = [s for s in held.sessions if tuple(s.attribution.flags) != before_flags.get(s.key)]
    seen = {x.key for x in changes.changed + changes.added}
    changes.changed.extend(s for s in moved if s.key not in seen)
