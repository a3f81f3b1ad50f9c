"""The command line's readable outputs (the JSON contracts are tested with each command)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "musetui", *args], capture_output=True, text=True, env=dict(os.environ), check=True
    )


def test_scan_table_in_a_pipe_is_aligned_plain_text_with_whole_paths() -> None:
    table = _run("scan", "--no-cache", "-q", str(SAMPLE))
    records = [orjson.loads(x) for x in _run("scan", "--no-cache", "--json", "-q", str(SAMPLE)).stdout.splitlines()]
    lines = table.stdout.splitlines()
    header = lines[0].split()
    assert header[:6] == ["format", "provider", "conf", "items", "malformed", "flags"]
    assert len(lines) == 1 + len(records)
    assert table.stderr.strip() == f"{len(records)} sessions"
    start = lines[0].index("path")  # the path column starts at the same place on every line
    for line, rec in zip(lines[1:], records, strict=True):
        assert line[start:] == f"{rec['root']}/{rec['path']}"  # root/path, as `show` accepts it
        cells = line[:start].split()
        prov = rec["provider"] + (f"/{rec['host']}" if rec["host"] else "")
        assert cells[:5] == [rec["format"], prov, f"{rec['confidence']:.2f}", str(rec["items"]), str(rec["malformed_lines"])]
    outlier = next(line for line in lines if "muse-special" in line)
    assert "openai/azure" in outlier and "outlier" in outlier


def test_show_line_names_why_a_malformed_line_has_no_item(tmp_path: Path) -> None:
    d = tmp_path / "sessions" / "s"
    d.mkdir(parents=True)
    good = orjson.dumps(
        {
            "stream": {"kind": "session", "id": "s"},
            "recorded_at": 1788300100000000,
            "payload": {"kind": "run", "event": {"kind": "assistant_message_committed", "message_id": "m", "text": "t"}},
        }
    )
    path = d / "session.jsonl"
    path.write_bytes(good + b"\n" + b'{"broken": \xff\xfe}\n' + good + b"\n")
    r = subprocess.run(
        [sys.executable, "-m", "musetui", "show", str(path), "--line", "2"], capture_output=True, text=True, env=dict(os.environ)
    )
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"musetui show: line 2 of {path} is malformed: invalid UTF-8"
    assert "line 3" in _run("show", str(path), "--line", "3").stdout
