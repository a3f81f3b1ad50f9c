"""The executor: walk, read and match each file once, in-process or in a pool; hits in order.

Its entry points are in :mod:`musetui.core.search.run`.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from musetui.core import reader
from musetui.core.reader import O_NOATIME, is_gzip_name, open_ro
from musetui.core.search.evaluate import FileSearch, group_finder, may_encode_bodies
from musetui.core.search.files import (
    INFO_FIELDS,
    OPEN_FLAGS,
    DirItem,
    FileItem,
    Info,
    Subtree,
    Task,
    children,
    plain_children,
    split,
    spread,
)
from musetui.core.search.query import Query
from musetui.core.search.results import Hit, PackedHit, SearchRun, Stats, pack_hits, unpack_hits

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from musetui.core.model import SessionSummary

__all__ = [
    "PARALLEL_MIN_BYTES",
    "PARALLEL_MIN_FILES",
    "QUICK_BUFFER",
    "SearchPool",
    "usable_workers",
]

#: Fewer files than this are searched in-process (a pool costs more than it saves).
PARALLEL_MIN_FILES = 256
#: ... and fewer bytes than this, when the sizes are known.
PARALLEL_MIN_BYTES = 16 * 1024 * 1024

# ---------------------------------------------------------------------------------------------
# Running a search
# ---------------------------------------------------------------------------------------------

_WORKER_QUERY: Query | None = None


def _init_worker(query: Query | None) -> None:
    """A search worker: it ends with its parent (never an orphan of a killed search), and keeps the query."""
    global _WORKER_QUERY, _WORKER_WORK
    from musetui.core.parallel import worker_init

    worker_init()
    if query is None:
        return
    _WORKER_QUERY = query
    _WORKER_WORK = _FORK_WORK  # a forked worker keeps the units it was forked with


#: A session's file to search, from the caller's index: ``(abspath, path, read limit, summary)``.
#: Its :class:`Task` (and :class:`Info`) is made only when the file is searched further.
SessionItem = tuple[str, str, "int | None", "SessionSummary"]
#: What :func:`_search_units` walks and searches.
Unit = Task | Subtree | SessionItem | DirItem | FileItem


def _session_task(s: SessionSummary) -> Task:
    """The task :func:`~musetui.core.search.files.tasks_of` makes of a session."""
    return Task(s.abspath, s.path, s.root, False, s.read_bytes or None, s.size, Info.of(s))


def _tasks(units: list[Unit]) -> list[Task | Subtree]:
    """Units as tasks and directories (a session's file becomes its task)."""
    return [_session_task(u[3]) if type(u) is tuple else u for u in units]  # type: ignore[misc]


def _shape(units: Sequence[Unit]) -> tuple[int, list[int]]:
    """How many units are directories, and the sizes of the others (0 where the index does not know it)."""
    ndirs = 0
    sizes: list[int] = []
    add = sizes.append
    for u in units:
        if type(u) is tuple:
            n = len(u)
            if n == 2:
                ndirs += 1
            else:
                add(u[3].size if n == 4 else 0)  # type: ignore[misc]
        elif isinstance(u, Subtree):
            ndirs += 1
        else:
            add(u.size if isinstance(u, Task) else 0)
    return ndirs, sizes


#: Files smaller than this are read into one reused buffer and, when the query has a driving
#: group, dropped there if none of its expressions matches (one Hyperscan scan): most files
#: of a corpus never become a ``bytes`` object or a :class:`FileSearch`.
QUICK_BUFFER = 1 << 20


def _search_units(
    units: Iterable[Unit],
    query: Query,
    stats: Stats,
    cancelled: Callable[[], bool] | None = None,
    found: list[int] | None = None,
    base: tuple[str, str] = ("", ""),
) -> Iterator[list[Hit]]:
    """The hits of every file under ``units``, walked depth first in path order.

    Yields one list per file that has hits. When the query has a driving group, a file is
    read into one reused buffer of :data:`QUICK_BUFFER` bytes (open, one read, close: a
    read that does not fill the buffer reached the end of the file) and searched further
    only when the group's database matches in it; only then is it checked as
    :func:`~musetui.core.search.files.read` checks a file (a regular file, its whole size, or
    at most its indexed size), else read again that way. Plain directories are listed as
    tuples (:func:`~musetui.core.search.files.plain_children`); a file becomes a :class:`Task`
    only when it is searched further. This is the hot loop of a search, kept flat on
    purpose: the walk, the read and the check inline, no generator or call per file.

    With ``found``, a file to search further is not searched: the index of its unit in
    ``units`` is appended there (the first pass of :func:`_two_passes`). A unit that is a
    tuple (a plain directory or file, see :func:`~musetui.core.search.files.spread`) is under
    the root ``base`` (its path and real path).
    """
    quick = group_finder(query.groups[query.driver]) if query.driver >= 0 else None
    notes = stats.notes
    cap = QUICK_BUFFER if quick is not None else 0
    buf = bytearray(cap)
    view = memoryview(buf)
    flags = OPEN_FLAGS | (O_NOATIME if reader._noatime_ok else 0)
    isreg = stat.S_ISREG
    for i, unit in enumerate(units):
        if isinstance(unit, tuple):
            root, root_real = base
        else:
            root = unit.root
            root_real = unit.root_real if isinstance(unit, Subtree) else ""
        stack: list[Any] = [unit]
        while stack:
            x = stack.pop()
            tx = type(x)
            task: Task | None
            s: SessionSummary | None = None
            if tx is tuple:
                nx = len(x)
                if nx == 2:  # a plain directory
                    kids: list[Any] | None = plain_children(x[0], x[1])
                    if kids is None:
                        prefix: str = x[1]
                        sub = Subtree(x[0], prefix[:-1], root, root_real, prefix.count("/"))
                        kids = children(sub, notes)
                        kids.reverse()
                    stack += kids
                    continue
                if nx == 3:
                    abspath, path, maybe = x
                    task, limit = None, None
                else:
                    abspath, path, limit, s = x
                    task, maybe = None, False
            elif tx is Task:
                task = x
                abspath, path, maybe, limit = x.abspath, x.path, x.maybe, x.read_limit
            else:
                assert isinstance(x, Subtree)
                if not x.links:
                    stack.append((x.abspath, x.path + "/" if x.path else ""))
                    continue
                kids = children(x, notes)
                kids.reverse()  # popped from the end: the first child first
                stack += kids
                continue
            if cancelled is not None and cancelled():
                return
            data: bytes | None = None
            if quick is not None and not maybe and not is_gzip_name(abspath):  # (compressed bytes hold no text to test)
                try:
                    fd = os.open(abspath, flags)
                except OSError:
                    try:
                        fd = open_ro(abspath)
                    except OSError:
                        fd = -1  # the full read reports why
                if fd >= 0:
                    try:
                        v = view if limit is None or limit >= cap else view[:limit]
                        n = os.readv(fd, [v])
                        if n < cap:
                            head = v[:n] if n < len(v) else v
                            if not quick.any(head) and not may_encode_bodies(abspath, head):
                                stats.files += 1
                                stats.bytes += n
                                continue
                            st = os.fstat(fd)
                            size = st.st_size if limit is None else min(st.st_size, limit)
                            if isreg(st.st_mode) and n == size:
                                data = bytes(v[:n])
                    except OSError:
                        pass
                    finally:
                        os.close(fd)
            if found is not None:
                found.append(i)
                continue
            if task is None:
                task = Task(abspath, path, root, maybe) if s is None else _session_task(s)
            hits = FileSearch(task, query, stats).run(data)
            if hits:
                yield hits


def usable_workers(cpus: int) -> int:
    """How many worker processes pay now: the cores that other work leaves free (at least 1).

    A pool only pays with idle cores. On a 2-core machine kept busy by other processes, two
    workers cost 30-40% more CPU than one process and finished later (the 500 MB bench
    corpus), as ``rg -j2`` did against ``rg -j1``. The measure is the share of the last 10 s
    in which some task waited for a CPU (Linux pressure stall information), which our own
    recent work barely raises; else the 1-minute load average; where neither is known,
    every core counts.
    """
    waited = _cpu_pressure()
    if waited is not None:
        return max(1, min(cpus, int(cpus * (1.0 - waited) + 0.5)))
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        return cpus
    return max(1, min(cpus, int(cpus - load + 0.5)))


def _cpu_pressure() -> float | None:
    """``some avg10`` of ``/proc/pressure/cpu`` as a fraction, or None where it is not available."""
    try:
        with open("/proc/pressure/cpu", "rb") as f:
            line = f.readline()
    except OSError:
        return None
    for field in line.split():
        if field.startswith(b"avg10="):
            try:
                return min(1.0, max(0.0, float(field[6:]) / 100.0))
            except ValueError:
                return None
    return None


def _search_chunk(chunk: list[Unit]) -> tuple[list[PackedHit], Stats]:
    assert _WORKER_QUERY is not None
    stats = Stats()
    hits: list[Hit] = []
    for found in _search_units(chunk, _WORKER_QUERY, stats):
        hits.extend(found)
    return pack_hits(hits), stats


def _execute(
    units: list[Unit] | Iterator[Task],
    query: Query,
    run: SearchRun,
    limit: int | None,
    cancelled: Callable[[], bool] | None,
    workers: int | None,
    pool: SearchPool | None = None,
) -> Iterator[Hit]:
    """Search files (or directories to walk) in path order: in-process, or a process pool.

    A pool is used for more than :data:`PARALLEL_MIN_FILES` files (or as many directories,
    whose files the workers walk themselves); with known sizes, only above
    :data:`PARALLEL_MIN_BYTES`. Work is cut into ordered batches and results are yielded in
    that order, so hits stay sorted by path, then line.
    """
    stats = run._stats
    left = limit if limit is not None and limit > 0 else None
    nworkers = workers if workers is not None else usable_workers(os.cpu_count() or 1)
    fork = pool is None and nworkers > 1 and _can_fork()
    base = ("", "")
    if isinstance(units, list):
        work = units
        if fork and len(work) == 1 and isinstance(work[0], Subtree):
            base = (work[0].root, work[0].root_real)
            work = list[Unit](spread(work[0], stats.notes, nworkers * 32))
        elif nworkers > 1 and any(isinstance(u, Subtree) for u in work):
            work = list(split(cast("list[Task | Subtree]", work), stats.notes, nworkers * 32))
        ndirs, sizes = _shape(work)
        sized = bool(sizes) and ndirs == 0 and all(sizes)
        big = (ndirs >= 16 or len(sizes) >= PARALLEL_MIN_FILES) and not (sized and sum(sizes) < PARALLEL_MIN_BYTES)
    else:
        work = list(units)
        big = len(work) >= PARALLEL_MIN_FILES
    if nworkers <= 1 or not big:
        for found in _search_units(work, query, stats, cancelled, base=base):
            for hit in found:
                yield hit
                if left is not None:
                    left -= 1
                    if left <= 0:
                        return
        return
    from musetui.core import parallel

    bounds = parallel.bounds(len(work), -(-len(work) // (nworkers * 24)))
    executor: ProcessPoolExecutor | None = None  # (a pool of this search's own, stopped at the end)
    if fork:
        batches = _forked(work, bounds, query, stats, nworkers - 1, cancelled, base)
    elif pool is not None:
        batches = _pooled(pool.executor(), work, bounds, query, stats, cancelled)
    else:
        executor, forked = _new_executor(nworkers, query, work)
        if forked:  # the workers have ``work`` already: send index ranges, not the units
            futures = deque(executor.submit(_search_range, a, b) for a, b in bounds)
            batches = _results(futures, stats, cancelled)
        else:
            batches = _pooled(executor, work, bounds, query, stats, cancelled, two_passes=False)
    try:
        for hits in batches:
            for hit in hits:
                yield hit
                if left is not None:
                    left -= 1
                    if left <= 0:
                        return
    finally:
        batches.close()
        if executor is not None:
            parallel.stop_pool(executor)


def _pooled(
    executor: ProcessPoolExecutor,
    work: list[Unit],
    bounds: list[tuple[int, int]],
    query: Query,
    stats: Stats,
    cancelled: Callable[[], bool] | None,
    two_passes: bool = True,
) -> Generator[list[Hit], None, None]:
    """The hits of each batch, in order, from ``executor``'s workers (the query travels with each batch).

    Plain files with a driving group go in :func:`_two_passes` (unless not ``two_passes``).
    """
    if two_passes and query.driver >= 0 and all(type(u) is tuple for u in work):
        return _two_passes(executor, work, bounds, query, stats, cancelled)
    futures = deque(executor.submit(_search_chunk_of, (query, _pack(_tasks(work[a:b])))) for a, b in bounds)
    return _results(futures, stats, cancelled)


def _can_fork() -> bool:
    """Whether helpers can be forked (:func:`musetui.core.parallel.can_fork`; imported only for a parallel search)."""
    from musetui.core.parallel import can_fork

    return can_fork()


def _forked(
    work: list[Unit],
    bounds: list[tuple[int, int]],
    query: Query,
    stats: Stats,
    helpers: int,
    cancelled: Callable[[], bool] | None,
    base: tuple[str, str],
) -> Generator[list[Hit], None, None]:
    """The hits of each batch, in order, searched here and by forked helpers (:func:`musetui.core.parallel.forked_batches`)."""
    from musetui.core import parallel

    def run_batch(i: int, cancelled: Callable[[], bool] | None) -> tuple[list[Hit], Stats]:
        a, b = bounds[i]
        part = Stats()
        hits: list[Hit] = []
        for found in _search_units(work[a:b], query, part, cancelled, base=base):
            hits.extend(found)
        return hits, part

    results = parallel.forked_batches(len(bounds), run_batch, helpers, cancelled, _pack_result, _unpack_result)
    try:
        for hits, part in results:
            stats.add(part)
            yield hits
    finally:
        results.close()


def _pack_result(result: tuple[list[Hit], Stats]) -> tuple[list[PackedHit], Stats]:
    """A batch's result as a forked helper sends it (hits as tuples: see :func:`pack_hits`)."""
    return pack_hits(result[0]), result[1]


def _unpack_result(packed: tuple[list[PackedHit], Stats]) -> tuple[list[Hit], Stats]:
    return unpack_hits(packed[0]), packed[1]


def _results(
    futures: deque[Future[tuple[list[PackedHit], Stats]]],
    stats: Stats,
    cancelled: Callable[[], bool] | None,
) -> Generator[list[Hit], None, None]:
    """The hits of each batch, in order (what was not yet run is cancelled when this closes)."""
    from musetui.core.parallel import in_order

    results = in_order(futures, cancelled)
    try:
        for hits, part in results:
            stats.add(part)
            yield unpack_hits(hits)
    finally:
        results.close()


def _two_passes(
    executor: ProcessPoolExecutor,
    work: list[Unit],
    bounds: list[tuple[int, int]],
    query: Query,
    stats: Stats,
    cancelled: Callable[[], bool] | None,
) -> Generator[list[Hit], None, None]:
    """Sessions searched by a pool that outlives the search, in two passes, hits in order.

    First pass: each batch travels as paths and read limits only, and comes back as the
    files that the driving group's database matched (most do not). Second pass: only
    those travel as full tasks (with their session's :class:`Info`), to be searched. A
    TUI search of every session then sends a fraction of what the tasks would weigh.
    """
    first: deque[tuple[int, Future[tuple[list[int], int, int]]]] = deque(
        (a, executor.submit(_quick_chunk_of, (query, _light(work[a:b])))) for a, b in bounds
    )
    second: deque[Future[tuple[list[PackedHit], Stats]]] = deque()
    try:
        while first or second:
            if first:
                a, fut = first.popleft()
                found, files, nbytes = fut.result()
                stats.files += files
                stats.bytes += nbytes
                if found:
                    tasks = _tasks([work[a + i] for i in found])
                    second.append(executor.submit(_search_chunk_of, (query, _pack(tasks))))
            while second and (not first or second[0].done()):
                hits, part = second.popleft().result()
                stats.add(part)
                yield unpack_hits(hits)
            if cancelled is not None and cancelled():
                return
    finally:
        for _a, fut1 in first:
            fut1.cancel()
        for fut2 in second:
            fut2.cancel()


def _light(units: list[Unit]) -> list[tuple[str, str, int | None, None]]:
    """Sessions' files as the first pass needs them: their paths and read limits."""
    return [(u[0], "", u[2], None) for u in cast("list[SessionItem]", units)]


def _quick_chunk_of(args: tuple[Query, list[Any]]) -> tuple[list[int], int, int]:
    """The first pass of :func:`_two_passes` over one batch: (files to search further, files, bytes)."""
    query, units = args
    stats = Stats()
    found: list[int] = []
    for _hits in _search_units(units, query, stats, found=found):
        pass
    return found, stats.files, stats.bytes


def _new_executor(
    nworkers: int, query: Query | None, work: list[Unit] | None = None
) -> tuple[ProcessPoolExecutor, bool]:
    """A process pool, and whether its workers are forked (they then inherit ``work``).

    Processes are forked when this process has no other thread (forking a threaded process
    can copy a held lock); otherwise they come from a fork server (see :func:`musetui.core.parallel.pool_context`).
    """
    from musetui.core import parallel

    ctx = parallel.pool_context()
    fork = ctx.get_start_method() == "fork"
    if query is None:
        return parallel.start_pool(nworkers, _init_worker, (None,), ctx=ctx), fork
    global _FORK_WORK
    _FORK_WORK = work if fork else None
    try:
        executor = parallel.start_pool(nworkers, _init_worker, (query,), ctx=ctx)
        if fork:
            # A forking pool forks all its processes within the first submit (Python >= 3.11):
            # submit while ``work`` is set (no need to wait for the task to run).
            executor.submit(_noop)
    finally:
        _FORK_WORK = None
    return executor, fork


#: The units of the search being started, for forked workers (see :func:`_new_executor`).
_FORK_WORK: list[Unit] | None = None
_WORKER_WORK: list[Unit] | None = None


def _search_range(start: int, end: int) -> tuple[list[PackedHit], Stats]:
    """A batch of the inherited units, by index (nothing to unpickle)."""
    work = _WORKER_WORK if _WORKER_WORK is not None else _FORK_WORK
    assert work is not None
    return _search_chunk(work[start:end])


def _search_chunk_of(args: tuple[Query, list[Any]]) -> tuple[list[PackedHit], Stats]:
    """A batch for a pool that outlives one search: the query travels with the batch."""
    query, packed = args
    _init_worker(query)
    return _search_chunk(list(_unpack(packed)))


def _pack(units: list[Task | Subtree]) -> list[Any]:
    """Units as plain tuples for a worker process (pickled 3x faster than the dataclasses).

    A slotted dataclass pickles through Python-level ``__getstate__`` calls; tuples of
    strings and numbers pickle in C. A TUI search sends every session's task each time.
    """
    out: list[Any] = []
    for u in units:
        if isinstance(u, Task):
            info = u.info
            out.append(
                (
                    u.abspath,
                    u.path,
                    u.root,
                    u.maybe,
                    u.read_limit,
                    u.size,
                    None if info is None else tuple(getattr(info, f) for f in INFO_FIELDS),
                )
            )
        else:
            out.append(u)
    return out


def _unpack(packed: list[Any]) -> list[Task | Subtree]:
    """The units :func:`_pack` packed."""
    return [
        Task(x[0], x[1], x[2], x[3], x[4], x[5], None if x[6] is None else Info(*x[6])) if type(x) is tuple else x
        for x in packed
    ]


def _noop() -> None:
    return None


class SearchPool:
    """Worker processes kept between searches (the TUI searches on every pause in typing).

    Starting processes costs a few hundred milliseconds when the caller has threads (they
    are spawned, not forked); a pool kept here pays it once. :meth:`warm` starts it ahead
    of the first search; :meth:`close` ends it. A pool that broke is replaced.
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def executor(self) -> ProcessPoolExecutor:
        """The live executor (started, or restarted after a worker died)."""
        from musetui.core import parallel

        with self._lock:
            ex = self._executor
            if ex is None or parallel.is_broken(ex):
                if ex is not None:
                    parallel.stop_pool(ex, wait=False)
                ex, _forked = _new_executor(self.workers, None)
                self._executor = ex
            return ex

    def warm(self) -> None:
        """Start the worker processes now (each runs one empty task)."""
        ex = self.executor()
        for fut in [ex.submit(_noop) for _ in range(self.workers)]:
            fut.result()

    def close(self) -> None:
        """Stop the worker processes."""
        with self._lock:
            if self._executor is not None:
                from musetui.core.parallel import stop_pool

                stop_pool(self._executor, wait=False)
                self._executor = None
