"""The cache holds data, not code, and cannot be made to lie or write where it must not.

Planted pickle and eval payloads never run; a byte-flipped row, a file rewritten in place,
a symlinked database or cache directory, a cache directory inside a root and overlapping
roots all give exactly the output of ``--no-cache``. A killed scan leaves no worker behind.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

import musetui

#: The checkout whose ``musetui`` this test imported: the subprocesses run the same code.
CODE = str(Path(musetui.__file__).resolve().parents[1])
#: Every column that holds a stored blob, by table.
BLOB_COLUMNS = {"files": ("outcome", "state"), "snapshot": ("blob",), "results": ("output", "diagnostics")}


def _run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, "PYTHONPATH": CODE, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "musetui", *args], capture_output=True, env=full, timeout=timeout, check=False
    )


def _stdout(*args: str, env: dict[str, str] | None = None) -> bytes:
    done = _run(*args, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


@pytest.fixture
def root(tmp_path: Path, sample_dir: Path) -> Path:
    r = tmp_path / "root"
    shutil.copytree(sample_dir, r)
    return r


def _cache_dir() -> Path:
    return Path(os.environ["MUSETUI_CACHE_DIR"])


def _databases() -> list[Path]:
    return sorted(_cache_dir().glob("index-*.sqlite3"))


def _sealed(payload: bytes) -> bytes:
    """A blob as the cache seals it (CRC-32 in front): a forger recomputes it."""
    return zlib.crc32(payload).to_bytes(4, "little") + payload


def _rewrite_blobs(change: Callable[[bytes], bytes]) -> int:
    """Replace every stored blob (sealed again) by ``change`` of its payload; how many were changed."""
    n = 0
    for db in _databases():
        conn = sqlite3.connect(db, isolation_level=None)
        try:
            for table, columns in BLOB_COLUMNS.items():
                for column in columns:
                    rows = conn.execute(f"SELECT rowid, {column} FROM {table} WHERE {column} IS NOT NULL").fetchall()
                    for rowid, blob in rows:
                        conn.execute(
                            f"UPDATE {table} SET {column} = ? WHERE rowid = ?",
                            (_sealed(change(bytes(blob)[4:])), rowid),
                        )
                        n += 1
        finally:
            conn.close()
    return n


def _grow_one(root: Path) -> None:
    """Append a line to one session (so that its stored resume state is read)."""
    p = sorted(root.rglob("rollout-*.jsonl"))[0]
    first = p.read_bytes().split(b"\n", 1)[0]
    with open(p, "ab") as f:
        f.write(first + b"\n")


class _Call:
    """Pickles as a call of ``fn(*args)``: what a crafted cache row would run when unpickled."""

    def __init__(self, fn: object, *args: object) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return self.fn, self.args


def _attack(root: Path, payload: bytes, marker: Path) -> None:
    """Fill the cache, plant ``payload`` in every blob, grow one file: each mode's output is ``--no-cache``'s."""
    for mode in ((), ("--json",)):
        shutil.rmtree(_cache_dir(), ignore_errors=True)
        _stdout("scan", *mode, str(root))
        _grow_one(root)
        assert _rewrite_blobs(lambda _old: payload) > 0
        got = _stdout("scan", *mode, str(root))
        assert not marker.exists(), "a planted cache row ran code"
        assert got == _stdout("scan", "--no-cache", *mode, str(root))


def test_a_planted_pickle_runs_no_code(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned-by-pickle"
    payload = pickle.dumps(_Call(os.system, f"touch {marker}"), protocol=2)
    _attack(root, payload, marker)


def test_a_planted_eval_payload_runs_no_code(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned-by-eval"
    source = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    _attack(root, pickle.dumps(_Call(eval, source), protocol=2), marker)  # eval reached through a pickle
    _attack(root, source.encode(), marker)  # the bare expression, for a cache that would eval text


def test_a_byte_flipped_row_is_a_miss(root: Path) -> None:
    """One byte of every blob changed, its CRC recomputed (as a forger would): nothing false is served."""

    def flip(old: bytes) -> bytes:
        at = old.find(b"openai")  # a verdict, where the row holds it as text
        at = at + 5 if at >= 0 else len(old) // 2
        return old[:at] + bytes([old[at] ^ 0x01]) + old[at + 1 :]

    for mode in ((), ("--json",)):
        shutil.rmtree(_cache_dir(), ignore_errors=True)
        _stdout("scan", *mode, str(root))
        assert _rewrite_blobs(flip) > 0
        assert _stdout("scan", *mode, str(root)) == _stdout("scan", "--no-cache", *mode, str(root))


def test_a_forged_stored_output_is_not_printed(root: Path) -> None:
    """A stored ``scan --json`` output replaced (in the form the cache expects, CRC and all) by terminal escapes is a miss."""
    forged = b'\x1b]0;pwned\x07\x1b[2J{"root": "forged"}\n'

    def forge(old: bytes) -> bytes:
        try:
            zlib.decompress(old)
        except zlib.error:
            return forged  # a cache that stores the output as it is
        return zlib.compress(forged)

    _stdout("scan", "--json", str(root))
    conn = sqlite3.connect(_databases()[0], isolation_level=None)
    ((old,),) = conn.execute("SELECT output FROM results").fetchall()
    conn.execute("UPDATE results SET output = ?", (_sealed(forge(bytes(old)[4:])),))
    conn.close()
    got = _stdout("scan", "--json", str(root))
    assert b"\x1b" not in got and got == _stdout("scan", "--no-cache", "--json", str(root))


_EVIDENCE = re.compile(rb"(rs_|msg_|call_|resp_|gAAAAA|fc_)[A-Za-z0-9_\-=]{8,}")


def test_a_file_rewritten_in_place_then_grown_is_read_whole(root: Path) -> None:
    """Evidence removed in place (same length, same inode, same line ends) and a line appended: the scan shows the new content."""
    p = sorted(root.rglob("rollout-*.jsonl"))[0]
    data = p.read_bytes()
    for mode in ((), ("--json",)):
        p.write_bytes(data)
        shutil.rmtree(_cache_dir(), ignore_errors=True)
        before = _stdout("scan", *mode, str(root))
        scrubbed = _EVIDENCE.sub(lambda m: b"x" * len(m.group(0)), data)
        assert scrubbed != data and len(scrubbed) == len(data)
        ino = p.stat().st_ino
        with open(p, "r+b") as f:  # in place: same inode, every newline where it was
            f.write(scrubbed)
            f.write(scrubbed.split(b"\n", 1)[0] + b"\n")
        assert p.stat().st_ino == ino
        fresh = _stdout("scan", "--no-cache", *mode, str(root))
        assert fresh != before
        assert _stdout("scan", *mode, str(root)) == fresh


def test_live_follow_reads_a_file_rewritten_in_place_whole(root: Path) -> None:
    """The app's refresh: the same in-place rewrite and append give the records of a fresh scan."""
    from musetui.core.index import Index

    p = sorted(root.rglob("rollout-*.jsonl"))[0]
    index = Index([str(root)], workers=1, follow=True).scan()
    data = p.read_bytes()
    scrubbed = _EVIDENCE.sub(lambda m: b"x" * len(m.group(0)), data)
    with open(p, "r+b") as f:
        f.write(scrubbed)
        f.write(scrubbed.split(b"\n", 1)[0] + b"\n")
    index.refresh()
    fresh = Index([str(root)], workers=1).scan()
    assert [s.record() for s in index.sorted_sessions()] == [s.record() for s in fresh.sorted_sessions()]


