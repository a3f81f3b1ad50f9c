"""The sample's sessions scanned as a cache stores them (each with its resume state), for the cache tests."""

from __future__ import annotations

from pathlib import Path

from musetui.core.scanner import Outcome, scan_file


def sample_outcomes(root: Path) -> list[Outcome]:
    """Every session under ``root``, scanned afresh with its resume state (the tests take the states)."""
    out = []
    for p in sorted(root.rglob("*.json*")):
        o = scan_file(str(p), p.relative_to(root).as_posix(), str(root), want_state=True)
        if o.summary is not None:
            out.append(o)
    assert len(out) > 5
    return out
