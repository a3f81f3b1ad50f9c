"""Live follow: malformed lines appended to a session reach the diagnostics the ``D`` view lists."""

from __future__ import annotations

import shutil
from pathlib import Path

from musetui.core.index import Index


def test_malformed_lines_appended_live_are_diagnosed(sample_dir: Path, tmp_path: Path) -> None:
    src = next(sample_dir.glob("claude/projects/*/*.jsonl"))
    path = tmp_path / "projects" / "x" / src.name
    path.parent.mkdir(parents=True)
    shutil.copy(src, path)
    index = Index([str(tmp_path)], use_cache=False).scan()
    (s,) = index.sessions
    last = src.read_text().splitlines()[-1]
    n = len(src.read_text().splitlines())
    with path.open("a") as f:
        f.write(last + "\n")
    index.refresh()  # a rescan: the index keeps the file's scan state from now on
    with path.open("a") as f:
        f.write("{not json\n{also bad\n" + last + "\n")
    result = index.refresh()
    assert result.resumed == 1 and s.malformed_lines == 2
    malformed = [(d.line, d.path) for d in index.diagnostics if "malformed" in d.message]
    assert malformed == [(n + 2, s.path), (n + 3, s.path)]
