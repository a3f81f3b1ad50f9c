"""HTTP captures (VCR, HAR), Bedrock Converse, codex exec streams and flat Claude subagents."""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from musetui.core.fingerprints.decoders import (
    decode_anthropic_id,
    decode_anthropic_signature,
    decode_string,
)
from musetui.core.index import Index
from musetui.core.session import open_session
from musetui.core.sources import bedrock, capture_read, cassette_yaml, http_capture
from musetui.core.sources.registry import LOOKUP


def _scan(root: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", str(root)],
        capture_output=True,
        check=True,
        text=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def _eventstream(event_type: str, payload: dict[str, Any]) -> bytes:
    """One AWS event-stream message (prelude, a string header, payload, CRCs)."""
    name = b":event-type"
    value = event_type.encode()
    headers = bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    msg = prelude + headers + body
    return msg + struct.pack(">I", binascii.crc32(msg))


# ---------------------------------------------------------------------------------------------
# Decoders
# ---------------------------------------------------------------------------------------------


def test_bedrock_signature_header_variant_decodes() -> None:
    # row 31's signature: 08 0d 10 01 18 02 … (extra field 2 = 1)
    sig = (
        "Ev8BCkgIDRABGAIqQA94zfb4uEVoCu7iX9s3XhxDSQeO+T4eEebWFazipXUbG6UnmE4yM4RHrXY1hCjki6b6oNT0RlcBph7Rb"
        "qHHGEUSDPYZ51rMvqLhfyOBwhoMOJoutnDrBSjsVrKJIjDDKzEIg5ehbDml3SpQx5G9rl0bdfUxN6SB+Ha+VwIKaMEr84u/q/NXh"
        "F0Ev9FM5XoqZdkS5S3W/TrYQPcMj5Gci4Q5mPdMdN1KvJua3pC6q8F3uDxczAd5NLdAHhQNye3OOlYs+ZS4AWEGQrN/X9BDDll2Vo"
        "8oPU0SHq+Ec9/WMDu20Hyr7Iu430/e0YF//XwEPWAoImgaGAE="
    )
    dec = decode_anthropic_signature(sig)
    assert dec is not None and dec.provider == "anthropic" and dec.host == "bedrock"
    assert ("version", "13") in dec.fields and not dec.problems
    assert decode_string(sig, "signature")[0].host == "bedrock"
    # a first-party one (row 6) has no such field and no host
    first = decode_anthropic_signature("Er4BCkYICxgCKkDpJ9bh1zxuCJQUbrSkkrEjJ1dGpo4ALSI")
    assert first is not None and first.host is None


def test_bedrock_message_id_shapes() -> None:
    old = decode_anthropic_id("msg_bdrk_01H8tV2orbi5sQVskxVthgZy")  # row 30
    new = decode_anthropic_id("msg_bdrk_0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p")
    assert old is not None and old.host == "bedrock"
    assert new is not None and new.host == "bedrock" and new.shape == "msg_bdrk_+32"
    assert decode_anthropic_id("msg_bdrk_0A1B2C3D4E5F6G7H8I9J0K1L2M3N4O5P") is None


def test_openrouter_id_and_groq_ulid() -> None:
    (gen,) = decode_string("gen-1764308342-FInFdBZR9TF8jmnOwZGZ", "id")  # row 34
    assert gen.detector == "openrouter-id" and gen.via == "openrouter" and gen.time == 1764308342.0
    assert decode_string("gen-1764308342-FInFdBZR9TF8jmnOwZGZ", "text") == []  # id keys only
    (ulid,) = decode_string("req_01js6ywkh6e62vxj89vrs19wpn", "id")  # a Groq x_groq.id in base58 letters
    assert ulid.detector == "ulid"


# ---------------------------------------------------------------------------------------------
# Reading captures
# ---------------------------------------------------------------------------------------------


def _cassette(interactions: list[dict[str, Any]]) -> bytes:
    return yaml.safe_dump({"interactions": interactions, "version": 1}, sort_keys=False).encode()


def test_vcr_body_string_binary_headers_and_eventstream(tmp_path: Path) -> None:
    stream = b"".join(
        [
            _eventstream("messageStart", {"role": "assistant"}),
            _eventstream("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
            _eventstream("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}),
            _eventstream("messageStop", {"stopReason": "end_turn"}),
        ]
    )
    inter = [
        {
            "request": {
                "method": "POST",
                "body": "{}",
                "headers": {},
                "uri": "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse-stream",
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {
                    "content-type": [b"application/vnd.amazon.eventstream"],
                    "x-amzn-bedrock-output-token-count": ["3"],
                },
                "body": {"string": stream},
            },
        }
    ]
    (tmp_path / "c.yaml").write_bytes(_cassette(inter))
    (rec,) = _scan(tmp_path)
    assert (rec["format"], rec["provider"], rec["host"], rec["via"]) == ("http-capture", "amazon", "bedrock", None)
    assert rec["declared_model"] == "us.amazon.nova-micro-v1:0" and rec["items"] == 1
    fields = {e["field"] for e in rec["evidence"]}
    assert {"request.uri", "x-amzn-bedrock-output-token-count"} <= fields
    exchanges, _ = http_capture.parse((tmp_path / "c.yaml").read_bytes(), "vcr")
    assert (
        exchanges[0].body_kind == "eventstream"
        and http_capture.body_format(exchanges[0].records, LOOKUP) == bedrock.FORMAT
    )


def test_vcr_sse_body_and_opened_items(tmp_path: Path) -> None:
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_01FzttSG1H2WSfUwv2J5qbMB",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [],
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hello"}},
        {"type": "message_stop"},
    ]
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    inter = [
        {
            "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages", "body": None, "headers": {}},
            "response": {
                "status": {"code": 200},
                "headers": {"request-id": ["req_011CSkYzZmrLKTfC5kKrttht"]},
                "body": {"string": sse},
            },
        }
    ]
    path = tmp_path / "a.yml"
    path.write_bytes(_cassette(inter))
    (rec,) = _scan(tmp_path)
    assert (rec["provider"], rec["host"]) == ("anthropic", None)
    assert rec["session_id"] == "msg_01FzttSG1H2WSfUwv2J5qbMB"
    assert not any(e["detector"] == "empty-signature" for e in rec["evidence"])  # a stream's opening block
    assert any(e["field"] == "request-id" and e["detector"] == "anthropic-id" for e in rec["evidence"])
    index = Index([str(tmp_path)], workers=1, use_cache=False).scan()
    (s,) = index.sessions
    opened = open_session(s)
    assert len(opened.items) == 1 and "hello" in opened.items[0].text
    assert opened.items[0].text.startswith("POST https://api.anthropic.com/v1/messages")


def test_har_log(tmp_path: Path) -> None:
    body = {
        "object": "response",
        "id": "resp_0d6bb044bb6ff37200698c51948054819385e24e2ad931ae6e",
        "created_at": 1770803604,
        "model": "gpt-5.1",
        "content_filters": None,
        "output": [],
    }
    har = {
        "log": {
            "version": "1.2",
            "creator": {"name": "devtools"},
            "entries": [
                {
                    "startedDateTime": "2026-02-11T09:53:24.100Z",
                    "request": {
                        "method": "POST",
                        "url": "https://contoso.openai.azure.com/openai/v1/responses",
                        "headers": [],
                    },
                    "response": {
                        "status": 200,
                        "headers": [{"name": "apim-request-id", "value": "3b330e1f"}],
                        "content": {
                            "mimeType": "application/json",
                            "text": base64.b64encode(json.dumps(body).encode()).decode(),
                            "encoding": "base64",
                        },
                    },
                }
            ],
        }
    }
    (tmp_path / "x.har").write_text(json.dumps(har, indent=1), encoding="utf-8")
    (tmp_path / "also-har.json").write_text(json.dumps(har, indent=1), encoding="utf-8")
    recs = _scan(tmp_path)
    assert len(recs) == 2
    for rec in recs:
        assert (rec["format"], rec["provider"], rec["host"]) == ("http-capture", "openai", "azure")
        assert rec["started_at"] == "2026-02-11T09:53:24.000Z"


def test_yaml_that_is_no_cassette_is_named_not_read(tmp_path: Path) -> None:
    """A YAML file with no interactions is no session, and is named (never silently skipped)."""
    (tmp_path / "config.yaml").write_text("name: ci\nsteps:\n  - run: make\n", encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("interactions:\n  - request: [unclosed\n", encoding="utf-8")
    marker = tmp_path.parent / f"{tmp_path.name}-ran"
    (tmp_path / "evil.yaml").write_text(
        f"interactions: !!python/object/apply:os.system ['touch {marker}']\n", encoding="utf-8"
    )
    index = Index([str(tmp_path)], workers=1, use_cache=False).scan()
    assert index.sessions == []
    msgs = [d.message for d in index.diagnostics]
    unread = sorted(d.path for d in index.diagnostics if d.message.startswith("not read: not a recognised format"))
    assert unread == ["config.yaml", "evil.yaml"]
    assert sum("unreadable HTTP capture" in m for m in msgs) == 1  # broken.yaml
    assert not marker.exists()  # the python tag is read as data (a string), never called


def test_real_cassette_as_har_gets_the_same_verdict(real_dir: Path, tmp_path: Path) -> None:
    """Row 32's interactions, re-wrapped as a HAR log, give the cassette's verdict."""
    src = next((real_dir / "pydantic__pydantic-ai").glob("*test_azure_responses_reasoning_context*"))
    doc = yaml.safe_load(src.read_bytes())
    entries = []
    for x in doc["interactions"]:
        rq, rs = x["request"], x["response"]
        entries.append(
            {
                "startedDateTime": "2026-07-27T09:00:00Z",
                "request": {"method": rq["method"], "url": rq["uri"], "headers": []},
                "response": {
                    "status": rs["status"]["code"],
                    "headers": [{"name": k, "value": v[0]} for k, v in rs["headers"].items()],
                    "content": {"mimeType": "application/json", "text": json.dumps(rs["parsed_body"])},
                },
            }
        )
    (tmp_path / "row32.har").write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}), encoding="utf-8")
    (rec,) = _scan(tmp_path)
    assert (rec["provider"], rec["host"], rec["via"]) == ("openai", "azure", None)
    assert "imitation-id" not in rec["flags"] and "declared-mismatch" not in rec["flags"]


