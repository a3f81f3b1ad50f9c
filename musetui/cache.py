"""The persistent index cache: one SQLite database per root, under the user's cache directory.

Each scanned file is keyed by its absolute path and identified by (device, inode, size,
mtime_ns). A file whose identity is unchanged is not read again. The database is in WAL
mode, so several musetui processes can read and write it; a database that is corrupt,
from another schema or from another engine version is rebuilt (with a notice), never
trusted blindly and never fatal. Nothing is ever written under a scanned root.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import pickle
import sqlite3
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from musetui import __version__
from musetui.config import cache_dir

#: The light snapshot is cut into this many blobs by a hash of the path, so that a change
#: rewrites only the blobs it touches.
SNAPSHOT_CHUNKS = 64

#: Seconds to wait for another musetui that is writing the same database.
LOCK_TIMEOUT_S = 10.0

#: Bump when the stored layout or the meaning of stored outcomes changes.
SCHEMA_VERSION = 8


def engine_stamp() -> str:
    """What cached verdicts depend on: schema, musetui version, and the model catalogue in use."""
    from musetui.config import config_dir

    parts = [str(SCHEMA_VERSION), __version__]
    builtin = Path(__file__).resolve().parent / "fingerprints" / "catalogue.toml"
    user = config_dir() / "catalogue.toml"
    for p in (builtin, user):
        try:
            st = p.stat()
            parts.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{p}:absent")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def db_path(root: str) -> Path:
    """The database file for one root (absolute path), inside the cache directory."""
    root_abs = os.path.abspath(root)
    slug = "".join(c if c.isalnum() else "-" for c in os.path.basename(root_abs) or "root")[:40]
    digest = hashlib.sha256(root_abs.encode()).hexdigest()[:16]
    return cache_dir() / f"index-{slug}-{digest}.sqlite3"


@dataclass(slots=True)
class CachedFile:
    """One file's row: its identity when scanned (its outcome is fetched with ``outcome_of``)."""

    path: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    has_state: bool = False  # a resume state is stored (fetched with IndexCache.state_of)
    light: Any = None  # marshal'd light summary + scan record (see index.light_blob), or it loaded

    def matches(self, dev: int, ino: int, size: int, mtime_ns: int) -> bool:
        """True when the file on disk is the one that was scanned."""
        return (self.dev, self.ino, self.size, self.mtime_ns) == (dev, ino, size, mtime_ns)


