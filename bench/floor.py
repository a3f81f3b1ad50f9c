#!/usr/bin/env python3
"""How fast can a pure-Python scan be? Stage floors, timed beside the orjson loop.

Usage:
    python bench/floor.py [--corpus DIR] [--runs 5] [--workers 2]

Each stage does strictly less than ``musetui scan --no-cache`` does, over the same files
and with the same number of worker processes:

* ``read+split``: read every file, split it into lines;
* ``+validate``: and validate every line with simdjson (what the scan does for every line);
* ``+find re``: and run the four fingerprint regexes over each file, only iterating the
  matches (no decoding, no evidence, no attribution, no output);
* ``+find``: the same matches as the scan finds them (one Hyperscan database for the
  literal-led heads, each confirmed by its regex; the ``_``-anchored pass on ``re``).

The orjson loop is the target's baseline (the same loop as bench/bench.py). Stages run in
rotation with it, run by run, so machine noise hits them alike; medians are printed.
If ``+find`` alone is near 1.0x, no pure-Python scan that finds fingerprints with
CPython's ``re`` can meet a 1.0x cold-scan target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench import ORJSON_LOOP, bench_env  # noqa: E402

STAGES = ("read+split", "+validate", "+find re", "+find")


def _files(root: str) -> list[str]:
    out: list[str] = []
    for base, dirs, names in os.walk(root):
        dirs.sort()
        out.extend(os.path.join(base, n) for n in sorted(names) if n.endswith((".jsonl", ".json")))
    return out


def _work(args: tuple[list[str], int]) -> int:
    import simdjson

    from musetui.core.fingerprints import extract

    paths, stage = args
    parser = simdjson.Parser()
    found = 0
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if stage >= 1:
            for line in lines:
                if line:
                    try:
                        doc = parser.parse(line)
                        del doc
                    except (ValueError, RuntimeError, UnicodeDecodeError):
                        pass
        if stage >= 2:
            passes = extract.candidates_re(data) if stage == 2 else extract._candidates(data)
            for matches in passes:
                for _m in matches:
                    found += 1
    return found


def run_stage(corpus: str, stage: int, workers: int) -> float:
    """Seconds for one stage: walk plus the work spread over ``workers`` processes."""
    t = time.perf_counter()
    files = _files(corpus)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        sum(pool.map(_work, [(files[i::workers], stage) for i in range(workers)]))
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="/tmp/bench500")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    if not Path(args.corpus).is_dir():
        print(
            f"no corpus at {args.corpus}: make one with python -m musetui_synth.corpus {args.corpus} --size-mb 500 --seed 1"
        )
        return 2
    times: dict[str, list[float]] = {"orjson loop": [], **{s: [] for s in STAGES}}
    for i in range(args.runs):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", ORJSON_LOOP, args.corpus], check=True, stdout=subprocess.DEVNULL, env=bench_env()
        )
        times["orjson loop"].append(time.perf_counter() - t)
        for n, name in enumerate(STAGES):
            times[name].append(run_stage(args.corpus, n, args.workers))
        print(f"run {i + 1}/{args.runs}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items()), flush=True)
    base = statistics.median(times["orjson loop"])
    print(f"\nstage ({args.workers} workers)   median s   / orjson loop")
    for name, vals in times.items():
        med = statistics.median(vals)
        print(f"{name:<24} {med:8.2f}   {med / base:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
