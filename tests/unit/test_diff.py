"""``musetui diff``: fingerprint profiles of sessions and roots, side by side."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.cells import cell_len

from musetui.core.diff import (
    Profile,
    compare,
    key_paths,
    load_profiles,
    offset_class,
    session_profile,
    usage_field,
)
from musetui.core.diff_view import render, wrap
from musetui.core.index import Index
from musetui.core.model import SessionSummary
from musetui.core.packed import pack_record
from musetui.core.session import open_session

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"


def _run(*args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "musetui", "diff", *args], capture_output=True, text=True, env=env)


def _sample_sessions() -> list[SessionSummary]:
    return Index([str(SAMPLE)], workers=1, use_cache=False).scan().sessions


def _muse_pair() -> tuple[SessionSummary, SessionSummary]:
    """The muse-special worker and an Avocado sibling (same parent), as the scan finds them."""
    sessions = _sample_sessions()
    special = next(s for s in sessions if s.declared_model == "muse-special")
    sibling = next(
        s for s in sessions
        if s.parent_session_id == special.parent_session_id and s.declared_model == "avocado-1.3"
    )  # fmt: skip
    return special, sibling


def _entries(result: dict[str, Any], *groups: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["kind"], e["trait"]): e for g in groups for e in result[g]}


def test_muse_special_vs_avocado_sibling_names_the_differences() -> None:
    special, sibling = _muse_pair()
    run = _run(special.abspath, sibling.abspath, "--json", "--no-cache")
    assert run.returncode == 0, run.stderr
    result = orjson.loads(run.stdout)
    assert set(result) == {"a", "b", "shared", "only_a", "only_b", "differ"}
    assert result["a"]["session_id"] == special.session_id and result["b"]["session_id"] == sibling.session_id
    differ = _entries(result, "differ")
    tool = differ[("tool-id class", "tool-id")]
    assert set(tool["a"]) == {"call_+24"} and set(tool["b"]) == {"call_+32hex"}
    reasoning = differ[("reasoning kind", "reasoning")]
    assert set(reasoning["a"]) == {"encrypted"} and set(reasoning["b"]) == {"empty-signature"}
    assert differ[("verdict", "provider")]["a"] == {"openai": 1} and differ[("verdict", "provider")]["b"] == {"meta": 1}
    # indexed with its family, as show reports it
    assert "outlier" in differ[("verdict", "flags")]["a"]
    layout = _entries(result, "only_a")[("id layout", "openai-item-id")]
    assert set(layout["a"]) == {"new50"} and layout["b"] is None
    assert _entries(result, "only_a")[("store byte", "openai-item-id")]["a"] == {"00 (store:true)": 6}
    shared = _entries(result, "shared")
    assert ("declared", "format") in shared and shared[("id layout", "uuid7")]["a"] == {"uuid7": 1}
    # heaviest first: the verdict, then the attribution's strong evidence, then the rest
    weights = [e["weight"] for e in result["differ"]]
    assert weights == sorted(weights, reverse=True) and result["differ"][0]["trait"] == "provider"
    # the scan records them now: traits, not a note
    assert not any(note.startswith("segments:") for note in result["a"]["notes"])
    assert ("segments", "switches") in shared


def test_text_view_fits_80_columns_and_lists_the_differences() -> None:
    special, sibling = _muse_pair()
    run = _run(special.abspath, sibling.abspath, "--no-cache", columns=80)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    differ = lines[lines.index(next(x for x in lines if x.startswith("Differ"))) : lines.index("Only in A (9)")]
    text = "\n".join(differ)
    assert "tool-id class: tool-id" in text and "call_+24 ×3" in text and "call_+32hex ×3" in text
    assert "reasoning kind: reasoning" in text and "encrypted ×3" in text
    only_a = "\n".join(lines[lines.index("Only in A (9)") :])
    assert "id layout: openai-item-id" in only_a and "new50 ×6" in only_a


def test_root_vs_root_on_the_sample_and_the_real_captures(real_dir: Path) -> None:
    run = _run(str(SAMPLE), str(real_dir), "--json", "--no-cache")
    assert run.returncode == 0, run.stderr
    result = orjson.loads(run.stdout)
    real = Index([str(real_dir)], workers=1, use_cache=False).scan().sessions
    assert result["a"]["scope"] == result["b"]["scope"] == "root"
    assert (result["a"]["sessions"], result["b"]["sessions"]) == (
        len(_sample_sessions()),
        len(real),
    )
    provider = _entries(result, "differ")[("verdict", "provider")]
    assert provider["a"]["meta"] == 4 and "google" in provider["b"] and "meta" not in provider["b"]
    assert sum(provider["b"].values()) == len(real)  # a root counts sessions per value
    assert ("verdict", "via") in _entries(result, "only_b")  # openrouter captures
    text = _run(str(SAMPLE), str(real_dir), columns=80)
    assert text.returncode == 0 and max(cell_len(x) for x in text.stdout.splitlines()) <= 80


@pytest.mark.parametrize("width", [40, 57, 80, 81, 132, 200])
def test_every_width_fits(width: int) -> None:
    codex = str(SAMPLE / "codex")
    a, b = load_profiles(str(SAMPLE / "muse-vm"), codex, [], use_cache=False)
    out = render(compare(a, b), width)
    assert max(cell_len(line) for line in out.splitlines()) <= width
    assert "Only in A" in out and "Shared" in out


def test_ids_resolve_under_a_root_and_errors_are_one_line() -> None:
    special, sibling = _muse_pair()
    assert special.session_id and sibling.session_id
    by_id = _run(
        f"{SAMPLE}:{special.session_id[:13]}",
        sibling.session_id,
        "--root",
        str(SAMPLE),
        "--json",
        "--no-cache",
    )
    assert by_id.returncode == 0, by_id.stderr
    result = orjson.loads(by_id.stdout)
    assert (result["a"]["session_id"], result["b"]["session_id"]) == (
        special.session_id,
        sibling.session_id,
    )
    for args, message in (
        ((f"{SAMPLE}:01a0", str(SAMPLE)), "names 7 sessions"),
        ((special.abspath, str(SAMPLE)), "A is a session and B a root"),
        ((f"{special.abspath}:3", sibling.abspath), "is not a directory"),
        (("nosuchid", sibling.abspath, "--root", str(SAMPLE)), "no session nosuchid under"),
        ((str(SAMPLE), str(SAMPLE / "nowhere")), "no session"),
    ):
        run = _run(*args, "--no-cache")
        assert run.returncode == 2 and run.stdout == ""
        assert len(run.stderr.splitlines()) == 1 and message in run.stderr, run.stderr


def test_transcript_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    body = {
        "id": "chatcmpl-abc", "object": "chat.completion", "created": 1767225600,
        "model": "evil\x1b]52;c;aGk=\x07\u202emodel\x1b[2J",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi", "\x1b[31mkey": 1}}],
    }  # fmt: skip
    (tmp_path / "a.json").write_bytes(orjson.dumps(body))
    run = _run(
        str(tmp_path / "a.json"),
        str(SAMPLE / "api" / "openai-responses-reasoning.json"),
        "--no-cache",
    )
    assert run.returncode == 0, run.stderr
    assert "evil" in run.stdout and "model" in run.stdout
    assert not any(c in run.stdout for c in "\x1b\x07\u202e")


def test_compare_groups_and_orders_traits() -> None:
    a, b = Profile("a", "session"), Profile("b", "session")
    a.add("verdict", "provider", "openai", 3.0)
    b.add("verdict", "provider", "meta", 3.0)
    a.add("tool-id class", "tool-id", "call_+24", 1.0, 3)
    b.add("tool-id class", "tool-id", "call_+24", 0.6)
    a.add("id layout", "openai-item-id", "new50", 1.0)
    b.add("response keys", "message", "choices[].message.content", 0.4)
    a.add("marker", "openai-item-id", "8196", 1.0)
    a.add("marker", "openai-item-id", "8197", 1.0)
    b.add("marker", "openai-item-id", "8196", 1.0)
    cmp = compare(a, b)
    assert [(e.kind, e.name) for e in cmp.differ] == [
        ("verdict", "provider"),
        ("marker", "openai-item-id"),
    ]
    assert [(e.kind, e.a, e.b) for e in cmp.shared] == [("tool-id class", {"call_+24": 3}, {"call_+24": 1})]
    assert [e.name for e in cmp.only_a] == ["openai-item-id"] and [e.name for e in cmp.only_b] == ["message"]
    assert cmp.shared[0].weight == 1.0  # the heavier side's weight
    text = render(cmp, 80)
    # a differing trait shows what differs, and how much is shared
    assert "8197" in text and "(+1 in both)" in text


def test_profile_parts() -> None:
    rec = {"type": "x", "payload": {"usage": {"input_tokens": 1, "cached": None}, "args": {"path": "a"},
           "items": [{"id": 1}, {"name": "n", "id": 2}], "empty": {}}}  # fmt: skip
    assert sorted(set(key_paths(rec))) == [
        "payload.args", "payload.empty", "payload.items[].id", "payload.items[].name",
        "payload.usage.cached", "payload.usage.input_tokens", "type",
    ]  # fmt: skip
    assert usage_field("payload.info.total_token_usage.input_tokens") == "input_tokens"
    assert (
        usage_field("message.usage.cache_creation.ephemeral_5m_input_tokens")
        == "cache_creation.ephemeral_5m_input_tokens"
    )
    assert usage_field("payload.usage") is None and usage_field("payload.text") is None
    assert [offset_class(d) for d in (0.4, -0.9, 3, 6, -30, -300, -3600)] == [
        "0 s", "0 s", "after, ≤ 5 s", "after, > 5 s", "before, ≤ 1 min", "before, ≤ 10 min", "before, > 10 min",
    ]  # fmt: skip
    assert wrap("a/very/long/path/name.jsonl", 10) == ["a/very/", "long/path/", "name.jsonl"]
    assert wrap("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert wrap("response.usage.cacheWriteInputTokenCount ×2", 25) == [
        "response.usage.",
        "cacheWriteInputTokenCount",
        "×2",
    ]


def test_quoted_input_adds_no_artifact_traits(tmp_path: Path) -> None:
    """A tool result quoting another provider's ids is not the session's fingerprint (the scan's own zones)."""
    _special, sibling = _muse_pair()
    lines = Path(sibling.abspath).read_bytes().splitlines()
    quoted = orjson.loads(next(x for x in lines if b"tool_result_batch_committed" in x))
    quoted["payload"]["event"]["results"][0]["output"] = (
        "pasted: rs_0fb0962a440df430006a974b47304a81967cd5f8099555ab70 call_vRYeJ5ycDgP6BwLGJEtinVF6"
    )
    folder = tmp_path / "sessions" / "s1"
    folder.mkdir(parents=True)
    (folder / "session.jsonl").write_bytes(b"\n".join([*lines, orjson.dumps(quoted)]) + b"\n")
    a, b = load_profiles(sibling.abspath, str(folder / "session.jsonl"), [], use_cache=False)
    assert ("id layout", "openai-item-id") not in b.traits
    assert b.traits[("tool-id class", "tool-id")].values == {"call_+32hex": 3}
    assert b.traits[("verdict", "provider")].values == {"meta": 1}
    # the attribution still lists the quoted id as (down-weighted) evidence: the profile shows its evidence as it is
    assert [e.kind for e in compare(a, b).differ if e.kind not in ("verdict", "evidence")] == []


def test_segments_and_usage_of_the_record_when_it_has_them() -> None:
    """The record's ``segments`` and ``usage`` (DESIGN.md's contract) become traits; no note then."""
    import dataclasses

    _special, sibling = _muse_pair()
    opened = open_session(sibling)
    run = {"first_line": 1, "last_line": 9, "items": 9, "started_at": None, "ended_at": None}
    one = {**run, "provider": "meta", "host": None}
    two = [
        {**run, "provider": "meta", "host": None},
        {**run, "provider": "openai", "host": "azure"},
    ]
    usage = {"input": 10, "output": 2, "cached": None, "reasoning": None}
    profiles = []
    for segments in ([one], two):
        record = {**sibling.record(), "segments": segments, "usage": usage}
        summary = dataclasses.replace(sibling, record_z=pack_record(orjson.dumps(record)))
        profiles.append(session_profile(summary, opened))
    a, b = profiles
    assert a.notes == [] and a.traits[("usage fields", "scan record")].values == {
        "input": 1,
        "output": 1,
    }
    differ = {(e.kind, e.name): e for e in compare(a, b).differ}
    assert differ[("segments", "runs")].a == {"meta": 1} and differ[("segments", "runs")].b == {
        "meta → openai/azure": 1
    }
    assert differ[("segments", "switches")].b == {"1": 1}
    assert compare(a, b).differ[0].kind == "segments"  # the verdict is the same: segments weigh most


def test_a_bare_id_with_no_root_to_look_in_is_a_usage_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MUSE_", "CODEX_", "CLAUDE_"))}
    env["HOME"] = str(tmp_path)  # no transcripts discovered here
    run = subprocess.run(
        [sys.executable, "-m", "musetui", "diff", "abc", "def"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert (
        run.stderr.strip()
        == "musetui diff: no such file or directory, nor a root to look the id up in: abc (give --root DIR)"
    )


def test_a_capture_profiles_its_responses_not_the_requests_it_replays(real_dir: Path) -> None:
    """An exchange's request body is quoted input (the capture scan's zone): its ids and keys are not traits."""
    path = (
        real_dir
        / "pydantic__pydantic-ai"
        / "tests__models__cassettes__test_openai_responses__test_openai_responses_phase_live.yaml"
    )
    a, _b = load_profiles(str(path), str(path), [], use_cache=False)
    keys = {v for (kind, _name), t in a.traits.items() if kind == "response keys" for v in t.values}
    assert keys and all(k.startswith("response.") for k in keys)
    assert a.traits[("id layout", "openai-item-id")].values["new50"] >= 1
    opened = open_session(next(iter(Index([str(path)], workers=1, use_cache=False).scan().sessions)))
    answered = {
        d.value
        for it in opened.items
        for d, p in opened.decoded_with_paths(it)
        if p.startswith("response.") and d.detector == "openai-item-id"
    }
    assert a.traits[("id layout", "openai-item-id")].values.total() == len(answered)
