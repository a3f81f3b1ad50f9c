"""Files per second of ``scan --json --no-cache``: local, and on a 2-worker Dask LocalCluster (needs musetui[fleet]).

Usage: python bench/bench_dask.py [--corpus DIR] [--size-mb 100] [--runs 3] [--workers 2]

The corpus is generated (seeded) when DIR does not exist. Runs alternate local and Dask,
so machine noise hits both alike; medians are reported, and every Dask output is
compared byte for byte with the local one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _scan(corpus: Path, extra: list[str]) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", str(corpus), "--json", "--no-cache", "-q", *extra],
        capture_output=True,
        check=True,
    ).stdout
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one JSON summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--corpus", type=Path, default=Path("/tmp/musetui-bench-corpus"))
    ap.add_argument("--size-mb", type=float, default=100.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    if not args.corpus.exists():
        from musetui_synth.corpus import generate

        generate(args.corpus, args.size_mb, args.seed)
    from distributed import LocalCluster

    from musetui.core.walk import walk_roots

    files = walk_roots([str(args.corpus)], [])
    n_files = len(files)
    n_bytes = sum(f.size for f in files)
    local: list[float] = []
    dask: list[float] = []
    identical = True
    with LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",
        silence_logs=40,
    ) as cluster:
        address = cluster.scheduler_address
        _scan(args.corpus, ["--dask", address])  # warm the workers' imports
        for _ in range(args.runs):
            t, ref = _scan(args.corpus, [])
            local.append(t)
            t, out = _scan(args.corpus, ["--dask", address])
            dask.append(t)
            identical = identical and out == ref
    ml, md = statistics.median(local), statistics.median(dask)
    result = {
        "corpus": str(args.corpus),
        "files": n_files,
        "bytes": n_bytes,
        "cpus": os.cpu_count(),
        "runs": args.runs,
        "local_s": [round(x, 2) for x in local],
        "dask_s": [round(x, 2) for x in dask],
        "local_files_per_s": round(n_files / ml, 1),
        "dask_files_per_s": round(n_files / md, 1),
        "local_mib_per_s": round(n_bytes / 2**20 / ml, 2),
        "dask_mib_per_s": round(n_bytes / 2**20 / md, 2),
        "dask_workers": args.workers,
        "identical_output": identical,
    }
    print(json.dumps(result, indent=2))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
