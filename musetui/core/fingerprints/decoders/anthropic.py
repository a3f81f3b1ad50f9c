"""Anthropic decoders: message/tool/request ids (§6.1) and thinking-signature protobuf envelopes (§6.3)."""

from __future__ import annotations

import re

from musetui.core.fingerprints.decoders._common import (
    _HEAD_CHARS,
    _VARINT_MAX,
    WINDOW_END_MS,
    WINDOW_MIN_MS,
    _b64_head,
    _iso_ms,
    _printable,
    _varint,
    _varint_size,
    _walk_fields,
)
from musetui.core.fingerprints.types import Decoded, Strength, Tag

# ---------------------------------------------------------------------------------------------
# Anthropic ids (§6.1)
# ---------------------------------------------------------------------------------------------

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(B58_ALPHABET)}
#: Each base58 character's byte to its digit value (``bytes.translate``).
_B58_DIGITS = bytes.maketrans(B58_ALPHABET.encode(), bytes(range(58)))
_ANTHROPIC_BODY_RE = re.compile(r"01[1-9A-HJ-NP-Za-km-z]{20,24}")
#: An id prefix's row: (prefix, kind, host, tag).
AnthropicPrefix = tuple[str, str, "str | None", Tag]
#: prefix → (kind, host, tag); longest prefixes first so ``msg_bdrk_`` wins over ``msg_``.
_ANTHROPIC_PREFIXES: tuple[AnthropicPrefix, ...] = (
    ("toolu_bdrk_", "tool use", "bedrock", "verified"),
    ("toolu_vrtx_", "tool use", "vertex", "verified"),
    ("msg_bdrk_", "message", "bedrock", "verified"),
    ("msg_vrtx_", "message", "vertex", "verified"),
    ("req_vrtx_", "request", "vertex", "source"),
    ("srvtoolu_", "server tool use", None, "verified"),
    ("toolu_", "tool use", None, "verified"),
    ("msg_", "message", None, "verified"),
    ("req_", "request", None, "verified"),
)
#: The newer Bedrock message id: ``msg_bdrk_`` + 32 lowercase alphanumerics (§10.1).
_BDRK32_RE = re.compile(r"[a-z0-9]{32}")
_ANTHROPIC_TOKEN_RE = re.compile(
    r"(?:msg|req|toolu|srvtoolu)_(?:bdrk_|vrtx_)?01[1-9A-HJ-NP-Za-km-z]{20,24}(?![A-Za-z0-9])"
)
_ANTHROPIC_CANDIDATE_RE = re.compile(r"_01[1-9A-HJ-NP-Za-km-z]{20}")


_WHERE = {"bedrock": " via AWS Bedrock", "vertex": " via Google Vertex AI"}


#: The plain prefixes by their first segment (``msg`` …), and the routed ones by their whole prefix.
_PLAIN = {row[0][:-1]: row for row in _ANTHROPIC_PREFIXES if row[0].count("_") == 1}
_ROUTED = {row[0]: row for row in _ANTHROPIC_PREFIXES if row[0].count("_") == 2}
#: The bits of a 128-bit value: its UUIDv7 millisecond time (the top 48), version and variant.
_TIME_SHIFT = 80


def decode_anthropic_id(s: str) -> Decoded | None:
    """Decode an Anthropic ``msg_/req_/toolu_…`` id: ``01`` + base58, UUIDv7 when it is one (§6.1).

    (The common path, a genuine id, calls one helper: this runs for every candidate id of a scan.)
    """
    i = s.find("_")
    hit = _PLAIN.get(s[:i]) if i > 0 else None  # the first of the longest-first prefixes ``s`` starts with
    if hit is None:
        return None
    route = s[i + 1 : i + 6]
    if route == "bdrk_" or route == "vrtx_":
        hit = _ROUTED.get(s[: i + 6], hit)
    prefix, kind, _host, _tag = hit
    body = s[len(prefix) :]
    if prefix == "msg_bdrk_" and len(body) == 32 and _BDRK32_RE.fullmatch(body):
        return _bedrock32_id(s, kind)
    if _ANTHROPIC_BODY_RE.fullmatch(body) is None:
        return None
    return decode_anthropic_body(s, hit, body)


