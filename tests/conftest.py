"""Shared fixtures: where the real captures and the bundled sample live."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]
SHARED_REAL = REPO.parent / "shared" / "fixtures" / "real"
SAMPLE = REPO / "sample_transcripts"

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

# The default run is reproducible: every property test draws the same examples on every machine, so
# a red CI run is a bug anyone can replay, not a draw. `HYPOTHESIS_PROFILE=explore` (and the deep
# `MUSETUI_SLOW=1` run) draws fresh examples each time, to look for new failures.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("explore" if os.environ.get("MUSETUI_SLOW") else "repeatable")
)


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every test's cache and config out of the real user directories, and every width its own.

    A terminal's ``COLUMNS``/``LINES`` (pytest-xdist's workers export 80x24) would size the scan
    table and the app in tmux: a test that needs a width sets it.
    """
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    base = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("MUSETUI_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("MUSETUI_CONFIG_DIR", str(base / "config"))


@pytest.fixture
def real_dir() -> Path:
    """../shared/fixtures/real, or skip: a fresh clone of this repository does not have it."""
    if not SHARED_REAL.is_dir():
        pytest.skip(f"real public captures not available at {SHARED_REAL} (they live in ../shared, outside this repo)")
    return SHARED_REAL


@pytest.fixture
def sample_dir() -> Path:
    """The bundled sample tree."""
    assert SAMPLE.is_dir(), "sample_transcripts/ is missing: run python -m musetui_synth.sample"
    return SAMPLE


# ---------------------------------------------------------------------------------------------
# In CI every skip must be one of the documented ones (tests/allowed_skips.txt): CI installs
# Chromium, tmux, rg, the fleet extra and ../shared, so a test that skips there hides a failure.
# ---------------------------------------------------------------------------------------------

ALLOWED_SKIPS = Path(__file__).with_name("allowed_skips.txt")


def _allowed_skips() -> list[str]:
    lines = ALLOWED_SKIPS.read_text(encoding="utf-8").splitlines()
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("MUSETUI_REQUIRE_ALL") != "1" or not report.skipped or hasattr(report, "wasxfail"):
        return
    if any(item.nodeid.startswith(prefix) for prefix in _allowed_skips()):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (
        f"skipped where CI installed everything (MUSETUI_REQUIRE_ALL=1): {reason}\n"
        f"Fix the environment or the test, or document the skip in {ALLOWED_SKIPS.name}."
    )
