"""A command output the cache stores whole (what a warm ``scan --json`` replays), kept compressed.

The output is compressed as it is written (:class:`Recorder`), and checked and replayed a
piece at a time (:func:`check_lines`, :func:`replay`): neither the command nor its replay
ever holds the whole text, which for a big tree is several times the size of the index.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import BinaryIO

import orjson

from musetui.core.cache_codec import MAX_EXPANSION, Invalid

__all__ = ["Recorder", "check_lines", "replay"]

#: Replayed and checked this many bytes of text at a time.
PIECE = 1 << 20


class Recorder:
    """Writes an output to ``out`` and compresses it on the way (the blob :meth:`blob` gives the cache)."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self._z = zlib.compressobj(3)
        self._parts: list[bytes] = []
        self._pending: list[bytes] = []
        self._pending_bytes = 0

    def write(self, data: bytes) -> None:
        """Write ``data`` (and keep it, compressed)."""
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= PIECE:
            self._drain()

    def _drain(self) -> None:
        text = b"".join(self._pending)
        self._pending, self._pending_bytes = [], 0
        self.out.write(text)
        self._parts.append(self._z.compress(text))

    def blob(self) -> bytes:
        """Everything written, compressed (as :func:`musetui.core.cache_codec.deflate` would)."""
        self._drain()
        self.out.flush()
        return b"".join([*self._parts, self._z.flush()])


def _pieces(blob: bytes) -> Iterator[bytes]:
    """The text of a compressed output, a piece at a time; :class:`Invalid` when it is not one."""
    d = zlib.decompressobj()
    budget = MAX_EXPANSION * len(blob) + 2**20
    data = blob
    try:
        while True:
            piece = d.decompress(data, PIECE)
            budget -= len(piece)
            if budget < 0:
                raise Invalid("blob expands too far")
            if piece:
                yield piece
            data = d.unconsumed_tail
            if not data:
                break
        rest = d.flush()
    except zlib.error as exc:
        raise Invalid(f"not zlib data: {exc}") from exc
    if rest:
        yield rest
    if not d.eof or d.unused_data:
        raise Invalid("blob is cut, or has bytes after its end")


def check_lines(blob: bytes) -> int:
    """The number of lines of a compressed output; :class:`Invalid` unless each is one JSON object.

    (JSON escapes every control character: a record that passes prints nothing raw.)
    """
    n = 0
    carry = b""
    for piece in _pieces(blob):
        lines = (carry + piece).split(b"\n")
        carry = lines.pop()
        for line in lines:
            try:
                ok = type(orjson.loads(line)) is dict
            except orjson.JSONDecodeError:
                ok = False
            if not ok:
                raise Invalid("a stored output line is not a record")
        n += len(lines)
    if carry:
        raise Invalid("a stored output does not end with a newline")
    return n


def replay(blob: bytes, out: BinaryIO) -> None:
    """Write the text of a compressed output (checked first with :func:`check_lines`) to ``out``."""
    for piece in _pieces(blob):
        out.write(piece)
    out.flush()
