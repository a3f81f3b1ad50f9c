"""The rows a scan writes to the cache, gathered for its light snapshot as they are written.

Each snapshot chunk is the JSON list of its rows (see :data:`musetui.core.cache.SNAPSHOT_ROWS`).
A row's text joins the light text a worker made as it is (see
:func:`musetui.core.stored.light_text`): it is not parsed and encoded again. The rows of a
chunk are compressed as they come, so a cold scan of a big tree holds only their compressed
form until :meth:`musetui.core.cache.IndexCache.finish` stores the snapshot.
"""

from __future__ import annotations

import zlib

from musetui.core.cache_codec import DEFLATE_LEVEL, Raw, kind_of, to_text

__all__ = ["ChunkStream", "row_text"]


def row_text(p: str, dev: int, ino: int, size: int, mtime: int, has_state: bool, light: bytes | None, ct: int) -> bytes:
    """A snapshot row's text (see :func:`musetui.core.cache_codec.to_text`), its light form the text a worker made.

    Its rows are checked, like every other, when the snapshot is read.
    """
    return to_text([p, dev, ino, size, mtime, has_state, None if light is None else Raw(light), ct])


#: A stream's rows are compressed a batch of about this many bytes at a time (64 streams fed a
#: row each in turn compress ten times slower than one fed the same bytes in batches).
BATCH_BYTES = 64 * 1024


class ChunkStream:
    """The rows written to one snapshot chunk in this run, compressed as they come (their paths in :attr:`paths`).

    :meth:`blob` is the blob :func:`musetui.core.cache_codec.pack_list` makes of their texts;
    rows can still be added after it (a path written twice is read as its later row, as the
    files table keeps it).
    """

    def __init__(self) -> None:
        self._z = zlib.compressobj(DEFLATE_LEVEL)
        self._out: list[bytes] = []
        self._batch: list[bytes] = []  # (the texts not compressed yet, each after its separator)
        self._batch_bytes = 0
        self._kind = b"o"
        self.paths: list[str] = []

    def add(self, path: str, text: bytes) -> None:
        """Add one row's text (:func:`row_text`)."""
        if text[:1] != self._kind:
            self._kind = kind_of([self._kind, text])
        self._batch.append((b"," if self.paths else b"[") + text[1:])
        self._batch_bytes += len(text)
        self.paths.append(path)
        if self._batch_bytes >= BATCH_BYTES:
            self._out.append(self._z.compress(b"".join(self._batch)))
            self._batch, self._batch_bytes = [], 0

    def blob(self) -> bytes:
        """The stored blob of the list of the rows added so far."""
        end = self._z.copy()
        last = end.compress(b"".join([*self._batch, b"]" if self.paths else b"[]"]))
        return self._kind + b"".join([*self._out, last, end.flush()])
