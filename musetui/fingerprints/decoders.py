"""Pure decoders that recognise provider artifacts in single strings (FINGERPRINTS.md §4–§8).

Every public decoder takes a string, returns a :class:`Decoded` or ``None`` ("not this
artifact") and never raises. Nothing here does I/O; only the standard library is used.
:func:`decode_string` is the dispatcher the engine calls on every string value; it runs the
strong detectors everywhere and the weak ones only under id-bearing keys (§12.1).
"""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Callable
from datetime import UTC, datetime

from musetui.fingerprints.types import Decoded, Strength, Tag

__all__ = [
    "ID_KEYS",
    "SIGNATURE_KEYS",
    "classify_system_fingerprint",
    "classify_tool_id",
    "decode_anthropic_id",
    "decode_anthropic_signature",
    "decode_chatcmpl_id",
    "decode_fernet",
    "decode_gemini_response_id",
    "decode_gemini_thought_signature",
    "decode_key",
    "decode_model_path",
    "decode_openai_item_id",
    "decode_signature_value",
    "decode_string",
    "decode_ulid",
    "decode_uuid7",
]

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


def _iso_s(seconds: int) -> str:
    """Render whole unix seconds as ``YYYY-MM-DDThh:mm:ssZ``."""
    d = _dt(seconds)
    if d is None:
        return f"out of range ({seconds})"
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}Z"


def _iso_ms(ms: int) -> str:
    """Render unix milliseconds as ``YYYY-MM-DDThh:mm:ss.mmmZ`` (exact, no float rounding)."""
    secs, rem = divmod(ms, 1000)
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


def _varint(data: bytes, pos: int) -> tuple[int, int] | None:
    """Read a protobuf varint at ``pos``; return (value, next position) or None if cut/overlong."""
    value = 0
    shift = 0
    n = len(data)
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


def _b64_prefix(s: str, url: bool) -> tuple[bytes, bool]:
    """Decode the longest valid base64 prefix of ``s``; return (bytes, ended cleanly).

    "Ended cleanly" means the base64 run reached the end of the string (optionally followed by
    correct ``=`` padding), so the decoded bytes are everything the string holds.
    """
    m = (_B64_URL_RUN if url else _B64_STD_RUN).match(s)
    run = m.group(0) if m else ""
    rest = s[len(run) :]
    cut = len(run) - len(run) % 4
    tail = run[cut:]
    body = run[:cut]
    if len(tail) >= 2:
        body += tail + "=" * (4 - len(tail))
    try:
        data = base64.urlsafe_b64decode(body) if url else base64.b64decode(body)
    except (binascii.Error, ValueError):
        return b"", False
    clean = rest == "" or (rest.strip("=") == "" and len(rest) <= 2)
    return data, clean


def _printable(raw: bytes) -> str | None:
    """Return ``raw`` as ASCII text when every byte is printable, else None."""
    if raw and all(0x20 <= b < 0x7F for b in raw):
        return raw.decode("ascii")
    return None


# ---------------------------------------------------------------------------------------------
# OpenAI Responses item ids (§4)
# ---------------------------------------------------------------------------------------------

#: §4.5: item prefix → item type.
OPENAI_ITEM_TYPES: dict[str, str] = {
    "resp": "response",
    "rs": "reasoning",
    "msg": "message",
    "fc": "function_call",
    "ctc": "custom_tool_call",
    "ws": "web_search_call",
    "lsh": "local_shell_call",
    "ci": "code_interpreter_call",
    "ig": "image_generation_call",
    "mcp": "mcp_call",
    "mcpl": "mcp_list_tools",
    "mcpr": "mcp_approval_request",
    "fs": "file_search_call",
    "cmp": "compaction",
    "apc": "apply_patch_call",
    "sh": "shell_call",
    "sho": "shell_call_output",
    "tsc": "tool_search_call",
    "tso": "tool_search_output",
    "cm": "program",
    "cmo": "program_output",
}
_OPENAI_PREFIX_ALT = "|".join(sorted(OPENAI_ITEM_TYPES, key=len, reverse=True))
_OPENAI_ID_RE = re.compile(
    rf"({_OPENAI_PREFIX_ALT})_([0-9a-f]{{50}}|[0-9a-f]{{48}}|[0-9a-f]{{32}})"
)
#: Anchored at a computed start: the prefix, the body, and no id character after it.
_OPENAI_TOKEN_RE = re.compile(
    rf"(?:{_OPENAI_PREFIX_ALT})_(?:[0-9a-f]{{50}}|[0-9a-f]{{48}})(?![0-9A-Za-z])"
)
#: Literal-anchored candidate finder (fast): an ``_`` followed by 48 hex.
_OPENAI_CANDIDATE_RE = re.compile(r"_[0-9a-f]{48}")
_MARKER_RE = re.compile(r"81[0-9a-f]{2}")
_MARKER_CODEX = "87d1"


