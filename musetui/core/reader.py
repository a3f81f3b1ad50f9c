"""Read-only, non-blocking file access for hostile transcript trees.

Nothing here writes, renames or locks: files are opened ``O_RDONLY | O_NONBLOCK``
(so a FIFO swapped in after the walk cannot block), checked to be regular files
with ``fstat`` and read up to the size seen at that moment, which makes a file
that grows during a scan end at a consistent line boundary.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

#: Lines longer than this are reported as malformed without being parsed.
MAX_LINE_BYTES = 32 * 1024 * 1024
#: Whole-document JSON files (pretty-printed API captures) larger than this are not parsed whole.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
#: Linux: reading does not update the file's access time (allowed for the file's owner and root).
O_NOATIME: int = getattr(os, "O_NOATIME", 0)
_noatime_ok = bool(O_NOATIME)


def open_ro(path: str, flags: int = _OPEN_FLAGS) -> int:
    """Open ``path`` read-only and non-blocking, with ``O_NOATIME`` where the OS permits it.

    ``O_NOATIME`` keeps a forensic read from rewriting the access time. It is refused
    (EPERM) for files of other users unless running as root: the open is then retried
    without it, silently (docs/safety.md says so). Every read of a file or
    listing of a directory under a scanned tree opens it here (see :func:`open_dir`).
    """
    global _noatime_ok
    if _noatime_ok:
        try:
            return os.open(path, flags | O_NOATIME)
        except PermissionError:
            pass
        except OSError as exc:
            if exc.errno != errno.EINVAL:  # EINVAL: the file system does not take the flag
                raise
            _noatime_ok = False
    return os.open(path, flags)


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
#: ``os.scandir`` takes a descriptor here (Linux, the BSDs, macOS); elsewhere it lists by path.
_SCANDIR_FD = os.scandir in os.supports_fd


def open_dir(path: str) -> int:
    """A read-only descriptor of directory ``path``, opened with ``O_NOATIME`` where permitted.

    Listing a directory through it (``os.scandir(fd)``) leaves the directory's access time
    as it was: the kernel skips the update for a descriptor opened with the flag.
    """
    return open_ro(path, _DIR_FLAGS)


@contextmanager
def scan_dir(path: str) -> Iterator[Iterator[os.DirEntry[str]]]:
    """``os.scandir`` of ``path`` through :func:`open_dir`, which stays open inside the block.

    The entries' ``path`` is their bare name (join it to ``path``); their ``stat`` and
    ``is_dir``/``is_file`` may use the descriptor, so call them inside the block only.
    """
    if not _SCANDIR_FD:
        with os.scandir(path) as it:
            yield it
        return
    fd = open_dir(path)
    try:
        with os.scandir(fd) as it:
            yield it
    finally:
        os.close(fd)


class DirLister:
    """Lists one directory after another through :func:`open_dir`, keeping the last one open.

    ``DirEntry.stat`` and ``is_dir`` may ask the directory's descriptor, so the listing's
    descriptor stays open until the next :meth:`listing` or :meth:`close`.
    """

    __slots__ = ("_fd",)

    def __init__(self) -> None:
        self._fd = -1

    def listing(self, path: str) -> list[os.DirEntry[str]]:
        """Every entry of ``path`` (unsorted); their ``path`` is their bare name.

        Raises:
            OSError: when the directory cannot be opened or read.
        """
        self.close()
        if not _SCANDIR_FD:
            with os.scandir(path) as it:
                return list(it)
        self._fd = open_dir(path)
        with os.scandir(self._fd) as it:
            return list(it)

    def close(self) -> None:
        """Close the last listing's descriptor."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def sha256_of(path: str, size: int | None = None) -> tuple[str, int, os.stat_result]:
    """The sha256 of a regular file's first ``size`` bytes (all of them when None), read-only.

    Returns:
        The hex digest, the bytes hashed (fewer than ``size`` when the file shrank) and the
        file's ``fstat`` at the open.

    Raises:
        NotRegularFile: when the path is not a regular file.
        OSError: when it cannot be opened or read.
    """
    import hashlib  # (a scan never hashes whole files)

    fd, st = _open_regular(path)
    try:
        want = st.st_size if size is None else size
        h = hashlib.sha256()
        pos = 0
        while pos < want:
            chunk = os.pread(fd, min(want - pos, 4 * 1024 * 1024), pos)
            if not chunk:
                break
            h.update(chunk)
            pos += len(chunk)
        return h.hexdigest(), pos, st
    finally:
        os.close(fd)


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or directory: it is skipped, never opened for reading."""


@dataclass(slots=True)
class FileData:
    """The bytes of a file as of one moment, with its identity."""

    data: bytes
    size: int
    mtime_ns: int
    inode: int
    device: int
    grew: bool = False  # the file was larger after the read than before it
    note: str | None = None  # what the reader could not read whole (a truncated gzip stream)
    expanded: bool = False  # ``data`` is the expansion of a gzip file (``size`` is the file's own)


class TooLarge(Exception):
    """The file is larger than the caller wants to hold at once (see ``read_file(whole_max=…)``)."""


#: A gzip-compressed transcript (``session.jsonl.gz``, LangChain's ``*.yaml.gz`` cassettes) is
#: read whole and expanded in memory, never written anywhere, up to this many bytes.
MAX_EXPANDED_BYTES = 64 * 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"


def is_gzip_name(path: str) -> bool:
    """Whether a file is read as gzip: by its name (``.gz``); its first bytes then must agree."""
    return path[-3:].lower() == ".gz"


class CompressedError(OSError):
    """A ``.gz`` file that cannot be expanded (corrupt, not gzip, or past :data:`MAX_EXPANDED_BYTES`)."""


def _expand(raw: bytes) -> tuple[bytes, str | None]:
    """The bytes a gzip file holds (every member), and a note when its stream ends early.

    Raises:
        CompressedError: not gzip, corrupt, or expanding past :data:`MAX_EXPANDED_BYTES`.
    """
    import zlib  # (only compressed files need it)

    if raw[:2] != GZIP_MAGIC:
        raise CompressedError("named .gz but not gzip data")
    out: list[bytes] = []
    total = 0
    rest = raw
    note = None
    while rest[:2] == GZIP_MAGIC:
        d = zlib.decompressobj(wbits=31)
        try:
            chunk = d.decompress(rest, MAX_EXPANDED_BYTES + 1 - total)
        except zlib.error as exc:
            if out:  # a later member is corrupt: keep what the earlier ones hold
                note = f"gzip member at byte {len(raw) - len(rest)} is corrupt ({exc}): read the members before it"
                break
            raise CompressedError(f"corrupt gzip data ({exc})") from exc
        total += len(chunk)
        out.append(chunk)
        if total > MAX_EXPANDED_BYTES or d.unconsumed_tail:
            raise CompressedError(
                f"gzip data expands past {MAX_EXPANDED_BYTES // 2**20} MiB (the limit for compressed files)"
            )
        if not d.eof:
            note = f"gzip stream ends early (truncated at byte {len(raw)}): read the {total:,} bytes it holds"
            break
        rest = d.unused_data
    return (out[0] if len(out) == 1 else b"".join(out)), note


def _expanded(fd: int, st: os.stat_result) -> tuple[bytes, str | None]:
    """The expansion of the open gzip file ``fd`` (read whole: gzip has no random access)."""
    if st.st_size > MAX_EXPANDED_BYTES:
        raise CompressedError(
            f"gzip file of {st.st_size:,} bytes: past the {MAX_EXPANDED_BYTES // 2**20} MiB limit for compressed files"
        )
    parts: list[bytes] = []
    pos = 0
    while pos < st.st_size:
        chunk = os.pread(fd, min(st.st_size - pos, 16 * 1024 * 1024), pos)
        if not chunk:
            break
        parts.append(chunk)
        pos += len(chunk)
    return _expand(parts[0] if len(parts) == 1 else b"".join(parts))


def read_file(path: str, start: int = 0, limit: int | None = None, whole_max: int | None = None) -> FileData:
    """Read a regular file read-only from ``start`` up to its current size (or ``limit`` bytes).

    Five system calls for a small file: open, fstat, pread, stat (the path after the read, which
    is the open file's own stat when it still names it: see :func:`after_read`) and close.

    Raises:
        NotRegularFile: when the path is not a regular file.
        TooLarge: when there are more than ``whole_max`` bytes to read (nothing is read).
        OSError: when it cannot be opened or read (permissions, I/O errors).
    """
    fd, st = _open_regular(path)
    try:
        size = st.st_size
        if (
            path[-3:].lower() == ".gz"
        ):  # (is_gzip_name) read whole and expanded; offsets and lines are the expanded text's
            expanded, note = _expanded(fd, st)
            end = len(expanded) if limit is None else min(len(expanded), start + limit)
            return FileData(expanded[start:end], size, st.st_mtime_ns, st.st_ino, st.st_dev, note=note, expanded=True)
        if whole_max is not None and size - start > whole_max:
            raise TooLarge(size)
        want = max(0, size - start)
        if limit is not None:
            want = min(want, limit)
        data = os.pread(fd, want, start) if 0 < want <= _PREAD_BYTES else b""
        if len(data) < want:  # (a large file, or a short read: read on, chunk by chunk)
            data = _read_on(fd, data, start, want)
        got = len(data)
        note, now = change_note(path, fd, st, start + got, start + want)
        return FileData(data, size, st.st_mtime_ns, st.st_ino, st.st_dev, now.st_size > size and note is None, note)
    finally:
        os.close(fd)


#: Bytes one ``pread`` asks for at most.
_PREAD_BYTES = 16 * 1024 * 1024


def _read_on(fd: int, head: bytes, start: int, want: int) -> bytes:
    """``head`` (read at ``start``) and what follows it, up to ``want`` bytes in all or the end of the file."""
    chunks = [head] if head else []
    got = len(head)
    pos = start + got
    while got < want:
        chunk = os.pread(fd, min(want - got, _PREAD_BYTES), pos)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        pos += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def after_read(path: str, fd: int, before: os.stat_result) -> tuple[os.stat_result, bool]:
    """The open file ``fd``'s stat after a read, and whether ``path`` now names another file (or none).

    One ``stat`` of the path (following a symlink, as :func:`open_ro` does) in the usual case: while
    it names the file ``fd`` holds open (same inode and device: an open file's inode number is not
    given to another file), that stat is the file's own, what ``os.fstat(fd)`` returns. Only when the
    path names another file, or none, is the descriptor asked.
    """
    try:
        there = os.stat(path)
    except OSError:  # gone from its path
        return os.fstat(fd), True
    if there.st_ino == before.st_ino and there.st_dev == before.st_dev:
        return there, False
    return os.fstat(fd), True


def change_note(path: str, fd: int, before: os.stat_result, got: int, want: int) -> tuple[str | None, os.stat_result]:
    """What to say when the open file ``fd`` shrank, was replaced or was rewritten while it was read (None: it was not).

    An append (the file grew, its start kept) is not a change here: the caller reads up to its
    last complete line, and the next scan reads the rest.

    Args:
        before: the file's ``fstat`` when it was opened.
        got: the offset the read reached; want: the offset it meant to reach.

    Returns:
        The note, and the file's stat after the read (:func:`after_read`).
    """
    now, replaced = after_read(path, fd, before)
    shrank = got < want or now.st_size < before.st_size or replaced
    if not shrank and now.st_size == before.st_size and now.st_mtime_ns != before.st_mtime_ns:
        return (
            f"file was rewritten while it was read (same size, new modification time): {got:,} of {before.st_size:,} bytes",
            now,
        )
    if not shrank:
        return None, now
    holds = f" (it now holds {now.st_size:,})" if now.st_size != got else ""
    return f"file shrank (or was replaced) while it was read: {got:,} of {before.st_size:,} bytes{holds}", now


def open_regular(path: str) -> int:
    """A read-only descriptor of a regular file (the caller closes it).

    Raises:
        NotRegularFile: when the path is not a regular file (it is closed again unread).
        OSError: when it cannot be opened.
    """
    return _open_regular(path)[0]


def _open_regular(path: str) -> tuple[int, os.stat_result]:
    """:func:`open_regular`, with the ``fstat`` that found the file regular."""
    fd = open_ro(path)
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFile(f"not a regular file ({_kind(st.st_mode)})")
    return fd, st


def read_range(path: str, offset: int, length: int) -> bytes:
    """Read ``length`` bytes at ``offset`` (pread; of the expanded text for a gzip file), read-only."""
    fd = open_ro(path)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"not a regular file ({_kind(st.st_mode)})")
        if is_gzip_name(path):
            return _expanded(fd, st)[0][offset : offset + length]
        return os.pread(fd, length, offset)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISDIR(mode):
        return "directory"
    return "special file"


def kind_of(mode: int) -> str:
    """A short name for a non-regular file type (for diagnostics)."""
    return _kind(mode)


def is_sse(data: bytes) -> bool:
    """True when a file is a server-sent-events capture (``data:``/``event:`` lines)."""
    return data[:5] == b"data:" or data[:6] == b"event:"


def sse_payload(line: bytes) -> bytes | None:
    """The JSON payload of one stripped SSE line; None for framing lines, comments and ``[DONE]``."""
    if line.startswith(b"data:"):
        line = line[5:].strip()
        return None if line == b"[DONE]" or not line else line
    if line.startswith((b"event:", b"id:", b":", b"retry:")):
        return None
    return line