class IndexCache:
    """Read and update the cached outcomes of one root."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.path = db_path(self.root)
        self.notices: list[str] = []
        self.conn: sqlite3.Connection | None = None
        self._snapshot: dict[int, list[Any]] | None = None  # chunk -> light rows, as loaded
        self._open()

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.notices.append(f"cache disabled: cannot create {self.path.parent}: {exc.strerror or exc}")
            return
        if _inside(self.path, self.root):
            self.notices.append("cache disabled: the cache directory lies inside the scanned root")
            return
        for attempt in range(2):
            try:
                self.conn = self._connect()
                return
            except (sqlite3.DatabaseError, _Stale) as exc:
                self._close()
                if attempt == 0:
                    self.notices.append(f"cache rebuilt: {exc}")
                    self._remove()
                else:
                    self.notices.append(f"cache disabled: {exc}")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, "
                "size INTEGER, mtime_ns INTEGER, outcome BLOB NOT NULL, state BLOB, light BLOB)"
            )
            conn.execute("CREATE TABLE IF NOT EXISTS snapshot (chunk INTEGER PRIMARY KEY, blob BLOB NOT NULL)")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, digest BLOB NOT NULL, "
                "output BLOB NOT NULL, diagnostics BLOB NOT NULL)"
            )
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            stamp = engine_stamp()
            if not rows:
                conn.executemany(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [("schema", str(SCHEMA_VERSION)), ("engine", stamp), ("root", self.root)],
                )
            elif rows.get("schema") != str(SCHEMA_VERSION):
                raise _Stale(f"schema {rows.get('schema')} is not {SCHEMA_VERSION}")
            elif rows.get("engine") != stamp:
                raise _Stale("made by another musetui version or model catalogue")
            elif rows.get("root") != self.root:
                raise _Stale("made for another root")
            conn.execute("SELECT count(*) FROM files WHERE rowid = 1").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def _close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()
        self.conn = None

    def _remove(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                Path(str(self.path) + suffix).unlink()

    @property
    def enabled(self) -> bool:
        """False when the cache could not be opened (the scan goes on without it)."""
        return self.conn is not None

    def load(self, light: bool = False) -> dict[str, CachedFile]:
        """Every cached file's identity, by absolute path; with ``light``, its light summary too.

        Full outcomes are not read here: :meth:`outcome_of` fetches each as the walk reaches it.

        The light form comes from the snapshot, :data:`SNAPSHOT_CHUNKS` blobs (one read and
        ``marshal.loads`` each) rather than one row per file, which is what makes a warm
        reopen fast.
        """
        if self.conn is None:
            return {}
        try:
            if light:
                chunks = self.conn.execute("SELECT chunk, blob FROM snapshot").fetchall()
                if len(chunks) == SNAPSHOT_CHUNKS:
                    with contextlib.suppress(ValueError, EOFError, TypeError):
                        self._snapshot = {c: marshal.loads(b) for c, b in chunks}
                        return {
                            r[0]: CachedFile(r[0], r[1], r[2], r[3], r[4], r[5], r[6])
                            for part in self._snapshot.values()
                            for r in part
                        }  # r[6] is the light tuple itself (loaded with its chunk)
            blob = "light" if light else "NULL"  # full outcomes are fetched one by one (outcome_of)
            rows = self.conn.execute(
                f"SELECT path, dev, ino, size, mtime_ns, {blob}, state IS NOT NULL FROM files"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            self.notices.append(f"cache unreadable, scanning without it: {exc}")
            self._close()
            return {}
        if light:
            return {r[0]: CachedFile(r[0], r[1], r[2], r[3], r[4], bool(r[6]), r[5]) for r in rows}
        return {r[0]: CachedFile(r[0], r[1], r[2], r[3], r[4], bool(r[6])) for r in rows}

    def store(
        self, rows: Iterable[tuple[str, int, int, int, int, bytes, bytes | None, bytes]], keep: set[str] | None
    ) -> None:
        """Write pickled outcomes (and resume states); with ``keep``, drop rows of files no longer present."""
        if self.conn is None:
            return
        data = list(rows)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            changed = bool(data)
            if data:
                self.conn.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)", data)
            gone: list[tuple[str]] = []
            if keep is not None:
                gone = [(p,) for (p,) in self.conn.execute("SELECT path FROM files").fetchall() if p not in keep]
                if gone:
                    self.conn.executemany("DELETE FROM files WHERE path = ?", gone)
                    changed = True
            if self._snapshot is not None and keep is not None:
                # Patch the chunks this change touches, from the snapshot read at load time.
                touched: dict[int, dict[str, Any]] = {}
                for p, *_ in gone:
                    touched.setdefault(snapshot_chunk(p), {})
                for p, dev, ino, size, mtime, _o, sblob, lblob in data:
                    touched.setdefault(snapshot_chunk(p), {})[p] = (p, dev, ino, size, mtime, sblob is not None, _light(lblob))
                for c, updates in touched.items():
                    part = {r[0]: r for r in self._snapshot.get(c, []) if r[0] in keep}
                    part.update(updates)
                    self._snapshot[c] = list(part.values())
                    self.conn.execute("INSERT OR REPLACE INTO snapshot VALUES (?, ?)", (c, marshal.dumps(self._snapshot[c])))
            elif changed or self.conn.execute("SELECT count(*) FROM snapshot").fetchone()[0] != SNAPSHOT_CHUNKS:
                parts: dict[int, list[Any]] = {c: [] for c in range(SNAPSHOT_CHUNKS)}
                for r in self.conn.execute("SELECT path, dev, ino, size, mtime_ns, state IS NOT NULL, light FROM files"):
                    parts[snapshot_chunk(r[0])].append((r[0], r[1], r[2], r[3], r[4], bool(r[5]), _light(r[6])))
                self.conn.executemany(
                    "INSERT OR REPLACE INTO snapshot VALUES (?, ?)", [(c, marshal.dumps(v)) for c, v in parts.items()]
                )
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            self.notices.append(f"cache not updated (another musetui is writing it): {exc}")
        except sqlite3.DatabaseError as exc:
            self.notices.append(f"cache not updated: {exc}")

    def outcome_of(self, path: str) -> bytes | None:
        """The stored (pickled) outcome of one file, fetched when the walk reaches it."""
        return self._blob("outcome", path)

    def state_of(self, path: str) -> bytes | None:
        """The stored resume state of one file (fetched only when a file has grown)."""
        return self._blob("state", path)

    def _blob(self, column: Literal["outcome", "state"], path: str) -> bytes | None:
        if self.conn is None:
            return None
        try:
            row = self.conn.execute(f"SELECT {column} FROM files WHERE path = ?", (path,)).fetchone()
        except sqlite3.DatabaseError:
            return None
        return row[0] if row else None

    def result(self, key: str, digest: bytes) -> tuple[bytes, list[tuple[str, int, str]]] | None:
        """A finished command output stored for ``key``, if it was made from the tree ``digest`` names.

        ``digest`` covers every file's identity and the walk's diagnostics (see
        :func:`musetui.walk.tree_digest`): any change anywhere under the roots misses.
        """
        if self.conn is None:
            return None
        try:
            row = self.conn.execute("SELECT digest, output, diagnostics FROM results WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError:
            return None
        if row is None or bytes(row[0]) != digest:
            return None
        try:
            diags = [(str(p), int(ln), str(m)) for p, ln, m in marshal.loads(row[2])]
        except (ValueError, EOFError, TypeError):
            return None
        return bytes(row[1]), diags

    def put_result(self, key: str, digest: bytes, output: bytes, diagnostics: list[tuple[str, int, str]]) -> None:
        """Store a finished command output for ``key`` (one per key; replaces the previous one)."""
        if self.conn is None:
            return
        try:
            self.conn.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?)", (key, digest, output, marshal.dumps(diagnostics))
            )
        except sqlite3.DatabaseError as exc:
            self.notices.append(f"cache not updated: {exc}")

    def close(self) -> None:
        """Close the database."""
        self._close()


def snapshot_chunk(path: str) -> int:
    """The snapshot blob that holds ``path`` (stable across processes, unlike ``hash``)."""
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) % SNAPSHOT_CHUNKS


def _light(blob: bytes | None) -> Any:
    """A stored light blob, loaded (so the snapshot nests tuples, not bytes to load again)."""
    if blob is None:
        return None
    try:
        return marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None


class _Stale(Exception):
    """The database exists but cannot be used as it is."""


def unpickle_state(blob: bytes | None) -> Any:
    """A cached scan state, or None."""
    if blob is None:
        return None
    return unpickle_outcome(blob)


def unpickle_outcome(blob: bytes) -> Any:
    """A cached outcome, or None when the blob is unreadable (the file is rescanned)."""
    try:
        return pickle.loads(blob)
    except Exception:  # a damaged row must never be fatal
        return None


def _inside(path: Path, root: str) -> bool:
    try:
        return os.path.commonpath([str(path.resolve()), os.path.realpath(root)]) == os.path.realpath(root)
    except ValueError:
        return False


def cache_files() -> list[Path]:
    """The database files in the cache directory."""
    d = cache_dir()
    return sorted(p for p in d.glob("index-*.sqlite3*")) if d.is_dir() else []