def decode_openai_item_id(s: str) -> Decoded | None:
    """Decode an OpenAI Responses id (legacy48, new50 or the old 32-hex form) and judge it (§4.1).

    An id whose time, marker or store byte fails the checks is reported as an imitation
    (provider None, weak), not dropped: imitations are evidence too (§11).
    """
    m = _OPENAI_ID_RE.fullmatch(s)
    if m is None:
        return None
    prefix, body = m.group(1), m.group(2)
    n = len(body)
    item_type = OPENAI_ITEM_TYPES[prefix]
    problems: list[str] = []
    reasons: list[str] = []
    fields: list[tuple[str, str]] = []
    store = ""
    if n == 50:
        layout = "new50"
        key = body[0:16]
        store = body[16:18]
        ts = int(body[18:26], 16)
        marker = body[30:34]
    else:
        layout = "legacy48" if n == 48 else "old32"
        key = ""
        ts = int(body[0:8], 16)
        marker = body[12:16]
    fields.append(("layout", layout))
    fields.append(("item type", item_type))
    minted = _iso_s(ts)
    fields.append(("minted", minted))
    if not OPENAI_TIME_MIN <= ts <= OPENAI_TIME_MAX:
        problems.append("implausible-time")
        reasons.append(f"time {_date(ts)} is implausible")
    codex_marker = marker == _MARKER_CODEX
    if codex_marker:
        fields.append(("marker", f"{marker} (seen only in 2026-08/09 Codex lines: medium)"))
    else:
        fields.append(("marker", marker))
        if _MARKER_RE.fullmatch(marker) is None:
            problems.append("bad-marker")
            reasons.append(f"marker {marker} is not 81xx")
    if layout == "new50":
        if store == "00":
            fields.append(("store byte", "00 (store:true)"))
        elif store == "01":
            fields.append(("store byte", "01 (store:false)"))
        else:
            fields.append(("store byte", f"{store} (not 00/01)"))
            problems.append("bad-store-byte")
            reasons.append(f"store byte {store} is not 00/01")
        fields.append(("conversation key", key))
    elif layout == "legacy48":
        fields.append(("response suffix", body[32:48]))

    if problems:
        if layout == "old32":
            return None  # the optional 32-hex form is only accepted when it checks out [guess]
        who = (
            "imitation (LM Studio style)"
            if prefix == "resp" and layout == "legacy48"
            else "imitation (re-implemented or hand-written id)"
        )
        meaning = f"{prefix}_ + {n} hex but {' and '.join(reasons)}: {who}"
        return Decoded(
            detector="openai-item-id",
            value=s,
            provider=None,
            host=None,
            strength="weak",
            tag="verified",
            time=float(ts),
            fields=tuple(fields),
            meaning=meaning,
            problems=tuple(problems),
            shape=layout,
        )

    strength: Strength = "strong"
    tag: Tag = "verified"
    if codex_marker:
        strength = "medium"
    if layout == "old32":
        strength = "medium"
        tag = "guess"
    store_note = ""
    if store == "00":
        store_note = ", store byte 00 (the request had store:true)"
    elif store == "01":
        store_note = ", store byte 01 (store:false)"
    meaning = (
        f"OpenAI Responses {item_type} id ({layout}) minted {minted}, marker {marker}"
        f"{store_note}: {_OPENAI_STACK}"
    )
    return Decoded(
        detector="openai-item-id",
        value=s,
        provider="openai",
        host=None,
        strength=strength,
        tag=tag,
        time=float(ts),
        fields=tuple(fields),
        meaning=meaning,
        problems=(),
        shape=layout,
    )


# ---------------------------------------------------------------------------------------------
# Chat Completions ids and system_fingerprint (§4.5, §8)
# ---------------------------------------------------------------------------------------------

_CHATCMPL_OPENAI_RE = re.compile(r"chatcmpl-[A-Za-z0-9]{29}")
_CHATCMPL_HEX32_RE = re.compile(r"chatcmpl-[0-9a-f]{32}")
_UUID4_BODY = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
_CHATCMPL_UUID_RE = re.compile(rf"chatcmpl-{_UUID4_BODY}")


def decode_chatcmpl_id(s: str) -> Decoded | None:
    """Classify a Chat Completions ``chatcmpl-`` id by shape (§4.5, §8.2, §8.4); opaque, no time."""
    if not s.startswith("chatcmpl-") or s.startswith("chatcmpl-tool-"):
        return None
    if _CHATCMPL_OPENAI_RE.fullmatch(s):
        return Decoded(
            detector="chatcmpl-id",
            value=s,
            provider="openai",
            host=None,
            strength="medium",
            tag="verified",
            fields=(("shape", "chatcmpl- + 29 base62"),),
            meaning="OpenAI Chat Completions id shape (OpenAI or Azure); opaque, carries no time",
            shape="chatcmpl-+29",
        )
    if _CHATCMPL_HEX32_RE.fullmatch(s):
        return Decoded(
            detector="chatcmpl-id",
            value=s,
            provider=None,
            host=None,
            strength="weak",
            tag="source",
            fields=(("shape", "chatcmpl- + 32 hex"),),
            meaning="chatcmpl- + 32 hex: Fireworks-like (vLLM-style servers mint the same shape)",
            shape="chatcmpl-+32hex",
        )
    if _CHATCMPL_UUID_RE.fullmatch(s):
        return Decoded(
            detector="chatcmpl-id",
            value=s,
            provider=None,
            host=None,
            strength="weak",
            tag="verified",
            fields=(("shape", "chatcmpl- + uuid4"),),
            meaning="chatcmpl- + uuid4: Groq/Cerebras-like OpenAI-compatible server",
            shape="chatcmpl-+uuid4",
        )
    return None


