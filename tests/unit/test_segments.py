"""Turn by turn: item verdicts, segments, provider-switch and backward line times (issue 25)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests_switched import (  # (tests/tests_switched.py: shared with the Pilot tests)
    CLAUDE,
    claude_switched,
)

from musetui.cli import main
from musetui.core.fingerprints.segments import CONFIRMS, FILLER, STRONG_ANCHOR, judge_item
from musetui.core.fingerprints.types import Decoded
from musetui.core.index import Index
from musetui.core.model import SessionSummary
from musetui.core.reasons import TimeBackwards
from musetui.core.scanner import scan_file
from musetui_synth import formats, mint
from musetui_synth.corpus import generate


def _dump(records: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def _claude_switched(sample_dir: Path, tmp_path: Path) -> Path:
    return claude_switched(sample_dir, tmp_path)


def _generated_switched(tmp_path: Path) -> tuple[Path, int]:
    """A Muse avocado session from the generator, then later turns that an OpenAI Responses stack served."""
    root = tmp_path / "gen"
    generate(root, 0.1, 3)
    for path in sorted(root.rglob("session.jsonl")):
        head = orjson.loads(path.read_bytes().splitlines()[0])
        if head["payload"]["record"]["model_id"].startswith("avocado"):
            break
    else:
        pytest.fail("the generator wrote no avocado session")
    lines = path.read_bytes().splitlines()
    last = orjson.loads(lines[-1])
    sid = last["stream"]["id"]
    t = last["recorded_at"] / 1e6 + 5
    rng = random.Random(11)
    conv = mint.new_openai_conversation(rng, store=True)
    event = formats.muse_event
    appended = [
        formats.muse_line(sid, t, event({"kind": "reasoning_committed", "message_id": conv.item_id(rng, "rs", t),
                                         "text": "Next step.", "signature": mint.muse_gpt_responses_signature(rng, int(t))})),
        formats.muse_line(sid, t + 2, event({"kind": "assistant_tool_calls_committed", "message_id": conv.item_id(rng, "fc", t + 2),
                                             "tool_calls": [{"call_id": mint.openai_call_id(rng), "name": "ls", "args": {}}]})),
        formats.muse_line(sid, t + 4, event({"kind": "tool_result_batch_committed", "results": []})),
    ]  # fmt: skip
    path.write_bytes(path.read_bytes() + _dump(appended))
    return path, len(lines)


def _scan(path: Path) -> SessionSummary:
    out = scan_file(str(path), path.name, str(path.parent))
    assert out.summary is not None
    return out.summary


def _show(path: Path, line: int, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["show", str(path), "--line", str(line)]) == 0
    return capsys.readouterr().out.splitlines()


def test_a_real_claude_session_that_switches_has_two_segments(
    sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two segments with the right lines, provider-switch at line 19, and show --line names each segment's provider."""
    path = _claude_switched(sample_dir, tmp_path)
    s = _scan(path)
    segs = [g.record() for g in s.segments]
    assert [(g["first_line"], g["last_line"], g["provider"]) for g in segs] == [
        (1, 18, "anthropic"),
        (19, 22, "openai"),
    ]
    assert segs[1]["items"] == 4 and segs[1]["started_at"] == "2026-09-01T22:45:00.000Z"
    a = s.attribution
    assert a.provider == "anthropic"  # the session's verdict is still the session's
    assert "provider-switch" in a.flags and "declared-mismatch" in a.flags and "time-mismatch" in a.flags
    texts = {r.flag: r.text for r in a.reasons if r.flag in ("provider-switch", "declared-mismatch", "time-mismatch")}
    assert (
        texts["provider-switch"]
        == "the provider changes at line 19: anthropic for lines 1–18, then openai from line 19"
    )
    assert "lines 19–22" in texts["declared-mismatch"]
    assert texts["time-mismatch"] == "recorded times run backwards: line 21 is recorded −262.5 d from line 20"
    record = s.record()
    assert record["flags"].index("provider-switch") < len(record["flags"]) and record["segments"] == segs
    first = _show(path, 4, capsys)
    assert first[2].startswith("- **Item verdict:** anthropic") and first[3].endswith(
        "lines 1–18 (16 items), anthropic"  # (two of its lines continue a split API message)
    )
    assert sum(g.items for g in s.segments) == s.items
    assert first[4].startswith("- **Verdict:** anthropic")
    second = _show(path, 20, capsys)
    assert second[2].startswith("- **Item verdict:** openai") and second[3].endswith("lines 19–22 (4 items), openai")
    assert second[4].startswith("- **Verdict:** anthropic")
    assert main(["scan", str(path), "--explain"]) == 0
    explained = capsys.readouterr().out
    assert "  provider-switch: the provider changes at line 19" in explained
    assert "  segment: segment 2 of 2: lines 19–22 (4 items), openai" in explained


