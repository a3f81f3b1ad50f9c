"""The rules that keep attribution from being confident and wrong (docs/fingerprints.md §12).

Each test builds a capture in the shape real recorders write (a VCR cassette, as pydantic-ai
and openllmetry record them) and fails without its rule.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from musetui.core.fingerprints import decoders as d
from musetui.core.sources.http_capture import PLACEHOLDER, private_host


def _scan(root: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", str(root)],
        capture_output=True,
        check=True,
        text=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def _cassette(uri: str, body: dict[str, Any], headers: dict[str, list[str]], model: str) -> bytes:
    inter = [
        {
            "request": {
                "method": "POST",
                "uri": uri,
                "headers": {"Content-Type": ["application/json"]},
                "body": json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}),
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {"Content-Type": ["application/json"], **headers},
                "body": {"string": json.dumps(body)},
            },
        }
    ]
    return yaml.safe_dump({"interactions": inter, "version": 1}, sort_keys=False).encode()


# Ollama's OpenAI-compatible reply, in the shape its server writes (ollama/ollama openai.go):
# chatcmpl-<rand.Intn(999)>, system_fingerprint fp_ollama, call_<8 lowercase>.
OLLAMA_BODY = {
    "id": "chatcmpl-774",
    "object": "chat.completion",
    "created": 1768062791,
    "model": "qwen2.5:7b",
    "system_fingerprint": "fp_ollama",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_lbcjwr0u",
                        "index": 0,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 16, "completion_tokens": 24, "total_tokens": 40},
}
# A plain OpenAI-compatible reply with OpenAI-shaped ids only (what many servers copy).
LOOKALIKE_BODY = {
    "id": "chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU",
    "object": "chat.completion",
    "created": 1768062791,
    "model": "qwen2.5-7b-instruct",
    "system_fingerprint": "fp_eaab8d114b",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
}


def _one(tmp_path: Path, uri: str, body: dict[str, Any], headers: dict[str, list[str]], model: str) -> dict[str, Any]:
    (tmp_path / "c.yaml").write_bytes(_cassette(uri, body, headers, model))
    (rec,) = _scan(tmp_path)
    return rec


def _header_evidence(rec: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in rec["evidence"] if e["field"] == name)


@pytest.mark.parametrize("value", ["test_org", "xxx", "", "REDACTED", "<org>", "aaaaaaaa", "lcgo-tst"])
def test_placeholder_account_header_earns_nothing(tmp_path: Path, value: str) -> None:
    """A recorder's fixed openai-organization header no longer outvotes the declared model."""
    rec = _one(
        tmp_path,
        "https://llm.example.net/v1/chat/completions",
        LOOKALIKE_BODY,
        {"openai-organization": [value]},
        "qwen2.5-7b-instruct",
    )
    assert rec["provider"] == "alibaba"
    assert "declared-mismatch" not in rec["flags"]
    ev = _header_evidence(rec, "openai-organization")
    assert ev["weight"] == 0.0 and "no credit" in ev["detail"]


def test_real_shaped_account_header_still_counts(tmp_path: Path) -> None:
    rec = _one(
        tmp_path,
        "https://llm.example.net/v1/chat/completions",
        LOOKALIKE_BODY,
        {
            "openai-organization": ["pydantic-28gund"],
            "openai-project": ["proj_dKobscVY9YJxeEaDJen54e3d"],
        },
        "gpt-4o-mini",
    )
    assert rec["provider"] == "openai"
    assert _header_evidence(rec, "openai-organization")["weight"] == 1.0


def test_azure_request_id_needs_a_uuid(tmp_path: Path) -> None:
    body = dict(LOOKALIKE_BODY, model="gpt-4o-mini")
    good = _one(
        tmp_path,
        "https://llm.example.net/v1/chat/completions",
        body,
        {"apim-request-id": ["3b330e1f-f052-44da-a474-0c4f848a76cf"]},
        "gpt-4o-mini",
    )
    assert good["host"] == "azure"
    (tmp_path / "c.yaml").unlink()
    bad = _one(
        tmp_path,
        "https://llm.example.net/v1/chat/completions",
        body,
        {"apim-request-id": ["request-1"]},
        "gpt-4o-mini",
    )
    assert bad["host"] is None
    assert "shape" in _header_evidence(bad, "apim-request-id")["detail"]


