"""Peak memory and CPU of ``musetui scan`` (cache off, filling it, warm) and ``show --line`` on hostile inputs.

Usage::

    python bench/bench_memory.py                 # every input but the 100,000 sessions
    python bench/bench_memory.py --sessions      # that one too (slow)
    python bench/bench_memory.py --only gz_tiny,alias_bomb --baseline /path/to/other/checkout
    python bench/bench_memory.py --only sessions --keep /tmp/inputs --runs json,jcached,jwarm,jtouched

Each input is built in a temporary directory (written block by block, never held whole), then
scanned by a child process; its peak RSS is the child's own maximum (``wait4``'s ``ru_maxrss``)
and its CPU is user + system. The targets (issue 24): at most 300 MB peak RSS per run, and each
bomb diagnosed within 10 s of CPU. The inputs:

* ``lines_2g``: a 2 GiB file of 3-byte lines (``{}\\n``);
* ``tiny_64m`` and ``gz_tiny``: 64 MiB of ``{}`` lines, plain and as ``.jsonl.gz``;
* ``cassette_bomb``: a VCR cassette of 3 interactions, each a gzip ``!!binary`` body of 40 MiB
  of ``{}`` lines;
* ``alias_bomb``: a cassette whose one interaction names one 100 KB string through 20,000 aliases;
* ``tiny_130m`` and ``gz_tiny_130m``: 130 MiB of ``{}`` lines, plain and gzip (the ``.gz`` one
  is over the 64 MiB expansion limit: refused with a diagnostic);
* ``sessions`` (``--sessions``): 100,000 tiny sessions of one line each.

Measured (issue 24, many tiny lines with the cache on; peak RSS MB, 2-core shared machine)::

    input         scan --no-cache   scan, fresh cache (before -> after)   show --line 2 (before -> after)
    32 MiB {}      125               430 -> 140                            -
    tiny_64m       157               805 -> 168                            785 -> 184
    gz_tiny        157               520 -> 169                            - -> 198
    tiny_130m      183               1563 -> 181                           - -> 198
    gz_tiny_130m   157 (refused)     - -> 167                              - -> 167

"Before" is main at be29036: the resume state held every record's start (8 bytes a record),
copied while the cache stored it. The cache for one such file is 10 KiB (0.01% of 130 MiB),
and the warm ``scan`` reuses the stored output (40 MB, under 1 s).

Measured (issue 27, many sessions; peak RSS MB, main at 6542801 -> after). 100,000 one-line
sessions (``--only sessions --keep DIR --runs scan,cached,warm,touched,json,jcached,jwarm,jtouched``)::

    run                                  scan (table)    scan --json
    --no-cache                           323 -> 177      241 -> 174
    filling a fresh cache (cached)       621 -> 204      1373 -> 206
    warm, nothing changed (warm)         397 -> 231      190 -> 83
    one file's mtime moved (touched)     587 -> 244      535 -> 284

The 500 MB bench corpus (``/usr/bin/time -v`` of ``scan -q [--json] /work/corpora/bar500``, a
fresh ``MUSETUI_CACHE_DIR``: 18,900 sessions, 524 MB)::

    run                                  scan (table)    scan --json
    --no-cache                           178 -> 97       145 -> 92
    filling a fresh cache                413 -> 125      409 -> 144
    warm                                 209 -> 114      147 -> 73 (0.9 s wall)
    cache size (du -sb)                  109 -> 87 MB    114 -> 92 MB (21.7% -> 17.5% of the corpus)

What holds the memory now (``tests/unit/test_memory_per_session.py`` counts it with tracemalloc:
1,770-2,670 -> 1,255-1,275 bytes held per light session): light sessions, for the table too,
each with its scan record packed (:mod:`musetui.core.packed`) and its shared values held once;
the cache written in 8 MB batches as the scan goes and its snapshot rewritten chunk by chunk
from the rows (light forms only in the snapshot); a warm load making each session as its chunk
is read; the stored output compressed as written and replayed a piece at a time; the table
printed from rows made as read.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024


def _repeat(path: Path, line: bytes, total: int) -> None:
    """Write ``line`` repeated to ``total`` bytes, a 1 MiB block at a time."""
    block = line * (MIB // len(line))
    with path.open("wb") as f:
        left = total
        while left > 0:
            chunk = block[:left]
            f.write(chunk)
            left -= len(chunk)


def lines_2g(d: Path) -> Path:
    _repeat(d / "lines.jsonl", b"{}\n", 2048 * MIB - (2048 * MIB) % 3)
    return d / "lines.jsonl"


def tiny_64m(d: Path) -> Path:
    _repeat(d / "tiny.jsonl", b"{}\n", 64 * MIB - (64 * MIB) % 3)
    return d / "tiny.jsonl"


def tiny_130m(d: Path) -> Path:
    _repeat(d / "tiny130.jsonl", b"{}\n", 130 * MIB - (130 * MIB) % 3)
    return d / "tiny130.jsonl"


def gz_tiny(d: Path, mib: int = 64) -> Path:
    block = b"{}\n" * (MIB // 3)
    path = d / ("tiny.jsonl.gz" if mib == 64 else f"tiny{mib}.jsonl.gz")
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(mib * MIB // len(block)):
            f.write(block)
    return path


def gz_tiny_130m(d: Path) -> Path:
    return gz_tiny(d, 130)


def _gz_lines(n_bytes: int) -> bytes:
    import zlib

    c = zlib.compressobj(9, wbits=31)
    block = b"{}\n" * (MIB // 3)
    out = [c.compress(block) for _ in range(n_bytes // len(block))]
    return b"".join([*out, c.flush()])


def cassette_bomb(d: Path, interactions: int = 3, body_bytes: int = 40 * MIB) -> Path:
    b64 = base64.b64encode(_gz_lines(body_bytes)).decode()
    wrapped = "\n".join("        " + b64[i : i + 76] for i in range(0, len(b64), 76))
    one = (
        "- request:\n    body: null\n    headers: {}\n    method: POST\n"
        "    uri: https://api.openai.com/v1/chat/completions\n"
        "  response:\n    body:\n      string: !!binary |\n" + wrapped + "\n"
        "    headers:\n      Content-Encoding: [gzip]\n      Content-Type: [application/json]\n"
        "    status: {code: 200, message: OK}\n"
    )
    path = d / "bomb.yaml"
    path.write_text("interactions:\n" + one * interactions + "version: 1\n")
    return path


def alias_bomb(d: Path, aliases: int = 20_000, size: int = 100_000) -> Path:
    path = d / "aliases.yaml"
    path.write_text(
        "interactions:\n- request: {body: null, headers: {}, method: GET, uri: 'https://api.openai.com/v1/x'}\n"
        f"  response:\n    body: {{string: &a '{'x' * size}'}}\n    headers: {{}}\n    status: {{code: 200}}\n"
        "  extra:\n" + "  - *a\n" * aliases + "version: 1\n"
    )
    return path


def sessions(d: Path, n: int = 100_000) -> Path:
    root = d / "sessions"
    for i in range(n):
        sub = root / f"{i // 1000:03d}"
        if i % 1000 == 0:
            sub.mkdir(parents=True)
        (sub / f"s{i}.jsonl").write_bytes(b'{"type":"message","id":"m%d","model":"gpt-4o"}\n' % i)
    return root


INPUTS: dict[str, Callable[[Path], Path]] = {
    "lines_2g": lines_2g,
    "tiny_64m": tiny_64m,
    "gz_tiny": gz_tiny,
    "tiny_130m": tiny_130m,
    "gz_tiny_130m": gz_tiny_130m,
    "cassette_bomb": cassette_bomb,
    "alias_bomb": alias_bomb,
}


def run(checkout: Path, args: list[str], cache: str, max_cpu: int = 0) -> tuple[float, float, float, str]:
    """Run musetui with ``args`` in a child; (its peak RSS MB, CPU s, wall s, last output line).

    ``max_cpu``: the child is killed (SIGXCPU) after this many CPU seconds; its peak so far is reported.
    """
    import resource

    def limit() -> None:
        if max_cpu:
            resource.setrlimit(resource.RLIMIT_CPU, (max_cpu, max_cpu))

    env = {**os.environ, "PYTHONPATH": str(checkout), "XDG_CACHE_HOME": cache}
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as out:
        # (run in the checkout: ``-m`` puts the working directory before PYTHONPATH)
        p = subprocess.Popen(
            [sys.executable, "-m", "musetui", *args],
            env=env,
            cwd=checkout,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=limit,
        )
        _pid, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        out.seek(0)
        text = out.read().decode("utf-8", "replace").strip().splitlines()
    return ru.ru_maxrss / 1024, ru.ru_utime + ru.ru_stime, wall, (text[-1] if text else "")[:150]


def _size(top: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _dirs, files in os.walk(top) for f in files)


def _touch_one(path: Path) -> None:
    """Move the mtime of one file under ``path`` (the first in sorted order): a change the next scan must see."""
    target = path
    while target.is_dir():
        target = min(target.iterdir())
    now = time.time_ns()
    os.utime(target, ns=(now, now))


def measure(
    checkout: Path, path: Path, cache: str, max_cpu: int, runs: tuple[str, ...]
) -> list[tuple[str, float, float, float, str]]:
    """Each run in a fresh child (the child's own peak).

    ``scan``: ``scan --no-cache``; ``show``: ``show --line 2`` (which scans with the cache, a fresh
    one); ``cached``: ``scan`` filling a fresh cache (its size is reported); ``warm``: ``scan`` again
    on that cache (its ``--stats`` line says whether the stored output was reused); ``touched``:
    ``scan`` again after one file's mtime moved (every other file from the cache). ``json``,
    ``jcached``, ``jwarm`` and ``jtouched`` are the same four with ``--json`` (a cache of their own).
    """
    rows = []
    fresh = os.path.join(cache, "fresh")
    freshj = os.path.join(cache, "freshj")
    plans = (
        ("scan", ["scan", "--no-cache", "-q", str(path)], cache),
        ("show", ["show", str(path), "--line", "2"], cache),
        ("cached", ["scan", "-q", str(path)], fresh),
        ("warm", ["scan", "-q", "--stats", str(path)], fresh),
        ("touched", ["scan", "-q", "--stats", str(path)], fresh),
        ("json", ["scan", "--json", "--no-cache", "-q", str(path)], cache),
        ("jcached", ["scan", "--json", "-q", str(path)], freshj),
        ("jwarm", ["scan", "--json", "-q", "--stats", str(path)], freshj),
        ("jtouched", ["scan", "--json", "-q", "--stats", str(path)], freshj),
    )
    for label, args, where in plans:
        if label in runs:
            if label in ("touched", "jtouched"):
                _touch_one(path)
            rss, cpu, wall, last = run(checkout, args, where, max_cpu)
            if label in ("cached", "jcached"):
                total = _size(path) if path.is_dir() else path.stat().st_size
                last = f"cache {_size(where) / 1024:.0f} KiB ({100 * _size(where) / max(1, total):.2f}% of the input) {last}"
            rows.append((label, rss, cpu, wall, last))
    return rows


def _built(build: Callable[[Path], Path], name: str, where: Path) -> Path:
    """The input ``name`` under ``where``, built unless an earlier run left it there (``--keep``)."""
    home = where / name
    mark = home / ".built"
    if mark.exists():
        return home / mark.read_text()
    home.mkdir(parents=True, exist_ok=True)
    path = build(home)
    mark.write_text(str(path.relative_to(home)))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated inputs: " + ",".join([*INPUTS, "sessions"]))
    ap.add_argument("--sessions", action="store_true", help="also 100,000 tiny sessions (slow to build)")
    ap.add_argument("--baseline", type=Path, help="another checkout, measured on the same inputs")
    ap.add_argument(
        "--max-cpu", type=int, default=0, help="kill each run after this many CPU seconds (peak so far reported)"
    )
    ap.add_argument(
        "--runs",
        default="scan,show,cached,warm",
        help="which runs (comma-separated): scan, show, cached, warm, touched, json, jcached, jwarm, jtouched",
    )
    ap.add_argument(
        "--keep",
        type=Path,
        help="build each input under this directory (kept; reused when already there) instead of a temporary one",
    )
    a = ap.parse_args()
    names = a.only.split(",") if a.only else [*INPUTS, *(["sessions"] if a.sessions else [])]
    builders = {**INPUTS, "sessions": sessions}
    checkouts = [("this", HERE)] + ([("baseline", a.baseline)] if a.baseline else [])
    print(f"{'input':14} {'code':9} {'run':5} {'peak MB':>8} {'CPU s':>7} {'wall s':>7}  last line")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="bench-mem-") as d:
            path = _built(builders[name], name, a.keep or Path(d))
            for tag, checkout in checkouts:
                with tempfile.TemporaryDirectory(prefix="bench-mem-cache-") as cache:
                    for label, rss, cpu, wall, last in measure(
                        checkout, path, cache, a.max_cpu, tuple(a.runs.split(","))
                    ):
                        print(f"{name:14} {tag:9} {label:5} {rss:8.0f} {cpu:7.2f} {wall:7.2f}  {last}", flush=True)


if __name__ == "__main__":
    main()
