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
  and ``O`` (to a flagged session, expanding its parent), ``s`` (a re-sort of every session),
  ``f`` (the flagged-only filter, on and off) and ``space`` (collapse and expand the first
  group) on the finished tree, each on an idle app (the event loop on time for 0.3 s). Each
  is timed twice: until it took effect (the key handled), and until the frame that repaints
  the tree was written (what the user sees; it holds whatever else that frame repaints, such
  as the panes of a session ``o`` opened), and by the CPU time the app's thread spent until
  that frame (``cpu``: on a shared machine the wall times also hold the time other
  processes ran; the CPU time does not, though a busy machine still slows it). Medians per key are printed. ``--keys-only`` runs just this, each run in a fresh interpreter, and with
  ``--baseline`` alternates with the other checkout run by run.
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
#: The checkout whose musetui is measured (a baseline run sets it to the other checkout).
CODE = os.environ.get("MUSETUI_BENCH_CODE") or str(REPO)
sys.path.insert(0, CODE)


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
        started = subprocess.run(
            [*tmux, "new-session", "-d", "-s", "b", "-x", "160", "-y", "48", cmd], env=env, cwd=code
        )
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


#: The keys pressed on the finished tree, in order (``g`` puts the cursor on the first group).
FULL_TREE_KEYS = ["j"] * 30 + ["G", "g", "o", "o", "O", "s", "s", "s", "s", "g", "f", "f", "space", "space"]


async def _quiet(limit: float = 5.0, calm: float = 0.3) -> None:
    """Wait until the event loop has run on time (every 5 ms tick within 3 ms) for ``calm`` seconds.

    So each key meets an idle app: the work a previous key started (a session opening, its
    panes rendering) is not charged to the next key.
    """
    t0 = last_late = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        t = time.perf_counter()
        await asyncio.sleep(0.005)
        now = time.perf_counter()
        if now - t > 0.008:
            last_late = now
        elif now - last_late >= calm:
            return


async def keys_on_full_tree(corpus: str) -> list[tuple[str, float, float, float]]:
    """Per key of :data:`FULL_TREE_KEYS` on the finished tree (the cache on): the key, seconds
    until it took effect, seconds until the frame repainting the tree was written, and the
    CPU seconds of the app's thread until then.
    """
    from musetui.app import MuseApp

    app = MuseApp([corpus], use_cache=True)
    out: list[tuple[str, float, float, float]] = []
    async with app.run_test(size=(160, 48)) as pilot:
        scr = app.main_screen
        tree = scr.session_tree
        await _until(lambda: scr.finished, 300.0)
        tree.focus()
        await pilot.pause(0.5)
        painted: list[float] = []
        painted_cpu: list[float] = []
        tree_drawn = [False]
        render_lines = tree.render_lines
        display = app._display

        def spy_render_lines(*args: Any, **kwargs: Any) -> Any:
            tree_drawn[0] = True
            return render_lines(*args, **kwargs)

        def spy_display(*args: Any, **kwargs: Any) -> Any:
            result = display(*args, **kwargs)
            if tree_drawn[0]:
                painted.append(time.perf_counter())
                painted_cpu.append(time.thread_time())
            return result

        tree.render_lines = spy_render_lines  # type: ignore[method-assign]
        app._display = spy_display  # type: ignore[method-assign]

        def state() -> tuple[Any, ...]:
            cur = scr.current.key if scr.current else None
            return (tree.cursor_line, tree.last_line, tree.session_order, tree.flagged_only, cur)

        for key in FULL_TREE_KEYS:
            await _quiet()
            before = state()
            tree_drawn[0] = False
            painted.clear()
            painted_cpu.clear()
            t0 = time.perf_counter()
            c0 = time.thread_time()
            _key(app, key)
            await _until(lambda before=before: state() != before, 5.0)  # type: ignore[misc]
            handled = time.perf_counter() - t0
            await _until(lambda: bool(painted), 5.0)
            out.append(
                (
                    key,
                    handled,
                    (painted[0] if painted else time.perf_counter()) - t0,
                    (painted_cpu[0] if painted_cpu else time.thread_time()) - c0,
                )
            )
            await asyncio.sleep(0.05)
    return out


