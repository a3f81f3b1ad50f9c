"""A head start for the app: the first files of the roots, read in a child process while the UI starts.

Importing Textual and building the screen take most of a second. On a machine with a
second core, the first sessions can meanwhile be scanned (or read from the cache) in a
child process, so that the tree has rows to paint as soon as it exists. The child writes
nothing: its outcomes, with the blobs the cache would store, come back through a pipe, and
the app's own index adopts each one whose file is unchanged when its walk reaches it (see
``Index.preloaded``). This module imports nothing heavy, so the child starts at once.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import pickle
import signal
import sys
from collections.abc import Sequence
from typing import Any

#: At most this many files, and about this many bytes, are read ahead.
HEAD_FILES = 32
HEAD_BYTES = 32 * 2**20


class HeadStart:
    """A child process reading the first files of the roots; :meth:`take` collects its outcomes."""

    def __init__(self, process: Any, conn: Any) -> None:
        self._process = process
        self._conn = conn

    @classmethod
    def start(cls, roots: Sequence[str], *, use_cache: bool, follow_symlinks: bool = False) -> HeadStart | None:
        """Start the child (forked on Linux, spawned elsewhere); None when no process can be started.

        Call it before any thread exists (before the app starts), so that forking is safe.
        """
        method = "fork" if sys.platform == "linux" else "spawn"
        try:
            ctx: Any = multiprocessing.get_context(method)
            recv, send = ctx.Pipe(duplex=False)
            process = ctx.Process(
                target=_child,
                args=(list(roots), use_cache, follow_symlinks, send),
                daemon=True,
                name="musetui-head-start",
            )
            process.start()
        except (OSError, ValueError, RuntimeError):
            return None
        send.close()
        return cls(process, recv)

    def ready(self, timeout: float = 0.0) -> bool:
        """Whether the child has answered (so that :meth:`take` returns at once), waiting up to ``timeout`` s."""
        try:
            return bool(self._conn.poll(timeout))
        except (OSError, ValueError):
            return True

    def take(self, timeout: float) -> Answer:
        """The child's answer, waiting at most ``timeout`` seconds; then the child ends.

        Empty when the child failed or was late: the index then reads those files itself.
        """
        data = b""
        try:
            if self._conn.poll(timeout):
                data = self._conn.recv_bytes()
        except (EOFError, OSError):
            data = b""
        finally:
            self.close()
        return Answer(data)

    def close(self) -> None:
        """Stop the child if it still runs, and release the pipe."""
        with contextlib.suppress(OSError):
            self._conn.close()
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=2)


class Answer:
    """What the child read: its sessions at once (cheap to load), the full outcomes on demand.

    Both come from one pickle stream, so the outcomes hold the very session objects that
    :attr:`sessions` lists (the tree and the index share them). Loading the sessions needs
    only :mod:`musetui.core.model`; the outcomes need the scanner, which the UI imports later.
    """

    def __init__(self, data: bytes) -> None:
        self._unpickler: pickle.Unpickler | None = None
        self.sessions: list[Any] = []
        if not data:
            return
        try:
            self._unpickler = pickle.Unpickler(io.BytesIO(data))
            sessions = self._unpickler.load()
        except Exception:  # a child that broke mid-answer: as if it had not answered
            self._unpickler = None
            return
        if isinstance(sessions, list):
            self.sessions = sessions

    def outcomes(self) -> list[tuple[Any, Any, Any]]:
        """The ``(FileEntry, Outcome, blobs)`` triples (once; empty when unreadable)."""
        unpickler, self._unpickler = self._unpickler, None
        if unpickler is None:
            return []
        try:
            got = unpickler.load()
        except Exception:
            return []
        if not isinstance(got, list) or not all(isinstance(t, tuple) and len(t) == 3 for t in got):
            return []
        return got


def _child(roots: list[str], use_cache: bool, follow_symlinks: bool, conn: Any) -> None:
    """In the child: read the head of the walk and send it back pickled (an empty list on any error)."""
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's ^C belongs to the app
    with contextlib.suppress(OSError):  # nothing of the child may reach the app's terminal
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    try:
        from musetui.core.index import Index

        index = Index(roots, use_cache=use_cache, follow=True, follow_symlinks=follow_symlinks)
        head = index.head(HEAD_FILES, HEAD_BYTES)
        buf = io.BytesIO()
        pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.dump([o.summary for _e, o, _b in head if o.summary is not None])
        pickler.dump(head)  # (the memo carries over: the summaries above are referenced, not copied)
        payload = buf.getvalue()
    except Exception:
        payload = b""
    with contextlib.suppress(OSError):
        conn.send_bytes(payload)
        conn.close()
