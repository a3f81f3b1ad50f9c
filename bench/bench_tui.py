#!/usr/bin/env python3
"""Benchmark the TUI targets of DESIGN.md: first paint, opening a 100,000-item session, keys.

Usage:
    python bench/bench_tui.py [--corpus DIR] [--runs 5] [--baseline DIR] [--first-paint-only]

* **first paint** (a real terminal): ``musetui CORPUS`` starts in a tmux pane of 160x48;
  the pane is polled every 10 ms until the session tree shows its first row. Timed with
  the cache off (a cold start) and on (a reopen). Needs tmux; skipped without it.
* **open 100k items** (headless, Pilot): a generated Muse session of 100,000 items is
  selected and ``enter`` queued as the terminal driver queues it; timed until the item list
  holds every row (it paints on the next frame).
* **keys while indexing** (headless): ``j`` and ``k`` alternately are queued 40 times, 50 ms
  apart, while the corpus is still being indexed; each is timed until the tree's cursor has moved.
* **keys on the full tree** (headless, the cache on): ``j`` 30 times, then ``G``, ``g``, ``o``
  and ``s`` (a re-sort of every session) on the finished tree, each timed until it took effect.
* **search** (headless, the cache on, the tree complete): ``/`` opens the search view and a
  query is typed (the input's value set at once); timed until the final results are shown.
  This includes the 0.15 s debounce after the last keystroke, as a user waits it. Meanwhile
  a 5 ms ticker on the app's event loop records the longest stall (the UI thread busy).

Medians (and the slowest key) are printed. The corpus comes from
``python -m musetui_synth.corpus DIR --size-mb 500 --seed 1``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


_RUNS = itertools.count()


def first_paint(corpus: str, *, cache: bool, cache_dir: str, code: str | None = None) -> float | None:
    """Seconds from launching ``musetui CORPUS`` in tmux to the first session row on screen.

    A private tmux server (``-L``, no config) is started for each run, so the environment
    given here is the one the app sees (a running server would hand its own to new panes).
    ``code`` runs another checkout of musetui (a baseline), as ``python -m musetui`` from it.
    """
    if shutil.which("tmux") is None:
        return None
    sock = f"musetui-bench-{os.getpid()}-{next(_RUNS)}"  # (a server still exiting must not be reused)
    env = {
        **os.environ,
        "MUSETUI_CACHE_DIR": cache_dir,
        "MUSETUI_NO_CACHE": "" if cache else "1",
        "PYTHONPYCACHEPREFIX": "/tmp/musetui-bench-pycache",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("TMUX", None)
    if code is not None:
        env["PYTHONPATH"] = code
    cmd = f"{sys.executable} -m musetui {corpus}"
    tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
    for _attempt in range(3):  # a tmux server still exiting from the last run can refuse once
        t0 = time.perf_counter()
        started = subprocess.run([*tmux, "new-session", "-d", "-s", "b", "-x", "160", "-y", "48", cmd], env=env, cwd=code)
        if started.returncode == 0:
            break
        time.sleep(0.5)
    else:
        raise RuntimeError("tmux new-session failed 3 times")
    try:
        while time.perf_counter() - t0 < 30:
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "b"], capture_output=True, text=True).stdout
            if any(row.lstrip("│").startswith(("└ ", "├ ")) for row in screen.splitlines()):
                return time.perf_counter() - t0
            time.sleep(0.01)
        return None
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def make_big_session(root: Path, items: int = 100_000) -> None:
    """A Muse session of ``items`` committed assistant messages (about 25 MB)."""
    d = root / "sessions" / "01a0bench-big"
    d.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(items):
        lines.append(
            orjson.dumps(
                {
                    "stream": {"kind": "session", "id": "01a0bench-big"},
                    "recorded_at": 1790000000000000 + i * 1_000_000,
                    "payload": {
                        "kind": "run",
                        "event": {"kind": "assistant_message_committed", "message_id": f"m{i}", "text": f"line {i}"},
                    },
                }
            )
        )
    (d / "session.jsonl").write_bytes(b"\n".join(lines) + b"\n")


async def _until(cond: Callable[[], bool], limit: float = 30.0) -> None:
    t0 = time.perf_counter()
    while not cond() and time.perf_counter() - t0 < limit:
        await asyncio.sleep(0.001)


def _key(app: Any, key: str) -> None:
    """Deliver a key the way the terminal driver does: queued on the app, no waiting."""
    from textual import events

    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    app._driver.send_message(event)


async def open_big(root: str) -> float:
    """Seconds from the key that selects a 100,000-item session to its item list holding every row.

    (Moving onto a session opens it.) The key is queued as the driver would queue it; the
    clock stops when the rows are in the list (one frame, at most 1/60 s, then paints them).
    """
    from musetui.app import MuseApp

    app = MuseApp([root], use_cache=False)
    async with app.run_test(size=(160, 48)) as pilot:
        scr = app.main_screen
        await _until(lambda: bool(scr.session_tree.sessions) and not scr.indexing)
        await pilot.pause(0.3)
        assert scr.session_tree.current_session() is None and not scr.items.items
        t0 = time.perf_counter()
        _key(app, "j")
        await _until(lambda: len(scr.items.items) >= 100_000)
        return time.perf_counter() - t0


async def keys_while_indexing(corpus: str, presses: int = 40) -> tuple[list[float], bool]:
    """Per-key seconds from queueing ``j`` to the tree's cursor moving, while the corpus indexes."""
    from musetui.app import MuseApp

    app = MuseApp([corpus], use_cache=False)
    out: list[float] = []
    async with app.run_test(size=(160, 48)) as pilot:
        scr = app.main_screen
        tree = scr.session_tree
        await _until(lambda: len(tree.sessions) > presses)
        tree.focus()
        await pilot.pause(0.05)
        for n in range(presses):
            before = tree.cursor_line

            def moved(before: int = before) -> bool:
                return tree.cursor_line != before

            t0 = time.perf_counter()
            _key(app, "j" if n % 2 == 0 else "k")  # (down and up: the cursor always has somewhere to go)
            await _until(moved, 5.0)
            out.append(time.perf_counter() - t0)
            await asyncio.sleep(0.05)  # a person's pace; indexing goes on between keys
        still = scr.indexing
    return out, still


