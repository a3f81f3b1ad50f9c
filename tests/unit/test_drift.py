"""Format drift: unknown record kinds and top-level keys, per harness version, with their first file and line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from musetui.cli import main
from musetui.core.diagnostics import group, stderr_lines
from musetui.core.drift import stats_line, tally
from musetui.core.index import Index

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts"
CLAUDE = "claude/projects/-home-dev-site/4e710f04-7f87-4b76-b9ba-ab287a3112ab.jsonl"
CODEX = "codex/sessions/2026/09/01/rollout-2026-09-01T23-05-10-01a05f01-379d-73f6-a40f-8de845a806ed.jsonl"
MUSE = "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/session.jsonl"


def _append(path: Path, record: dict[str, object]) -> int:
    """Append one JSON line to ``path``; returns its line number."""
    data = path.read_bytes()
    path.write_bytes(data + orjson.dumps(record) + b"\n")
    return data.count(b"\n") + 1


def drifted_tree(root: Path) -> dict[str, int]:
    """A copy of the sample with one unknown Claude Code line type (and key), Codex record and Muse event kind."""
    shutil.copytree(SAMPLE, root)
    first = json.loads((root / CLAUDE).read_text().splitlines()[2])
    claude = dict(first, type="teleport-marker", teleportedFrom="elsewhere")
    meta = json.loads((root / CODEX).read_text().splitlines()[0])
    return {
        "claude": _append(root / CLAUDE, claude),
        "codex": _append(root / CODEX, {"timestamp": meta["timestamp"], "type": "brand_new_record", "payload": {}}),
        "muse": _append(
            root / MUSE,
            {
                "stream": {"kind": "session", "id": "x"},
                "recorded_at": 1788300027536282,
                "payload": {"kind": "run", "event": {"kind": "snapshot_taken"}},
            },
        ),
    }


def test_real_current_records_are_known() -> None:
    """The sample's real-shaped records raise no drift but its one planted Muse event kind."""
    index = Index([str(SAMPLE)], use_cache=False).scan()
    rows = tally(index.diagnostics)
    assert [(r.format, r.version, r.what, r.name, r.count, r.first_line) for r in rows] == [
        ("muse", None, "event kind", "checkpoint_saved", 1, 13)
    ]


