"""docs/fingerprints.md documents every detector the code has, and the catalogue's HTTP tables."""

from __future__ import annotations

import re
from pathlib import Path

from musetui.core.fingerprints import decoders
from musetui.core.fingerprints.catalogue import builtin_catalogue

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "fingerprints.md").read_text(encoding="utf-8")
_SOURCES = [p.read_text(encoding="utf-8") for p in (REPO / "musetui").rglob("*.py")]


def _detectors() -> set[str]:
    """Every detector name the code can put on evidence (keyword or the capture helper's first argument)."""
    found: set[str] = set()
    for text in _SOURCES:
        found.update(re.findall(r'detector="([a-z0-9-]+)"', text))
        found.update(re.findall(r'_signal\(\s*"([a-z0-9-]+)"', text))
    return found


def _sections() -> dict[str, str]:
    parts = re.split(r"^### ", DOC, flags=re.MULTILINE)
    return {p.split("\n", 1)[0].strip(): p for p in parts[1:]}


def test_the_detector_list_is_derived_from_the_code() -> None:
    found = _detectors()
    assert {"openai-item-id", "anthropic-signature", "http-endpoint", "http-header", "router-upstream"} <= found
    assert len(found) >= 20


def test_every_detector_has_an_entry_with_its_evidence_class() -> None:
    sections = _sections()
    missing = sorted(_detectors() - set(sections))
    assert not missing, f"docs/fingerprints.md has no '### name' entry for: {missing}"
    for name in _detectors() - {"outlier"}:
        assert re.search(r"`\[(verified|source|guess)\]`", sections[name]), name


def test_every_tool_id_class_and_evidence_key_is_documented() -> None:
    from musetui.core.fingerprints import shapes

    tools = (REPO / "musetui" / "core" / "fingerprints" / "decoders" / "tools.py").read_text(encoding="utf-8")
    in_code = set(re.findall(r'_tool\(\s*s,\s*"([^"]+)"', tools))
    assert in_code  # the classes decoded in code (Gemini CLI's, with a time)
    classes = in_code | {row.shape for row in shapes.table().of("tool-id")}
    assert len(classes) >= 10
    for shape in classes:
        assert f"`{shape}`" in DOC, shape
    for key in decoders.PRESENCE_KEYS:
        assert f"`{key}`" in DOC, key


def test_the_catalogue_http_tables_are_documented() -> None:
    cat = builtin_catalogue()
    for entry in (*cat.endpoints, *cat.headers):
        assert f"`{entry.match}`" in DOC, entry.match
    for up in cat.upstreams:
        assert f'"{up.name}"' in DOC, up.name


def test_readme_and_explain_point_to_the_docs() -> None:
    from musetui.core.fingerprints.attribution import EXPLAIN

    assert "docs/fingerprints.md" in EXPLAIN
    assert "docs/fingerprints.md" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_links_every_reference_document_and_each_link_resolves() -> None:
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = set(re.findall(r"\]\((docs/[^)#]+)", readme))
    docs = {f"docs/{p.name}" for p in (REPO / "docs").iterdir() if p.suffix in (".md", ".svg")}
    assert links == docs, links ^ docs  # every document linked, every link a document
    for name in ("keys.md", "query.md", "settings.md", "formats.md"):  # what issue 28 moved out of the README
        assert f"docs/{name}" in links, name
    for doc in (REPO / "docs").glob("*.md"):  # links between the documents resolve too
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            assert (doc.parent / target).exists(), (doc.name, target)


def test_the_readme_keeps_its_first_screen_short() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    head = readme.split("## The story in the sample")[0]
    assert head.index("](docs/screenshot.svg)") < head.index("## Set up")  # the picture before the commands
    assert "python3 -m venv .venv && .venv/bin/pip install -e '.[test,fleet]' && .venv/bin/python -m pytest" in head
    assert len(readme.splitlines()) < 80
