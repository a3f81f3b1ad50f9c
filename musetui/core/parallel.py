"""Worker processes, for the scan (:mod:`musetui.core.index`) and the search (:mod:`musetui.core.search.executor`).

One place for how a pool starts (fork, a fork server, or spawn; workers that end with their
parent), how work is cut into ordered batches, how results come back in order, and how a
run is cancelled (what has not started is dropped) and a pool stopped. A process with no
other thread may instead share a run with forked helpers (:func:`forked_batches`): no pool
to start, nothing to send, and the caller searches batches too.

``multiprocessing`` is imported only where a pool starts or a worker begins: a search that
forks its helpers (or runs alone) never loads it (``tests/unit/test_search_imports.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = [
    "MAX_FORKED_BATCHES",
    "bounds",
    "can_fork",
    "chunks",
    "forked_batches",
    "guarded",
    "in_order",
    "is_broken",
    "pool_context",
    "start_pool",
    "stop_pool",
    "worker_init",
]

T = TypeVar("T")
R = TypeVar("R")

#: Imported once by the fork server, so that each worker it forks starts with them.
PRELOAD = ["musetui.core.index", "musetui.core.fingerprints.catalogue", "musetui.core.search"]


def pool_context() -> Any:
    """Fork when this process has one thread; else a fork server (imports once, forks workers), else spawn.

    Forking a process that has threads (the app) can deadlock a child; a spawned worker
    starts a new interpreter and imports the scanner and the catalogue again (seconds, on a
    busy machine), which the fork server does once for every pool of the process.
    """
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if can_fork() and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def can_fork() -> bool:
    """Whether this process may fork: it has no other thread (a fork copies no thread, but it copies the locks they held)."""
    return hasattr(os, "fork") and threading.active_count() == 1


#: ``prctl`` option: the signal this process gets when its parent dies (Linux).
PR_SET_PDEATHSIG = 1


def worker_init(nice: int = 0) -> None:
    """In a pool worker: end with the parent, and lower the priority by ``nice``.

    On Linux the kernel kills the worker when its parent dies (``PR_SET_PDEATHSIG``). Everywhere,
    a thread waits for EOF on the pipe the parent holds open for its children (the
    process sentinel) and ends the worker then: a worker blocked on its task queue would
    otherwise wait forever, as the orphan of a killed scan.
    """
    _die_with_parent()
    try:
        if nice:
            os.nice(nice)
    except (AttributeError, OSError):
        pass


def _die_with_parent() -> None:
    import multiprocessing

    parent = multiprocessing.parent_process()
    if sys.platform == "linux":
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent is None:
        return
    try:
        sentinel = parent.sentinel
    except (AttributeError, ValueError):
        return
    if not parent.is_alive():  # it died before the watch began
        os._exit(1)
    threading.Thread(target=_exit_on_eof, args=(sentinel,), daemon=True, name="musetui-parent-watch").start()


def _exit_on_eof(sentinel: Any) -> None:
    """Wait until the parent's end of the sentinel pipe closes (the parent died), then exit at once."""
    import multiprocessing.connection

    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def start_pool(
    workers: int,
    initializer: Callable[..., None] = worker_init,
    initargs: tuple[Any, ...] = (),
    before_fork: Callable[[], None] | None = None,
    ctx: Any = None,
) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, started as :func:`pool_context` says.

    ``before_fork`` runs first when the workers are forked, so that they inherit what it
    builds (a spawned or fork-server worker builds it itself). ``initializer`` must call
    :func:`worker_init` (the default is it). ``ctx``: the :func:`pool_context` already chosen.
    """
    from concurrent.futures import ProcessPoolExecutor  # (when a pool starts, not on import)

    ctx = ctx if ctx is not None else pool_context()
    if before_fork is not None and ctx.get_start_method() == "fork":
        before_fork()
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=initializer, initargs=initargs)


def stop_pool(pool: ProcessPoolExecutor, wait: bool = True) -> None:
    """Stop ``pool``: tasks not yet started are dropped; with ``wait``, the running ones end first."""
    pool.shutdown(wait=wait, cancel_futures=True)


def is_broken(pool: ProcessPoolExecutor) -> bool:
    """Whether a worker of ``pool`` died (the pool then refuses new tasks)."""
    return bool(getattr(pool, "_broken", False))  # (how concurrent.futures marks it)


def bounds(n: int, size: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into ``(start, end)`` batches of ``size`` (the last may be shorter)."""
    size = max(1, size)
    return [(i, min(i + size, n)) for i in range(0, n, size)]


def chunks(items: Sequence[T], size: int) -> list[list[T]]:
    """``items`` cut into lists of ``size`` (the last may be shorter)."""
    return [list(items[a:b]) for a, b in bounds(len(items), size)]


def in_order(futures: deque[Future[T]], cancelled: Callable[[], bool] | None = None) -> Generator[T, None, None]:
    """The results of ``futures`` in order; stops when ``cancelled()`` says so, and cancels what is left when closed."""
    try:
        while futures:
            yield futures.popleft().result()
            if cancelled is not None and cancelled():
                return
    finally:
        for fut in futures:
            fut.cancel()


def guarded(results: Iterator[T]) -> Iterator[T]:
    """The results of a pool, ending early (not raising) when a worker process failed."""
    try:
        yield from results
    except Exception:
        return


# ---------------------------------------------------------------------------------------------
# Forked helpers: a run shared with copies of this process
# ---------------------------------------------------------------------------------------------

