"""Claude Code's headless stream (``claude -p --output-format stream-json``) reads as a claude-code session."""

from __future__ import annotations

import json
import random
from pathlib import Path

import orjson
import pytest

from musetui.cli import main
from musetui.core.index import Index
from musetui.core.session import open_session

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
SID = "5b0c7e52-7f3a-4c1e-9d2b-8a6f4e3d2c1b"


def _b58(rng: random.Random, n: int) -> str:
    """A random 128-bit value in base58, ``n`` digits (the body of an Anthropic id after ``01``)."""
    v, out = rng.getrandbits(128), ""
    while v:
        v, r = divmod(v, 58)
        out = B58[r] + out
    return out.rjust(n, B58[0])


def _messages() -> list[dict[str, object]]:
    """A headless run: init, a split assistant message (thinking, then a tool call), the tool's
    result, a Task subagent's line, the final answer and the result line."""
    rng = random.Random(7)
    msg1, msg2, sub = (f"msg_01{_b58(rng, 22)}" for _ in range(3))
    tool = f"toolu_01{_b58(rng, 22)}"
    usage = {
        "input_tokens": 9,
        "cache_creation_input_tokens": 4511,
        "cache_read_input_tokens": 0,
        "output_tokens": 4,
        "service_tier": "standard",
    }

    def assistant(mid: str, block: dict[str, object], parent: str | None = None) -> dict[str, object]:
        return {
            "type": "assistant",
            "message": {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [block],
                "stop_reason": None,
                "usage": usage,
            },
            "parent_tool_use_id": parent,
            "session_id": SID,
            "uuid": f"u-{mid[-6:]}-{len(str(block))}",
        }

    return [
        {
            "type": "system",
            "subtype": "init",
            "cwd": "/work/site",
            "session_id": SID,
            "tools": ["Bash", "Task"],
            "model": "claude-sonnet-4-6",
            "permissionMode": "default",
            "apiKeySource": "none",
            "claude_code_version": "2.1.84",
            "uuid": "u-init",
        },
        assistant(msg1, {"type": "thinking", "thinking": "List the files first.", "signature": ""}),
        assistant(msg1, {"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "ls"}}),
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"tool_use_id": tool, "type": "tool_result", "content": "README.md\nsrc", "is_error": False}
                ],
            },
            "parent_tool_use_id": None,
            "session_id": SID,
            "uuid": "u-result",
        },
        assistant(sub, {"type": "text", "text": "A subagent's line."}, parent=tool),
        assistant(msg2, {"type": "text", "text": "Two entries: README.md and src."}),
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 5982,
            "duration_api_ms": 6814,
            "num_turns": 2,
            "result": "Two entries: README.md and src.",
            "session_id": SID,
            "total_cost_usd": 0.01,
            "usage": usage,
            "uuid": "u-end",
        },
    ]