_FP10_RE = re.compile(r"fp_[0-9a-f]{10}")
_FP_DEEPSEEK_RE = re.compile(r"fp_[0-9a-f]{10}_prod[A-Za-z0-9_]*")
_FP20_RE = re.compile(r"fp_[0-9a-f]{20}")


def classify_system_fingerprint(s: str) -> Decoded | None:
    """Classify a ``system_fingerprint`` value; only the unusual shapes are informative (§4.5)."""
    if not s.startswith("fp_"):
        return None
    if _FP10_RE.fullmatch(s):
        return Decoded(
            detector="system-fingerprint",
            value=s,
            provider=None,
            host=None,
            strength="weak",
            tag="verified",
            fields=(("shape", "fp_ + 10 hex"),),
            meaning="fp_ + 10 hex: OpenAI's shape, also copied by xAI and Groq: weak",
            shape="fp_+10hex",
        )
    if _FP_DEEPSEEK_RE.fullmatch(s):
        return Decoded(
            detector="system-fingerprint",
            value=s,
            provider="deepseek",
            host=None,
            strength="strong",
            tag="verified",
            fields=(("shape", "fp_ + 10 hex + _prod…"), ("build", s[14:])),
            meaning="fp_<10hex>_prod… system_fingerprint: DeepSeek",
            shape="fp_+10hex_prod",
        )
    if _FP20_RE.fullmatch(s):
        return Decoded(
            detector="system-fingerprint",
            value=s,
            provider=None,
            host=None,
            strength="weak",
            tag="verified",
            fields=(("shape", "fp_ + 20 hex"),),
            meaning="fp_ + 20 hex: Cerebras-like system_fingerprint",
            shape="fp_+20hex",
        )
    return None


# ---------------------------------------------------------------------------------------------
# Fernet tokens (§5)
# ---------------------------------------------------------------------------------------------

FERNET_FRAMING = 57  # 1 version + 8 time + 16 IV + 32 HMAC


def decode_fernet(s: str) -> Decoded | None:
    """Decode the header of a ``gAAAAA…`` Fernet token and check its framing (§5.1).

    A token that stops before 57 bytes, or whose base64 is visibly cut (missing padding), is
    reported with problem ``truncated`` and its structure is not judged. Only a token that
    ends cleanly (padded, or needing no padding and passing the rule) can fail ``bad-structure``.
    """
    if not s.startswith("gAAAAA"):
        return None
    data, clean = _b64_prefix(s, url=True)
    if not clean or len(data) < 9 or data[0] != 0x80:
        return None
    n = len(data)
    ts = int.from_bytes(data[1:9], "big")
    problems: list[str] = []
    fields: list[tuple[str, str]] = [("version", "0x80"), ("minted", _iso_s(ts))]
    if n >= 25:
        fields.append(("IV", data[9:25].hex()))
    fields.append(("bytes", str(n)))
    stripped = s.rstrip("=")
    pad = len(s) - len(stripped)
    rem = len(stripped) % 4
    ok_rule = n - FERNET_FRAMING > 0 and (n - FERNET_FRAMING) % 16 == 0
    # A token "ends cleanly" when its padding is exactly right, or it needs none and passes the
    # rule; anything else was cut mid-way (quoted prefixes, logs that clip long strings).
    proper_pad = (rem == 2 and pad == 2) or (rem == 3 and pad == 1)
    full_length = n >= FERNET_FRAMING and (proper_pad or (rem == 0 and pad == 0 and ok_rule))
    if not full_length:
        problems.append("truncated")
        fields.append(("structure", "truncated: header only, structure not judged"))
    elif ok_rule:
        blocks = (n - FERNET_FRAMING) // 16
        fields.append(("ciphertext", f"{n - FERNET_FRAMING} bytes ({blocks} AES blocks)"))
        fields.append(("structure", "ok ((len-57) % 16 == 0)"))
    else:
        problems.append("bad-structure")
        fields.append(("ciphertext", f"{n - FERNET_FRAMING} bytes"))
        fields.append(
            ("structure", f"bad: (len-57) = {n - FERNET_FRAMING} is not a positive multiple of 16")
        )
    if not _in_window_s(ts):
        problems.append("implausible-time")
    genuine = all(p == "truncated" for p in problems)
    if genuine:
        meaning = (
            f"Fernet token minted {_iso_s(ts)}: encrypted reasoning/compaction blob of the "
            f"{_OPENAI_STACK}"
        )
        if "truncated" in problems:
            meaning += "; truncated, header only"
        return Decoded(
            detector="fernet",
            value=s,
            provider="openai",
            host=None,
            strength="strong",
            tag="verified",
            time=float(ts),
            fields=tuple(fields),
            meaning=meaning,
            problems=tuple(problems),
            shape="fernet",
        )
    what = []
    if "bad-structure" in problems:
        what.append(f"its length {n} breaks the (len-57) % 16 rule")
    if "implausible-time" in problems:
        what.append(f"its time {_date(ts)} is implausible")
    return Decoded(
        detector="fernet",
        value=s,
        provider=None,
        host=None,
        strength="weak",
        tag="verified",
        time=float(ts),
        fields=tuple(fields),
        meaning=f"gAAAAA… blob but {' and '.join(what)}: not a genuine Fernet token",
        problems=tuple(problems),
        shape="fernet",
    )