def _sqlite_file(path: Path) -> bytes:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE mine (x TEXT)")
    conn.execute("INSERT INTO mine VALUES ('precious')")
    conn.close()
    return path.read_bytes()


def test_a_symlinked_database_is_not_followed(root: Path, tmp_path: Path) -> None:
    from musetui.core.cache import db_path

    other = tmp_path / "elsewhere" / "mine.sqlite3"
    other.parent.mkdir()
    content = _sqlite_file(other)
    mtime = other.stat().st_mtime_ns
    link = db_path(str(root))
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(other)
    for mode in ((), ("--json",)):
        done = _run("scan", *mode, str(root))
        assert done.returncode == 0
        assert done.stdout == _stdout("scan", "--no-cache", *mode, str(root))
        warning = [ln for ln in done.stderr.decode().splitlines() if "symlink" in ln]
        assert len(warning) == 1 and "not followed" in warning[0], done.stderr
    assert other.read_bytes() == content and other.stat().st_mtime_ns == mtime
    assert sorted(x.name for x in other.parent.iterdir()) == ["mine.sqlite3"]  # no -wal, no -shm
    assert link.is_symlink()


def test_a_symlinked_cache_directory_is_not_followed(root: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    link = tmp_path / "cachelink"
    link.symlink_to(target)
    env = {"MUSETUI_CACHE_DIR": str(link)}
    done = _run("scan", "--json", str(root), env=env)
    assert done.returncode == 0 and done.stdout == _stdout("scan", "--no-cache", "--json", str(root))
    assert "symlink" in done.stderr.decode()
    assert list(target.iterdir()) == []


def test_the_database_is_private(root: Path) -> None:
    _stdout("scan", str(root))
    (db,) = _databases()
    assert db.stat().st_mode & 0o777 == 0o600
    assert _cache_dir().stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("command", [("scan",), ("scan", "--json"), ("search",), ("report", "--format", "md")])
def test_a_cache_directory_inside_a_root_is_never_created(root: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    inside = root / ".cache" / "musetui"
    args = [*command, str(root)]
    if command[0] == "report":
        args += ["-o", str(tmp_path / "report.md")]
    if command == ("search",):
        args.append("provider:openai")
    done = _run(*args, env={"MUSETUI_CACHE_DIR": str(inside)})
    assert done.returncode in (0, 1), done.stderr
    assert not (root / ".cache").exists()


def test_a_cache_directory_inside_another_root_is_never_created(root: Path, tmp_path: Path) -> None:
    """``scan OTHER R`` with the cache directory inside R: the cache of OTHER is not made there either."""
    other = tmp_path / "other"
    shutil.copytree(root / "codex", other)
    env = {"MUSETUI_CACHE_DIR": str(root / ".cache" / "musetui")}
    for mode in ((), ("--json",)):
        done = _run("scan", *mode, str(other), str(root), env=env)
        assert done.returncode == 0, done.stderr
        assert not (root / ".cache").exists()


def test_overlapping_roots_list_each_file_once_and_write_nothing_inside(root: Path) -> None:
    """``scan R/codex R``: every file read and listed once, under the outer root ``R`` (as given), as ``scan R`` lists it."""
    env = {"MUSETUI_CACHE_DIR": str(root / ".cache" / "musetui")}
    inner = str(root / "codex")
    alone = _stdout("scan", "--no-cache", "--json", str(root))
    for args in ((inner, str(root)), (str(root), inner), (str(root), str(root))):
        for cache in ((), ("--no-cache",)):
            done = _run("scan", "--json", *cache, *args, env=env)
            assert done.returncode == 0, done.stderr
            assert done.stdout == alone, args
            assert not (root / ".cache").exists()


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find the workers")
def test_pool_workers_die_with_a_killed_scan(tmp_path: Path, sample_dir: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    src = sorted(sample_dir.rglob("rollout-*.jsonl"))[0].read_bytes()
    body = src * (2 * 2**20 // len(src) + 1)  # about 2 MiB a file
    for i in range(24):
        (big / f"s{i:02}.jsonl").write_bytes(body)
    env = {**os.environ, "PYTHONPATH": CODE}
    proc = subprocess.Popen(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--workers", "2", str(big)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(workers) < 2 and proc.poll() is None:
            workers = _children(proc.pid)
            time.sleep(0.05)
        assert len(workers) >= 2 and proc.poll() is None, "the scan ended before its workers could be seen"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.1)
        assert not [w for w in workers if _alive(w)], "workers outlived their killed parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:  # (the orphans of a failing run: ours to stop)
            if _alive(w):
                os.kill(w, signal.SIGKILL)


def test_every_blob_is_plain_compressed_json(root: Path) -> None:
    """What the cache stores parses as data: a format byte and zlib'd JSON, or (a scan's output) zlib'd JSON Lines."""
    import json

    _stdout("scan", str(root))
    _stdout("scan", "--json", str(root))
    (db,) = _databases()
    conn = sqlite3.connect(db)
    seen = 0
    for table, columns in BLOB_COLUMNS.items():
        for column in columns:
            for (blob,) in conn.execute(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL"):
                payload = bytes(blob)[4:]
                if column == "output":
                    assert all(json.loads(line) for line in zlib.decompress(payload).splitlines())
                else:
                    assert payload[:1] in (b"o", b"j")
                    json.loads(zlib.decompress(payload[1:]))
                seen += 1
    conn.close()
    assert seen > 10


@pytest.mark.parametrize("refused", [False, True], ids=["usable", "symlinked"])
def test_a_refused_cache_costs_what_no_cache_costs(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: bool
) -> None:
    """Scanned without a usable cache, no file keeps a resume state and nothing is encoded for storing.

    (A refused cache once cost half again the CPU of ``--no-cache``: every file's state and
    blobs were made for a cache that would never store them.)
    """
    from musetui.core import index as index_mod

    target = tmp_path / "target"
    target.mkdir()
    if refused:
        link = tmp_path / "cachelink"
        link.symlink_to(target)
        monkeypatch.setenv("MUSETUI_CACHE_DIR", str(link))
    else:
        monkeypatch.setenv("MUSETUI_CACHE_DIR", str(target))
    made: list[str] = []
    real = index_mod._blobs

    def counted(outcome: index_mod.Outcome) -> index_mod.Blobs:
        made.append(outcome.summary.path if outcome.summary is not None else "")
        return real(outcome)

    monkeypatch.setattr(index_mod, "_blobs", counted)
    index = index_mod.Index([str(root)], workers=1, use_cache=True).scan()
    assert len(index.sessions) > 3
    if refused:
        assert made == [] and not any(e.keep_state for e in index.result.files)
        assert any("symlink" in n for n in index.result.notices)
        assert list(target.iterdir()) == []
    else:
        assert len(made) == len(index.result.files) and all(e.keep_state for e in index.result.files)
