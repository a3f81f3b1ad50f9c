"""The persistent index cache: one SQLite database per root, under the user's cache directory.

Each scanned file is keyed by its absolute path and identified by (device, inode, size,
mtime_ns). A file whose identity is unchanged is not read again. The database is in WAL
mode, so several musetui processes can read and write it; a database that is corrupt,
from another schema or from another engine version is rebuilt (with a notice), never
trusted blindly and never fatal. Nothing is ever written under a scanned root.

Every blob is plain data (:mod:`musetui.core.cache_codec`), checked field by field when read:
nothing stored is ever unpickled, unmarshalled or evaluated. The database is made with
mode 0600 in a directory of mode 0700, and a symlinked database, journal or cache
directory is refused (the scan then goes on without the cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from musetui import __version__
from musetui.core.cache_codec import Invalid, codec, deflate, dump, from_text, load, seal, unseal
from musetui.core.cache_files import Refused, create_private, inside, no_links, private_dir
from musetui.core.cache_results import Checked, check
from musetui.core.cache_snapshot import joined, piece, row_text
from musetui.core.config import cache_dir

#: The light snapshot is cut into this many blobs by a hash of the path, so that a change
#: rewrites only the blobs it touches.
SNAPSHOT_CHUNKS = 64

#: Seconds to wait for another musetui that is writing the same database.
LOCK_TIMEOUT_S = 10.0

#: Bump when the stored layout or the meaning of stored outcomes changes.
SCHEMA_VERSION = 19  # 19: a Muse resume state holds the usage its probe gleaned, summed at the finish; 18: each file row names its snapshot chunk (stored in batches as the scan goes), light forms only in the snapshot; 17: time-mismatch over every record (and the line-time clock of a resume state); 16: format-drift diagnostics and watch state, session usage; 15: segments; 14: plain data; reasons; unread, UTF-16/BOM, lone-CR and shrink diagnostics; read budgets

#: A light summary: what the tree, fleet outliers and scan records need (no evidence objects),
#: in this order (see :func:`musetui.core.stored.light_from`); its scan record is JSON text.
LIGHT_SUMMARY = tuple[
    str, str, str, str, str, str | None, str | None, str | None, str | None, int, int, float | None, float | None,
    int, int, int, int, int, str | None, dict[str, int],
    str, str | None, float, list[str], str, str, str | None, str | None, dict[str, int | None] | None,
]  # fmt: skip
#: A light outcome: its light summary (None when the file holds no session) and its diagnostics.
LIGHT = tuple[LIGHT_SUMMARY | None, list[tuple[str, int, str]]]
#: One snapshot chunk: rows of path, device, inode, size, mtime_ns, has a state, light outcome, ctime_ns.
SNAPSHOT_ROW = tuple[str, int, int, int, int, bool, LIGHT | None, int]
SNAPSHOT_ROWS = list[SNAPSHOT_ROW]
#: A row to store: path, device, inode, size, mtime_ns, outcome, resume state, light text[, ctime_ns]
#: (the light outcome's :func:`~musetui.core.cache_codec.to_text`, see :func:`musetui.core.stored.light_text`).
Row = (
    tuple[str, int, int, int, int, bytes, bytes | None, bytes]
    | tuple[str, int, int, int, int, bytes, bytes | None, bytes, int]
)
#: Diagnostics stored with a command output: (path, line, message).
DIAGNOSTICS = list[tuple[str, int, str]]


def engine_stamp() -> str:
    """What cached verdicts depend on: schema, musetui version, and the model catalogue in use."""
    from musetui.core.config import config_dir

    parts = [str(SCHEMA_VERSION), __version__]
    builtin = Path(__file__).resolve().parent / "fingerprints" / "catalogue.toml"
    user = config_dir() / "catalogue.toml"
    for p in (builtin, user):
        try:
            st = p.stat()
            parts.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{p}:absent")
    return hashlib.sha256(os.fsencode("|".join(parts))).hexdigest()[:16]


def db_path(root: str) -> Path:
    """The database file for one root (absolute path), inside the cache directory."""
    root_abs = os.path.abspath(root)
    slug = "".join(c if c.isalnum() else "-" for c in os.path.basename(root_abs) or "root")[:40]
    digest = hashlib.sha256(os.fsencode(root_abs)).hexdigest()[:16]
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
    light: Any = None  # its checked light outcome (see LIGHT), when loaded with ``light``
    ctime_ns: int = 0

    def matches(self, dev: int, ino: int, size: int, mtime_ns: int, ctime_ns: int = 0) -> bool:
        """True when the file on disk is the one that was scanned.

        The change time is part of the identity: a file whose permissions changed (made
        unreadable, say) is read again rather than served from the cache.
        """
        return (self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns) == (dev, ino, size, mtime_ns, ctime_ns)


class IndexCache:
    """Read and update the cached outcomes of one root."""

    def __init__(self, root: str, *, readonly: bool = False, roots: Iterable[str] = ()) -> None:
        self.root = os.path.abspath(root)
        self.path = db_path(self.root)
        #: Every root of the scan: the cache must lie inside none of them.
        self.roots = [self.root, *(os.path.abspath(r) for r in roots)]
        #: Only read an existing, current database; anything else means no cache (never created or repaired).
        self.readonly = readonly
        self.notices: list[str] = []
        self.conn: sqlite3.Connection | None = None
        self._snapshot_bad = False  # a snapshot chunk failed its check: rewrite them all
        #: The snapshot chunks whose rows were written (or deleted) since the last snapshot write.
        self._dirty: set[int] = set()
        #: How many rows :meth:`load` read (see :meth:`finish`).
        self.loaded_rows = 0
        self._corrupt_noted = False
        self._open()

    def _note_corrupt(self) -> None:
        """Say once that this root's cache was corrupt (what was damaged is rebuilt)."""
        if not self._corrupt_noted:
            self._corrupt_noted = True
            self.notices.append(f"cache for {self.root} was corrupt: rebuilt")

    def _disable(self, exc: BaseException | str) -> None:
        """Stop using the cache for this run (the scan goes on without it), with one notice."""
        self._close()
        why = exc if isinstance(exc, str) else (getattr(exc, "strerror", None) or str(exc))
        note = f"cache for {self.root} unusable ({why}): scanning without it"
        if note not in self.notices:
            self.notices.append(note)

    def _open(self) -> None:
        if any(inside(self.path, r) for r in self.roots):  # before anything is created
            self.notices.append("cache disabled: the cache directory lies inside a scanned root")
            return
        if self.readonly:
            self._open_readonly()
            return
        try:
            private_dir(self.path.parent)
        except Refused as exc:
            self._disable(str(exc))
            return
        except OSError as exc:
            self._disable(f"cannot create {self.path.parent}: {exc.strerror or exc}")
            return
        for attempt in range(2):
            try:
                self.conn = self._connect()
                return
            except Refused as exc:
                self._disable(str(exc))
                return
            except _Stale as exc:
                self._close()
                self.notices.append(f"cache for {self.root} rebuilt: {exc}")
            except (sqlite3.OperationalError, OSError) as exc:
                self._disable(exc)
                return
            except (
                sqlite3.DatabaseError,
                UnicodeDecodeError,
            ):  # (a damaged text comes back as bytes that are not UTF-8)
                self._close()
                self._note_corrupt()
            if attempt == 0 and not self._remove():
                self._disable("cannot remove the damaged database")
                return
        self._disable("cannot rebuild the database")

    def _open_readonly(self) -> None:
        try:
            if stat.S_ISLNK(os.lstat(self.path.parent).st_mode):
                raise Refused(f"{self.path.parent} is a symlink: not followed")
            no_links(self.path)
        except Refused as exc:
            self._disable(str(exc))
            return
        except OSError:
            return
        if not self.path.is_file():
            return
        try:
            conn = sqlite3.connect(
                f"{self.path.as_uri()}?mode=ro", uri=True, timeout=LOCK_TIMEOUT_S, isolation_level=None
            )
        except sqlite3.Error:
            return
        try:
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except (sqlite3.Error, UnicodeDecodeError):
            rows = {}
        if (rows.get("schema"), rows.get("engine"), rows.get("root")) == (
            str(SCHEMA_VERSION),
            engine_stamp(),
            _key(self.root),
        ):
            self.conn = conn
        else:
            conn.close()

    def _connect(self) -> sqlite3.Connection:
        create_private(self.path)
        conn = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute("PRAGMA page_size=1024")  # (a new database only) small pages waste less under each blob
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, "
                "size INTEGER, mtime_ns INTEGER, outcome BLOB NOT NULL, state BLOB, ctime_ns INTEGER, "
                "chunk INTEGER NOT NULL)"
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
                    [("schema", str(SCHEMA_VERSION)), ("engine", stamp), ("root", _key(self.root))],
                )
            elif rows.get("schema") != str(SCHEMA_VERSION):
                raise _Stale(f"schema {rows.get('schema')} is not {SCHEMA_VERSION}")
            elif rows.get("engine") != stamp:
                raise _Stale("made by another musetui version or model catalogue")
            elif rows.get("root") != _key(self.root):
                raise _Stale("made for another root")
            conn.execute("CREATE INDEX IF NOT EXISTS files_chunk ON files (chunk)")  # (once the schema is known)
            # The snapshot rows written, until :meth:`finish` puts them in the snapshot (a piece per chunk and
            # batch, see :mod:`musetui.core.cache_snapshot`): this connection's own table, in SQLite's temporary file.
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS pending (chunk INTEGER, kind BLOB, paths BLOB, rows BLOB)")
            conn.execute("CREATE INDEX IF NOT EXISTS temp.pending_chunk ON pending (chunk)")
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

    def _remove(self) -> bool:
        """Delete the database files; False when that is not possible (a read-only directory)."""
        ok = True
        for suffix in ("", "-wal", "-shm"):
            try:
                Path(str(self.path) + suffix).unlink()
            except FileNotFoundError:
                pass
            except OSError:
                ok = False
        return ok

    def _damaged(self, exc: sqlite3.Error | UnicodeDecodeError) -> None:
        """An error while using the open database: rebuild it when it is corrupt, else stop using it."""
        if self.readonly:
            self._close()
            return
        if type(exc) not in (sqlite3.DatabaseError, UnicodeDecodeError):  # locked, read-only, disk full, I/O error
            self._disable(exc)
            return
        self._close()
        self._note_corrupt()
        self._dirty.clear()
        if not self._remove():
            self._disable("cannot remove the damaged database")
            return
        try:
            self.conn = self._connect()
        except (sqlite3.Error, OSError, _Stale, Refused) as exc2:
            self._disable(exc2)

    @property
    def enabled(self) -> bool:
        """False when the cache could not be opened (the scan goes on without it)."""
        return self.conn is not None

    def load(self, light: bool = False, make: Callable[[Any], Any] | None = None) -> dict[str, CachedFile]:
        """Every cached file's identity, by absolute path; with ``light``, its light summary too.

        ``make`` turns each checked light outcome into what the row keeps as its ``light``
        (the caller's own form, made as each chunk is read: the parsed chunks are not kept).

        Full outcomes are not read here: :meth:`outcome_of` fetches each as the walk reaches it.

        The light form comes from the snapshot, :data:`SNAPSHOT_CHUNKS` blobs (one read and
        one JSON parse each) rather than one row per file, which is what makes a warm reopen
        fast. Every blob's checksum and shape are checked: a damaged one is not used. Each
        chunk's rows are made into :class:`CachedFile` rows as it is read (the parsed chunk
        is not kept).
        """
        if self.conn is None:
            return {}
        out: dict[str, CachedFile] = {}
        try:
            if light:
                if self.conn.execute("SELECT count(*) FROM snapshot").fetchone()[0] == SNAPSHOT_CHUNKS:
                    for c, b in self.conn.execute("SELECT chunk, blob FROM snapshot"):
                        raw = self._unseal(b)
                        if raw is None or type(c) is not int:
                            break
                        try:
                            part = load(SNAPSHOT_ROWS, raw)
                        except Invalid:
                            self._note_corrupt()
                            break
                        del raw
                        for r in part:  # r[6] is the checked light tuple itself (loaded with its chunk)
                            lt = r[6] if make is None or r[6] is None else make(r[6])
                            out[r[0]] = CachedFile(r[0], r[1], r[2], r[3], r[4], r[5], lt, r[7])
                    else:
                        self.loaded_rows = len(out)
                        return out
                out.clear()
                self._snapshot_bad = True
            # (light forms are in the snapshot only: without it, a light reader reads the files again)
            for r in self.conn.execute("SELECT path, dev, ino, size, mtime_ns, state IS NOT NULL, ctime_ns FROM files"):
                p = _path_of(r[0])
                out[p] = CachedFile(p, r[1], r[2], r[3], r[4], bool(r[5]), None, r[6] or 0)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            self._damaged(exc)
            return {}
        self.loaded_rows = len(out)
        return out

    def _unseal(self, blob: bytes | None) -> bytes | None:
        """The payload of a sealed blob, or None (noting the corruption) when its checksum fails."""
        if blob is None:
            return None
        payload = unseal(blob)
        if payload is None:
            self._note_corrupt()
        return payload

    def store(self, rows: Iterable[Row], keep: set[str] | None) -> None:
        """Write stored outcomes (and resume states), then the snapshot (see :meth:`put` and :meth:`finish`)."""
        self.put(rows)
        self.finish(keep)

    @property
    def usable(self) -> bool:
        """Whether this run can store in the cache (False once it was refused, disabled or closed)."""
        return self.conn is not None

    @property
    def changed(self) -> bool:
        """Whether rows were written since the snapshot was (:meth:`finish` has chunks to rewrite)."""
        return bool(self._dirty)

    def put(self, rows: Iterable[Row]) -> None:
        """Write a batch of stored outcomes (and resume states), in a transaction of its own.

        A row is ``(path, dev, ino, size, mtime_ns, outcome, state, light[, ctime_ns])``;
        blobs are sealed (checksummed) here. The snapshot is written by :meth:`finish`: a
        scan writes its rows as it goes (a batch at a time, never holding them all).
        """
        data = [r if len(r) == 9 else (*r, 0) for r in rows]
        if data:
            self._write(lambda: self._put(data))

    def finish(self, keep: set[str] | None) -> None:
        """With ``keep``, drop rows of files no longer present; then rewrite the snapshot chunks that changed.

        Every chunk is rewritten (from the rows) when the snapshot is incomplete or was found
        damaged; otherwise only the chunks whose rows were written or deleted.
        """
        self._write(lambda: self._finish(keep))

    def _write(self, step: Callable[[], None]) -> None:
        """Run ``step`` in a write transaction; a lock or a read-only database is a notice, a corrupt one is rebuilt."""
        if self.conn is None:
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            step()
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            self._rollback()
            note = f"cache not updated (another musetui is writing it, or it is read-only): {exc}"
            if note not in self.notices:
                self.notices.append(note)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            self._rollback()
            self._damaged(exc)
            if self.conn is not None:  # rebuilt empty: store this batch in it (and the next ones)
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("BEGIN IMMEDIATE")
                    step()
                    self.conn.execute("COMMIT")

    def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            if self.conn is not None:
                self.conn.execute("ROLLBACK")

    def _put(self, data: list[tuple[str, int, int, int, int, bytes, bytes | None, bytes, int]]) -> None:
        assert self.conn is not None
        rows = []
        pending: dict[int, list[tuple[str, bytes]]] = {}  # (this batch's snapshot rows, a piece per chunk)
        for p, dev, ino, size, mtime, o, sb, lb, ct in data:
            c = snapshot_chunk(p)
            self._dirty.add(c)
            rows.append((_key(p), dev, ino, size, mtime, seal(o), seal(sb) if sb is not None else None, ct, c))
            pending.setdefault(c, []).append((p, row_text(p, dev, ino, size, mtime, sb is not None, lb, ct)))
        self.conn.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self.conn.executemany(
            "INSERT INTO temp.pending VALUES (?, ?, ?, ?)", [(c, *piece(r)) for c, r in pending.items()]
        )

    def _finish(self, keep: set[str] | None) -> None:
        assert self.conn is not None
        if keep is not None:
            keys = {_key(p) for p in keep}
            gone = [(p, c) for p, c in self.conn.execute("SELECT path, chunk FROM files") if p not in keys]
            if gone:
                self.conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p, _c in gone])
                self._dirty.update(c for _p, c in gone)
        whole = (
            self._snapshot_bad or self.conn.execute("SELECT count(*) FROM snapshot").fetchone()[0] != SNAPSHOT_CHUNKS
        )
        for c in range(SNAPSHOT_CHUNKS) if whole else sorted(self._dirty):
            self.conn.execute("INSERT OR REPLACE INTO snapshot VALUES (?, ?)", (c, seal(self._chunk_blob(c, keep))))
        self.conn.execute("DELETE FROM temp.pending")
        self._snapshot_bad = False
        self._dirty.clear()

    def _chunk_blob(self, c: int, keep: set[str] | None) -> bytes:
        """Snapshot chunk ``c``: its rows as stored, less the files gone, with the rows written since.

        When it had none, those are joined as they were written (not parsed and encoded again).
        """
        assert self.conn is not None
        old = [r for r in self._chunk_rows(c) if keep is None or r[0] in keep]
        pieces = self.conn.execute("SELECT * FROM temp.pending WHERE chunk = ? ORDER BY rowid", (c,)).fetchall()
        if not pieces:
            return dump(SNAPSHOT_ROWS, old)
        text, paths = joined([(k, p, t) for _c, k, p, t in pieces])
        del pieces
        if not old and (keep is None or keep.issuperset(paths)):
            return text[:1] + deflate(memoryview(text)[1:])
        part = {r[0]: r for r in old}
        part.update((r[0], r) for r in codec(SNAPSHOT_ROWS)[1](from_text(text)) if keep is None or r[0] in keep)
        return dump(SNAPSHOT_ROWS, list(part.values()))

    def _chunk_rows(self, c: int) -> list[Any]:
        """The rows of snapshot chunk ``c`` as stored (none when it is missing or damaged: its files are read again)."""
        assert self.conn is not None
        row = self.conn.execute("SELECT blob FROM snapshot WHERE chunk = ?", (c,)).fetchone()
        raw = unseal(row[0]) if row is not None else None
        try:
            return list(load(SNAPSHOT_ROWS, raw)) if raw is not None else []
        except Invalid:
            return []

    def row_of(self, path: str) -> CachedFile | None:
        """One file's stored identity (no blob), for a reader that needs a few files, not all."""
        if self.conn is None:
            return None
        try:
            r = self.conn.execute(
                "SELECT path, dev, ino, size, mtime_ns, state IS NOT NULL, ctime_ns FROM files WHERE path = ?",
                (_key(path),),
            ).fetchone()
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            self._damaged(exc)
            return None
        return CachedFile(path, r[1], r[2], r[3], r[4], bool(r[5]), None, r[6] or 0) if r else None

    def outcome_of(self, path: str) -> bytes | None:
        """The stored outcome blob of one file, fetched when the walk reaches it (None if damaged)."""
        return self._blob("outcome", path)

    def state_of(self, path: str) -> bytes | None:
        """The stored resume state of one file (fetched only when a file has grown; None if damaged)."""
        return self._blob("state", path)

    def _blob(self, column: Literal["outcome", "state"], path: str) -> bytes | None:
        if self.conn is None:
            return None
        try:
            row = self.conn.execute(f"SELECT {column} FROM files WHERE path = ?", (_key(path),)).fetchone()
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            self._damaged(exc)
            return None
        return self._unseal(row[0]) if row else None

    def result(self, key: str, digest: bytes) -> tuple[bytes, list[tuple[str, int, str]]] | None:
        """A finished command output stored for ``key``, if it was made from the tree ``digest`` names (see :meth:`stored_output`)."""
        got = self.stored_output(key, digest)
        return None if got is None else (got[0].text(), got[1])

    def stored_output(self, key: str, digest: bytes) -> tuple[Checked, list[tuple[str, int, str]]] | None:
        """A finished command output stored for ``key`` (checked), if made from the tree ``digest`` names.

        ``digest`` covers every file's identity and the walk's diagnostics (see
        :func:`musetui.core.walk.tree_digest`): any change anywhere under the roots misses, and
        so does an output whose checksum fails or whose lines are not all JSON records. The
        text is checked a piece at a time (see :mod:`musetui.core.cache_results`), never whole.
        """
        if self.conn is None:
            return None
        try:
            row = self.conn.execute(
                "SELECT digest, output, diagnostics FROM results WHERE key = ?", (_key(key),)
            ).fetchone()
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            self._damaged(exc)
            return None
        if row is None or bytes(row[0]) != digest:
            return None
        output = self._unseal(row[1])
        diag_blob = self._unseal(row[2])
        del row
        if output is None or diag_blob is None:
            return None
        try:
            return check(output), load(DIAGNOSTICS, diag_blob)
        except Invalid:
            self._note_corrupt()
            return None

    def put_result(self, key: str, digest: bytes, output: bytes, diagnostics: list[tuple[str, int, str]]) -> None:
        """Store a finished command output for ``key`` (one per key; replaces the previous one)."""
        self.put_stored_output(key, digest, deflate(output), diagnostics)

    def put_stored_output(
        self, key: str, digest: bytes, compressed: bytes, diagnostics: list[tuple[str, int, str]]
    ) -> None:
        """Store a finished command output, already compressed (see :class:`musetui.core.cache_results.Recorder`)."""
        if self.conn is None:
            return
        try:
            self.conn.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?)",
                (_key(key), digest, seal(compressed), seal(dump(DIAGNOSTICS, diagnostics))),
            )
        except sqlite3.Error as exc:
            self.notices.append(f"cache not updated: {exc}")

    def close(self) -> None:
        """Close the database."""
        self._close()


def _key(path: str) -> str:
    """A path as a database key: itself, or (a name that is not UTF-8) NUL + the hex of its bytes.

    No file name contains NUL, so the two forms never collide.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "\0" + path.encode("utf-8", "surrogateescape").hex()
    return path


def _path_of(key: str) -> str:
    """Undo :func:`_key`."""
    if key.startswith("\0"):
        return bytes.fromhex(key[1:]).decode("utf-8", "surrogateescape")
    return key


def snapshot_chunk(path: str) -> int:
    """The snapshot blob that holds ``path`` (stable across processes, unlike ``hash``)."""
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) % SNAPSHOT_CHUNKS


class _Stale(Exception):
    """The database exists but cannot be used as it is."""
