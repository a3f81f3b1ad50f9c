"""The rows a scan writes to the cache, gathered for its light snapshot as they are written.

Each snapshot chunk is the JSON list of its rows (see :data:`musetui.core.cache.SNAPSHOT_ROWS`).
A row's text joins the light text a worker made as it is (see
:func:`musetui.core.stored.light_text`): it is not parsed and encoded again. The rows a batch
writes are kept a piece per chunk (in the connection's temporary table, not in memory) until
:meth:`musetui.core.cache.IndexCache.finish` joins each chunk's pieces and compresses them once.
"""

from __future__ import annotations

from musetui.core.cache_codec import Raw, kind_of, to_text

__all__ = ["Piece", "joined", "piece", "row_text"]


def row_text(p: str, dev: int, ino: int, size: int, mtime: int, has_state: bool, light: bytes | None, ct: int) -> bytes:
    """A snapshot row's text (see :func:`musetui.core.cache_codec.to_text`), its light form the text a worker made.

    Its rows are checked, like every other, when the snapshot is read.
    """
    return to_text([p, dev, ino, size, mtime, has_state, None if light is None else Raw(light), ct])


#: One batch's rows of one snapshot chunk, as held until the snapshot is written: their parse
#: byte, their paths (NUL-separated, as UTF-8 with surrogate escapes) and their texts (comma-separated).
Piece = tuple[bytes, bytes, bytes]


def piece(rows: list[tuple[str, bytes]]) -> Piece:
    """The :data:`Piece` of these (path, :func:`row_text`) rows."""
    texts = [t for _p, t in rows]
    paths = "\0".join([p for p, _t in rows]).encode("utf-8", "surrogateescape")
    return kind_of(texts), paths, b",".join([memoryview(t)[1:] for t in texts])


def joined(pieces: list[Piece]) -> tuple[bytes, list[str]]:
    """The text (see :func:`musetui.core.cache_codec.to_text`) of the list of the rows of ``pieces``, and their paths.

    A path met twice is read as its later row, as the files table keeps it.
    """
    kind = kind_of([k for k, _p, _t in pieces])
    paths = [p for _k, ps, _t in pieces for p in bytes(ps).decode("utf-8", "surrogateescape").split("\0")]
    return kind + b"[" + b",".join([t for _k, _p, t in pieces]) + b"]", paths
