"""On a generated corpus, the flagged outliers are exactly the generator's ground truth."""

from __future__ import annotations

import json
from pathlib import Path

from musetui.core.index import Index
from musetui_synth.corpus import generate


def test_outliers_match_ground_truth(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    generate(root, 12.0, 3)
    manifest = json.loads((root / "MANIFEST.json").read_text())
    index = Index([str(root)], workers=2).scan()
    flagged = sorted(s.path for s in index.sessions if "outlier" in s.attribution.flags)
    assert manifest["outliers"], "the generator planted outliers"
    assert flagged == sorted(manifest["outliers"])
    for s in index.sessions:
        if s.path in manifest["outliers"]:
            assert s.attribution.provider == "openai"
            assert s.attribution.host == "azure"
    wrong = [
        s.path
        for s in index.sessions
        if s.format == "muse" and s.path not in manifest["outliers"] and s.attribution.provider != "meta"
    ]
    assert wrong == []


def test_parallel_and_serial_scans_agree(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    generate(root, 20.0, 5)
    a = Index([str(root)], workers=1).scan()
    b = Index([str(root)], workers=2).scan()
    assert [s.record() for s in a.sorted_sessions()] == [s.record() for s in b.sorted_sessions()]