# ---------------------------------------------------------------------------------------------
# Anthropic ids (§6.1)
# ---------------------------------------------------------------------------------------------

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(B58_ALPHABET)}
_ANTHROPIC_BODY_RE = re.compile(r"01[1-9A-HJ-NP-Za-km-z]{20,24}")
#: prefix → (kind, host, tag); longest prefixes first so ``msg_bdrk_`` wins over ``msg_``.
_ANTHROPIC_PREFIXES: tuple[tuple[str, str, str | None, Tag], ...] = (
    ("toolu_bdrk_", "tool use", "bedrock", "verified"),
    ("toolu_vrtx_", "tool use", "vertex", "source"),
    ("msg_bdrk_", "message", "bedrock", "verified"),
    ("msg_vrtx_", "message", "vertex", "verified"),
    ("req_vrtx_", "request", "vertex", "source"),
    ("srvtoolu_", "server tool use", None, "verified"),
    ("toolu_", "tool use", None, "verified"),
    ("msg_", "message", None, "verified"),
    ("req_", "request", None, "verified"),
)
_ANTHROPIC_TOKEN_RE = re.compile(
    r"(?:msg|req|toolu|srvtoolu)_(?:bdrk_|vrtx_)?01[1-9A-HJ-NP-Za-km-z]{20,24}(?![A-Za-z0-9])"
)
_ANTHROPIC_CANDIDATE_RE = re.compile(r"_01[1-9A-HJ-NP-Za-km-z]{20}")


def _uuid_text(b: bytes) -> str:
    """Format 16 bytes as a canonical lowercase UUID."""
    h = b.hex()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def decode_anthropic_id(s: str) -> Decoded | None:
    """Decode an Anthropic ``msg_/req_/toolu_…`` id: ``01`` + base58, UUIDv7 when it is one (§6.1)."""
    hit = next((p for p in _ANTHROPIC_PREFIXES if s.startswith(p[0])), None)
    if hit is None:
        return None
    prefix, kind, host, tag = hit
    body = s[len(prefix) :]
    if _ANTHROPIC_BODY_RE.fullmatch(body) is None:
        return None
    value = 0
    for c in body[2:]:
        value = value * 58 + _B58_INDEX[c]
    where = {"bedrock": " via AWS Bedrock", "vertex": " via Google Vertex AI"}.get(host or "", "")
    fields: list[tuple[str, str]] = [("kind", kind)]
    if host:
        fields.append(("host", host))
    if value >= 1 << 128:
        fields.append(("body", "more than 128 bits: not a 16-byte id"))
        return Decoded(
            detector="anthropic-id",
            value=s,
            provider=None,
            host=None,
            strength="weak",
            tag="verified",
            fields=tuple(fields),
            meaning=f"{prefix} + 01 + base58 but the body needs more than 128 bits: not a genuine Anthropic id",
            problems=("bad-encoding",),
            shape=f"{prefix}01+base58",
        )
    raw = value.to_bytes(16, "big")
    ms = int.from_bytes(raw[0:6], "big")
    is_v7 = raw[6] >> 4 == 7 and raw[8] >> 6 == 0b10 and WINDOW_MIN_MS <= ms < WINDOW_END_MS
    strength: Strength = "strong"
    if tag == "source":
        strength = "medium"
    if is_v7:
        uuid_text = _uuid_text(raw)
        fields.append(("UUID", uuid_text))
        fields.append(("minted", _iso_ms(ms)))
        return Decoded(
            detector="anthropic-id",
            value=s,
            provider="anthropic",
            host=host,
            strength=strength,
            tag=tag,
            time=ms / 1000.0,
            fields=tuple(fields),
            meaning=f"Anthropic {kind} id{where} holding UUIDv7 {uuid_text}, minted {_iso_ms(ms)}",
            shape=f"{prefix}011C (UUIDv7)" if body.startswith("011") else f"{prefix}01 (UUIDv7)",
        )
    fields.append(("body", "random 128-bit"))
    return Decoded(
        detector="anthropic-id",
        value=s,
        provider="anthropic",
        host=host,
        strength=strength,
        tag=tag,
        fields=tuple(fields),
        meaning=f"Anthropic {kind} id{where} (01 + base58 of a random 128-bit value)",
        shape=f"{prefix}01+{len(body) - 2}",
    )


