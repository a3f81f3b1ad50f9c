"""The dispatcher the engine calls on every string value (§12.1)."""

from __future__ import annotations

import binascii
import re
import string
from collections.abc import Callable

from musetui.core.fingerprints.decoders._common import _HEAD_B64_RE, _varint
from musetui.core.fingerprints.decoders.anthropic import (
    _ANTHROPIC_CANDIDATE_RE,
    _ANTHROPIC_TOKEN_RE,
    decode_anthropic_id,
    decode_anthropic_signature,
)
from musetui.core.fingerprints.decoders.generic import decode_ulid, decode_uuid7
from musetui.core.fingerprints.decoders.google import (
    decode_gemini_response_id,
    decode_gemini_thought_signature,
)
from musetui.core.fingerprints.decoders.keys import (
    _CLAUDE_HASH,
    _FIREWORKS_PREFIX,
    _MAX_EMBEDDED,
    MUSE_TAG,
    _fernet_tokens,
    decode_model_path,
    decode_openrouter_id,
    decode_signature_value,
)
from musetui.core.fingerprints.decoders.openai import (
    _OPENAI_CANDIDATE_RE,
    _OPENAI_TOKEN_RE,
    OPENAI_ITEM_TYPES,
    classify_system_fingerprint,
    decode_chatcmpl_id,
    decode_fernet,
    decode_openai_item_id,
)
from musetui.core.fingerprints.decoders.tools import _classify_tool_id, classify_tool_id
from musetui.core.fingerprints.types import Decoded

# ---------------------------------------------------------------------------------------------
# The dispatcher
# ---------------------------------------------------------------------------------------------

#: Keys whose values are ids: the weak detectors (§8.6 weak classes, chatcmpl-, UUID/ULID) run only here.
ID_KEYS: frozenset[str] = frozenset(
    {
        "id",
        "call_id",
        "tool_call_id",
        "tool_use_id",
        "message_id",
        "requestId",
        "request_id",
        "responseId",
        "response_id",
        "item_id",
        "callId",
        "toolCallId",
        "toolUseId",
        "messageId",
        "tool_id",
        "toolId",
        "previous_response_id",
        "caller_id",
        "turn_id",
        "thread_id",
        "parent_thread_id",
        "session_id",
        "sessionId",
    }
)
#: Keys that hold reasoning signatures (see :func:`decode_signature_value`).
SIGNATURE_KEYS: frozenset[str] = frozenset({"signature", "thoughtSignature", "thought_signature"})


def _muse_tag(s: str) -> Decoded:
    """The Decoded for Muse's ``gpt_responses_v1`` wrapper label (§1.7, row 28)."""
    return Decoded(
        detector="muse-gpt-responses-tag",
        value=MUSE_TAG,
        provider="openai",
        host=None,
        strength="medium",
        tag="guess",
        fields=(("tag", MUSE_TAG),),
        meaning="Muse's own wrapper label for OpenAI-Responses-style encrypted reasoning",
        shape=MUSE_TAG,
    )


_B64_INDEX = {c: i for i, c in enumerate(string.ascii_uppercase + string.ascii_lowercase + "0123456789+/")}
_SHORT_LEN = frozenset("ghijklmn")  # second char when the first length byte is < 0x80
_LONG_LEN = frozenset("opqrstuv")  # … when it carries the continuation bit


def _proto_prefilter(s: str) -> bool:
    """Character-level check that ``s`` may start ``[08 02] 12 len 0a`` or ``0a len 01``.

    Works on the base64 characters directly so ordinary words fail in a few hundred ns.
    """
    c0, c1 = s[0], s[1]
    if c0 == "C":
        if c1 == "A":
            return s.startswith("CAIS")
        if c1 in _SHORT_LEN:
            return s[3] == "B"  # 0a <len> 01
        if c1 in _LONG_LEN:
            # 0a <len> <len> 01, or a third length byte
            return s[4] == "A" or (len(s) >= 48 and _B64_INDEX.get(s[2], 0) % 4 >= 2)
        return False
    if c0 != "E":
        return False
    if c1 in _SHORT_LEN:
        return s[3] == "K"  # 12 <len> 0a
    if c1 in _LONG_LEN:
        if s[4] == "C":  # 12 <len> <len> 0a
            return True
        return len(s) >= 48 and _B64_INDEX.get(s[2], 0) % 4 >= 2  # a third length byte
    return False


def _proto_kind(s: str) -> str | None:
    """Tell from the first 16 base64 characters whether ``s`` frames as Anthropic or Gemini."""
    if not _proto_prefilter(s) or _HEAD_B64_RE.match(s) is None:
        return None
    head = s[:16]
    if "-" in head or "_" in head:
        head = head.replace("-", "+").replace("_", "/")
    try:
        b = binascii.a2b_base64(head)
    except (binascii.Error, ValueError):
        return None
    pos = 0
    if b[0] == 0x08:
        pos = 2
    if b[pos] == 0x12:
        v = _varint(b, pos + 1)
        if v is None:
            return None
        pos = v[1]
    if b[pos : pos + 1] != b"\x0a":
        return None
    v = _varint(b, pos + 1)
    if v is None:
        return None
    first = b[v[1] : v[1] + 1]
    if first == b"\x08":
        return "anthropic"
    if first == b"\x01":
        return "gemini"
    return None


