"""Helpers shared by the decoder families: time windows, varints, base64 prefixes, protobuf walks."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime

# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------

#: §4.1 plausibility window for OpenAI id times (unix seconds, inclusive).
OPENAI_TIME_MIN = 1_640_000_000
OPENAI_TIME_MAX = 1_900_000_000
#: 2020-01-01 … 2036-01-01 (exclusive), the window used for Fernet, UUIDv7, ULID, Gemini (§5–§7).
WINDOW_MIN_S = 1_577_836_800
WINDOW_END_S = 2_082_758_400
WINDOW_MIN_MS = WINDOW_MIN_S * 1000
WINDOW_END_MS = WINDOW_END_S * 1000

_OPENAI_STACK = "OpenAI Responses stack (OpenAI or Azure: ids cannot tell them apart)"


def _dt(seconds: int) -> datetime | None:
    """Return the UTC datetime for whole unix seconds, or None when it is out of range."""
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


#: Unix seconds of 10000-01-01: below it (and from 0) the fast path of :func:`_iso_s` applies.
_ISO_FAST_END = 253_402_300_800
_DAYS: dict[int, str] = {}
_TWO = [f"{i:02d}Z" for i in range(60)]
_CLOCK = [f"{m // 60:02d}:{m % 60:02d}:" for m in range(1440)]


_SEC_DOT = [f"{i:02d}." for i in range(60)]
_MS_Z = [f"{i:03d}Z" for i in range(1000)]


def _day(day: int) -> str:
    """``YYYY-MM-DDT`` of a day since the epoch (rendered once per day)."""
    text = _DAYS.get(day)
    if text is None:
        if len(_DAYS) >= 4096:
            _DAYS.clear()
        midnight = datetime.fromtimestamp(day * 86400, tz=UTC)
        text = _DAYS[day] = f"{midnight.year:04d}-{midnight.month:02d}-{midnight.day:02d}T"
    return text


def _iso_s(seconds: int) -> str:
    """Render whole unix seconds as ``YYYY-MM-DDThh:mm:ssZ``."""
    if type(seconds) is int and 0 <= seconds < _ISO_FAST_END:
        # The date of each day is rendered once; the time of day is plain arithmetic.
        day, rem = divmod(seconds, 86400)
        return _day(day) + _CLOCK[rem // 60] + _TWO[rem % 60]
    d = _dt(seconds)
    if d is None:
        return f"out of range ({seconds})"
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}Z"


def _iso_ms(ms: int) -> str:
    """Render unix milliseconds as ``YYYY-MM-DDThh:mm:ss.mmmZ`` (exact, no float rounding)."""
    secs, rem = divmod(ms, 1000)
    if type(secs) is int and 0 <= secs < _ISO_FAST_END:  # (as _iso_s, from tables)
        day, clock = divmod(secs, 86400)
        return _day(day) + _CLOCK[clock // 60] + _SEC_DOT[clock % 60] + _MS_Z[rem]
    text = _iso_s(secs)
    if text.endswith("Z"):
        return f"{text[:-1]}.{rem:03d}Z"
    return text


def _date(seconds: int) -> str:
    """Render unix seconds as a bare date (``YYYY-MM-DD``) for short messages."""
    d = _dt(seconds)
    if d is None:
        return f"out-of-range time {seconds}"
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def _in_window_s(seconds: int) -> bool:
    """Return True when unix seconds fall in 2020-01-01 … 2035-12-31."""
    return WINDOW_MIN_S <= seconds < WINDOW_END_S


#: The most bytes :func:`_varint` reads.
_VARINT_MAX = 10


def _varint(data: bytes, pos: int) -> tuple[int, int] | None:
    """Read a protobuf varint at ``pos``; return (value, next position) or None if cut/overlong."""
    n = len(data)
    if pos < n and data[pos] < 0x80:  # one byte: the common case
        return data[pos], pos + 1
    value = 0
    shift = 0
    while pos < n and shift < 64:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    return None


_B64_STD_RUN = re.compile(r"[A-Za-z0-9+/]*")
_B64_URL_RUN = re.compile(r"[A-Za-z0-9_\-]*")
_B64_STD_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_URL_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _b64_run(s: str, url: bool) -> int:
    """The length of the longest prefix of ``s`` in the base64 alphabet (standard or URL-safe).

    The common case, base64 to the end (or to its ``=`` padding), is told by deleting the
    alphabet from the bytes (a table pass, a fraction of the regex's cost on a long value).
    """
    if s.isascii():
        left = s.encode("ascii").translate(None, _B64_URL_BYTES if url else _B64_STD_BYTES)
        if not left:
            return len(s)
        if (left == b"=" or left == b"==") and s.endswith(left.decode("ascii")):
            return len(s) - len(left)
    m = (_B64_URL_RUN if url else _B64_STD_RUN).match(s)
    return m.end() if m else 0


def _b64_prefix(s: str, url: bool) -> tuple[bytes, bool]:
    """Decode the longest valid base64 prefix of ``s``; return (bytes, ended cleanly).

    "Ended cleanly" means the base64 run reached the end of the string (optionally followed by
    correct ``=`` padding), so the decoded bytes are everything the string holds.
    """
    data, _total, clean = _b64_head(s, url, -1)
    return data, clean


def _b64_head(s: str, url: bool, nbytes: int) -> tuple[bytes, int, bool]:
    """The first ``nbytes`` of :func:`_b64_prefix` (``s``), the length of all of it, and whether it ended cleanly.

    Only the head is decoded: a run of base64 characters always decodes (four characters to
    three bytes), so its length follows from the run's. A negative ``nbytes`` decodes all of it.
    """
    n = _b64_run(s, url)
    rest = s[n:]
    cut = n - n % 4
    tail = n - cut
    total = cut // 4 * 3 + (tail - 1 if tail >= 2 else 0)
    need = (nbytes + 2) // 3 * 4 if nbytes >= 0 else cut
    if need < cut:
        body = s[:need]
    else:
        body = s[:cut]
        if tail >= 2:
            body += s[cut:n] + "=" * (4 - tail)
    try:
        head = base64.urlsafe_b64decode(body) if url else binascii.a2b_base64(body)
    except (binascii.Error, ValueError):
        return b"", 0, False
    if nbytes < 0:
        nbytes = total
    clean = rest == "" or (rest.strip("=") == "" and len(rest) <= 2)
    return head[:nbytes], total, clean


def _printable(raw: bytes) -> str | None:
    """Return ``raw`` as ASCII text when every byte is printable, else None."""
    if raw and raw.isascii():
        text = raw.decode("ascii")
        if text.isprintable():  # (for ASCII: 0x20 … 0x7e)
            return text
    return None


_HEAD_B64_RE = re.compile(r"[A-Za-z0-9+/_\-]{16}")
_HEAD_CHARS = 64  # enough base64 for every envelope header check (48 bytes)


def _walk_fields(data: bytes, start: int, end: int) -> tuple[list[tuple[int, int, int | bytes]], bool]:
    """Walk protobuf fields in ``data[start:end]``; return (fields, complete).

    Each field is (number, wire type, varint value or bytes). The walk stops at an unknown
    wire type or at the end of the data; ``complete`` is False when it stopped early.
    """
    out: list[tuple[int, int, int | bytes]] = []
    pos = start
    n = len(data)
    limit = min(end, n)
    while pos < limit:
        key = data[pos]  # (a one-byte varint, the common case, read inline: as _varint reads it)
        if key < 0x80:
            pos += 1
        else:
            tag = _varint(data, pos)
            if tag is None:
                return out, False
            key, pos = tag
        number, wire = key >> 3, key & 7
        if number == 0:
            return out, False
        if wire == 0:
            if pos < n and data[pos] < 0x80:
                value, nxt = data[pos], pos + 1
            else:
                v = _varint(data, pos)
                if v is None:
                    return out, False
                value, nxt = v
            if nxt > limit:
                return out, False
            out.append((number, 0, value))
            pos = nxt
        elif wire == 2:
            if pos < n and data[pos] < 0x80:
                length = data[pos]
                pos += 1
            else:
                ln = _varint(data, pos)
                if ln is None:
                    return out, False
                length, pos = ln
            if pos + length > limit:
                out.append((number, 2, data[pos:limit]))
                return out, False
            out.append((number, 2, data[pos : pos + length]))
            pos += length
        else:
            return out, False
    return out, pos >= end


def _varint_size(n: int) -> int:
    """Return how many bytes the protobuf varint encoding of ``n`` takes."""
    size = 1
    while n >= 0x80:
        n >>= 7
        size += 1
    return size