# ---------------------------------------------------------------------------------------------
# Anthropic signature protobuf (§6.3) and Gemini thought signatures (§7)
# ---------------------------------------------------------------------------------------------

_HEAD_B64_RE = re.compile(r"[A-Za-z0-9+/_\-]{16}")
_HEAD_CHARS = 64  # enough base64 for every envelope header check (48 bytes)


def _walk_fields(
    data: bytes, start: int, end: int
) -> tuple[list[tuple[int, int, int | bytes]], bool]:
    """Walk protobuf fields in ``data[start:end]``; return (fields, complete).

    Each field is (number, wire type, varint value or bytes). The walk stops at an unknown
    wire type or at the end of the data; ``complete`` is False when it stopped early.
    """
    out: list[tuple[int, int, int | bytes]] = []
    pos = start
    limit = min(end, len(data))
    while pos < limit:
        tag = _varint(data, pos)
        if tag is None:
            return out, False
        key, pos = tag
        number, wire = key >> 3, key & 7
        if number == 0:
            return out, False
        if wire == 0:
            v = _varint(data, pos)
            if v is None or v[1] > limit:
                return out, False
            out.append((number, 0, v[0]))
            pos = v[1]
        elif wire == 2:
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


def _anthropic_envelope(data: bytes) -> tuple[int, int, int, int] | None:
    """Locate the header of an Anthropic protobuf envelope.

    Returns (outer length, header start, header length, declared total bytes) or None when
    ``data`` does not start ``[08 xx] 12 <len> 0a <hlen> 08 <version> [18 02]``.
    """
    pos = 0
    if data[:1] == b"\x08":
        v = _varint(data, 1)
        if v is None or v[0] > 15:
            return None
        pos = v[1]
    if data[pos : pos + 1] != b"\x12":
        return None
    outer = _varint(data, pos + 1)
    if outer is None:
        return None
    outer_len, p = outer
    if data[p : p + 1] != b"\x0a":
        return None
    hl = _varint(data, p + 1)
    if hl is None:
        return None
    hlen, hstart = hl
    if hlen < 4 or hlen + (hstart - p) > outer_len or data[hstart : hstart + 1] != b"\x08":
        return None
    ver = _varint(data, hstart + 1)
    if ver is None or not 1 <= ver[0] <= 63:
        return None
    nxt = ver[1]
    # f3 = 2 follows the version on every known signature and web-search blob
    if nxt < len(data) and data[nxt : nxt + 2] != b"\x18\x02"[: len(data) - nxt]:
        return None
    declared = pos + 1 + _varint_size(outer_len) + outer_len
    return outer_len, hstart, hlen, declared


def decode_anthropic_signature(s: str) -> Decoded | None:
    """Decode an Anthropic thinking signature (or web-search ``encrypted_content``) header (§6.3).

    Reads the protobuf envelope, the header version (f1) and, from v12 on, the model name (f6).
    A header without the 64-byte f5 blob but with a uuid string (f4) is the server-tool (web
    search) envelope, reported under detector ``anthropic-web-search``. Truncated input is
    decoded as far as it goes.
    """
    if len(s) < 12 or not (s[0] == "E" or s.startswith("CAIS")):
        return None
    head, _ = _b64_prefix(s[:_HEAD_CHARS], url=False)
    if len(head) < 8 or _anthropic_envelope(head) is None:
        return None
    data, clean = _b64_prefix(s, url=False)
    env = _anthropic_envelope(data)
    if env is None:
        return None
    _outer_len, hstart, hlen, declared = env
    header, _ = _walk_fields(data, hstart, hstart + hlen)
    if not header or header[0][:2] != (1, 0) or not isinstance(header[0][2], int):
        return None
    version = header[0][2]
    truncated = len(data) < declared or not clean
    has_blob = any(n == 5 and isinstance(v, bytes) and len(v) == 64 for n, _w, v in header)
    has_f4 = any(n == 4 and w == 2 for n, w, _v in header)
    web = not has_blob and (has_f4 or hlen < 66)
    model: str | None = None
    fields: list[tuple[str, str]] = [
        ("kind", "web-search encrypted_content" if web else "thinking signature"),
        ("version", str(version)),
    ]
    for number, _wire, v in header[1:]:
        if isinstance(v, int):
            if number != 3:
                fields.append((f"f{number}", str(v)))
            continue
        text = _printable(v)
        if number == 6 and text:
            model = text
            fields.append(("model", text))
        elif number == 5 and len(v) == 64:
            continue
        elif text is not None:
            fields.append((f"f{number}", text))
        else:
            fields.append((f"f{number}", f"{len(v)} bytes"))
    fields.append(("header bytes", str(hlen)))
    fields.append(("total bytes", str(len(data))))
    problems: tuple[str, ...] = ()
    if truncated:
        problems = ("truncated",)
        fields.append(("declared bytes", str(declared)))
    if web:
        return Decoded(
            detector="anthropic-web-search",
            value=s,
            provider="anthropic",
            host=None,
            strength="strong",
            tag="verified",
            fields=tuple(fields),
            meaning=(
                f"Anthropic server-tool encrypted_content (web-search result envelope, header "
                f"v{version}): Anthropic, not a thinking signature and not a Fernet token"
            ),
            problems=problems,
            shape=f"anthropic-envelope-v{version}",
        )
    if model:
        meaning = f"Anthropic thinking signature (protobuf header v{version}) naming model {model}"
    elif version >= 12 and truncated:
        meaning = (
            f"Anthropic thinking signature (protobuf header v{version}; cut before the model field)"
        )
    else:
        meaning = f"Anthropic thinking signature (protobuf header v{version}, no model field)"
    return Decoded(
        detector="anthropic-signature",
        value=s,
        provider="anthropic",
        host=None,
        strength="strong",
        tag="verified",
        fields=tuple(fields),
        meaning=meaning,
        problems=problems,
        shape=f"signature-v{version}",
    )


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


