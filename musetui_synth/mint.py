"""Seeded minting of provider-shaped ids, tokens and signatures that decode correctly.

Every function takes a ``random.Random`` so that generated data is reproducible. The
layouts follow FINGERPRINTS.md: OpenAI Responses item ids (§4.1), Fernet tokens (§5.1),
Anthropic ids (§6.1) and thinking signatures (§6.3). Stdlib only.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from dataclasses import dataclass

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
ALNUM = string.ascii_letters + string.digits

#: new50 markers observed on genuine OpenAI and Azure ids (§4.4).
NEW50_MARKERS: tuple[str, ...] = (
    "8190",
    "8191",
    "8192",
    "8193",
    "8194",
    "8195",
    "8196",
    "8197",
    "8198",
    "819d",
    "819e",
    "819f",
    "81a1",
    "81a3",
)
#: legacy48 markers observed (§4.4).
LEGACY48_MARKERS: tuple[str, ...] = (
    "8190",
    "8191",
    "8193",
    "8194",
    "8195",
    "8196",
    "8197",
    "8199",
    "819b",
    "819c",
    "81a1",
    "81a2",
    "81a3",
)
#: ids minted before this unix second use the legacy48 layout (§4.1: new50 from 2025-09-30).
NEW50_SINCE = 1_759_190_400

#: Signature header version per model (§6.3 table; opus-4-7 follows the v12 layout).
SIGNATURE_VERSIONS: dict[str, int] = {
    "claude-sonnet-4-6": 12,
    "claude-opus-4-7": 12,
    "claude-opus-4-6": 12,
    "claude-haiku-4-5-20251001": 13,
    "claude-opus-5": 16,
}


def rand_hex(rng: random.Random, n: int) -> str:
    """Return ``n`` random lowercase hex digits."""
    return format(rng.getrandbits(4 * n), f"0{n}x")


def rand_alnum(rng: random.Random, n: int) -> str:
    """Return ``n`` random characters from ``[A-Za-z0-9]``."""
    return "".join(rng.choices(ALNUM, k=n))


def b58_fixed(value: int, width: int = 22) -> str:
    """Encode a non-negative integer in base58btc, left-padded with ``1`` (digit zero)."""
    out: list[str] = []
    while value:
        value, rem = divmod(value, 58)
        out.append(B58_ALPHABET[rem])
    return "".join(reversed(out)).rjust(width, "1")


# ---------------------------------------------------------------------------
# UUIDs


def uuid4(rng: random.Random) -> str:
    """Return a random version-4 UUID string."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def uuid4_hex(rng: random.Random) -> str:
    """Return a random version-4 UUID as 32 lowercase hex digits."""
    return uuid.UUID(int=rng.getrandbits(128), version=4).hex