def test_a_generated_muse_session_that_switches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A declared Avocado session whose later items carry OpenAI Responses ids is a switch."""
    path, n = _generated_switched(tmp_path)
    s = _scan(path)
    assert [(g.first_line, g.last_line, g.provider) for g in s.segments] == [(1, n, "meta"), (n + 1, n + 3, "openai")]
    assert "provider-switch" in s.attribution.flags
    assert any(r.flag == "provider-switch" and f"at line {n + 1}" in r.text for r in s.attribution.reasons)
    assert _show(path, 4, capsys)[3].endswith(", meta")
    assert _show(path, n + 1, capsys)[3].endswith(", openai")


def test_sessions_that_never_switch_have_one_segment(sample_dir: Path) -> None:
    """One segment per sample session, carrying the session's verdict and its span."""
    index = Index([str(sample_dir)], workers=1, use_cache=False).scan()
    assert index.sessions
    for s in index.sessions:
        rec = s.record()
        assert len(rec["segments"]) == 1, rec["path"]
        g = rec["segments"][0]
        assert (g["provider"], g["host"], g["items"]) == (rec["provider"], rec["host"], rec["items"])
        assert (g["started_at"], g["ended_at"]) == (rec["started_at"], rec["ended_at"])
        assert "provider-switch" not in rec["flags"] and "time-mismatch" not in rec["flags"]


