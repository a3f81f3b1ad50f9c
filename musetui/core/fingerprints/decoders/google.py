"""Google decoders: Gemini thought signatures and responseIds (§7)."""

from __future__ import annotations

import base64
import binascii
import re

from musetui.core.fingerprints.decoders._common import (
    _HEAD_CHARS,
    _b64_prefix,
    _in_window_s,
    _iso_s,
    _varint,
    _walk_fields,
)
from musetui.core.fingerprints.types import Decoded


def _gemini_frame(data: bytes) -> tuple[int | None, int, int] | None:
    """Check ``[12 len] 0a len 01`` at the start of ``data``.

    Returns (outer length or None, inner length, declared total bytes) or None.
    """
    pos = 0
    outer_len: int | None = None
    if data[:1] == b"\x12":
        o = _varint(data, 1)
        if o is None:
            return None
        outer_len, pos = o
    if data[pos : pos + 1] != b"\x0a":
        return None
    il = _varint(data, pos + 1)
    if il is None:
        return None
    inner_len, istart = il
    if inner_len < 8 or data[istart : istart + 1] != b"\x01":
        return None
    inner_end = istart + inner_len
    if outer_len is None:
        return None, inner_len, inner_end
    outer_end = pos + outer_len
    if inner_end > outer_end:
        return None
    return outer_len, inner_len, outer_end


def decode_gemini_thought_signature(s: str) -> Decoded | None:
    """Decode a Gemini ``thoughtSignature``: ``[12 len] 0a len 01 …`` in base64 (§7).

    Shortened signatures (the length prefix claims more bytes than present) decode from their
    leading bytes and carry problem ``truncated``. Anthropic headers start ``08``, never ``01``.
    """
    if len(s) < 16 or (s[0] != "E" and s[0] != "C"):
        return None
    url = "-" in s[:_HEAD_CHARS] or "_" in s[:_HEAD_CHARS]
    head, _ = _b64_prefix(s[:_HEAD_CHARS], url=url)
    if len(head) < 8 or _gemini_frame(head) is None:
        return None
    data, clean = _b64_prefix(s, url=url)
    frame = _gemini_frame(data)
    if frame is None:
        return None
    outer_len, inner_len, declared = frame
    n = len(data)
    if declared < n:
        # trailing bytes must at least parse as protobuf fields
        _rest, complete = _walk_fields(data, declared, n)
        if not complete:
            return None
    truncated = declared > n or not clean
    fields: list[tuple[str, str]] = []
    if outer_len is not None:
        fields.append(("outer length", str(outer_len)))
    fields.append(("inner length", str(inner_len)))
    fields.append(("inner payload", "starts 0x01"))
    fields.append(("total bytes", str(n)))
    if truncated:
        fields.append(("declared bytes", str(declared)))
    meaning = "Gemini thoughtSignature (protobuf, inner payload starts 0x01): Google Gemini"
    if truncated:
        meaning += "; shortened, leading bytes only"
    return Decoded(
        detector="gemini-signature",
        value=s,
        provider="google",
        host=None,
        strength="strong",
        tag="verified",
        fields=tuple(fields),
        meaning=meaning,
        problems=("truncated",) if truncated else (),
        shape="gemini-signature",
    )


_RESPONSE_ID_RE = re.compile(r"[A-Za-z0-9_\-]{23}")


def decode_gemini_response_id(s: str) -> Decoded | None:
    """Decode a Gemini ``responseId``: 17 bytes whose first 4 are little-endian unix seconds (§7)."""
    if len(s) != 23 or _RESPONSE_ID_RE.fullmatch(s) is None:
        return None
    try:
        raw = base64.urlsafe_b64decode(s + "=")
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 17:
        return None
    ts = int.from_bytes(raw[0:4], "little")
    if not _in_window_s(ts):
        return None
    return Decoded(
        detector="gemini-response-id",
        value=s,
        provider="google",
        host=None,
        strength="medium",
        tag="guess",
        time=float(ts),
        fields=(("minted", _iso_s(ts)), ("bytes", "17"), ("time bytes", "0-3, little-endian")),
        meaning=f"Gemini responseId whose first 4 bytes read as a little-endian time {_iso_s(ts)}",
        shape="gemini-response-id",
    )