def anthropic_prefix(prefix: str) -> AnthropicPrefix | None:
    """The row of a plain prefix (``msg``, ``req``, ``toolu``, ``srvtoolu``), for :func:`decode_anthropic_body`."""
    return _PLAIN.get(prefix)


def decode_anthropic_body(s: str, hit: AnthropicPrefix, body: str) -> Decoded | None:
    """:func:`decode_anthropic_id` of ``s``, past its checks: ``hit`` is its prefix's row and ``body`` (``01`` + 20-24 base58) the rest.

    (The raw pass calls it directly for an id its regex matched as such behind a plain prefix:
    the same checks, already made.)
    """
    prefix, kind, host, tag = hit
    digits = body.encode("ascii").translate(_B58_DIGITS)  # the base58 digits after "01", two at a time
    n = len(digits)
    if n % 2:
        value = digits[2]
        pairs = iter(digits[3:])
    else:
        value = 0
        pairs = iter(digits[2:])
    for hi, lo in zip(pairs, pairs, strict=False):  # (an even count: strict would only cost)
        value = value * 3364 + hi * 58 + lo
    if value >> 128:
        fields: list[tuple[str, str]] = [("kind", kind), ("host", host)] if host else [("kind", kind)]
        if n == 26 and body == body.lower():
            return None  # a lowercase ULID behind req_ (Groq's x_groq.id), not base58
        return _not_16_bytes(s, prefix, fields)
    ms = value >> _TIME_SHIFT
    strength: Strength = "medium" if tag == "source" else "strong"
    where = _WHERE.get(host, "") if host else ""
    if (value >> 76) & 0xF == 7 and (value >> 62) & 3 == 2 and WINDOW_MIN_MS <= ms < WINDOW_END_MS:
        h = f"{value:032x}"
        uuid_text = f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
        minted = _iso_ms(ms)
        return Decoded(
            "anthropic-id", s, "anthropic", host, strength, tag, ms / 1000.0,
            (("kind", kind), ("host", host), ("UUID", uuid_text), ("minted", minted)) if host
            else (("kind", kind), ("UUID", uuid_text), ("minted", minted)),
            f"Anthropic {kind} id{where} holding UUIDv7 {uuid_text}, minted {minted}",
            (), f"{prefix}011C (UUIDv7)" if body[2] == "1" else f"{prefix}01 (UUIDv7)",
        )  # fmt: skip
    return Decoded(
        "anthropic-id", s, "anthropic", host, strength, tag, None,
        (("kind", kind), ("host", host), ("body", "random 128-bit")) if host
        else (("kind", kind), ("body", "random 128-bit")),
        f"Anthropic {kind} id{where} (01 + base58 of a random 128-bit value)", (), f"{prefix}01+{n - 2}",
    )  # fmt: skip


def _not_16_bytes(s: str, prefix: str, fields: list[tuple[str, str]]) -> Decoded:
    """An id shaped like Anthropic's whose base58 body needs more than 128 bits: an imitation."""
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


def _bedrock32_id(s: str, kind: str) -> Decoded:
    """The newer Bedrock message id: ``msg_bdrk_`` + 32 lowercase alphanumerics (§10.1)."""
    return Decoded(
        detector="anthropic-id",
        value=s,
        provider="anthropic",
        host="bedrock",
        strength="strong",
        tag="source",
        fields=(("kind", kind), ("host", "bedrock"), ("body", "32 lowercase alphanumerics")),
        meaning="Anthropic message id minted by AWS Bedrock (msg_bdrk_ + 32 lowercase alphanumerics, the newer shape)",
        shape="msg_bdrk_+32",
    )


# ---------------------------------------------------------------------------------------------
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
    # Bedrock-served signatures carry f2 = 1 between the version and f3 (§10.1)
    if data[nxt : nxt + 2] == b"\x10\x01":
        nxt += 2
    # f3 = 2 follows on every known signature and web-search blob
    if nxt < len(data) and data[nxt : nxt + 2] != b"\x18\x02"[: len(data) - nxt]:
        return None
    declared = pos + 1 + _varint_size(outer_len) + outer_len
    return outer_len, hstart, hlen, declared