def uuid7_int(rng: random.Random, t: float) -> int:
    """Return a UUIDv7 as a 128-bit integer whose millisecond time is ``t`` (unix seconds).

    The millisecond is ``t`` truncated (after rounding to microseconds), so it agrees with
    Muse's microsecond ``recorded_at`` and with the ISO times written next to it.
    """
    ms = round(t * 1_000_000) // 1000
    rand_a = rng.getrandbits(12)
    rand_b = rng.getrandbits(62)
    return (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b


def uuid7(rng: random.Random, t: float) -> str:
    """Return a UUIDv7 string (version nibble 7, variant ``10``) minted at unix time ``t``."""
    return str(uuid.UUID(int=uuid7_int(rng, t)))


# ---------------------------------------------------------------------------
# OpenAI


def _subsecond(rng: random.Random, t: float) -> str:
    """Return the 4 hex digits after the time field: they grow within one second."""
    frac = int((t - int(t)) * 0x1000) & 0xFFF
    return format((frac << 4) | rng.getrandbits(4), "04x")


def openai_conv_key(rng: random.Random) -> str:
    """Return a new50 conversation key: 16 hex digits, starting with ``0`` as real ones do."""
    return "0" + rand_hex(rng, 15)


def openai_new50_id(rng: random.Random, prefix: str, key: str, store_byte: str, t: float, marker: str) -> str:
    """Mint a new50 Responses id: key, store byte, seconds, sub-second, marker, random.

    Args:
        rng: the random source.
        prefix: the item prefix without ``_`` (``rs``, ``fc``, ``msg``, ``resp`` …).
        key: the 16-hex conversation key.
        store_byte: ``"00"`` (store=true) or ``"01"`` (store=false).
        t: the mint time in unix seconds.
        marker: 4 hex digits, ``81xx``.

    Returns:
        ``<prefix>_`` followed by 50 lowercase hex digits.
    """
    return f"{prefix}_{key}{store_byte}{int(t):08x}{_subsecond(rng, t)}{marker}{rand_hex(rng, 16)}"


def openai_legacy48_id(rng: random.Random, prefix: str, t: float, marker: str, suffix: str) -> str:
    """Mint a legacy48 Responses id; ``suffix`` (16 hex) is shared by one response's items."""
    return f"{prefix}_{int(t):08x}{_subsecond(rng, t)}{marker}{rand_hex(rng, 16)}{suffix}"


@dataclass(frozen=True, slots=True)
class OpenAIConversation:
    """The constant parts of one conversation's Responses ids (§4.1).

    Attributes:
        key: 16-hex conversation key (new50) or the per-response suffix (legacy48).
        store_byte: ``"00"`` for store=true, ``"01"`` for store=false.
        marker: the ``81xx`` marker, constant within a conversation.
    """

    key: str
    store_byte: str
    marker: str

    def item_id(self, rng: random.Random, prefix: str, t: float) -> str:
        """Mint an id of this conversation at time ``t``, in the layout of that date."""
        if t >= NEW50_SINCE:
            return openai_new50_id(rng, prefix, self.key, self.store_byte, t, self.marker)
        return openai_legacy48_id(rng, prefix, t, self.marker, self.key)


def new_openai_conversation(rng: random.Random, *, store: bool, marker: str | None = None) -> OpenAIConversation:
    """Start a conversation: a fresh key, the store byte for ``store``, a constant marker."""
    return OpenAIConversation(
        key=openai_conv_key(rng),
        store_byte="00" if store else "01",
        marker=marker if marker is not None else rng.choice(NEW50_MARKERS[:9]),
    )


def openai_call_id(rng: random.Random) -> str:
    """Return an OpenAI/Azure tool-call id: ``call_`` + 24 ``[A-Za-z0-9]``."""
    return "call_" + rand_alnum(rng, 24)


def uuid_call_id(rng: random.Random) -> str:
    """Return a self-hosted tool-call id: ``call_`` + a uuid4 as 32 lowercase hex."""
    return "call_" + uuid4_hex(rng)


# ---------------------------------------------------------------------------
# Fernet


def fernet_token(rng: random.Random, t: int, blocks: int) -> str:
    """Return a Fernet-framed token (§5.1) minted at unix second ``t``.

    The layout is ``0x80`` ‖ 8-byte big-endian seconds ‖ 16-byte IV ‖ ``blocks`` × 16 bytes of
    ciphertext ‖ 32-byte HMAC, in base64url with its ``=`` padding kept, as real tokens have.
    """
    raw = b"\x80" + int(t).to_bytes(8, "big") + rng.randbytes(16 + 16 * blocks + 32)
    return base64.urlsafe_b64encode(raw).decode("ascii")


def fernet_blocks_for_chars(chars: int) -> int:
    """Return the ciphertext block count whose token is about ``chars`` characters long."""
    raw = chars * 3 // 4
    return max(1, (raw - 57) // 16)


def fernet_token_chars(rng: random.Random, t: int, chars: int) -> str:
    """Return a Fernet token of roughly ``chars`` characters minted at unix second ``t``."""
    return fernet_token(rng, t, fernet_blocks_for_chars(chars))


# ---------------------------------------------------------------------------
# Anthropic


def anthropic_random_id(rng: random.Random, prefix: str) -> str:
    """Return ``<prefix>_01`` + 22 base58 digits of a random 128-bit value (``msg``, ``toolu``)."""
    return f"{prefix}_01" + b58_fixed(rng.getrandbits(128))


def anthropic_uuid7_id(rng: random.Random, prefix: str, t: float) -> str:
    """Return ``<prefix>_01`` + base58btc of a UUIDv7 minted at ``t`` (``req_011C…``)."""
    return f"{prefix}_01" + b58_fixed(uuid7_int(rng, t))


def toolu_id(rng: random.Random) -> str:
    """Return an Anthropic tool-use id ``toolu_01…``."""
    return anthropic_random_id(rng, "toolu")


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _pb_len(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _pb_varint(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def pb_field(number: int, payload: bytes | int) -> bytes:
    """One protobuf field: a varint for an int, length-delimited for bytes (tests build signatures with it)."""
    if isinstance(payload, int):
        return _pb_varint(number, payload)
    return _pb_len(number, payload)


def anthropic_signature(
    rng: random.Random,
    model: str,
    *,
    version: int | None = None,
    ciphertext_len: int | None = None,
) -> str:
    """Return a thinking-block signature: std base64 of the §6.3 protobuf, naming ``model``.

    Args:
        rng: the random source.
        model: the model name written into header field 6.
        version: header version; defaults to the model's known version, else 12.
        ciphertext_len: bytes of body field 5; random 120–600 when omitted.

    Returns:
        The base64 string (``E…`` for v12/v13, ``CAIS…`` for v16), padding kept.
    """
    ver = version if version is not None else SIGNATURE_VERSIONS.get(model, 12)
    n = ciphertext_len if ciphertext_len is not None else rng.randint(120, 600)
    header = (
        _pb_varint(1, ver)
        + _pb_varint(3, 2)
        + _pb_len(5, rng.randbytes(64))
        + _pb_len(6, model.encode("utf-8"))
        + _pb_varint(7, 1 if ver >= 16 else 0)
    )
    if ver >= 16:
        header += _pb_len(8, b"thinking") + _pb_len(11, uuid4(rng).encode("ascii"))
    body = (
        _pb_len(1, header)
        + _pb_len(2, rng.randbytes(12))
        + _pb_len(3, rng.randbytes(12))
        + _pb_len(4, rng.randbytes(48))
        + _pb_len(5, rng.randbytes(n))
    )
    top = (_pb_varint(1, 2) if ver >= 16 else b"") + _pb_len(2, body) + _pb_varint(3, 1)
    return base64.b64encode(top).decode("ascii")


# ---------------------------------------------------------------------------
# Muse


def muse_gpt_responses_signature(rng: random.Random, t: int, chars: int = 1300) -> str:
    """Return Muse's wrapper for OpenAI-style encrypted reasoning: ``gpt_responses_v1:`` + Fernet."""
    return "gpt_responses_v1:" + fernet_token_chars(rng, t, chars)
