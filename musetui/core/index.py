"""Walk roots into sessions: deterministic walk, parallel scan, session tree, fleet outliers.

Nothing under a root is written, renamed or locked. FIFOs, sockets and devices are
skipped without being opened; symlink loops are detected by directory identity.
"""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from musetui.core import parallel, stored
from musetui.core.cache import LIGHT, CachedFile, IndexCache
from musetui.core.cache_codec import Invalid, load
from musetui.core.diagnostics import internal_error
from musetui.core.index_follow import Refresh
from musetui.core.index_result import IndexResult
from musetui.core.model import Diagnostic, SessionSummary
from musetui.core.reader import is_gzip_name
from musetui.core.scanner import Outcome, prepare, resume_file, scan_file
from musetui.core.stored import light_blob, light_from
from musetui.core.walk import FileEntry, iter_walk, walk_roots

if TYPE_CHECKING:
    from musetui.core.index_run import IndexOptions

__all__ = ["FileEntry", "Index", "Progress", "Refresh", "light_blob", "walk_roots"]

#: While the walk runs, ``iter_scan``'s ``tick`` hears of its progress every this many files.
WALK_TICK = 500

#: Below this much data, scanning in-process beats starting worker processes.
PARALLEL_MIN_BYTES = 16 * 1024 * 1024
#: A chunk handed to a worker while the walk goes on: this many files, or this many bytes.
CHUNK_FILES = 32
CHUNK_BYTES = 4 * 1024 * 1024


@dataclass(slots=True)
class Progress:
    """Scan progress (for status lines and progress bars)."""

    done: int
    total: int
    bytes_done: int
    bytes_total: int
    sessions: int
    walked: bool = True  # the walk has ended: ``total`` and ``bytes_total`` are final


def _scan_entry(entry: FileEntry, keep_offsets: bool, want_state: bool = False) -> Outcome:
    try:
        if entry.maybe and not _looks_like_json(entry.abspath):
            return Outcome(None, [])
        return scan_file(
            entry.abspath,
            entry.relpath,
            entry.root,
            keep_offsets=keep_offsets,
            want_state=want_state and entry.keep_state,
        )
    except Exception as exc:  # the per-file boundary
        return Outcome(None, [internal_error(entry.relpath, exc)])


#: Resume states larger than this (stored) are not kept (such a file is rescanned whole after an append).
MAX_STATE_BYTES = 2 * 1024 * 1024


#: What the cache stores of one scanned file: its outcome, its resume state (or None), each a
#: blob of plain data, and its light outcome as text (see :mod:`musetui.core.stored`).
Blobs = tuple[bytes, bytes | None, bytes]


def _blobs(outcome: Outcome) -> Blobs:
    """The outcome (without its state), its resume state and its light form, for the cache (see :func:`_stored_forms`)."""
    return _stored_forms(outcome)[0]


def _stored_forms(outcome: Outcome) -> tuple[Blobs, Any]:
    """The outcome (without its state), its resume state and its light form, for the cache; and that light form.

    The light form (a :func:`~musetui.core.stored.light_from` tuple) is the one its blob holds:
    a worker sends it beside the blobs, so the parent need not read the blob it just made.

    The state is kept with the digest of the bytes before its offset (the scan's, else read
    again here); when the file is no longer the one scanned, or the state is not plain data,
    no state is kept.
    When the outcome cannot be stored (a bug), it is replaced by its file's ``internal error``
    diagnostic, so that what is cached and what is shown never differ.
    """
    state = outcome.state
    outcome.state = None
    sblob: bytes | None = None
    s = outcome.summary
    if state is not None and s is not None and not is_gzip_name(s.abspath):  # (a .gz file is expanded whole anyway)
        prefix = stored.state_prefix(state, s)
        try:
            sblob = stored.encode_state(state, prefix) if prefix is not None else None
        except Exception:
            sblob = None  # not resumable: an append rescans the file whole
    if sblob is not None and len(sblob) > MAX_STATE_BYTES:
        sblob = None
    try:
        light = light_from(outcome)
        return (stored.encode_outcome(outcome), sblob, stored.light_text(light)), light
    except Exception as exc:
        path = (
            outcome.summary.path
            if outcome.summary is not None
            else (outcome.diagnostics[0].path if outcome.diagnostics else "")
        )
        outcome.summary = None
        outcome.offsets = b""
        outcome.diagnostics = [*outcome.diagnostics, internal_error(path, exc)]
        light = light_from(outcome)
        return (stored.encode_outcome(outcome), None, stored.light_text(light)), light


