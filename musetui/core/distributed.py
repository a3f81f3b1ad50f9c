"""Scan on a Dask cluster (``scan --dask ADDRESS``), with the ``fleet`` extra's ``distributed``.

The client walks the roots as a local scan does, splits the file list into tasks of about
equal bytes and sends them to the cluster; each worker runs the same per-file scan as a
local worker process and returns the same serialised outcomes. The client merges them in
walk order and then runs the tree and fleet-outlier pass, so the output is byte-for-byte a
local scan's. Workers must see the same paths (shared storage).

Per file, as in a local scan: a failure while scanning one file is that file's diagnostic.
A file that a worker cannot see is re-checked by the client: when it has vanished since
the walk, the client scans it itself (which gives a local scan's ``unreadable``
diagnostic); when the client still sees it, the workers do not share the storage, and the
scan fails with :class:`DaskScanError`.

Per cluster, the scan fails with :class:`DaskScanError` (one line, before anything is
printed) rather than hang: when nothing at the address completes Dask's handshake within
the timeout, when the cluster has had no worker for the timeout (none at the start, or all
lost mid-scan), when the scheduler goes away, and when a task has been lost with its worker
more than ``distributed.scheduler.allowed-failures`` times.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from musetui import __version__
from musetui.core.diagnostics import internal_error
from musetui.core.index import Blobs, Index, _blobs, _scan_chunk, _scan_entry
from musetui.core.model import Diagnostic
from musetui.core.parquet import EXTRA_HINT, MissingExtra
from musetui.core.scanner import Outcome
from musetui.core.walk import FileEntry

#: A task holds about this many bytes of files at most (and at least one file).
MAX_TASK_BYTES = 64 * 1024 * 1024
#: Aim for this many tasks per worker thread, so a lost or slow worker costs little.
TASKS_PER_THREAD = 4
#: ``scan --dask-timeout``: how long to wait for the scheduler's handshake, and for a worker when there is none.
DEFAULT_TIMEOUT_S = 60.0
#: How often the client asks the scheduler for its workers while tasks are pending.
POLL_S = 0.5


class DaskScanError(Exception):
    """The cluster could not finish the scan (no scheduler, no workers, lost workers, unreachable paths)."""


def require() -> Any:
    """The ``distributed`` module, or :class:`MissingExtra` with what to install."""
    try:
        import distributed
    except ImportError as exc:
        raise MissingExtra(f"--dask needs dask[distributed], from the fleet extra: {EXTRA_HINT}") from exc
    return distributed


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _innermost(exc: BaseException) -> BaseException:
    while exc.__cause__ is not None and exc.__cause__ is not exc:
        exc = exc.__cause__
    return exc


def _root_cause(exc: BaseException) -> str:
    """The innermost cause of ``exc`` in a few words (``Connection refused``), not Dask's wrapping of it."""
    root = _innermost(exc)
    return root.strerror if isinstance(root, OSError) and root.strerror else _first_line(root)


def _lost_scheduler(address: str, exc: BaseException) -> DaskScanError:
    """The one line for a client that lost its scheduler mid-scan."""
    root = _innermost(exc)
    why = root.strerror if isinstance(root, OSError) and root.strerror else type(exc).__name__
    return DaskScanError(f"lost the Dask scheduler at {address} mid-scan ({why}); nothing was printed")


#: What :func:`scan_task` returns per file: ("ok", its serialised outcome), ("missing", None)
#: when the worker cannot see it, or ("error", its diagnostic) when serialising it failed.
TaskResult = tuple[str, Any]
#: Leads every task's results: workers with another musetui (Dask runs the workers' own copy
#: of :func:`scan_task`) are named as such, instead of being misread.
TASK_FORMAT = f"musetui-dask-task-2/{__version__}"


def scan_task(entries: list[FileEntry], keep: bool, want_state: bool, light: bool) -> tuple[str, list[TaskResult]]:
    """One task, on a worker: :data:`TASK_FORMAT` and each file's result (see :data:`TaskResult`), in order."""
    out: list[TaskResult] = []
    for e in entries:
        if not os.path.lexists(e.abspath):
            out.append(("missing", None))
            continue
        try:
            out.append(("ok", _scan_chunk(([e], keep, want_state, light))[0]))
        except Exception as exc:  # the per-file boundary, as in a local scan
            out.append(("error", internal_error(e.relpath, exc)))
    return TASK_FORMAT, out


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


