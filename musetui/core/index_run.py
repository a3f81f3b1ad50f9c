"""The scan driver of :class:`musetui.core.index.Index`: one run of the walk, the cache, the head start and the workers.

:class:`IndexOptions` are the index's options, frozen for the run; :class:`ScanRun` holds
what lives only while the run does; the results (sessions, diagnostics, counters) go to the
:class:`~musetui.core.index_result.IndexResult` the run installs in the index as it starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from musetui.core import stored
from musetui.core.cache import CachedFile, IndexCache
from musetui.core.index import WALK_TICK, Blobs, Progress, _same_file, _Stream, _Tally
from musetui.core.index_result import IndexResult
from musetui.core.scanner import Outcome
from musetui.core.walk import FileEntry, iter_walk

if TYPE_CHECKING:
    from musetui.core.index import Index

__all__ = ["FLUSH_BYTES", "IndexOptions", "ScanRun"]

#: The blobs of files read are written to the cache in batches of about this many bytes, as
#: the scan goes (a cold scan of a big tree never holds them all).
FLUSH_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """What an index scans and how: fixed for one scan run (see :meth:`Index.options`)."""

    roots: tuple[str, ...]
    workers: int
    keep_offsets: bool
    use_cache: bool
    light: bool
    follow: bool
    active_window_s: float
    head_start: int
    follow_symlinks: bool
    worker_nice: int

    @property
    def want_state(self) -> bool:
        """Whether scanned files keep their resume state (for the cache, or live follow)."""
        return self.use_cache or self.follow


class ScanRun:
    """One run of :meth:`Index.iter_scan`: the walk, the cache, the head start and the workers, in flight.

    The run's :attr:`result` (the index's, from the start) receives each outcome and the
    counters; the caches receive the rows at the end; this object holds what lives only while
    the run does.
    """

    def __init__(
        self,
        index: Index,
        opts: IndexOptions,
        cancelled: Callable[[], bool] | None,
        tick: Callable[[Progress], None] | None,
    ) -> None:
        self.index = index
        self.opts = opts
        self.cancelled = cancelled
        self.tick = tick
        self.tally = _Tally()
        self.caches: dict[str, IndexCache] = {}
        self.rows: dict[str, CachedFile] = {}
        self.to_scan: list[FileEntry] = []
        self.fresh: list[tuple[FileEntry, Blobs]] = []
        self.fresh_bytes = 0  # the size of the blobs in ``fresh`` (written to the cache past FLUSH_BYTES)
        self.head_left = opts.head_start
        self.now_ns = time.time_ns()
        self.walking = index.prewalked is None
        files, diagnostics = index.prewalked or ([], [])
        self.result = IndexResult(files=list(files), diagnostics=list(diagnostics))

    def stop(self) -> bool:
        """Whether the caller cancelled the run."""
        return self.cancelled is not None and self.cancelled()

    def progress(self) -> Progress:
        t, result = self.tally, self.result
        return Progress(t.done, len(result.files), t.bytes_done, t.bytes_total, len(result.sessions), not self.walking)

    def run(self) -> Iterator[tuple[Outcome, Progress]]:
        """Walk and scan, yielding each outcome with the progress so far; store what was scanned at the end."""
        index, result = self.index, self.result
        index.result = result  # (swapped whole: nothing of an earlier run's results carries over)
        walker: Iterable[FileEntry] = (
            iter_walk(list(self.opts.roots), result.diagnostics, self.opts.follow_symlinks)
            if self.walking
            else list(result.files)
        )
        self.tally.bytes_total = sum(f.size for f in result.files)
        stream = _Stream(index, self.opts.workers, self.cancelled)
        complete = False
        try:
            for e in walker:
                yield from self.visit(e, stream)
                if self.stop():
                    return
            self.walking = False
            if self.tick is not None:
                self.tick(self.progress())
            for e in self.to_scan:  # (a head start the walk never filled)
                stream.feed(e)
            yield from self.scanned(stream.finish())
            complete = not self.stop()
        finally:
            stream.close()
            result.scanned_files = self.tally.scanned
            self.store(complete)

    def visit(self, e: FileEntry, stream: _Stream) -> Iterator[tuple[Outcome, Progress]]:
        """The walk reached ``e``: adopt it read ahead, take it from the cache, or scan it (now, or in a worker)."""
        index, opts, tally, result = self.index, self.opts, self.tally, self.result
        if self.walking:
            result.files.append(e)
            tally.bytes_total += e.size
            if self.tick is not None and len(result.files) % WALK_TICK == 0:
                self.tick(self.progress())
        pre = index.preloaded.pop(e.abspath, None) if index.preloaded else None
        if pre is not None and _same_file(pre[0], e):
            if pre[2] is not None:  # scanned ahead: stored (and kept for follow) as if scanned here
                if opts.use_cache:
                    index._cache_for(e.root, self.caches, self.rows)
                yield from self.scanned(iter([(pre[1], e, pre[2])]))
            else:  # a cache hit ahead
                tally.done += 1
                tally.bytes_done += e.size
                result.cache_hits += 1
                result.take(pre[1])
                yield pre[1], self.progress()
            return
        outcome = index._from_cache(e, self.caches, self.rows, self.fresh) if opts.use_cache else None
        if outcome is not None:
            tally.done += 1
            tally.bytes_done += e.size
            outcome = self.settle(outcome, e)
            result.take(outcome)
            yield outcome, self.progress()
            return
        # With the cache, every file keeps a resume state (about 30% of the file's size), so an
        # append to any file, however old, reads only the appended bytes. Without it (or when
        # its root's cache was refused: nothing would be stored), live follow keeps states of
        # files being written.
        e.keep_state = (opts.use_cache and self.caches[e.root].usable) or (
            opts.follow and self.now_ns - e.mtime_ns < opts.active_window_s * 1e9
        )
        if self.head_left:
            self.to_scan.append(e)
            if len(self.to_scan) >= self.head_left:
                head, self.to_scan, self.head_left = self.to_scan, [], 0
                yield from self.scanned(index._outcomes(head, 1, 0, self.cancelled))
        else:
            stream.feed(e)
            yield from self.scanned(stream.ready())

    def scanned(
        self, outcomes: Iterator[tuple[Outcome, FileEntry, Blobs | None]]
    ) -> Iterator[tuple[Outcome, Progress]]:
        """Outcomes of files read here or by workers: counted, kept for the cache (and for follow), taken."""
        opts, tally, result = self.opts, self.tally, self.result
        for outcome, entry, blobs in outcomes:
            tally.done += 1
            tally.bytes_done += entry.size
            tally.scanned += 1
            if blobs is not None:
                if opts.use_cache:
                    self.keep_blobs(entry, blobs)
                if (
                    opts.follow
                    and blobs[1] is not None
                    and time.time_ns() - entry.mtime_ns < opts.active_window_s * 1e9
                ):
                    got = stored.decode_state(blobs[1])
                    if got is not None:
                        result.states[entry.abspath] = got
            outcome = self.settle(outcome, entry)
            result.take(outcome)
            yield outcome, self.progress()
            if self.stop():
                return

    def settle(self, outcome: Outcome, e: FileEntry) -> Outcome:
        """The outcome as the run keeps it: in a light run, a full one (read here, or resumed) made light.

        A light run's sessions are then all alike, whatever read them: the worker's light form,
        the cache's, or this one (see :func:`musetui.core.stored.light_from`). A light session
        holds its file's paths as the walk's entry does (one copy of each, not two).
        """
        s = outcome.summary
        if not self.opts.light or s is None:
            return outcome
        if s.record_z is None:
            outcome = stored.outcome_from_light(stored.light_from(outcome))
            s = outcome.summary
            assert s is not None
        if s.abspath == e.abspath:
            s.abspath = e.abspath
        if s.path == e.relpath:
            s.path = e.relpath
        if (s.size, s.mtime_ns, s.inode, s.device) == (e.size, e.mtime_ns, e.ino, e.dev):
            s.size, s.mtime_ns, s.inode, s.device = e.size, e.mtime_ns, e.ino, e.dev
        return outcome

    def keep_blobs(self, entry: FileEntry, blobs: Blobs) -> None:
        """Keep what the cache stores of a file read in this run; past :data:`FLUSH_BYTES` of them, write them."""
        self.fresh.append((entry, blobs))
        self.fresh_bytes += len(blobs[0]) + len(blobs[2]) + (len(blobs[1]) if blobs[1] is not None else 0)
        if self.fresh_bytes >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the rows kept so far to their roots' caches (the snapshot waits for :meth:`store`)."""
        fresh, self.fresh, self.fresh_bytes = self.fresh, [], 0
        for root, cache in self.caches.items():
            cache.put(
                (e.abspath, e.dev, e.ino, e.size, e.mtime_ns, b[0], b[1], b[2], e.ctime_ns)
                for e, b in fresh
                if e.root == root
            )

    def store(self, complete: bool) -> None:
        """Store the outcomes read in this run, per root (and, after a complete walk, forget vanished files)."""
        result = self.result
        self.flush()
        for root, cache in self.caches.items():
            keep = {e.abspath for e in result.files if e.root == root} if complete else None
            if keep is not None and len(keep) == cache.loaded_rows and not cache.changed:
                keep = None  # (nothing read, nothing vanished: no rows to drop)
            if cache.changed or keep is not None:
                cache.finish(keep)
            result.notices.extend(n for n in cache.notices if n not in result.notices)
            cache.close()