def test_each_unknown_kind_and_key_is_counted_per_version_at_its_first_line(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    index = Index([str(root)], use_cache=False).scan()
    found = {
        (r.format, r.version, r.what, r.name): (r.first_path, r.first_line, r.count) for r in tally(index.diagnostics)
    }
    version = json.loads((root / CLAUDE).read_text().splitlines()[2])["version"]
    assert found[("claude-code", version, "line type", "teleport-marker")] == (CLAUDE, lines["claude"], 1)
    assert found[("claude-code", version, "top-level key", "teleportedFrom")] == (CLAUDE, lines["claude"], 1)
    assert found[("codex", "0.141.0", "record type", "brand_new_record")] == (CODEX, lines["codex"], 1)
    assert found[("muse", None, "event kind", "snapshot_taken")] == (MUSE, lines["muse"], 1)
    line = stats_line(index.diagnostics)
    assert line is not None and line.startswith("drift: 5 unknown kinds or keys (5 records) in 3 formats")


def test_a_kind_met_in_many_files_is_listed_once_at_its_first(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    drifted_tree(root)
    muse = sorted(p for p in root.glob("muse-vm/**/session.jsonl") if "subagents" in str(p))
    for p in muse:
        _append(
            p,
            {
                "stream": {"kind": "session", "id": "x"},
                "recorded_at": 1788300027536282,
                "payload": {"kind": "run", "event": {"kind": "snapshot_taken"}},
            },
        )
    index = Index([str(root)], use_cache=False).scan()
    drift = [g for g in group(index.diagnostics) if g.kind == "drift" and '"snapshot_taken"' in g.reason]
    assert len(drift) == 1
    assert drift[0].count == 1 + len(muse)
    assert drift[0].reason.endswith(f"×{1 + len(muse)} in {1 + len(muse)} files")
    text = [t for t in stderr_lines(index.diagnostics) if "snapshot_taken" in t]
    assert len(text) == 1 and text[0].startswith(drift[0].path + ":")


def test_scan_diagnostics_and_stats_name_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    out = tmp_path / "diags.jsonl"
    assert main(["scan", "--json", "--no-cache", "--stats", "--diagnostics", str(out), str(root)]) == 0
    err = capsys.readouterr().err
    records = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    drift = {(r["path"], r["line"]) for r in records if r["message"].startswith("drift: ")}
    assert {(CLAUDE, lines["claude"]), (CODEX, lines["codex"]), (MUSE, lines["muse"])} <= drift
    assert (
        f'{CODEX}:{lines["codex"]}: drift: codex version "0.141.0": unknown record type "brand_new_record" ×1 in 1 file'
        in err
    )
    assert f'{MUSE}:{lines["muse"]}: drift: muse (no version): unknown event kind "snapshot_taken" ×1 in 1 file' in err
    assert "musetui: drift: 5 unknown kinds or keys" in err


def test_drift_survives_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    drifted_tree(root)
    cold = Index([str(root)], use_cache=True).scan()
    warm = Index([str(root)], use_cache=True).scan()
    assert warm.result.cache_hits == len(warm.files)
    assert tally(warm.diagnostics) == tally(cold.diagnostics) != []


def test_an_append_is_read_alone_and_its_drift_joins_the_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    Index([str(root)], use_cache=True).scan()
    later = _append(root / CODEX, {"timestamp": "2026-09-01T23:09:00.000Z", "type": "brand_new_record", "payload": {}})
    extra = _append(root / CODEX, {"timestamp": "2026-09-01T23:09:01.000Z", "type": "another_record", "payload": {}})
    index = Index([str(root)], use_cache=True).scan()
    assert index.result.resumed == 1
    found = {(r.name, r.first_line, r.count, r.files) for r in tally(index.diagnostics) if r.format == "codex"}
    # the old kind keeps its first line and counts the appended one; the new one is at its own line
    assert found == {("brand_new_record", lines["codex"], 2, 1), ("another_record", extra, 1, 1)}
    assert later > lines["codex"]


def test_following_a_growing_file_does_not_count_its_drift_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    index = Index([str(root)], use_cache=True).scan()
    _append(root / CODEX, {"timestamp": "2026-09-01T23:09:00.000Z", "type": "brand_new_record", "payload": {}})
    result = index.refresh(active_window_s=3600)
    assert result.resumed + result.rescanned == 1
    (row,) = [r for r in tally(index.diagnostics) if r.name == "brand_new_record"]
    assert (row.count, row.files, row.first_line) == (2, 1, lines["codex"])


def test_the_report_appendix_tables_the_drift(tmp_path: Path) -> None:
    from musetui.core.evidence_report import collect, render_markdown
    from musetui.core.report_page import render_html

    root = tmp_path / "tree"
    lines = drifted_tree(root)
    data = collect([str(root)], use_cache=False)
    md = render_markdown(data)
    assert f"| codex | `0.141.0` | record type | `brand_new_record` | 1 | 1 | `{CODEX}:{lines['codex']}` |" in md
    html = render_html(data)
    table = html[html.index('<table class="sortable drift"') :]
    table = table[: table.index("</table>")]
    assert "snapshot_taken" in table and f"{MUSE}:{lines['muse']}" in table and "teleport-marker" in table


@pytest.mark.parametrize(
    "line", [b"1", b"null", b'"text"', b"[1, 2]", b"{}", b'{"payload": 3}', b'{"payload": {"kind": 7}}']
)
def test_records_that_are_not_objects_or_hold_odd_kinds_never_raise(line: bytes) -> None:
    import simdjson

    from musetui.core.drift import Watch
    from musetui.core.sources import registry

    for fmt in ("muse", "codex", "claude-code"):
        known = registry.spec(fmt).known
        assert known is not None
        watch = Watch(known)
        watch(orjson.loads(line), 1)
        doc = simdjson.Parser().parse(line)
        watch(doc, 2)
        del doc