# ---------------------------------------------------------------------------------------------
# Bedrock Converse bodies, codex exec streams, flat Claude subagents
# ---------------------------------------------------------------------------------------------


def test_converse_body_with_kimi_tool_ids(tmp_path: Path) -> None:
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "functions.get_weather:0", "name": "get_weather", "input": {}}}],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 2},
        "metrics": {"latencyMs": 9},
    }
    (tmp_path / "c.json").write_text(json.dumps(body), encoding="utf-8")
    (rec,) = _scan(tmp_path)
    assert (rec["format"], rec["provider"]) == ("bedrock-converse", "moonshot")


def test_codex_exec_stream(tmp_path: Path) -> None:
    lines = [
        {"type": "thread.started", "thread_id": "019a2d7b-7fb8-78e1-8cfa-5bdbe274a3aa"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "done"}},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 2}},
    ]
    (tmp_path / "exec.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (rec,) = _scan(tmp_path)
    assert (rec["format"], rec["provider"], rec["session_id"]) == (
        "codex",
        "unknown",
        "019a2d7b-7fb8-78e1-8cfa-5bdbe274a3aa",
    )
    assert rec["items"] == 4


@pytest.mark.parametrize("name", ["agent-a1b2c3d.jsonl", "copied-subagent.jsonl"])
def test_claude_subagent_links_from_its_own_ids(tmp_path: Path, name: str) -> None:
    parent = "4e710f04-7f87-4b76-b9ba-ab287a3112ab"
    line = {
        "parentUuid": None,
        "isSidechain": True,
        "userType": "external",
        "cwd": "/w",
        "sessionId": parent,
        "version": "2.1.38",
        "agentId": "a1b2c3d",
        "type": "user",
        "uuid": "u1",
        "timestamp": "2026-02-10T21:11:57.000Z",
        "message": {"role": "user", "content": "go"},
    }
    (tmp_path / name).write_text(json.dumps(line) + "\n", encoding="utf-8")  # flat: no <session>/subagents/ dirs
    (rec,) = _scan(tmp_path)
    assert (rec["format"], rec["session_id"], rec["parent_session_id"]) == ("claude-code", "a1b2c3d", parent)


def test_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = [
        "interactions:",
        "- request: {uri: 'https://api.openai.com/v1/responses', method: POST}",
        "  response:",
        "    parsed_body:",
        "      a: &a [x, x, x, x, x, x, x, x, x, x]",
    ]
    prev = "a"
    for i in range(1, 12):  # 10**12 values once expanded, a few hundred bytes on disk
        lines.append(f"      l{i}: &l{i} [" + ", ".join([f"*{prev}"] * 10) + "]")
        prev = f"l{i}"
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = Index([str(tmp_path)], workers=1, use_cache=False).scan()
    assert index.sessions == []
    assert any("aliases expand" in d.message for d in index.diagnostics)


def test_invoke_model_stream_chunks_are_anthropic_events(tmp_path: Path) -> None:
    def chunk(event: dict[str, Any]) -> bytes:
        return _eventstream("chunk", {"bytes": base64.b64encode(json.dumps(event).encode()).decode()})

    stream = chunk(
        {
            "type": "message_start",
            "message": {
                "id": "msg_bdrk_01H8tV2orbi5sQVskxVthgZy",
                "type": "message",
                "role": "assistant",
                "model": "claude-haiku-4-5-20251001",
                "content": [],
            },
        }
    ) + chunk({"type": "message_stop"})
    inter = [
        {
            "request": {
                "method": "POST",
                "headers": {},
                "body": None,
                "uri": "https://bedrock-runtime.eu-central-1.amazonaws.com/model/"
                "eu.anthropic.claude-haiku-4-5-20251001-v1:0/invoke-with-response-stream",
            },
            "response": {
                "status": {"code": 200},
                "headers": {"content-type": ["application/vnd.amazon.eventstream"]},
                "body": {"string": stream},
            },
        }
    ]
    (tmp_path / "s.yaml").write_bytes(_cassette(inter))
    (rec,) = _scan(tmp_path)
    assert (rec["provider"], rec["host"], rec["session_id"]) == (
        "anthropic",
        "bedrock",
        "msg_bdrk_01H8tV2orbi5sQVskxVthgZy",
    )


# ---------------------------------------------------------------------------------------------
# The YAML loader: libyaml where it is safe, the pure-Python loader otherwise
# ---------------------------------------------------------------------------------------------

_ODD_YAML = [
    "interactions:\n- request: {uri: 'https://api.openai.com/v1/responses'}\n",
    'interactions:\n- response:\n    body:\n      string: \'{"id": "resp_1", "q": "it\'\'s"}\'\n',
    'interactions:\n- response: {body: {string: "caf\\u00e9 \\t \\x1b[2J"}}\n',
    "interactions:\n- a: 2026-12-01T10:00:00Z\n  b: 0o17\n  c: 1_000\n  d: .inf\n  e: ~\n  f: yes\n",
    "interactions:\n- a: |\n    line one\n    line two\n  b: >-\n    folded\n    text\n",
    "interactions:\n- &x {k: v}\n- *x\n- *undefined\n",
    "interactions:\n\t- tab\n",
    "interactions: [unclosed\n",
    "interactions:\n- k: v\n  k: duplicate\n",
    "? complex key\n: value\ninteractions: []\n",
    "interactions:\n- !!binary aGVsbG8=\n- !!python/object:os.system x\n",
    "--- a\n--- b\n",
]


def _load_outcome(load: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "ok", load(data)
    except Exception as exc:  # the error and its words are part of what must agree
        return "error", (type(exc).__name__, str(exc))


def test_libyaml_loads_what_the_pure_python_loader_loads(real_dir: Path) -> None:
    """The fast loader gives the same document, or the same error, on real and odd YAML."""
    fast, python = cassette_yaml.loaders()
    if fast is None:
        pytest.skip("this PyYAML was built without libyaml")
    texts = [t.encode() for t in _ODD_YAML] + [b"interactions:\n- \xff\xfe invalid utf-8\n"]
    texts += [p.read_bytes() for p in sorted(real_dir.rglob("*.y*ml"))]
    assert len(texts) > len(_ODD_YAML) + 1, "no real cassettes under the fixtures"
    taken = sum(cassette_yaml.depth_within(t, fast, cassette_yaml.C_YAML_MAX_DEPTH) for t in texts)
    assert taken > len(texts) // 2, "the libyaml path was hardly taken: the comparison would prove nothing"
    for text in texts:
        want = _load_outcome(lambda d: yaml.load(d, Loader=python), text)
        assert _load_outcome(cassette_yaml.load_yaml, text) == want, text[:80]


def test_python_tags_are_data_never_calls(tmp_path: Path) -> None:
    """aiohttp-recorded cassettes name header keys with multidict's istr: they load as strings."""
    (tmp_path / "aiohttp.yaml").write_text(
        "interactions:\n- request:\n    headers:\n"
        "      ? !!python/object/apply:multidict._multidict.istr\n      - User-Agent\n      : - OpenAI/Python 1.109.1\n"
        "    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n"
        "  response:\n    headers:\n"
        "      ? !!python/object/new:multidict._multidict.istr\n      - openai-organization\n      : - user-abc\n"
        "      x-run: !!python/object/apply:os.system ['touch " + str(tmp_path / "pwned") + "']\n"
        "    status: {code: 200, message: OK}\n",
        encoding="utf-8",
    )
    doc = cassette_yaml.load_yaml((tmp_path / "aiohttp.yaml").read_bytes())
    headers = doc["interactions"][0]["request"]["headers"]
    assert headers == {"User-Agent": ["OpenAI/Python 1.109.1"]}
    (rec,) = _scan(tmp_path)
    assert (rec["format"], rec["provider"]) == ("http-capture", "openai")
    assert any(e["detector"] == "http-header" and "openai-organization" in e["value"] for e in rec["evidence"])
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    "body", [b"[" * 10**6 + b"]" * 10**6, b"\n    " + b"- " * 200_000 + b"x"], ids=["flow", "block"]
)
def test_deeply_nested_yaml_is_a_diagnostic_not_a_crash(tmp_path: Path, body: bytes) -> None:
    """libyaml's composer recurses in C: past the depth limit the pure-Python loader reports it."""
    (tmp_path / "deep.yaml").write_bytes(b"interactions:\n- request: " + body + b"\n")
    (tmp_path / "ok.yaml").write_text(
        "interactions:\n- request: {uri: 'https://api.openai.com/v1/responses', method: POST}\n"
        '  response: {status: {code: 200}, body: {string: \'{"id": "resp_68a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5"}\'}}\n',
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]  # a segfault would be -11
    assert "deep.yaml: unreadable HTTP capture: YAML could not be loaded: RecursionError" in out.stderr
    assert [json.loads(line)["path"] for line in out.stdout.splitlines()] == ["ok.yaml"]


_YAMLISH = st.lists(
    st.sampled_from(
        [
            "\n",
            "\r\n",
            " ",
            "\t",
            "-",
            "&",
            "a",
            ",",
            "[",
            "{",
            ":",
            "request",
            "response",
            "- request:",
            "  - response:",
            "x&y",
            "&a ",
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_YAMLISH)
def test_cheap_scans_match_their_regex_definitions(text: str) -> None:
    """The memchr-friendly anchor and interaction scans find what the plain regexes define."""
    data = text.encode()
    anchor = re.compile(rb"(?:^|[\s\[{,:-])&[^\s,\[\]{}]+")
    starts = re.compile(rb"^[ \t]*-[ \t]+(?:request|response):", re.MULTILINE)
    assert capture_read._has_anchor(data) == (anchor.search(data) is not None)
    assert capture_read._interaction_starts(data) == [m.start() for m in starts.finditer(data)]


def _json_interaction(uri: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "url": uri,
            "headers": {"Content-Type": "application/json"},
            "body": json.dumps({"model": "mistral-small-latest"}),
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"Date": "Wed, 13 Aug 2025 15:05:41 GMT", "Content-Type": "application/json"},
            "body": json.dumps(body),
        },
    }


def test_json_cassettes_are_captures(tmp_path: Path) -> None:
    """VCR cassettes written as JSON: vcrpy's JSON serializer, and one interaction per file."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "mistral-small-latest",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    one = _json_interaction("https://api.mistral.ai/v1/chat/completions", body)
    (tmp_path / "single.json").write_text(json.dumps(one, indent=2), encoding="utf-8")
    (tmp_path / "vcrpy.json").write_text(json.dumps({"interactions": [one, one], "version": 1}), encoding="utf-8")
    (tmp_path / "not-a-capture.json").write_text(
        json.dumps({"request": "x", "response": {"status": 200}}), encoding="utf-8"
    )
    recs = {r["path"]: r for r in _scan(tmp_path)}
    assert set(recs) == {"single.json", "vcrpy.json", "not-a-capture.json"}
    for name, items in (("single.json", 1), ("vcrpy.json", 2)):
        rec = recs[name]
        assert (rec["format"], rec["provider"], rec["items"]) == ("http-capture", "mistral", items), name
        assert rec["declared_model"] == "mistral-small-latest"
        assert rec["started_at"] == "2025-08-13T15:05:41.000Z"
        assert any(
            e["detector"] == "http-endpoint" and e["value"].startswith("api.mistral.ai") for e in rec["evidence"]
        )
    assert recs["not-a-capture.json"]["format"] != "http-capture"
    index = Index([str(tmp_path)], workers=1, use_cache=False).scan()
    (summary,) = [s for s in index.sessions if s.path == "vcrpy.json"]
    opened = open_session(summary)
    assert len(opened.items) == 2
    assert opened.items[0].text.startswith("POST https://api.mistral.ai/v1/chat/completions")
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "search", str(tmp_path), "api.mistral.ai"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "single.json" in out.stdout and "vcrpy.json" in out.stdout


def test_ruby_vcr_cassettes_are_captures(tmp_path: Path) -> None:
    """The VCR gem (ruby_llm, ruby-openai …): ``http_interactions``, Psych's ``!binary`` bodies and ``!ruby/…`` tags."""
    body = {
        "id": "chatcmpl-f6f23e76-835b-4d4c-b360-735ea2615b93",
        "object": "chat.completion",
        "model": "mistral.voxtral-mini-3b-2507",
        "created": 1787150211,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    b64 = base64.b64encode(json.dumps(body).encode()).decode()
    text = f"""---
http_interactions:
- request:
    method: post
    uri: https://bedrock-runtime.us-west-2.amazonaws.com/model/mistral.voxtral-mini-3b-2507/converse
    body:
      encoding: UTF-8
      string: '{{"messages":[{{"role":"user","content":[{{"text":"hi"}}]}}]}}'
    headers:
      Content-Type:
      - application/json
  response:
    status:
      code: 200
      message: OK
    headers:
      Date:
      - Wed, 19 Aug 2026 14:36:51 GMT
      Content-Type:
      - application/json
      X-Amzn-Bedrock-Input-Token-Count:
      - '7'
    body:
      encoding: ASCII-8BIT
      string: !binary |-
        {b64}
    adapter_metadata: !ruby/object:Faraday::Env
      name: net_http
  recorded_at: Wed, 19 Aug 2026 14:36:51 GMT
recorded_with: VCR 6.4.0
"""
    (tmp_path / "voxtral.yml").write_text(text, encoding="utf-8")
    (rec,) = _scan(tmp_path)
    assert (rec["format"], rec["provider"], rec["host"], rec["items"]) == ("http-capture", "mistral", "bedrock", 1)
    assert rec["declared_model"] == "mistral.voxtral-mini-3b-2507"  # read from the !binary body
    assert rec["started_at"] == "2026-08-19T14:36:51.000Z"


def test_go_vcr_and_json_http_interactions_are_captures(tmp_path: Path) -> None:
    """go-vcr (``url``, ``status: 200 OK`` beside ``code``), VCR's JSON serializer (Ruby's, R's ``vcr``), httpx names."""
    msg = {
        "model": "claude-sonnet-4-5-20250929",
        "id": "msg_01XrsJCi8CQoLcnnWdY8RsJz",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 8, "output_tokens": 5},
    }
    go = {
        "version": 2,
        "interactions": [
            {
                "id": 0,
                "request": {
                    "proto": "HTTP/1.1",
                    "host": "api.anthropic.com",
                    "url": "https://api.anthropic.com/v1/messages",
                    "method": "POST",
                    "body": json.dumps({"model": "claude-sonnet-4-5-20250929", "messages": []}),
                    "headers": {"Content-Type": ["application/json"]},
                },
                "response": {
                    "proto": "HTTP/2.0",
                    "body": json.dumps(msg),
                    "headers": {"Content-Type": ["application/json"]},
                    "status": "200 OK",
                    "code": 200,
                    "duration": "1.2s",
                },
            }
        ],
    }
    (tmp_path / "go.yaml").write_text(yaml.safe_dump(go), encoding="utf-8")
    ruby_json = {
        "http_interactions": [
            {
                "request": {
                    "method": "post",
                    "uri": "https://api.anthropic.com/v1/messages",
                    "body": {"encoding": "UTF-8", "string": "{}"},
                    "headers": {},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {},
                    "body": {"encoding": "UTF-8", "string": json.dumps(msg)},
                },
                "recorded_at": "Wed, 19 Aug 2026 14:34:12 GMT",
            }
        ],
        "recorded_with": "VCR 6.4.0",
    }
    (tmp_path / "ruby.json").write_text(json.dumps(ruby_json), encoding="utf-8")
    home_made = {
        "key": "deadbeefcafe1234",
        "request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages"},
        "response": {
            "status_code": 200,
            "headers": [["content-type", "application/json"]],
            "body_b64": base64.b64encode(json.dumps(msg).encode()).decode(),
        },
    }  # (an httpx transport's own)
    (tmp_path / "home-made.json").write_text(json.dumps(home_made, indent=2), encoding="utf-8")
    recs = {r["path"]: r for r in _scan(tmp_path)}
    for name in ("go.yaml", "ruby.json", "home-made.json"):
        rec = recs[name]
        assert (rec["format"], rec["provider"], rec["declared_model"]) == (
            "http-capture",
            "anthropic",
            "claude-sonnet-4-5-20250929",
        ), name
        assert any(e["detector"] == "http-endpoint" for e in rec["evidence"]), name
    assert capture_read._status("200 OK") == 200 and capture_read._status("OK") is None


