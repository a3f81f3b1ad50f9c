"""Issue 11: each hostile case that once ended a scan, lost data or trusted a corrupt cache.

Every test builds the hostile input beside known-good sessions and checks that those
still load, and that the hostile file gets a located diagnostic.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sqlite3
import time
from pathlib import Path

import orjson
import pytest

from musetui.cli import main
from musetui.core import sources
from musetui.core.diagnostics import escape_name, group, json_name, stderr_lines, unescape_name
from musetui.core.index import Index
from musetui.core.model import Diagnostic
from musetui.core.session import open_session

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"


def _muse_line(sid: str, i: int, **extra: object) -> bytes:
    obj: dict[str, object] = {
        "stream": {"kind": "session", "id": sid},
        "recorded_at": 1790000000000000 + i * 1_000_000,
        "payload": {
            "kind": "run",
            "event": {"kind": "assistant_message_committed", "message_id": f"m{i}", "text": "hi"},
        },
    }
    obj.update(extra)
    return orjson.dumps(obj) + b"\n"


def _good(tmp: Path, name: str = "good", n: int = 3) -> Path:
    d = tmp / "sessions" / name
    d.mkdir(parents=True, exist_ok=True)
    p = d / "session.jsonl"
    p.write_bytes(b"".join(_muse_line(name, i) for i in range(n)))
    return p


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _records(out: str) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in out.splitlines()]


# -- 1. the per-file boundary -----------------------------------------------------------------


def test_a_file_that_makes_the_scanner_raise_is_one_diagnostic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A planted file trips a bug (injected into format sniffing): it alone is lost, with its line."""
    _good(tmp_path, "a")
    _good(tmp_path, "b")
    (tmp_path / "boom.jsonl").write_bytes(b'{"x":1}\n{"boom":true}\n{"x":2}\n')
    real_sniff = sources.registry.sniff

    def sniff(obj: object) -> tuple[str, str] | None:
        if sources.base.dig(obj, "boom") is not None:
            raise RuntimeError("planted bug")
        return real_sniff(obj)

    monkeypatch.setattr(sources.registry, "sniff", sniff)  # (what the scanner's Sniffer asks)
    index = Index([str(tmp_path)], workers=1).scan()
    assert sorted(s.path for s in index.sessions) == ["sessions/a/session.jsonl", "sessions/b/session.jsonl"]
    (diag,) = [d for d in index.diagnostics if d.path == "boom.jsonl"]
    assert diag.message == "internal error: RuntimeError: planted bug" and diag.line == 2
    code, out, err = _run(capsys, "scan", str(tmp_path), "--json", "--no-cache")
    assert code == 0 and len(_records(out)) == 2
    assert "boom.jsonl:2: internal error: RuntimeError: planted bug" in err and "Traceback" not in err


