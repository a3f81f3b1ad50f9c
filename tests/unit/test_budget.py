"""One read budget per file (issue 24): small-scale bombs, with the budget lowered by parameter.

Each bomb here is a scaled-down copy of one measured in ``bench/bench_memory.py``: the same
layers, a budget small enough that it trips on a few hundred KB.
"""

from __future__ import annotations

import base64
import tracemalloc
import zlib
from pathlib import Path

import pytest

from musetui.core import scanner
from musetui.core.budget import Budget
from musetui.core.model import SessionSummary
from musetui.core.sources import capture_read

pytestmark = pytest.mark.filterwarnings("ignore")


def _summary(name: str) -> SessionSummary:
    return SessionSummary(
        path=name,
        abspath="/" + name,
        root="/",
        format="generic",
        format_rule="",
        size=0,
        mtime_ns=0,
        inode=0,
        device=0,
        read_bytes=0,
    )


def _gz_lines(n: int) -> bytes:
    c = zlib.compressobj(9, wbits=31)
    return c.compress(b"{}\n" * n) + c.flush()


def _cassette(interactions: int, lines: int) -> bytes:
    b64 = base64.b64encode(_gz_lines(lines)).decode()
    one = (
        "- request: {body: null, headers: {}, method: POST, uri: 'https://api.openai.com/v1/chat/completions'}\n"
        f"  response:\n    body:\n      string: !!binary '{b64}'\n"
        "    headers: {Content-Encoding: [gzip]}\n    status: {code: 200, message: OK}\n"
    )
    return ("interactions:\n" + one * interactions + "version: 1\n").encode()


def test_gzip_bodies_share_one_byte_budget() -> None:
    """Three gzip bodies, each under the per-body cap, together past the file's: cut, and said."""
    data = _cassette(3, 100_000)  # 300,000 bytes per body once inflated
    budget = Budget(max_bytes=500_000)
    exchanges, _starts = capture_read.parse_yaml(data, budget=budget)
    assert len(exchanges) == 3  # what was read is kept
    assert budget.used_bytes <= 500_000
    assert any("gzip bodies past" in t for t in budget.tripped)


def test_records_past_the_item_budget_are_cut_and_said() -> None:
    data = _cassette(3, 5_000)
    budget = Budget(max_items=7_000)
    exchanges, _starts = capture_read.parse_yaml(data, budget=budget)
    assert sum(len(ex.records) for ex in exchanges) == 7_000
    assert exchanges[0].body_kind == "jsonl" and len(exchanges[2].records) == 0
    assert "more than 7,000 records" in (budget.diagnostic() or "")


def test_the_scan_names_the_budget_and_keeps_the_session() -> None:
    data = _cassette(3, 5_000)
    out = scanner.scan_bytes(data, _summary("bomb.yaml"), budget=Budget(max_items=7_000))
    assert out.summary is not None and out.summary.items == 3
    assert [d.message for d in out.diagnostics if "read budget exceeded" in d.message]


def test_har_base64_bodies_charge_the_same_budget() -> None:
    import orjson

    body = base64.b64encode(_gz_lines(100_000)).decode()
    entry = {
        "startedDateTime": "2026-01-01T00:00:00Z",
        "request": {"method": "POST", "url": "https://api.openai.com/v1/responses", "headers": []},
        "response": {
            "status": 200,
            "headers": [],
            "content": {"mimeType": "application/json", "encoding": "base64", "text": body},
        },
    }
    data = orjson.dumps({"log": {"version": "1.2", "entries": [entry] * 3}})
    budget = Budget(max_bytes=400_000)
    exchanges, _starts = capture_read.parse_json(data, budget=budget)
    assert len(exchanges) == 3 and budget.used_bytes <= 400_000 and budget.tripped


def _alias_cassette(aliases: int, size: int, per_interaction: bool) -> bytes:
    head = "interactions:\n"
    first = (
        "- request: {body: null, headers: {}, method: GET, uri: 'https://api.openai.com/v1/x'}\n"
        f"  response:\n    body: {{string: &a '{'x' * size}'}}\n    headers: {{}}\n    status: {{code: 200}}\n"
    )
    if per_interaction:
        rest = (
            "- request: {body: null, headers: {}, method: GET, uri: 'https://api.openai.com/v1/x'}\n"
            "  response:\n    body: {string: *a}\n    headers: {}\n    status: {code: 200}\n"
        ) * aliases
        return (head + first + rest + "version: 1\n").encode()
    return (head + first + "  extra:\n" + "  - *a\n" * aliases + "version: 1\n").encode()


