"""The diagnostics view lists format drift: an unknown Claude Code line type, Codex record and Muse event kind."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from musetui.app import MuseApp
from musetui.screens.diagnostics import DiagnosticsScreen

from .helpers import SIZE, main, press, settle

_spec = importlib.util.spec_from_file_location("drift_tree", Path(__file__).parents[1] / "unit" / "test_drift.py")
assert _spec is not None and _spec.loader is not None
_unit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_unit)  # the unit tests' drifted tree (tests/unit is not a package)
CLAUDE, CODEX, MUSE, drifted_tree = _unit.CLAUDE, _unit.CODEX, _unit.MUSE, _unit.drifted_tree


async def test_diagnostics_view_lists_each_unknown_kind_with_file_and_line(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    app = MuseApp([str(root)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert main(app).diagnostics
        await press(pilot, "D")
        view = app.screen
        assert isinstance(view, DiagnosticsScreen)
        texts = [g.text() for g in view.groups if g.kind == "drift"]
        for path, line, what in (
            (CLAUDE, lines["claude"], 'unknown line type "teleport-marker"'),
            (CODEX, lines["codex"], 'unknown record type "brand_new_record"'),
            (MUSE, lines["muse"], 'unknown event kind "snapshot_taken"'),
        ):
            assert any(t.startswith(f"{path}:{line}: drift: ") and what in t for t in texts), (what, texts)
        assert "format drift: 5 unknown kinds or keys" in (view.query_one("#diagnostics-dialog").border_title or "")


async def test_the_title_counts_one_in_the_singular(sample_root: str) -> None:
    """The sample's one planted Muse kind: "1 in 1 line", "1 unknown kind or key" (not "1 lines", "kinds")."""
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "D")
        view = app.screen
        assert isinstance(view, DiagnosticsScreen)
        title = str(view.query_one("#diagnostics-dialog").border_title)
        assert "Diagnostics · 1 in 1 line · format drift: 1 unknown kind or key · " in title, title
