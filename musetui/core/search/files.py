"""The files a search reads: the walk (the index's candidate rules), and one read per file."""

from __future__ import annotations

import dataclasses
import heapq
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from musetui.core.reader import is_gzip_name, open_dir, open_ro, read_file, scan_dir
from musetui.core.walk import candidate

if TYPE_CHECKING:
    from musetui.core.model import SessionSummary


@dataclass(slots=True)
class Info:
    """What session-level filters and hits need to know of a session."""

    format: str
    session_id: str | None
    started_at: float | None = None
    ended_at: float | None = None
    models: tuple[str, ...] = ()
    provider: str | None = None
    host: str | None = None
    flags: tuple[str, ...] = ()
    full: bool = False  # models and times come from every record

    @classmethod
    def of(cls, s: SessionSummary) -> Info:
        models = tuple(dict.fromkeys([m for m in (s.declared_model, *s.models) if m]))
        a = s.attribution
        return cls(
            s.format,
            s.session_id,
            s.started_at,
            s.ended_at,
            models,
            a.provider,
            a.host,
            tuple(a.flags),
            True,
        )


#: The fields of :class:`Info`, in ``__init__`` order (see :func:`_pack`).
INFO_FIELDS = tuple(f.name for f in dataclasses.fields(Info))


@dataclass(slots=True)
class Task:
    abspath: str
    path: str
    root: str
    maybe: bool = False
    read_limit: int | None = None
    size: int = 0
    info: Info | None = None


#: Directories deeper than this are not walked (a bind mount of an ancestor cannot loop forever).
MAX_DEPTH = 64


@dataclass(slots=True)
class Subtree:
    """A directory to walk (by a worker, for big trees), in path order.

    ``links`` holds the identities of the symlinked directories on the way down (and of the
    directories below them), to cut symlink loops.
    """

    abspath: str
    path: str
    root: str
    root_real: str
    depth: int = 0
    links: frozenset[tuple[int, int]] = frozenset()


def walk(roots: Sequence[str], notes: list[str]) -> Iterator[Task]:
    """Candidate files under ``roots``, lazily, sorted by (path, root)."""
    walks = [walk_units(root_units(r, notes), notes) for r in roots]
    if len(walks) == 1:
        return walks[0]
    return heapq.merge(*walks, key=lambda t: (t.path, t.root))


def root_units(root: str, notes: list[str]) -> list[Task | Subtree]:
    """A root as work: a file, or the directory to walk."""
    root_abs = os.path.abspath(root)
    try:
        st = os.stat(root_abs)
    except OSError as exc:
        notes.append(f"{root}: cannot read root: {exc.strerror or exc}")
        return []
    if stat.S_ISREG(st.st_mode):
        return [Task(root_abs, os.path.basename(root_abs), root_abs, False, None, st.st_size)]
    if not stat.S_ISDIR(st.st_mode):
        notes.append(f"{root}: skipped: not a regular file or directory")
        return []
    return [Subtree(root_abs, "", root_abs, os.path.realpath(root_abs))]


def split(units: list[Task | Subtree], notes: list[str], want: int) -> list[Task | Subtree]:
    """Open directories level by level (order kept) until there are ``want`` of them to share."""
    for _ in range(6):
        dirs = sum(1 for u in units if isinstance(u, Subtree))
        if dirs == 0 or dirs >= want:
            break
        opened: list[Task | Subtree] = []
        for u in units:
            if isinstance(u, Subtree):
                opened.extend(children(u, notes))
            else:
                opened.append(u)
        units = opened
    return units


def walk_units(units: Iterable[Task | Subtree], notes: list[str]) -> Iterator[Task]:
    """The files of a list of work units, depth first, in path order."""
    for u in units:
        if isinstance(u, Task):
            yield u
            continue
        stack = children(u, notes)
        stack.reverse()  # popped from the end: the first child first
        while stack:
            x = stack.pop()
            if type(x) is Task:
                yield x
            else:
                assert isinstance(x, Subtree)
                kids = children(x, notes)
                kids.reverse()
                stack += kids