def _whole(s: str, key: str | None) -> Decoded | None:
    """Run the whole-string detectors; the first that recognises ``s`` wins."""
    c0 = s[0]
    us = s.find("_", 0, 9)  # the longest id prefix is "srvtoolu"
    if us > 0:
        head = s[:us]
        if head in OPENAI_ITEM_TYPES:
            d = decode_openai_item_id(s)
            if d is not None:
                return d
        if head in ("msg", "req", "toolu", "srvtoolu"):
            d = decode_anthropic_id(s)
            if d is not None:
                return d
        if head in ("call", "tooluse"):
            d = _classify_tool_id(s, strong_only=key not in ID_KEYS)
            if d is not None:
                return d
    if c0 == "g" and s.startswith("gAAAAA"):
        d = decode_fernet(s)
        if d is not None:
            return d
    if (c0 == "E" or c0 == "C") and len(s) >= 16:
        kind = _proto_kind(s)
        if kind == "anthropic":
            d = decode_anthropic_signature(s)
            if d is not None:
                return d
        elif kind == "gemini":
            d = decode_gemini_thought_signature(s)
            if d is not None:
                return d
    if c0 == "a" and s.startswith(_FIREWORKS_PREFIX):
        return decode_model_path(s)
    if c0 == "c" and s.startswith("chatcmpl-tool-"):
        return _classify_tool_id(s, strong_only=True)
    if key is None:
        return None
    if key in ID_KEYS:
        d = _classify_tool_id(s, strong_only=False)
        if d is not None:
            return d
        if c0 == "c" and s.startswith("chatcmpl-"):
            return decode_chatcmpl_id(s)
        if c0 == "g" and s.startswith("gen-"):
            return decode_openrouter_id(s)
        if key == "responseId":
            d = decode_gemini_response_id(s)
            if d is not None:
                return d
        n = len(s)
        if n == 36:
            return decode_uuid7(s)
        if n == 26 or n == 30:
            return decode_ulid(s)
        return None
    if key == "system_fingerprint":
        return classify_system_fingerprint(s)
    if key in SIGNATURE_KEYS and s.startswith(_CLAUDE_HASH):
        return decode_signature_value(s)
    return None


def decode_string(value: str, key: str | None = None) -> list[Decoded]:
    """Find every artifact in one string value; ``key`` is the JSON key it sits under, if any.

    Strong detectors run on every string, whole-string and embedded (``gAAAAA…`` tokens and
    OpenAI/Anthropic ids inside longer text). Weak detectors run only under :data:`ID_KEYS`
    (plus ``system_fingerprint`` and ``responseId``). Empty signatures need context (thinking
    text present), so they are left to :func:`decode_signature_value`.
    """
    n = len(value)
    if n < 9:
        return []
    d = _whole(value, key)
    if d is not None:
        return [d]
    out: list[Decoded] = []
    has_us = "_" in value
    if has_us and MUSE_TAG in value:
        out.append(_muse_tag(value))
    if "gAAAAA" in value:
        for tok in _fernet_tokens(value):
            f = decode_fernet(tok)
            if f is not None:
                out.append(f)
    if has_us:
        if n >= 51:
            out.extend(_embedded_ids(value, _OPENAI_CANDIDATE_RE, _OPENAI_TOKEN_RE, False))
        if n >= 26 and "_01" in value:
            out.extend(_embedded_ids(value, _ANTHROPIC_CANDIDATE_RE, _ANTHROPIC_TOKEN_RE, True))
    return out


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _prefix_start(value: str, underscore: int, route_segment: bool) -> int:
    """Walk back from an ``_`` over a lowercase prefix (and a ``bdrk_``/``vrtx_`` segment)."""
    i = underscore
    lo = max(0, underscore - 8)
    while i > lo and value[i - 1] in _LOWER:
        i -= 1
    if route_segment and value[i:underscore] in ("bdrk", "vrtx") and i > 1 and value[i - 1] == "_":
        return _prefix_start(value, i - 1, False)
    return i


def _embedded_ids(value: str, candidates: re.Pattern[str], token: re.Pattern[str], anthropic: bool) -> list[Decoded]:
    """Decode OpenAI or Anthropic ids found inside a longer string (deduplicated, capped)."""
    out: list[Decoded] = []
    seen: set[str] = set()
    for m in candidates.finditer(value):
        start = _prefix_start(value, m.start(), anthropic)
        if start == m.start() or (start > 0 and value[start - 1] in _WORD):
            continue
        t = token.match(value, start)
        if t is None:
            continue
        tok = t.group(0)
        if tok in seen:
            continue
        seen.add(tok)
        d = decode_anthropic_id(tok) if anthropic else decode_openai_item_id(tok)
        if d is not None:
            out.append(d)
        if len(seen) >= _MAX_EMBEDDED:
            break
    return out


#: Every decoder that takes one whole string (for fuzzing and property tests).
WHOLE_STRING_DECODERS: tuple[Callable[[str], Decoded | None], ...] = (
    decode_openai_item_id,
    decode_chatcmpl_id,
    classify_system_fingerprint,
    decode_fernet,
    classify_tool_id,
    decode_anthropic_id,
    decode_anthropic_signature,
    decode_gemini_thought_signature,
    decode_gemini_response_id,
    decode_uuid7,
    decode_ulid,
    decode_model_path,
    decode_openrouter_id,
    decode_signature_value,
)
