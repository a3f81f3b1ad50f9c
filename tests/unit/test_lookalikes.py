"""A declared non-OpenAI model over only look-alike ids is never attributed to OpenAI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from musetui.core.fingerprints.attribution import Located, attribute
from musetui.core.fingerprints.catalogue import builtin_catalogue
from musetui.core.fingerprints.decoders import decode_chatcmpl_id, decode_key, decode_string
from musetui.core.model import SessionSummary

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#: Declared models of every non-OpenAI maker in the vocabulary (each resolves through the catalogue).
NON_OPENAI = [
    "qwen3-max",
    "glm-4.7",
    "kimi-k2",
    "deepseek-chat",
    "mistral-large-latest",
    "grok-4",
    "claude-sonnet-4-6",
    "gemini-2.5-pro",
    "llama-3.3-70b",
    "amazon.nova-pro-v1:0",
    "avocado-1.3",
]


def _summary(model: str) -> SessionSummary:
    return SessionSummary(
        path="s.json",
        abspath="/x/s.json",
        root="/x",
        format="openai-chat",
        format_rule="",
        declared_model=model,
        models={model: 1},
    )


def _located(values: list[tuple[str, str]]) -> list[Located]:
    out = []
    for i, (key, value) in enumerate(values):
        for dec in decode_string(value, key):
            out.append(Located(dec, i + 1, key, 0, None))
    return out


def test_lowercase_call_id_is_no_openai_evidence() -> None:
    (dec,) = decode_string("call_962bfd2ab8f54b89a1161356", "id")  # Qwen on DashScope (vercel/ai alibaba fixture)
    assert dec.provider is None and dec.shape == "call_+24 no upper case"
    (mixed,) = decode_string("call_YunNGbIwdVJ2i0y0Mybva4Pw", "id")  # OpenAI's own (row 10)
    assert mixed.provider == "openai"


@settings(max_examples=150, deadline=None)
@given(
    model=st.sampled_from(NON_OPENAI),
    bodies=st.lists(st.text(alphabet=ALNUM, min_size=24, max_size=24), min_size=1, max_size=12),
    with_chatcmpl=st.booleans(),
    with_fp=st.booleans(),
)
def test_declared_non_openai_over_lookalike_ids_is_never_openai(
    model: str, bodies: list[str], with_chatcmpl: bool, with_fp: bool
) -> None:
    values = [("id", "call_" + b) for b in bodies]
    if with_chatcmpl:
        values.append(("id", "chatcmpl-" + (bodies[0] * 2)[:29]))
    if with_fp:
        values.append(("system_fingerprint", "fp_0123456789"))
    a = attribute(_summary(model), _located(values), builtin_catalogue().lookup)
    assert a.provider != "openai", (model, values, a.summary)
    assert "declared-mismatch" not in a.flags


def test_time_bearing_openai_evidence_still_counts_against_a_declaration() -> None:
    # A real Responses item id (fixtures/real row 22) carries a checkable time: not an imitable shape.
    rs = "rs_0f35ed53160b395301693cc95817ac8190b978637daea4987e"
    values = [("id", "call_" + "aB3" * 8), ("id", rs)]
    located = _located(values)
    assert any(x.decoded.detector == "openai-item-id" for x in located)
    a = attribute(_summary("kimi-k2"), located, builtin_catalogue().lookup)
    assert a.provider == "openai" and "declared-mismatch" in a.flags


def test_chatcmpl_shape_is_imitable() -> None:
    dec = decode_chatcmpl_id("chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU")
    assert dec is not None and dec.provider == "openai"
    a = attribute(_summary("glm-4.7"), [Located(dec, 1, "id", 0, None)], builtin_catalogue().lookup)
    assert a.provider == "zhipu"


def test_a_compatible_server_capture_is_its_makers(tmp_path: Path) -> None:
    body = {
        "id": "chatcmpl-bc7fc58d-c03f-9c9f-af73-91bea326c99f",
        "object": "chat.completion",
        "created": 1770764857,
        "model": "qwen3-max",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "call_Vx8Qm2LrT5pZ9sYb3NcKd7Wf",
                            "type": "function",
                            "function": {"name": "weather", "arguments": "{}"},
                        }
                    ],
                },
            }
        ],
    }
    (tmp_path / "qwen.json").write_text(json.dumps(body), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", str(tmp_path)],
        capture_output=True,
        check=True,
        text=True,
    )
    rec = json.loads(out.stdout)
    assert rec["provider"] == "alibaba" and "declared-mismatch" not in rec["flags"]


def test_weak_imitable_shapes_alone_name_no_provider() -> None:
    """No declaration and only shapes any compatible server mints, below 0.5: ``unknown``, saying what they resemble."""
    nothing = SessionSummary(path="s.json", abspath="/x/s.json", root="/x", format="openai-chat", format_rule="")
    tier = decode_key("service_tier", "standard")  # Writer's Palmyra answers with one (traceloop/openllmetry)
    assert tier is not None and tier.provider == "anthropic" and tier.strength == "weak"
    for located in (
        [Located(tier, 1, "service_tier", 0, None)],
        _located([("id", "ax9fskhev")]),
        _located([("id", "gSIMJiOkT")]),
    ):
        values = [x.decoded.value for x in located]
        assert located and all(x.decoded.provider for x in located), values  # each is weak evidence for a maker ...
        a = attribute(nothing, located, builtin_catalogue().lookup)
        assert (a.provider, a.confidence) == ("unknown", 0.0), (values, a.summary)  # ... but names none alone
        assert "compatible servers mint too" in a.summary
    # The same weak evidence beside an agreeing declaration still adds to it.
    declared = attribute(_summary("llama-3.3-70b"), _located([("id", "ax9fskhev")]), builtin_catalogue().lookup)
    assert declared.provider == "meta"
    mistral = attribute(_summary("mistral-small-latest"), _located([("id", "gSIMJiOkT")]), builtin_catalogue().lookup)
    assert mistral.provider == "mistral" and mistral.confidence > 0


def test_an_internal_model_name_in_a_signature_is_noted_not_flagged() -> None:
    """LangChain's Bedrock cassettes for claude-sonnet-5 carry signatures naming ``claude-saffron``."""
    from musetui.core.fingerprints.types import Decoded

    def sig(model: str) -> Located:
        dec = Decoded(
            "anthropic-signature",
            "EsgECmQIDxABGAIq",
            "anthropic",
            "bedrock",
            "strong",
            "verified",
            fields=(("version", "15"), ("model", model)),
            meaning=f"naming model {model}",
        )
        return Located(dec, 3, "signature", 0, None)

    declared = _summary("us.anthropic.claude-sonnet-5")
    internal = attribute(declared, [sig("claude-saffron")], builtin_catalogue().lookup)
    assert internal.provider == "anthropic" and "declared-mismatch" not in internal.flags
    assert "claude-saffron, not a public model name" in internal.summary
    other = attribute(_summary("us.anthropic.claude-sonnet-5"), [sig("claude-opus-4-6")], builtin_catalogue().lookup)
    assert "declared-mismatch" in other.flags  # a public name that differs still raises it
    same = attribute(_summary("us.anthropic.claude-sonnet-5"), [sig("claude-sonnet-5")], builtin_catalogue().lookup)
    assert "declared-mismatch" not in same.flags
