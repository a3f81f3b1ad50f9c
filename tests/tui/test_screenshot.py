"""The README's picture: scripts/screenshot.py still runs, and shows the sample's outlier with its evidence."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from musetui.widgets.help import DOC_FILES, docs_text

from .helpers import OUTLIER_ID

REPO = Path(__file__).resolve().parents[2]


def test_the_screenshot_script_writes_an_svg_of_the_outlier(tmp_path: Path) -> None:
    out = tmp_path / "shot" / "screenshot.svg"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "screenshot.py"), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(out)
    root = ET.parse(out).getroot()  # well-formed XML …
    assert root.tag == "{http://www.w3.org/2000/svg}svg"  # … and an SVG
    text = "".join(root.itertext()).replace("\xa0", " ")
    assert OUTLIER_ID[:12] in text  # the outlier session is in the tree …
    assert "flags: outlier" in text and "Evidence records" in text  # … selected, its evidence in pane 5
    assert "sample_transcripts" in text and str(REPO) not in text  # nothing of the checkout's path


def test_the_help_names_the_reference_documents_and_they_exist() -> None:
    text = docs_text().plain
    for name, _ in DOC_FILES:
        assert f"docs/{name}" in text, name
        assert (REPO / "docs" / name).is_file(), name
    assert (REPO / "README.md").read_text(encoding="utf-8").count("](docs/") >= len(DOC_FILES)
