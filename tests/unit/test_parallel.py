"""The one home of worker pools: batches, ordered results, cancellation (musetui.core.parallel)."""

from __future__ import annotations

import os
import time
from collections import deque
from concurrent.futures import Future

import pytest

from musetui.core import parallel


def test_bounds_and_chunks_cover_every_item_once_in_order() -> None:
    assert parallel.bounds(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert parallel.bounds(0, 4) == []
    assert parallel.bounds(3, 0) == [(0, 1), (1, 2), (2, 3)]  # (a size below one is one)
    assert parallel.chunks(list("abcde"), 2) == [["a", "b"], ["c", "d"], ["e"]]


def _done(value: int) -> Future[int]:
    f: Future[int] = Future()
    f.set_result(value)
    return f


def test_in_order_yields_in_submission_order_and_cancels_the_rest_when_stopped() -> None:
    pending: Future[int] = Future()  # never run: what a cancelled search leaves queued
    futures = deque([_done(1), _done(2), pending])
    stop = {"now": False}
    got = []
    for value in parallel.in_order(futures, lambda: stop["now"]):
        got.append(value)
        stop["now"] = value == 2
    assert got == [1, 2]
    assert pending.cancelled()


def test_in_order_closed_early_cancels_what_is_left() -> None:
    pending: Future[int] = Future()
    results = parallel.in_order(deque([_done(7), pending]))
    assert next(results) == 7
    results.close()
    assert pending.cancelled()


def test_a_started_pool_runs_work_and_stops() -> None:
    pool = parallel.start_pool(1, initargs=(0,))
    try:
        assert pool.submit(sum, [1, 2, 3]).result(timeout=60) == 6
        assert not parallel.is_broken(pool)
    finally:
        parallel.stop_pool(pool)


def test_forked_batches_come_back_in_order_with_what_the_helpers_packed() -> None:
    """Any result crosses (None too); a helper's is packed there and unpacked here."""
    parent = os.getpid()

    def run(i: int, _cancelled: object) -> tuple[int, bool] | None:
        time.sleep(0.01)  # (so that every process surely takes some)
        return None if i == 3 else (i, os.getpid() == parent)

    def pack(result: tuple[int, bool] | None) -> object:
        return ("packed", result)

    def unpack(packed: tuple[str, tuple[int, bool] | None]) -> tuple[int, bool] | None:
        assert packed[0] == "packed"
        return packed[1]

    got = list(parallel.forked_batches(40, run, 2, None, pack, unpack))
    assert [r[0] if r else None for r in got] == [None if i == 3 else i for i in range(40)]
    here = sum(1 for r in got if r and r[1])
    assert 0 < here < 39  # both this process and the helpers ran batches


def test_forked_batches_refuse_more_batches_than_the_pipe_holds() -> None:
    with pytest.raises(ValueError, match="batches"):
        next(parallel.forked_batches(parallel.MAX_FORKED_BATCHES + 1, lambda i, _c: i, 1))