@pytest.mark.parametrize(
    "uri",
    [
        "http://localhost:11434/v1/chat/completions",
        "http://192.168.1.20:8000/v1/chat/completions",
        "http://127.0.0.1:8080/v1/chat/completions",
        "http://[::1]:11434/v1/chat/completions",
    ],
)
def test_private_endpoint_account_headers_earn_nothing(tmp_path: Path, uri: str) -> None:
    """Even a real-shaped OpenAI account header cannot make a loopback or LAN server OpenAI's API."""
    rec = _one(
        tmp_path,
        uri,
        LOOKALIKE_BODY,
        {"openai-organization": ["pydantic-28gund"]},
        "qwen2.5-7b-instruct",
    )
    assert rec["provider"] == "alibaba"
    assert "declared-mismatch" not in rec["flags"]
    assert "loopback or private" in _header_evidence(rec, "openai-organization")["detail"]


def test_local_ollama_with_a_recorder_header_is_not_openai(tmp_path: Path) -> None:
    """The miss of issue 23: a local Ollama serving Qwen, behind a recorder's openai-organization header."""
    rec = _one(
        tmp_path,
        "http://localhost:11434/v1/chat/completions",
        OLLAMA_BODY,
        {"openai-organization": ["test_org"]},
        "qwen2.5:7b",
    )
    assert rec["provider"] == "alibaba"
    assert not {"declared-mismatch", "mixed-providers"} & set(rec["flags"])
    shapes = {e["value"] for e in rec["evidence"] if e["detector"] in ("chatcmpl-id", "system-fingerprint")}
    assert {"chatcmpl-774", "fp_ollama"} <= shapes


def test_self_hosted_signs_cancel_openai_lookalike_credit(tmp_path: Path) -> None:
    """No declaration: OpenAI-shaped ids beside a self-hosted server's signs name no provider."""
    body = dict(OLLAMA_BODY, model="")
    body["choices"] = [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_5tcmcvPueMOTIeYuTUGW0Ss3",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            },
        }
    ]
    rec = _one(tmp_path, "http://localhost:11434/v1/chat/completions", body, {}, "")
    assert rec["provider"] == "unknown"


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        ("chatcmpl-774", "chatcmpl-+digits"),
        ("chatcmpl-5", "chatcmpl-+digits"),
        ("chatcmpl-ZgBRsBdAdbS0XYsWdaUKydGBTCwqoCpy", "chatcmpl-+32b62"),
    ],
)
def test_self_hosted_chatcmpl_shapes(value: str, shape: str) -> None:
    got = d.decode_chatcmpl_id(value)
    assert got is not None and (got.provider, got.shape) == (None, shape)


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        ("fp_ollama", "fp_ollama"),
        ("b4963-02082f15", "llama.cpp-build"),
        ("b9952-2ed3c1abb", "llama.cpp-build"),
    ],
)
def test_self_hosted_system_fingerprints(value: str, shape: str) -> None:
    got = d.classify_system_fingerprint(value)
    assert got is not None and (got.provider, got.shape) == (None, shape)


def test_placeholder_and_private_host_predicates() -> None:
    for v in (
        "pydantic-28gund",
        "proj_dKobscVY9YJxeEaDJen54e3d",
        "3b330e1f-f052-44da-a474-0c4f848a76cf",
        "East US 2",
        "9511",
        "0",
    ):
        assert not PLACEHOLDER.fullmatch(v), v
    for v in (
        "",
        "  ",
        "xxxx",
        "test_org",
        "my-test-org",
        "[REDACTED]",
        "<ORG_ID>",
        "****",
        "dummy",
    ):
        assert PLACEHOLDER.fullmatch(v), v
    assert all(
        private_host(h) for h in ("localhost", "127.0.0.1", "10.0.0.7", "172.16.3.4", "::1", "fe80::1", "api.local")
    )
    assert not any(private_host(h) for h in ("api.openai.com", "8.8.8.8", "example.openai.azure.com"))


