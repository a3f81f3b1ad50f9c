"""Recorded line times that run backwards raise time-mismatch, over every record, observed or not (issue 25)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from musetui.core.fingerprints.attribution import TOL_BEFORE_S
from musetui.core.index import Index
from musetui.core.model import SessionSummary, parse_time
from musetui.core.reasons import TimeBackwards
from musetui.core.scanner import scan_file
from musetui_synth.corpus import generate

CLAUDE = "claude/projects/-home-dev-site/4e710f04-7f87-4b76-b9ba-ab287a3112ab.jsonl"
CODEX = (
    "madshn__localpush/src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__"
    "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
)


def _scan(path: Path) -> SessionSummary:
    out = scan_file(str(path), path.name, str(path.parent))
    assert out.summary is not None
    return out.summary


def _backwards(path: Path) -> list[TimeBackwards]:
    return [r for r in _scan(path).attribution.reasons if isinstance(r, TimeBackwards)]


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _retime(path: Path, line: int, key: str, shift: timedelta) -> None:
    """Move the recorded time of one line (1-based) by ``shift``, its bytes otherwise as they were."""
    lines = path.read_bytes().split(b"\n")
    old = orjson.loads(lines[line - 1])[key]
    if isinstance(old, int):  # (Muse: microseconds)
        new = str(old + int(shift.total_seconds() * 1e6)).encode()
        lines[line - 1] = lines[line - 1].replace(b'"%s":%d' % (key.encode(), old), b'"%s":%s' % (key.encode(), new))
    else:
        t = datetime.fromisoformat(old.replace("Z", "+00:00")) + shift
        lines[line - 1] = lines[line - 1].replace(old.encode(), _iso(t).encode())
    path.write_bytes(b"\n".join(lines))


def test_an_unobserved_claude_line_recorded_an_hour_early(sample_dir: Path, tmp_path: Path) -> None:
    """Line 13 (a user turn: not observed, no artifact) is recorded 1 h before line 12: both lines named."""
    path = tmp_path / "s.jsonl"
    shutil.copy(sample_dir / CLAUDE, path)
    assert _backwards(path) == []
    _retime(path, 13, "timestamp", timedelta(hours=-1))
    got = _backwards(path)
    assert len(got) == 1
    assert (got[0].line, got[0].later_line) == (12, 13)
    assert got[0].text == "recorded times run backwards: line 13 is recorded −59.6 min from line 12"
    record = _scan(path).record()
    assert "time-mismatch" in record["flags"]


def test_within_the_tolerance_nothing(sample_dir: Path, tmp_path: Path) -> None:
    """Five minutes back is normal (long responses): no time-mismatch."""
    path = tmp_path / "s.jsonl"
    shutil.copy(sample_dir / CLAUDE, path)
    _retime(path, 13, "timestamp", timedelta(seconds=-(TOL_BEFORE_S - 60) - 21.8))
    assert _backwards(path) == []


def test_an_unobserved_codex_line(real_dir: Path, tmp_path: Path) -> None:
    """A real Codex rollout: one response_item line (never observed) recorded 2 h early."""
    path = tmp_path / "rollout.jsonl"
    shutil.copy(real_dir / CODEX, path)
    assert _backwards(path) == []
    lines = path.read_bytes().splitlines()
    k = next(i for i, raw in enumerate(lines[5:], 6) if b'"type":"response_item"' in raw[:80])
    _retime(path, k, "timestamp", timedelta(hours=-2))
    got = _backwards(path)
    assert len(got) == 1 and got[0].later_line == k and got[0].line < k  # (the first line with the latest time)
    assert 7100 < got[0].time - got[0].later_time < 7300


def test_an_unobserved_muse_line(tmp_path: Path) -> None:
    """A generated Muse session: a plain event's recorded_at (microseconds) an hour early."""
    root = tmp_path / "gen"
    generate(root, 0.1, 3)
    path = max(root.rglob("session.jsonl"), key=lambda p: p.stat().st_size)
    assert _backwards(path) == []
    lines = path.read_bytes().splitlines()
    k = len(lines) - 2
    _retime(path, k, "recorded_at", timedelta(hours=-1))
    got = _backwards(path)
    assert len(got) == 1 and got[0].later_line == k and got[0].line < k