# ---------------------------------------------------------------------------------------------
# Time-bearing generic ids: UUIDv7 and ULID
# ---------------------------------------------------------------------------------------------

_UUID7_RE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}"
)
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CROCKFORD_INDEX = {c: i for i, c in enumerate(_CROCKFORD)} | {
    c.lower(): i for i, c in enumerate(_CROCKFORD)
}
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


# ---------------------------------------------------------------------------------------------
# Tool-call ids (§8.6)
# ---------------------------------------------------------------------------------------------

_CALL24_RE = re.compile(r"call_[A-Za-z0-9]{24}")
_CALL_DEEPSEEK_RE = re.compile(r"call_\d{2}_[A-Za-z0-9]{24}")
_CALL32HEX_RE = re.compile(r"call_[0-9a-f]{32}")
_CALL_XAI_RE = re.compile(r"call_\d{8}")
_KIMI_RE = re.compile(r"functions\.[A-Za-z0-9_\-.]+:\d+")
_VLLM_RE = re.compile(r"chatcmpl-tool-[0-9a-f]{16,32}")
_TOOLUSE_RE = re.compile(r"tooluse_[A-Za-z0-9_\-]{10,}")
_NINE_RE = re.compile(r"[A-Za-z0-9]{9}")
_GEMINI_CLI_RE = re.compile(r"[A-Za-z0-9_\-.]+-(\d{13})-[0-9a-f]{6,}")


def _tool(
    s: str,
    shape: str,
    provider: str | None,
    strength: Strength,
    tag: Tag,
    meaning: str,
    host: str | None = None,
    time: float | None = None,
    extra: tuple[tuple[str, str], ...] = (),
) -> Decoded:
    """Build a ``tool-id`` Decoded."""
    return Decoded(
        detector="tool-id",
        value=s,
        provider=provider,
        host=host,
        strength=strength,
        tag=tag,
        time=time,
        fields=(("class", shape), *extra),
        meaning=meaning,
        shape=shape,
    )


def _classify_tool_id(s: str, strong_only: bool) -> Decoded | None:
    """Classify a tool-call id; with ``strong_only`` skip the classes that need an id key."""
    n = len(s)
    if s.startswith("call_"):
        if n == 29 and _CALL24_RE.fullmatch(s):
            return _tool(
                s,
                "call_+24",
                "openai",
                "strong",
                "verified",
                f"call_ + 24 alphanumerics: {_OPENAI_STACK}",
            )
        if n == 37 and _CALL32HEX_RE.fullmatch(s):
            return _tool(
                s,
                "call_+32hex",
                None,
                "medium",
                "source",
                "call_ + 32 hex (a uuid4): synthesized by a self-hosted server or harness, not OpenAI",
            )
        if n == 32 and _CALL_DEEPSEEK_RE.fullmatch(s):
            return _tool(
                s,
                "call_NN_+24",
                "deepseek",
                "strong",
                "verified",
                "call_<NN>_ + 24 alphanumerics: DeepSeek",
            )
        if n == 13 and not strong_only and _CALL_XAI_RE.fullmatch(s):
            return _tool(s, "call_+8digits", "xai", "weak", "verified", "call_ + 8 digits: xAI")
        return None
    if s.startswith(("toolu_", "srvtoolu_")):
        d = decode_anthropic_id(s)
        if d is None or d.provider is None:
            return None
        shape = "toolu_bdrk_01" if s.startswith("toolu_bdrk_") else s.split("_01", 1)[0] + "_01"
        return _tool(s, shape, "anthropic", d.strength, d.tag, d.meaning, host=d.host)
    if s.startswith("tooluse_"):
        if _TOOLUSE_RE.fullmatch(s):
            return _tool(
                s,
                "tooluse_",
                "anthropic",
                "medium",
                "source",
                "tooluse_ id: Bedrock Converse / Kiro route (third-party claim)",
                host="bedrock",
            )
        return None
    if s.startswith("chatcmpl-tool-"):
        if _VLLM_RE.fullmatch(s):
            return _tool(
                s,
                "chatcmpl-tool-hex",
                None,
                "medium",
                "source",
                "chatcmpl-tool-<hex>: vLLM's default tool-call id",
            )
        return None
    if strong_only:
        return None
    if s.startswith("functions."):
        if _KIMI_RE.fullmatch(s):
            return _tool(
                s,
                "functions.NAME:N",
                "moonshot",
                "strong",
                "source",
                "functions.<name>:<idx>: Kimi's native tool-call id (the host is open)",
            )
        return None
    if n == 9:
        if _NINE_RE.fullmatch(s) is None:
            return None
        has_upper = any(c.isupper() for c in s)
        has_lower = any(c.islower() for c in s)
        if has_upper and has_lower:
            return _tool(
                s,
                "9-char mixed case",
                "mistral",
                "weak",
                "verified",
                "9 mixed-case alphanumerics: Mistral-like",
            )
        if has_lower and not has_upper:
            return _tool(
                s,
                "9-char lowercase",
                "groq",
                "weak",
                "verified",
                "9 lowercase alphanumerics: Groq-like",
            )
        return None
    if n >= 22 and "-" in s:
        m = _GEMINI_CLI_RE.fullmatch(s)
        if m is None:
            return None
        ms = int(m.group(1))
        if not WINDOW_MIN_MS <= ms < WINDOW_END_MS:
            return None
        return _tool(
            s,
            "name-ms-hex",
            "google",
            "medium",
            "source",
            f"<name>-<ms>-<hex>: synthesized by Gemini CLI at {_iso_ms(ms)}",
            time=ms / 1000.0,
            extra=(("minted", _iso_ms(ms)),),
        )
    return None


