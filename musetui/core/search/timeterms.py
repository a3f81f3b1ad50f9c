"""Date and time terms: a UTC window, and byte patterns for ids and tokens minted in it.

Ids and tokens carry their time encoded (hex, base64, base58), never as text, so a window
becomes patterns over those encodings; the decoders confirm each candidate.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["time_patterns", "time_window"]


_TIME_TERM_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?)?[Zz]?")
#: Decoded times are plausible only in this window (the decoders' 2020–2035).
_TIME_MIN = 1_577_836_800
_TIME_MAX = 2_082_758_400


def time_window(text: str) -> tuple[float, float] | None:
    """The UTC window a date/time term names (``2026-09-01T22`` is that hour), or None."""
    m = _TIME_TERM_RE.fullmatch(text.strip())
    if m is None:
        return None
    y, mo, d, hh, mm, ss, frac = m.groups()
    try:
        start = datetime(int(y), int(mo), int(d), int(hh or 0), int(mm or 0), int(ss or 0), tzinfo=UTC)
    except ValueError:
        return None
    if frac is not None:
        step = timedelta(microseconds=10 ** (6 - len(frac)))
        start += timedelta(microseconds=int(frac) * 10 ** (6 - len(frac)))
    elif ss is not None:
        step = timedelta(seconds=1)
    elif mm is not None:
        step = timedelta(minutes=1)
    elif hh is not None:
        step = timedelta(hours=1)
    else:
        step = timedelta(days=1)
    t0 = start.timestamp()
    t1 = (start + step).timestamp()
    return t0, t1


_HEX = "0123456789abcdef"
_B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _digits(value: int, base: int, width: int) -> list[int]:
    out = [0] * width
    for i in range(width - 1, -1, -1):
        value, out[i] = divmod(value, base)
    return out


def _range_alts(lo: list[int], hi: list[int], base: int) -> list[list[tuple[int, int]]]:
    """Fixed-width digit strings between ``lo`` and ``hi`` (inclusive), as position ranges."""
    if not lo:
        return [[]]
    if lo[0] == hi[0]:
        return [[(lo[0], lo[0]), *rest] for rest in _range_alts(lo[1:], hi[1:], base)]
    n = len(lo) - 1
    alts: list[list[tuple[int, int]]] = []
    if all(x == 0 for x in lo[1:]):
        first_full = lo[0]
    else:
        alts += [[(lo[0], lo[0]), *r] for r in _range_alts(lo[1:], [base - 1] * n, base)]
        first_full = lo[0] + 1
    last_full = hi[0] if all(x == base - 1 for x in hi[1:]) else hi[0] - 1
    if first_full <= last_full:
        alts.append([(first_full, last_full)] + [(0, base - 1)] * n)
    if last_full != hi[0]:
        alts += [[(hi[0], hi[0]), *r] for r in _range_alts([0] * n, hi[1:], base)]
    return alts


def _class(chars: str) -> str:
    if len(chars) == 1:
        return re.escape(chars)
    return "[" + "".join("\\" + ch if ch in "\\]^-[" else ch for ch in chars) + "]"


def _range_regex(lo: int, hi: int, base: int, width: int, alphabet: str, insert: dict[int, str] | None = None) -> str:
    """A regex for the fixed-width renderings of every value in ``[lo, hi]``.

    The common leading digits come first as a literal (so ``re`` can search for it fast);
    ``insert`` puts fixed text before a position (the dash of a UUID).
    """
    lo_d, hi_d = _digits(lo, base, width), _digits(hi, base, width)
    alts = _range_alts(lo_d, hi_d, base)
    insert = insert or {}

    prefix_len = 0
    while prefix_len < width and lo_d[prefix_len] == hi_d[prefix_len]:
        prefix_len += 1
    head = "".join(insert.get(i, "") + re.escape(alphabet[lo_d[i]]) for i in range(prefix_len))
    bodies = []
    for alt in alts:
        parts = []
        for i in range(prefix_len, width):
            a, b = alt[i]
            parts.append(insert.get(i, "") + _class(alphabet[a : b + 1]))
        bodies.append("".join(parts))
    if not bodies or bodies == [""]:
        return head
    return head + "(?:" + "|".join(bodies) + ")"


def time_patterns(t0: float, t1: float) -> list[re.Pattern[bytes]]:
    """Byte patterns for ids and tokens whose embedded time falls in ``[t0, t1)``."""
    us0 = round(t0 * 1_000_000)
    us1 = round(t1 * 1_000_000)
    s0, s1 = -(-us0 // 1_000_000), -(-us1 // 1_000_000) - 1
    m0, m1 = -(-us0 // 1000), -(-us1 // 1000) - 1
    out: list[str] = []
    if s0 >= _TIME_MIN and s1 < _TIME_MAX and s0 <= s1:
        hexr = _range_regex(s0, s1, 16, 8, _HEX)
        # OpenAI item ids: new50 (time after 18 hex), legacy48 and old32 (time first).
        out.append(hexr + r"(?<=_[0-9a-f]{26})[0-9a-f]{24}(?![0-9a-f])")
        out.append(hexr + r"(?<=_[0-9a-f]{8})[0-9a-f]{24}(?:[0-9a-f]{16})?(?![0-9a-f])")
        # Fernet: base64url of 0x80 + the 8-byte time.
        out.append(_range_regex((0x80 << 64) | s0, (0x80 << 64) | s1, 64, 12, _B64URL))
    if m0 >= _TIME_MIN * 1000 and m1 < _TIME_MAX * 1000 and m0 <= m1:
        # UUIDv7: 48-bit milliseconds in the first 12 hex digits (a dash after 8).
        out.append(_range_regex(m0, m1, 16, 12, _HEX, insert={8: "-"}) + r"-7[0-9a-f]{3}-[89ab]")
        # Anthropic ids: "01" + base58 of a UUIDv7 (milliseconds in the top 48 of 128 bits).
        out.append(_range_regex(m0 << 80, ((m1 + 1) << 80) - 1, 58, 22, _B58) + r"(?<=_01[1-9A-HJ-NP-Za-km-z]{22})")
        # ULIDs: milliseconds in the first 10 Crockford characters.
        out.append(_range_regex(m0, m1, 32, 10, _CROCKFORD) + r"[0-9A-HJKMNP-TV-Z]{16}")
        out.append(_range_regex(m0, m1, 32, 10, _CROCKFORD.lower()) + r"[0-9a-hjkmnp-tv-z]{16}")
    return [re.compile(p.encode("ascii")) for p in out]


# ---------------------------------------------------------------------------------------------
# Filters
# ---------------------------------------------------------------------------------------------