def test_a_lone_recorded_response_is_a_capture(tmp_path: Path) -> None:
    """``{status, headers, body}`` (a mock server's fixture, as in Arize openinference): its body and headers speak."""
    msg = {
        "model": "claude-sonnet-4-6",
        "id": "msg_redacted01",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "42"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 49, "output_tokens": 5},
    }
    (tmp_path / "string-body.json").write_text(
        json.dumps({"status": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(msg)}, indent=2),
        encoding="utf-8",
    )
    (tmp_path / "object-body.json").write_text(
        json.dumps({"status": 200, "headers": {"request-id": "req_011CSHxvQKtNeTVqHdLrt5Nr"}, "body": msg}),
        encoding="utf-8",
    )
    (tmp_path / "status-only.json").write_text(json.dumps({"status": 200, "body": "ok"}), encoding="utf-8")
    recs = {r["path"]: r for r in _scan(tmp_path)}
    for name in ("string-body.json", "object-body.json"):
        rec = recs[name]
        assert (rec["format"], rec["declared_model"], rec["provider"]) == (
            "http-capture",
            "claude-sonnet-4-6",
            "anthropic",
        ), name
    assert recs["string-body.json"]["confidence"] == 0.5  # declared only: nothing in it decodes
    assert any(e["detector"] == "anthropic-id" for e in recs["object-body.json"]["evidence"])  # the header's request id
    assert recs["status-only.json"]["format"] != "http-capture"  # no headers: not a recorded response