def _scan(root: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert main(["scan", str(root), "--json", "--no-cache"]) == 0
    return [orjson.loads(x) for x in capsys.readouterr().out.splitlines()]


def test_stream_json_lines_are_a_claude_code_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [json.dumps(m, separators=(",", ":")) for m in _messages()]  # as the CLI writes them
    (tmp_path / "run.jsonl").write_text("\n".join(lines) + "\n")
    (rec,) = _scan(tmp_path, capsys)
    assert rec["format"] == "claude-code"
    assert rec["session_id"] == SID and rec["declared_model"] == "claude-sonnet-4-6"
    assert rec["provider"] == "anthropic" and rec["flags"] == []
    ids = {e["detector"]: e for e in rec["evidence"]}  # type: ignore[union-attr]
    assert ids["anthropic-id"]["weight"] == 1.0  # an assistant line: model output, not quoted input
    assert rec["items"] == 6  # the split assistant message is one item
    index = Index([str(tmp_path)], workers=1).scan()
    (summary,) = index.sessions
    assert summary.format_rule.startswith("claude-code: stream-json system init line")
    assert any("1 inline sidechain" in n for n in summary.notes), summary.notes
    opened = open_session(summary)
    kinds = [(i.kind, i.role) for i in opened.items]
    assert kinds == [
        ("event", "system"),
        ("reasoning", "assistant"),
        ("tool_result", "tool"),
        ("message", "assistant"),
        ("message", "assistant"),
        ("event", "system"),
    ]
    merged = opened.items[1]  # thinking and the tool call: one API message over two lines
    assert merged.lines == 2 and merged.reasoning == "empty-signature" and merged.name == "Bash"
    assert any(i.startswith("toolu_01") for i in merged.ids) and opened.items[2].ids == [merged.ids[-1]]


def test_python_separators_and_a_json_array_read_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An SDK user's ``json.dumps`` (a space after each colon) and a CI action's JSON array of the
    same messages give the same verdict as the CLI's compact lines."""
    compact = tmp_path / "a"
    spaced = tmp_path / "b"
    array = tmp_path / "c"
    for d in (compact, spaced, array):
        d.mkdir()
    msgs = _messages()
    (compact / "run.jsonl").write_text("\n".join(json.dumps(m, separators=(",", ":")) for m in msgs) + "\n")
    (spaced / "run.jsonl").write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    (array / "claude-execution-output.json").write_text(json.dumps(msgs, indent=2))
    one_line = tmp_path / "d"  # json.dump without indent: the whole array on one line, no newline
    one_line.mkdir()
    (one_line / "claude-execution-output.json").write_text(json.dumps(msgs))
    got = {d.name: _scan(d, capsys)[0] for d in (compact, spaced, array, one_line)}
    for rec in got.values():
        assert rec["format"] == "claude-code" and rec["session_id"] == SID
        assert rec["declared_model"] == "claude-sonnet-4-6" and rec["provider"] == "anthropic"
    assert got["a"]["confidence"] == got["b"]["confidence"]
    assert [e["weight"] for e in got["a"]["evidence"]] == [e["weight"] for e in got["b"]["evidence"]]  # type: ignore[union-attr]

    def unlocated(rec: dict[str, object]) -> dict[str, object]:  # the indented array spreads over lines
        out = {k: v for k, v in rec.items() if k not in ("root", "evidence", "segments")}
        evidence = [{k: v for k, v in e.items() if k != "line"} for e in rec["evidence"]]  # type: ignore[attr-defined]
        out["evidence"] = sorted(evidence, key=lambda e: (e["detector"], e["field"], e["value"]))
        return out

    assert unlocated(got["d"]) == unlocated(got["c"])
    (summary,) = Index([str(one_line)], workers=1, use_cache=False).scan().sessions
    assert [i.kind for i in open_session(summary).items] == [
        "event",
        "reasoning",
        "tool_result",
        "message",
        "message",
        "event",
    ]


def test_a_one_line_array_no_format_claims_stays_one_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only an array whose records a format recognises is read as records: other one-line arrays are as before."""
    (tmp_path / "x.json").write_text(json.dumps([{"a": 1}, {"b": "rs_x"}]))
    (rec,) = _scan(tmp_path, capsys)
    assert rec["format"] == "generic" and rec["items"] == 1


#: Qwen Code's headless stream: the same protocol, with its own version key.
QWEN = [
    {
        "type": "system",
        "subtype": "init",
        "uuid": "q0",
        "session_id": "q1",
        "cwd": "/w",
        "tools": ["read_file"],
        "model": "coder-model",
        "permission_mode": "yolo",
        "qwen_code_version": "0.14.0",
        "agents": ["Explore"],
    },
    {
        "type": "assistant",
        "uuid": "q2",
        "session_id": "q1",
        "parent_tool_use_id": None,
        "message": {
            "id": "q2",
            "type": "message",
            "role": "assistant",
            "model": "coder-model",
            "content": [{"type": "text", "text": "4"}],
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    },
    {
        "type": "result",
        "subtype": "success",
        "uuid": "q3",
        "session_id": "q1",
        "is_error": False,
        "duration_ms": 3447,
        "duration_api_ms": 3393,
        "num_turns": 1,
        "result": "4",
        "usage": {},
        "permission_denials": [],
    },
]
#: Cursor's agent CLI: a Claude-shaped init without claude_code_version, a result without num_turns.
CURSOR = [
    {
        "type": "system",
        "subtype": "init",
        "apiKeySource": "login",
        "cwd": "/w",
        "session_id": "c1",
        "model": "GPT-5",
        "permissionMode": "default",
    },
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 1234,
        "duration_api_ms": 1234,
        "result": "",
        "session_id": "c1",
        "request_id": "r1",
    },
]


@pytest.mark.parametrize(
    "lines",
    [
        QWEN,
        CURSOR,
        [{"type": "system", "subtype": "init", "session_id": "s1", "model": "x"}],  # no version key
        [
            {"type": "system", "subtype": "init", "session_id": 7, "claude_code_version": "2.1.0"}
        ],  # an id that is no string
        _messages()[1:],  # a Claude Code stream cut before its init line: nothing says which harness wrote it
    ],
    ids=["qwen-code", "cursor", "no-version", "bad-session-id", "no-init-line"],
)
def test_other_harnesses_streams_stay_generic(
    lines: list[dict[str, object]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.jsonl").write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines * 2))
    (rec,) = _scan(tmp_path, capsys)
    assert rec["format"] == "generic"