def _converse(ids: list[str]) -> dict[str, Any]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": i, "name": "get_weather", "input": {"city": "Paris"}}} for i in ids
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 12, "outputTokens": 30, "totalTokens": 42},
        "metrics": {"latencyMs": 412},
    }


NOVA_IDS = [
    "tooluse_Hc3MXzVAJJ7C28xbJu45mA",
    "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
    "tooluse_6Y2a5JbfQ0qHhCfPQ3wWvg",
]


def test_tooluse_ids_name_bedrock_and_no_maker(tmp_path: Path) -> None:
    """Nova mints tooluse_ ids too: three of them must not turn a Nova session into Anthropic."""
    rec = _one(
        tmp_path,
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse",
        _converse(NOVA_IDS),
        {},
        "us.amazon.nova-micro-v1:0",
    )
    assert (rec["provider"], rec["host"]) == ("amazon", "bedrock")
    assert "declared-mismatch" not in rec["flags"]
    assert all(e["provider"] is None for e in rec["evidence"] if e["detector"] == "tool-id")


def test_a_converse_body_alone_is_bedrock(tmp_path: Path) -> None:
    (tmp_path / "converse.json").write_text(json.dumps(_converse(NOVA_IDS[:1])), encoding="utf-8")
    (rec,) = _scan(tmp_path)
    assert (rec["format"], rec["host"]) == ("bedrock-converse", "bedrock")
    assert any(e["detector"] == "format" and e["host"] == "bedrock" for e in rec["evidence"])


def test_a_converse_body_in_a_capture_without_its_endpoint_is_bedrock(tmp_path: Path) -> None:
    body = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Paris"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15},
        "metrics": {"latencyMs": 212},
    }
    rec = _one(tmp_path, "http://127.0.0.1:4010/converse", body, {}, "")
    assert rec["host"] == "bedrock"


def test_msg_bdrk_ids_name_bedrock(tmp_path: Path) -> None:
    body = {
        "id": "msg_bdrk_01Xy4Zk8qv1xbjb3Z7w8GnYc",
        "type": "message",
        "role": "assistant",
        "model": "claude-3-5-sonnet-20241022",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    (tmp_path / "m.json").write_text(json.dumps(body), encoding="utf-8")
    (rec,) = _scan(tmp_path)
    assert (rec["provider"], rec["host"]) == ("anthropic", "bedrock")


def test_host_evidence_that_agrees_raises_confidence(tmp_path: Path) -> None:
    """An *.openai.azure.com capture with Azure's own headers is not left at a declaration's 0.50."""
    body = {
        "id": "chatcmpl-AzUrE0000000000000000000000",
        "object": "chat.completion",
        "created": 1768062791,
        "model": "gpt-4o-2024-11-20",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    headers = {
        "apim-request-id": ["3b330e1f-f052-44da-a474-0c4f848a76cf"],
        "azureml-model-session": ["d002-20240220202227"],
        "x-ms-region": ["East US 2"],
    }
    rec = _one(
        tmp_path,
        "https://my-resource.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        body,
        headers,
        "gpt-4o",
    )
    assert (rec["provider"], rec["host"]) == ("openai", "azure")
    assert rec["confidence"] >= 0.7


def _exchange(uri: str, model: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "uri": uri,
            "headers": {"Content-Type": ["application/json"]},
            "body": json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}),
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"Content-Type": ["application/json"]},
            "body": {"string": json.dumps(body)},
        },
    }


def _chat(id_: str, model: str, call: str) -> dict[str, Any]:
    return {
        "id": id_,
        "object": "chat.completion",
        "created": 1768062791,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call,
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
            }
        ],
    }


OPENAI_CALL = _exchange(
    "https://api.openai.com/v1/chat/completions",
    "gpt-4o",
    _chat(
        "chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU",
        "gpt-4o-2024-08-06",
        "call_5tcmcvPueMOTIeYuTUGW0Ss3",
    ),
)
MISTRAL_CALL = _exchange(
    "https://api.mistral.ai/v1/chat/completions",
    "mistral-large-latest",
    _chat("0a4d3b1e9c7f4e2a8b6d5c3e1f0a9b8c", "mistral-large-latest", "gSIMJiOkT"),
)


