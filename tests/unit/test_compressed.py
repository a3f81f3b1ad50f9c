"""Gzip-compressed transcripts and captures: read expanded in memory, never written, hostile ones diagnosed."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from musetui.core.index import Index
from musetui.core.reader import MAX_EXPANDED_BYTES
from musetui.core.scanner import scan_file
from musetui.core.session import open_session

REPO = Path(__file__).resolve().parents[2]
CLAUDE = (
    REPO
    / "sample_transcripts"
    / "claude"
    / "projects"
    / "-home-dev-site"
    / "4e710f04-7f87-4b76-b9ba-ab287a3112ab.jsonl"
)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "musetui", *args], capture_output=True, text=True, check=False)


def _records(root: Path) -> list[dict[str, Any]]:
    out = _cli("scan", "--no-cache", "--json", "-q", str(root))
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def _same_but_path(a: dict[str, Any], b: dict[str, Any]) -> None:
    a, b = dict(a), dict(b)
    for r in (a, b):
        r.pop("path")
        r.pop("root")
    assert a == b


def test_a_gzip_transcript_reads_as_its_plain_text(tmp_path: Path) -> None:
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    plain.mkdir()
    packed.mkdir()
    shutil.copy(CLAUDE, plain / CLAUDE.name)
    raw = CLAUDE.read_bytes()
    (packed / (CLAUDE.name + ".gz")).write_bytes(gzip.compress(raw))
    before = sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in packed.iterdir())
    (want,), (got,) = _records(plain), _records(packed)
    assert got["path"] == CLAUDE.name + ".gz"
    _same_but_path(want, got)  # the same verdict, evidence (lines, fields), items and times
    assert got["provider"] == "anthropic" and got["items"] > 0
    # Opened, its items are the expanded text's lines, at the expanded text's offsets.
    (summary,) = Index([str(packed)], workers=1, use_cache=False).scan().sessions
    assert any(n.startswith("gzip file:") for n in summary.notes)
    opened = open_session(summary)
    assert opened.items and all(opened.raw(it) == raw[it.offset : it.offset + it.length] for it in opened.items)
    # Search reads it expanded, and names the same lines as in the plain file.
    needle = want["evidence"][0]["value"][:24]
    hits = [_cli("search", "--json", str(d), needle).stdout for d in (plain, packed)]
    assert hits[0] and [json.loads(h)["line"] for h in hits[0].splitlines()] == [
        json.loads(h)["line"] for h in hits[1].splitlines()
    ]
    show = _cli("show", str(packed / (CLAUDE.name + ".gz")))
    assert show.returncode == 0 and "gzip file: its lines and byte offsets are those of the" in show.stdout
    assert (
        sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in packed.iterdir()) == before
    )  # nothing written


def test_every_gzip_member_is_read(tmp_path: Path) -> None:
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    (tmp_path / "two.jsonl.gz").write_bytes(
        gzip.compress(b"".join(lines[:half])) + gzip.compress(b"".join(lines[half:]))
    )
    out = scan_file(str(tmp_path / "two.jsonl.gz"), "two.jsonl.gz", str(tmp_path))
    assert out.summary is not None and out.summary.malformed_lines == 0
    plain = scan_file(str(CLAUDE), CLAUDE.name, str(CLAUDE.parent))
    assert plain.summary is not None and out.summary.items == plain.summary.items


def _diag(tmp: Path, name: str) -> str:
    out = scan_file(str(tmp / name), name, str(tmp))
    assert out.summary is None, name
    (d,) = out.diagnostics
    assert d.path == name
    return d.message


def test_hostile_gzip_files_are_diagnosed(tmp_path: Path) -> None:
    body = CLAUDE.read_bytes()
    packed = gzip.compress(body)
    (tmp_path / "corrupt.jsonl.gz").write_bytes(packed[:10] + b"\xff" * 64 + packed[74:])
    (tmp_path / "not-gzip.jsonl.gz").write_bytes(body)
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    (tmp_path / "bomb.jsonl.gz").write_bytes(bomb.compress(b"\0" * (MAX_EXPANDED_BYTES + 2**20)) + bomb.flush())
    assert "corrupt gzip data" in _diag(tmp_path, "corrupt.jsonl.gz")
    assert "named .gz but not gzip data" in _diag(tmp_path, "not-gzip.jsonl.gz")
    t0 = time.perf_counter()
    assert "expands past 64 MiB" in _diag(tmp_path, "bomb.jsonl.gz")
    assert time.perf_counter() - t0 < 30  # (bounded work, not a timing claim: a bomb is never expanded whole)
    # A stream cut short keeps what it holds: the lines before the cut, the last one malformed, and a note.
    (tmp_path / "cut.jsonl.gz").write_bytes(packed[: len(packed) * 2 // 3])
    cut = scan_file(str(tmp_path / "cut.jsonl.gz"), "cut.jsonl.gz", str(tmp_path))
    assert cut.summary is not None and cut.summary.items > 0
    assert any("gzip stream ends early" in n for n in cut.summary.notes)
    # The whole tree still scans: each bad file is its own diagnostic.
    index = Index([str(tmp_path)], workers=1, use_cache=False).scan()
    assert [s.path for s in index.sessions] == ["cut.jsonl.gz"]
    assert {d.path for d in index.diagnostics} >= {"corrupt.jsonl.gz", "not-gzip.jsonl.gz", "bomb.jsonl.gz"}


def test_archives_are_not_transcripts(tmp_path: Path) -> None:
    (tmp_path / "logs.tar.gz").write_bytes(gzip.compress(b"x" * 100))
    (tmp_path / "twice.jsonl.gz.gz").write_bytes(gzip.compress(gzip.compress(CLAUDE.read_bytes())))
    index = Index([str(tmp_path)], workers=1, use_cache=False).scan()
    assert index.sessions == [] and index.files == []


def _converse(text: str) -> dict[str, Any]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_Hc3MXzVAJJ7C28xbJu45mA",
                            "name": "get_weather",
                            "input": {"q": text},
                        }
                    }
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
    }


def test_langchain_paired_cassettes(tmp_path: Path) -> None:
    """LangChain's VCR layout lists ``requests`` then ``responses``, paired in order (its ``*.yaml.gz`` cassettes)."""
    uri = "https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-sonnet-4-6/converse"
    reqs = [
        {
            "body": json.dumps({"messages": [{"role": "user", "content": [{"text": f"q{i}"}]}]}).encode(),
            "headers": {"Content-Type": ["application/json"]},
            "method": "POST",
            "uri": uri,
        }
        for i in range(2)
    ]
    resps = [
        {
            "body": {"string": json.dumps(_converse(f"a{i}")).encode()},
            "headers": {"Content-Type": "application/json", "x-amzn-RequestId": "**REDACTED**"},
            "status": {"code": 200, "message": "OK"},
        }
        for i in range(2)
    ]
    text = yaml.safe_dump({"requests": reqs, "responses": resps}).encode()
    (tmp_path / "test_agent_loop[v1].yaml.gz").write_bytes(gzip.compress(text))
    (tmp_path / "plain.yaml").write_bytes(text)
    recs = {r["path"]: r for r in _records(tmp_path)}
    for name in ("test_agent_loop[v1].yaml.gz", "plain.yaml"):
        rec = recs[name]
        assert (rec["format"], rec["provider"], rec["host"], rec["items"]) == (
            "http-capture",
            "anthropic",
            "bedrock",
            2,
        ), name
        lines = sorted({e["line"] for e in rec["evidence"] if e["detector"] == "tool-id"})
        assert lines and all(
            line > text[: text.find(b"\nresponses:")].count(b"\n") for line in lines
        )  # at the responses
    assert (
        recs["test_agent_loop[v1].yaml.gz"]["session_id"] == "test_agent_loop[v1]"
    )  # named by its stem, as plain.yaml is
    recs["plain.yaml"]["session_id"] = "test_agent_loop[v1]"
    _same_but_path(recs["plain.yaml"], recs["test_agent_loop[v1].yaml.gz"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")
def test_a_fifo_named_gz_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl.gz")
    index = Index([str(tmp_path)], workers=1, use_cache=False).scan()  # (would block forever if opened for reading)
    assert index.sessions == [] and any("FIFO" in d.message for d in index.diagnostics)