def children(sub: Subtree, notes: list[str]) -> list[Task | Subtree]:
    """One directory's candidate files and subdirectories, in path order.

    The rules are those of :func:`musetui.core.index.walk_roots` (not imported: it pulls in the
    scanner): files by extension, FIFOs/sockets/devices never opened, no symlink loop. Files
    are not ``stat``-ed (directory entry types suffice). A symlink to a directory inside the
    root is not followed: that directory is searched under its real path. The directory is
    listed through :func:`~musetui.core.reader.open_dir` (its access time is kept).
    """
    try:
        fd = open_dir(sub.abspath)
    except OSError as exc:
        notes.append(f"{sub.path or '.'}: unreadable directory: {exc.strerror or exc}")
        return []
    try:  # (entries may stat through the descriptor: it stays open while they are read)
        return _children(sub, notes, fd)
    finally:
        os.close(fd)


def _children(sub: Subtree, notes: list[str], fd: int) -> list[Task | Subtree]:
    """:func:`children` of the directory open as ``fd``."""
    try:
        with os.scandir(fd if os.scandir in os.supports_fd else sub.abspath) as it:
            entries = list(it)
    except OSError as exc:
        notes.append(f"{sub.path or '.'}: unreadable directory: {exc.strerror or exc}")
        return []
    base = sub.abspath if sub.abspath.endswith(os.sep) else sub.abspath + os.sep
    keyed: list[tuple[str, Task | Subtree]] = []
    prefix = sub.path + "/" if sub.path else ""
    depth = sub.depth + 1
    for e in entries:
        name = e.name
        path = base + name
        if e.is_symlink():  # never leave the root; inside it, read the target under its real path
            real = os.path.realpath(path)
            if not (real == sub.root_real or real.startswith(sub.root_real.rstrip(os.sep) + os.sep)):
                notes.append(f"{prefix + name}: skipped: symlink leaves the root -> {real}")
                continue
            if not os.path.isdir(real):
                continue
        try:
            is_dir = e.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            rel = prefix + name
            if depth > MAX_DEPTH:
                notes.append(f"{rel}: skipped: deeper than {MAX_DEPTH} directories")
                continue
            links = sub.links
            if links or e.is_symlink():
                try:
                    if e.is_symlink():
                        real = os.path.realpath(path)
                        if real == sub.root_real or real.startswith(sub.root_real.rstrip(os.sep) + os.sep):
                            notes.append(f"{rel}: skipped: symlink into the tree (searched under its real path)")
                            continue
                    est = os.stat(path)
                except OSError:
                    continue
                ident = (est.st_dev, est.st_ino)
                if ident in links:
                    notes.append(f"{rel}: skipped: symlink loop (directory already visited)")
                    continue
                links = links | {ident}
            keyed.append((name + "/", Subtree(path, rel, sub.root, sub.root_real, depth, links)))
            continue
        cand = candidate(name)
        if cand is False:
            continue
        try:
            regular = e.is_file()
        except OSError:
            regular = False
        if regular:
            keyed.append((name, Task(path, prefix + name, sub.root, cand is None)))
        elif not e.is_symlink():
            notes.append(f"{prefix + name}: skipped: not a regular file (not opened)")
    if len(keyed) > 1:
        # Keys are unique (names in one directory; a directory's ends with "/"), so the
        # tuples never compare their second items.
        keyed.sort()
    return [x for _k, x in keyed]


#: A plain directory to walk: ``(abspath, path + "/")`` (``""`` for the root itself).
DirItem = tuple[str, str]
#: A candidate file found in a plain directory: ``(abspath, path, maybe)``.
FileItem = tuple[str, str, bool]


