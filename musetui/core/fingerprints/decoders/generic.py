"""Time-bearing generic ids: UUIDv7 and ULID."""

from __future__ import annotations

import re

from musetui.core.fingerprints.decoders._common import WINDOW_END_MS, WINDOW_MIN_MS, _iso_ms
from musetui.core.fingerprints.types import Decoded

# ---------------------------------------------------------------------------------------------
# Time-bearing generic ids: UUIDv7 and ULID
# ---------------------------------------------------------------------------------------------

_UUID7_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CROCKFORD_INDEX = {c: i for i, c in enumerate(_CROCKFORD)} | {c.lower(): i for i, c in enumerate(_CROCKFORD)}
_ULID_RE = re.compile(r"[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}")


def decode_uuid7(s: str) -> Decoded | None:
    """Decode the millisecond time of a canonical UUIDv7 (window 2020–2035)."""
    if len(s) != 36 or _UUID7_RE.fullmatch(s) is None:
        return None
    ms = int(s[0:8] + s[9:13], 16)
    if not WINDOW_MIN_MS <= ms < WINDOW_END_MS:
        return None
    return Decoded(
        detector="uuid7",
        value=s,
        provider=None,
        host=None,
        strength="weak",
        tag="verified",
        time=ms / 1000.0,
        fields=(("UUID", s.lower()), ("minted", _iso_ms(ms))),
        meaning=f"UUIDv7 minted {_iso_ms(ms)} (a time, not a provider)",
        shape="uuid7",
    )


def decode_ulid(s: str) -> Decoded | None:
    """Decode the millisecond time of a ULID (either case), also behind Groq's ``req_`` prefix."""
    body = s[4:] if s.startswith("req_") else s
    if len(body) != 26 or _ULID_RE.fullmatch(body) is None:
        return None
    if body != body.lower() and body != body.upper():
        return None  # a mixed-case string is not a ULID rendering
    ms = 0
    for c in body[:10]:
        ms = ms * 32 + _CROCKFORD_INDEX[c]
    if not WINDOW_MIN_MS <= ms < WINDOW_END_MS:
        return None
    groq = s.startswith("req_") and body == body.lower()
    meaning = f"ULID minted {_iso_ms(ms)} (a time, not a provider)"
    if groq:
        meaning = f"req_ + lowercase ULID minted {_iso_ms(ms)}: the shape of Groq's x_groq.id"
    return Decoded(
        detector="ulid",
        value=s,
        provider=None,
        host=None,
        strength="weak",
        tag="verified",
        time=ms / 1000.0,
        fields=(("ULID", body), ("minted", _iso_ms(ms))),
        meaning=meaning,
        shape="req_+ulid" if s.startswith("req_") else "ulid",
    )
