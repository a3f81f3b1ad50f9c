"""Score musetui on the real-world corpus of SOURCES.toml (files nobody here wrote).

The files are extracted by ``scripts/fetch_real_world.py SNAPSHOTS_DIR [CACHE_DIR]`` into
``$MUSETUI_REAL_WORLD_DIR`` or ``<user cache dir>/musetui/real_world``; every test skips,
saying so, when they are not there. A file whose expectation musetui is known to miss carries
``known_miss = "why"`` and is an expected failure (strict: it fails when it starts passing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import platformdirs
import pytest

HERE = Path(__file__).resolve().parent
FILES: list[dict[str, Any]] = tomllib.loads((HERE / "SOURCES.toml").read_text(encoding="utf-8"))["file"]


def _cache_dir() -> Path:
    env = os.environ.get("MUSETUI_REAL_WORLD_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("musetui")) / "real_world"


CACHE = _cache_dir()


def _local(f: dict[str, Any]) -> str:
    return f["repo"].replace("/", "__") + "/" + f["path"].replace("/", "__")


@pytest.fixture(scope="module")
def records() -> dict[str, dict[str, Any]]:
    present = [f for f in FILES if (CACHE / _local(f)).is_file()]
    if not present:
        pytest.skip(
            f"no real-world corpus in {CACHE}: run scripts/fetch_real_world.py SNAPSHOTS_DIR "
            "with snapshots of the repositories in tests/real_world/SOURCES.toml"
        )
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", "-q", str(CACHE)],
        capture_output=True,
        check=True,
    )
    recs = [json.loads(line) for line in out.stdout.splitlines()]
    return {r["path"]: r for r in recs}


def _verdict(rec: dict[str, Any]) -> tuple[str, str, str, str]:
    return rec["format"], rec["provider"], rec["host"] or "", rec["via"] or ""


def _params() -> list[Any]:
    out = []
    for f in FILES:
        marks = [pytest.mark.xfail(reason=f["known_miss"], strict=True)] if f.get("known_miss") else []
        out.append(pytest.param(f, id=f["path"].rsplit("/", 1)[-1], marks=marks))
    return out


@pytest.mark.parametrize("f", _params())
def test_file_gets_its_expected_verdict(records: dict[str, dict[str, Any]], f: dict[str, Any]) -> None:
    name = _local(f)
    if not (CACHE / name).is_file():
        # In CI this skip fails unless tests/allowed_skips.txt names the file: one added to
        # SOURCES.toml this turn (../shared is refreshed from it between turns), never a renamed one.
        pytest.skip(f"{name} is listed in SOURCES.toml but not in {CACHE} (added this turn, or renamed?)")
    rec = records.get(name)
    assert rec is not None, f"{name}: no scan record"
    assert _verdict(rec) == (f["format"], f["provider"], f["host"], f["via"]), (f["why"], rec["evidence"])
    false = {"declared-mismatch", "time-mismatch", "imitation-id"} & set(rec["flags"])
    assert not false, (false, rec["evidence"])


def test_score(records: dict[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    """Print the score (files, right, wrong and why); every miss must be a declared known miss."""
    right, wrong = 0, []
    for f in FILES:
        rec = records.get(_local(f))
        if rec is None:
            continue
        want = (f["format"], f["provider"], f["host"], f["via"])
        if _verdict(rec) == want:
            right += 1
        else:
            wrong.append((f, _verdict(rec)))
    with capsys.disabled():
        print(f"\nreal-world corpus: {right + len(wrong)} files, {right} right, {len(wrong)} wrong")
        for f, got in wrong:
            print(
                f"  miss {f['path']}: expected {f['format']}/{f['provider']}/{f['host']}/{f['via']}, got {'/'.join(got)}"
            )
    assert all(f.get("known_miss") for f, _got in wrong)
