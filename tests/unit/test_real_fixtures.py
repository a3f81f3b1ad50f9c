"""Every real public capture in ../shared/fixtures/real gets the format, ids and verdict SOURCES.md expects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from musetui.core.index import Index

# file-name fragment -> (format, session_id, declared_model, provider, host, via): SOURCES.md rows 1-37
EXPECTED: dict[str, tuple[str, str | None, str | None, str, str | None, str | None]] = {
    "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": (
        "claude-code",
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
        "claude-sonnet-4-20250514",
        "anthropic",
        None,
        None,
    ),
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": (
        "claude-code",
        "fe5e1c67-53e7-4862-81ae-d0e013e3270b",
        "claude-sonnet-4-20250514",
        "anthropic",
        None,
        None,
    ),
    "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl": (
        "codex",
        "019c8a53-a0dd-7130-bcd7-95445d84846a",
        "gpt-5.3-codex",
        "openai",
        None,
        None,
    ),
    "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl": (
        "codex",
        "019c8bfe-ec25-79e0-97d7-bda6a9c575ff",
        "gpt-5.3-codex",
        "openai",
        None,
        None,
    ),
    "anthropic-claude-opus-5-reasoning-high.1.json": (
        "anthropic-messages",
        "msg_011CdMNhurHSJCxCC2NB7WYc",
        "claude-opus-5",
        "anthropic",
        None,
        None,
    ),
    "anthropic-clear-thinking.1.json": (
        "anthropic-messages",
        "msg_01XrsJCi8CQoLcnnWdY8RsJz",
        "claude-sonnet-4-5-20250929",
        "anthropic",
        None,
        None,
    ),
    "anthropic-tool-no-args.json": (
        "anthropic-messages",
        "msg_01GCBaV8gyWAYgMVggRqZbuQ",
        "claude-3-opus-20240229",
        "anthropic",
        None,
        None,
    ),
    "azure-reasoning-encrypted-content.1.json": (
        "openai-responses",
        "resp_09d58369f84fca7901693cb8381f608196acdaff061ff8de58",
        "gpt-5-mini",
        "openai",
        "azure",
        None,
    ),
    "azure-text.1.json": (
        "openai-responses",
        "resp_0d6bb044bb6ff37200698c51948054819385e24e2ad931ae6e",
        "gpt-5.1",
        "openai",
        "azure",
        None,
    ),
    "azure-tool-call.1.json": ("openai-responses", None, "gpt-5.1", "openai", "azure", None),
    "deepseek-tool-call.json": (
        "openai-chat",
        "7a630f5b-b7e6-4878-82f8-d77db164d42b",
        "deepseek-reasoner",
        "deepseek",
        None,
        None,
    ),
    "google-reasoning-gemini3.json": (
        "gemini",
        "DniLab2dFPeSxN8PpqXY4Ag",
        "gemini-3-pro-preview",
        "google",
        None,
        None,
    ),
    "google-tool-call-gemini3.json": (
        "gemini",
        "JniLacKqGqH0xs0P0O776As",
        "gemini-3-pro-preview",
        "google",
        None,
        None,
    ),
    "groq-tool-call.json": ("openai-chat", None, "llama-3.3-70b-versatile", "groq", None, None),
    "mistral-tool-call.json": ("openai-chat", None, "mistral-small-latest", "mistral", None, None),
    "azure-model-router.1.chunks.txt": (
        "openai-chat",
        "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt",
        "gpt-5-nano-2025-08-07",
        "openai",
        "azure",
        None,
    ),
    "openai-text.json": (
        "openai-chat",
        "chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU",
        "gpt-4.1-nano-2025-04-14",
        "openai",
        None,
        None,
    ),
    "openai-compaction.1.json": ("openai-responses", None, "gpt-5.2-2025-12-11", "openai", None, None),
    "openai-local-shell-tool.1.json": (
        "openai-responses",
        "resp_68da74aaae58819ca776fbd20244e8df0fdbc19a07110799",
        None,
        "openai",
        None,
        None,
    ),
    "openai-phase.1.json": (
        "openai-responses",
        "resp_0465b6d1ae1f97c500699f88318ee481a3b627f7fcb4875152",
        None,
        "openai",
        None,
        None,
    ),
    "openai-reasoning-encrypted-content.1.chunks.txt": (
        "openai-responses",
        None,
        "gpt-5.1-codex-max",
        "openai",
        None,
        None,
    ),
    "openai-reasoning-encrypted-content.1.json": (
        "openai-responses",
        "resp_0f35ed53160b395301693cc957829881909359e7f80cdd20b5",
        "gpt-5-mini-2025-08-07",
        "openai",
        None,
        None,
    ),
    "openai-web-search-tool.1.json": (
        "openai-responses",
        "resp_0953eda47ee17412006933306199c88195b44f9cf2986e1d5b",
        "gpt-5-mini-2025-08-07",
        "openai",
        None,
        None,
    ),
    "programmatic-tool-calling.1.json": (
        "openai-responses",
        "resp_0742d30c1d273351016a6145ef9a28819fa909a12fb4ce083c",
        None,
        "openai",
        None,
        None,
    ),
    "xai-tool-call.json": ("openai-chat", "61c0468b-2a98-413e-f654-dbffcdbb62c1", "grok-3-mini", "xai", None, None),
    # rows 26-37 (added 2026-12)
    "test__fixtures__transcripts__short.jsonl": (
        "claude-code",
        "55604662-cf2a-4331-851a-ec234028f8ca",
        "claude-opus-4-6",
        "anthropic",
        None,
        None,
    ),
    "test__fixtures__transcripts__subagent.jsonl": (
        "claude-code",
        "491e126e-1e71-469c-ade2-fcc8af567c74",
        "claude-opus-4-6",
        "anthropic",
        None,
        None,
    ),
    "codex-samples__stream-output-5.jsonl": (
        "codex",
        "019a2d7b-7fb8-78e1-8cfa-5bdbe274a3aa",
        None,
        "unknown",
        None,
        None,
    ),
    "test_anthropic_code_execution_tool.yaml": (
        "http-capture",
        "msg_01FzttSG1H2WSfUwv2J5qbMB",
        "claude-sonnet-4-6",
        "anthropic",
        None,
        None,
    ),
    "test_anthropic_cache_bedrock_real_api.yaml": (
        "http-capture",
        "msg_bdrk_01H8tV2orbi5sQVskxVthgZy",
        "claude-haiku-4-5-20251001",
        "anthropic",
        "bedrock",
        None,
    ),
    "test_bedrock_model_thinking_part_anthropic_adaptive.yaml": (
        "http-capture",
        None,
        "us.anthropic.claude-sonnet-4-6",
        "anthropic",
        "bedrock",
        None,
    ),
    "test_azure_responses_reasoning_context_default_wire_contract[gpt-5.5].yaml": (
        "http-capture",
        "resp_0bb4c92b9ee53ce5006a6771221ca08195be1955289fa07890",
        "gpt-5.5",
        "openai",
        "azure",
        None,
    ),
    "test_openai_responses_phase_live.yaml": (
        "http-capture",
        "resp_094ebefab06f6c100069efd5814cd881958cfa10878ca4446d",
        "gpt-5.5-2026-04-23",
        "openai",
        None,
        None,
    ),
    "test_openrouter_tool_optional_parameters.yaml": (
        "http-capture",
        "gen-1764308342-FInFdBZR9TF8jmnOwZGZ",
        "anthropic/claude-sonnet-4.5",
        "anthropic",
        "vertex",
        "openrouter",
    ),
    "test_openrouter_usage.yaml": (
        "http-capture",
        "gen-1762789695-8IngOktYUifJqeBs0mwc",
        "openai/gpt-5-mini",
        "openai",
        None,
        "openrouter",
    ),
    "test_google_vertex_service_tier_flex.yaml": (
        "http-capture",
        "T9--adqvDqL4vdIPz7X2iQ4",
        "gemini-3-flash-preview",
        "google",
        "vertex",
        None,
    ),
    "test_zai_model_simple.yaml": ("http-capture", None, "glm-4.7", "zhipu", None, None),
}


@pytest.fixture(scope="module")
def records() -> dict[str, dict[str, object]]:
    real = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "real"
    if not real.is_dir():
        pytest.skip(f"real public captures not available at {real} (they live in ../shared, outside this repo)")
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", "-q", str(real)],
        capture_output=True,
        check=True,
    )
    recs = [json.loads(line) for line in out.stdout.splitlines()]
    return {r["path"]: r for r in recs}


def _find(records: dict[str, dict[str, object]], frag: str) -> dict[str, object]:
    hits = [r for p, r in records.items() if p.endswith(frag)]
    assert len(hits) == 1, f"{frag}: {len(hits)} records"
    return hits[0]


def test_one_record_per_file(records: dict[str, dict[str, object]]) -> None:
    assert len(records) >= len(EXPECTED) == 37  # the shared fixtures grow; each expected one is checked below
    assert list(records) == sorted(records), "records are sorted by path"


@pytest.mark.parametrize("frag", sorted(EXPECTED))
def test_expected_attribution(records: dict[str, dict[str, object]], frag: str) -> None:
    fmt, sid, model, provider, host, via = EXPECTED[frag]
    rec = _find(records, frag)
    assert rec["format"] == fmt
    if sid is not None:
        assert rec["session_id"] == sid
    if model is not None:
        assert rec["declared_model"] == model
    assert rec["provider"] == provider, rec["evidence"]
    assert rec["host"] == host, rec["evidence"]
    assert rec["via"] == via, rec["evidence"]
    false_flags = {"declared-mismatch", "time-mismatch", "imitation-id"} & set(rec["flags"])  # type: ignore[arg-type]
    assert not false_flags, (false_flags, rec["evidence"])
    assert rec["malformed_lines"] == 0
    assert 0.0 <= float(rec["confidence"]) <= 1.0  # type: ignore[arg-type]
    assert rec["items"] >= 1  # type: ignore[operator]
    for ev in rec["evidence"]:  # type: ignore[union-attr]
        assert set(ev) == {"detector", "provider", "host", "weight", "line", "field", "value", "detail"}


def test_azure_comes_from_content_filters_not_store_byte(records: dict[str, dict[str, object]]) -> None:
    for frag in ("azure-reasoning-encrypted-content.1.json", "azure-text.1.json", "azure-tool-call.1.json"):
        rec = _find(records, frag)
        azure = [e for e in rec["evidence"] if e["host"] == "azure"]  # type: ignore[union-attr,index]
        assert azure and all("content_filter" in e["value"] or "content_filter" in e["field"] for e in azure)  # type: ignore[index]


def test_codex_has_no_item_ids_only_call_ids(records: dict[str, dict[str, object]]) -> None:
    rec = _find(records, "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl")
    detectors = {e["detector"] for e in rec["evidence"]}  # type: ignore[union-attr,index]
    assert "tool-id" in detectors
    assert "openai-item-id" not in detectors and "fernet" not in detectors
    assert rec["declared_provider"] == "openai"
    assert rec["items"] == 837
    assert rec["started_at"] == "2026-02-23T11:48:09.610Z"


def test_claude_split_messages_are_merged(records: dict[str, dict[str, object]]) -> None:
    rec = _find(records, "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    assert rec["items"] < 438  # 438 lines, split API messages merged


def test_index_in_process_matches(real_dir: Path) -> None:
    index = Index([str(real_dir)], workers=1).scan()
    assert len(index.sessions) >= 37
    assert not [d for d in index.diagnostics if "malformed" in d.message]


def test_http_capture_evidence_names_the_endpoint_and_headers(records: dict[str, dict[str, object]]) -> None:
    rec = _find(records, "test_anthropic_cache_bedrock_real_api.yaml")
    ev = rec["evidence"]
    uri = [e for e in ev if e["detector"] == "http-endpoint"]  # type: ignore[union-attr,index]
    assert (
        uri
        and uri[0]["field"] == "request.uri"
        and uri[0]["value"].startswith("bedrock-runtime.eu-central-1.amazonaws.com/model/")
    )  # type: ignore[index]
    headers = [e for e in ev if e["detector"] == "http-header"]  # type: ignore[union-attr,index]
    assert headers and all(e["field"].startswith("x-amzn-bedrock-") and e["host"] == "bedrock" for e in headers)  # type: ignore[index]
    assert rec["items"] == 2  # one item per interaction


def test_bedrock_converse_signature_has_the_bedrock_header_variant(records: dict[str, dict[str, object]]) -> None:
    rec = _find(records, "test_bedrock_model_thinking_part_anthropic_adaptive.yaml")
    sigs = [e for e in rec["evidence"] if e["detector"] == "anthropic-signature"]  # type: ignore[union-attr,index]
    assert sigs and all(e["provider"] == "anthropic" and e["host"] == "bedrock" for e in sigs)  # type: ignore[index]
    assert all("field 2 = 1" in e["detail"] and "[guess]" in e["detail"] for e in sigs)  # type: ignore[index]


def test_first_party_signatures_have_no_bedrock_variant(records: dict[str, dict[str, object]]) -> None:
    for frag in (
        "test_anthropic_code_execution_tool.yaml",
        "test__fixtures__transcripts__subagent.jsonl",
        "anthropic-claude-opus-5-reasoning-high.1.json",
    ):
        rec = _find(records, frag)
        sigs = [e for e in rec["evidence"] if e["detector"] == "anthropic-signature"]  # type: ignore[union-attr,index]
        assert sigs and all(e["host"] is None for e in sigs), frag  # type: ignore[index]


def test_store_byte_00_from_api_openai_com_is_not_azure(records: dict[str, dict[str, object]]) -> None:
    rec = _find(records, "test_openai_responses_phase_live.yaml")
    assert rec["host"] is None
    assert any(e["detector"] == "http-endpoint" and e["provider"] == "openai" for e in rec["evidence"])  # type: ignore[union-attr,index]
