"""An index's results are one object: each scan run installs a new one, live follow keeps it up to date."""

from __future__ import annotations

import shutil
from pathlib import Path

from musetui.core.index import Index
from musetui.core.index_result import IndexResult
from musetui.core.model import Diagnostic
from musetui.core.walk import walk_roots

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts"


def test_a_second_scan_replaces_the_results_whole(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    shutil.copytree(SAMPLE / "codex", tree)
    index = Index([str(tree)], workers=1, use_cache=True)
    first = index.scan().result
    assert first.sessions and first.scanned_files == len(first.files) and first.cache_hits == 0
    again = index.scan().result
    assert again is not first and index.result is again
    assert [s.key for s in again.sessions] == [s.key for s in first.sessions]  # not added a second time
    assert (again.cache_hits, again.scanned_files) == (len(first.files), 0)  # counters of this run only
    assert index.sessions is again.sessions and index.top is again.top and index.diagnostics is again.diagnostics


def test_a_walk_done_by_the_caller_is_scanned_as_given_and_left_as_it_was(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    shutil.copytree(SAMPLE / "codex", tree)
    (tree / "not-json.jsonl").write_bytes(b"no json here\n")
    diags: list[Diagnostic] = []
    files = walk_roots([str(tree)], diags)
    walked = [f.abspath for f in files]
    index = Index([str(tree)], workers=1, prewalked=(files, diags)).scan()
    assert [f.abspath for f in index.files] == walked and index.files is not files
    assert diags == [] and any("not-json.jsonl" in d.path for d in index.diagnostics)
    assert len(index.sessions) == len(Index([str(tree)], workers=1).scan().sessions)


def test_the_result_keeps_sessions_and_their_keys_together() -> None:
    index = Index([str(SAMPLE)], workers=1).scan()
    result = IndexResult()
    for s in index.sessions:
        result.add(s)
    result.finalize()
    assert result.by_key == index.result.by_key and len(result.top) == len(index.top)
    dropped = result.sessions[0]
    result.drop(dropped)
    assert dropped.key not in result.by_key and dropped not in result.sessions
