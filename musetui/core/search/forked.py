"""A search shared with forked helpers: the caller searches batches too, results in order."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
from collections.abc import Callable, Generator
from typing import Any

from musetui.core.search.results import Hit, Stats, pack_hits, unpack_hits

__all__ = ["MAX_BATCHES", "search_forked"]

#: Bytes of one batch number in the token pipe.
_TOKEN = 4
#: At most this many batches: their numbers must fit in a pipe's buffer before any is taken.
MAX_BATCHES = (1 << 16) // _TOKEN
#: Bytes of a result frame's length header.
_HEADER = 8
#: Pipe buffer asked for the results (Linux only; else the default 64 KiB).
_PIPE_SIZE = 1 << 20

#: Searches one batch: (batch number, cancelled) -> (hits, stats).
Batch = Callable[[int, "Callable[[], bool] | None"], "tuple[list[Hit], Stats]"]


def search_forked(
    nbatches: int,
    run_batch: Batch,
    helpers: int,
    cancelled: Callable[[], bool] | None = None,
) -> Generator[tuple[list[Hit], Stats], None, None]:
    """The results of batches ``0 .. nbatches - 1``, in order: searched here and by forked helpers.

    The batch numbers wait in a pipe. This process and ``helpers`` forked copies of it each
    take the next number when they are free, so the first batch is searched at once: no
    pool to start and nothing to send, since a helper inherits the work. A helper sends
    its results back through its own pipe. A batch that a helper took but never answered
    (it died) is searched here. Only for a process with no other thread (a fork copies no
    thread, but it copies the locks they held). Closing the generator ends the helpers.
    """
    if not 0 < nbatches <= MAX_BATCHES:
        raise ValueError(f"between 1 and {MAX_BATCHES} batches, not {nbatches}")
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
                _helper(tok_r, w, run_batch)
            os.close(w)
            os.set_blocking(r, False)
            pids.append(pid)
            feeds[r] = bytearray()
        done: dict[int, tuple[list[Hit], Stats]] = {}
        at = 0  # the next batch to give out
        while True:
            token = os.read(tok_r, _TOKEN)
            if len(token) < _TOKEN:
                break
            i = int.from_bytes(token, "little")
            done[i] = run_batch(i, cancelled)
            _drain(feeds, done, block=False)
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
            _drain(feeds, done, block=True)
        for i in range(at, nbatches):  # left by a helper that ended without answering
            got = done.pop(i, None)
            yield got if got is not None else run_batch(i, cancelled)
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


def _helper(tok_r: int, w: int, run_batch: Batch) -> None:
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
            hits, stats = run_batch(i, None)
            _send(w, (i, (pack_hits(hits), stats)))
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


def _drain(feeds: dict[int, bytearray], done: dict[int, Any], block: bool) -> None:
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
            done[i] = (unpack_hits(result[0]), result[1])
        if ended:
            os.close(r)
            del feeds[r]
