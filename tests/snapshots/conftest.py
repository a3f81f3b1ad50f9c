"""Deterministic snapshots: no animations, no pyperclip, the repository as working directory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["TEXTUAL_ANIMATIONS"] = "none"
os.environ["MUSETUI_NO_PYPERCLIP"] = "1"
os.environ["MUSETUI_LIVE_INTERVAL"] = "0"  # no live-follow polling worker: tests wait for workers

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _snapshot_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    monkeypatch.setenv("MUSETUI_NO_PYPERCLIP", "1")
    monkeypatch.setenv("MUSETUI_LIVE_INTERVAL", "0")
    monkeypatch.delenv("MUSETUI_THEME", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.chdir(REPO)
    assert (REPO / "sample_transcripts").is_dir(), "sample_transcripts/ is missing: it is committed"
    yield
