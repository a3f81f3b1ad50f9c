"""Worker processes, for the scan (:mod:`musetui.core.index`) and the search (:mod:`musetui.core.search.executor`).

One place for how a pool starts (fork, a fork server, or spawn; workers that end with their
parent), how work is cut into ordered batches, how results come back in order, and how a
run is cancelled (what has not started is dropped) and a pool stopped.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = [
    "bounds",
    "chunks",
    "guarded",
    "in_order",
    "is_broken",
    "pool_context",
    "start_pool",
    "stop_pool",
    "worker_init",
]

T = TypeVar("T")

#: Imported once by the fork server, so that each worker it forks starts with them.
PRELOAD = ["musetui.core.index", "musetui.core.fingerprints.catalogue", "musetui.core.search"]


def pool_context() -> Any:
    """Fork when this process has one thread; else a fork server (imports once, forks workers), else spawn.

    Forking a process that has threads (the app) can deadlock a child; a spawned worker
    starts a new interpreter and imports the scanner and the catalogue again (seconds, on a
    busy machine), which the fork server does once for every pool of the process.
    """
    methods = multiprocessing.get_all_start_methods()
    if threading.active_count() == 1 and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


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
