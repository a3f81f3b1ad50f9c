"""Benchmark ``musetui search`` against ``rg`` on the same files, warm.

Usage::

    python bench/bench_search.py --size-mb 500            # generate (or reuse) a corpus, then time
    python bench/bench_search.py --corpus /path/to/tree   # time an existing tree
    python bench/bench_search.py --size-mb 20 --local-gen # no musetui_synth.corpus: tiny local generator

The corpus comes from ``python -m musetui_synth.corpus OUT --size-mb N --seed 1``. Each query is
timed three ways, interleaved run by run so that they share the machine's conditions, after one
warm-up round (the page cache holds the corpus):

* ``rg``: ``rg -uu -n --no-heading`` (``-S`` smart case like musetui, ``-F`` for literals) over
  the candidate file types musetui reads, output read through a pipe (``rg`` goes quiet when
  its output is ``/dev/null``);
* ``app``: the app's path. A child process indexes the corpus once (``Index(use_cache=True)``,
  as the app does), starts a :class:`~musetui.core.search.SearchPool` ahead from a thread, then
  times :func:`musetui.core.search.search_sessions` on that warm pool for each query (the app
  searches the sessions it holds, from a worker thread, and keeps its pool between
  searches). ``--no-app`` skips it;
* ``lib`` (cold): :func:`musetui.core.search.run_search` in this process, hits consumed: the walk
  included, and any worker process started for this one search;
* ``cli``: ``python -m musetui search CORPUS QUERY --json``, output read through a pipe.

``--baseline DIR`` times another checkout of musetui in the same rotation (``app`` in its own
child; ``lib`` in a child process, the search timed inside it after a warm-up; ``cli`` as
above), for before/after.

Reported: median seconds of ``--runs`` runs, the ratio to ``rg``, median CPU seconds (user +
system of the process and its children: the search's worker processes, rg's threads) and their
ratio to ``rg``'s, hits (and ``rg``'s matching
lines, which should agree for plain literals and regexes), and peak RSS (``rg`` and ``cli``:
that child's own maximum, from ``wait4``; ``lib``: this process).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The cold ``lib`` runs in this process: this checkout's musetui, not an installed one.
sys.path.insert(0, str(ROOT))
RG = shutil.which("rg") or "/usr/bin/rg"
#: The file types musetui reads (see musetui.core.index); rg gets the same set.
RG_GLOBS = [
    "*.jsonl",
    "*.json",
    "*.ndjson",
    "*.jsonlines",
    "*.txt",
    "*.log",
    "!agent-*.meta.json",
    "!MANIFEST.json",
]


@dataclass
class Timing:
    """Runs of one tool on one query."""

    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    hits: int = -1

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu) if self.cpu else float("nan")


TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def _vs_rg(name: str, t: Timing, rg: Timing) -> dict[str, float]:
    """A timing's median wall and CPU seconds, and their ratios to rg's, as ``name_*`` row fields."""
    return {
        f"{name}_s": round(t.median, 3),
        f"{name}_ratio": round(t.median / rg.median, 2),
        f"{name}_cpu_s": round(t.cpu_median, 3),
        f"{name}_cpu_ratio": round(t.cpu_median / rg.cpu_median, 2),
    }


def run_child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int, float]:
    """Run a command, read its stdout through a pipe; (seconds, output lines, peak RSS in KiB, CPU seconds).

    CPU seconds are user + system of the command and the children it waited for (``wait4``).

    The peak RSS is the command's own (GNU time's %M): ``wait4`` on a child forked from this
    big process would report this process's pages.
    """
    rss_file = Path(f"/tmp/.bench_search_rss_{os.getpid()}")
    cmd = [TIME, "-f", "%M", "-o", str(rss_file), *argv] if TIME else argv
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    lines = 0
    for chunk in iter(lambda: proc.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
        lines += chunk.count(b"\n")
    _pid, _status, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    elapsed = time.perf_counter() - t0
    rss = int(usage.ru_maxrss)
    if TIME:
        with contextlib.suppress(OSError, ValueError, IndexError):
            rss = int(rss_file.read_text().split()[-1])
    return elapsed, lines, rss, usage.ru_utime + usage.ru_stime


def rg_argv(query: Query, corpus: Path) -> list[str]:
    argv = [RG, "-uu", "-n", "--no-heading", "-S"]
    for g in RG_GLOBS:
        argv += ["-g", g]
    if query.literal:
        argv.append("-F")
    argv += ["-e", query.rg, str(corpus)]
    return argv


@dataclass
class Query:
    """One benchmark query: musetui syntax and the equivalent rg pattern."""

    name: str
    musetui: str
    rg: str
    literal: bool


def pick_queries(corpus: Path) -> list[Query]:
    """A rare literal (an OpenAI-shaped call id), a smart-case word, and two regexes."""
    call_id = None
    for p in sorted(corpus.rglob("*.jsonl")):
        m = re.search(rb"call_[A-Za-z0-9]{24}(?![A-Za-z0-9])", p.read_bytes())
        if m and re.search(rb"[A-Z]", m.group()):
            call_id = m.group().decode()
            break
    out = []
    if call_id:
        out.append(Query("literal id", call_id, call_id, True))
    out.append(Query("word (smart case)", "muse-special", "muse-special", True))
    out.append(
        Query(
            "regex rare",
            "/gpt_responses_v1:gAAAAABq[A-Za-z0-9_-]{3}Q/",
            "gpt_responses_v1:gAAAAABq[A-Za-z0-9_-]{3}Q",
            False,
        )
    )
    out.append(Query("regex ids", "/rs_[0-9a-f]{18}6a9[0-9a-f]{5}/", "rs_[0-9a-f]{18}6a9[0-9a-f]{5}", False))
    return out


def machine() -> str:
    """The 1-minute load average and the CPU pressure (PSI ``some avg10``, Linux), for the record."""
    out = f"load {os.getloadavg()[0]:.2f}"
    with contextlib.suppress(OSError, IndexError), open("/proc/pressure/cpu") as f:
        out += f", CPU pressure {f.readline().split()[1].split('=')[1]}%"
    return out


def _cpu() -> float:
    """User + system seconds of this process and of its reaped children (the search's workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def lib_run(corpus: Path, query: str, workers: int | None) -> tuple[float, int, float]:
    """Seconds, hits and CPU seconds of one in-process search."""
    from musetui.core.search import run_search

    c0 = _cpu()
    t0 = time.perf_counter()
    n = sum(1 for _ in run_search([str(corpus)], query, workers=workers))
    return time.perf_counter() - t0, n, _cpu() - c0


LIB_AT = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
from musetui.core.search import run_search
corpus, query = sys.argv[2], sys.argv[3]
workers = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] != "None" else None
def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
sum(1 for _ in run_search([corpus], query, workers=workers))
c0 = cpu()
t0 = time.perf_counter()
n = sum(1 for _ in run_search([corpus], query, workers=workers))
print(time.perf_counter() - t0, n, cpu() - c0)
"""

APP_AT = r"""
import json, os, sys, threading, time
sys.path.insert(0, sys.argv[1])
from musetui.core.index import Index
from musetui.core.search import SearchPool, search_sessions

TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu():
    # user + system seconds of this process and of its live descendants (the pool's workers,
    # children of a fork server), from /proc; reaped children through os.times.
    kids, cpu = {}, {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    st = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            kids.setdefault(int(st[1]), []).append(int(name))
            cpu[int(name)] = (int(st[11]) + int(st[12])) / TICK
    total, todo = 0.0, list(kids.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += kids.get(pid, [])
    t = os.times()
    return total + t.user + t.system + t.children_user + t.children_system


def serve():
    # as the app: the index's sessions, a SearchPool started ahead (from a thread), then
    # search_sessions per query from a worker thread, the pool kept warm between searches
    index = Index([sys.argv[2]], use_cache=True).scan()
    sessions = list(index.sessions)
    pool = SearchPool()
    pool.warm()
    print("ready", len(sessions), flush=True)
    for line in sys.stdin:
        query = json.loads(line)
        c0 = tree_cpu()
        t0 = time.perf_counter()
        n = sum(1 for _ in search_sessions(list(sessions), query, pool=pool))
        secs = time.perf_counter() - t0
        print(secs, n, tree_cpu() - c0, flush=True)
    pool.close()


if __name__ == "__main__":
    t = threading.Thread(target=serve)  # (the app searches from a thread: its pool is not forked)
    t.start()
    t.join()
"""


class AppServer:
    """The app's search path, kept running in a child process (index built once, pool warm)."""

    def __init__(self, repo: Path, corpus: Path, env: dict[str, str]) -> None:
        script = Path(f"/tmp/.bench_search_app_{os.getpid()}.py")
        script.write_text(APP_AT)
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(repo), str(corpus)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline().split()
        if not ready or ready[0] != "ready":
            raise RuntimeError(f"the app-path child for {repo} did not start")
        self.sessions = int(ready[1])

    def run(self, query: str) -> tuple[float, int, float]:
        """Seconds, hits and CPU seconds (the child and its pool) of one search."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(query) + "\n")
        self.proc.stdin.flush()
        secs, n, cpu = self.proc.stdout.readline().split()
        return float(secs), int(n), float(cpu)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


CLI_AT = "import runpy, sys; sys.path.insert(0, {repo!r}); sys.argv[0] = 'musetui'; runpy.run_module('musetui', run_name='__main__')"


def baseline_lib(repo: Path, corpus: Path, query: str, workers: int | None = None) -> tuple[float, int, float]:
    """Seconds, hits and CPU seconds of one in-process search by another checkout (timed in a child)."""
    out = subprocess.run(
        [sys.executable, "-c", LIB_AT, str(repo), str(corpus), query, str(workers)],
        capture_output=True,
        text=True,
        check=True,
    )
    secs, n, cpu = out.stdout.split()
    return float(secs), int(n), float(cpu)


def local_corpus(out: Path, size_mb: int, seed: int) -> None:
    """A tiny stand-in for musetui_synth.corpus: sample transcripts copied with fresh ids."""
    rnd = random.Random(seed)
    src = [p for p in (ROOT / "sample_transcripts").rglob("*.jsonl")]
    templates = [(p.relative_to(ROOT / "sample_transcripts"), p.read_bytes()) for p in src]
    hexrun = re.compile(rb"(?<![0-9a-f])[0-9a-f]{12,}(?![0-9a-f])")
    total, i = 0, 0
    while total < size_mb * 1024 * 1024:
        rel, body = templates[i % len(templates)]
        key = b"%08x" % rnd.getrandbits(32)
        # fresh ids (hex runs with a letter), numbers left alone so that every line stays JSON
        body = hexrun.sub(
            lambda m, key=key: key + m.group()[8:] if re.search(rb"[a-f]", m.group()) else m.group(),  # type: ignore[misc]
            body,
        )
        dest = out / f"s{i:06d}" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(body)
        total += len(body)
        i += 1


def ensure_corpus(args: argparse.Namespace) -> Path:
    if args.corpus:
        return Path(args.corpus)
    out = Path(args.out or f"/tmp/musetui-search-bench-{args.size_mb}mb")
    if out.exists() and any(out.iterdir()):
        return out
    out.mkdir(parents=True, exist_ok=True)
    if args.local_gen:
        local_corpus(out, args.size_mb, args.seed)
        return out
    try:
        import musetui_synth.corpus  # noqa: F401
    except ImportError:
        sys.exit("musetui_synth.corpus is missing: pass --local-gen for the tiny local generator")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "musetui_synth.corpus",
            str(out),
            "--size-mb",
            str(args.size_mb),
            "--seed",
            str(args.seed),
        ],
        check=True,
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help="an existing tree to search")
    ap.add_argument("--size-mb", type=int, default=500, help="size of the generated corpus")
    ap.add_argument("--out", help="where to generate it (default /tmp/musetui-search-bench-<N>mb)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--local-gen", action="store_true", help="use the tiny local generator")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--workers",
        type=int,
        default=None,
        help="cold lib (and its baseline): worker processes (default: musetui's choice)",
    )
    ap.add_argument("--query", action="append", default=[], help="extra musetui query (literal for rg: -F)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON too")
    ap.add_argument("--only", action="append", default=[], help="time only the queries whose name starts with this")
    ap.add_argument(
        "--no-app", action="store_true", help="skip the app path (it indexes the corpus first, through the cache)"
    )
    ap.add_argument("--baseline", type=Path, default=None, help="another musetui checkout to time beside this one")
    args = ap.parse_args()

    corpus = ensure_corpus(args)
    files = [p for p in corpus.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    print(
        f"corpus {corpus}: {len(files):,} files, {size / 2**20:,.1f} MiB; rg {RG}; {os.cpu_count()} CPUs; "
        f"load average {os.getloadavg()[0]:.2f} (other processes skew every timing)"
    )
    queries = pick_queries(corpus)
    queries += [Query(f"extra {q}", q, q, True) for q in args.query]
    if args.only:
        queries = [q for q in queries if any(q.name.startswith(o) for o in args.only)]
    # Bytecode cached (outside the tree), as an installed package has it.
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        PYTHONPYCACHEPREFIX=os.environ.get("PYTHONPYCACHEPREFIX", "/tmp/musetui-bench-pycache"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cli = [sys.executable, "-m", "musetui", "search", str(corpus)]
    results = []
    base_cli = None
    if args.baseline:
        base_cli = [sys.executable, "-c", CLI_AT.format(repo=str(args.baseline.resolve())), "search", str(corpus)]
    app = base_app = None
    if not args.no_app:
        app = AppServer(ROOT, corpus, env)
        if args.baseline:
            base_app = AppServer(args.baseline.resolve(), corpus, env)
        print(f"app path: {app.sessions:,} sessions indexed, search pool warm")
    for q in queries:
        before = machine()
        rg, lib, clit, appt = Timing(), Timing(), Timing(), Timing()
        blib, bcli, bapp = Timing(), Timing(), Timing()
        # warm-up round (page cache, imports, the pools' databases), not counted
        run_child(rg_argv(q, corpus))
        lib_run(corpus, q.musetui, args.workers)
        run_child([*cli, q.musetui, "--json"], env)
        for server in (app, base_app):
            if server is not None:
                server.run(q.musetui)
        for _ in range(args.runs):
            s, n, rss, c = run_child(rg_argv(q, corpus))
            rg.seconds.append(s)
            rg.cpu.append(c)
            rg.rss_kb.append(rss)
            rg.hits = n
            if app is not None:
                s, n, c = app.run(q.musetui)
                appt.seconds.append(s)
                appt.cpu.append(c)
                appt.hits = n
            if base_app is not None:
                s, n, c = base_app.run(q.musetui)
                bapp.seconds.append(s)
                bapp.cpu.append(c)
                bapp.hits = n
            s, n, c = lib_run(corpus, q.musetui, args.workers)
            lib.seconds.append(s)
            lib.cpu.append(c)
            lib.hits = n
            lib.rss_kb.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            s, n, rss, c = run_child([*cli, q.musetui, "--json"], env)
            clit.seconds.append(s)
            clit.cpu.append(c)
            clit.rss_kb.append(rss)
            clit.hits = n
            if args.baseline and base_cli is not None:
                s, n, c = baseline_lib(args.baseline, corpus, q.musetui, args.workers)
                blib.seconds.append(s)
                blib.cpu.append(c)
                blib.hits = n
                s, n, rss, c = run_child([*base_cli, q.musetui, "--json"], env)
                bcli.seconds.append(s)
                bcli.cpu.append(c)
                bcli.hits = n
        row = {
            "query": q.name,
            "machine": f"{before} -> {machine()}",
            "musetui": q.musetui,
            "rg_s": round(rg.median, 3),
            "lib_s": round(lib.median, 3),
            "cli_s": round(clit.median, 3),
            "lib_ratio": round(lib.median / rg.median, 2),
            "cli_ratio": round(clit.median / rg.median, 2),
            "rg_cpu_s": round(rg.cpu_median, 3),
            "lib_cpu_s": round(lib.cpu_median, 3),
            "cli_cpu_s": round(clit.cpu_median, 3),
            "lib_cpu_ratio": round(lib.cpu_median / rg.cpu_median, 2),
            "cli_cpu_ratio": round(clit.cpu_median / rg.cpu_median, 2),
            "rg_lines": rg.hits,
            "hits": clit.hits,
            "rg_rss_mb": round(max(rg.rss_kb) / 1024, 1),
            "lib_rss_mb": round(max(lib.rss_kb) / 1024, 1),
            "cli_rss_mb": round(max(clit.rss_kb) / 1024, 1),
            "runs": {"rg": rg.seconds, "lib": lib.seconds, "cli": clit.seconds},
            "cpu_runs": {"rg": rg.cpu, "lib": lib.cpu, "cli": clit.cpu},
        }
        if app is not None:
            row.update(_vs_rg("app", appt, rg), app_hits=appt.hits)
            row["runs"]["app"] = appt.seconds  # type: ignore[index]
            row["cpu_runs"]["app"] = appt.cpu  # type: ignore[index]
        if base_app is not None:
            row.update(_vs_rg("base_app", bapp, rg))
        if args.baseline:
            row.update(
                base_lib_s=round(blib.median, 3),
                base_cli_s=round(bcli.median, 3),
                base_lib_ratio=round(blib.median / rg.median, 2),
                base_cli_ratio=round(bcli.median / rg.median, 2),
                base_lib_cpu_s=round(blib.cpu_median, 3),
                base_cli_cpu_s=round(bcli.cpu_median, 3),
                base_lib_cpu_ratio=round(blib.cpu_median / rg.cpu_median, 2),
                base_cli_cpu_ratio=round(bcli.cpu_median / rg.cpu_median, 2),
                base_hits=bcli.hits,
            )
        results.append(row)
        print(f"{q.name:18s} {row['machine']}")
        if app is not None:
            base = (
                f"  baseline {row['base_app_s']:6.3f}s ({row['base_app_ratio']:.2f}x), "
                f"CPU {row['base_app_cpu_s']:6.3f}s ({row['base_app_cpu_ratio']:.2f}x)"
                if base_app is not None
                else ""
            )
            print(
                f"{q.name:18s} app {row['app_s']:6.3f}s ({row['app_ratio']:.2f}x), CPU {row['app_cpu_s']:6.3f}s "
                f"({row['app_cpu_ratio']:.2f}x), hits {row['app_hits']}{base}"
            )
        print(
            f"{q.name:18s} rg {row['rg_s']:6.3f}s  cold lib {row['lib_s']:6.3f}s ({row['lib_ratio']:.2f}x)  "
            f"cli {row['cli_s']:6.3f}s ({row['cli_ratio']:.2f}x)  hits {row['hits']} (rg lines {row['rg_lines']})  "
            f"peak RSS rg {row['rg_rss_mb']} MB, cli {row['cli_rss_mb']} MB, lib {row['lib_rss_mb']} MB"
        )
        print(
            f"{'  CPU':18s} rg {row['rg_cpu_s']:6.3f}s  cold lib {row['lib_cpu_s']:6.3f}s ({row['lib_cpu_ratio']:.2f}x)  "
            f"cli {row['cli_cpu_s']:6.3f}s ({row['cli_cpu_ratio']:.2f}x)"
        )
        if args.baseline:
            print(
                f"{'  baseline':18s}           cold lib {row['base_lib_s']:6.3f}s ({row['base_lib_ratio']:.2f}x)  "
                f"cli {row['base_cli_s']:6.3f}s ({row['base_cli_ratio']:.2f}x)  hits {row['base_hits']}"
            )
            print(
                f"{'  baseline CPU':18s}           cold lib {row['base_lib_cpu_s']:6.3f}s ({row['base_lib_cpu_ratio']:.2f}x)  "
                f"cli {row['base_cli_cpu_s']:6.3f}s ({row['base_cli_cpu_ratio']:.2f}x)"
            )
    for server in (app, base_app):
        if server is not None:
            server.close()
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
