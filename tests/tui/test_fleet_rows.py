"""Several roots open: one fleet summary row per root, ranked as ``musetui fleet`` ranks them; the report command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.command import CommandPalette

from musetui.app import MuseApp
from musetui.cli import main as cli
from musetui.screens.main import MainScreen
from musetui.widgets.tree_rows import RootSummary

from .helpers import OUTLIER_ID, SIZE, main, press, settle, tree_rows


def _vms(sample: Path, base: Path) -> list[str]:
    out = []
    for name in ("vm1", "vm2", "vm3"):
        vm = base / name
        shutil.copytree(sample, vm)
        if name != "vm3":
            shutil.rmtree(next(vm.rglob(OUTLIER_ID)))
        out.append(str(vm))
    return out


@pytest.fixture
def vms(tmp_path: Path) -> list[str]:
    sample = Path(__file__).resolve().parents[2] / "sample_transcripts"
    assert sample.is_dir(), (
        "sample_transcripts/ is missing: it is committed (python -m musetui_synth.sample rebuilds it)"
    )
    return _vms(sample, tmp_path / "fleet")


async def test_each_root_gets_a_summary_row_in_fleet_order(vms: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["fleet", *vms, "--json", "--no-cache"]) == 0
    ranking = [json.loads(line)["root"] for line in capsys.readouterr().out.splitlines()]
    assert ranking[0] == vms[2]
    app = MuseApp(vms)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = main(app).session_tree
        assert list(tree.fleet_rows) == ranking
        summaries = [n.data for n in tree.root.children if isinstance(n.data, RootSummary)]
        assert [s.root for s in summaries] == ranking  # one row per root, most unusual first
        rows = [r for r in tree_rows(app) if r.strip()]
        assert rows[0].strip().startswith("#1 vm3 · score") and "1 flagged" in rows[0]
        assert any(r.strip().startswith(("#2 vm1 · score", "#2 vm2 · score")) for r in rows)


async def test_palette_writes_the_report_of_the_open_roots(
    vms: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    monkeypatch.chdir(out_dir)
    before = {p: p.stat().st_mtime_ns for v in vms for p in Path(v).rglob("*")}
    app = MuseApp(vms)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"write evidence report")
        await settle(pilot)
        await press(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
    written = list(out_dir.glob("musetui-report-*.html"))
    assert len(written) == 1
    html = written[0].read_text(encoding="utf-8")
    assert OUTLIER_ID in html and "<svg" in html and html.count('<section class="session"') == 1
    assert {p: p.stat().st_mtime_ns for v in vms for p in Path(v).rglob("*")} == before