async def _handshake(address: str, timeout: float, connection_args: dict[str, Any]) -> str | None:
    """None when a Dask scheduler at ``address`` sends its handshake within ``timeout`` s; else why not, on one line.

    A Dask peer sends its handshake as soon as it accepts a connection. ``distributed.Client``
    waits for it without a time limit (a silent listener hangs it for ever) and takes the first
    eight bytes of any other protocol for a frame length (``MemoryError``), so the client reads
    it here first, under the timeout.
    """
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend

    try:
        scheme, loc = parse_address(address)
        connector = get_backend(scheme).get_connector()  # type: ignore[no-untyped-call]
    except (ValueError, TypeError) as exc:
        return f"{address} is not a Dask scheduler address: {_first_line(exc)}"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        comm = await asyncio.wait_for(connector.connect(loc, deserialize=False, **connection_args), timeout)
    except (OSError, TimeoutError) as exc:  # asyncio.TimeoutError is TimeoutError since 3.11
        why = f"no answer within {timeout:g} s" if isinstance(exc, TimeoutError) else _root_cause(exc)
        return f"cannot reach the Dask scheduler at {address}: {why}"
    try:
        hello = await asyncio.wait_for(comm.read(), max(0.1, deadline - loop.time()))
        if isinstance(hello, dict) and "pickle-protocol" in hello:  # complete it, so the scheduler logs nothing
            await asyncio.wait_for(comm.write(comm.handshake_info()), max(0.1, deadline - loop.time()))
            await asyncio.wait_for(comm.close(), max(0.1, deadline - loop.time()))
    except TimeoutError:
        tls = " (a scheduler that uses TLS needs a tls:// address)" if scheme == "tcp" else ""
        hello = f"it accepted the connection but sent no Dask handshake within {timeout:g} s{tls}"
    except OSError:
        hello = "it closed the connection without a Dask handshake"
    except Exception as exc:  # another protocol's bytes, read as Dask frames
        hello = f"it answered in another protocol ({type(exc).__name__} reading it as Dask's)"
    finally:
        comm.abort()
    if isinstance(hello, dict) and "pickle-protocol" in hello:
        return None
    if not isinstance(hello, str):
        hello = "its first message is not a Dask handshake"
    return f"{address} is not a Dask scheduler: {hello}"