@pytest.mark.parametrize(
    ("calls", "verdict"),
    [
        ([OPENAI_CALL, MISTRAL_CALL, OPENAI_CALL], "openai"),
        ([OPENAI_CALL, MISTRAL_CALL, MISTRAL_CALL], "mistral"),
        ([MISTRAL_CALL, OPENAI_CALL, OPENAI_CALL], "openai"),
    ],
)
def test_a_capture_is_judged_exchange_by_exchange(tmp_path: Path, calls: list[dict[str, Any]], verdict: str) -> None:
    """A cassette that calls OpenAI, then Mistral: mixed-providers, and the majority of the calls decides."""
    (tmp_path / "c.yaml").write_bytes(yaml.safe_dump({"interactions": calls, "version": 1}, sort_keys=False).encode())
    (rec,) = _scan(tmp_path)
    assert rec["provider"] == verdict
    # each call matches the model it names: no declared-mismatch; the calls' providers change: a switch
    assert rec["flags"] == ["mixed-providers", "provider-switch"]
    runs = [c["request"]["uri"].split("/")[2] for c in calls]
    changes = sum(1 for i in range(1, len(runs)) if runs[i] != runs[i - 1])
    assert rec["segments"][0]["provider"] == ("openai" if calls[0] is OPENAI_CALL else "mistral")
    assert len(rec["segments"]) == changes + 1
    other = {"openai": "mistral", "mistral": "openai"}[verdict]
    assert any(e["detector"] == "exchange" and e["provider"] == other for e in rec["evidence"])


def test_one_provider_over_many_exchanges_is_not_mixed(tmp_path: Path) -> None:
    calls = [
        OPENAI_CALL,
        OPENAI_CALL,
        _exchange(
            "https://api.openai.com/v1/embeddings",
            "text-embedding-3-small",
            {"object": "list", "data": [], "model": "text-embedding-3-small"},
        ),
    ]
    (tmp_path / "c.yaml").write_bytes(yaml.safe_dump({"interactions": calls, "version": 1}, sort_keys=False).encode())
    (rec,) = _scan(tmp_path)
    assert (rec["provider"], rec["flags"]) == ("openai", [])


# ---------------------------------------------------------------------------------------------
# OpenAI Responses ids: a new marker is not an imitation; a scrubbed id is a placeholder.
# ---------------------------------------------------------------------------------------------

# The Responses object api.openai.com returned to crmne/ruby_llm's gpt-5-nano run (2026-08-19,
# spec/fixtures/vcr_cassettes/chat_basic_chat_functionality_openai_gpt-5-nano_*.yml): its new50 ids
# carry marker 87d2 and decode to the response's own created_at second.
RESP_87D2 = "resp_09b5d6c40dbecb43016a85bf277edc87d2913a865bc4ed4f76"
MSG_87D2 = "msg_09b5d6c40dbecb43016a85bf29f95c87d293fccb099cbbbe72"