#: The bytes of a signature decoded at first (its envelope's and, but for a long header, its header's).
_SIG_HEAD_BYTES = 192
#: The bytes the envelope check reads (the decode of the first :data:`_HEAD_CHARS` characters).
_ENVELOPE_BYTES = _HEAD_CHARS // 4 * 3


def decode_anthropic_signature(s: str) -> Decoded | None:
    """Decode an Anthropic thinking signature (or web-search ``encrypted_content``) header (§6.3).

    Reads the protobuf envelope, the header version (f1) and, from v12 on, the model name (f6).
    A header without the 64-byte f5 blob but with a uuid string (f4) is the server-tool (web
    search) envelope, reported under detector ``anthropic-web-search``. Truncated input is
    decoded as far as it goes.
    """
    if len(s) < 12 or not (s[0] == "E" or s.startswith("CAIS")):
        return None
    # One decode of the value's first bytes serves both reads: the envelope's (they end within
    # the first 48 bytes: the head's envelope is the whole value's) and the header's (all that
    # is read, and the varints of its last field, which may run past it). A longer prefix of the
    # same decode reads alike: what it adds lies past both reads.
    data, total, clean = _b64_head(s, False, _SIG_HEAD_BYTES)
    head = data[:_ENVELOPE_BYTES]
    env = _anthropic_envelope(head) if len(head) >= 8 else None
    if env is None:
        return None
    _outer_len, hstart, hlen, declared = env
    if hstart + hlen + 2 * _VARINT_MAX > _SIG_HEAD_BYTES:
        data = _b64_head(s, False, hstart + hlen + 2 * _VARINT_MAX)[0]
    header, _ = _walk_fields(data, hstart, hstart + hlen)
    if not header or header[0][:2] != (1, 0) or not isinstance(header[0][2], int):
        return None
    version = header[0][2]
    truncated = total < declared or not clean
    has_blob = has_f4 = False
    for n, w, v in header:
        if n == 5 and isinstance(v, bytes) and len(v) == 64:
            has_blob = True
        elif n == 4 and w == 2:
            has_f4 = True
    web = not has_blob and (has_f4 or hlen < 66)
    fields: list[tuple[str, str]] = [
        ("kind", "web-search encrypted_content" if web else "thinking signature"),
        ("version", str(version)),
    ]
    model, bedrock = _header_fields(header, fields)
    fields.append(("header bytes", str(hlen)))
    fields.append(("total bytes", str(total)))
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
    return Decoded(
        detector="anthropic-signature",
        value=s,
        provider="anthropic",
        host="bedrock" if bedrock else None,
        strength="strong",
        tag="verified",
        fields=tuple(fields),
        meaning=_signature_meaning(version, model, truncated, bedrock),
        problems=problems,
        shape=f"signature-v{version}",
    )


def _header_fields(
    header: list[tuple[int, int, int | bytes]], fields: list[tuple[str, str]]
) -> tuple[str | None, bool]:
    """Add the header's fields after the version to ``fields``; the model it names (f6) and the Bedrock mark (f2 = 1)."""
    model: str | None = None
    bedrock = False
    for number, _wire, v in header[1:]:
        if isinstance(v, int):
            if number == 2 and v == 1:
                bedrock = True
                fields.append(("f2", "1 (the Bedrock-served header variant)"))
            elif number != 3:
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
    return model, bedrock


def _signature_meaning(version: int, model: str | None, truncated: bool, bedrock: bool) -> str:
    """What a thinking signature's header says: its version, the model it names, the Bedrock mark."""
    if model:
        meaning = f"Anthropic thinking signature (protobuf header v{version}) naming model {model}"
    elif version >= 12 and truncated:
        meaning = f"Anthropic thinking signature (protobuf header v{version}; cut before the model field)"
    else:
        meaning = f"Anthropic thinking signature (protobuf header v{version}, no model field)"
    if bedrock:
        meaning += (
            "; header field 2 = 1, seen on every Bedrock-served signature examined and on no "
            "api.anthropic.com one (host bedrock: [guess] beyond those captures)"
        )
    return meaning