class _DropAllExit(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" for ``AllExit``: a ``Future.result`` given up on.

    When a worker dies after finishing a task and before its result is fetched, the client's
    wait for that result times out (the task runs again elsewhere); the gather Dask started
    for it later ends with its internal ``AllExit``, which nobody retrieves.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return type(exc).__name__ != "AllExit"


_QUIET = _DropAllExit()


def connect(address: str, timeout: float) -> Any:
    """A ``distributed.Client`` on ``address``, or :class:`DaskScanError` within about ``timeout`` s.

    TLS (``tls://`` addresses) takes its certificates from Dask's configuration, as
    ``distributed.Security()`` does: ``distributed.comm.tls.ca-file``, ``.client.cert`` and
    ``.client.key`` (or the ``DASK_DISTRIBUTED__COMM__TLS__…`` environment variables).
    """
    distributed = require()
    logging.getLogger("asyncio").addFilter(_QUIET)  # once: addFilter ignores a filter already there
    try:
        args = distributed.Security().get_connection_args("client")
        if address.startswith("tls://") and args.get("ssl_context") is None:
            raise DaskScanError(
                f"{address} needs Dask's TLS settings: distributed.comm.tls.ca-file, .client.cert and .client.key "
                "(or DASK_DISTRIBUTED__COMM__TLS__CA_FILE, …__CLIENT__CERT, …__CLIENT__KEY)"
            )
        why = asyncio.run(_handshake(address, timeout, args))
    except DaskScanError:
        raise
    except Exception as exc:  # a bad certificate path, an unusable TLS setting
        why = f"cannot connect to the Dask scheduler at {address}: {type(exc).__name__}: {_first_line(exc)}"
    if why is not None:
        raise DaskScanError(why)
    try:
        return distributed.Client(address, timeout=timeout)
    except Exception as exc:
        raise DaskScanError(
            f"cannot connect to the Dask scheduler at {address}: {type(exc).__name__}: {_first_line(exc)}"
        ) from exc


@dataclass
class _Watch:
    """Fails the scan when the cluster has had no worker for ``timeout`` s, or lost its scheduler."""

    client: Any
    address: str
    timeout: float
    seen: bool = False  # a worker was there at some point
    since: float | None = None  # monotonic time since which there has been no worker
    last: float = float("-inf")

    def check(self) -> None:
        now = time.monotonic()
        if now - self.last < POLL_S:
            return
        self.last = now
        try:
            workers = len(self.client.nthreads(callback_timeout=self.timeout))
        except Exception as exc:
            raise _lost_scheduler(self.address, exc) from exc
        if workers:
            self.seen, self.since = True, None
            return
        self.since = now if self.since is None else self.since
        if now - self.since < self.timeout:
            return
        if self.seen:
            raise DaskScanError(
                f"the Dask cluster at {self.address} lost all its workers mid-scan and none came back "
                f"within {self.timeout:g} s (--dask-timeout); nothing was printed"
            )
        raise DaskScanError(
            f"the Dask scheduler at {self.address} has no workers: none joined within {self.timeout:g} s "
            "(--dask-timeout); nothing was printed"
        )


@dataclass
class DaskIndex(Index):
    """An :class:`Index` whose files are scanned by a Dask cluster instead of local processes."""

    streams: ClassVar[bool] = False  # every file goes to the cluster, through _outcomes
    address: str = ""
    timeout: float = DEFAULT_TIMEOUT_S  # see connect() and _Watch
    on_task_done: Callable[[int, int], None] | None = None  # (tasks done, tasks total), on the client
    tasks: int = 0

    def _outcomes(
        self, files: list[FileEntry], workers: int, total_bytes: int, cancelled: Callable[[], bool] | None
    ) -> Iterator[tuple[Outcome, FileEntry, Blobs | None]]:
        if not files:
            return
        want_state = self.use_cache or self.follow
        client = connect(self.address, self.timeout)
        # Dask's client logs its own view of a failing cluster (tracebacks of reconnects, lost
        # results it reschedules); the scan says what failed in one line of its own instead.
        chatty = logging.getLogger("distributed.client")
        level = chatty.level
        chatty.setLevel(logging.CRITICAL)
        try:
            try:
                threads = sum(client.nthreads(callback_timeout=self.timeout).values())
                chunks = split(files, threads or 1) if len(files) > 1 else [files]
                self.tasks = len(chunks)
                futures = [
                    client.submit(
                        scan_task,
                        c,
                        self.keep_offsets,
                        want_state,
                        self.light,
                        pure=False,
                        key=f"musetui-scan-{i}-{os.getpid()}-{id(self)}",
                    )
                    for i, c in enumerate(chunks)
                ]
            except Exception as exc:
                raise _lost_scheduler(self.address, exc) from exc
            results = self._gather(client, futures, cancelled, had_workers=threads > 0)
        finally:
            client.close()  # releases every task still pending
            chatty.setLevel(level)
        if results is None:
            return
        for i, chunk in enumerate(chunks):
            for e, (status, value) in zip(chunk, results[i], strict=True):
                yield from self._merge(e, status, value, want_state)

    def _gather(
        self, client: Any, futures: list[Any], cancelled: Callable[[], bool] | None, had_workers: bool
    ) -> dict[int, list[TaskResult]] | None:
        """Every task's results by task number (None when cancelled), or :class:`DaskScanError`.

        ``had_workers``: the cluster had workers when the tasks went out, so a cluster found empty
        later lost them mid-scan (the first poll can come after they died).
        """
        distributed = require()
        index_of = {f.key: i for i, f in enumerate(futures)}
        results: dict[int, list[TaskResult]] = {}
        pending = set(futures)
        watch = _Watch(client, self.address, self.timeout, seen=had_workers)
        while pending:
            try:
                done, pending = distributed.wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            except Exception as exc:  # FuturesCancelledError: the client lost its scheduler
                raise _lost_scheduler(self.address, exc) from exc
            for fut in sorted(done, key=lambda f: index_of[f.key]):
                try:
                    got = fut.result(timeout=POLL_S)
                except TimeoutError:  # the result was lost with its worker before it reached here: computed again
                    pending.add(fut)
                    continue
                except OSError as exc:  # CommClosedError: the scheduler went away while sending it
                    raise _lost_scheduler(self.address, exc) from exc
                except Exception as exc:  # a task lost past the retry limit, a worker that cannot run musetui
                    raise DaskScanError(
                        f"the Dask scan failed, nothing was printed: {type(exc).__name__}: {_first_line(exc)}"
                    ) from exc
                if not (isinstance(got, tuple) and len(got) == 2 and got[0] == TASK_FORMAT):
                    theirs = got[0] if isinstance(got, tuple) and got and isinstance(got[0], str) else "an older one"
                    raise DaskScanError(
                        f"the Dask workers at {self.address} run another musetui ({theirs}) than this client "
                        f"({TASK_FORMAT}): install the same version on both; nothing was printed"
                    )
                results[index_of[fut.key]] = got[1]
                watch.seen = True  # a worker ran this task
                if self.on_task_done is not None:
                    self.on_task_done(len(results), len(futures))
                if cancelled is not None and cancelled():
                    return None
            if pending:
                watch.check()
        return results

    def _merge(
        self, e: FileEntry, status: str, value: Any, want_state: bool
    ) -> Iterator[tuple[Outcome, FileEntry, Blobs | None]]:
        """One file's outcome from a worker's result, re-checked here when the worker could not see the file."""
        if status == "ok":
            yield from self._decode_results([e], [value], want_state)
            return
        if status == "missing":
            if os.path.lexists(e.abspath):
                raise DaskScanError(
                    f"a Dask worker cannot see {e.abspath}, which this machine sees: "
                    "workers must see the same paths as the client (shared storage)"
                )
            o = _scan_entry(e, self.keep_offsets, want_state)  # vanished since the walk: a local scan's diagnostic
        else:
            assert isinstance(value, Diagnostic)
            o = Outcome(None, [value])
        yield o, e, (_blobs(o) if want_state else None)
