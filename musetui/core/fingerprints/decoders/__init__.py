"""Pure decoders that recognise provider artifacts in single strings (FINGERPRINTS.md §4–§8).

Every public decoder takes a string, returns a :class:`Decoded` or ``None`` ("not this
artifact") and never raises. The only I/O is reading the id-shape table (``shapes.toml``)
once, on first use; only the standard library is used.
:func:`decode_string` is the dispatcher the engine calls on every string value; it runs the
strong detectors everywhere and the weak ones only under id-bearing keys (§12.1).

One module per family: :mod:`.openai` (item ids, Chat ids, Fernet), :mod:`.anthropic` (ids and
signatures), :mod:`.google` (Gemini), :mod:`.generic` (UUIDv7, ULID), :mod:`.tools` (tool-call
id classes), :mod:`.keys` (key-scoped evidence) and :mod:`.dispatch`.
"""

from __future__ import annotations

from musetui.core.fingerprints.decoders._common import (
    OPENAI_TIME_MAX,
    OPENAI_TIME_MIN,
    WINDOW_END_MS,
    WINDOW_END_S,
    WINDOW_MIN_MS,
    WINDOW_MIN_S,
)
from musetui.core.fingerprints.decoders.anthropic import (
    anthropic_prefix,
    decode_anthropic_body,
    decode_anthropic_id,
    decode_anthropic_signature,
)
from musetui.core.fingerprints.decoders.dispatch import (
    ID_KEYS,
    SIGNATURE_KEYS,
    WHOLE_STRING_DECODERS,
    decode_string,
)
from musetui.core.fingerprints.decoders.generic import decode_ulid, decode_uuid7
from musetui.core.fingerprints.decoders.google import (
    decode_gemini_response_id,
    decode_gemini_thought_signature,
)
from musetui.core.fingerprints.decoders.keys import (
    PRESENCE_KEYS,
    decode_key,
    decode_model_path,
    decode_openrouter_id,
    decode_signature_value,
)
from musetui.core.fingerprints.decoders.openai import (
    OPENAI_ITEM_TYPES,
    classify_system_fingerprint,
    decode_chatcmpl_id,
    decode_fernet,
    decode_openai_item_id,
)
from musetui.core.fingerprints.decoders.tools import classify_tool_id

__all__ = [
    "ID_KEYS",
    "OPENAI_ITEM_TYPES",
    "OPENAI_TIME_MAX",
    "OPENAI_TIME_MIN",
    "PRESENCE_KEYS",
    "SIGNATURE_KEYS",
    "WHOLE_STRING_DECODERS",
    "WINDOW_END_MS",
    "WINDOW_END_S",
    "WINDOW_MIN_MS",
    "WINDOW_MIN_S",
    "anthropic_prefix",
    "classify_system_fingerprint",
    "classify_tool_id",
    "decode_anthropic_body",
    "decode_anthropic_id",
    "decode_anthropic_signature",
    "decode_chatcmpl_id",
    "decode_fernet",
    "decode_gemini_response_id",
    "decode_gemini_thought_signature",
    "decode_key",
    "decode_model_path",
    "decode_openai_item_id",
    "decode_openrouter_id",
    "decode_signature_value",
    "decode_string",
    "decode_ulid",
    "decode_uuid7",
]