def test_an_append_keeps_and_extends_the_check(sample_dir: Path, tmp_path: Path) -> None:
    """Through the cache's resume: a step in the first part stays, and one across the append is found."""
    root = tmp_path / "t"
    path = root / "s.jsonl"
    path.parent.mkdir()
    data = (sample_dir / CLAUDE).read_bytes()
    path.write_bytes(data)
    _retime(path, 13, "timestamp", timedelta(hours=-1))

    def reasons() -> list[TimeBackwards]:
        (s,) = Index([str(root)], workers=1).scan().sessions
        return [r for r in s.attribution.reasons if isinstance(r, TimeBackwards)]

    assert [(r.line, r.later_line, r.count) for r in reasons()] == [(12, 13, 1)]
    last = data.splitlines()[-1]
    early = last.replace(b"2026-09-01T22:41:11.699Z", b"2026-09-01T20:00:00.000Z")
    with path.open("ab") as f:
        f.write(early + b"\n")
    assert [(r.line, r.later_line, r.count) for r in reasons()] == [(12, 13, 2)]


def _reference(data: bytes) -> tuple[int, int, int] | None:
    """The first backward step and how many, from every record's top-level time, parsed line by line."""
    top_line, top, first, n = 0, 0.0, None, 0
    for k, raw in enumerate(data.split(b"\n"), 1):
        if not raw:
            continue
        t = parse_time(orjson.loads(raw).get("timestamp"))
        if t is None:
            continue
        if not top_line or t > top:
            top_line, top = k, t
        elif top - t > TOL_BEFORE_S:
            n += 1
            first = first or (top_line, k)
    return None if first is None else (*first, n)


_STEP = st.one_of(st.integers(0, 90), st.integers(-4000, 0), st.just(-601), st.just(-599))
_SHAPE = st.sampled_from(["ms", "ms", "ms", "s", "offset", "none"])


@given(st.lists(st.tuples(_STEP, _SHAPE, st.booleans()), min_size=1, max_size=40))
def test_the_check_agrees_with_parsing_every_line(tmp_path_factory: Any, steps: list[tuple[int, str, bool]]) -> None:
    """Whatever the steps and the shapes of the times, the scan finds what parsing every line finds."""
    t = datetime(2026, 9, 1, 22, 40, tzinfo=UTC)
    records = []
    for k, (step, shape, assistant) in enumerate(steps):
        t += timedelta(seconds=step, milliseconds=k)
        rec: dict[str, Any] = {"parentUuid": None, "isSidechain": False, "type": "assistant" if assistant else "user",
                               "sessionId": "4e710f04-7f87-4b76-b9ba-ab287a3112ab", "uuid": f"u{k}"}  # fmt: skip
        if shape != "none":
            rec["timestamp"] = {
                "ms": _iso(t), "s": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "offset": t.isoformat()
            }[shape]  # fmt: skip
        rec["message"] = {"role": rec["type"], "content": "hi"}
        records.append(rec)
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    path = tmp_path_factory.mktemp("times") / "s.jsonl"
    path.write_bytes(data)
    got = [(r.line, r.later_line, r.count) for r in _backwards(path)]
    want = _reference(data)
    assert got == ([] if want is None else [want])


def _reference_muse(data: bytes) -> tuple[int, int, int] | None:
    top_line, top, first, n = 0, 0.0, None, 0
    for k, raw in enumerate(data.split(b"\n"), 1):
        if not raw:
            continue
        t = parse_time(orjson.loads(raw)["recorded_at"])
        if t is None:
            continue
        if not top_line or t > top:
            top_line, top = k, t
        elif top - t > TOL_BEFORE_S:
            n += 1
            first = first or (top_line, k)
    return None if first is None else (*first, n)


@given(st.lists(st.tuples(_STEP, st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_muse_times_in_place_agree_with_parsing_every_line(
    tmp_path_factory: Any, steps: list[tuple[int, bool, bool]]
) -> None:
    """Muse lines (the time at one place, in microseconds), observed or not, with ties and steps back."""
    t = 1788630410_000000
    lines = []
    for step, tie, observed in steps:
        t += 0 if tie else step * 1_000_000 + 7
        kind = "model_completed_x" if observed else "assistant_message_committed"  # (an unknown kind is observed)
        lines.append({"stream": {"kind": "session", "id": "01a072ae-25ea-7368-83f2-d8760375fc87"}, "recorded_at": t,
                      "payload": {"kind": "run", "event": {"kind": kind, "text": "x"}}})  # fmt: skip
    data = b"".join(orjson.dumps(r) + b"\n" for r in lines)
    path = tmp_path_factory.mktemp("muse") / "session.jsonl"
    path.write_bytes(data)
    got = [(r.line, r.later_line, r.count) for r in _backwards(path)]
    want = _reference_muse(data)
    assert got == ([] if want is None else [want])
