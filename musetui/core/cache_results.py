"""A command output the cache stores whole (what a warm ``scan --json`` replays), kept compressed.

The output is compressed as it is written (:class:`Recorder`), and checked a piece at a time
(:func:`check`): the command never holds the whole text. A checked output of up to
:data:`HELD` bytes of text keeps its pieces, so its replay does not decompress it again; a
bigger one (a big tree's is several times the size of the index) is decompressed again,
a piece at a time, as it is written.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from musetui.core.cache_codec import MAX_EXPANSION, Invalid
from musetui.core.validate import is_object

__all__ = ["HELD", "Checked", "Recorder", "check"]

#: Replayed and checked this many bytes of text at a time.
PIECE = 1 << 20
#: A checked output keeps its text for the replay up to this many bytes (else decompresses it again).
HELD = 64 << 20


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


@dataclass(frozen=True, slots=True)
class Checked:
    """A compressed output whose every line is one JSON object (see :func:`check`)."""

    blob: bytes
    lines: int
    pieces: tuple[bytes, ...] | None  # its text, when it is at most HELD bytes (else None)

    def text(self) -> bytes:
        """The whole text."""
        return b"".join(self.pieces if self.pieces is not None else _pieces(self.blob))

    def replay(self, out: BinaryIO) -> None:
        """Write the text to ``out``."""
        for piece in self.pieces if self.pieces is not None else _pieces(self.blob):
            out.write(piece)
        out.flush()


def check(blob: bytes) -> Checked:
    """A compressed output, checked: :class:`Invalid` unless each of its lines is one JSON object.

    A line is a record as the scan reads one (:func:`musetui.core.validate.is_object`). JSON
    escapes every control character: a record that passes prints nothing raw.
    """
    n = 0
    carry = b""
    held: list[bytes] | None = []
    size = 0
    for piece in _pieces(blob):
        lines = (carry + piece).split(b"\n")
        carry = lines.pop()
        for line in lines:
            if not is_object(line):
                raise Invalid("a stored output line is not a record")
        n += len(lines)
        if held is not None:
            size += len(piece)
            if size <= HELD:
                held.append(piece)
            else:
                held = None
    if carry:
        raise Invalid("a stored output does not end with a newline")
    return Checked(blob, n, None if held is None else tuple(held))