async def keys_on_full_tree(corpus: str, presses: int = 30) -> list[float]:
    """Per-key seconds on the finished tree (the cache on): ``j`` ×n, then ``G``, ``g``, ``o``, ``s``."""
    from musetui.app import MuseApp

    app = MuseApp([corpus], use_cache=True)
    out: list[float] = []
    async with app.run_test(size=(160, 48)) as pilot:
        scr = app.main_screen
        tree = scr.session_tree
        await _until(lambda: scr.finished, 120.0)
        tree.focus()
        await pilot.pause(0.2)
        for key in ["j"] * presses + ["G", "g", "o", "s", "s", "s", "s"]:
            before = (tree.cursor_line, tree.session_order, scr.current.key if scr.current else None)

            def changed(before: tuple[Any, ...] = before) -> bool:
                now = (tree.cursor_line, tree.session_order, scr.current.key if scr.current else None)
                return now != before

            t0 = time.perf_counter()
            _key(app, key)
            await _until(changed, 5.0)
            await asyncio.sleep(0)  # the repaint that follows
            out.append(time.perf_counter() - t0)
            await asyncio.sleep(0.05)
    return out


async def _longest_stall(done: Callable[[], bool], into: list[float]) -> None:
    """Tick every 5 ms on the event loop until ``done``; record the worst lateness."""
    worst = 0.0
    while not done():
        t = time.perf_counter()
        await asyncio.sleep(0.005)
        worst = max(worst, time.perf_counter() - t - 0.005)
    into.append(worst)


SEARCH_QUERIES = (
    "/gpt_responses_v1:gAAAAABq[A-Za-z0-9_-]{3}Q/",
    "muse-special",
    "provider:openai has:encrypted kind:reasoning",
)


