"""``musetui timeline``: buckets per provider and host, first-seen events, the 80-column chart, ``--json``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.cells import cell_len

from musetui.cli import main
from musetui.core import timeline as tl

SPECIAL = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"  # the sample's muse-special worker


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _row(
    when: str | None,
    provider: str = "openai",
    host: str | None = None,
    model: str | None = "m",
    path: str = "a.jsonl",
    items: int = 1,
) -> tl.Row:
    return tl.Row(None if when is None else _ts(when), provider, host, model, "/r", path, 1, items)


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["timeline", *args]) == 0
    return capsys.readouterr().out


def test_sample_shows_the_special_worker_first_seen_at_22_01(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run([str(sample_dir)], capsys)
    lines = out.splitlines()
    assert all(cell_len(line) <= 80 for line in lines), [line for line in lines if cell_len(line) > 80]
    assert "by hour (chosen from the span" in out
    i = next(i for i, line in enumerate(lines) if "openai/azure · muse-special" in line)
    assert lines[i].startswith("2026-09-01 22:01  Z ")
    assert SPECIAL in lines[i + 1] and lines[i + 1].endswith("/session.jsonl:1")
    chart = [line for line in lines if line.startswith("2026-09-01 22:00  ")]
    assert chart and chart[0].split()[2] == "MMMMAAOOZ"  # 4 meta, 2 anthropic, 2 openai, 1 openai/azure


def test_json_shapes_and_counts(sample_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    objs = [json.loads(line) for line in _run([str(sample_dir), "--json"], capsys).splitlines()]
    buckets = [o["bucket"] for o in objs if "bucket" in o]
    events = [o["first_seen"] for o in objs if "first_seen" in o]
    assert len(buckets) + len(events) == len(objs) and all(len(o) == 1 for o in objs)
    assert all(set(b) == {"start", "end", "by", "sessions", "items", "providers"} for b in buckets)
    assert [b["start"] for b in buckets] == ["2026-09-01T22:00:00.000Z", "2026-09-01T23:00:00.000Z", None]
    assert sum(b["sessions"] for b in buckets) == 11
    for b in buckets:
        assert b["sessions"] == sum(p["sessions"] for p in b["providers"])
        assert b["items"] == sum(p["items"] for p in b["providers"])
        assert all(set(p) == {"provider", "host", "sessions", "items"} for p in b["providers"])
    assert all(
        set(e) == {"provider", "host", "declared_model", "time", "bucket", "root", "path", "line"} for e in events
    )
    special = [e for e in events if e["host"] == "azure"]
    assert len(special) == 1
    assert special[0]["provider"] == "openai" and special[0]["declared_model"] == "muse-special"
    assert special[0]["time"] == "2026-09-01T22:01:40.539Z" and special[0]["line"] == 1
    assert SPECIAL in special[0]["path"] and special[0]["root"] == str(sample_dir)
    assert len({(e["provider"], e["host"], e["declared_model"]) for e in events}) == len(events) == 8


def test_by_is_given_or_chosen_from_the_span(sample_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run([str(sample_dir), "--by", "day"], capsys)
    assert "by day (as asked)" in out
    assert any(line.startswith("2026-09-01  ") for line in out.splitlines())
    assert tl.choose_by(None) == "hour"
    assert tl.choose_by(2 * 86400 - 1) == "hour" and tl.choose_by(2 * 86400) == "day"
    assert tl.choose_by(90 * 86400 - 1) == "day" and tl.choose_by(90 * 86400) == "week"


def test_weeks_start_on_monday_utc() -> None:
    start = tl.bucket_start(_ts("2026-09-06T23:59:59"), "week")  # a Sunday
    assert datetime.fromtimestamp(start, UTC) == datetime(2026, 8, 31, tzinfo=UTC)
    assert tl.bucket_start(_ts("2026-08-31T00:00:00"), "week") == start
    assert tl.bucket_start(_ts("1969-12-31T12:00:00"), "day") == _ts("1969-12-31T00:00:00")


def test_first_seen_is_the_earliest_dated_row_of_each_combination() -> None:
    rows = [
        _row(None, path="undated.jsonl"),
        _row("2026-03-02T10:00:00", path="later.jsonl", items=5),
        _row("2026-03-01T09:30:00", path="first.jsonl", items=2),
        _row("2026-03-01T09:45:00", host="azure", path="azure.jsonl"),
        _row("2026-03-01T09:50:00", model="other", path="other-model.jsonl"),
        tl.Row(float("inf"), "meta", None, None, "/r", "bad-time.jsonl", 1, 3),
    ]
    t = tl.build(rows)
    assert t.by == "hour" and t.chosen and t.span == pytest.approx(24.5 * 3600)
    assert [e.row.path for e in t.first_seen] == [
        "first.jsonl",
        "azure.jsonl",
        "other-model.jsonl",
        "bad-time.jsonl",
    ]
    assert t.first_seen[0].bucket == _ts("2026-03-01T09:00:00")
    assert t.buckets[-1].start is None and t.buckets[-1].sessions == 2 and t.buckets[-1].items == 4
    assert [b.sessions for b in t.buckets] == [3, 1, 2] and t.sessions == 6 and t.items == 13
    assert t.keys[0] == ("openai", None)


def test_glyphs_are_distinct_and_unknown_is_a_question_mark() -> None:
    keys = [
        ("openai", None),
        ("anthropic", None),
        ("openai", "azure"),
        ("anthropic", "azure"),
        ("unknown", None),
        ("meta", None),
        ("meta", "bedrock"),
        ("mistral", None),
        ("moonshot", None),
    ]
    marks = tl.glyphs(keys)
    assert len(set(marks.values())) == len(keys)
    assert marks[("openai", None)] == "O" and marks[("openai", "azure")] == "Z" and marks[("unknown", None)] == "?"


def test_a_crowded_bucket_is_scaled_and_every_provider_still_shows() -> None:
    rows = [_row("2026-03-01T09:00:00", path=f"{i}.jsonl") for i in range(500)]
    rows.append(_row("2026-03-01T09:10:00", provider="meta", path="m.jsonl"))
    from musetui.cli.timeline import render

    text = render(tl.build(rows), 80, roots=["/r"])
    assert "one glyph = 12 sessions" in text
    bar = next(line for line in text.splitlines() if line.startswith("2026-03-01 09:00")).split()[2]
    assert bar.count("M") == 1 and bar.count("O") == round(500 / 12) and len(bar) <= 45
    assert all(cell_len(line) <= 80 for line in text.splitlines())


def test_names_are_escaped_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    from musetui.cli.timeline import render

    rows = [tl.Row(_ts("2026-03-01T09:00:00"), "openai", None, "gpt\x1b[31m\u202e", "/r", "x\u202e.jsonl", 1, 1)]
    text = render(tl.build(rows), 80, roots=["/r"])
    assert "\x1b" not in text and "\u202e" not in text and "\\u202e" in text


def test_the_timeline_core_and_command_import_no_textual() -> None:
    import subprocess
    import sys

    code = (
        "import sys, musetui.core.timeline, musetui.cli.timeline\n"
        "print(','.join(m for m in sys.modules if m == 'textual' or m.startswith('textual.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_warm_timeline_reuses_the_stored_rows_until_a_file_changes(
    sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from musetui.cli.timeline import load_rows
    from musetui.core.index import Index

    root = tmp_path / "tree"
    shutil.copytree(sample_dir, root)
    cold = load_rows([str(root)])

    def no_scan(self: Index, cancelled: object = None) -> Index:
        raise AssertionError("the index was scanned although nothing changed")

    monkeypatch.setattr(Index, "scan", no_scan)
    assert load_rows([str(root)]) == cold
    monkeypatch.undo()
    extra = root / "codex" / "sessions" / "2026" / "09" / "01"
    src = next(extra.glob("rollout-*.jsonl"))
    shutil.copyfile(src, extra / "rollout-2026-09-01T23-59-59-copy.jsonl")
    warm = load_rows([str(root)])
    assert len(warm) == len(cold) + 1
    assert tl.build(warm).sessions == tl.build(load_rows([str(root)], use_cache=False)).sessions


def test_the_html_report_charts_the_timeline_buckets(sample_dir: Path) -> None:
    import re

    from musetui.core.index import Index
    from musetui.core.report_charts import timeline_chart

    sessions = Index([str(sample_dir)], use_cache=False).scan().sessions
    svg = timeline_chart(sessions)
    bars = re.findall(r"<title>([^<]*)</title>", svg)
    assert bars == [  # the buckets of musetui timeline: hours from 22:00 UTC, openai and openai/azure stacked as openai
        "2026-09-01T22:00:00.000Z: 4 meta",
        "2026-09-01T22:00:00.000Z: 2 anthropic",
        "2026-09-01T22:00:00.000Z: 3 openai",
        "2026-09-01T23:00:00.000Z: 1 openai",
    ]
    assert "one bar per hour (UTC); 1 without a start time not shown" in svg
    t = tl.build(tl.rows_from_sessions(sessions))
    assert [b.sessions for b in t.dated()] == [9, 1]


def test_stored_rows_round_trip_and_anything_else_reads_as_no_rows() -> None:
    rows = [_row("2026-09-01T22:01:00", "openai", "azure"), _row(None, "meta", None, None, items=0)]
    blob = tl.rows_blob(rows)
    assert blob is not None
    assert tl.rows_from_blob(blob) == rows
    old = b'{"time":null,"provider":"meta","host":null,"declared_model":null,"root":"/r","path":"a","line":1,"items":0,"key":""}\n'
    for bad in (b"", b"{}", b"[]", b'{"timeline_rows":[[1]]}', blob[:-3], old, old * 2, blob.replace(b",1,", b',"1",')):
        assert tl.rows_from_blob(bad) is None, bad