#: Bytes of one batch number in the token pipe.
_TOKEN = 4
#: At most this many batches: their numbers must fit in a pipe's buffer before any is taken.
MAX_FORKED_BATCHES = (1 << 16) // _TOKEN
#: Bytes of a result frame's length header.
_HEADER = 8
#: Pipe buffer asked for the results (Linux only; else the default 64 KiB).
_PIPE_SIZE = 1 << 20

#: Whether a run was cancelled (polled between batches).
Cancelled = Callable[[], bool]


def forked_batches(
    nbatches: int,
    run_batch: Callable[[int, Cancelled | None], R],
    helpers: int,
    cancelled: Cancelled | None = None,
    pack: Callable[[R], Any] | None = None,
    unpack: Callable[[Any], R] | None = None,
) -> Generator[R, None, None]:
    """The results of ``run_batch(i, cancelled)`` for ``i`` in ``0 .. nbatches - 1``, in order: run here and by forked helpers.

    The batch numbers wait in a pipe. This process and ``helpers`` forked copies of it each
    take the next number when they are free, so the first batch is run at once: no pool to
    start and nothing to send, since a helper inherits the work (the in-memory units of a
    search, say). A helper sends its results back through its own pipe, pickled (``pack``
    makes one cheaper to pickle, ``unpack`` reverses it here). A batch that a helper took but
    never answered (it died) is run here; an exception in a helper is raised here. Only for
    a process that :func:`can_fork`. Closing the generator ends the helpers.
    """
    if not 0 < nbatches <= MAX_FORKED_BATCHES:
        raise ValueError(f"between 1 and {MAX_FORKED_BATCHES} batches, not {nbatches}")
    tok_r, tok_w = os.pipe()
    try:
        os.write(tok_w, b"".join(i.to_bytes(_TOKEN, "little") for i in range(nbatches)))
    finally:
        os.close(tok_w)  # an empty pipe then reads as the end: no batch left
    pids: list[int] = []
    feeds: dict[int, bytearray] = {}  # a helper's results pipe -> bytes read, not yet a frame
    try:
        for _ in range(helpers):
            r, w = os.pipe()
            _grow(w)
            try:
                pid = os.fork()
            except OSError:  # (no process to spare: fewer helpers)
                os.close(r)
                os.close(w)
                break
            if pid == 0:  # a helper: it never returns from here
                os.close(r)
                for other in feeds:
                    os.close(other)
                _helper(tok_r, w, run_batch, pack)
            os.close(w)
            os.set_blocking(r, False)
            pids.append(pid)
            feeds[r] = bytearray()
        done: dict[int, R] = {}
        at = 0  # the next batch to give out
        while True:
            token = os.read(tok_r, _TOKEN)
            if len(token) < _TOKEN:
                break
            i = int.from_bytes(token, "little")
            done[i] = run_batch(i, cancelled)
            _drain(feeds, done, False, unpack)
            while at in done:
                yield done.pop(at)
                at += 1
            if cancelled is not None and cancelled():
                return
        while feeds and at < nbatches:
            if at in done:
                yield done.pop(at)
                at += 1
                continue
            _drain(feeds, done, True, unpack)
        for i in range(at, nbatches):  # left by a helper that ended without answering
            yield done.pop(i) if i in done else run_batch(i, cancelled)
    finally:
        os.close(tok_r)
        for r in feeds:
            os.close(r)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def _grow(fd: int) -> None:
    """Ask for a bigger pipe buffer (``F_SETPIPE_SZ``), so that a helper seldom waits for the reader."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_SIZE)
    except (ImportError, OSError):
        pass


def _helper(
    tok_r: int, w: int, run_batch: Callable[[int, Cancelled | None], R], pack: Callable[[R], Any] | None
) -> None:
    """A forked helper: take batch numbers until none is left, send each result; then exit."""
    code = 0
    try:
        gc.freeze()  # the inherited objects: never scanned here (no copy of their pages)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        while True:
            token = os.read(tok_r, _TOKEN)
            if len(token) < _TOKEN:
                break
            i = int.from_bytes(token, "little")
            result = run_batch(i, None)
            _send(w, (i, result if pack is None else pack(result)))
    except BaseException as exc:  # sent to the caller, raised there
        code = 1
        with contextlib.suppress(BaseException):
            _send(w, (-1, _portable(exc)))
    finally:
        os._exit(code)


def _portable(exc: BaseException) -> BaseException:
    """The exception if it pickles, else a RuntimeError with its traceback."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        import traceback

        return RuntimeError("".join(traceback.format_exception(exc)))


def _send(w: int, obj: Any) -> None:
    data = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(_HEADER, "little") + data)
    while view:
        view = view[os.write(w, view) :]


def _drain(feeds: dict[int, bytearray], done: dict[int, R], block: bool, unpack: Callable[[Any], R] | None) -> None:
    """Read what the helpers sent into ``done``; with ``block``, wait for one of them first.

    A helper's pipe that reached its end is dropped from ``feeds``.
    """
    if block:
        import select

        ready, _w, _x = select.select(list(feeds), [], [])
    else:
        ready = list(feeds)
    for r in ready:
        buf = feeds[r]
        ended = False
        while True:
            try:
                chunk = os.read(r, 1 << 20)
            except BlockingIOError:
                break
            if not chunk:
                ended = True
                break
            buf += chunk
        while len(buf) >= _HEADER:
            n = int.from_bytes(buf[:_HEADER], "little")
            if len(buf) < _HEADER + n:
                break
            i, result = pickle.loads(buf[_HEADER : _HEADER + n])
            del buf[: _HEADER + n]
            if i < 0:
                raise result
            done[i] = result if unpack is None else unpack(result)
        if ended:
            os.close(r)
            del feeds[r]
