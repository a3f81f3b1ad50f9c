"""A file of many tiny lines: its resume state stays small, so the cache keeps it and an append resumes.

Issue 24 ("memory grows with the line count"): the resume state kept every record's start
(8 bytes a record), built several times over while the cache stored it, so 32 MiB of ``{}``
lines cost 424 MB with the cache on against 125 MB without. The state now keeps record
offsets only when the scan was asked for them.
"""

from __future__ import annotations

from pathlib import Path

from musetui.core import stored
from musetui.core.index import Index
from musetui.core.scanner import resume_file, scan_file

#: 400,000 records of ``{}``: 3.2 MB of record starts at 8 bytes each, over the stored state's cap.
LINES = 400_000
#: A resume state's size does not grow with the line count: well under a byte per ten records.
MAX_STATE_BLOB = LINES // 10


def _tiny(path: Path, lines: int = LINES) -> Path:
    path.write_bytes(b"{}\n" * lines)
    return path


def test_resume_state_of_many_tiny_lines_is_small(tmp_path: Path) -> None:
    f = _tiny(tmp_path / "tiny.jsonl")
    out = scan_file(str(f), "tiny.jsonl", str(tmp_path), want_state=True)
    state = out.state
    assert out.summary is not None and out.summary.items == LINES
    assert state is not None and state.items == LINES and state.offset == f.stat().st_size
    assert state.record_starts == b"" and out.offsets == b""
    prefix = stored.prefix_digest(str(f), state.offset)
    assert prefix is not None
    blob = stored.encode_state(state, prefix)
    assert len(blob) < MAX_STATE_BLOB, f"{len(blob):,} bytes of resume state for {LINES:,} records"


def test_many_tiny_lines_resume_after_an_append(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    f = _tiny(root / "tiny.jsonl")
    first = Index([str(root)], workers=1, use_cache=True).scan()
    assert first.result.scanned_files == 1
    with f.open("ab") as fh:
        fh.write(b'{"a": 1}\n')
    idx = Index([str(root)], workers=1, use_cache=True).scan()
    assert (idx.result.resumed, idx.result.scanned_files, idx.result.resumed_bytes) == (1, 0, len(b'{"a": 1}\n'))
    full = Index([str(root)], workers=1, use_cache=False).scan()
    assert [s.record() for s in idx.sorted_sessions()] == [s.record() for s in full.sorted_sessions()]
    assert idx.sessions[0].items == LINES + 1


def test_resume_keeps_offsets_only_from_a_state_that_has_them(tmp_path: Path) -> None:
    f = _tiny(tmp_path / "t.jsonl", 1000)
    plain = scan_file(str(f), "t.jsonl", str(tmp_path), want_state=True).state
    kept = scan_file(str(f), "t.jsonl", str(tmp_path), want_state=True, keep_offsets=True).state
    assert plain is not None and kept is not None and len(kept.record_starts) == 8 * 1000
    with f.open("ab") as fh:
        fh.write(b"{}\n" * 5)
    # A state without record offsets cannot give them: the caller rescans the file whole.
    assert resume_file(plain, str(f), keep_offsets=True) is None
    resumed = resume_file(kept, str(f), keep_offsets=True)
    whole = scan_file(str(f), "t.jsonl", str(tmp_path), keep_offsets=True)
    assert resumed is not None and resumed.offsets == whole.offsets and len(whole.offsets) == 8 * 1005