def keys_in_subprocess(corpus: str, code: str | None, cache_dir: str) -> list[tuple[str, float, float, float]]:
    """:func:`keys_on_full_tree` in a fresh interpreter, measuring the musetui of ``code`` (None: this one)."""
    env = {**os.environ, "MUSETUI_CACHE_DIR": cache_dir, "MUSETUI_BENCH_CODE": code or str(REPO)}
    if code:
        env["PYTHONPATH"] = code
    done = subprocess.run(
        [sys.executable, __file__, "--corpus", corpus, "--keys-json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return [tuple(row) for row in orjson.loads(done.stdout.strip().splitlines()[-1])]  # type: ignore[misc]


def print_keys(label: str, runs: list[list[tuple[str, float, float, float]]]) -> None:
    """Medians per key over every press of it in every run: handled, painted, and the CPU until painted."""
    per: dict[str, tuple[list[float], list[float], list[float]]] = {}
    for run in runs:
        for key, handled, painted, cpu in run:
            h, p, c = per.setdefault(key, ([], [], []))
            h.append(handled * 1000)
            p.append(painted * 1000)
            c.append(cpu * 1000)
    presses = sum(len(h) for h, _, _ in per.values())
    print(
        f"keys on the full tree{label}: {len(runs)} run(s), {presses} presses, each on an idle app   (target < 50 ms)"
    )
    missed = [key for run in runs for key, handled, _, _ in run if handled >= 5.0]
    if missed:
        print(f"  (no visible effect within 5 s: {', '.join(missed)})")
    for key, (h, p, c) in per.items():
        print(
            f"  {key:<6} handled median {statistics.median(h):6.1f} ms (max {max(h):6.1f})   "
            f"painted median {statistics.median(p):6.1f} ms (max {max(p):6.1f})   "
            f"cpu to paint median {statistics.median(c):6.1f} ms   n={len(h)}"
        )


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
        await _until(lambda: scr.finished, 300)  # (indexing is False before its first progress message)
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
        subprocess.run(
            [sys.executable, "-m", "musetui", "scan", "--json", "-q", corpus],
            cwd=code,
            env={**os.environ, "MUSETUI_CACHE_DIR": caches[label], **({"PYTHONPATH": code} if code else {})},
            stdout=subprocess.DEVNULL,
            check=True,
        )
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
    ap.add_argument(
        "--baseline",
        metavar="DIR",
        help="another checkout (git archive of an older commit): its first paints alternate with these",
    )
    ap.add_argument("--first-paint-only", action="store_true", help="measure the first paints only")
    ap.add_argument("--keys-only", action="store_true", help="measure the keys on the full tree only")
    ap.add_argument(
        "--cache-dir",
        help="a directory for the caches (one per checkout) kept between runs (--keys-only; filled if empty)",
    )
    ap.add_argument("--keys-json", action="store_true", help=argparse.SUPPRESS)  # one run, as JSON (a subprocess)
    args = ap.parse_args()
    if args.keys_json:
        print(orjson.dumps(asyncio.run(keys_on_full_tree(args.corpus))).decode())
        return 0
    if not Path(args.corpus).is_dir():
        print(f"no corpus at {args.corpus}: python -m musetui_synth.corpus {args.corpus} --size-mb 500 --seed 1")
        return 2
    if args.keys_only:
        return keys_only(args.corpus, args.runs, args.baseline, args.cache_dir)
    with tempfile.TemporaryDirectory(prefix="musetui-bench-tui-") as tmp:
        paints = first_paints(args.corpus, args.runs, tmp, args.baseline)
        for label, vals in paints.items():
            got = [v for v in vals if v is not None]
            print(
                f"{label:<34} "
                + (
                    f"median {statistics.median(got):.2f}s of {len(got)} "
                    f"({', '.join(f'{v:.2f}' for v in got)})   (target < 1 s)"
                    if got
                    else "skipped (no tmux)"
                )
            )
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
    print(
        f"{'key j/k while indexing':<34} median {statistics.median(keys_ms):.0f} ms, slowest {keys_ms[-1]:.0f} ms "
        f"of {len(keys_ms)}   (target < 50 ms)"
    )
    print_keys("", [full_keys])
    for q, (times, hits, stall) in searches.items():
        print(
            f"{'search ' + q[:40]:<50} median {statistics.median(times):.2f}s of {len(times)}, "
            f"{hits:,} hits (with the 0.15 s debounce); longest UI stall {stall * 1000:.0f} ms"
        )
    return 0


def keys_only(corpus: str, runs: int, baseline: str | None, cache_dir: str | None) -> int:
    """The keys on the full tree, ``runs`` times, alternating with ``baseline`` run by run."""
    codes = {"": None} if baseline is None else {"": None, " (baseline)": baseline}
    with tempfile.TemporaryDirectory(prefix="musetui-bench-keys-") as tmp:
        caches = {label: str(Path(cache_dir or tmp) / f"cache{i}") for i, label in enumerate(codes)}
        for label, code in codes.items():  # fill each checkout's cache (a reused one is only checked)
            subprocess.run(
                [sys.executable, "-m", "musetui", "scan", "--json", "-q", corpus],
                cwd=code,
                env={**os.environ, "MUSETUI_CACHE_DIR": caches[label], **({"PYTHONPATH": code} if code else {})},
                stdout=subprocess.DEVNULL,
                check=True,
            )
        results: dict[str, list[list[tuple[str, float, float, float]]]] = {label: [] for label in codes}
        for _ in range(runs):
            for label, code in codes.items():
                load = os.getloadavg()[0]
                cpu0 = os.times()
                results[label].append(keys_in_subprocess(corpus, code, caches[label]))
                cpu1 = os.times()
                cpu = (cpu1.children_user - cpu0.children_user) + (cpu1.children_system - cpu0.children_system)
                print(f"run{label}: load {load:.2f} before, {cpu:.1f} CPU s (load and keys)", flush=True)
    for label, got in results.items():
        print_keys(label, got)
    return 0


if __name__ == "__main__":
    sys.exit(main())
