"""The persistent cache: reuse, invalidation matrix, corruption, schema bumps, concurrency."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from musetui.core import cache as cache_mod
from musetui.core.cache import db_path
from musetui.core.index import Index


def _line(sid: str, i: int) -> bytes:
    return (
        orjson.dumps(
            {
                "stream": {"kind": "session", "id": sid},
                "recorded_at": 1790000000000000 + i * 1_000_000,
                "payload": {
                    "kind": "run",
                    "event": {"kind": "assistant_message_committed", "message_id": f"m{i}", "text": "t"},
                },
            }
        )
        + b"\n"
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for sid in ("A", "B", "C"):
        d = root / "sessions" / sid
        d.mkdir(parents=True)
        (d / "session.jsonl").write_bytes(b"".join(_line(sid, i) for i in range(5)))
    return root


def _scan(root: Path) -> Index:
    return Index([str(root)], workers=1, use_cache=True).scan()


def _items(index: Index) -> dict[str, int]:
    return {s.session_id or "": s.items for s in index.sessions}


def test_cache_lives_in_the_cache_dir_not_the_tree(tree: Path) -> None:
    _scan(tree)
    p = db_path(str(tree))
    assert p.exists()
    assert str(p).startswith(os.environ["MUSETUI_CACHE_DIR"])
    assert not any(f.suffix.startswith(".sqlite") for f in tree.rglob("*"))


def test_unchanged_files_are_not_read(tree: Path) -> None:
    first = _scan(tree)
    assert (first.result.cache_hits, first.result.scanned_files) == (0, 3)
    second = _scan(tree)
    assert (second.result.cache_hits, second.result.scanned_files) == (3, 0)
    assert [s.record() for s in second.sorted_sessions()] == [s.record() for s in first.sorted_sessions()]


def test_invalidation_matrix(tree: Path) -> None:
    _scan(tree)
    a = tree / "sessions/A/session.jsonl"
    b = tree / "sessions/B/session.jsonl"
    c = tree / "sessions/C/session.jsonl"
    # append
    with open(a, "ab") as f:
        f.write(_line("A", 5))
    # truncate (size shrinks)
    b.write_bytes(_line("B", 0))
    # touch without change
    st = c.stat()
    os.utime(c, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    idx = _scan(tree)
    assert _items(idx) == {"A": 6, "B": 1, "C": 5}
    assert (idx.result.resumed, idx.result.scanned_files, idx.result.cache_hits) == (1, 2, 0)
    # replace (new inode, same size and mtime)
    data = c.read_bytes()
    st = c.stat()
    tmp = c.with_suffix(".tmp")
    tmp.write_bytes(data.replace(b'"t"', b'"u"'))
    os.replace(tmp, c)
    os.utime(c, ns=(st.st_atime_ns, st.st_mtime_ns))
    idx = _scan(tree)
    assert idx.result.scanned_files == 1 and idx.result.cache_hits == 2
    # delete
    a.unlink()
    idx = _scan(tree)
    assert _items(idx) == {"B": 1, "C": 5}
    with sqlite3.connect(db_path(str(tree))) as conn:
        paths = [r[0] for r in conn.execute("SELECT path FROM files")]
    assert str(a) not in paths and len(paths) == 2


def test_corrupt_database_is_rebuilt(tree: Path) -> None:
    _scan(tree)
    p = db_path(str(tree))
    for suffix in ("-wal", "-shm"):
        Path(str(p) + suffix).unlink(missing_ok=True)
    p.write_bytes(b"this is not a database" * 100)
    idx = _scan(tree)
    assert _items(idx) == {"A": 5, "B": 5, "C": 5}
    assert any("rebuilt" in n for n in idx.notices)
    assert _scan(tree).result.cache_hits == 3


def test_damaged_row_is_rescanned(tree: Path) -> None:
    _scan(tree)
    with sqlite3.connect(db_path(str(tree))) as conn:
        conn.execute("UPDATE files SET outcome = x'00ff00'")
    idx = _scan(tree)
    assert idx.result.scanned_files == 3 and _items(idx) == {"A": 5, "B": 5, "C": 5}


def test_schema_bump_rebuilds(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _scan(tree)
    monkeypatch.setattr(cache_mod, "SCHEMA_VERSION", cache_mod.SCHEMA_VERSION + 1)
    idx = _scan(tree)
    assert idx.result.scanned_files == 3
    assert any("schema" in n for n in idx.notices)
    assert _scan(tree).result.cache_hits == 3


def test_catalogue_change_invalidates(tree: Path) -> None:
    _scan(tree)
    cfg = Path(os.environ["MUSETUI_CONFIG_DIR"])
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "catalogue.toml").write_text("")
    idx = _scan(tree)
    assert idx.result.scanned_files == 3


def test_no_cache_bypasses_it(tree: Path) -> None:
    Index([str(tree)], workers=1, use_cache=False).scan()
    assert not db_path(str(tree)).exists()


def test_concurrent_processes(tree: Path) -> None:
    for i in range(40):
        d = tree / "sessions" / f"X{i}"
        d.mkdir()
        (d / "session.jsonl").write_bytes(b"".join(_line(f"X{i}", j) for j in range(50)))
    cmd = [sys.executable, "-m", "musetui", "scan", "--json", str(tree)]
    env = dict(os.environ)
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    records = [[json.loads(x) for x in o[0].splitlines()] for o in outs]
    assert all(r == records[0] for r in records) and len(records[0]) == 43
    assert _scan(tree).result.cache_hits == 43


def test_append_resumes_from_the_last_line(tree: Path) -> None:
    a = tree / "sessions/A/session.jsonl"
    _scan(tree)
    before = a.stat().st_size
    extra = _line("A", 5) + _line("A", 6)
    with open(a, "ab") as f:
        f.write(extra)
    idx = _scan(tree)
    assert idx.result.resumed == 1 and idx.result.scanned_files == 0 and idx.result.cache_hits == 2
    assert idx.result.resumed_bytes == len(extra)
    (s,) = [x for x in idx.sessions if x.session_id == "A"]
    assert s.items == 7 and s.read_bytes == before + len(extra)
    # The resumed verdict equals a full rescan.
    full = Index([str(tree)], workers=1, use_cache=False).scan()
    assert [x.record() for x in idx.sorted_sessions()] == [x.record() for x in full.sorted_sessions()]


def test_resume_matches_full_scan_on_real_shapes(tmp_path: Path, sample_dir: Path) -> None:
    import shutil

    root = tmp_path / "tree"
    shutil.copytree(sample_dir, root)
    # Cut every JSONL file at a line boundary in the middle, scan, then restore the tail.
    tails = {}
    for p in root.rglob("*.jsonl"):
        data = p.read_bytes()
        lines = data.splitlines(keepends=True)
        if len(lines) < 4:
            continue
        head = b"".join(lines[: len(lines) // 2])
        tails[p] = data[len(head) :]
        p.write_bytes(head)
    _scan(root)
    for p, tail in tails.items():
        with open(p, "ab") as f:
            f.write(tail)
    idx = _scan(root)
    assert idx.result.resumed == len(tails) and idx.result.scanned_files == 0
    full = Index([str(root)], workers=1, use_cache=False).scan()
    got = [x.record() for x in idx.sorted_sessions()]
    want = [x.record() for x in full.sorted_sessions()]
    for g, w in zip(got, want, strict=True):
        g_fields = {k: v for k, v in g.items() if k != "evidence"}
        w_fields = {k: v for k, v in w.items() if k != "evidence"}
        assert g_fields == w_fields, g["path"]
        assert [(e["detector"], e["value"], e["line"]) for e in g["evidence"]] == [
            (e["detector"], e["value"], e["line"]) for e in w["evidence"]
        ], g["path"]


def test_refresh_follows_a_growing_session(tree: Path) -> None:
    idx = Index([str(tree)], workers=1, follow=True).scan()
    a = tree / "sessions/A/session.jsonl"
    assert idx.refresh().added == []  # nothing changed
    with open(a, "ab") as f:
        f.write(_line("A", 5))
    r = idx.refresh()
    assert [s.session_id for s in r.changed] == ["A"] and r.resumed == 1 and r.rescanned == 0
    with open(a, "ab") as f:
        f.write(_line("A", 6))
    r = idx.refresh()
    assert r.resumed == 1 and r.bytes_read == len(_line("A", 6))
    assert {s.session_id: s.items for s in idx.sessions}["A"] == 7
    d = tree / "sessions" / "D"
    d.mkdir()
    (d / "session.jsonl").write_bytes(_line("D", 0))
    r = idx.refresh()
    assert [s.session_id for s in r.added] == ["D"]
    (d / "session.jsonl").unlink()
    r = idx.refresh()
    assert [s.session_id for s in r.removed] == ["D"]


def test_an_old_file_that_starts_growing_resumes(tree: Path) -> None:
    a = tree / "sessions/A/session.jsonl"
    day_ago = a.stat().st_mtime_ns - 86_400 * 10**9
    for p in tree.rglob("session.jsonl"):
        os.utime(p, ns=(day_ago, day_ago))
    _scan(tree)
    with sqlite3.connect(db_path(str(tree))) as conn:
        assert conn.execute("SELECT count(*) FROM files WHERE state IS NOT NULL").fetchone()[0] == 3
    for i in (5, 6):
        with open(a, "ab") as f:
            f.write(_line("A", i))
        idx = _scan(tree)
        assert (idx.result.resumed, idx.result.scanned_files, idx.result.resumed_bytes) == (1, 0, len(_line("A", i)))


def test_refresh_keeps_session_objects(tree: Path) -> None:
    idx = Index([str(tree)], workers=1, follow=True).scan()
    (a,) = [s for s in idx.sessions if s.session_id == "A"]
    with open(tree / "sessions/A/session.jsonl", "ab") as f:
        f.write(_line("A", 5))
    r = idx.refresh()
    assert r.changed == [a] and a.items == 6 and a in idx.sessions


def test_light_snapshot_tracks_changes(tree: Path) -> None:
    def light() -> list[dict[str, object]]:
        idx = Index([str(tree)], workers=1, use_cache=True, light=True).scan()
        return [s.record() for s in idx.sorted_sessions()]

    def full() -> list[dict[str, object]]:
        return [s.record() for s in Index([str(tree)], workers=1).scan().sorted_sessions()]

    assert light() == full()
    assert light() == full()  # from the snapshot
    with open(tree / "sessions/A/session.jsonl", "ab") as f:
        f.write(_line("A", 5))
    (tree / "sessions/B/session.jsonl").unlink()
    d = tree / "sessions" / "E"
    d.mkdir()
    (d / "session.jsonl").write_bytes(_line("E", 0))
    assert light() == full()
    got = light()
    assert got == full() and {r["session_id"] for r in got} == {"A", "C", "E"}


def _cli_scan(root: Path, *extra: str) -> tuple[bytes, str]:
    r = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--json", "--stats", *extra, str(root)],
        capture_output=True,
        env=dict(os.environ),
        check=True,
    )
    return r.stdout, r.stderr.decode()


def test_scan_output_is_reused_only_while_nothing_changed(tree: Path) -> None:
    bad = tree / "sessions" / "D" / "session.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(_line("D", 0) + b'{"stream": \n' + _line("D", 2))
    out1, err1 = _cli_scan(tree)
    assert "4 scanned" in err1 and "malformed" in err1
    out2, err2 = _cli_scan(tree)
    assert "stored output reused" in err2 and out2 == out1
    # The stored diagnostics are replayed, exactly.
    assert [x for x in err2.splitlines() if "malformed" in x] == [x for x in err1.splitlines() if "malformed" in x]
    assert _cli_scan(tree, "--no-cache")[0] == out1
    a = tree / "sessions/A/session.jsonl"
    changes = [
        (lambda: a.open("ab").write(_line("A", 5)), True),  # append
        (lambda: (tree / "sessions/B/session.jsonl").unlink(), True),  # delete
        (lambda: os.utime(tree / "sessions/C/session.jsonl", ns=(0, 10**18)), False),  # touch: same records
        (lambda: (tree / "sessions/E").mkdir() or (tree / "sessions/E/session.jsonl").write_bytes(_line("E", 0)), True),
    ]
    previous = out1
    for change, differs in changes:
        change()
        out, err = _cli_scan(tree)
        assert "stored output reused" not in err
        assert (out != previous) == differs and out == _cli_scan(tree, "--no-cache")[0]
        again, err = _cli_scan(tree)
        assert "stored output reused" in err and again == out
        previous = out
    ids = [orjson.loads(x)["session_id"] for x in previous.splitlines()]
    assert ids == ["A", "C", "D", "E"]


def test_cache_info_describes_each_database_without_writing(tree: Path) -> None:
    _cli_scan(tree)
    db = db_path(str(tree))
    before = (db.stat().st_mtime_ns, db.stat().st_size)
    run = [sys.executable, "-m", "musetui", "cache"]
    info = subprocess.run([*run, "info"], capture_output=True, text=True, check=True, env=dict(os.environ)).stdout
    assert f"root: {tree}" in info
    assert f"schema {cache_mod.SCHEMA_VERSION}; 3 files, 3 resumable; 1 stored scan output(s)" in info
    assert (db.stat().st_mtime_ns, db.stat().st_size) == before
    other = tree.parent / "other"
    shutil.copytree(tree, other)
    _cli_scan(other)
    env = dict(os.environ)
    only = subprocess.run([*run, "info", str(other)], capture_output=True, text=True, check=True, env=env).stdout
    assert "databases: 1" in only and f"root: {other}" in only
    cleared = subprocess.run([*run, "clear", str(other)], capture_output=True, text=True, check=True, env=env).stdout
    assert cleared.startswith("removed ") and not db_path(str(other)).exists() and db.exists()
    cleared = subprocess.run([*run, "clear"], capture_output=True, text=True, check=True, env=env).stdout
    assert cleared.startswith("removed ") and not db.exists()


def test_head_start_yields_rows_before_the_walk_ends(tree: Path) -> None:
    for i in range(6):
        d = tree / "sessions" / f"H{i}"
        d.mkdir()
        (d / "session.jsonl").write_bytes(b"".join(_line(f"H{i}", j) for j in range(3)))
    idx = Index([str(tree)], workers=1, head_start=2)
    seen_at_first = None
    for _outcome, progress in idx.iter_scan():
        if seen_at_first is None:
            seen_at_first = progress.total  # files walked so far
    assert seen_at_first == 2  # the walk had found only two files when the first row came
    idx.finalize()
    plain = Index([str(tree)], workers=1).scan()
    assert [s.record() for s in idx.sorted_sessions()] == [s.record() for s in plain.sorted_sessions()]
    assert len(idx.files) == 9


def test_cache_hits_stream_with_the_walk_and_a_cancelled_scan_leaves_the_cache_usable(tree: Path) -> None:
    _scan(tree)
    idx = Index([str(tree)], workers=1, use_cache=True)
    stream = idx.iter_scan(cancelled=lambda: True)
    _outcome, progress = next(stream)
    assert progress.total == 1  # yielded from the cache as soon as the walk reached it
    assert list(stream) == []  # cancelled: the scan stops, closing its database
    again = _scan(tree)
    assert (again.result.cache_hits, again.result.scanned_files) == (3, 0)


def test_a_locked_database_is_waited_for_then_skipped_with_a_notice(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _scan(tree)
    with open(tree / "sessions/A/session.jsonl", "ab") as f:
        f.write(_line("A", 5))
    monkeypatch.setattr(cache_mod, "LOCK_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(db_path(str(tree)), isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of writing
        idx = _scan(tree)
        assert _items(idx) == {"A": 6, "B": 5, "C": 5}  # the scan goes on, from the disk
        assert any(n.startswith("cache not updated") for n in idx.notices), idx.notices
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    after = _scan(tree)  # the lock is gone: the change is stored now
    assert _items(after) == {"A": 6, "B": 5, "C": 5} and after.result.resumed == 1
    assert _scan(tree).result.cache_hits == 3


def test_a_change_rewrites_only_its_snapshot_chunk(tree: Path) -> None:
    def light_scan() -> list[dict[str, object]]:
        return [s.record() for s in Index([str(tree)], workers=1, use_cache=True, light=True).scan().sorted_sessions()]

    def chunks() -> dict[int, bytes]:
        with sqlite3.connect(db_path(str(tree))) as conn:
            return dict(conn.execute("SELECT chunk, blob FROM snapshot").fetchall())

    light_scan()
    before = chunks()
    assert len(before) == cache_mod.SNAPSHOT_CHUNKS
    a = tree / "sessions/A/session.jsonl"
    with open(a, "ab") as f:
        f.write(_line("A", 5))
    got = light_scan()
    after = chunks()
    assert [c for c in before if before[c] != after[c]] == [cache_mod.snapshot_chunk(str(a))]
    assert got == [s.record() for s in Index([str(tree)], workers=1).scan().sorted_sessions()]


def test_outcomes_and_states_pickle_by_fields_and_round_trip(sample_dir: Path) -> None:
    """The cache and worker processes carry these; they pickle as (class, field values)."""
    import pickle

    from musetui.core.model import Evidence, SessionSummary
    from musetui.core.scanner import Outcome, ScanState, scan_file

    path = next(p for p in sorted(sample_dir.rglob("session.jsonl")) if b"gpt_responses_v1" in p.read_bytes())
    out = scan_file(str(path), path.name, str(sample_dir), want_state=True)
    assert out.summary is not None and out.summary.attribution.evidence and isinstance(out.state, ScanState)
    for obj in (out, out.state, out.summary, out.summary.attribution.evidence[0]):
        cls, args = obj.__reduce__()
        assert cls is type(obj) and len(args) == len(type(obj).__slots__)
        again = pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
        assert again == obj
    assert isinstance(out.summary, SessionSummary) and isinstance(out.summary.attribution.evidence[0], Evidence)
    assert isinstance(out, Outcome)


def test_light_outcome_keeps_every_field_it_carries(sample_dir: Path) -> None:
    """A light outcome (what the cache and the workers of ``scan --json`` hand back) keeps each summary field but the heavy ones."""
    import dataclasses

    from musetui.core.index import light_blob, outcome_from_light
    from musetui.core.scanner import scan_file
    from musetui.core.segment_read import segments_of

    dropped = {"malformed", "notes", "attribution", "record_z", "segments"}  # (segments: in the stored record)
    checked = 0
    for p in sorted(sample_dir.rglob("*.jsonl")):
        out = scan_file(str(p), p.relative_to(sample_dir).as_posix(), str(sample_dir))
        if out.summary is None:
            continue
        light = outcome_from_light(light_blob(out))
        assert light is not None and light.summary is not None
        s, ls = out.summary, light.summary
        for f in dataclasses.fields(s):
            if f.name not in dropped:
                assert getattr(ls, f.name) == getattr(s, f.name), (p, f.name)
        assert [g.record() for g in segments_of(ls)] == [g.record() for g in s.segments] and s.segments
        a, la = s.attribution, ls.attribution
        assert (la.provider, la.host, la.confidence, la.via, la.flags, la.summary, la.evidence) == (
            a.provider,
            a.host,
            a.confidence,
            a.via,
            a.flags,
            a.summary,
            [],
        )
        assert ls.stored_record is not None and orjson.loads(ls.stored_record) == s.record()
        assert ls.record() == s.record()
        checked += 1
    assert checked > 5


def test_workers_filling_the_cache_show_what_it_gives_back(sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A light scan by worker processes, filling the cache, shows what reading it back shows, and --no-cache too.

    (A worker sends each file's light form beside the blobs the cache stores: the parent
    shows that form, and never reads back the blob it was just given.)
    """
    from musetui.core import index as index_mod

    monkeypatch.setattr(index_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(index_mod, "CHUNK_FILES", 4)

    def records(use_cache: bool) -> tuple[list[bytes | None], Index]:
        idx = Index([str(sample_dir)], workers=2, use_cache=use_cache, light=True).scan()
        return [s.stored_record for s in idx.sorted_sessions()], idx

    cold, filled = records(True)
    warm, read_back = records(True)
    plain, _ = records(False)
    assert filled.result.scanned_files > 8 and filled.result.cache_hits == 0
    assert read_back.result.cache_hits == len(warm) and read_back.result.scanned_files == 0
    assert cold == warm == plain and all(cold)
