#!/usr/bin/env python3
"""Benchmark how long the UI is busy after a session change: the stalls of the event loop.

Usage:
    python bench/bench_panes.py [--corpus DIR] [--runs 3] [--changes 8] [--baseline DIR]

Headless (Pilot, 160x48, the cache on, the tree complete): ``o`` jumps to the outlier and
``5`` shows the Evidence pane; then the tree's cursor moves ``j``/``k`` ``--changes`` times,
1.5 s apart, so each session opens, decodes and redraws its panes. A 5 ms ticker on the
app's event loop records every stall over 20 ms in the 1.5 s after each key. A key pressed
during a stall waits for it, so the worst stall is the worst extra delay a key can meet.

Printed per checkout: the median over changes of the worst stall and of the stalls' sum.
``--baseline DIR`` runs another checkout of musetui the same way, alternating run by run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
STALL_S = 0.020
WINDOW_S = 1.5


async def _until(cond: Any, limit: float) -> None:
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.02)


def _key(app: Any, key: str) -> None:
    from textual import events

    app.post_message(events.Key(key, None if len(key) > 1 else key))


async def measure(corpus: str, changes: int) -> list[tuple[float, float]]:
    """(worst stall, sum of stalls) in ms after each of ``changes`` session changes."""
    from musetui.app import MuseApp

    app = MuseApp([corpus], use_cache=True)
    out: list[tuple[float, float]] = []
    async with app.run_test(size=(160, 48)) as pilot:
        scr = app.main_screen
        await _until(lambda: scr.finished, 600.0)
        await pilot.pause(0.5)
        _key(app, "o")
        await pilot.pause(2.0)
        _key(app, "5")
        await pilot.pause(1.0)
        scr.session_tree.focus()
        await pilot.pause(0.5)
        for n in range(changes):
            stalls: list[float] = []

            async def ticker(into: list[float] = stalls) -> None:
                t0 = time.perf_counter()
                while time.perf_counter() - t0 < WINDOW_S:
                    t = time.perf_counter()
                    await asyncio.sleep(0.005)
                    late = time.perf_counter() - t - 0.005
                    if late > STALL_S:
                        into.append(late * 1000)

            task = asyncio.create_task(ticker())
            await asyncio.sleep(0.05)
            _key(app, "j" if n % 2 == 0 else "k")
            await task
            out.append((max(stalls, default=0.0), sum(stalls)))
    return out


def run_child(corpus: str, changes: int, cache_dir: str, code: Path | None) -> list[list[float]]:
    """One measurement in a fresh process, of this checkout or of ``code``."""
    env = {**os.environ, "MUSETUI_CACHE_DIR": cache_dir, "PYTHONPATH": str(code or REPO)}
    env.pop("MUSETUI_NO_CACHE", None)
    done = subprocess.run(
        [sys.executable, __file__, "--child", "--corpus", corpus, "--changes", str(changes)],
        env=env,
        capture_output=True,
        check=True,
        cwd=str(code or REPO),
    )
    return orjson.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="/tmp/bench500")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--changes", type=int, default=8)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout of musetui")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(orjson.dumps(asyncio.run(measure(args.corpus, args.changes))).decode())
        return 0
    codes: list[tuple[str, Path | None]] = [("this", None)]
    if args.baseline is not None:
        codes.append(("baseline", args.baseline.resolve()))
    results: dict[str, list[list[float]]] = {name: [] for name, _ in codes}
    with tempfile.TemporaryDirectory(prefix="musetui-bench-panes-") as tmp:
        for name, code in codes:  # fill each checkout's cache once (its schema may differ)
            run_child(args.corpus, 1, os.path.join(tmp, name), code)
        for run in range(args.runs):
            for name, code in codes if run % 2 == 0 else codes[::-1]:
                results[name].extend(run_child(args.corpus, args.changes, os.path.join(tmp, name), code))
    print(f"corpus {args.corpus} · {args.runs} runs x {args.changes} session changes · load {os.getloadavg()[0]:.1f}")
    for name, rows in results.items():
        worst = statistics.median(r[0] for r in rows)
        total = statistics.median(r[1] for r in rows)
        top = max(r[0] for r in rows)
        print(
            f"  {name:9s} worst stall per change: median {worst:5.0f} ms (max {top:4.0f}) · stalls' sum: median {total:5.0f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
