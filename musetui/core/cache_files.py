"""The cache's files on disk: a private directory, a database file opened without following links.

The cache lives in the user's cache directory (never inside a scanned tree: :func:`inside`
checks a location against every root before anything is created). Its directory is 0700 and
its database 0600, created with ``O_NOFOLLOW``; a symlinked directory, database or SQLite
side file is refused, never written through.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from musetui.core.config import cache_dir

__all__ = ["Refused", "cache_files", "create_private", "inside", "no_links", "private_dir"]


class Refused(Exception):
    """The cache location is not safe to use (a symlink, or not a regular file)."""


_SIDECARS = ("-wal", "-shm", "-journal")


def private_dir(d: Path) -> None:
    """Create the cache directory (mode 0700, parents too) unless it exists; refuse it when it is a symlink."""
    os.makedirs(d, mode=0o700, exist_ok=True)
    st = os.lstat(d)
    if stat.S_ISLNK(st.st_mode):
        raise Refused(f"cache directory {d} is a symlink: not followed")
    if not stat.S_ISDIR(st.st_mode):
        raise Refused(f"{d} is not a directory")


def no_links(path: Path) -> None:
    """Refuse a database whose file or journal files are symlinks (SQLite would write through them)."""
    for suffix in ("", *_SIDECARS):
        p = str(path) + suffix
        try:
            if stat.S_ISLNK(os.lstat(p).st_mode):
                raise Refused(f"{p} is a symlink: not followed")
        except FileNotFoundError:
            pass


def create_private(path: Path) -> None:
    """Open (creating with mode 0600) the database file without following a symlink, before SQLite opens it.

    A symlink, or anything but a regular file, is refused; an existing database of ours
    that others could read is made private.
    """
    no_links(path)
    flags = (
        os.O_RDWR
        | os.O_CREAT
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(f"{path} is a symlink: not followed") from exc
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{path} is not a regular file")
        if st.st_mode & 0o077 and hasattr(os, "fchmod") and st.st_uid == getattr(os, "getuid", lambda: -1)():
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def inside(path: Path, root: str) -> bool:
    try:
        return os.path.commonpath([str(path.resolve()), os.path.realpath(root)]) == os.path.realpath(root)
    except ValueError:
        return False


def cache_files() -> list[Path]:
    """The database files in the cache directory."""
    d = cache_dir()
    return sorted(p for p in d.glob("index-*.sqlite3*")) if d.is_dir() else []