def _responses_body(resp_id: str, msg_id: str, created: int) -> dict[str, Any]:
    return {
        "id": resp_id,
        "object": "response",
        "created_at": created,
        "status": "completed",
        "model": "gpt-5-nano-2025-08-07",
        "output": [
            {"id": msg_id, "type": "message", "status": "completed", "role": "assistant",
             "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
        ],
    }  # fmt: skip


def test_a_new_marker_on_a_sound_new50_id_credits_openai() -> None:
    got = d.decode_openai_item_id(RESP_87D2)
    assert got is not None and got.provider == "openai" and not got.problems
    assert got.time == 0x6A85BF27  # the created_at of its response
    unseen = RESP_87D2.replace("87d2", "9e0f")  # a marker never seen: the layout still checks out
    got = d.decode_openai_item_id(unseen)
    assert got is not None and got.provider == "openai" and got.strength == "medium" and not got.problems
    assert any(k == "marker" and "not seen before" in v for k, v in got.fields)


def test_a_new_marker_in_a_capture_raises_no_imitation_id(tmp_path: Path) -> None:
    body = _responses_body(RESP_87D2, MSG_87D2, 0x6A85BF27)
    (tmp_path / "c.yaml").write_bytes(_cassette("https://api.openai.com/v1/responses", body, {}, "gpt-5-nano"))
    (rec,) = _scan(tmp_path)
    assert rec["provider"] == "openai" and "imitation-id" not in rec["flags"], rec["flags"]


def test_a_legacy48_id_with_a_bad_marker_is_still_an_imitation() -> None:
    # LM Studio's resp_ + 48 hex (vercel/ai open-responses fixtures): no key, no store byte to check.
    got = d.decode_openai_item_id("resp_68b9bda8" + "1f5c" + "f5c8" + "a5a51a20a9f4150a000497db2a4c777b")
    assert got is not None and got.provider is None and "bad-marker" in got.problems


@pytest.mark.parametrize(
    "value",
    [
        "resp_01000000000000000000000000000000000000000000000000",  # pydantic-ai's scrubbed ids
        "msg_02000000000000000000000000000000000000000000000000",
        "rs_000000000000000000000000000000000000000000000000",
    ],
)
def test_a_scrubbed_id_is_a_placeholder(value: str) -> None:
    got = d.decode_openai_item_id(value)
    assert got is not None and got.provider is None and got.time is None
    assert got.problems == ("placeholder",) and "placeholder" in got.meaning


def test_scrubbed_ids_earn_nothing_and_raise_nothing(tmp_path: Path) -> None:
    body = _responses_body(
        "resp_01000000000000000000000000000000000000000000000000",
        "msg_01000000000000000000000000000000000000000000000000",
        1760000000,
    )
    (tmp_path / "c.yaml").write_bytes(_cassette("https://api.openai.com/v1/responses", body, {}, "gpt-5"))
    (rec,) = _scan(tmp_path)
    assert not {"imitation-id", "time-mismatch"} & set(rec["flags"]), rec["flags"]
    ids = [e for e in rec["evidence"] if e["detector"] == "openai-item-id"]
    assert ids and all(e["weight"] == 0 for e in ids), ids


# ---------------------------------------------------------------------------------------------
# content_filters: null is written by Azure OpenAI and by DeepSeek's own Responses API.
# ---------------------------------------------------------------------------------------------

# DeepSeek's Responses object as api.deepseek.com returned it to pydantic-ai (2026-08,
# tests/models/cassettes/test_deepseek_responses/test_deepseek_responses[function_tool].yaml), cut
# to the keys that matter: UUID ids, a call_00_ tool id, usage with DeepSeek's cache keys absent.
DEEPSEEK_RESPONSE = {
    "background": False,
    "completed_at": 1785967718,
    "content_filters": None,
    "created_at": 1785967717,
    "error": None,
    "id": "92471b7c-94ad-452f-a3f5-c29aa74a95e1",
    "model": "deepseek-v4-flash",
    "object": "response",
    "output": [
        {"arguments": '{"city": "Tokyo"}', "call_id": "call_00_iD0U8IMtyIljI0ET7GLz1318",
         "id": "8fc1af85-3010-42b2-bcb8-1a6d5003ad3b", "name": "get_temperature", "status": "completed",
         "type": "function_call"},
    ],
    "service_tier": "default",
    "status": "completed",
    "store": False,
}  # fmt: skip


def test_a_null_content_filters_beside_no_openai_stack_names_no_azure(tmp_path: Path) -> None:
    (tmp_path / "deepseek.json").write_text(json.dumps(DEEPSEEK_RESPONSE))
    (rec,) = _scan(tmp_path)
    assert rec["provider"] == "deepseek" and rec["host"] is None, (rec["provider"], rec["host"], rec["confidence"])
    ev = [e for e in rec["evidence"] if e["value"] == "content_filters"]
    assert ev and "DeepSeek" in ev[0]["detail"]


def test_a_null_content_filters_beside_openai_ids_is_azure(tmp_path: Path) -> None:
    body = {**_responses_body(RESP_87D2, MSG_87D2, 0x6A85BF27), "content_filters": None}
    (tmp_path / "azure.json").write_text(json.dumps(body))
    (rec,) = _scan(tmp_path)
    assert (rec["provider"], rec["host"]) == ("openai", "azure"), (rec["provider"], rec["host"])