@pytest.mark.parametrize(
    ("uri", "via"),
    [
        ("https://router.huggingface.co/together/v1/chat/completions", "huggingface"),
        ("https://myorg-myaccount.snowflakecomputing.com/api/v2/cortex/v1/chat/completions", "snowflake"),
    ],
)
def test_gateways_are_routers_not_providers(tmp_path: Path, uri: str, via: str) -> None:
    """A router's endpoint sets `via`; the provider stays the model's maker, never the router."""
    body = {
        "id": "f1e2d3c4b5a69788",
        "object": "chat.completion",
        "model": "deepseek-ai/DeepSeek-R1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    inter = [
        {
            "request": {
                "method": "POST",
                "uri": uri,
                "headers": {},
                "body": json.dumps({"model": "deepseek-ai/DeepSeek-R1"}),
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {"Content-Type": ["application/json"]},
                "body": {"string": json.dumps(body)},
            },
        }
    ]
    (tmp_path / "c.yaml").write_bytes(_cassette(inter))
    (rec,) = _scan(tmp_path)
    assert (rec["via"], rec["host"]) == (via, None)
    assert rec["provider"] == "deepseek"


def test_grpc_recordings_are_read_from_their_json(tmp_path: Path) -> None:
    """pydantic-ai's xai-sdk cassettes: a unary call and a stream, as protobuf JSON beside raw bytes."""
    response = {
        "id": "332bd54b-d862-b1d5-0a21-a866f9b59f89",
        "created": "2026-01-16T17:04:40.247661156Z",
        "model": "grok-4-fast-non-reasoning",
        "system_fingerprint": "fp_4616e76413",
        "outputs": [
            {
                "finish_reason": "REASON_TOOL_CALLS",
                "message": {
                    "role": "ROLE_ASSISTANT",
                    "tool_calls": [{"id": "call_56494531", "function": {"name": "get_weather", "arguments": "{}"}}],
                },
            }
        ],
    }
    chunk = {"id": "332bd54b-d862-b1d5-0a21-a866f9b59f89", "outputs": [{"delta": {"content": "Paris"}}]}
    doc = {
        "version": 1,
        "interactions": [
            {
                "request_sample": {"json": {"model": "grok-4-fast-non-reasoning"}, "raw": b"\x0a\x02hi"},
                "response_sample": {"json": response, "raw": b"\x0a\x24"},
            },
            {
                "request_stream": {"json": {"model": "grok-4-fast-non-reasoning"}, "raw": b""},
                "response_stream": {"chunks_json": [chunk, chunk], "chunks_raw": [b"", b""]},
            },
        ],
    }
    (tmp_path / "test_tool_call.xai.yaml").write_bytes(yaml.safe_dump(doc, sort_keys=False).encode())
    (rec,) = _scan(tmp_path)
    assert (rec["format"], rec["items"], rec["provider"]) == ("http-capture", 2, "xai")
    assert rec["declared_model"] == "grok-4-fast-non-reasoning"
    assert rec["started_at"] == "2026-01-16T17:04:40.247Z"
    assert any(e["detector"] == "tool-id" and e["value"] == "call_56494531" for e in rec["evidence"])
    index = Index([str(tmp_path)], workers=1, use_cache=False).scan()
    opened = open_session(index.sessions[0])
    assert [it.text.split(" ", 1)[0] for it in opened.items] == ["gRPC", "gRPC"]