def test_the_segments_survive_the_cache(sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold, then warm from the cache: the same records, segments and new reasons included."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "t"
    shutil.copytree(sample_dir / "claude", root / "claude")
    _claude_switched(sample_dir, tmp_path / "x")
    shutil.copy(tmp_path / "x" / CLAUDE, root / CLAUDE)

    def records() -> list[dict[str, Any]]:
        return sorted((s.record() for s in Index([str(root)], workers=1).scan().sessions), key=lambda r: r["path"])

    cold, warm = records(), records()
    assert cold == warm
    assert any(len(r["segments"]) == 2 and "provider-switch" in r["flags"] for r in warm)


def _dec(detector: str, provider: str | None, strength: str = "strong", shape: str = "", value: str = "v") -> Decoded:
    return Decoded(detector, value, provider, None, strength, "verified", shape=shape)  # type: ignore[arg-type]


def test_item_verdicts() -> None:
    """Own strong evidence decides; otherwise the declaration at its confidence; otherwise unknown."""
    strong = judge_item([(_dec("openai-item-id", "openai"), 0)], ("anthropic", None))
    assert (strong.provider, strong.basis, strong.anchor) == ("openai", "evidence", STRONG_ANCHOR)
    quoted = judge_item([(_dec("openai-item-id", "openai"), 1)], ("anthropic", None))
    assert (quoted.provider, quoted.confidence, quoted.basis, quoted.anchor) == ("anthropic", 0.5, "declared", FILLER)
    lookalike = judge_item([(_dec("tool-id", "openai", "medium", "call_+24"), 0)], ("anthropic", None))
    assert (lookalike.provider, lookalike.basis) == ("anthropic", "declared")
    self_hosted = judge_item([(_dec("tool-id", None, "weak", "call_+8lower"), 0)], ("meta", None))
    assert (self_hosted.provider, self_hosted.anchor) == ("meta", CONFIRMS)
    nothing = judge_item([], (None, None))
    assert (nothing.provider, nothing.confidence, nothing.basis) == ("unknown", 0.0, "none")


def test_times_backwards_within_the_tolerance_raise_nothing(sample_dir: Path, tmp_path: Path) -> None:
    """A line recorded 5 minutes before the one above it is normal (long responses); 262 days is not."""
    path = _claude_switched(sample_dir, tmp_path)
    lines = path.read_bytes().splitlines()
    lines[-2] = lines[-2].replace(b"2025-12-13T10:00:00.000Z", b"2026-09-01T22:40:07.000Z")
    path.write_bytes(b"\n".join(lines) + b"\n")
    reasons = _scan(path).attribution.reasons
    assert not any(isinstance(r, TimeBackwards) for r in reasons)  # (its id, minted 262 days earlier, still is one)


def test_parquet_types_the_segments(sample_dir: Path, tmp_path: Path) -> None:
    """The Parquet schema carries segments as a list of typed structs."""
    pa = pytest.importorskip("pyarrow")
    from musetui.core.parquet import read_records, schema_for, write_records

    rec = _scan(claude_switched(sample_dir, tmp_path)).record()
    write_records([rec], str(tmp_path / "s.parquet"))
    assert read_records(str(tmp_path / "s.parquet"))[0]["segments"] == rec["segments"]
    field = schema_for([rec]).field("segments")
    assert field.type == pa.list_(pa.struct([
        ("first_line", pa.int64()), ("last_line", pa.int64()), ("items", pa.int64()), ("provider", pa.string()),
        ("host", pa.string()), ("started_at", pa.string()), ("ended_at", pa.string()),
    ]))  # fmt: skip


def test_fleet_counts_the_segments_of_a_switched_session(sample_dir: Path, tmp_path: Path) -> None:
    """One switched session makes its machine the most unusual: its OpenAI stretch is a rare class there."""
    from musetui.core.fleet import load_machines, rank

    roots = []
    for name in ("vm1", "vm2", "vm3"):
        root = tmp_path / name
        shutil.copytree(sample_dir / "claude", root / "claude")
        roots.append(root)
    _claude_switched(sample_dir, tmp_path / "x")
    shutil.copy(tmp_path / "x" / CLAUDE, roots[1] / CLAUDE)
    ranked = rank(load_machines([str(r) for r in roots], use_cache=False, workers=1))
    top = ranked[0]
    assert top.root == str(roots[1])
    assert top.parts["r"] == 1 and top.parts["D"] > 0  # the openai segment counts, not only the session's flags
    assert all(m.parts["D"] > 0 and m.parts["r"] == 0 for m in ranked[1:])  # (the others lack the openai stretch)


def test_segments_of_a_file_read_in_slices_and_of_an_append(
    sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lines and item counts are those of a whole read when the file is sliced, or resumed after an append."""
    from musetui.core import scanner
    from musetui.core.scanner import resume_file

    path = claude_switched(sample_dir, tmp_path)
    whole = [g.record() for g in _scan(path).segments]
    monkeypatch.setattr(scanner, "WINDOW_LINES", 8)
    assert [g.record() for g in _scan(path).segments] == whole
    monkeypatch.undo()
    data = path.read_bytes()
    cut = data.index(b"\n", len((sample_dir / CLAUDE).read_bytes()) - 1) + 1  # the sample's own 18 lines
    path.write_bytes(data[:cut])
    first = scan_file(str(path), path.name, str(path.parent), want_state=True)
    assert first.state is not None and first.summary is not None and len(first.summary.segments) == 1
    path.write_bytes(data)
    resumed = resume_file(first.state, str(path))
    assert resumed is not None and resumed.summary is not None
    got = [g.record() for g in resumed.summary.segments]
    # (the first segment ends in the bytes read before: its end is the time of its last located artifact)
    assert got[0]["ended_at"] == "2026-09-01T22:41:11.115Z"
    got[0]["ended_at"] = whole[0]["ended_at"]
    assert got == whole
    assert "provider-switch" in resumed.summary.attribution.flags


def test_a_host_change_is_a_switch_and_an_unshown_host_is_not() -> None:
    """Exchanges served by openai on Azure, then one that shows no host, then openai on Fireworks: two segments."""
    from musetui.core.fingerprints.segments import ItemVerdict, conclude_capture
    from musetui.core.model import Attribution

    s = SessionSummary(
        "c.yaml", "/c.yaml", "/", "http-capture", "", items=4, attribution=Attribution("openai", "azure", 0.9)
    )
    votes = [
        (1, ItemVerdict("openai", "azure", 0.9, "evidence", STRONG_ANCHOR)),
        (5, ItemVerdict("openai", None, 0.9, "evidence", STRONG_ANCHOR)),
        (9, ItemVerdict("openai", "fireworks", 0.9, "evidence", STRONG_ANCHOR)),
    ]
    conclude_capture(s, [1, 5, 9, 13], votes)
    assert [(g.first_line, g.last_line, g.items, g.host) for g in s.segments] == [
        (1, 5, 2, "azure"),
        (9, 13, 2, "fireworks"),
    ]
    (switch,) = [r for r in s.attribution.reasons if r.flag == "provider-switch"]
    assert (
        switch.text == "the provider changes at line 9: openai/azure for lines 1–5, then openai/fireworks from line 9"
    )


def test_segments_count_items_as_the_session_does(real_dir: Path, tmp_path: Path) -> None:
    """A real Claude Code subagent transcript (16 of its 96 lines continue a split API message), then an
    OpenAI stretch whose last two lines are one split message: the segments' items add up to the session's."""
    src = real_dir / "marot__spotter" / "test__fixtures__transcripts__subagent.jsonl"
    data = src.read_bytes()
    last = orjson.loads(data.splitlines()[-1])
    base = {k: last[k] for k in ("cwd", "sessionId", "version", "gitBranch", "userType") if k in last}
    rng = random.Random(5)
    conv = mint.new_openai_conversation(rng, store=True)
    t = 1770900000.0

    def assistant(mid: str, content: list[dict[str, Any]], k: int) -> dict[str, Any]:
        return {**base, "parentUuid": None, "isSidechain": True, "type": "assistant", "uuid": mint.uuid4(rng),
                "requestId": f"req_{k}", "timestamp": f"2026-02-12T13:{20 + k}:00.000Z",
                "message": {"model": "claude-sonnet-4-6", "id": mid, "type": "message", "role": "assistant",
                            "content": content}}  # fmt: skip

    split = conv.item_id(rng, "msg", t + 2)
    appended = [
        assistant(conv.item_id(rng, "rs", t), [{"type": "thinking", "thinking": "Next.",
                  "signature": mint.muse_gpt_responses_signature(rng, int(t))}], 1),
        assistant(split, [{"type": "text", "text": "Running it."}], 2),
        assistant(split, [{"type": "tool_use", "id": mint.openai_call_id(rng), "name": "Bash", "input": {}}], 2),
    ]  # fmt: skip
    path = tmp_path / "agent.jsonl"
    path.write_bytes(data + _dump(appended))
    s = _scan(path)
    assert len(s.segments) == 2 and s.segments[1].provider == "openai", s.segments
    assert s.items == 80 + 2  # (96 records, 16 of them merged; 3 appended, one merged)
    assert [g.items for g in s.segments] == [80, 2]
    assert sum(g.items for g in s.segments) == s.items == s.record()["items"]
