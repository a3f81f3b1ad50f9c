"""Hostile input: every case yields a located diagnostic and nothing else is lost."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import orjson
import pytest

from musetui.core.index import Index
from musetui.core.scanner import scan_file


def _muse_line(sid: str, i: int, text: str = "hello") -> bytes:
    obj = {
        "stream": {"kind": "session", "id": sid},
        "recorded_at": 1790000000000000 + i * 1_000_000,
        "payload": {
            "kind": "run",
            "event": {"kind": "assistant_message_committed", "message_id": f"m{i}", "text": text},
        },
    }
    return orjson.dumps(obj) + b"\n"


def _session(tmp: Path, name: str, body: bytes) -> Path:
    d = tmp / "sessions" / name
    d.mkdir(parents=True, exist_ok=True)
    p = d / "session.jsonl"
    p.write_bytes(body)
    return p


def _scan(tmp: Path) -> Index:
    return Index([str(tmp)], workers=1).scan()


def test_truncated_last_line(tmp_path: Path) -> None:
    body = b"".join(_muse_line("S1", i) for i in range(5)) + _muse_line("S1", 5)[:40]
    _session(tmp_path, "S1", body)
    (s,) = _scan(tmp_path).sessions
    assert s.items == 5 and s.malformed_lines == 1
    assert s.malformed[0].line == 6 and "truncated" in s.malformed[0].reason


def test_invalid_utf8_line_is_located(tmp_path: Path) -> None:
    lines = [_muse_line("S1", i) for i in range(4)]
    lines[2] = lines[2].replace(b"hello", b"hel\xff\xfelo")
    _session(tmp_path, "S1", b"".join(lines))
    index = _scan(tmp_path)
    (s,) = index.sessions
    assert (s.items, s.malformed_lines) == (3, 1)
    assert s.malformed[0].line == 3 and "UTF-8" in s.malformed[0].reason
    assert any(d.line == 3 and "UTF-8" in d.message for d in index.diagnostics)


def test_binary_file_and_nul_line(tmp_path: Path) -> None:
    (tmp_path / "blob.jsonl").write_bytes(b"\x00\x01\x02binary\x00\n\xff\xfe\n")
    lines = [_muse_line("S2", i) for i in range(3)]
    lines.insert(1, b"\x00\x00\x00\n")
    _session(tmp_path, "S2", b"".join(lines))
    index = _scan(tmp_path)
    (s,) = index.sessions
    assert (s.items, s.malformed_lines) == (3, 1)
    assert "NUL" in s.malformed[0].reason and s.malformed[0].line == 2
    assert any(d.path == "blob.jsonl" and "binary file" in d.message for d in index.diagnostics)


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    _session(tmp_path, "S3", _muse_line("S3", 0))
    index = _scan(tmp_path)
    assert len(index.sessions) == 1
    assert any(d.path == "empty.jsonl" and "empty file" in d.message for d in index.diagnostics)


def test_50mb_single_line(tmp_path: Path) -> None:
    huge = b'{"x":"' + b"a" * (50 * 1024 * 1024) + b'"}\n'
    _session(tmp_path, "S4", _muse_line("S4", 0) + huge + _muse_line("S4", 2))
    (s,) = _scan(tmp_path).sessions
    assert (s.items, s.malformed_lines) == (2, 1)
    assert s.malformed[0].line == 2 and "exceeds" in s.malformed[0].reason
    # Opening the session agrees with the scan: the over-long line is no item.
    from musetui.core.session import open_session

    assert [it.line for it in open_session(s).items] == [1, 3]


def test_nesting_past_parser_limit(tmp_path: Path) -> None:
    deep = b'{"a":' + b"[" * 2000 + b"]" * 2000 + b"}\n"
    _session(tmp_path, "S5", _muse_line("S5", 0) + deep + _muse_line("S5", 2))
    (s,) = _scan(tmp_path).sessions
    assert (s.items, s.malformed_lines) == (2, 1)
    assert "nested deeper" in s.malformed[0].reason


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    _session(tmp_path, "S6", _muse_line("S6", 0))
    t = time.monotonic()
    index = _scan(tmp_path)
    assert time.monotonic() - t < 10
    assert len(index.sessions) == 1
    assert any(d.path == "pipe.jsonl" and "FIFO" in d.message for d in index.diagnostics)


def test_symlink_loop(tmp_path: Path) -> None:
    _session(tmp_path, "S7", _muse_line("S7", 0))
    (tmp_path / "sessions" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "self.jsonl").symlink_to(tmp_path / "self.jsonl")
    index = _scan(tmp_path)
    assert len(index.sessions) == 1
    assert any("symlink loop" in d.message for d in index.diagnostics)
    assert any(d.path == "self.jsonl" for d in index.diagnostics)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root bypasses file permissions")
def test_unreadable_file(tmp_path: Path) -> None:
    p = _session(tmp_path, "S8", _muse_line("S8", 0))
    _session(tmp_path, "S9", _muse_line("S9", 0))
    p.chmod(0)
    try:
        index = _scan(tmp_path)
    finally:
        p.chmod(0o644)
    assert len(index.sessions) == 1
    assert any("unreadable" in d.message for d in index.diagnostics)


def test_unreadable_reported_when_open_fails(tmp_path: Path) -> None:
    """A path that vanishes between the walk and the read is reported, and the scan goes on."""
    outcome = scan_file(str(tmp_path / "gone.jsonl"), "gone.jsonl", str(tmp_path))
    assert outcome.summary is None
    assert "unreadable" in outcome.diagnostics[0].message


def test_growing_file_reads_to_a_line_boundary(tmp_path: Path) -> None:
    p = _session(tmp_path, "S10", b"".join(_muse_line("S10", i, "x" * 2000) for i in range(2000)))
    stop = threading.Event()
    appended = 0

    def writer() -> None:
        nonlocal appended
        with open(p, "ab", buffering=0) as f:
            for i in range(2000, 2600):  # bounded: at most ~2 MB more
                if stop.is_set():
                    break
                line = _muse_line("S10", i, "y" * 3000)
                f.write(line[:100])
                time.sleep(0.0005)
                f.write(line[100:])
                appended += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        results = [scan_file(str(p), "session.jsonl", str(tmp_path)).summary for _ in range(10)]
    finally:
        stop.set()
        t.join()
    assert appended > 0
    for s in results:
        assert s is not None and s.items >= 2000
        assert s.malformed_lines <= 1
        if s.malformed_lines:
            assert "truncated" in s.malformed[0].reason


def _tree_state(root: Path) -> dict[str, tuple[str, int, int]]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink() or not p.is_file():
            continue
        st = p.stat()
        out[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_size)
    return out


def test_scan_writes_nothing_under_root(tmp_path: Path, sample_dir: Path) -> None:
    import shutil

    root = tmp_path / "tree"
    shutil.copytree(sample_dir, root)
    before = _tree_state(root)
    dir_mtimes = {str(d): d.stat().st_mtime_ns for d in [root, *root.rglob("*")] if d.is_dir()}
    index = Index([str(root)]).scan()
    from musetui.core.session import open_session

    for s in index.sessions:
        open_session(s)
    assert _tree_state(root) == before
    assert {str(d): d.stat().st_mtime_ns for d in [root, *root.rglob("*")] if d.is_dir()} == dir_mtimes


def test_a_session_id_from_a_file_name_that_is_not_utf8_is_cached_and_written(tmp_path: Path) -> None:
    """The id of a Claude Code session comes from its file name; a name that is not UTF-8 must not
    turn the session into an internal error once the cache stores its record (found by hypothesis)."""
    import subprocess
    import sys

    root = tmp_path / "tree"
    root.mkdir()
    summary = b'{"type":"summary","summary":"Deploy a site","leafUuid":"cd0e85c3-54fd-4034-abdb-a38ab4528fbc"}\n'
    (Path(os.fsdecode(os.fsencode(root) + b"/bad\xff.jsonl"))).write_bytes(summary)
    env = {**os.environ, "MUSETUI_CACHE_DIR": str(tmp_path / "cache")}
    outs = []
    for argv in (["--no-cache"], [], []):  # off, cold, warm
        run = subprocess.run(
            [sys.executable, "-m", "musetui", "scan", "--json", str(root), *argv],
            capture_output=True,
            env=env,
            check=True,
        )
        assert b"internal error" not in run.stderr, run.stderr
        outs.append(run.stdout)
    assert outs[0] == outs[1] == outs[2]
    (rec,) = [orjson.loads(line) for line in outs[0].splitlines()]
    assert (rec["path"], rec["session_id"], rec["format"]) == ("bad\\xff.jsonl", "bad\\xff", "claude-code")
