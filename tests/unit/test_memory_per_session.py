"""What an index holds per session, counted by tracemalloc (deterministic: bytes allocated, not time).

``scan`` keeps every session of a tree until its fleet outliers are known, so a tree of
100,000 small sessions costs 100,000 times this (the peak RSS is measured in
``bench/bench_memory.py``; issue 27). Counted here: what the index holds once the scan is
done (its sessions, their files, everything the result keeps), and the highest the scan
went, per session, for ``scan --json`` and the table (light sessions) with the cache off,
filling it, and reading it back.
"""

from __future__ import annotations

import gc
import sqlite3
import tracemalloc
from pathlib import Path

import orjson
import pytest

from musetui.core import cache as cache_mod
from musetui.core import index_run, packed
from musetui.core.cache import db_path
from musetui.core.index import Index
from musetui.core.packed import pack_record, unpack_record

SESSIONS = 1500

#: Bytes per session, at most. Measured: 1,255 held (1,480 at the peak) without the cache, 1,275
#: held (1,960 at the peak) filling it, 1,255 (1,970) reading it back. Main at 6542801: 1,770
#: (1,990), 1,790 (6,090: it held everything it stored until the end) and 2,670 (4,350).
HELD_MAX = 1_450
PEAK_MAX = 2_300


@pytest.fixture(autouse=True)
def _packing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record packed, as past :data:`~musetui.core.packed.PLAIN_BYTES` (what 100,000 sessions cost)."""
    monkeypatch.setattr(packed, "_plain_left", 0)


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree of small one-line sessions, a few directories of them (as ``bench_memory.sessions``)."""
    root = tmp_path_factory.mktemp("many") / "sessions"
    for i in range(SESSIONS):
        sub = root / f"{i // 500:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"s{i}.jsonl").write_bytes(b'{"type":"message","id":"m%d","model":"gpt-4o"}\n' % i)
    return root


@pytest.fixture(scope="module")
def few(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree of three such sessions: scanned first, so that what a first scan imports is not counted."""
    root = tmp_path_factory.mktemp("few") / "sessions"
    root.mkdir()
    for i in range(3):
        (root / f"s{i}.jsonl").write_bytes(b'{"type":"message","id":"m%d","model":"gpt-4o"}\n' % i)
    return root


def _per_session(root: Path, use_cache: bool) -> tuple[float, float, Index]:
    """(bytes held by the scanned index, highest bytes during its scan) per session, and the index."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        index = Index([str(root)], workers=1, use_cache=use_cache, light=True).scan()
        gc.collect()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    n = len(index.sessions)
    assert n == SESSIONS
    return (held - before) / n, (peak - before) / n, index


@pytest.mark.parametrize("use_cache", [False, True], ids=["no-cache", "cache"])
def test_a_light_session_costs_little_to_hold(
    many: Path, few: Path, use_cache: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cold (and, with the cache, filling it then reading it back): each session's bytes stay under the bounds.

    The cache is written in batches (of 8 MB; of 256 KiB here, a small tree's worth): a run
    filling it holds one batch of what it stores, not all.
    """
    monkeypatch.setattr(index_run, "FLUSH_BYTES", 256 * 1024)
    for _ in range(2):  # (filling the cache, then reading it)
        Index([str(few)], workers=1, use_cache=use_cache, light=True).scan()
    runs = [_per_session(many, use_cache)]
    if use_cache:
        runs.append(_per_session(many, use_cache))
        assert runs[1][2].result.cache_hits == SESSIONS  # (the second run read every session from the cache)
    for held, peak, _index in runs:
        assert held <= HELD_MAX, f"{held:.0f} bytes held per session"
        assert peak <= PEAK_MAX, f"{peak:.0f} bytes per session at the peak"


def test_light_sessions_share_their_common_values(many: Path) -> None:
    """Values many sessions have in common are held once; each record is packed, and reads back whole."""
    index = Index([str(many)], workers=1, use_cache=False, light=True).scan()
    a, b = index.sorted_sessions()[:2]
    assert a.format is b.format and a.attribution.provider is b.attribution.provider and a.root is b.root
    assert a.models is b.models and a.usage is b.usage and a.models == {"gpt-4o": 1}
    assert a.record_z is not None and a.stored_record is not None
    assert len(a.record_z) * 4 < len(a.stored_record)
    assert orjson.loads(a.stored_record) == a.record()
    walked = {e.abspath: e for e in index.files}
    assert all(walked[s.abspath].abspath is s.abspath for s in index.sessions)  # (one copy of each path)


def test_packed_records_read_back_byte_for_byte() -> None:
    for text in (b"", b"{}\n", b'{"root":"\xc3\xa9","path":"a\\u0000b"}\n', bytes(range(256)) * 40):
        assert unpack_record(pack_record(text)) == text


def test_records_are_held_plain_up_to_the_budget_then_packed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first PLAIN_BYTES of record text are held as they are; past them every record is packed."""
    monkeypatch.setattr(packed, "_plain_left", 1000)
    text = b'{"root":"r","path":"p","items":1,"flags":[],"evidence":[]}' + b" " * 540  # 600 bytes
    first, second = pack_record(text), pack_record(text)
    assert first is text and second != text and len(second) < len(text) // 4  # the budget: 1000 - 600 < 600
    assert unpack_record(first) == unpack_record(second) == text
    assert unpack_record(pack_record(b"\x00" + text)) == b"\x00" + text  # (text that is not an object is packed)


def test_a_cache_of_the_previous_layout_is_rebuilt(many: Path) -> None:
    """A database made by the previous schema (its rows name no snapshot chunk) is rebuilt, never fatal."""
    path = db_path(str(many))
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute(
            "CREATE TABLE files (path TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, size INTEGER, "
            "mtime_ns INTEGER, outcome BLOB NOT NULL, state BLOB, light BLOB, ctime_ns INTEGER)"
        )
        conn.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("schema", str(cache_mod.SCHEMA_VERSION - 1)), ("engine", "x"), ("root", str(many))],
        )
    path.chmod(0o600)
    first = Index([str(many)], workers=1, use_cache=True, light=True).scan()
    assert any("rebuilt" in n for n in first.notices) and not any("unusable" in n for n in first.notices)
    again = Index([str(many)], workers=1, use_cache=True, light=True).scan()
    assert again.result.cache_hits == SESSIONS and not again.notices
