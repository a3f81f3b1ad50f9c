"""Token usage per session: totals where the transcript records them, null where it does not (never 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from musetui.core.index import Index

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts"
REAL = Path("/work/shared/fixtures/real")

# Hand-checked: Claude Code sums each (message.id, requestId) once, input = input + cache reads + cache writes;
# Codex rollouts keep the last token_count's running totals; codex exec sums turn.completed; Muse sums model_completed.
CASES = [
    (
        SAMPLE,
        "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/session.jsonl",
        {"input": 42936, "output": 3031, "cached": 25152, "reasoning": 919},
    ),
    (
        REAL,
        "marot__spotter/test__fixtures__transcripts__short.jsonl",
        {"input": 25353, "output": 13, "cached": 11515, "reasoning": None},
    ),
    # 170 API messages over more lines: summed once each (summing every line would read 5,946,379 in, 77,612 out).
    (
        REAL,
        "d-kimuson__claude-code-viewer/mock-global-claude-dir__projects__sample-project__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        {"input": 3786648, "output": 51933, "cached": 3647854, "reasoning": None},
    ),
    (
        REAL,
        "madshn__localpush/src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
        {"input": 298373, "output": 1123, "cached": 238848, "reasoning": 483},
    ),
    (
        REAL,
        "jnarowski__agentcmd/agent__research__codex__codex-samples__stream-output-5.jsonl",
        {"input": 6086, "output": 223, "cached": 2944, "reasoning": None},
    ),
    # API bodies: a Responses stream of four responses (each response.completed once, summed), a Chat stream whose
    # last chunk has usage, an Anthropic body (input + cache reads + writes), a Gemini body (no cached count).
    (
        REAL,
        "vercel__ai/packages__openai__src__responses____fixtures____openai-reasoning-encrypted-content.1.chunks.txt",
        {"input": 914, "output": 92, "cached": 0, "reasoning": 0},
    ),
    (
        REAL,
        "vercel__ai/packages__openai__src__chat____fixtures____azure-model-router.1.chunks.txt",
        {"input": 15, "output": 78, "cached": 0, "reasoning": 64},
    ),
    (SAMPLE, "api/anthropic-messages-thinking.json", {"input": 914, "output": 236, "cached": 0, "reasoning": 61}),
    (
        REAL,
        "vercel__ai/packages__google__src____fixtures____google-reasoning-gemini3.json",
        {"input": 9, "output": 29, "cached": None, "reasoning": 258},
    ),
]


@pytest.mark.parametrize(("root", "path", "usage"), CASES, ids=[c[1].rsplit("/", 1)[-1][:40] for c in CASES])
def test_usage_totals_on_real_files(root: Path, path: str, usage: dict[str, int | None]) -> None:
    if not (root / path).exists():
        pytest.skip(f"{root} is not on this machine")
    index = Index([str(root / path)], use_cache=False).scan()
    (session,) = index.sessions.values() if isinstance(index.sessions, dict) else index.sessions
    assert session.record()["usage"] == usage


def test_a_format_without_usage_reads_null_not_zero(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_text('{"hello": "world"}\n')
    (session,) = Index([str(f)], use_cache=False).scan().sorted_sessions()
    assert session.record()["usage"] == {"input": None, "output": None, "cached": None, "reasoning": None}


def test_usage_survives_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cold = {s.path: s.record()["usage"] for s in Index([str(SAMPLE)], use_cache=True).scan().sorted_sessions()}
    warm_index = Index([str(SAMPLE)], use_cache=True, light=True).scan()
    warm = {s.path: s.record()["usage"] for s in warm_index.sorted_sessions()}
    assert warm_index.result.cache_hits == len(warm_index.files)
    assert warm == cold and any(u["input"] for u in cold.values())


def test_the_report_shows_a_sessions_tokens() -> None:
    from musetui.core.report import session_markdown

    (session,) = Index([str(SAMPLE / CASES[0][1])], use_cache=False).scan().sorted_sessions()
    assert "- **Tokens:** 42,936 in (25,152 cached) · 3,031 out (919 reasoning)" in session_markdown(session)


def test_parquet_types_usage_as_a_struct_of_counts(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from musetui.core.parquet import write_records

    records = [s.record() for s in Index([str(SAMPLE)], use_cache=False).scan().sorted_sessions()]
    out = tmp_path / "s.parquet"
    write_records(records, str(out))
    table = pq.read_table(out)
    assert (
        str(table.schema.field("usage").type) == "struct<input: int64, output: int64, cached: int64, reasoning: int64>"
    )
    assert table.column("usage").to_pylist() == [r["usage"] for r in records]
