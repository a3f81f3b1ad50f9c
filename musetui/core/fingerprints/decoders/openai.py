"""OpenAI decoders: Responses item ids (§4), Chat Completions ids and system fingerprints, Fernet tokens (§5)."""

from __future__ import annotations

import re

from musetui.core.fingerprints import shapes
from musetui.core.fingerprints.decoders._common import (
    _OPENAI_STACK,
    OPENAI_TIME_MAX,
    OPENAI_TIME_MIN,
    _b64_head,
    _date,
    _in_window_s,
    _iso_s,
)
from musetui.core.fingerprints.types import Decoded, Strength, Tag

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
_OPENAI_ID_RE = re.compile(rf"({_OPENAI_PREFIX_ALT})_([0-9a-f]{{50}}|[0-9a-f]{{48}}|[0-9a-f]{{32}})")
#: Anchored at a computed start: the prefix, the body, and no id character after it.
_OPENAI_TOKEN_RE = re.compile(rf"(?:{_OPENAI_PREFIX_ALT})_(?:[0-9a-f]{{50}}|[0-9a-f]{{48}})(?![0-9A-Za-z])")
#: Literal-anchored candidate finder (fast): an ``_`` followed by 48 hex.
_OPENAI_CANDIDATE_RE = re.compile(r"_[0-9a-f]{48}")
#: Markers seen on genuine ids: ``81xx`` (2025-2026, OpenAI and Azure), ``87d1`` (2026-08/09 Codex
#: lines) and ``87d2`` (api.openai.com, 2026-08, 35 ruby_llm captures whose ids decode to their own
#: second). A new50 id whose key, store byte and time check out but whose marker is new is still
#: the stack's (markers change over time): medium, never an imitation.
_MARKER_RE = re.compile(r"81[0-9a-f]{2}|87d[12]")
#: A scrubbed or hand-written stand-in: the id's body is zeros save at most four digits
#: (``resp_01000…``, ``msg_000…``). It earns nothing and raises nothing, as a placeholder header.
_PLACEHOLDER_NONZERO = 4
_MARKER_CODEX = "87d1"


#: What an id body holds and what its checks found: layout, time, marker, store byte, the
#: fields to show, the failed checks and their reasons.
_ItemId = tuple[str, int, str, str, list[tuple[str, str]], list[str], list[str]]


def _read_item_id(item_type: str, body: str) -> _ItemId:
    """Read the layout (new50, legacy48, old32) of an id body, its fields and its failed checks."""
    if len(body) == 50:
        layout, ts, marker, store = "new50", int(body[18:26], 16), body[30:34], body[16:18]
    else:
        layout, ts, marker, store = ("legacy48" if len(body) == 48 else "old32"), int(body[0:8], 16), body[12:16], ""
    problems: list[str] = []
    reasons: list[str] = []
    fields = [("layout", layout), ("item type", item_type), ("minted", _iso_s(ts))]
    if not OPENAI_TIME_MIN <= ts <= OPENAI_TIME_MAX:
        problems.append("implausible-time")
        reasons.append(f"time {_date(ts)} is implausible")
    if marker == _MARKER_CODEX:
        fields.append(("marker", f"{marker} (seen only in 2026-08/09 Codex lines: medium)"))
    elif _MARKER_RE.fullmatch(marker) is not None:
        fields.append(("marker", marker))
    elif layout == "new50":
        fields.append(("marker", f"{marker} (not seen before)"))
    else:
        fields.append(("marker", marker))
        problems.append("bad-marker")
        reasons.append(f"marker {marker} is not 81xx")
    if layout == "new50":
        if store == "00" or store == "01":
            fields.append(("store byte", f"{store} (store:{'true' if store == '00' else 'false'})"))
        else:
            fields.append(("store byte", f"{store} (not 00/01)"))
            problems.append("bad-store-byte")
            reasons.append(f"store byte {store} is not 00/01")
        fields.append(("conversation key", body[0:16]))
    elif layout == "legacy48":
        fields.append(("response suffix", body[32:48]))
    return layout, ts, marker, store, fields, problems, reasons