def outcome_from_light(blob: bytes | tuple[Any, Any] | Outcome) -> Outcome | None:
    """A light outcome from a stored light blob (checked here), an already checked tuple, or one made already; None when invalid."""
    if isinstance(blob, Outcome):
        return blob
    if isinstance(blob, bytes):
        try:
            blob = load(LIGHT, blob)
        except Invalid:
            return None
    return stored.outcome_from_light(blob)


def _scan_chunk(args: tuple[list[FileEntry], bool, bool, bool]) -> list[Any]:
    """Scan in a worker; return what the parent needs, serialised here (in parallel).

    With states, each outcome comes back with the blobs the cache stores (the outcome itself
    too, unless ``light``: the parent rebuilds a light one from its blob).
    """
    entries, keep, want_state, light = args
    outcomes = [_scan_entry(e, keep, want_state) for e in entries]
    if want_state:
        out: list[Any] = []
        for o in outcomes:
            blobs, light_form = _stored_forms(o)
            out.append((light_form if light else o, blobs))
        return out
    if light:  # (a pipe between our own processes: the plain tuple, not the cache's checked, compressed blob)
        return [light_from(o) for o in outcomes]
    return outcomes


def _keeps_state(want_state: bool, chunk: list[FileEntry]) -> bool:
    """Whether a worker's chunk comes back with states and blobs: not when none of its files keeps a state.

    (Such a file's root has no usable cache, so nothing of it is stored, and live follow does
    not watch it.)
    """
    return want_state and any(e.keep_state for e in chunk)


def _looks_like_json(path: str) -> bool:
    from musetui.core.reader import read_file

    try:
        head = read_file(path, 0, 4096).data.lstrip()
    except OSError:
        return True  # let the scan report it
    return head[:1] in (b"{", b"[") or head.startswith((b"data:", b"event:"))


@dataclass(slots=True)
class _Tally:
    """Running counts of one scan."""

    bytes_total: int = 0
    done: int = 0
    bytes_done: int = 0
    scanned: int = 0


