"""Where a string sits decides what it proves (docs/fingerprints.md#zones).

A session whose model quotes, or writes to a file, another provider's ids, tokens and tool
ids keeps its own verdict: no declared-mismatch, no mixed-providers, no outlier. The sessions
are the repository's sample transcripts with lines added in their own formats' shapes; the
quoted artifacts are real ones from public captures (vercel/ai's OpenAI Responses fixtures,
an Anthropic Messages response).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from musetui.core.sources import claude_code, codex, muse
from musetui.core.sources.zones import ZONE_ESCAPED, ZONE_MODEL, ZONE_TEXT, ZONE_TOOL_ARGS

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"

# An OpenAI Responses fixture, from vercel/ai (packages/openai/src/responses/__fixtures__).
RS = "rs_0f35ed53160b395301693cc95817ac8190b978637daea4987e"
RESP = "resp_0f35ed53160b395301693cc957829881909359e7f80cdd20b5"
FERNET = (
    "gAAAAABpPMlcH0HHEv5_ozHwP5Gxz5ZLE7A8Aw7GK94sa1KWHqXLrAch29KZrZqCzH6PkWnLWTxIZv4TL70DPoKbS_ryNp6d2rC8vS04U7qWLd"
    "sbYnsqmPYVCCQ2Rigd84Yh9mgctGTs_w5x7NY3pm5lOxUv5jGHAW20nAMGfpFAAYRjW1aAA7f1CjfcXgm8CgNOc1Mu3L9a-q64LU8taFhc_9-GN"
    "BqRD-Gxul4pVXTQ4BlnYwOGOsfctcM_SNxYgYM2gS0pawkltN5250JlO7LaUcteD8E47fpcHGS9hmzDpMGWvIpuksPjzBnVn_R9JJcJSd_rMO8T"
    "TrGlXT-Thw_UOdX3aZZLac2OMD_MIkGN4GuGISC674RZlJWi8_x-C-VqdkRm0qsEwYvFp17ykYReCtPocXWtOI1dyVZogyQYO5b6qEmHjPXIFqyo"
    "PHLjes_CrWyR7ChVcR_GTJq55lsHfppBevMU4wGbHga6CgaC_dcbGo4ECXPh0HUqs4U7t58JgJcCQ1DX1AygF4cRjKAs4mqTXOR4ruHutmknG61s"
    "Ouc19FtOyhIadquNd2EBb9pa7Rix5Rk_0cTb1jkUBVH3QknhjjCDvvlp8MIp5jU55ANgI9ZpL3TTVWziTCJLdeLMUpohKggDJ7axs9qdhl3dfdvd"
    "hLnN5GimFNxWglWn8ioQ7KMYil9HxGErd47q0GxfFqnuNMfchsLESwCdmGMqsaavEjZjD_bQ_iXASQgmk2FYXo41tsHtrVBzJCFFLhswr1t47b8q"
    "b3_pJeevwLeuBfRR56ZKxQLyp35rLGzizSKknkKRrbimGL8L4hSI2ktPlH0JZlBiH7mhsBPSs8W7GhZjMYFUQ3RMBshUjHGx3Tu_iW5pNKkrI_XW"
    "DHaCNurXBNYV9Kj23Xj6GAQaFzGn62GpvKbObXFlW941aRuZLPCAhGHRZptxrNZEg_DcVcUrMEPHubEA5YUMSb4iZtszE0FT7kVmYmFU3SR-heOU"
    "2umXykQx5wnCoi0FtzWLDSXUbElcex-5k11pIoQH59HQYhfNzogV9p9MO1O9hGRaJkA_RZbUxRVKqDURRjNWzXJb8SdoCcRZSFdv_2WRv5NCt1XHB"
    "FcAL8DSa6Mu2y0DR-SW7kpu-yKRa8_R4g9dtweK6JRWZxG_TLxH_JIAwfmbts97zBwC-9pcmnC1UshE6_Z9RwRe3a2OTBNkS6dTHV8WMgM02fVFP"
    "hiFmFLj_jGUzxW4uQlWnTorO2-X2C-EcgzOGkEngM6_fhY-ZWTN4xEA6GRoCTSTYEaHq1MPIASasagN6N-NwALyBzLJ3vmwdo6ub5KS1JB4G_knI"
    "apiUKaGjVTGXCVG8iVTCrjc-fhrZnnY4yZyQP8RSc33JTIE3fYgPyJ9qwHRYlsH70TVbv0gXmUKCE-woT2nqyqYJMdIwtPWOpAc2lXEr5xeM0mZ3"
    "XzuArSP3rogl-p6TZNhrKfzQbMlL3yC9UK_rkShXOoi4MpOmNbnNgRCO2XZ_qO7MTTFqZwaM6VOnX3SStqEaTskoASEz7no-6OmMC7eJRZj1LtUq"
    "h2kCQ=="
)
FC = "fc_0742d30c1d273351016a6145f1dac0819fb0053980ae918c16"
CALL = "call_rj6LW6NEyodD5YVKeoexoLNz"
CALL2 = "call_O2IvSLQcJ0bwIvJZ2ovGV69M"

OPENAI_FIXTURE = {
    "id": RESP,
    "object": "response",
    "created_at": 1765591383,
    "model": "gpt-5-mini-2025-08-07",
    "output": [
        {"id": RS, "type": "reasoning", "encrypted_content": FERNET, "summary": []},
        {
            "id": FC,
            "type": "function_call",
            "arguments": '{"sku":"sku_123"}',
            "call_id": CALL,
            "name": "getInventory",
        },
    ],
    "service_tier": "default",
}

# An Anthropic Messages response (the repository's sample): signature, msg_, toolu_ and req_ ids.
ANTHROPIC_FIXTURE = json.loads((SAMPLES / "api" / "anthropic-messages-thinking.json").read_text(encoding="utf-8"))
ANTHROPIC_FIXTURE["request_id"] = "req_011CedXKvKHE5PGDNovvuC4w"

BAD_FLAGS = {"declared-mismatch", "mixed-providers", "outlier", "imitation-id", "time-mismatch"}


def _scan(root: Path) -> dict[str, dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", str(root)],
        capture_output=True,
        check=True,
        text=True,
    )
    recs = [json.loads(line) for line in out.stdout.splitlines()]
    return {r["path"]: r for r in recs}


def _append(path: Path, *records: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n")


def _last(path: Path) -> dict[str, Any]:
    lines = path.read_text(encoding="utf-8").splitlines()
    rec: dict[str, Any] = json.loads(lines[-1])
    return rec


def _muse_tree(tmp_path: Path) -> tuple[Path, Path, str]:
    root = tmp_path / "muse-vm"
    shutil.copytree(SAMPLES / "muse-vm", root)
    session = next(p for p in root.rglob("01a05efc-e4f0-74c5-a906-ad2f4901df14/session.jsonl"))
    return root, session, str(session.relative_to(root)).replace("\\", "/")


def _muse_event(session: Path, event: dict[str, Any]) -> dict[str, Any]:
    last = _last(session)
    return {
        "stream": last["stream"],
        "recorded_at": last["recorded_at"] + 1_000_000,
        "payload": {"kind": "run", "event": event},
    }


QUOTE = (
    f"The cached response was {RESP}; its reasoning item {RS} carries "
    f"gpt_responses_v1:{FERNET} and the call {CALL} ({FC})."
)


def _assert_own_verdict(rec: dict[str, Any], provider: str, before: dict[str, Any]) -> None:
    assert rec["provider"] == provider, rec["provider"]
    assert not BAD_FLAGS & set(rec["flags"]), rec["flags"]
    assert rec["confidence"] == pytest.approx(before["confidence"])
    quoted = [e for e in rec["evidence"] if e["provider"] == "openai" or e["detector"] == "fernet"]
    assert quoted, "the quoted artifacts are still listed"
    assert all("quoted: inside" in e["detail"] for e in quoted), [e["detail"] for e in quoted]


def test_muse_reply_quoting_openai_artifacts_keeps_its_verdict(tmp_path: Path) -> None:
    root, session, rel = _muse_tree(tmp_path)
    before = _scan(root)[rel]
    _append(
        session,
        _muse_event(session, {"kind": "assistant_message_committed", "message_id": "msg-q1", "text": QUOTE}),
    )
    rec = _scan(root)[rel]
    _assert_own_verdict(rec, before["provider"], before)
    assert any("text the model" in e["detail"] for e in rec["evidence"] if e["detector"] == "fernet")


def test_muse_tool_call_arguments_quoting_openai_artifacts(tmp_path: Path) -> None:
    root, session, rel = _muse_tree(tmp_path)
    before = _scan(root)[rel]
    call = {
        "call_id": "call_" + "0f" * 16,
        "name": "write_file",
        "args": {
            "path": "fixtures/response.json",
            "id": RS,
            "token": FERNET,
            "content": json.dumps(OPENAI_FIXTURE),
        },
    }
    _append(
        session,
        _muse_event(
            session,
            {
                "kind": "assistant_tool_calls_committed",
                "message_id": "msg-q2",
                "tool_calls": [call],
            },
        ),
    )
    rec = _scan(root)[rel]
    _assert_own_verdict(rec, before["provider"], before)


def _claude_tree(tmp_path: Path) -> tuple[Path, Path, str]:
    root = tmp_path / "claude"
    shutil.copytree(SAMPLES / "claude", root)
    session = next(root.rglob("4e710f04-7f87-4b76-b9ba-ab287a3112ab.jsonl"))
    return root, session, str(session.relative_to(root)).replace("\\", "/")


def _claude_assistant(session: Path, content: list[dict[str, Any]]) -> dict[str, Any]:
    lines = [json.loads(x) for x in session.read_text(encoding="utf-8").splitlines()]
    last = next(x for x in reversed(lines) if x.get("type") == "assistant")
    rec = dict(last)
    rec["uuid"] = "0b8e1f7a-0000-4000-8000-000000000001"
    rec["message"] = dict(last["message"], content=content)
    return rec


@pytest.mark.parametrize("items", [1, 2])
def test_claude_code_write_of_openai_fixture_keeps_anthropic(tmp_path: Path, items: int) -> None:
    root, session, rel = _claude_tree(tmp_path)
    before = _scan(root)[rel]
    fixture = dict(OPENAI_FIXTURE, output=OPENAI_FIXTURE["output"][:items])
    write = {
        "type": "tool_use",
        "id": "toolu_01SiHxYiZ5cuNJULF8zEYGq4",
        "name": "Write",
        "input": {
            "file_path": "/home/dev/site/tests/fixtures/openai.json",
            "content": json.dumps(fixture, indent=2),
        },
    }
    _append(session, _claude_assistant(session, [write]))
    rec = _scan(root)[rel]
    _assert_own_verdict(rec, "anthropic", before)


def test_claude_code_text_and_tool_input_quoting_openai_ids(tmp_path: Path) -> None:
    root, session, rel = _claude_tree(tmp_path)
    before = _scan(root)[rel]
    blocks = [
        {"type": "text", "text": QUOTE},
        {
            "type": "tool_use",
            "id": "toolu_01SiHxYiZ5cuNJULF8zEYGq5",
            "name": "mcp__openai__get_response",
            "input": {"id": RS, "call_id": CALL2, "encrypted_content": FERNET},
        },
    ]
    _append(session, _claude_assistant(session, blocks))
    rec = _scan(root)[rel]
    _assert_own_verdict(rec, "anthropic", before)


def _codex_tree(tmp_path: Path) -> tuple[Path, Path, str]:
    root = tmp_path / "codex"
    shutil.copytree(SAMPLES / "codex", root)
    session = sorted(root.rglob("rollout-*.jsonl"))[0]
    return root, session, str(session.relative_to(root)).replace("\\", "/")


def test_codex_writing_an_anthropic_fixture_keeps_openai(tmp_path: Path) -> None:
    root, session, rel = _codex_tree(tmp_path)
    before = _scan(root)[rel]
    last = _last(session)
    patch = (
        "*** Begin Patch\n*** Add File: tests/fixtures/anthropic.json\n"
        + "\n".join("+" + line for line in json.dumps(ANTHROPIC_FIXTURE, indent=2).splitlines())
        + "\n*** End Patch\n"
    )
    args = json.dumps({"cmd": "cat > fixture.json", "body": ANTHROPIC_FIXTURE})
    _append(
        session,
        {
            "timestamp": last["timestamp"],
            "type": "response_item",
            "payload": {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": "call_Zq1x0y9PZ3kLmN4bVc7dWs2e",
                "name": "apply_patch",
                "input": patch,
            },
        },
        {
            "timestamp": last["timestamp"],
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec_command",
                "arguments": args,
                "call_id": "call_Zq1x0y9PZ3kLmN4bVc7dWs2f",
            },
        },
        {
            "timestamp": last["timestamp"],
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": f"Saved {ANTHROPIC_FIXTURE['id']} (tool {ANTHROPIC_FIXTURE['content'][2]['id']}).",
                    }
                ],
            },
        },
    )
    rec = _scan(root)[rel]
    assert rec["provider"] == "openai"
    assert not BAD_FLAGS & set(rec["flags"]), rec["flags"]
    quoted = [e for e in rec["evidence"] if e["provider"] == "anthropic"]
    assert quoted and all("quoted: inside" in e["detail"] for e in quoted)
    assert rec["confidence"] == pytest.approx(before["confidence"])


def test_zone_tables_name_the_stack_fields() -> None:
    z = muse.ZONES
    assert z.zone_of("payload.event.signature") == ZONE_MODEL
    assert z.zone_of("payload.event.tool_calls[3].call_id") == ZONE_MODEL
    assert z.zone_of("payload.event.tool_calls[0].args.id") == ZONE_TOOL_ARGS
    assert z.zone_of("payload.event.text") == ZONE_TEXT
    assert claude_code.ZONES.zone_of("message.content[1].input.content<json>.id") == ZONE_ESCAPED
    assert claude_code.ZONES.zone_of("requestId") == ZONE_MODEL
    assert codex.ZONES.zone_of("payload.encrypted_content") == ZONE_MODEL
    assert codex.ZONES.zone_of("payload.summary[0].text") == ZONE_TEXT


@pytest.mark.parametrize(
    ("line", "needle", "zone"),
    [
        (b'{"payload":{"event":{"signature":"gpt_responses_v1:gAAAAABx"}}}', b"gAAAAA", ZONE_MODEL),
        (b'{"payload":{"event":{"text":"see gpt_responses_v1:gAAAAABx"}}}', b"gAAAAA", ZONE_TEXT),
        (
            b'{"tool_calls":[{"call_id":"call_a","args":{"id":"rs_1"}},{"call_id":"call_b"}]}',
            b"rs_1",
            ZONE_TOOL_ARGS,
        ),
        (
            b'{"tool_calls":[{"call_id":"call_a","args":{"id":"rs_1"}},{"call_id":"call_b"}]}',
            b"call_b",
            ZONE_MODEL,
        ),
        (
            b'{"tool_calls":[{"call_id":"call_a","args":{"x":"{\\"id\\":\\"rs_2\\"}"}}]}',
            b"rs_2",
            ZONE_ESCAPED,
        ),
        (b'{"tool_calls": [{"args": {"id": "rs_3"}}, {"id": "call_c"}]}', b"rs_3", ZONE_TOOL_ARGS),
        (b'{"tool_calls": [{"args": {"id": "rs_3"}}, {"id": "call_c"}]}', b"call_c", ZONE_MODEL),
    ],
)
def test_raw_zone_of_a_hit(line: bytes, needle: bytes, zone: int) -> None:
    assert muse.ZONES.zone_at(line, line.index(needle)) == zone


def test_api_body_quoting_anthropic_ids_keeps_openai(tmp_path: Path) -> None:
    body = json.loads((SAMPLES / "api" / "openai-responses-reasoning.json").read_text(encoding="utf-8"))
    (tmp_path / "before").mkdir()
    (tmp_path / "before" / "r.json").write_text(json.dumps(body), encoding="utf-8")
    before = _scan(tmp_path / "before")["r.json"]
    quoted = json.dumps(ANTHROPIC_FIXTURE)
    body["output"].append(
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": quoted}],
        }
    )
    body["output"].append({"type": "function_call", "name": "save", "arguments": quoted, "call_id": CALL2})
    (tmp_path / "after").mkdir()
    (tmp_path / "after" / "r.json").write_text(json.dumps(body), encoding="utf-8")
    rec = _scan(tmp_path / "after")["r.json"]
    assert rec["provider"] == "openai" and rec["confidence"] >= before["confidence"]  # (its own call_id counts)
    assert not BAD_FLAGS & set(rec["flags"]), rec["flags"]
    assert [e for e in rec["evidence"] if e["provider"] == "anthropic"]


def test_responses_stream_deltas_quoting_anthropic_ids_keep_openai(tmp_path: Path) -> None:
    """A Responses stream: the text deltas are the model's text, even before the completed response repeats them."""
    quoted = f"Saved {ANTHROPIC_FIXTURE['id']} and {ANTHROPIC_FIXTURE['content'][2]['id']}; request {ANTHROPIC_FIXTURE['request_id']}."
    events = [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {
                "id": RESP,
                "object": "response",
                "created_at": 1765591383,
                "model": "gpt-5-mini",
                "output": [],
            },
        },
        {
            "type": "response.output_item.added",
            "sequence_number": 1,
            "output_index": 0,
            "item": {"id": RS, "type": "reasoning", "encrypted_content": FERNET, "summary": []},
        },
        {
            "type": "response.output_text.delta",
            "sequence_number": 2,
            "item_id": FC,
            "output_index": 1,
            "content_index": 0,
            "delta": quoted,
        },
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 3,
            "item_id": FC,
            "output_index": 2,
            "delta": json.dumps({"body": ANTHROPIC_FIXTURE}),
        },
    ]
    (tmp_path / "stream.chunks.txt").write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")
    (rec,) = _scan(tmp_path).values()
    assert rec["format"] == "openai-responses"
    assert rec["provider"] == "openai"
    assert not BAD_FLAGS & set(rec["flags"]), rec["flags"]
    assert all("quoted: inside" in e["detail"] for e in rec["evidence"] if e["provider"] == "anthropic")
