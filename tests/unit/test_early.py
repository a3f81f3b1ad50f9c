"""The head start: the first files read in a child process while the app starts, then adopted by the index."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import orjson
import pytest

from musetui.core.cache import db_path
from musetui.core.early import HeadStart
from musetui.core.index import Index


@pytest.fixture
def tree(tmp_path: Path, sample_dir: Path) -> Path:
    """The bundled sample plus a few small generic transcripts (so that the pool has eight files or more)."""
    root = tmp_path / "root"
    shutil.copytree(sample_dir, root)
    (root / "extra").mkdir()
    for n in range(4):
        lines = [orjson.dumps({"type": "message", "role": "user", "content": f"task {n}.{i}"}) for i in range(5)]
        (root / "extra" / f"s{n}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return root


def _records(index: Index) -> list[dict[str, object]]:
    return [s.record() for s in index.sorted_sessions()]


def _head(root: Path, *, use_cache: bool) -> list[tuple[object, object, object]]:
    head = HeadStart.start([str(root)], use_cache=use_cache)
    assert head is not None
    answer = head.take(30.0)
    assert answer.sessions, "the child sent nothing"
    got = answer.outcomes()
    assert {id(o.summary) for _e, o, _b in got if o.summary is not None} == {id(s) for s in answer.sessions}  # type: ignore[attr-defined]
    return got


@pytest.mark.parametrize("use_cache", [False, True])
def test_adopted_outcomes_give_the_same_records_as_a_plain_scan(tree: Path, use_cache: bool) -> None:
    plain = Index([str(tree)], workers=1).scan()
    got = _head(tree, use_cache=use_cache)
    pre = {e.abspath: (e, o, b) for e, o, b in got}  # type: ignore[attr-defined]
    index = Index([str(tree)], workers=1, use_cache=use_cache, follow=True, preloaded=dict(pre))
    index.scan()
    assert _records(index) == _records(plain)
    assert not index.preloaded  # every one was reached by the walk
    adopted = [o.summary for _e, o, _b in pre.values() if o.summary is not None]  # type: ignore[attr-defined]
    assert adopted and all(index.result.by_key[s.key] is s for s in adopted)  # the same objects, not copies
    assert index.result.scanned_files == len(index.files) - 0  # nothing cached yet: every file counts as read


def test_the_child_writes_nothing_and_the_index_stores_what_it_read(tree: Path) -> None:
    _head(tree, use_cache=True)
    assert not db_path(str(tree)).exists()  # the child read ahead, the cache is untouched
    got = _head(tree, use_cache=True)
    index = Index([str(tree)], workers=1, use_cache=True, preloaded={e.abspath: (e, o, b) for e, o, b in got})  # type: ignore[attr-defined]
    index.scan()
    with sqlite3.connect(db_path(str(tree))) as db:
        stored = db.execute("SELECT count(*) FROM files").fetchone()[0]
    assert stored == len(index.files)
    again = Index([str(tree)], workers=1, use_cache=True).scan()
    assert again.result.scanned_files == 0 and again.result.cache_hits == len(index.files)
    assert _records(again) == _records(index)
    # A warm head start serves cache hits (no blobs), which the index counts as such.
    warm = _head(tree, use_cache=True)
    assert all(b is None for _e, _o, b in warm)
    third = Index([str(tree)], workers=1, use_cache=True, preloaded={e.abspath: (e, o, b) for e, o, b in warm})  # type: ignore[attr-defined]
    third.scan()
    assert third.result.scanned_files == 0 and third.result.cache_hits == len(index.files)
    assert _records(third) == _records(index)


def test_a_file_changed_after_the_head_start_is_read_again(tree: Path) -> None:
    got = _head(tree, use_cache=False)
    entry, outcome, _blobs = next(t for t in got if "/extra/" in t[0].abspath)  # type: ignore[attr-defined]
    path = Path(entry.abspath)  # type: ignore[attr-defined]
    with path.open("ab") as f:  # an append, as an agent still writing its transcript does
        f.write(path.read_bytes().splitlines(keepends=True)[-1])
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    index = Index([str(tree)], workers=1, preloaded={e.abspath: (e, o, b) for e, o, b in got})  # type: ignore[attr-defined]
    index.scan()
    fresh = index.result.by_key[outcome.summary.key]  # type: ignore[attr-defined]
    assert fresh is not outcome.summary  # type: ignore[attr-defined]
    assert fresh.size == path.stat().st_size
    assert _records(index) == _records(Index([str(tree)], workers=1).scan())


def test_a_late_or_failed_child_gives_nothing(tmp_path: Path) -> None:
    head = HeadStart.start([str(tmp_path / "missing")], use_cache=False)
    assert head is not None
    answer = head.take(30.0)  # nothing to walk: an empty answer, no error
    assert answer.sessions == [] and answer.outcomes() == []
    slow = HeadStart.start([str(tmp_path)], use_cache=False)
    assert slow is not None
    slow.close()  # the app gave up waiting: the child is stopped
    late = slow.take(0.0)
    assert late.sessions == [] and late.outcomes() == []


def _niceness() -> int:
    return os.nice(0)


def test_the_app_s_scan_workers_yield_the_cpu_to_the_app() -> None:
    """Index(worker_nice=N) starts its worker processes N steps nicer than the app (keys first)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from musetui.core.parallel import worker_init

    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=worker_init, initargs=(3,)) as pool:
        assert pool.submit(_niceness).result(timeout=60) == min(19, os.nice(0) + 3)
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=worker_init, initargs=(0,)) as pool:
        assert pool.submit(_niceness).result(timeout=60) == os.nice(0)