def test_search_reads_encoded_bodies(tmp_path: Path) -> None:
    """A body stored as base64 (VCR's !!binary, Ruby's !binary, base64_string) is searched as the item view shows it."""
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "tooluse_Hc3MXzVAJJ7C28xbJu45mA", "name": "get_weather", "input": {}}}
                ],
            }
        },
        "stopReason": "tool_use",
    }
    b64 = base64.b64encode(json.dumps(body).encode()).decode()
    uri = "https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-sonnet-4-6/converse"
    for name, tag in (("py.yaml", "!!binary"), ("rb.yml", "!binary")):
        (tmp_path / name).write_text(
            f"interactions:\n- request:\n    method: POST\n    uri: {uri}\n    body: '{{}}'\n    headers: {{}}\n"
            f"  response:\n    status: {{code: 200, message: OK}}\n    headers: {{}}\n    body:\n      string: {tag} |-\n        {b64}\n",
            encoding="utf-8",
        )
    plain = json.dumps(body)
    (tmp_path / "plain.yaml").write_text(
        f"interactions:\n- request:\n    method: POST\n    uri: {uri}\n    body: '{{}}'\n    headers: {{}}\n"
        f"  response:\n    status: {{code: 200, message: OK}}\n    headers: {{}}\n    body:\n      string: '{plain}'\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "search", "--json", str(tmp_path), "tooluse_Hc3MXzVAJJ7C28xbJu45mA"],
        capture_output=True,
        text=True,
        check=True,
    )
    hits = {h["path"]: h for h in map(json.loads, out.stdout.splitlines())}
    assert set(hits) == {"py.yaml", "rb.yml", "plain.yaml"}
    for name in ("py.yaml", "rb.yml"):
        assert hits[name]["field"] == "response.body.output.message.content[0].toolUse.toolUseId", name
        assert hits[name]["line"] == 2  # the exchange's first line: its body's text is not in the file's bytes
    assert "tooluse_Hc3MXzVAJJ7C28xbJu45mA" in hits["rb.yml"]["snippet"]
    none = subprocess.run(
        [sys.executable, "-m", "musetui", "search", str(tmp_path), "tooluse_NotThere000000000000"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert none.returncode == 1 and not none.stdout


def test_the_chat_model_is_declared_over_an_embedding_model(tmp_path: Path) -> None:
    """crewAI's memory cassettes embed on Vertex, then chat on OpenAI: the session is the chat's (no false mismatch)."""
    embed = {
        "request": {
            "method": "POST",
            "headers": {},
            "body": "{}",
            "uri": "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/"
            "publishers/google/models/gemini-embedding-001:predict",
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {},
            "body": {"string": json.dumps({"predictions": [{"embeddings": {"values": [0.1]}}]})},
        },
    }
    chat_body = {
        "id": "chatcmpl-D2McCV4jf8r4tE3MImSiypQjFQu6c",
        "object": "chat.completion",
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    chat = {
        "request": {
            "method": "POST",
            "headers": {},
            "uri": "https://api.openai.com/v1/chat/completions",
            "body": json.dumps({"model": "gpt-4.1-mini"}),
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"openai-organization": ["org-x"]},
            "body": {"string": json.dumps(chat_body)},
        },
    }
    (tmp_path / "memory.yaml").write_bytes(_cassette([embed, chat]))
    (tmp_path / "embed-only.yaml").write_bytes(_cassette([embed]))
    recs = {r["path"]: r for r in _scan(tmp_path)}
    mem = recs["memory.yaml"]
    assert (mem["provider"], mem["declared_model"], mem["flags"]) == ("openai", "gpt-4.1-mini-2025-04-14", [])
    assert recs["embed-only.yaml"]["declared_model"] == "gemini-embedding-001"  # nothing else to prefer
