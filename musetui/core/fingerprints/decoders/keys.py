"""Key-scoped evidence: model paths, key presence, signature values and embedded Fernet runs (§8–§10)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from musetui.core.fingerprints.decoders._common import _in_window_s, _iso_s
from musetui.core.fingerprints.decoders.anthropic import decode_anthropic_signature
from musetui.core.fingerprints.decoders.google import decode_gemini_thought_signature
from musetui.core.fingerprints.decoders.openai import decode_fernet
from musetui.core.fingerprints.types import Decoded, Strength, Tag

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


#: Keys whose presence alone is the evidence: key → (provider, host, strength, tag, meaning).
_PRESENT: dict[str, tuple[str | None, str | None, Strength, Tag, str]] = {
    "prompt_filter_results": (
        None, "azure", "strong", "verified",
        "prompt_filter_results: Azure content filtering (any model on Azure, DeepSeek included)",
    ),
    "content_filter_results": (
        None, "azure", "strong", "verified",
        "content_filter_results: Azure content filtering (any model on Azure, DeepSeek included)",
    ),
    "prompt_cache_hit_tokens": ("deepseek", None, "strong", "verified", "usage.prompt_cache_hit_tokens: DeepSeek"),
    "prompt_cache_miss_tokens": ("deepseek", None, "strong", "verified", "usage.prompt_cache_miss_tokens: DeepSeek"),
    "x_groq": ("groq", None, "strong", "verified", "x_groq object: Groq"),
    "cost_in_usd_ticks": ("xai", None, "medium", "verified", "usage.cost_in_usd_ticks: xAI"),
    "num_sources_used": ("xai", None, "medium", "verified", "usage.num_sources_used: xAI"),
    "raw_output": (None, "fireworks", "medium", "source", "per-choice raw_output: Fireworks AI"),
    "reasoning_content": (
        None, None, "weak", "verified",
        "reasoning_content: OpenAI-compatible reasoning field (Kimi, DeepSeek, xAI, …), not OpenAI itself",
    ),
}  # fmt: skip


def _traffic_type(key: str, value: object) -> Decoded | None:
    return _key(
        key,
        "google",
        "vertex",
        "strong",
        "verified",
        "usageMetadata.trafficType: returned by Vertex AI, not by the Gemini API",
        value if isinstance(value, str) else "",
    )


def _create_time(key: str, value: object) -> Decoded | None:
    if not isinstance(value, str):
        return None
    meaning = "createTime on a generateContent response: returned by Vertex AI, not by the Gemini API"
    return _key(key, None, "vertex", "medium", "verified", meaning, value)


def _fireworks_null(key: str) -> Decoded:
    """A usage key that is null, as Fireworks' Anthropic-compatible endpoint sends it."""
    meaning = f"{key} is null, as on Fireworks' Anthropic-compatible endpoint: no Anthropic weight"
    return _key(key, None, None, "weak", "source", meaning, "null")


def _inference_geo(key: str, value: object) -> Decoded | None:
    if value is None:
        return _fireworks_null(key)
    if isinstance(value, str):
        return _key(key, "anthropic", None, "medium", "source", "usage.inference_geo: Anthropic first-party API", value)
    return None


def _cache_creation(key: str, value: object) -> Decoded | None:
    if value is None:
        return _fireworks_null(key)
    if not isinstance(value, bool | int | float | list):
        # the nested object (a raw-bytes scanner may pass a placeholder instead of the dict)
        meaning = "nested usage.cache_creation object: Anthropic first-party API"
        return _key(key, "anthropic", None, "medium", "source", meaning)
    return None


#: ``service_tier`` names → (provider, whose names they are).
_TIERS: dict[str, tuple[str, str]] = {
    "standard": ("anthropic", "Anthropic's"),
    "batch": ("anthropic", "Anthropic's"),
    "default": ("openai", "OpenAI's"),
    "scale": ("openai", "OpenAI's"),
    "on_demand": ("groq", "Groq's"),
    "performance": ("groq", "Groq's"),
}


def _service_tier(key: str, value: object) -> Decoded | None:
    if not isinstance(value, str):
        return None  # null (OpenAI stream events, Fireworks' Anthropic endpoint): no weight
    tier = _TIERS.get(value)
    if tier is None:
        return _key(
            key, None, None, "weak", "guess", f"service_tier {value!r}: shared by Anthropic, OpenAI and Groq", value
        )
    return _key(key, tier[0], None, "weak", "guess", f"service_tier {value!r}: {tier[1]} tier names", value)


def _content_filters(key: str, value: object) -> Decoded:
    if value is not None:  # the filter results (Azure's own): the host, wherever the model came from
        return _key(
            key, None, "azure", "strong", "verified", "content_filters on a Responses object: served by Azure OpenAI"
        )
    meaning = (
        "content_filters: null on a Responses object: Azure OpenAI writes it, and so does DeepSeek's own "
        "Responses API: host azure only beside OpenAI's stack"
    )
    return Decoded(
        detector="key", value=key, provider=None, host="azure", strength="strong", tag="verified",
        fields=(("key", key), ("value", "null")), meaning=meaning, shape="content_filters:null",
    )  # fmt: skip


#: Keys whose value decides what their presence shows.
_BY_VALUE: dict[str, Callable[[str, object], Decoded | None]] = {
    "content_filters": _content_filters,
    "trafficType": _traffic_type,
    "createTime": _create_time,
    "inference_geo": _inference_geo,
    "cache_creation": _cache_creation,
    "service_tier": _service_tier,
}

#: Keys whose presence (or value) is evidence wherever a record is walked.
PRESENCE_KEYS = frozenset(_PRESENT) | frozenset(_BY_VALUE)


def decode_key(key: str, value: object) -> Decoded | None:
    """Turn the presence of a provider-specific key into evidence (§12.1 point 4).

    ``value`` is the key's JSON value; it matters for nulls (Fireworks' Anthropic-compatible
    endpoint sends ``null`` where Anthropic has values) and for ``service_tier``.
    """
    present = _PRESENT.get(key)
    if present is not None:
        return _key(key, *present)
    by_value = _BY_VALUE.get(key)
    return None if by_value is None else by_value(key, value)


_OPENROUTER_ID_RE = re.compile(r"gen-(\d{10})-[A-Za-z0-9]{16,32}")


def decode_openrouter_id(s: str) -> Decoded | None:
    """Recognise an OpenRouter generation id ``gen-<unix seconds>-<random>`` (§10.1)."""
    if not s.startswith("gen-"):
        return None
    m = _OPENROUTER_ID_RE.fullmatch(s)
    if m is None:
        return None
    ts = int(m.group(1))
    if not _in_window_s(ts):
        return None
    return Decoded(
        detector="openrouter-id",
        value=s,
        provider=None,
        host=None,
        strength="strong",
        tag="verified",
        time=float(ts),
        fields=(("minted", _iso_s(ts)),),
        meaning=f"OpenRouter generation id (gen-<unix seconds>-<random>), minted {_iso_s(ts)}: routed through OpenRouter",
        shape="gen-<s>-<random>",
        via="openrouter",
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
    return replace(d, meaning=meaning)


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