def test_a_threaded_process_scans_in_a_fork_server_pool(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app has threads: its pool starts from a fork server (no fork of a threaded process), same records."""
    import threading

    from musetui.core import index as index_mod
    from musetui.core import parallel

    monkeypatch.setattr(index_mod, "PARALLEL_MIN_BYTES", 0)  # the pool even for this small tree
    plain = Index([str(tree)], workers=1).scan()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        ctx = parallel.pool_context()
        assert ctx.get_start_method() == ("forkserver" if sys.platform != "win32" else "spawn")
        pooled = Index([str(tree)], workers=2, worker_nice=1).scan()
    finally:
        stop.set()
    assert len(pooled.files) >= 8
    assert _records(pooled) == _records(plain)


def test_a_chunk_whose_worker_died_is_scanned_here(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker process that dies (out of memory, a crash in a C extension) costs time, not sessions."""
    import multiprocessing

    from musetui.core import index as index_mod
    from musetui.core import parallel

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork: the dying worker is made by patching this process before it forks")
    real = index_mod._scan_chunk

    def dies_on_extra(args: tuple[list[object], bool, bool, bool]) -> list[object]:
        if any("/extra/" in e.abspath for e in args[0]):  # type: ignore[attr-defined]
            os._exit(3)
        return real(args)  # type: ignore[arg-type]

    monkeypatch.setattr(index_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(index_mod, "CHUNK_FILES", 2)
    monkeypatch.setattr(index_mod, "_scan_chunk", dies_on_extra)
    monkeypatch.setattr(parallel, "pool_context", lambda: multiprocessing.get_context("fork"))
    plain = Index([str(tree)], workers=1).scan()
    pooled = Index([str(tree)], workers=2).scan()
    assert _records(pooled) == _records(plain)


def test_the_head_start_stops_before_a_file_bigger_than_its_budget(tree: Path) -> None:
    """A huge first transcript is left to the index: the head start answers at once, with what came before it."""
    index = Index([str(tree)], workers=1, follow=True)
    sizes = sorted(e.size for e in Index([str(tree)], workers=1).scan().files)
    budget = sizes[-1] - 1  # every file but the largest fits on its own
    got = index.head(10_000, budget)
    assert sum(e.size for e, _o, _b in got) <= budget
    assert all(e.size < sizes[-1] for e, _o, _b in got)
