"""Shared fixtures for the Pilot tests: a quiet, deterministic environment and helpers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ["MUSETUI_NO_PYPERCLIP"] = "1"
os.environ["MUSETUI_LIVE_INTERVAL"] = "0"  # no live-follow polling worker: tests wait for workers

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"


@pytest.fixture(autouse=True)
def _quiet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No pyperclip, a private cache, and the repository as the working directory."""
    monkeypatch.setenv("MUSETUI_NO_PYPERCLIP", "1")
    monkeypatch.setenv("MUSETUI_LIVE_INTERVAL", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("MUSETUI_CACHE_DIR", str(tmp_path / "cache" / "musetui"))
    monkeypatch.delenv("MUSETUI_THEME", raising=False)
    monkeypatch.chdir(REPO)
    yield


@pytest.fixture
def sample_root() -> str:
    """The bundled sample, as a relative path (so labels do not depend on the checkout)."""
    assert SAMPLE.is_dir(), (
        "sample_transcripts/ is missing: it is committed (python -m musetui_synth.sample rebuilds it)"
    )
    return "sample_transcripts"
