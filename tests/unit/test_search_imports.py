"""What ``musetui search`` imports: a text search loads the search path and nothing heavier.

Start-up is a fixed part of every CLI search (the performance target counts it). These tests
run real searches in a fresh interpreter and check ``sys.modules`` afterwards, so that an
import that creeps back onto the path (the TUI, the scanner, the attribution engine, the
fingerprint decoders, ``email`` through the HTTP-capture adapter) fails here. No timings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"

#: Never imported by a search without attribution filters (a module or any of its submodules).
NEVER = (
    "textual",
    "rich",
    "pygments",
    "pydantic",
    "yaml",
    "tomllib",
    "email",
    "hashlib",
    "sqlite3",
    "platformdirs",
    "concurrent.futures",
    "multiprocessing",
    "musetui.app",
    "musetui.tui",
    "musetui.widgets",
    "musetui.screens",
    "musetui.core.index",
    "musetui.core.scanner",
    "musetui.core.cache",
    "musetui.core.report",
    "musetui.core.session",
    "musetui.core.fingerprints.extract",
    "musetui.core.fingerprints.decoders",
    "musetui.core.fingerprints.catalogue",
    "musetui.core.fingerprints.catalogue_lookup",
    "musetui.core.fingerprints.attribution",
)

#: Runs ``musetui.cli.main`` for each query (stdout to /dev/null), then prints the exit codes and the
#: modules the searches added (what the interpreter's own start-up loaded, ``site`` included, is not theirs).
_CODE = r"""
import json, os, sys
before = set(sys.modules)
from musetui.cli import main
queries = json.loads(sys.argv[2])
null = os.open(os.devnull, os.O_WRONLY)
saved = os.dup(1)
os.dup2(null, 1)
codes = [main(["search", sys.argv[1], *q]) for q in queries]
sys.stdout.flush()
os.dup2(saved, 1)
print(json.dumps({"codes": codes, "modules": sorted(set(sys.modules) - before)}))
"""


def _search_modules(root: Path, queries: list[list[str]]) -> tuple[list[int], set[str]]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, "-c", _CODE, str(root), json.dumps(queries)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=str(REPO),
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["codes"], set(got["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in NEVER))


@pytest.fixture(scope="module")
def sample() -> Path:
    assert (SAMPLE / "muse-vm").is_dir(), (
        f"the committed sample is missing at {SAMPLE} (python -m musetui_synth.sample)"
    )
    return SAMPLE


def test_text_searches_import_nothing_heavy(sample: Path) -> None:
    """Literals, regexes, item and path filters, negations, JSON and text output: every format of the sample hit."""
    queries = [
        ["model", "--json"],
        ["model"],
        ["/rs_[0-9a-f]{8}/", "--json"],
        ["kind:reasoning", "--json"],
        ["has:encrypted role:assistant", "--json"],
        ["path:*codex* -nothing-here", "--json"],
        ["muse-special|gpt", "--limit", "3"],
    ]
    codes, modules = _search_modules(sample, queries)
    assert codes == [0] * len(queries)  # every query found something: the whole path ran
    # the hits named their sessions: the format adapters were loaded, and the matcher ran
    assert {"musetui.core.sources", "musetui.core.sources.muse", "musetui.core.search.matcher", "hyperscan"} <= modules
    assert _heavy(modules) == []


def test_an_http_capture_hit_loads_no_email_parser(tmp_path: Path) -> None:
    """A HAR capture is identified (format, session id) without its Date header parser or the decoders."""
    entry = {
        "startedDateTime": "2026-09-01T22:01:03.000Z",
        "request": {"method": "POST", "url": "https://api.openai.com/v1/responses", "headers": []},
        "response": {
            "status": 200,
            "headers": [{"name": "content-type", "value": "application/json"}],
            "content": {
                "mimeType": "application/json",
                "text": json.dumps({"id": "resp_1", "model": "gpt-5", "output": []}),
            },
        },
    }
    (tmp_path / "capture.har").write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    codes, modules = _search_modules(tmp_path, [["gpt-5", "--json"]])
    assert codes == [0]
    assert "musetui.core.sources.http_capture" in modules
    assert _heavy(modules) == []
