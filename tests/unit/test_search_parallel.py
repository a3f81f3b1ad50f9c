"""Parallel search paths agree with the serial one: forked helpers (run_search) and the app's kept pool (search_sessions)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from musetui.core import parallel as parallel_mod
from musetui.core.search import SearchPool, run_search, search_sessions
from musetui.core.search import executor as executor_mod
from musetui.core.search.results import Hit, Stats

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"


@pytest.fixture
def sample() -> Path:
    assert (SAMPLE / "muse-vm").is_dir(), (
        f"the committed sample is missing at {SAMPLE} (python -m musetui_synth.sample)"
    )
    return SAMPLE


@pytest.fixture
def small_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parallel paths even for a small tree."""
    monkeypatch.setattr(executor_mod, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(executor_mod, "PARALLEL_MIN_BYTES", 0)


def line(text: str) -> bytes:
    return json.dumps({"type": "message", "role": "user", "text": text}).encode() + b"\n"


def hostile_tree(root: Path, sample: Path) -> Path:
    """The sample in many directories, plus the walk's special cases at several depths."""
    files = sorted(p for p in sample.rglob("*.jsonl") if p.is_file())
    for i in range(40):
        src = files[i % len(files)]
        dest = root / f"g{i % 4}" / f"d{i:02d}" / src.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    (root / "g1" / "loop").symlink_to(root / "g1")  # a symlink loop
    (root / "g2" / "d02" / "inside").symlink_to(root / "g3")  # into the tree
    (root / "g0" / "out").symlink_to("/")  # out of the tree
    os.mkfifo(root / "g3" / "d03" / "pipe.jsonl")  # never opened
    (root / "g0" / "d00" / "needle.jsonl").write_bytes(line("Needle here") * 3)
    (root / "g3" / "d07" / "needle.log").write_bytes(line("and a Needle") + b"no newline Needle")
    locked = root / "g2" / "d06" / "locked.jsonl"
    locked.write_bytes(line("Needle locked"))
    locked.chmod(0)
    deep = root / "g1" / "d01"
    for d in range(8):
        deep = deep / f"l{d}"
    deep.mkdir(parents=True)
    (deep / "deep.jsonl").write_bytes(line("Needle deep"))
    return root


QUERIES = ["Needle", "muse-special", "/rs_[0-9a-f]{18}/", "kind:reasoning -avocado", "-muse call_", "has:encrypted"]


def outcome(run: Any) -> tuple[list[dict[str, Any]], list[str], int, int]:
    hits = [h.record() | {"offset": h.offset, "spans": h.match_spans} for h in run]
    return hits, sorted(run.notes), run.files, run.bytes


#: Runs run_search in a fresh process (one thread: helpers are forked only there); prints what it found.
FRESH = r"""
import json, os, sys
from musetui.core import parallel
from musetui.core.search import executor, run_search
executor.PARALLEL_MIN_FILES, executor.PARALLEL_MIN_BYTES = 1, 0
tree, workers, queries = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
helpers = []
real = parallel.forked_batches
def counting(nbatches, run_batch, n, *args):
    helpers.append(n)
    return real(nbatches, run_batch, n, *args)
parallel.forked_batches = counting
out = {}
for q in queries:
    run = run_search([tree], q, workers=workers)
    hits = [h.record() | {"offset": h.offset, "spans": h.match_spans} for h in run]
    out[q] = [hits, sorted(run.notes), run.files, run.bytes]
forks = []
real_fork = os.fork
def fork():
    pid = real_fork()
    if pid:
        forks.append(pid)
    return pid
os.fork = fork
limited = len(list(run_search([tree], "/./", workers=workers, limit=5)))
os.fork = real_fork
left = []
for pid in forks:  # reaped: not even a zombie is left
    try:
        os.waitpid(pid, os.WNOHANG)
        left.append(pid)
    except ChildProcessError:
        pass
print(json.dumps({"outcomes": out, "helpers": helpers, "limited": limited, "forks": len(forks), "left": left}))
"""


def fresh(tree: Path, workers: int, queries: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", FRESH, str(tree), str(workers), json.dumps(queries)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=600,
    )
    got: dict[str, Any] = json.loads(proc.stdout)
    return got


@pytest.mark.parametrize("workers", [2, 3])
def test_forked_helpers_find_what_one_process_finds(tmp_path: Path, sample: Path, workers: int) -> None:
    """Hits, notes (as a set: a shared walk lists the top directories first), files and bytes.

    Run in a fresh process, which has one thread (this one may have others). Also: a search
    stopped early (a limit) leaves no helper behind, not even a zombie.
    """
    tree = hostile_tree(tmp_path / "t", sample)
    serial = fresh(tree, 1, QUERIES)
    parallel = fresh(tree, workers, QUERIES)
    assert serial["helpers"] == [] and parallel["helpers"] == [workers - 1] * (len(QUERIES) + 1)
    for query in QUERIES:
        assert parallel["outcomes"][query] == serial["outcomes"][query] and serial["outcomes"][query][0], query
    notes = parallel["outcomes"]["Needle"][1]
    assert any("loop" in n for n in notes) and any("pipe.jsonl" in n for n in notes)
    assert any("leaves the root" in n for n in notes)
    if os.geteuid() != 0:  # (root reads a file whatever its mode)
        assert any("locked.jsonl" in n and "unreadable" in n for n in notes)
    assert parallel["limited"] == 5 and parallel["forks"] == workers - 1 and parallel["left"] == []


def batches(
    helper_does: Callable[[int], None] | None = None, parent_ran: list[int] | None = None
) -> Callable[[int, Any], tuple[list[Hit], Stats]]:
    """A batch function whose results name the batch; in a helper it runs ``helper_does`` first.

    The caller's batches take 20 ms, so that a helper surely takes some.
    """
    parent = os.getpid()

    def run(i: int, _cancelled: Any) -> tuple[list[Hit], Stats]:
        if os.getpid() == parent:
            time.sleep(0.02)
            if parent_ran is not None:
                parent_ran.append(i)
        elif helper_does is not None:
            helper_does(i)
        return [Hit(f"b{i}", "", None, i, "raw", "")], Stats(files=1, notes=[f"n{i}"])

    return run


def forked(nbatches: int, run_batch: Callable[[int, Any], tuple[list[Hit], Stats]], helpers: int) -> Any:
    """The search's batches through the forked helpers, as the executor runs them (hits packed to cross)."""
    pack, unpack = executor_mod._pack_result, executor_mod._unpack_result
    return parallel_mod.forked_batches(nbatches, run_batch, helpers, None, pack, unpack)


def paths(results: Iterator[tuple[list[Hit], Stats]]) -> list[str]:
    return [h.path for hits, _stats in results for h in hits]


def test_batches_come_back_in_order_whoever_searched_them() -> None:
    parent_ran: list[int] = []
    assert paths(forked(50, batches(parent_ran=parent_ran), 2)) == [f"b{i}" for i in range(50)]
    assert len(parent_ran) < 50  # the helpers searched some
    assert paths(forked(1, batches(), 1)) == ["b0"]


def test_a_helper_that_dies_leaves_its_batches_to_the_caller() -> None:
    calls = [0]

    def die_on_the_second(_i: int) -> None:
        calls[0] += 1  # (the helper's own copy)
        if calls[0] == 2:
            os._exit(3)

    parent_ran: list[int] = []
    got = paths(forked(30, batches(die_on_the_second, parent_ran), 1))
    assert got == [f"b{i}" for i in range(30)]
    assert len(parent_ran) == 29  # all but the helper's first batch: its second included


def test_a_helper_error_is_raised_in_the_caller() -> None:
    def fail(i: int) -> None:
        raise ValueError(f"batch {i} broke")

    with pytest.raises(ValueError, match="broke"):
        paths(forked(40, batches(fail), 1))


def test_a_threaded_process_forks_no_helper(
    tmp_path: Path, sample: Path, small_pools: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With another thread alive, a pool of fresh processes is used instead (as before)."""
    tree = hostile_tree(tmp_path / "t", sample)
    called: list[int] = []
    real = parallel_mod.forked_batches

    def counting(*args: Any) -> Any:
        called.append(1)
        return real(*args)

    monkeypatch.setattr(parallel_mod, "forked_batches", counting)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        got = outcome(run_search([str(tree)], "Needle", workers=2))
    finally:
        stop.set()
        thread.join()
    assert not called and got == outcome(run_search([str(tree)], "Needle", workers=1))


# -- the app's path: search_sessions on a kept pool, in two passes ----------------------------------


def test_a_kept_pool_finds_what_one_process_finds(sample: Path, small_pools: None) -> None:
    from musetui.core.index import Index

    sessions = Index([str(sample)], workers=1).scan().sessions
    ghosts = [dataclasses.replace(s, abspath=s.abspath + ".gone") if i % 5 == 0 else s for i, s in enumerate(sessions)]
    pool = SearchPool(2)
    try:
        for query in [*QUERIES, "provider:openai has:encrypted", "format:codex call_", "role:assistant gAAAAA"]:
            for some in (sessions, ghosts):
                serial = outcome(search_sessions(some, query, workers=1))
                kept = outcome(search_sessions(some, query, pool=pool))
                assert kept == serial, query
        assert outcome(search_sessions(ghosts, "muse", workers=1))[1], "the gone files are noted"
        limited = list(search_sessions(sessions, "/./", pool=pool, limit=7))
        assert [h.record() for h in limited] == [
            h.record() for h in search_sessions(sessions, "/./", workers=1, limit=7)
        ]
    finally:
        pool.close()


def test_the_first_pass_sends_paths_not_sessions(
    sample: Path, small_pools: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the files the driving group matched travel as tasks, with their session's details."""
    from musetui.core.index import Index

    sessions = Index([str(sample)], workers=1).scan().sessions
    sent: list[tuple[str, int]] = []
    real_pack = executor_mod._pack

    def pack(units: list[Any]) -> list[Any]:
        sent.append(("tasks", len(units)))
        return real_pack(units)

    monkeypatch.setattr(executor_mod, "_pack", pack)
    pool = SearchPool(2)
    try:
        hits = list(search_sessions(sessions, "muse-special", pool=pool))
    finally:
        pool.close()
    files = {h.abspath for h in hits}
    assert files and len(files) <= sum(n for _k, n in sent) < len(sessions) / 2


def test_hits_travel_as_tuples_with_every_field() -> None:
    from musetui.core.search.results import pack_hits, unpack_hits

    values = {f.name: f"v-{f.name}" for f in dataclasses.fields(Hit)}
    hit = Hit(**values)  # type: ignore[arg-type]
    assert unpack_hits(pack_hits([hit])) == [hit]
    assert len(pack_hits([hit])[0]) == len(values)