def classify_tool_id(s: str) -> Decoded | None:
    """Classify a tool-call id by the §8.6 table (apply to values of id-bearing keys)."""
    return _classify_tool_id(s, strong_only=False)


# ---------------------------------------------------------------------------------------------
# Model paths, key presence, signature values
# ---------------------------------------------------------------------------------------------

_FIREWORKS_PREFIX = "accounts/fireworks/models/"
_FIREWORKS_RE = re.compile(r"accounts/fireworks/models/([A-Za-z0-9._\-]+)")


def decode_model_path(s: str) -> Decoded | None:
    """Recognise a Fireworks model path ``accounts/fireworks/models/<m>`` (§8.2)."""
    if not s.startswith(_FIREWORKS_PREFIX):
        return None
    m = _FIREWORKS_RE.fullmatch(s)
    if m is None:
        return None
    model = m.group(1)
    return Decoded(
        detector="fireworks-model",
        value=s,
        provider=None,
        host="fireworks",
        strength="medium",
        tag="source",
        fields=(("model", model),),
        meaning=f"Fireworks AI model path serving {model}",
        shape="accounts/fireworks/models/",
    )


def _key(
    key: str,
    provider: str | None,
    host: str | None,
    strength: Strength,
    tag: Tag,
    meaning: str,
    detail: str = "",
) -> Decoded:
    """Build a ``key`` Decoded (the value is the key name)."""
    fields: tuple[tuple[str, str], ...] = (("key", key),)
    if detail:
        fields = (*fields, ("value", detail))
    return Decoded(
        detector="key",
        value=key,
        provider=provider,
        host=host,
        strength=strength,
        tag=tag,
        fields=fields,
        meaning=meaning,
        shape=key,
    )


_PRESENCE_KEYS = frozenset(
    {
        "content_filters",
        "prompt_filter_results",
        "content_filter_results",
        "inference_geo",
        "cache_creation",
        "service_tier",
        "prompt_cache_hit_tokens",
        "prompt_cache_miss_tokens",
        "x_groq",
        "cost_in_usd_ticks",
        "num_sources_used",
        "raw_output",
        "reasoning_content",
    }
)
_TIER_ANTHROPIC = frozenset({"standard", "batch"})
_TIER_OPENAI = frozenset({"default", "scale"})
_TIER_GROQ = frozenset({"on_demand", "performance"})