def _placeholder_id(s: str, prefix: str, item_type: str) -> Decoded:
    """A stand-in id (zeros save a few digits): shown, with no time, no credit and no flag."""
    return Decoded(
        detector="openai-item-id",
        value=s,
        provider=None,
        host=None,
        strength="weak",
        tag="verified",
        time=None,
        fields=(("item type", item_type), ("body", "zeros save at most 4 digits")),
        meaning=f"{prefix}_ id that is a placeholder (a scrubber's or a test author's, not the service's): no credit",
        problems=("placeholder",),
        shape="placeholder",
    )


_STORE_NOTES = {"00": ", store byte 00 (the request had store:true)", "01": ", store byte 01 (store:false)"}


def decode_openai_item_id(s: str) -> Decoded | None:
    """Decode an OpenAI Responses id (legacy48, new50 or the old 32-hex form) and judge it (§4.1).

    An id whose time, marker or store byte fails the checks is reported as an imitation
    (provider None, weak), not dropped: imitations are evidence too (§11).
    """
    m = _OPENAI_ID_RE.fullmatch(s)
    if m is None:
        return None
    prefix, body = m.group(1), m.group(2)
    item_type = OPENAI_ITEM_TYPES[prefix]
    if len(body) - body.count("0") <= _PLACEHOLDER_NONZERO:
        return _placeholder_id(s, prefix, item_type)
    layout, ts, marker, store, fields, problems, reasons = _read_item_id(item_type, body)
    if problems:
        if layout == "old32":
            return None  # the optional 32-hex form is only accepted when it checks out [guess]
        who = (
            "imitation (LM Studio style)"
            if prefix == "resp" and layout == "legacy48"
            else "imitation (re-implemented or hand-written id)"
        )
        meaning = f"{prefix}_ + {len(body)} hex but {' and '.join(reasons)}: {who}"
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
    known = _MARKER_RE.fullmatch(marker) is not None
    strength: Strength = "medium" if not known or marker == _MARKER_CODEX or layout == "old32" else "strong"
    tag: Tag = "guess" if layout == "old32" else "verified"
    meaning = (
        f"OpenAI Responses {item_type} id ({layout}) minted {_iso_s(ts)}, marker {marker}"
        f"{_STORE_NOTES.get(store, '')}: {_OPENAI_STACK}"
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
# Chat Completions ids and system_fingerprint (§4.5, §8): rows of the id-shape table
# ---------------------------------------------------------------------------------------------


def _by_table(detector: str, s: str) -> Decoded | None:
    """The first row of the id-shape table (``shapes.toml``) for ``detector`` that ``s`` fits."""
    for row in shapes.table().of(detector):
        got = row.decode(s)
        if got is not None:
            return got
    return None


def decode_chatcmpl_id(s: str) -> Decoded | None:
    """Classify a Chat Completions ``chatcmpl-`` id by shape (§4.5, §8.2, §8.4); opaque, no time."""
    if not s.startswith("chatcmpl-") or s.startswith("chatcmpl-tool-"):
        return None
    return _by_table("chatcmpl-id", s)


def classify_system_fingerprint(s: str) -> Decoded | None:
    """Classify a ``system_fingerprint`` value; only the unusual shapes are informative (§4.5)."""
    return _by_table("system-fingerprint", s)


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
    data, n, clean = _b64_head(s, url=True, nbytes=25)  # the header is all that is read
    if not clean or n < 9 or data[0] != 0x80:
        return None
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
        fields.append(("structure", f"bad: (len-57) = {n - FERNET_FRAMING} is not a positive multiple of 16"))
    if not _in_window_s(ts):
        problems.append("implausible-time")
    genuine = all(p == "truncated" for p in problems)
    if genuine:
        meaning = f"Fernet token minted {_iso_s(ts)}: encrypted reasoning/compaction blob of the {_OPENAI_STACK}"
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
