"""``musetui fleet``: machines ranked by how unusual their attribution is, from trees, saved outputs or Parquet."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from musetui.cli import main
from musetui.core import fleet

MUSE_SPECIAL = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"
KEYS = ["root", "sessions", "providers", "hosts", "flagged", "mismatches", "score", "top_sessions"]


def _vms(
    sample: Path, base: Path, special_on: tuple[str, ...] = ("vm3",), names: tuple[str, ...] = ("vm1", "vm2", "vm3")
) -> list[Path]:
    """Copies of the sample; only the machines in ``special_on`` keep the muse-special worker."""
    out = []
    for name in names:
        vm = base / name
        shutil.copytree(sample, vm)
        if name not in special_on:
            shutil.rmtree(next(vm.rglob(MUSE_SPECIAL)))
        out.append(vm)
    return out


def _fleet_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert main(["fleet", *args, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_the_machine_with_the_special_worker_ranks_first(
    sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vms = _vms(sample_dir, tmp_path)
    rows = _fleet_json([str(v) for v in vms] + ["--no-cache"], capsys)
    assert rows[0]["root"] == str(vms[2])
    for r in rows:
        assert list(r) == KEYS
    top = rows[0]
    assert top["sessions"] == 11 and top["flagged"] == 1 and top["hosts"] == {"azure": 1}
    assert isinstance(top["top_sessions"], list) and top["top_sessions"][0]["session_id"] == MUSE_SPECIAL
    assert top["top_sessions"][0]["flags"] == ["outlier"]
    assert all(isinstance(r["score"], float) for r in rows)
    assert rows[0]["score"] > rows[1]["score"] == rows[2]["score"]  # vm1 and vm2 are identical
    assert rows[1]["top_sessions"] == [] and rows[1]["flagged"] == 0


def test_argument_order_does_not_change_the_ranking(
    sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vms = _vms(sample_dir, tmp_path, special_on=("vm1",))
    rows = _fleet_json([str(v) for v in reversed(vms)] + ["--no-cache"], capsys)
    assert rows[0]["root"] == str(vms[0])


def test_identical_machines_score_alike(sample_dir: Path, tmp_path: Path) -> None:
    vms = _vms(sample_dir, tmp_path, special_on=("vm1", "vm2", "vm3"))
    ranked = fleet.rank(fleet.load_machines([str(v) for v in vms], use_cache=False))
    assert len({m.score for m in ranked}) == 1
    assert [m.root for m in ranked] == sorted(str(v) for v in vms)  # ties: by root


def test_saved_scan_outputs_rank_like_the_trees(
    sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vms = _vms(sample_dir, tmp_path / "trees")
    saved = []
    for vm in vms:
        assert main(["scan", str(vm), "--json", "--no-cache"]) == 0
        d = tmp_path / "saved" / vm.name
        d.mkdir(parents=True)
        (d / "scan.jsonl").write_text(capsys.readouterr().out)
        saved.append(d)
    live = _fleet_json([str(v) for v in vms] + ["--no-cache"], capsys)
    from_saved = _fleet_json([str(d) for d in saved], capsys)
    assert [r["root"] for r in from_saved] == [str(d) for d in (saved[2], saved[0], saved[1])]
    for a, b in zip(live, from_saved, strict=True):
        assert {k: v for k, v in a.items() if k != "root"} == {k: v for k, v in b.items() if k != "root"}
    single = saved[0] / "scan.jsonl"  # a saved output file is a machine too
    assert _fleet_json([str(single)], capsys)[0]["sessions"] == 10


def test_text_output_and_explain(sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vms = _vms(sample_dir, tmp_path)
    assert main(["fleet", "--explain"]) == 0
    assert capsys.readouterr().out == fleet.EXPLAIN
    assert main(["fleet", *map(str, vms), "--explain", "--no-cache"]) == 0
    out = capsys.readouterr().out
    lines = out.split(fleet.EXPLAIN, 1)[1].splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("rank"))
    ranking = lines[header + 1 : lines.index("", header)]  # the rows under the header, to the first blank line
    assert f"  {vms[2]}  " in ranking[0] and "r=1" in out and "eF=1.0" in out
    assert "most unusual sessions across the fleet" in out and MUSE_SPECIAL in out.split("most unusual", 1)[1]


def test_bad_saved_output_and_missing_root_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", str(tmp_path / "absent")]) == 2
    d = tmp_path / "saved"
    d.mkdir()
    good = {
        "path": "a.jsonl",
        "format": "generic",
        "provider": "unknown",
        "host": None,
        "confidence": 0.0,
        "flags": [],
        "evidence": [],
        "items": 1,
    }
    (d / "out.jsonl").write_text(json.dumps(good) + "\n{not json\n")
    assert main(["fleet", str(d)]) == 2
    assert "out.jsonl:2" in capsys.readouterr().err
    assert main(["fleet"]) == 2


def test_records_naming_several_roots_are_several_machines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def rec(root: str, provider: str, flags: list[str]) -> dict[str, object]:
        return {
            "path": f"{provider}.jsonl",
            "root": root,
            "format": "codex",
            "provider": provider,
            "host": None,
            "confidence": 0.9,
            "flags": flags,
            "evidence": [],
            "items": 3,
            "session_id": provider,
        }

    lines = [rec(f"vm{i}", "openai", []) for i in range(1, 5)] + [rec("vm5", "moonshot", ["declared-mismatch"])]
    f = tmp_path / "fleet.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in lines))
    rows = _fleet_json([str(f)], capsys)
    assert rows[0]["root"] == "vm5" and len(rows) == 5
    assert rows[0]["mismatches"] == 1 and rows[0]["providers"] == {"moonshot": 1}


def test_the_apps_ranking_from_indexed_sessions_is_the_clis(
    sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from musetui.core.index import Index

    vms = [str(v) for v in _vms(sample_dir, tmp_path)]
    cli = _fleet_json([*vms, "--no-cache"], capsys)
    index = Index(vms).scan()  # one index over every root, as the app opens them
    app = fleet.rank(fleet.machines_from_sessions(vms, index.sessions))
    assert [m.root for m in app] == [r["root"] for r in cli]
    assert [m.score for m in app] == [r["score"] for r in cli]
    assert fleet.summary_line(1, app[0]).startswith("#1 vm3 · score ") and "1 flagged" in fleet.summary_line(1, app[0])


def test_report_fleet_and_dask_modules_stay_headless_and_lazy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, musetui.core.evidence_report, musetui.core.fleet, musetui.core.distributed, musetui.core.parquet\n"
        "print([m for m in ('textual', 'distributed', 'dask', 'pyarrow') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_warm_fleet_reuses_the_stored_records_until_a_file_changes(
    sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from musetui.core.index import Index

    root = tmp_path / "tree"
    shutil.copytree(sample_dir, root)
    cold = fleet.scan_records(str(root))
    assert cold == fleet.scan_records(str(root), use_cache=False)

    def no_scan(self: Index, cancelled: object = None) -> Index:
        raise AssertionError("the index was scanned although nothing changed")

    monkeypatch.setattr(Index, "scan", no_scan)
    assert fleet.scan_records(str(root)) == cold
    monkeypatch.undo()
    extra = root / "codex" / "sessions" / "2026" / "09" / "01"
    src = next(extra.glob("rollout-*.jsonl"))
    shutil.copyfile(src, extra / "rollout-2026-09-01T23-59-59-copy.jsonl")
    warm = fleet.scan_records(str(root))
    assert len(warm) == len(cold) + 1
    assert warm == fleet.scan_records(str(root), use_cache=False)


def test_stored_fleet_records_round_trip_and_anything_else_reads_as_none() -> None:
    records = [{"path": "a.jsonl", "provider": "openai", "flags": ["outlier"], "segments": [{"first_line": 1}]}]
    blob = fleet._records_blob(records)
    assert blob is not None
    assert fleet._records_from_blob(blob) == records
    for bad in (b"", b"[]", b"{}", b'{"fleet_records":[{"path":1}]}', b'{"fleet_records":{}}', blob[:-2]):
        assert fleet._records_from_blob(bad) is None, bad