async def search_in_tui(corpus: str, runs: int) -> dict[str, tuple[list[float], int, float]]:
    """Per query: seconds from typing it to its final results, its hits, the longest stall."""
    from textual.widgets import Input

    from musetui.app import MuseApp
    from musetui.screens.search import SearchScreen

    app = MuseApp([corpus])
    out: dict[str, tuple[list[float], int, float]] = {}
    async with app.run_test(size=(160, 48)) as pilot:
        scr = app.main_screen
        await _until(lambda: bool(scr.session_tree.sessions) and not scr.indexing, 300)
        await pilot.press("slash")
        await _until(lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        assert isinstance(search, SearchScreen)
        field = search.query_one(Input)
        await pilot.pause(1.0)  # the worker processes start when the view opens
        for q in SEARCH_QUERIES:
            times: list[float] = []
            stalls: list[float] = []
            for _ in range(runs):
                field.value = ""
                await _until(lambda: search.state.query == "" and search.state.done)
                await pilot.pause(0.2)
                t0 = time.perf_counter()
                field.value = q

                def finished(q: str = q) -> bool:
                    return search.state.query == q and search.state.done

                ticker = asyncio.create_task(_longest_stall(finished, stalls))
                await _until(finished, 60)
                times.append(time.perf_counter() - t0)
                await ticker
            out[q] = (times, search.state.total, max(stalls))
    return out


def first_paints(corpus: str, runs: int, tmp: str, baseline: str | None) -> dict[str, list[float | None]]:
    """Cold and warm first paints, this checkout and the baseline alternating run by run (same noise)."""
    codes = {"": None} if baseline is None else {"": None, " (baseline)": baseline}
    caches = {label: str(Path(tmp) / f"cache{i}") for i, label in enumerate(codes)}
    out: dict[str, list[float | None]] = {}
    for _ in range(runs):
        for label, code in codes.items():
            out.setdefault("first paint, cache off" + label, []).append(
                first_paint(corpus, cache=False, cache_dir=caches[label], code=code)
            )
    for label, code in codes.items():  # fill each checkout's cache (their engine stamps may differ)
        subprocess.run([sys.executable, "-m", "musetui", "scan", "--json", "-q", corpus], cwd=code,
                       env={**os.environ, "MUSETUI_CACHE_DIR": caches[label], **({"PYTHONPATH": code} if code else {})},
                       stdout=subprocess.DEVNULL, check=True)
    for _ in range(runs):
        for label, code in codes.items():
            out.setdefault("first paint, cache on" + label, []).append(
                first_paint(corpus, cache=True, cache_dir=caches[label], code=code)
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="/tmp/bench500")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", metavar="DIR", help="another checkout (git archive of an older commit): its first paints alternate with these")
    ap.add_argument("--first-paint-only", action="store_true", help="measure the first paints only")
    args = ap.parse_args()
    if not Path(args.corpus).is_dir():
        print(f"no corpus at {args.corpus}: python -m musetui_synth.corpus {args.corpus} --size-mb 500 --seed 1")
        return 2
    with tempfile.TemporaryDirectory(prefix="musetui-bench-tui-") as tmp:
        paints = first_paints(args.corpus, args.runs, tmp, args.baseline)
        for label, vals in paints.items():
            got = [v for v in vals if v is not None]
            print(f"{label:<34} " + (f"median {statistics.median(got):.2f}s of {len(got)} "
                                     f"({', '.join(f'{v:.2f}' for v in got)})   (target < 1 s)" if got else "skipped (no tmux)"))
        if args.first_paint_only:
            return 0
        cache_dir = str(Path(tmp) / "cache0")  # filled by first_paints
        big = Path(tmp) / "big"
        make_big_session(big)
        opens = [asyncio.run(open_big(str(big))) for _ in range(args.runs)]
        keys, still = asyncio.run(keys_while_indexing(args.corpus))
        os.environ["MUSETUI_CACHE_DIR"] = cache_dir
        full_keys = asyncio.run(keys_on_full_tree(args.corpus))
        searches = asyncio.run(search_in_tui(args.corpus, args.runs))
    print(f"{'open 100,000 items':<34} median {statistics.median(opens):.2f}s of {len(opens)}   (target < 0.5 s)")
    keys_ms = sorted(k * 1000 for k in keys)
    if not still:
        print("(indexing finished before the last key: the keys were not all pressed under load)")
    print(f"{'key j/k while indexing':<34} median {statistics.median(keys_ms):.0f} ms, slowest {keys_ms[-1]:.0f} ms "
          f"of {len(keys_ms)}   (target < 50 ms)")
    full_ms = sorted(k * 1000 for k in full_keys)
    print(f"{'keys on the full tree':<34} median {statistics.median(full_ms):.0f} ms, slowest {full_ms[-1]:.0f} ms "
          f"of {len(full_ms)} (j, G, g, o, s)   (target < 50 ms)")
    for q, (times, hits, stall) in searches.items():
        print(f"{'search ' + q[:40]:<50} median {statistics.median(times):.2f}s of {len(times)}, "
              f"{hits:,} hits (with the 0.15 s debounce); longest UI stall {stall * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
