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
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # a pipe without COLUMNS: no width limit
    table = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "-q", str(SAMPLE)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    records = [orjson.loads(x) for x in _run("scan", "--no-cache", "--json", "-q", str(SAMPLE)).stdout.splitlines()]
    lines = table.stdout.splitlines()
    assert lines[0] == f"root: {SAMPLE}"  # the root, once
    header = lines[1].split()
    assert header[:6] == ["format", "provider", "conf", "items", "malformed", "flags"]
    assert len(lines) == 2 + len(records)
    assert table.stderr.strip() == f"{len(records)} sessions, 1 flagged"
    start = lines[1].index("path")  # the path column starts at the same place on every line
    for line, rec in zip(lines[2:], records, strict=True):
        assert line[start:] == rec["path"]  # whole, relative to the root above
        cells = line[2:start].split()
        prov = rec["provider"] + (f"/{rec['host']}" if rec["host"] else "")
        assert cells[:5] == [
            rec["format"],
            prov,
            f"{rec['confidence']:.2f}",
            str(rec["items"]),
            str(rec["malformed_lines"]),
        ]
    outlier = next(line for line in lines if "muse-special" in line)
    assert outlier.startswith("⚑ ") and "openai/azure" in outlier and "outlier" in outlier


def test_show_line_names_why_a_malformed_line_has_no_item(tmp_path: Path) -> None:
    d = tmp_path / "sessions" / "s"
    d.mkdir(parents=True)
    good = orjson.dumps(
        {
            "stream": {"kind": "session", "id": "s"},
            "recorded_at": 1788300100000000,
            "payload": {
                "kind": "run",
                "event": {"kind": "assistant_message_committed", "message_id": "m", "text": "t"},
            },
        }
    )
    path = d / "session.jsonl"
    path.write_bytes(good + b"\n" + b'{"broken": \xff\xfe}\n' + good + b"\n")
    r = subprocess.run(
        [sys.executable, "-m", "musetui", "show", str(path), "--line", "2"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"musetui show: line 2 of {path} is malformed: invalid UTF-8"
    assert "line 3" in _run("show", str(path), "--line", "3").stdout


def test_outputs_inside_a_scanned_tree_are_refused(tmp_path: Path) -> None:
    """report -o, --diagnostics and --parquet never write under a tree being read (exit 2, nothing written)."""
    import shutil

    root = tmp_path / "vm"
    shutil.copytree(SAMPLE, root)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    for argv in (
        ["report", str(root), "-o", str(root / "r.html")],
        ["scan", str(root), "--json", "--diagnostics", str(root / "muse-vm" / "d.jsonl")],
        ["scan", str(root), "--json", "--parquet", str(root / "x.parquet")],
    ):
        proc = subprocess.run([sys.executable, "-m", "musetui", *argv], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert "lies inside the scanned tree" in proc.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    ok = subprocess.run(
        [sys.executable, "-m", "musetui", "report", str(root), "-o", str(tmp_path / "r.md")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0 and (tmp_path / "r.md").stat().st_size > 0