def test_aliases_of_one_string_are_cut_at_the_alias_byte_budget() -> None:
    """2,000 aliases of a 10 KB string (20 MB expanded, under the value cap): cut where the budget ends."""
    data = _alias_cassette(2_000, 10_000, per_interaction=True)
    budget = Budget(max_alias_bytes=1_000_000)
    exchanges, _starts = capture_read.parse_yaml(data, budget=budget)
    assert 50 <= len(exchanges) < 200  # the interactions read before the budget ran out
    assert any("MiB of strings" in t for t in budget.tripped)


def test_aliases_inside_one_interaction_make_the_file_a_diagnostic(tmp_path: Path) -> None:
    data = _alias_cassette(2_000, 10_000, per_interaction=False)
    with pytest.raises(capture_read.CaptureError, match="read budget exceeded"):
        capture_read.parse_yaml(data, budget=Budget(max_alias_bytes=1_000_000))


def test_nesting_past_the_depth_budget_is_said() -> None:
    nested = "[" * 30 + "]" * 30
    data = (
        "interactions:\n- &n request: {uri: 'https://api.openai.com/v1/x', body: " + nested + "}\n"
        "  response: {status: {code: 200}, body: {string: ''}}\n"
    ).encode()
    with pytest.raises(capture_read.CaptureError, match="nested deeper than 20"):
        capture_read.parse_yaml(data, budget=Budget(max_depth=20))


def test_memory_per_line_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many tiny lines: the per-line objects of one slice at a time, not of the whole file."""
    data = b"{}\n" * 400_000
    monkeypatch.setattr(scanner, "WINDOW_LINES", 20_000)
    tracemalloc.start()
    try:
        out = scanner.scan_bytes(data, _summary("tiny.jsonl"))
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.summary is not None and out.summary.items == 400_000
    assert peak < 20 * 1024 * 1024, peak  # the whole file's lines at once: about 60 MB


def test_slices_give_the_same_record_as_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [
        b'{"type":"message","id":"m%d","model":"gpt-4o","created_at":%d}' % (i, 1_700_000_000 + i) for i in range(5_000)
    ]
    data = b"\n".join(lines) + b"\n"
    whole = scanner.scan_bytes(data, _summary("s.jsonl"), keep_offsets=True)
    monkeypatch.setattr(scanner, "WINDOW_LINES", 700)
    sliced = scanner.scan_bytes(data, _summary("s.jsonl"), keep_offsets=True)
    assert whole.summary is not None and sliced.summary is not None
    assert (sliced.summary.items, sliced.summary.started_at, sliced.summary.ended_at, sliced.summary.format) == (
        whole.summary.items,
        whole.summary.started_at,
        whole.summary.ended_at,
        whole.summary.format,
    )
    assert sliced.offsets == whole.offsets


def test_show_line_parses_only_the_lines_near_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``show --line`` of a long session: the same item as a whole open, from a window of lines."""
    from musetui.core import session

    src = next((Path(__file__).parents[2] / "sample_transcripts" / "codex").rglob("*.jsonl"))
    body = src.read_bytes()
    path = tmp_path / "long.jsonl"
    path.write_bytes(body * 40)
    out = scanner.scan_file(str(path), "long.jsonl", str(tmp_path))
    assert out.summary is not None
    whole = session.open_session(out.summary)
    monkeypatch.setattr(session, "NEAR_MIN_ITEMS", 0)
    monkeypatch.setattr(session, "NEAR_LINES", 50)
    n_lines = body.count(b"\n") * 40
    for line in (1, 7, n_lines // 2, n_lines - 3, n_lines):
        near = session.open_near(out.summary, line)
        want = [it for it in whole.items if it.line <= line < it.line + max(1, it.lines)]
        got = [it for it in near.items if it.line <= line < it.line + max(1, it.lines)]
        assert len(near.items) < len(whole.items) / 5
        assert [(it.line, it.offset, it.length, it.kind, it.text) for it in got] == [
            (it.line, it.offset, it.length, it.kind, it.text) for it in want
        ]
        assert [near.raw(it) for it in got] == [whole.raw(it) for it in want]
