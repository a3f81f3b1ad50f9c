"""Walk transcript roots: a deterministic, read-only, loop-safe list of candidate files.

Kept free of the scanner's dependencies so that search and other light tools can use it.
"""

from __future__ import annotations

import operator
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import orjson

from musetui.core.model import Diagnostic
from musetui.core.reader import DirLister, kind_of
from musetui.core.sources.layouts import CAPTURE_SUFFIXES

JSON_EXTS = frozenset({".jsonl", ".json", ".ndjson", ".jsonlines"})
MAYBE_EXTS = frozenset({".txt", ".log", ""})


@dataclass(slots=True)
class FileEntry:
    """A file to scan, with where it was found."""

    abspath: str
    relpath: str
    root: str
    size: int
    maybe: bool  # extension does not promise JSON: sniff the first bytes
    dev: int = 0
    ino: int = 0
    mtime_ns: int = 0
    keep_state: bool = True  # keep a resume state (see Index.iter_scan)
    ctime_ns: int = 0  # changes with permissions too: a file made unreadable is never served from the cache


_NAME = operator.attrgetter("name")


def candidate(name: str) -> bool | None:
    """True: a JSON file; None: maybe (sniff it); False: not a transcript.

    A gzip file (``.gz``) is what its inner name says (``session.jsonl.gz``, ``c.yaml.gz``): the
    reader expands it in memory.
    """
    if name[-3:].lower() == ".gz":
        inner = name[:-3]
        return candidate(inner) if inner and inner[-3:].lower() != ".gz" else False
    if name.endswith((".jsonl", ".json")):
        return not (name.endswith(".meta.json") and name.startswith("agent-"))  # Claude subagent sidecar
    if name.endswith(".chunks.txt"):
        return True
    if name.endswith(CAPTURE_SUFFIXES):
        return True  # HTTP captures: the scanner skips, quietly, what holds no interactions
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    if ext in JSON_EXTS:
        return True
    if ext in MAYBE_EXTS:
        return None
    return False


def walk_roots(roots: Sequence[str], diagnostics: list[Diagnostic], follow_symlinks: bool = False) -> list[FileEntry]:
    """Every candidate file under ``roots``, in a deterministic (sorted) order."""
    return list(iter_walk(roots, diagnostics, follow_symlinks))


def _inside(path: str, real_root: str) -> bool:
    return path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)


def iter_walk(
    roots: Sequence[str], diagnostics: list[Diagnostic], follow_symlinks: bool = False
) -> Iterator[FileEntry]:
    """The candidate files under ``roots`` as the walk finds them (see :func:`_walk`).

    Directories are listed through descriptors opened with ``O_NOATIME``: the walk moves
    no directory's access time.
    """
    lister = DirLister()
    try:
        yield from _walk(roots, diagnostics, follow_symlinks, lister)
    finally:
        lister.close()


def _walk(
    roots: Sequence[str], diagnostics: list[Diagnostic], follow_symlinks: bool, lister: DirLister
) -> Iterator[FileEntry]:
    """The candidate files under ``roots`` as the walk finds them (the order of :func:`walk_roots`).

    Diagnostics (unreadable directories, symlink loops, FIFOs …) are appended as found.
    A symlink whose target lies outside the root is not followed (``skipped: symlink
    leaves the root -> TARGET``) unless ``follow_symlinks``; a symlink to a file or
    directory inside the root is not followed either: its target is read once, under its
    real path, and the alias is named in a diagnostic. No walk ever loops.

    Overlapping roots are merged (see :func:`merged_roots`): each file is read and listed once.
    """
    outer_of = merged_roots(roots)
    for i, root in enumerate(roots):
        outer = outer_of[i]
        if outer is not None:
            same = os.path.realpath(root) == os.path.realpath(outer)
            why = f"same directory as root {outer}" if same else f"root lies inside root {outer}"
            diagnostics.append(Diagnostic(root, 0, f"skipped: {why} (its files are listed under {outer}, once)"))
            continue
        root_abs = os.path.abspath(root)
        try:
            st = os.stat(root_abs)
        except OSError as exc:
            diagnostics.append(Diagnostic(root, 0, f"cannot read root: {exc.strerror or exc}"))
            continue
        if stat.S_ISREG(st.st_mode):
            yield FileEntry(
                root_abs,
                os.path.basename(root_abs),
                root_abs,
                st.st_size,
                False,
                st.st_dev,
                st.st_ino,
                st.st_mtime_ns,
                ctime_ns=st.st_ctime_ns,
            )
            continue
        if not stat.S_ISDIR(st.st_mode):
            diagnostics.append(Diagnostic(root, 0, f"skipped: not a regular file ({kind_of(st.st_mode)})"))
            continue
        yield from _walk_tree(root_abs, st, diagnostics, follow_symlinks, lister)


