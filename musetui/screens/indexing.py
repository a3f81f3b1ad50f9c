"""Indexing for the main screen: the scan and the live follow, run in worker threads.

:class:`IndexDriver` only posts messages (:mod:`musetui.messages`); the main screen's
handlers own every piece of UI state. The status lines they show are made by the pure
functions at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from textual.message import Message

from musetui.core.model import SessionSummary
from musetui.core.settings import current
from musetui.messages import (
    IndexFailed,
    IndexFinished,
    IndexProgress,
    IndexRefreshed,
    SessionsFound,
    SessionsReplaced,
)
from musetui.widgets.header import progress_bar
from musetui.widgets.text import display_root

if TYPE_CHECKING:
    from musetui.core.early import Answer, HeadStart
    from musetui.core.index import Progress

#: Indexing posts a batch of new sessions at least this often (seconds) or this many at once.
BATCH_SECONDS = 0.1
BATCH_SIZE = 5000
PROGRESS_SECONDS = 0.1
#: Files scanned at once, before the walk of a big tree ends, so the first rows paint early.
HEAD_START = 32
#: Seconds the index waits for the rows read ahead by a child process (musetui.core.early) before reading them itself.
HEAD_WAIT_S = 2.0
#: Seconds the first frame waits for them: a frame with rows a little later beats an empty one
#: now and the rows a frame after (the layout of the first frame takes about as long).
HEAD_FIRST_FRAME_S = 0.25

Post = Callable[[Message], object]
Cancelled = Callable[[], bool]


def worker_nice() -> int:
    """The niceness added to the index's workers (the ``worker_nice`` setting)."""
    return current().worker_nice


def live_interval() -> float:
    """Seconds between the live follow's polls (the ``live_interval`` setting)."""
    return current().live_interval


def batch_interval(found: int) -> float:
    """Seconds between batches: fast at first, then slower as the tree grows.

    Each batch re-lays the tree out (O(sessions)), so the pause grows with the tree.
    """
    if found < 1000:
        return BATCH_SECONDS
    if found < 5000:
        return 0.5
    return found / 5000


def _progress_fields(p: Progress) -> tuple[int, int, int, int, int, bool]:
    return p.done, p.total, p.bytes_done, p.bytes_total, p.sessions, p.walked


class IndexDriver:
    """Scans the roots and follows them live, posting what it finds; owns the index it builds.

    Args:
        roots: The roots to scan, as given.
        workers: Worker processes for the index (None: its default).
        use_cache: Read and write the summary cache.
        head: Rows read ahead by a child process while the app started, if any.
    """

    def __init__(self, roots: Sequence[str], *, workers: int | None, use_cache: bool, head: HeadStart | None) -> None:
        self.roots = list(roots)
        self.workers = workers
        self.use_cache = use_cache
        self.head = head
        self.live_interval = live_interval()
        #: The finished index (set in the scan's thread before IndexFinished is posted).
        self.index: Any = None
        self._early: tuple[dict[str, SessionSummary], Answer | None] = ({}, None)

    def take_head(self, timeout: float) -> tuple[dict[str, SessionSummary], Answer | None]:
        """The sessions read ahead by the child (by key), and its answer (the outcomes, for the index)."""
        head, self.head = self.head, None
        if head is None:
            return {}, None
        answer = head.take(timeout)
        return {s.key: s for s in answer.sessions if isinstance(s, SessionSummary)}, answer

    def first_frame_sessions(self) -> list[SessionSummary]:
        """The rows read ahead, if they are ready in time for the first frame (else none yet)."""
        if self.head is None or not self.head.ready(HEAD_FIRST_FRAME_S):
            return []
        self._early = self.take_head(0.0)
        return list(self._early[0].values())

    def scan(self, post: Post, cancelled: Cancelled) -> None:
        """Scan the roots (in a worker thread), posting batches of sessions and coalescing progress."""
        started = time.monotonic()
        try:
            # Rows read ahead by the child process (musetui.core.early) go on screen before anything else.
            early, answer = self._early
            if self.head is not None:
                early, answer = self.take_head(HEAD_WAIT_S)
                if early:
                    post(SessionsFound(list(early.values())))
            self._early = ({}, None)
            early = dict(early)
            preloaded = {t[0].abspath: t for t in answer.outcomes()} if answer is not None else {}
            found = len(early)
            from musetui.core.index import Index

            index = Index(
                self.roots,
                workers=self.workers,
                use_cache=self.use_cache,
                follow=True,
                head_start=0 if preloaded else HEAD_START,  # (the child read the first files)
                preloaded=preloaded,
                worker_nice=worker_nice(),
            )
            batch: list[SessionSummary] = []
            replaced: list[SessionSummary] = []
            last = last_progress = time.monotonic()
            progress: Progress | None = None

            def walked_so_far(p: Progress) -> None:
                post(IndexProgress(*_progress_fields(p)))

            for outcome, progress in index.iter_scan(cancelled, tick=walked_so_far):
                s = outcome.summary
                if s is not None:
                    was = early.pop(s.key, None) if early else None
                    if was is None:
                        batch.append(s)
                    elif was is not s:  # its file changed after it was read ahead
                        replaced.append(s)
                now = time.monotonic()
                if batch and (not found or now - last >= batch_interval(found) or len(batch) >= BATCH_SIZE):
                    found += len(batch)
                    post(SessionsFound(batch))
                    batch = []
                    last = now
                # (Not on done == total: while the walk streams, every cache hit is that.)
                if now - last_progress >= PROGRESS_SECONDS:
                    last_progress = now
                    post(IndexProgress(*_progress_fields(progress)))
                if cancelled():
                    break
            if batch:
                post(SessionsFound(batch))
            if (replaced or early) and not cancelled():
                gone = [*early.values(), *replaced]  # (a replaced one is removed by its key)
                post(SessionsReplaced(gone, replaced))
            if progress is not None:
                post(IndexProgress(*_progress_fields(progress)))
            index.finalize()
            self.index = index
            post(
                IndexFinished(
                    cancelled(),
                    list(index.top),
                    {k: list(v) for k, v in index.children.items()},
                    time.monotonic() - started,
                    len(index.diagnostics),
                    list(index.diagnostics),
                )
            )
        except Exception as exc:  # reported in the status line, never a crash
            post(IndexFailed(f"{type(exc).__name__}: {exc}"))

    def follow(self, index: Any, post: Post, cancelled: Cancelled) -> None:
        """Live follow (in a worker thread): poll the roots (about once a second) and post what changed."""
        interval = self.live_interval
        while not cancelled():
            deadline = time.monotonic() + interval
            while time.monotonic() < deadline:
                if cancelled():
                    return
                time.sleep(0.05)
            started = time.monotonic()
            try:
                result = index.refresh()
            except Exception as exc:  # a failed poll is reported, and the next one tries again
                post(IndexFailed(f"live follow: {type(exc).__name__}: {exc}"))
                continue
            # Big trees: never spend more than about a fifth of the time walking them.
            interval = max(self.live_interval, 5 * (time.monotonic() - started))
            if result.added or result.changed or result.removed:
                post(
                    IndexRefreshed(
                        list(result.added),
                        list(result.changed),
                        list(result.removed),
                        list(index.top),
                        {k: list(v) for k, v in index.children.items()},
                        list(index.diagnostics),
                    )
                )


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' if n != 1 else ''}"