def plain_children(abspath: str, prefix: str) -> list[DirItem | FileItem] | None:
    """A directory's candidate files and subdirectories as tuples, in *reverse* path order.

    The fast form of :func:`children` for the common directory (no symlink, no special
    file, not near :data:`MAX_DEPTH`, readable): the same entries in the same order, as
    tuples instead of objects, reversed so that a stack pops the first one first. Returns
    None when any entry needs :func:`children`'s full rules (the caller then asks it:
    notes and symlink handling live there only).
    """
    if prefix.count("/") >= MAX_DEPTH:
        return None
    keyed: list[tuple[str, DirItem | FileItem]] = []
    try:
        base = abspath if abspath.endswith(os.sep) else abspath + os.sep
        with scan_dir(abspath) as it:
            for e in it:
                name = e.name
                if e.is_symlink():
                    return None
                if e.is_dir():
                    keyed.append((name + "/", (base + name, prefix + name + "/")))
                    continue
                cand = candidate(name)
                if cand is False:
                    continue
                if not e.is_file():
                    return None
                keyed.append((name, (base + name, prefix + name, cand is None)))
    except OSError:
        return None
    if len(keyed) > 1:
        keyed.sort(reverse=True)  # keys are unique: the items are never compared
    return [x for _k, x in keyed]


def spread(sub: Subtree, notes: list[str], want: int) -> list[Task | Subtree | DirItem | FileItem]:
    """A directory's files and subdirectories, opened level by level (order kept) until ``want`` directories can be shared.

    The cheap form of :func:`split` for one root: plain directories are listed as tuples
    (:func:`plain_children`), so sharing the walk costs about the directories it lists
    (which the walk needed anyway), not an object per entry. Tuples are under ``sub``'s
    root; the others are listed by :func:`children`.
    """
    units: list[Task | Subtree | DirItem | FileItem] = [sub]
    for _ in range(6):
        dirs = sum(1 for u in units if isinstance(u, Subtree) or (isinstance(u, tuple) and len(u) == 2))
        if dirs == 0 or dirs >= want:
            break
        opened: list[Task | Subtree | DirItem | FileItem] = []
        for u in units:
            if isinstance(u, Subtree) and not u.links:
                u = (u.abspath, u.path + "/" if u.path else "")
            if isinstance(u, Subtree):
                opened += children(u, notes)
            elif isinstance(u, tuple) and len(u) == 2:
                kids = plain_children(u[0], u[1])
                if kids is None:
                    prefix = u[1]
                    opened += children(Subtree(u[0], prefix[:-1], sub.root, sub.root_real, prefix.count("/")), notes)
                else:
                    kids.reverse()
                    opened += kids
            else:
                opened.append(u)
        units = opened
    return units


def tasks_of(sessions: Iterable[SessionSummary]) -> list[Task]:
    tasks = [Task(s.abspath, s.path, s.root, False, s.read_bytes or None, s.size, Info.of(s)) for s in sessions]
    tasks.sort(key=lambda t: (t.path, t.root))
    return tasks


# ---------------------------------------------------------------------------------------------
# Session-level filters
# ---------------------------------------------------------------------------------------------


OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read(path: str, limit: int | None) -> bytes:
    """A regular file's bytes (at most ``limit``), as :func:`musetui.core.reader.read_file` reads them.

    Opened read-only and non-blocking (a FIFO swapped in cannot block), checked to be a
    regular file; a file that grew while it was read ends at its last complete line.
    """
    if is_gzip_name(path):  # expanded in memory, as the scan read it
        return read_file(path, 0, limit).data
    fd = open_ro(path)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"not a regular file: {path}")
        want = st.st_size if limit is None else min(st.st_size, limit)
        data = os.read(fd, want) if want else b""
        while len(data) < want:
            more = os.read(fd, want - len(data))
            if not more:
                break
            data += more
        if limit is None and data and data[-1] != 10 and os.fstat(fd).st_size > st.st_size:
            cut = data.rfind(b"\n") + 1
            data = data[:cut]
        return data
    finally:
        os.close(fd)