def _walk_tree(
    root_abs: str, st: os.stat_result, diagnostics: list[Diagnostic], follow_symlinks: bool, lister: DirLister
) -> Iterator[FileEntry]:
    """The candidate files of one root directory, depth first by name; each directory once."""
    real_root = os.path.realpath(root_abs)
    visited: set[tuple[int, int]] = {(st.st_dev, st.st_ino)}
    stack: list[tuple[str, str, int]] = [(root_abs, "", st.st_dev)]
    while stack:
        dpath, drel, dev = stack.pop()
        try:
            entries = lister.listing(dpath)
            if len(entries) > 1:
                entries.sort(key=_NAME)
        except OSError as exc:
            diagnostics.append(Diagnostic(drel or ".", 0, f"unreadable directory: {exc.strerror or exc}"))
            continue
        subdirs: list[tuple[str, str, int]] = []
        base = dpath if dpath.endswith(os.sep) else dpath + os.sep
        for e in entries:
            rel = f"{drel}/{e.name}" if drel else e.name
            path = base + e.name
            try:
                is_link = e.is_symlink()
                if not is_link and e.is_dir(follow_symlinks=False):
                    # A real directory: its inode comes free from the directory entry.
                    ident = (dev, e.inode())
                    if ident not in visited:
                        visited.add(ident)
                        subdirs.append((path, rel, dev))
                    continue
                cand = candidate(e.name)
                if cand is False and not is_link:
                    continue
                if is_link and not _follow_link(path, rel, cand, real_root, follow_symlinks, diagnostics):
                    continue
                est = e.stat(follow_symlinks=True)
            except OSError as exc:
                if e.is_symlink():
                    reason = "symlink loop" if getattr(exc, "errno", None) == 40 else "broken symlink"
                    diagnostics.append(Diagnostic(rel, 0, f"skipped: {reason}"))
                else:
                    diagnostics.append(Diagnostic(rel, 0, f"unreadable: {exc.strerror or exc}"))
                continue
            mode = est.st_mode
            if stat.S_ISDIR(mode):
                ident = (est.st_dev, est.st_ino)
                if ident in visited:
                    diagnostics.append(Diagnostic(rel, 0, "skipped: symlink loop (directory already visited)"))
                    continue
                visited.add(ident)
                subdirs.append((path, rel, est.st_dev))
            elif cand is False:
                continue
            elif stat.S_ISREG(mode):
                mtime_ns = est.st_mtime_ns
                ctime_ns = est.st_ctime_ns
                yield FileEntry(  # (a tree's files share one device number, and often one time for both)
                    path,
                    rel,
                    root_abs,
                    est.st_size,
                    cand is None,
                    dev if est.st_dev == dev else est.st_dev,
                    est.st_ino,
                    mtime_ns,
                    ctime_ns=mtime_ns if ctime_ns == mtime_ns else ctime_ns,
                )
            else:
                diagnostics.append(Diagnostic(rel, 0, f"skipped: {kind_of(mode)} (not opened)"))
        stack.extend(reversed(subdirs))


def _follow_link(
    path: str, rel: str, cand: bool | None, real_root: str, follow_symlinks: bool, diagnostics: list[Diagnostic]
) -> bool:
    """Whether to follow a symlink: never to an alias inside the root (named in a diagnostic, read
    under its real path), and out of the root only with ``follow_symlinks``. Raises OSError as ``os.stat``."""
    target = os.path.realpath(path)
    if _inside(target, real_root):
        est = os.stat(path)
        if stat.S_ISDIR(est.st_mode) or (cand is not False and stat.S_ISREG(est.st_mode)):
            alias = os.path.relpath(target, real_root).replace(os.sep, "/")
            diagnostics.append(Diagnostic(rel, 0, f"skipped: symlink alias of {alias} (read under its real path)"))
        return False
    if not follow_symlinks:
        diagnostics.append(Diagnostic(rel, 0, f"skipped: symlink leaves the root -> {target}"))
        return False
    return True


def merged_roots(roots: Sequence[str]) -> list[str | None]:
    """For each root, the root it is merged into (None: it is walked itself).

    A root that lies inside another root's directory (compared by real path), or that is the
    same directory as an earlier root, adds nothing of its own: its files are listed under
    the outermost root that holds them (the first given, of equal ones), with ``path``
    relative to that root. So ``scan R/proj R`` lists each file of ``R/proj`` once, as
    ``proj/...`` under ``R``, whatever the order. A file root is merged only when the walk of
    the outer root would find it (a name that the walk reads).
    """
    real: list[str | None] = []
    for r in roots:
        try:
            st = os.stat(r)
        except OSError:
            real.append(None)  # reported when walked
            continue
        ok = stat.S_ISDIR(st.st_mode) or (stat.S_ISREG(st.st_mode) and candidate(os.path.basename(r)) is not False)
        real.append(os.path.realpath(r) if ok else None)
    dirs = [(i, rp) for i, rp in enumerate(real) if rp is not None and os.path.isdir(rp)]
    out: list[str | None] = []
    for i, rp in enumerate(real):
        holders = [(j, d) for j, d in dirs if j != i and rp is not None and _inside(rp, d) and (d != rp or j < i)]
        if not holders:
            out.append(None)
            continue
        j, _d = min(holders, key=lambda h: (len(h[1]), h[0]))  # the outermost, then the first given
        out.append(roots[j])
    return out


#: :func:`tree_digest` serialises this many files' identities at a time.
DIGEST_BATCH = 4096


def tree_digest(roots: Sequence[str], files: list[FileEntry], diagnostics: list[Diagnostic]) -> bytes:
    """A digest of everything a scan of ``roots`` depends on: each file's identity and the walk's notes.

    Two walks with the same digest found the same files, byte-for-byte unchanged as far as
    (device, inode, size, mtime_ns) can tell: the per-file cache makes the same promise.
    """
    import hashlib  # (not at import: a search walks without it)

    h = hashlib.blake2b(digest_size=20)
    h.update(_dumps([os.path.abspath(r) for r in roots]))
    for i in range(0, len(files), DIGEST_BATCH):  # (a batch at a time: a big tree's identities are never one text)
        batch = files[i : i + DIGEST_BATCH]
        h.update(_dumps([(e.abspath, e.root, e.dev, e.ino, e.size, e.mtime_ns, e.ctime_ns, e.maybe) for e in batch]))
    h.update(_dumps([(d.path, d.line, d.message) for d in diagnostics]))
    return h.digest()


def _dumps(value: object) -> bytes:
    """A deterministic serialisation for digests; names that are not UTF-8 take the slow path."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return b"\0" + repr(value).encode("ascii", "backslashreplace")
