"""Scan on a Dask cluster (``scan --dask ADDRESS``), with the ``fleet`` extra's ``distributed``.

The client walks the roots as a local scan does, splits the file list into tasks of about
equal bytes and sends them to the cluster; each worker runs the same per-file scan as a
local worker process and returns the same serialised outcomes. The client merges them in
walk order and then runs the tree and fleet-outlier pass, so the output is byte-for-byte a
local scan's. Workers must see the same paths (shared storage): a worker that cannot
see a file fails the scan instead of reporting it as unreadable.

A worker that dies mid-scan loses its tasks; the scheduler runs them again elsewhere
(up to ``distributed.scheduler.allowed-failures`` times per task), and if that runs out
the scan fails with :class:`DaskScanError` before anything is printed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from musetui.index import Blobs, Index, _scan_chunk
from musetui.parquet import EXTRA_HINT, MissingExtra
from musetui.scanner import Outcome
from musetui.walk import FileEntry

#: A task holds about this many bytes of files at most (and at least one file).
MAX_TASK_BYTES = 64 * 1024 * 1024
#: Aim for this many tasks per worker thread, so a lost or slow worker costs little.
TASKS_PER_THREAD = 4


class DaskScanError(Exception):
    """The cluster could not finish the scan (lost workers past the retry limit, unreachable paths)."""


def require() -> Any:
    """The ``distributed`` module, or :class:`MissingExtra` with what to install."""
    try:
        import distributed
    except ImportError as exc:
        raise MissingExtra(f"--dask needs dask[distributed], from the fleet extra: {EXTRA_HINT}") from exc
    return distributed


def scan_task(entries: list[FileEntry], keep: bool, want_state: bool, light: bool) -> tuple[list[str], list[Any]]:
    """One task, on a worker: the paths it cannot see, and the serialised outcomes of the rest."""
    missing = [e.abspath for e in entries if not os.path.lexists(e.abspath)]
    if missing:
        return missing, []
    return [], _scan_chunk((entries, keep, want_state, light))


def split(files: list[FileEntry], threads: int) -> list[list[FileEntry]]:
    """Consecutive runs of files of about equal total size (walk order kept)."""
    total = sum(f.size for f in files)
    target = max(1, min(MAX_TASK_BYTES, total // max(1, threads * TASKS_PER_THREAD)))
    out: list[list[FileEntry]] = []
    cur: list[FileEntry] = []
    size = 0
    for f in files:
        cur.append(f)
        size += f.size
        if size >= target:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


@dataclass
class DaskIndex(Index):
    """An :class:`Index` whose files are scanned by a Dask cluster instead of local processes."""

    streams: ClassVar[bool] = False  # every file goes to the cluster, through _outcomes
    address: str = ""
    on_task_done: Callable[[int, int], None] | None = None  # (tasks done, tasks total), on the client
    tasks: int = 0

    def _outcomes(
        self, files: list[FileEntry], workers: int, total_bytes: int, cancelled: Callable[[], bool] | None
    ) -> Iterator[tuple[Outcome, FileEntry, Blobs | None]]:
        if not files:
            return
        distributed = require()

        want_state = self.use_cache or self.follow
        try:
            client = distributed.Client(self.address)
        except (OSError, TimeoutError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DaskScanError(f"cannot reach the Dask scheduler at {self.address}: {first}") from exc
        try:
            threads = sum(client.nthreads().values()) or 1
            chunks = split(files, threads) if len(files) > 1 else [files]
            self.tasks = len(chunks)
            futures = [
                client.submit(scan_task, c, self.keep_offsets, want_state, self.light, pure=False, key=f"musetui-scan-{i}-{os.getpid()}-{id(self)}")
                for i, c in enumerate(chunks)
            ]
            done = 0
            results: dict[int, Any] = {}
            index_of = {f.key: i for i, f in enumerate(futures)}
            try:
                for fut in distributed.as_completed(futures):
                    results[index_of[fut.key]] = fut.result()
                    done += 1
                    if self.on_task_done is not None:
                        self.on_task_done(done, len(futures))
                    if cancelled is not None and cancelled():
                        return
            except Exception as exc:  # a distributed failure of any kind ends the scan: no partial output
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                raise DaskScanError(f"the Dask scan failed, nothing was printed: {type(exc).__name__}: {first}") from exc
            finally:
                for fut in futures:
                    fut.cancel()
        finally:
            client.close()
        for i, chunk in enumerate(chunks):
            missing, blobs = results[i]
            if missing:
                raise DaskScanError(
                    f"a Dask worker cannot see {missing[0]} (and {len(missing) - 1} more in its task): "
                    "workers must see the same paths as the client (shared storage)"
                )
            yield from self._decode_results(chunk, blobs, want_state)
