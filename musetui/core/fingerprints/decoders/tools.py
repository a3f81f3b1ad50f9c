"""Tool-call id classes of the other providers and servers (§8.6)."""

from __future__ import annotations

import re

from musetui.core.fingerprints.decoders._common import (
    _OPENAI_STACK,
    WINDOW_END_MS,
    WINDOW_MIN_MS,
    _iso_ms,
)
from musetui.core.fingerprints.decoders.anthropic import decode_anthropic_id
from musetui.core.fingerprints.types import Decoded, Strength, Tag

# ---------------------------------------------------------------------------------------------
# Tool-call ids (§8.6)
# ---------------------------------------------------------------------------------------------

_CALL24_RE = re.compile(r"call_[A-Za-z0-9]{24}")
_CALL_DEEPSEEK_RE = re.compile(r"call_\d{2}_[A-Za-z0-9]{24}")
_CALL32HEX_RE = re.compile(r"call_[0-9a-f]{32}")
_CALL_XAI_RE = re.compile(r"call_\d{8}")
_CALL_OLLAMA_RE = re.compile(r"call_(?=[a-z0-9]*[a-z])[a-z0-9]{8}")  # ollama/ollama toolCallId()
_KIMI_RE = re.compile(r"functions\.[A-Za-z0-9_\-.]+:\d+")
_VLLM_RE = re.compile(r"chatcmpl-tool-[0-9a-f]{16,32}")
_TOOLUSE_RE = re.compile(r"tooluse_[A-Za-z0-9_\-]{10,}")
_NINE_RE = re.compile(r"[A-Za-z0-9]{9}")
_HEX_CHARS = frozenset("0123456789abcdef")
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
            if not any("A" <= c <= "Z" for c in s[5:]):
                return _tool(
                    s,
                    "call_+24 no upper case",
                    None,
                    "medium",
                    "verified",
                    "call_ + 24 characters without one upper-case letter: an OpenAI-compatible "
                    "server's look-alike (Qwen/DashScope mints 24 lowercase hex); OpenAI's are "
                    "mixed-case base62, which is all lower case or digits about 2 times in a million",
                )
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
        if n == 13 and not strong_only and _CALL_OLLAMA_RE.fullmatch(s):
            return _tool(
                s, "call_+8lower", None, "weak", "source",
                "call_ + 8 lowercase alphanumerics: Ollama's tool-call id (a self-hosted server)",
            )  # fmt: skip
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
                None,
                "medium",
                "verified",
                "tooluse_ id: minted by Amazon Bedrock's Converse API for every model it serves "
                "(Claude, Nova, Llama, Mistral …): host bedrock, no maker",
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
        n_upper = sum(1 for c in s if c.isupper())
        has_upper = n_upper > 0
        has_lower = any(c.islower() for c in s)
        has_digit = any(c.isdigit() for c in s)
        if has_upper and has_lower and not has_digit and n_upper < 2:
            return None  # a word (``Available``, ``getStatus``), not base62: 0.4% of random ids look so
        if has_lower and not has_upper and not has_digit:
            return None  # a word (``available``, ``withdrawn``): 5% of Groq's base-36 ids have no digit
        if has_upper and has_lower:
            return _tool(
                s,
                "9-char mixed case",
                "mistral",
                "weak",
                "verified",
                "9 mixed-case alphanumerics: Mistral-like",
            )
        if has_lower and not has_upper and not _HEX_CHARS.issuperset(s):
            return _tool(
                s,
                "9-char lowercase",
                "groq",
                "weak",
                "verified",
                "9 lowercase alphanumerics: Groq-like",
            )
        if has_lower and not has_upper:
            return _tool(
                s,
                "9-char hex",
                None,
                "weak",
                "verified",
                "9 lowercase hex digits: not Groq's base-36 alphabet (a Groq id is all hex about 7 "
                "times in 10,000); Cerebras mints this shape",
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