@dataclass
class Index:
    """The sessions under a set of roots, with their tree and verdicts.

    Its fields are options (frozen for a scan run by :meth:`options`) and the caller's inputs;
    what a scan produces is its :attr:`result`, which each run replaces as a whole.
    """

    roots: list[str]
    workers: int | None = None
    keep_offsets: bool = False
    use_cache: bool = False
    light: bool = False  # cached sessions come back as light summaries (see SessionSummary.record_z)
    follow: bool = False  # keep scan states of recently modified files, for refresh()
    active_window_s: float = 3600.0
    #: A walk the caller did already (its files and their diagnostics): scanned as given, the roots not walked.
    prewalked: tuple[list[FileEntry], list[Diagnostic]] | None = None
    head_start: int = 0  # scan the first this many files at once, before the walk ends (first paint)
    follow_symlinks: bool = False  # follow symlinks that leave the root (never loops)
    #: Added to the worker processes' niceness: the app's index yields the CPU to the app itself.
    worker_nice: int = 0
    #: Local worker processes take files while the walk goes on (see :class:`_Stream`).
    streams: ClassVar[bool] = True
    #: Outcomes read ahead (see :meth:`head`), by absolute path: adopted when the walk reaches an unchanged file.
    preloaded: dict[str, tuple[FileEntry, Outcome, Blobs | None]] = field(default_factory=dict)
    result: IndexResult = field(default_factory=IndexResult)

    @property
    def sessions(self) -> list[SessionSummary]:
        """The sessions found (the :attr:`result`'s)."""
        return self.result.sessions

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What the walk and the scan reported (the :attr:`result`'s)."""
        return self.result.diagnostics

    @property
    def files(self) -> list[FileEntry]:
        """The files walked (the :attr:`result`'s)."""
        return self.result.files

    @property
    def notices(self) -> list[str]:
        """The caches' notices (the :attr:`result`'s)."""
        return self.result.notices

    @property
    def children(self) -> dict[str, list[SessionSummary]]:
        """Each session's children, by key (the :attr:`result`'s)."""
        return self.result.children

    @property
    def top(self) -> list[SessionSummary]:
        """The sessions at the top of the tree (the :attr:`result`'s)."""
        return self.result.top

    def iter_scan(
        self, cancelled: Callable[[], bool] | None = None, tick: Callable[[Progress], None] | None = None
    ) -> Iterator[tuple[Outcome, Progress]]:
        """Scan every file, yielding each outcome as it completes.

        The walk streams: with the cache on, a file whose identity (device, inode, size,
        mtime) is unchanged is not read, and its stored outcome is yielded as soon as the
        walk reaches it; a grown file resumes from its stored state. With ``head_start``,
        the first files that need reading are scanned at once, before the walk ends, so a
        UI has rows to show early. The rest are scanned in walk order (in worker
        processes) and stored when the scan ends (or is cancelled).
        """
        from musetui.core.index_run import ScanRun

        yield from ScanRun(self, self.options(), cancelled, tick).run()

    def options(self) -> IndexOptions:
        """The options of this index, frozen (what a scan run reads: a caller's later change waits for the next run)."""
        from musetui.core.index_run import IndexOptions

        return IndexOptions(
            tuple(self.roots), self.workers if self.workers is not None else (os.cpu_count() or 1), self.keep_offsets,
            self.use_cache, self.light, self.follow, self.active_window_s, self.head_start, self.follow_symlinks,
            self.worker_nice,
        )  # fmt: skip

    def head(self, files: int, max_bytes: int) -> list[tuple[FileEntry, Outcome, Blobs | None]]:
        """The first ``files`` files of the walk (stopping before ``max_bytes`` are read), from the cache or scanned here.

        Nothing is stored and nothing is kept: a scanned file's blobs (what the cache stores,
        and its resume state) come back with its outcome, for the index that adopts it
        through :attr:`preloaded`. A cache hit comes back without blobs.
        """
        out: list[tuple[FileEntry, Outcome, Blobs | None]] = []
        caches: dict[str, IndexCache] = {}
        rows: dict[str, CachedFile] = {}
        fresh: list[tuple[FileEntry, Blobs]] = []
        want_state = self.use_cache or self.follow
        now_ns = time.time_ns()
        read = 0
        try:
            for e in iter_walk(self.roots, [], self.follow_symlinks):
                if len(out) >= files or read >= max_bytes:
                    break
                known = len(fresh)
                outcome = self._from_cache(e, caches, rows, fresh, readonly=True) if self.use_cache else None
                if outcome is not None:
                    out.append((e, outcome, fresh[known][1] if len(fresh) > known else None))
                    continue
                if read + e.size > max_bytes:  # (a big file is left to the index: its rows can wait)
                    break
                e.keep_state = self.use_cache or (self.follow and now_ns - e.mtime_ns < self.active_window_s * 1e9)
                o = _scan_entry(e, self.keep_offsets, want_state)
                out.append((e, o, _blobs(o) if want_state else None))
                read += e.size
        finally:
            for cache in caches.values():
                cache.close()
        return out

    def _cache_for(
        self, root: str, caches: dict[str, IndexCache], rows: dict[str, CachedFile], readonly: bool = False
    ) -> IndexCache:
        """The open cache of ``root``; opened (and, unless ``readonly``, its rows loaded into ``rows``) on first use.

        A read-only reader (the head start) looks rows up one by one: it needs a few files, not all.
        """
        cache = caches.get(root)
        if cache is None:
            cache = caches[root] = IndexCache(root, readonly=readonly, roots=self.roots)
            if not readonly:  # (light outcomes made as the rows are read: what the walk takes, rows popped as taken)
                rows.update(cache.load(light=self.light, make=stored.outcome_from_light))
            self.result.notices.extend(cache.notices)
        return cache

    def _from_cache(
        self,
        e: FileEntry,
        caches: dict[str, IndexCache],
        rows: dict[str, CachedFile],
        fresh: list[tuple[FileEntry, Blobs]],
        readonly: bool = False,
    ) -> Outcome | None:
        """The outcome of ``e`` from the cache (stored, or resumed after an append), or None."""
        cache = self._cache_for(e.root, caches, rows, readonly)
        row = cache.row_of(e.abspath) if readonly else rows.pop(e.abspath, None)
        if row is None:
            return None
        if row.matches(e.dev, e.ino, e.size, e.mtime_ns, e.ctime_ns):
            outcome = outcome_from_light(row.light) if self.light and row.light else None
            if outcome is None and not self.light:
                blob = cache.outcome_of(e.abspath)
                outcome = stored.decode_outcome(blob) if blob is not None else None
            if isinstance(outcome, Outcome):
                self.result.cache_hits += 1
                return outcome
            return None
        if (row.dev, row.ino) != (e.dev, e.ino) or e.size <= row.size or not row.has_state:
            return None
        got = stored.decode_state(cache.state_of(e.abspath))
        if got is None:
            return None
        state, prefix = got
        if stored.prefix_digest(e.abspath, state.offset) != prefix:
            return None  # the bytes already read changed (a rewrite, not an append): read it whole
        old_offset = state.offset
        resumed = resume_file(state, e.abspath, keep_offsets=self.keep_offsets)
        if not isinstance(resumed, Outcome):
            return None
        self.result.resumed += 1
        self.result.resumed_bytes += (resumed.summary.read_bytes if resumed.summary else e.size) - old_offset
        fresh.append((e, _blobs(resumed)))
        return resumed

    def _outcomes(
        self, files: list[FileEntry], workers: int, total_bytes: int, cancelled: Callable[[], bool] | None
    ) -> Iterator[tuple[Outcome, FileEntry, Blobs | None]]:
        want_state = self.use_cache or self.follow
        if workers <= 1 or total_bytes < PARALLEL_MIN_BYTES or len(files) < 8:
            for e in files:
                o = _scan_entry(e, self.keep_offsets, want_state)
                # (a file that keeps no state is not stored either: its root's cache was refused)
                blobs = _blobs(o) if want_state and e.keep_state else None
                yield o, e, blobs
            return
        # (per-process tables built once here, before a fork: the workers inherit them)
        pool = parallel.start_pool(workers, initargs=(self.worker_nice,), before_fork=prepare)
        chunks = parallel.chunks(files, min(64, len(files) // (workers * 8) or 1))
        done = 0
        try:
            jobs = [(c, self.keep_offsets, _keeps_state(want_state, c), self.light) for c in chunks]
            for (chunk, _keep, wants, _light), results in zip(
                jobs, parallel.guarded(pool.map(_scan_chunk, jobs)), strict=False
            ):
                done += 1
                yield from self._decode_results(chunk, results, wants)
                if cancelled is not None and cancelled():
                    break
        finally:
            parallel.stop_pool(pool)
        if done < len(chunks) and (cancelled is None or not cancelled()):
            # A worker died (out of memory, a crash in a C extension): scan the rest here.
            for chunk in chunks[done:]:
                for e in chunk:
                    o = _scan_entry(e, self.keep_offsets, want_state)
                    yield o, e, (_blobs(o) if want_state else None)

    def _decode_results(
        self, chunk: list[FileEntry], results: list[Any], want_state: bool
    ) -> Iterator[tuple[Outcome, FileEntry, Blobs | None]]:
        """A worker's results for ``chunk`` (see :func:`_scan_chunk`) as outcomes with their blobs."""
        for e, r in zip(chunk, results, strict=True):
            if want_state:  # (light: the light form the worker stored, beside the blobs; else the outcome)
                o, blobs = r
                if self.light:
                    o = outcome_from_light(o)
                yield (o if o is not None else Outcome(None, [])), e, blobs
            elif self.light:
                lo = outcome_from_light(r)
                yield (lo if lo is not None else Outcome(None, [])), e, None
            else:
                yield r, e, None

    def refresh(self, active_window_s: float | None = None) -> Refresh:
        """Bring the index up to date with the disk (live follow); returns what changed.

        Re-walks the roots (cheap: one stat per file). Unchanged files are skipped;
        appended files resume from their last complete line when their scan state is
        held (files modified within ``active_window_s`` keep one); other changed files
        are rescanned whole; vanished files are dropped. Outliers are recomputed.
        """
        from musetui.core.index_follow import refresh

        return refresh(
            self.result,
            walk_roots(self.roots, [], self.follow_symlinks),
            self.active_window_s if active_window_s is None else active_window_s,
            self.keep_offsets,
            lambda e: _scan_entry(e, self.keep_offsets, want_state=True),
        )

    def scan(self, cancelled: Callable[[], bool] | None = None) -> Index:
        """Scan everything, then build the tree and flag outliers."""
        for _ in self.iter_scan(cancelled):
            pass
        self.finalize()
        return self

    def finalize(self) -> None:
        """Link parents and children, note orphans, and flag fleet outliers."""
        self.result.finalize()

    def sorted_sessions(self) -> list[SessionSummary]:
        """Sessions sorted by path (the scan output order)."""
        return sorted(self.sessions, key=lambda s: (s.path, s.root))


class _Stream:
    """Files to scan, fed as the walk finds them; their outcomes come back in the order fed.

    Once the files fed add up to :data:`PARALLEL_MIN_BYTES`, a pool of worker processes
    starts and takes them a chunk at a time, while the walk goes on (a big tree's first
    outcomes do not wait for its walk to end). Less than that is scanned here at the end,
    as starting workers would cost more. A chunk whose worker died is scanned here. An
    index that does not stream (``streams`` False: the Dask one) gets every file at the
    end, through its own ``_outcomes``.
    """

    def __init__(self, index: Index, workers: int, cancelled: Callable[[], bool] | None) -> None:
        self.index = index
        self.workers = workers
        self.cancelled = cancelled
        self.want_state = index.use_cache or index.follow
        self.pending: list[FileEntry] = []
        self.pending_bytes = 0
        self.jobs: collections.deque[tuple[list[FileEntry], Future[list[Any]], bool]] = collections.deque()
        self.pool: ProcessPoolExecutor | None = None

    def feed(self, e: FileEntry) -> None:
        """Queue ``e``; submit a chunk when one is full (and the pool runs, or now has enough to start)."""
        self.pending.append(e)
        self.pending_bytes += e.size
        if self.pool is None:
            if (
                not self.index.streams
                or self.workers <= 1
                or self.pending_bytes < PARALLEL_MIN_BYTES
                or len(self.pending) < 8
            ):
                return
            # (per-process tables built once here, before a fork: the workers inherit them)
            self.pool = parallel.start_pool(self.workers, initargs=(self.index.worker_nice,), before_fork=prepare)
        if len(self.pending) >= CHUNK_FILES or self.pending_bytes >= CHUNK_BYTES:
            self._submit(everything=False)

    def _submit(self, everything: bool) -> None:
        """Hand the pending files to the pool in chunks (the last, smaller one only with ``everything``)."""
        chunk: list[FileEntry] = []
        size = 0
        for e in self.pending:
            chunk.append(e)
            size += e.size
            if len(chunk) >= CHUNK_FILES or size >= CHUNK_BYTES:
                self._submit_chunk(chunk)
                chunk, size = [], 0
        if chunk and everything:
            self._submit_chunk(chunk)
            chunk, size = [], 0
        self.pending, self.pending_bytes = chunk, size

    def _submit_chunk(self, chunk: list[FileEntry]) -> None:
        assert self.pool is not None
        want_state = _keeps_state(self.want_state, chunk)
        job = (chunk, self.index.keep_offsets, want_state, self.index.light)
        try:
            future = self.pool.submit(_scan_chunk, job)
        except Exception as exc:  # a broken pool: the chunk is scanned here
            future = Future()
            future.set_exception(exc)
        self.jobs.append((chunk, future, want_state))

    def ready(self) -> Iterator[tuple[Outcome, FileEntry, Blobs | None]]:
        """The outcomes of the chunks already done (in order), without waiting."""
        while self.jobs and self.jobs[0][1].done():
            yield from self._results(*self.jobs.popleft())

    def finish(self) -> Iterator[tuple[Outcome, FileEntry, Blobs | None]]:
        """Every outcome still to come, waiting for the workers."""
        if self.pool is None:
            files, self.pending = self.pending, []
            yield from self.index._outcomes(files, self.workers, sum(f.size for f in files), self.cancelled)
            return
        self._submit(everything=True)
        while self.jobs:
            yield from self._results(*self.jobs.popleft())
            if self.cancelled is not None and self.cancelled():
                return

    def _results(
        self, chunk: list[FileEntry], future: Future[list[Any]], want_state: bool
    ) -> Iterator[tuple[Outcome, FileEntry, Blobs | None]]:
        index = self.index
        try:
            results = future.result()
        except Exception:  # a worker died (out of memory, a crash in a C extension): scan the chunk here
            for e in chunk:
                o = _scan_entry(e, index.keep_offsets, want_state)
                yield o, e, (_blobs(o) if want_state else None)
            return
        yield from index._decode_results(chunk, results, want_state)

    def close(self) -> None:
        """Stop the workers (what is still queued is dropped)."""
        if self.pool is not None:
            parallel.stop_pool(self.pool)
            self.pool = None


def _same_file(a: FileEntry, b: FileEntry) -> bool:
    """Whether two walk entries name the same, unchanged file."""
    return (a.abspath, a.root, a.relpath, a.dev, a.ino, a.size, a.mtime_ns, a.ctime_ns) == (
        b.abspath,
        b.root,
        b.relpath,
        b.dev,
        b.ino,
        b.size,
        b.mtime_ns,
        b.ctime_ns,
    )
