"""How this process starts worker processes (the scan's and the search's pools)."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

#: Imported once by the fork server, so that each worker it forks starts with them.
PRELOAD = ["musetui.index", "musetui.fingerprints.catalogue", "musetui.search"]


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
