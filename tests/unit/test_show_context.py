"""``show FILE`` reads the file, plus the tree its layout names; never the file's mere directory.

And what it flags is what ``scan`` flags for the same file under the same root (issue 23, 24).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from musetui.core.index import Index
from musetui.core.report import show_context, show_summary
from musetui.core.sources.registry import family_root


@pytest.fixture(autouse=True)
def _no_discovered_roots(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty home: nothing is discovered, so the default root is the bundled sample."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "MUSE_SESSIONS_DIR", "MUSE_DATA_DIR", "MUSE_HOME"):
        monkeypatch.delenv(var, raising=False)


def _sample_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.json*") if not p.name.endswith(".meta.json"))


def _flags(index: Index) -> dict[str, list[str]]:
    return {os.path.abspath(s.abspath): list(s.attribution.flags) for s in index.sessions}


def test_each_format_names_its_tree_root() -> None:
    s = os.sep
    assert (
        family_root(f"{s}h{s}.codex{s}sessions{s}2026{s}09{s}01{s}rollout-2026-09-01T1-x.jsonl")
        == f"{s}h{s}.codex{s}sessions"
    )
    assert family_root(f"{s}h{s}.codex{s}archived_sessions{s}rollout-x.jsonl") == f"{s}h{s}.codex{s}archived_sessions"
    assert family_root(f"{s}m{s}sessions{s}P{s}subagents{s}C{s}session.jsonl") == f"{s}m{s}sessions"
    assert family_root(f"{s}m{s}sessions{s}P{s}session.jsonl") == f"{s}m{s}sessions"
    assert family_root(f"{s}c{s}projects{s}proj{s}S.jsonl") == f"{s}c{s}projects"
    assert family_root(f"{s}c{s}projects{s}proj{s}S{s}subagents{s}agent-a1.jsonl") == f"{s}c{s}projects"
    # Not a layout: a rollout outside YYYY/MM/DD, a session.jsonl in any folder, a lone JSON file.
    assert family_root(f"{s}d{s}2026{s}x{s}01{s}rollout-x.jsonl") is None
    assert family_root(f"{s}d{s}work{s}P{s}session.jsonl") is None
    assert family_root(f"{s}d{s}one.json") is None


def test_lone_file_never_walks_its_siblings(tmp_path: Path, sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = tmp_path / "one.json"
    shutil.copy(sample_dir / "api" / "openai-responses-reasoning.json", one)
    big = tmp_path / "big"
    for i in range(40):
        d = big / f"d{i}"
        d.mkdir(parents=True)
        for j in range(50):
            (d / f"s{j}.jsonl").write_bytes(b"not json\n")
    (tmp_path / "broken.jsonl").write_bytes(b"\x00\x01 not a transcript\n")
    seen: list[object] = []
    real_scandir = os.scandir

    def spy(path: int | str = ".") -> Iterator[os.DirEntry[str]]:
        seen.append(path)  # (the walk lists a directory by its descriptor)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    assert show_context(str(one)) == str(one)
    started = time.monotonic()
    summary, diagnostics = show_summary(str(one), use_cache=False)
    assert time.monotonic() - started < 10
    assert summary is not None and summary.format == "openai-responses"
    assert seen == []  # no directory was listed: not the file's, not its siblings'
    assert diagnostics == []  # broken.jsonl, next to it, was never read


def test_show_and_scan_flag_alike_in_the_default_root(sample_dir: Path) -> None:
    """With nothing discovered, the default root is the sample: ``show F`` flags as ``scan`` does."""
    scanned = _flags(Index([str(sample_dir)], workers=1, use_cache=False).scan())
    assert any(scanned.values())  # (the sample has an outlier worker: the comparison means something)
    for f in _sample_files(sample_dir):
        assert show_context(str(f)) == str(sample_dir)
        summary, _ = show_summary(str(f), use_cache=False)
        assert summary is not None, f
        assert list(summary.attribution.flags) == scanned[str(f)], f


def test_show_and_scan_flag_alike_in_the_layout_tree(tmp_path: Path, sample_dir: Path) -> None:
    """Outside any default root, each file is shown in its format's tree, and flagged as a scan of that tree flags it."""
    copy = tmp_path / "sample"
    shutil.copytree(sample_dir, copy)
    contexts: dict[str, set[str]] = {}
    for f in _sample_files(copy):
        ctx = show_context(str(f))
        contexts.setdefault(f.relative_to(copy).parts[0], set()).add(os.path.relpath(ctx, copy))
        scanned = _flags(Index([ctx], workers=1, use_cache=False).scan())
        summary, _ = show_summary(str(f), use_cache=False)
        assert summary is not None, f
        assert list(summary.attribution.flags) == scanned[str(f)], f
    assert contexts == {
        "api": {os.path.join("api", f.name) for f in (copy / "api").iterdir()},  # read alone
        "claude": {os.path.join("claude", "projects")},
        "codex": {os.path.join("codex", "sessions")},
        "muse-vm": {os.path.join("muse-vm", "sessions")},
    }


def test_show_uses_the_discovered_root_that_holds_the_file(
    tmp_path: Path, sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Muse tree under MUSE_SESSIONS_DIR (any name): ``show`` flags as ``musetui``/``scan`` with no PATH do."""
    from musetui.core.config import default_roots

    muse = tmp_path / "my-muse"
    shutil.copytree(sample_dir / "muse-vm" / "sessions", muse)
    monkeypatch.setenv("MUSE_SESSIONS_DIR", str(muse))
    assert default_roots() == [str(muse)]
    scanned = _flags(Index(default_roots(), workers=1, use_cache=False).scan())
    assert sorted(map(tuple, scanned.values())) == [(), (), (), (), ("outlier",)]
    for f in _sample_files(muse):
        assert show_context(str(f)) == str(muse)
        summary, _ = show_summary(str(f), use_cache=False)
        assert summary is not None and list(summary.attribution.flags) == scanned[str(f)], f
    top = next(
        muse.glob("*/session.jsonl")
    )  # a top-level session under a folder not named sessions: read alone if not discovered
    monkeypatch.delenv("MUSE_SESSIONS_DIR")
    assert show_context(str(top)) == str(top)
