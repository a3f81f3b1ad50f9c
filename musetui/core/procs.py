"""How this process starts worker processes (the scan's and the search's pools)."""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
from typing import Any

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