def progress_texts(message: IndexProgress, sessions: int, fraction: float) -> tuple[str, str, float]:
    """The status line, the header's progress and the share done while indexing.

    Args:
        message: The latest progress.
        sessions: Sessions in the tree now (the header's count, so the two agree).
        fraction: The share shown so far: it never goes back (a resumed or re-walked total can shrink it).

    Returns:
        The status text, the header text and the new share done.
    """
    found = _plural(sessions, "session")
    if not message.walked:  # the totals still grow: a share of them would mean nothing yet
        status = f"Finding files: {message.total:,} found, {message.done:,} read · {found} · Esc to stop"
        return status, f"indexing · {message.total:,} files found", fraction
    frac = message.bytes_done / message.bytes_total if message.bytes_total else 0.0
    fraction = max(fraction, min(1.0, frac))
    bar = progress_bar(round(1000 * fraction), 1000)
    pct = int(100 * fraction)
    status = f"Indexed {message.done:,}/{message.total:,} files {bar} {pct}% · {found} · Esc to stop"
    return status, f"indexing {bar} {pct}%", fraction


def finished_text(
    message: IndexFinished, sessions: Sequence[SessionSummary], done: int, total: int, roots: Sequence[str]
) -> str:
    """The status line when indexing has ended (stopped, finished, or found nothing)."""
    n = len(sessions)
    flagged = sum(1 for s in sessions if s.attribution.flags)
    outliers = sum(1 for s in sessions if "outlier" in s.attribution.flags)
    what = "Stopped" if message.cancelled else "Indexed"
    files = f" at {done:,}/{total:,} files" if message.cancelled else ""
    text = f"{what}{files}: {n:,} session{'s' if n != 1 else ''} · {flagged} flagged"
    if outliers:
        text += f" ({outliers} outlier{'s' if outliers != 1 else ''}: press o)"
    diagnostics = f" · {message.diagnostics} diagnostic{'s' if message.diagnostics != 1 else ''} (D)"
    if message.diagnostics:
        text += diagnostics
    if n == 0 and not message.cancelled:
        text = "No transcripts found under " + ", ".join(display_root(r) for r in roots)
        if message.diagnostics:
            text += diagnostics
    return text


def refreshed_text(message: IndexRefreshed, sessions: Sequence[SessionSummary], clock: str) -> str:
    """The status line after a live poll found changes (``clock``: when, as HH:MM:SS)."""
    flagged = sum(1 for s in sessions if s.attribution.flags)
    gone = f", -{len(message.removed)} gone" if message.removed else ""
    return (
        f"Indexed: {len(sessions):,} sessions · {flagged} flagged · live "
        f"(+{len(message.added)} new, {len(message.changed)} updated{gone} at {clock})"
    )