def test_an_item_builder_bug_falls_back_to_generic_items(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _good(tmp_path, "a")
    (s,) = Index([str(tmp_path)], workers=1).scan().sessions

    def broken(records: object) -> object:
        raise KeyError("planted")

    broken_muse = dataclasses.replace(sources.muse.SPEC, items=broken)
    monkeypatch.setitem(sources.registry._BY_NAME, "muse", broken_muse)  # (the registry's entry)
    opened = open_session(s)
    assert len(opened.items) == 3 and opened.items[0].line == 1
    assert [d.message for d in opened.diagnostics] == ["internal error: KeyError: 'planted'"]
    assert p.exists()


# -- 2. root causes ------------------------------------------------------------------------------


def test_unknown_jsonl_does_not_reuse_a_live_parser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _good(tmp_path)
    (tmp_path / "x.jsonl").write_bytes(b'{"a":1}\n{"a":2}\n')
    (tmp_path / "y.jsonl").write_bytes(b'{"a":1}\n{"a":2}\nnot json\n')
    code, out, _err = _run(capsys, "scan", str(tmp_path), "--json", "--no-cache")
    recs = {r["path"]: r for r in _records(out)}
    assert code == 0 and set(recs) == {"sessions/good/session.jsonl", "x.jsonl", "y.jsonl"}
    assert (recs["x.jsonl"]["items"], recs["x.jsonl"]["malformed_lines"]) == (2, 0)
    assert (recs["y.jsonl"]["items"], recs["y.jsonl"]["malformed_lines"]) == (2, 1)
    code, out, _ = _run(capsys, "show", str(tmp_path / "x.jsonl"), "--line", "2")
    assert code == 0 and "line 2" in out


def test_real_codex_exec_stream_scans_and_shows(
    real_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = real_dir / "jnarowski__agentcmd" / "agent__research__codex__codex-samples__stream-output-5.jsonl"
    shutil.copy(src, tmp_path / "stream.jsonl")
    _good(tmp_path)
    code, out, _ = _run(capsys, "scan", str(tmp_path), "--json", "--no-cache")
    recs = {r["path"]: r for r in _records(out)}
    assert code == 0 and len(recs) == 2 and recs["stream.jsonl"]["items"] == 8
    assert recs["stream.jsonl"]["malformed_lines"] == 0
    code, out, _ = _run(capsys, "show", str(tmp_path / "stream.jsonl"), "--line", "1")
    assert code == 0 and "thread.started" in out


def test_type_that_is_a_list_is_no_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _good(tmp_path)
    schema = {"type": ["object", "null"], "payload": 1, "timestamp": 2, "properties": {"a": {"type": "string"}}}
    (tmp_path / "schema.json").write_bytes(orjson.dumps(schema) + b"\n")
    (tmp_path / "schemas.jsonl").write_bytes(orjson.dumps(schema) + b"\n" + orjson.dumps({"type": {"x": 1}}) + b"\n")
    code, out, err = _run(capsys, "scan", str(tmp_path), "--json", "--no-cache")
    assert code == 0 and len(_records(out)) == 3 and "internal error" not in err


def test_codex_record_whose_type_is_a_list_keeps_its_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rollout line with ``"type": []`` (found by the pipeline property test) is an item, not a lost session."""
    meta = {
        "timestamp": "2025-01-01T00:00:00Z",
        "type": "session_meta",
        "payload": {"id": "019c8a53-a0dd-7130-bcd7-95445d84846a"},
    }
    odd = [
        {"timestamp": "2025-01-01T00:00:01Z", "type": [], "payload": {"type": []}},
        {"timestamp": "2025-01-01T00:00:02Z", "type": "response_item", "payload": {"type": [], "x": 1}},
        {"timestamp": "2025-01-01T00:00:03Z", "type": "item.completed", "item": {"type": [], "id": "i"}},
    ]
    (tmp_path / "rollout.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [meta, *odd]))
    code, out, err = _run(capsys, "scan", str(tmp_path), "--json", "--no-cache")
    (rec,) = _records(out)
    assert code == 0 and "internal error" not in err, err
    assert (rec["format"], rec["session_id"], rec["items"]) == ("codex", "019c8a53-a0dd-7130-bcd7-95445d84846a", 4)


@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("value", [{"a": 1}, [1, 2]])
def test_muse_recorded_at_object_or_array(
    tmp_path: Path, cache: bool, value: object, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [_muse_line("S", i) for i in range(30)]
    lines[1] = _muse_line("S", 1, recorded_at=value)
    _good(tmp_path, "S").write_bytes(b"".join(lines))
    argv = ["scan", str(tmp_path), "--json"] + ([] if cache else ["--no-cache"])
    code, out, err = _run(capsys, *argv)
    (rec,) = _records(out)
    assert code == 0 and (rec["items"], rec["malformed_lines"]) == (30, 0), err
    if cache:  # and again, from the cache
        code, out2, _ = _run(capsys, *argv)
        assert out2 == out


def test_responses_output_that_is_a_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "resp.json").write_bytes(
        orjson.dumps({"id": "resp_1", "object": "response", "model": "gpt-5", "output": 5})
    )
    code, out, err = _run(capsys, "show", str(tmp_path / "resp.json"), "--line", "1")
    assert code == 0 and "resp_1" in out, err


@pytest.mark.parametrize("kind", ["responses", "generic", "muse"])
def test_deep_nesting_opens_and_shows(tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    deep = b'"bottom"'
    for i in range(1000):  # orjson and simdjson accept 1,024 levels; Python recursion stops near 1,000
        deep = b'{"content":' + deep + b"}" if i % 2 else b"[" + deep + b"]"
    if kind == "responses":
        body = (
            b'{"id":"resp_2","object":"response","model":"gpt-5","output":[{"type":"function_call","arguments":'
            + deep
            + b"}]}\n"
        )
    elif kind == "generic":
        body = b'{"type":"message","content":' + deep + b'}\n{"type":"message","content":"hi"}\n'
    else:
        head, tail = _muse_line("S", 0).split(b'"hi"')
        body = _muse_line("S", 1) + head + deep + tail
    (tmp_path / "deep.jsonl").write_bytes(body)
    index = Index([str(tmp_path)], workers=1).scan()
    (s,) = index.sessions
    assert s.malformed_lines == 0
    opened = open_session(s)
    assert opened.diagnostics == [] and opened.items
    line = opened.items[-1].line
    code, out, err = _run(capsys, "show", str(tmp_path / "deep.jsonl"), "--line", str(line))
    assert code == 0 and "Traceback" not in err and out


def test_symlinks_never_leave_the_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    _good(root)
    sibling = tmp_path / "sibling"
    _good(sibling, "other")
    (root / "fs").symlink_to("/")
    (root / "up").symlink_to("..")
    (root / "sib").symlink_to(sibling)
    (root / "alias").symlink_to(root / "sessions")
    t0 = time.monotonic()
    code, out, err = _run(capsys, "scan", str(root), "--json", "--no-cache")
    elapsed = time.monotonic() - t0
    assert code == 0 and elapsed < 5.0  # a guard against walking /, not a benchmark (0.1 s here)
    assert [r["path"] for r in _records(out)] == ["sessions/good/session.jsonl"]
    assert "fs: skipped: symlink leaves the root -> /" in err
    assert f"sib: skipped: symlink leaves the root -> {sibling}" in err
    assert "alias: skipped: symlink alias of sessions (read under its real path)" in err
    (root / "fs").unlink()  # followed, it would walk the whole file system
    code, out, err = _run(capsys, "scan", str(root), "--json", "--no-cache", "--follow-symlinks")
    paths = [r["path"] for r in _records(out)]
    assert "sib/sessions/other/session.jsonl" in paths and "up/sibling/sessions/other/session.jsonl" not in paths
    assert len(paths) == len(set(paths))
    code, out, err = _run(capsys, "search", str(root), "hi", "--json")
    assert {r["path"] for r in _records(out)} == {"sessions/good/session.jsonl"}


def test_fs_root_symlink_search_is_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _good(tmp_path)
    (tmp_path / "fs").symlink_to("/")
    t0 = time.monotonic()
    code, _out, _err = _run(capsys, "search", str(tmp_path), "nothing-matches-this", "--json")
    assert code == 1 and time.monotonic() - t0 < 2.0


def test_non_utf8_names_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # the table in a pipe: every value whole
    _good(tmp_path)
    bad_dir = os.fsdecode(b"dir\xfe")
    (tmp_path / bad_dir).mkdir()
    name = os.fsdecode(b"bad\xff.jsonl")
    (tmp_path / bad_dir / name).write_bytes(_muse_line("B", 0) + _muse_line("B", 1))
    for extra in ([], ["--no-cache"], []):  # cache cold, off, warm
        code, out, err = _run(capsys, "scan", str(tmp_path), "--json", *extra)
        recs = _records(out)
        assert code == 0 and len(recs) == 2, err
        assert "dir\\xfe/bad\\xff.jsonl" in {r["path"] for r in recs}
    code, out, _ = _run(capsys, "scan", str(tmp_path))
    assert out.splitlines()[0] == f"root: {tmp_path}"  # the root once, then paths under it
    shown = f"{tmp_path}/" + next(ln for ln in out.splitlines() if "bad" in ln).split("  ")[-1].strip()
    assert shown == f"{tmp_path}/dir\\xfe/bad\\xff.jsonl"
    code, out, _ = _run(capsys, "show", shown)
    assert code == 0 and "`B`" in out
    code, out, _ = _run(capsys, "search", str(tmp_path), "hi", "--json")
    assert code == 0 and "dir\\xfe/bad\\xff.jsonl" in {r["path"] for r in _records(out)}
    code, out, _ = _run(capsys, "search", str(tmp_path), "hi")
    assert f"{tmp_path}/dir\\xfe/bad\\xff.jsonl:1:" in out


def test_control_and_bidi_characters_in_names_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    _good(tmp_path)
    name = "evil\nopenai  1.00  forged\u202e.jsonl"
    (tmp_path / name).write_bytes(_muse_line("E", 0) + b"garbage\n")
    code, out, err = _run(capsys, "scan", str(tmp_path), "--no-cache")
    assert len(out.splitlines()) == 4  # root, header and two rows: the name forged no row
    assert "evil\\nopenai  1.00  forged\\u202e.jsonl" in out
    assert "\u202e" not in out + err and "evil\\nopenai" in err
    code, out, _ = _run(capsys, "search", str(tmp_path), "hi")
    assert len(out.splitlines()) == 4 and "\u202e" not in out
    escaped = escape_name(str(tmp_path / name))
    code, out, _ = _run(capsys, "show", escaped)
    assert code == 0 and "`E`" in out
    assert unescape_name(escape_name(name)) == name


@pytest.mark.parametrize(
    "name", ["plain.jsonl", "a\\b", "x\ny", os.fsdecode(b"\xff\xfe"), "\u200b\u2066", "\x1b[31m", "é😀"]
)
def test_escape_name_round_trips(name: str) -> None:
    e = escape_name(name)
    assert unescape_name(e) == name
    assert e.isprintable() and "\u200b" not in e
    assert json_name(name).encode("utf-8")


def test_binary_jsonl_is_one_stderr_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _good(tmp_path)
    (tmp_path / "blob.jsonl").write_bytes(b"".join(bytes([0, 11 + i % 200, 7]) + b"\n" for i in range(494)))
    (tmp_path / "noisy.jsonl").write_bytes(_muse_line("N", 0) + b"".join(b"{broken %d\n" % i for i in range(412)))
    (tmp_path / "quiet.jsonl").write_bytes(_muse_line("Q", 0) + b"{oops\n")
    diag_file = tmp_path.parent / "diags.jsonl"
    _code, _out, err = _run(capsys, "scan", str(tmp_path), "--json", "--no-cache", "--diagnostics", str(diag_file))
    lines = err.splitlines()
    assert "musetui: blob.jsonl: binary file: 494 lines" in lines
    (noisy,) = [ln for ln in lines if "noisy.jsonl" in ln]
    assert noisy.startswith("musetui: noisy.jsonl: 412 malformed lines (first at 2: invalid JSON")
    assert "musetui: quiet.jsonl:2: malformed: invalid JSON (truncated or broken structure)" in lines
    assert len(lines) == 3
    written = [orjson.loads(x) for x in diag_file.read_bytes().splitlines()]
    assert {"root", "path", "line", "message"} == set(written[0])
    assert sum(1 for d in written if d["path"] == "quiet.jsonl") == 1
    assert sum(1 for d in written if d["path"] == "noisy.jsonl") >= 200


def test_group_api() -> None:
    diags = [
        Diagnostic("a", 3, "malformed: invalid JSON (x)"),
        Diagnostic("a", 4, "malformed: invalid UTF-8"),
        Diagnostic("b", 0, "skipped: FIFO (not opened)"),
        Diagnostic("a", 0, "… 10 more malformed lines"),
    ]
    g = group(diags)
    assert [(x.path, x.kind, x.count, x.first_line) for x in g] == [("a", "malformed", 12, 3), ("b", "other", 1, 0)]
    assert g[0].text() == "a: 12 malformed lines (first at 3: invalid JSON (x))"
    many = [Diagnostic(f"f{i}", 0, "skipped: FIFO (not opened)") for i in range(300)]
    out = stderr_lines(many, limit=200)
    assert len(out) == 201 and out[-1].startswith("… 100 more")


def test_parent_cycles_stay_reachable(tmp_path: Path) -> None:
    def codex(sid: str, parent: str | None) -> bytes:
        meta: dict[str, object] = {"id": sid, "timestamp": "2026-01-01T00:00:00Z"}
        if parent:
            meta["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": parent}}}
        return orjson.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": meta}) + b"\n"

    (tmp_path / "a.jsonl").write_bytes(codex("A", "B"))
    (tmp_path / "b.jsonl").write_bytes(codex("B", "A"))
    (tmp_path / "self.jsonl").write_bytes(codex("S", "S"))
    (tmp_path / "c.jsonl").write_bytes(codex("C", "A"))
    index = Index([str(tmp_path)], workers=1).scan()
    reach: set[str] = set()
    stack = list(index.top)
    while stack:
        s = stack.pop()
        assert s.key not in reach
        reach.add(s.key)
        stack.extend(index.children.get(s.key, []))
    assert reach == {s.key for s in index.sessions}
    by_id = {s.session_id: s for s in index.sessions}
    assert any(n.startswith("parent cycle") for n in by_id["S"].notes)
    assert not any(n.startswith("orphan") for n in by_id["S"].notes)
    assert any(n.startswith("parent cycle") for n in by_id["A"].notes + by_id["B"].notes)
    assert index.children.get(by_id["A"].key) == [by_id["C"]] or by_id["C"] in index.children.get(by_id["A"].key, [])


def test_big_integers_and_duplicate_keys_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [_muse_line("S", i) for i in range(5)]
    lines[1] = lines[1][:1] + b'"big":123456789012345678901234567890,' + lines[1][1:]
    lines[0] = lines[0][:1] + b'"stream":{"kind":"session","id":"FIRST"},' + lines[0][1:]  # the last "stream" wins
    p = _good(tmp_path, "S")
    p.write_bytes(b"".join(lines))
    index = Index([str(tmp_path)], workers=1).scan()
    (s,) = index.sessions
    assert (s.items, s.malformed_lines) == (5, 0)
    assert len(open_session(s).items) == 5
    assert orjson.loads(lines[0])["stream"]["id"] == "S"
    assert s.session_id == "S"
    _code, out, _ = _run(capsys, "search", str(tmp_path), "hi", "--json")
    assert len(_records(out)) == 5


# -- 3. the cache ------------------------------------------------------------------------------


def _db(tmp: Path) -> Path:
    from musetui.core.cache import db_path

    return db_path(str(tmp))


def test_byte_flips_in_the_cache_are_detected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import random

    shutil.copytree(SAMPLE, tmp_path / "s")
    root = str(tmp_path / "s")
    _, expected, _ = _run(capsys, "scan", root, "--json", "--no-cache")
    _, first, _ = _run(capsys, "scan", root, "--json")
    assert first == expected
    _run(capsys, "scan", root)  # the per-file outcomes too
    db = _db(tmp_path / "s")
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    rng = random.Random(5)
    noticed = 0
    for trial in range(6):
        data = bytearray(db.read_bytes())
        for _ in range(300 if trial % 2 else 40):
            i = rng.randrange(100, len(data))
            data[i] ^= 1 << rng.randrange(8)
        db.write_bytes(bytes(data))
        for suffix in ("-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        code, out, err = _run(capsys, "scan", root, "--json")
        assert code == 0 and out == expected, (trial, err)
        noticed += f"cache for {root} was corrupt: rebuilt" in err
        code, out, err = _run(capsys, "scan", root, "--json")
        assert out == expected
    assert noticed >= 3


def test_cache_path_is_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _good(tmp_path / "t")
    db = _db(tmp_path / "t")
    db.mkdir(parents=True)
    for argv in (
        ["scan", str(tmp_path / "t")],
        ["scan", str(tmp_path / "t"), "--json"],
        ["search", str(tmp_path / "t"), "provider:unknown"],
    ):
        code, out, err = _run(capsys, *argv)
        assert code in (0, 1) and "Traceback" not in err
        assert err.count("unusable") <= 1
    code, out, err = _run(capsys, "scan", str(tmp_path / "t"), "--json")
    assert code == 0 and len(_records(out)) == 1 and "scanning without it" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only directory")
def test_read_only_cache_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _good(tmp_path / "t")
    _run(capsys, "scan", str(tmp_path / "t"), "--json")
    db = _db(tmp_path / "t")
    data = db.read_bytes()
    db.write_bytes(b"\x00" * len(data))  # and corrupt, so that it would have to be removed
    db.parent.chmod(0o500)
    try:
        code, out, err = _run(capsys, "scan", str(tmp_path / "t"), "--json")
        assert code == 0 and len(_records(out)) == 1 and "Traceback" not in err
        assert "scanning without it" in err or "not updated" in err
    finally:
        db.parent.chmod(0o700)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_is_never_served_from_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _good(tmp_path, "a")
    p = _good(tmp_path, "b")
    for argv in (["scan", str(tmp_path), "--json"], ["scan", str(tmp_path)]):
        _run(capsys, *argv)
    p.chmod(0)
    try:
        for argv in (["scan", str(tmp_path), "--json"], ["scan", str(tmp_path)]):
            _code, out, err = _run(capsys, *argv)
            assert "sessions/b/session.jsonl: unreadable: Permission denied" in err
            assert "sessions/b" not in out
    finally:
        p.chmod(0o600)


def test_reads_keep_access_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(SAMPLE, tmp_path / "s")
    t2020 = 1577836800
    files = [p for p in (tmp_path / "s").rglob("*") if p.is_file()]
    for p in files:
        os.utime(p, (t2020, p.stat().st_mtime))
    _run(capsys, "scan", str(tmp_path / "s"), "--json", "--no-cache")
    _run(capsys, "search", str(tmp_path / "s"), "avocado")
    _run(capsys, "show", str(next(p for p in files if p.name == "session.jsonl")), "--line", "1")
    assert {int(p.stat().st_atime) for p in files} == {t2020}


# -- as another user (when the tests run as root, the permission cases run as nobody) -------------


def _as_user(argv: list[str], cache: Path) -> tuple[int, str, str]:
    """Run the command line as ``nobody`` (from root) or as ourselves, with its own cache dir."""
    import subprocess
    import sys

    env = dict(os.environ, MUSETUI_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))

    def drop() -> None:
        if os.geteuid() == 0:
            os.setgid(65534)
            os.setuid(65534)

    try:
        r = subprocess.run(
            [sys.executable, "-m", "musetui", *argv],
            capture_output=True,
            text=True,
            env=env,
            preexec_fn=drop,
            timeout=120,
        )
    except PermissionError as exc:
        pytest.skip(f"running as root, and user nobody cannot run this Python ({exc})")
    if os.geteuid() == 0 and "No module named" in r.stderr:
        pytest.skip("running as root, and user nobody cannot import this checkout")
    return r.returncode, r.stdout, r.stderr


@pytest.fixture
def shared_tmp() -> object:
    """A directory another user can use (pytest's own tmp dirs are private to root)."""
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="musetui-perm-"))
    d.chmod(0o777)
    yield d
    for p in [d, *d.rglob("*")]:
        with contextlib.suppress(OSError):
            p.chmod(0o777)
    shutil.rmtree(d, ignore_errors=True)


def _open_to_all(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        p.chmod(0o777 if p.is_dir() else 0o666)


def test_unreadable_file_is_never_served_from_the_cache_as_a_user(shared_tmp: Path) -> None:
    tree = shared_tmp / "t"
    _good(tree, "a")
    p = _good(tree, "b")
    cache = shared_tmp / "cache"
    cache.mkdir()
    _open_to_all(shared_tmp)
    for argv in (["scan", str(tree), "--json"], ["scan", str(tree)]):
        code, out, err = _as_user(argv, cache)
        assert code == 0 and "sessions/b" in out, err
    p.chmod(0)
    for argv in (["scan", str(tree), "--json"], ["scan", str(tree)]):
        code, out, err = _as_user(argv, cache)
        assert "sessions/b/session.jsonl: unreadable: Permission denied" in err
        assert "sessions/b" not in out and "sessions/a" in out


def test_read_only_cache_directory_as_a_user(shared_tmp: Path) -> None:
    tree = shared_tmp / "t"
    _good(tree)
    cache = shared_tmp / "cache"
    cache.mkdir()
    _open_to_all(shared_tmp)
    code, expected, err = _as_user(["scan", str(tree), "--json"], cache)
    assert code == 0
    for db in cache.glob("index-*.sqlite3"):
        db.write_bytes(b"\x00" * db.stat().st_size)  # corrupt: it would have to be removed
    for p in cache.iterdir():
        p.chmod(0o444)
    cache.chmod(0o555)
    code, out, err = _as_user(["scan", str(tree), "--json"], cache)
    assert code == 0 and out == expected and "Traceback" not in err
    assert err.count("musetui: cache for") == 1 and "scanning without it" in err


# -- bounded memory --------------------------------------------------------------------------------


def test_windowed_scan_equals_whole_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small windows stand in for a huge file: same records, same diagnostics, same items."""
    from musetui.core import scanner

    shutil.copytree(SAMPLE / "muse-vm", tmp_path / "muse-vm")
    shutil.copytree(SAMPLE / "codex", tmp_path / "codex", dirs_exist_ok=True) if (SAMPLE / "codex").is_dir() else None
    (tmp_path / "tail.jsonl").write_bytes(
        b"".join(_muse_line("T", i) for i in range(50)) + b"{broken\n" + b"x" * 20000 + b"\n"
    )

    def scan() -> tuple[list[bytes], list[str], list[int]]:
        index = Index([str(tmp_path)], workers=1).scan()
        sessions = index.sorted_sessions()
        items = [len(open_session(s).items) for s in sessions]
        return [orjson.dumps(s.record()) for s in sessions], sorted(d.text() for d in index.diagnostics), items

    whole = scan()
    monkeypatch.setattr(scanner, "WINDOW_BYTES", 8192)
    monkeypatch.setattr(scanner, "MAX_LINE_BYTES", 6000)
    import musetui.core.session as session_mod

    monkeypatch.setattr(session_mod, "MAX_LINE_BYTES", 6000)
    windowed = scan()
    assert windowed[0] == whole[0] and windowed[2] == whole[2]
    # Only the 20,000-byte line differs: over the (lowered) line limit in windows, invalid JSON whole.
    assert [d for d in windowed[1] if "tail.jsonl:52:" not in d] == [d for d in whole[1] if "tail.jsonl:52:" not in d]


def test_file_over_the_scan_limit_is_scanned_in_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from musetui.core import scanner

    body = b"".join(_muse_line("L", i) for i in range(400))
    (tmp_path / "big.jsonl").write_bytes(body)
    monkeypatch.setattr(scanner, "WINDOW_BYTES", 4096)
    monkeypatch.setenv("MUSETUI_MAX_FILE_BYTES", str(len(body) // 2))
    index = Index([str(tmp_path)], workers=1).scan()
    (s,) = index.sessions
    assert 0 < s.items < 400 and s.malformed_lines == 0 and s.read_bytes <= len(body) // 2
    (d,) = [d for d in index.diagnostics if "scan limit" in d.message]
    assert d.path == "big.jsonl" and f"file of {len(body):,} bytes exceeds" in d.message


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("MUSETUI_SLOW"), reason="writes a 2 GB sparse file: MUSETUI_SLOW=1 pytest -m slow"
)
def test_two_gigabyte_sparse_file_scans_and_opens_in_bounded_memory(tmp_path: Path) -> None:
    import subprocess
    import sys

    s = tmp_path / "s.jsonl"
    s.write_bytes(b"".join(_muse_line("G", i) for i in range(20)))
    os.truncate(s, 2 * 1024**3)
    zeros = tmp_path / "zeros.jsonl"
    zeros.write_bytes(b"")
    os.truncate(zeros, 2 * 1024**3)
    probe = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    for argv in (["scan", str(tmp_path), "--json", "--no-cache"], ["show", str(s), "--line", "1"]):
        r = subprocess.run(
            [sys.executable, "-c", probe, sys.executable, "-m", "musetui", *argv],
            capture_output=True,
            text=True,
            check=True,
        )
        assert int(r.stdout) <= 300 * 1024, f"{argv[0]}: peak RSS {int(r.stdout) // 1024} MB"


def test_a_file_whose_permissions_changed_is_read_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The cache identity includes the change time: chmod (even as root, who can still read) means a rescan."""
    _good(tmp_path, "a")
    p = _good(tmp_path, "b")
    _run(capsys, "scan", str(tmp_path), "--stats")
    _, _, err = _run(capsys, "scan", str(tmp_path), "--stats")
    assert "2 unchanged" in err and "0 scanned" in err
    p.chmod(0o400)
    _, _, err = _run(capsys, "scan", str(tmp_path), "--stats")
    assert "1 unchanged" in err and "1 scanned" in err


def test_two_roots_each_line_says_its_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _good(one, "x")
    _good(two, "x")
    code, out, _ = _run(capsys, "search", str(one), str(two), "hi", "--json")
    hits = _records(out)
    assert code == 0 and {h["root"] for h in hits} == {str(one), str(two)}
    assert {h["path"] for h in hits} == {"sessions/x/session.jsonl"}
    code, out, _ = _run(capsys, "search", str(one), str(two), "hi")
    starts = {line.split(":", 1)[0] for line in out.splitlines()}
    assert starts == {f"{one}/sessions/x/session.jsonl", f"{two}/sessions/x/session.jsonl"}
    code, out, _ = _run(capsys, "scan", str(one), str(two), "--json", "--no-cache")
    assert sorted((r["root"], r["path"]) for r in _records(out)) == [
        (str(one), "sessions/x/session.jsonl"),
        (str(two), "sessions/x/session.jsonl"),
    ]
    for start in starts:  # what the text output prints, `show` takes as it is
        code, shown, _ = _run(capsys, "show", start, "--line", "1")
        assert code == 0 and "`x`" in shown


def test_lazy_opening_in_windows_equals_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's lazy opener (big sessions) reads a large file a window at a time: same rows, same items."""
    from musetui.core import scanner
    from musetui.widgets.lazy_session import open_lazily

    p = _good(tmp_path, "L", 300)
    with p.open("ab") as f:
        f.write(b"\n   \n{broken\n" + b"".join(_muse_line("L", 300 + i) for i in range(20)))
    (s,) = Index([str(tmp_path)], workers=1).scan().sessions

    def rows() -> list[tuple[int, int, str, str]]:
        opened = open_lazily(s)
        return [(it.line, it.offset, it.kind, it.text) for it in opened.items] + [
            (0, 0, "", repr(opened.raw(opened.items[-1])))
        ]

    whole = rows()
    monkeypatch.setattr(scanner, "WINDOW_BYTES", 4096)
    assert rows() == whole and len(whole) > 300


def test_an_outlier_whose_file_name_is_not_utf8_is_written_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The outlier record names a session without an id by its path: a non-UTF-8 path is escaped, not fatal."""
    import shutil

    shutil.copytree(SAMPLE, tmp_path / "sample")
    codex = [ln for f in sorted((SAMPLE / "codex").rglob("*.jsonl")) for ln in f.read_bytes().splitlines()]
    claude = [ln for f in sorted((SAMPLE / "claude").rglob("*.jsonl")) for ln in f.read_bytes().splitlines()]
    compacted = next(ln for ln in codex if b'"type":"compacted"' in ln)
    user = next(ln for ln in claude if b'"tool_result"' in ln)
    gen = tmp_path / "gen"
    gen.mkdir()
    (gen / os.fsdecode(b"bad\xff.jsonl")).write_bytes(b"null\n" + compacted + b"\nnull\n" + user + b"\n")
    for argv in (["--no-cache"], [], []):
        code, out, err = _run(capsys, "scan", str(tmp_path), "--json", *argv)
        assert code == 0 and "internal error" not in err, err
        assert "gen/bad\\xff.jsonl" in {r["path"] for r in _records(out)}