def decode_key(key: str, value: object) -> Decoded | None:
    """Turn the presence of a provider-specific key into evidence (§12.1 point 4).

    ``value`` is the key's JSON value; it matters for nulls (Fireworks' Anthropic-compatible
    endpoint sends ``null`` where Anthropic has values) and for ``service_tier``.
    """
    if key not in _PRESENCE_KEYS:
        return None
    if key == "content_filters":
        return _key(
            key,
            None,
            "azure",
            "strong",
            "verified",
            "content_filters on a Responses object: served by Azure OpenAI",
        )
    if key in ("prompt_filter_results", "content_filter_results"):
        return _key(
            key,
            None,
            "azure",
            "strong",
            "verified",
            f"{key}: Azure content filtering (any model on Azure, DeepSeek included)",
        )
    if key == "inference_geo":
        if value is None:
            return _key(
                key,
                None,
                None,
                "weak",
                "source",
                "inference_geo is null, as on Fireworks' Anthropic-compatible endpoint: no Anthropic weight",
                "null",
            )
        if isinstance(value, str):
            return _key(
                key,
                "anthropic",
                None,
                "medium",
                "source",
                "usage.inference_geo: Anthropic first-party API",
                value,
            )
        return None
    if key == "cache_creation":
        if value is None:
            return _key(
                key,
                None,
                None,
                "weak",
                "source",
                "cache_creation is null, as on Fireworks' Anthropic-compatible endpoint: no Anthropic weight",
                "null",
            )
        if not isinstance(value, bool | int | float | list):
            # the nested object (a raw-bytes scanner may pass a placeholder instead of the dict)
            return _key(
                key,
                "anthropic",
                None,
                "medium",
                "source",
                "nested usage.cache_creation object: Anthropic first-party API",
            )
        return None
    if key == "service_tier":
        if not isinstance(value, str):
            return None  # null (OpenAI stream events, Fireworks' Anthropic endpoint): no weight
        if value in _TIER_ANTHROPIC:
            return _key(
                key,
                "anthropic",
                None,
                "weak",
                "guess",
                f"service_tier {value!r}: Anthropic's tier names",
                value,
            )
        if value in _TIER_OPENAI:
            return _key(
                key,
                "openai",
                None,
                "weak",
                "guess",
                f"service_tier {value!r}: OpenAI's tier names",
                value,
            )
        if value in _TIER_GROQ:
            return _key(
                key,
                "groq",
                None,
                "weak",
                "guess",
                f"service_tier {value!r}: Groq's tier names",
                value,
            )
        return _key(
            key,
            None,
            None,
            "weak",
            "guess",
            f"service_tier {value!r}: shared by Anthropic, OpenAI and Groq",
            value,
        )
    if key in ("prompt_cache_hit_tokens", "prompt_cache_miss_tokens"):
        return _key(key, "deepseek", None, "strong", "verified", f"usage.{key}: DeepSeek")
    if key == "x_groq":
        return _key(key, "groq", None, "strong", "verified", "x_groq object: Groq")
    if key in ("cost_in_usd_ticks", "num_sources_used"):
        return _key(key, "xai", None, "medium", "verified", f"usage.{key}: xAI")
    if key == "raw_output":
        return _key(
            key, None, "fireworks", "medium", "source", "per-choice raw_output: Fireworks AI"
        )
    # reasoning_content
    return _key(
        key,
        None,
        None,
        "weak",
        "verified",
        "reasoning_content: OpenAI-compatible reasoning field (Kimi, DeepSeek, xAI, …), not OpenAI itself",
    )


_CLAUDE_HASH = "claude#"
MUSE_TAG = "gpt_responses_v1"


def decode_signature_value(s: str) -> Decoded | None:
    """Decode the value of a ``signature``/``thoughtSignature`` key (empty ⇒ unsigned reasoning)."""
    if s.strip() == "":
        return Decoded(
            detector="empty-signature",
            value=s,
            provider=None,
            host=None,
            strength="medium",
            tag="source",
            fields=(("signature", "empty"),),
            meaning="reasoning present but unsigned: not Anthropic/Gemini output; self-hosted or re-wrapped",
            shape="empty-signature",
        )
    if s.startswith(_CLAUDE_HASH):
        return Decoded(
            detector="anthropic-signature",
            value=s,
            provider="anthropic",
            host="vertex",
            strength="medium",
            tag="source",
            fields=(("kind", "claude# signature"),),
            meaning="claude#… signature: Claude via Google Vertex AI / Antigravity (third-party claim)",
            shape="claude#",
        )
    d = decode_anthropic_signature(s) or decode_gemini_thought_signature(s)
    if d is not None:
        return d
    if "gAAAAA" in s:
        for tok in _fernet_tokens(s):
            f = decode_fernet(tok)
            if f is not None:
                if MUSE_TAG in s:
                    note = f"{f.meaning} (wrapped in Muse's {MUSE_TAG} label)"
                    return _replace_meaning(f, note)
                return f
    return None


def _replace_meaning(d: Decoded, meaning: str) -> Decoded:
    """Return ``d`` with a new meaning (Decoded is frozen)."""
    return Decoded(
        detector=d.detector,
        value=d.value,
        provider=d.provider,
        host=d.host,
        strength=d.strength,
        tag=d.tag,
        time=d.time,
        fields=d.fields,
        meaning=meaning,
        problems=d.problems,
        shape=d.shape,
    )


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

_FERNET_RUN_RE = re.compile(r"gAAAAA[A-Za-z0-9_\-]{6,}={0,2}")
_B64URL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_MAX_EMBEDDED = 64


def _fernet_tokens(s: str) -> list[str]:
    """Find ``gAAAAA…`` tokens that start a base64url run (or follow the Muse tag) inside ``s``."""
    out: list[str] = []
    for m in _FERNET_RUN_RE.finditer(s):
        start = m.start()
        if start > 0 and s[start - 1] in _B64URL_CHARS and not s.endswith(MUSE_TAG, 0, start):
            continue
        out.append(m.group(0))
        if len(out) >= _MAX_EMBEDDED:
            break
    return out


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


_B64_INDEX = {
    c: i for i, c in enumerate(string.ascii_uppercase + string.ascii_lowercase + "0123456789+/")
}
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


def _embedded_ids(
    value: str, candidates: re.Pattern[str], token: re.Pattern[str], anthropic: bool
) -> list[Decoded]:
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
    decode_signature_value,
)
