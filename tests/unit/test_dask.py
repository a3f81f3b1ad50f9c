"""``scan --dask`` on a real LocalCluster (2 worker processes, loopback) and ``--parquet`` (the fleet extra)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from musetui.cli import main

HAVE_DISTRIBUTED = True
try:
    import distributed
except ImportError:
    HAVE_DISTRIBUTED = False
try:
    import pyarrow  # noqa: F401

    HAVE_PYARROW = True
except ImportError:
    HAVE_PYARROW = False

needs_dask = pytest.mark.skipif(
    not HAVE_DISTRIBUTED, reason="the fleet extra is not installed: pip install -e '.[fleet]'"
)
needs_arrow = pytest.mark.skipif(not HAVE_PYARROW, reason="the fleet extra is not installed: pip install -e '.[fleet]'")


def _cluster(**options: Any) -> Any:
    kw: dict[str, Any] = {
        "n_workers": 2,
        "threads_per_worker": 1,
        "processes": True,
        "host": "127.0.0.1",
        "dashboard_address": ":0",
    }
    return distributed.LocalCluster(**{**kw, "silence_logs": 40, **options})


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    if not HAVE_DISTRIBUTED:
        pytest.skip("the fleet extra is not installed: pip install -e '.[fleet]'")
    c = _cluster()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated tree of about 6 MiB (a few hundred sessions of every format), plus the sample."""
    from musetui_synth.corpus import generate

    root = tmp_path_factory.mktemp("dask") / "tree"
    generate(root / "gen", 6.0, 11)
    shutil.copytree(Path(__file__).resolve().parents[2] / "sample_transcripts", root / "sample")
    return root


def _scan(capfdbinary: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, bytes]:
    rc = main(["scan", *args])
    out, err = capfdbinary.readouterr()
    return rc, out, err


@needs_dask
@pytest.mark.dask
def test_dask_scan_prints_exactly_the_local_scan(
    cluster: Any, corpus: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    rc, local, _ = _scan(capfdbinary, str(corpus), "--json", "--no-cache")
    assert rc == 0 and local.count(b"\n") > 100
    rc, remote, _ = _scan(capfdbinary, str(corpus), "--json", "--no-cache", "--dask", cluster.scheduler_address)
    assert rc == 0
    assert remote == local
    assert b'"outlier"' in remote  # the fleet pass ran after the merge
    rc, table_local, _ = _scan(capfdbinary, str(corpus / "sample"), "--no-cache")
    rc2, table_remote, _ = _scan(capfdbinary, str(corpus / "sample"), "--no-cache", "--dask", cluster.scheduler_address)
    assert rc == rc2 == 0 and table_remote == table_local


@needs_dask
@pytest.mark.dask
def test_dask_scan_splits_the_work_into_several_tasks(
    cluster: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from musetui.core import index as index_mod
    from musetui.core.distributed import DaskIndex

    # As for a tree past the size where a local index hands files to its own pool during the
    # walk: a Dask index must still send every file to the cluster.
    monkeypatch.setattr(index_mod, "PARALLEL_MIN_BYTES", 0)
    done: list[tuple[int, int]] = []
    index = DaskIndex(
        [str(corpus)], light=True, address=cluster.scheduler_address, on_task_done=lambda d, t: done.append((d, t))
    )
    index.scan()
    assert index.tasks >= 4 and done[-1] == (index.tasks, index.tasks)


def _worker_pids(address: str) -> dict[str, int]:
    with distributed.Client(address, timeout="20s") as client:
        pids: dict[str, int] = client.run(os.getpid)
    return pids


def _killing(address: str, index: Any) -> list[int]:
    """Make ``index`` SIGKILL one worker process as soon as its first task is back (mid-scan)."""
    victims: list[int] = []
    pids = _worker_pids(address)

    def hook(done: int, total: int) -> None:
        if not victims and done < total:
            pid = next(iter(pids.values()))
            os.kill(pid, signal.SIGKILL)
            victims.append(pid)

    index.on_task_done = hook
    return victims


@needs_dask
@pytest.mark.dask
def test_a_worker_killed_mid_scan_has_its_work_redone(
    cluster: Any, corpus: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from musetui.core.distributed import DaskIndex

    rc, local, _ = _scan(capfdbinary, str(corpus), "--json", "--no-cache")
    assert rc == 0
    index = DaskIndex([str(corpus)], light=True, address=cluster.scheduler_address)
    victims = _killing(cluster.scheduler_address, index)
    index.scan()
    assert victims, "no worker was killed: the scan finished in one task"
    from musetui.cli.output import records

    assert b"".join(records(index.sorted_sessions())) == local
    cluster.wait_for_workers(2, timeout=60)  # the nanny restarted the killed worker


@needs_dask
@pytest.mark.dask
def test_when_retries_run_out_the_scan_fails_and_prints_nothing(
    corpus: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dask

    from musetui.core import distributed as mdist

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        c = _cluster()
        try:
            original = mdist.DaskIndex._outcomes

            def outcomes(self: Any, *a: Any, **k: Any) -> Any:
                _killing(c.scheduler_address, self)
                return original(self, *a, **k)

            monkeypatch.setattr(mdist.DaskIndex, "_outcomes", outcomes)
            rc, out, err = _scan(capfdbinary, str(corpus), "--json", "--no-cache", "--dask", c.scheduler_address)
        finally:
            c.close()
    assert rc == 1
    assert out == b""
    lines = [ln for ln in err.decode().splitlines() if ln.startswith("musetui")]
    assert len(lines) == 1 and "nothing was printed" in lines[0] and "KilledWorker" in lines[0]


@needs_dask
@pytest.mark.dask
def test_workers_that_cannot_see_a_path_the_client_sees_fail_the_scan(cluster: Any, tmp_path: Path) -> None:
    from musetui.core.distributed import DaskIndex, DaskScanError
    from musetui.core.walk import walk_roots

    tree = tmp_path / "t"
    shutil.copytree(Path(__file__).resolve().parents[2] / "sample_transcripts", tree)
    files = walk_roots([str(tree)], [])
    # /proc/self/fd/N names an open file in this process only: what a worker without the share sees.
    fd = os.open(files[0].abspath, os.O_RDONLY)
    high = os.dup2(fd, 987)
    try:
        files[0].abspath = f"/proc/self/fd/{high}"
        index = DaskIndex([str(tree)], light=True, address=cluster.scheduler_address, prewalked=(files, []))
        with pytest.raises(DaskScanError, match="which this machine sees: workers must see the same paths"):
            index.scan()
    finally:
        os.close(high)
        os.close(fd)


@needs_dask
@pytest.mark.dask
@pytest.mark.parametrize("cache", [["--no-cache"], []], ids=["no-cache", "cache"])
def test_a_file_that_vanishes_after_the_walk_is_that_files_diagnostic(
    cache: list[str],
    cluster: Any,
    tmp_path: Path,
    capfdbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As in a local scan: exit 0, every other record, and the file's ``unreadable`` line on stderr."""
    from musetui.core import distributed as mdist
    from musetui.core import index as index_mod

    sample = Path(__file__).resolve().parents[2] / "sample_transcripts"
    tree = tmp_path / "t"
    shutil.copytree(sample, tree)
    victim = next(tree.rglob("rollout-*.jsonl"))
    rc, whole, _ = _scan(capfdbinary, str(tree), "--json", "--no-cache")
    assert rc == 0

    def vanishing(cls: Any) -> None:
        original = cls._outcomes

        def outcomes(self: Any, files: Any, *a: Any, **k: Any) -> Any:
            assert any(f.abspath == str(victim) for f in files)  # walked, then gone before any read
            victim.unlink()
            return original(self, files, *a, **k)

        monkeypatch.setattr(cls, "_outcomes", outcomes)

    vanishing(index_mod.Index)
    rc, local, local_err = _scan(capfdbinary, str(tree), "--json", *cache)
    assert rc == 0 and not victim.exists()
    shutil.copy2(sample / victim.relative_to(tree), victim)  # a new inode: never served from the cache
    vanishing(mdist.DaskIndex)
    rc, remote, remote_err = _scan(capfdbinary, str(tree), "--json", *cache, "--dask", cluster.scheduler_address)
    assert rc == 0, remote_err
    assert remote == local and remote_err == local_err
    assert remote.count(b"\n") == whole.count(b"\n") - 1
    assert f"{victim.name}: unreadable: No such file or directory".encode() in remote_err


@needs_dask
@pytest.mark.dask
def test_workers_with_another_musetui_are_named_as_such(
    cluster: Any, sample_dir: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    from musetui.core import distributed as mdist

    # The worker processes keep their own copy of the module: only this client changes.
    monkeypatch.setattr(mdist, "TASK_FORMAT", "musetui-dask-task-9/9.9")
    rc, out, err = _scan(capfdbinary, str(sample_dir), "--json", "--no-cache", "--dask", cluster.scheduler_address)
    assert rc == 1 and out == b"" and err.decode().count("\n") == 1
    assert (
        "run another musetui (musetui-dask-task-2/" in err.decode()
        and "install the same version on both" in err.decode()
    )


def _run_cli(
    *args: str, code: str = "", env: dict[str, str] | None = None, timeout: float = 120
) -> tuple[int, str, str, float]:
    """``musetui ARGS`` in a child process (bounded: the old code hung), after ``code``; rc, stdout, stderr, seconds."""
    root = str(Path(__file__).resolve().parents[2])
    full = {
        **os.environ,
        **(env or {}),
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    script = f"import sys\n{code}\nfrom musetui.cli import main; sys.exit(main(sys.argv[1:]))"
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout, env=full
    )
    return run.returncode, run.stdout, run.stderr, time.monotonic() - start


def _lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip()]


@pytest.fixture
def scheduler_only() -> Iterator[Any]:
    """A scheduler with no worker (in this process, on loopback)."""
    if not HAVE_DISTRIBUTED:
        pytest.skip("the fleet extra is not installed: pip install -e '.[fleet]'")
    c = _cluster(n_workers=0, processes=False, protocol="tcp://")
    try:
        yield c
    finally:
        c.close()


@needs_dask
@pytest.mark.dask
def test_a_scheduler_without_workers_fails_within_the_timeout(scheduler_only: Any, sample_dir: Path) -> None:
    rc, out, err, took = _run_cli(
        "scan",
        str(sample_dir),
        "--json",
        "--no-cache",
        "--dask",
        scheduler_only.scheduler_address,
        "--dask-timeout",
        "2",
    )
    assert rc == 1 and out == ""
    assert len(_lines(err)) == 1, err
    assert "has no workers: none joined within 2 s (--dask-timeout)" in err
    assert took < 90


#: Run before the CLI in the child: SIGKILL the processes in $VICTIMS when the first task is back.
KILL_AFTER_FIRST_TASK = """
import os, signal
from musetui.core import distributed as d
original = d.DaskIndex._outcomes
def outcomes(self, *a, **k):
    def kill(done, total):
        if done == 1:
            for pid in os.environ['VICTIMS'].split(','):
                os.kill(int(pid), signal.SIGKILL)
            print(f'killed after 1 of {total} tasks', file=sys.stderr)
    self.on_task_done = kill
    return original(self, *a, **k)
d.DaskIndex._outcomes = outcomes
"""


def _workers(address: str, n: int = 2) -> list[subprocess.Popen[bytes]]:
    """``n`` worker processes without a nanny (a killed one stays dead)."""
    cmd = [
        sys.executable,
        "-m",
        "distributed.cli.dask_worker",
        address,
        "--no-nanny",
        "--nthreads",
        "1",
        "--no-dashboard",
    ]
    return [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]


def _scan_killing(corpus: Path, address: str, victims: list[int]) -> tuple[int, str, list[str], float]:
    """``scan --dask ADDRESS --dask-timeout 2`` in a child that kills ``victims`` mid-scan: rc, stdout, our lines, seconds."""
    env = {"VICTIMS": ",".join(map(str, victims))}
    args = ("scan", str(corpus), "--json", "--no-cache", "--dask", address, "--dask-timeout", "2")
    rc, out, err, took = _run_cli(*args, code=KILL_AFTER_FIRST_TASK, env=env)
    lines = _lines(err)
    assert lines[0].startswith("killed after 1 of ") and not lines[0].endswith(" 1 tasks"), err  # mid-scan
    assert "Traceback" not in err, err
    return rc, out, [ln for ln in lines if ln.startswith("musetui")], took


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.kill()
        proc.wait(timeout=60)


@needs_dask
@pytest.mark.dask
def test_all_workers_killed_mid_scan_fail_within_the_timeout(scheduler_only: Any, corpus: Path) -> None:
    address = scheduler_only.scheduler_address
    workers = _workers(address)
    try:
        scheduler_only.wait_for_workers(2, timeout=90)
        rc, out, ours, took = _scan_killing(corpus, address, [w.pid for w in workers])
    finally:
        _stop(workers)
    assert rc == 1 and out == ""
    assert len(ours) == 1, ours
    assert (
        "lost all its workers mid-scan and none came back within 2 s (--dask-timeout); nothing was printed" in ours[0]
    )
    assert took < 90


@needs_dask
@pytest.mark.dask
def test_the_scheduler_killed_mid_scan_fails_on_one_line(corpus: Path, tmp_path: Path) -> None:
    info = tmp_path / "scheduler.json"
    cmd = [
        sys.executable,
        "-m",
        "distributed.cli.dask_scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--no-dashboard",
        "--scheduler-file",
        str(info),
    ]
    scheduler = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [scheduler]
    try:
        deadline = time.monotonic() + 90
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)  # the file is written whole, then read
        address = json.loads(info.read_text())["address"]
        procs += _workers(address)
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=90)
        rc, out, ours, took = _scan_killing(corpus, address, [scheduler.pid])
    finally:
        _stop(procs)
    assert rc == 1 and out == ""
    assert len(ours) == 1 and f"lost the Dask scheduler at {address} mid-scan (" in ours[0], ours
    assert ours[0].endswith("); nothing was printed")
    assert took < 90


def _listener(answer: bytes | None) -> tuple[socket.socket, threading.Thread]:
    """A TCP listener on loopback that sends ``answer`` on each connection (None: says nothing)."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if answer is not None:
                conn.sendall(answer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return server, t


@needs_dask
@pytest.mark.dask
def test_an_address_that_is_not_a_dask_scheduler_says_so(sample_dir: Path) -> None:
    http = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    banner, _ = _listener(b"SSH-2.0-OpenSSH_9.6\r\n")  # a server that speaks first
    try:
        for port, why in (
            (http.server_address[1], "it accepted the connection but sent no Dask handshake within 2 s"),
            (banner.getsockname()[1], "it answered in another protocol"),
        ):
            address = f"tcp://127.0.0.1:{port}"
            rc, out, err, took = _run_cli(
                "scan", str(sample_dir), "--json", "--no-cache", "--dask", address, "--dask-timeout", "2"
            )
            assert rc == 1 and out == "" and len(_lines(err)) == 1, err
            assert f"musetui scan: {address} is not a Dask scheduler: {why}" in err
            assert "internal error" not in err and took < 90
    finally:
        http.shutdown()
        http.server_close()
        banner.close()


def _self_signed(where: Path) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 and its key, made here with the openssl command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a test certificate")
    cert, key = str(where / "cert.pem"), str(where / "key.pem")
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
         "-subj", "/CN=musetui-test", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return cert, key


@needs_dask
@pytest.mark.dask
def test_a_tls_scheduler_takes_its_certificates_from_dasks_settings(
    tmp_path: Path, sample_dir: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    import dask

    cert, key = _self_signed(tmp_path)
    security = distributed.Security(
        tls_ca_file=cert, tls_scheduler_cert=cert, tls_scheduler_key=key, tls_worker_cert=cert, tls_worker_key=key,
        tls_client_cert=cert, tls_client_key=key, require_encryption=True,
    )  # fmt: skip
    c = _cluster(n_workers=1, processes=False, protocol="tls://", security=security)
    try:
        address = c.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        rc, local, _ = _scan(capfdbinary, str(sample_dir), "--json", "--no-cache")
        assert rc == 0
        env = {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": cert, "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": cert,
               "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": key}  # fmt: skip
        rc, out, err, _ = _run_cli(
            "scan", str(sample_dir), "--json", "--no-cache", "--dask", address, "--dask-timeout", "20", env=env
        )
        assert rc == 0 and out.encode() == local, err
        rc, out_b, err_b = _scan(capfdbinary, str(sample_dir), "--json", "--no-cache", "--dask", address)
        assert rc == 1 and out_b == b"" and err_b.decode().count("\n") == 1
        assert f"musetui scan: {address} needs Dask's TLS settings" in err_b.decode()
        plain = address.replace("tls://", "tcp://")
        with dask.config.set(
            {
                "distributed.comm.tls.ca-file": cert,
                "distributed.comm.tls.client.cert": cert,
                "distributed.comm.tls.client.key": key,
            }
        ):
            rc, out_b, err_b = _scan(
                capfdbinary, str(sample_dir), "--json", "--no-cache", "--dask", plain, "--dask-timeout", "2"
            )
        assert rc == 1 and out_b == b"" and err_b.decode().count("\n") == 1
        assert "is not a Dask scheduler" in err_b.decode() and "needs a tls:// address" in err_b.decode()
    finally:
        c.close()


def test_unreachable_scheduler_fails_on_one_line(capfdbinary: pytest.CaptureFixture[bytes], sample_dir: Path) -> None:
    if not HAVE_DISTRIBUTED:
        pytest.skip("the fleet extra is not installed: pip install -e '.[fleet]'")
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        rc, out, err = _scan(capfdbinary, str(sample_dir), "--json", "--no-cache", "--dask", "tcp://127.0.0.1:9")
    assert rc == 1 and out == b""
    assert err.decode().count("\n") == 1 and "cannot reach the Dask scheduler" in err.decode()


@needs_arrow
def test_parquet_holds_the_same_records(
    tmp_path: Path, sample_dir: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from musetui.core.parquet import read_records

    pq = tmp_path / "scan.parquet"
    rc, out, _ = _scan(capfdbinary, str(sample_dir), "--json", "--no-cache", "--parquet", str(pq))
    assert rc == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert read_records(str(pq)) == records
    rc, plain, _ = _scan(capfdbinary, str(sample_dir), "--json", "--no-cache")
    assert plain == out
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, _, _ = _scan(capfdbinary, str(empty), "--no-cache", "--parquet", str(tmp_path / "none.parquet"))
    assert rc == 0 and read_records(str(tmp_path / "none.parquet")) == []


@needs_arrow
def test_fleet_reads_parquet(tmp_path: Path, sample_dir: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    vms = []
    for name in ("vm1", "vm2", "vm3"):
        vm = tmp_path / name
        shutil.copytree(sample_dir, vm)
        if name != "vm3":
            shutil.rmtree(next(vm.rglob("01a05efe-03bb-72c8-854a-4c1c088cc3b9")))
        out = tmp_path / f"{name}.parquet"
        assert _scan(capfdbinary, str(vm), "--no-cache", "--parquet", str(out))[0] == 0
        vms.append(out)
    assert main(["fleet", *map(str, vms), "--json"]) == 0
    rows = [json.loads(line) for line in capfdbinary.readouterr()[0].splitlines()]
    assert rows[0]["root"] == str(vms[2]) and rows[0]["flagged"] == 1


def test_without_the_extra_the_options_say_what_to_install(sample_dir: Path) -> None:
    code = (
        "import sys; sys.modules['distributed'] = None; sys.modules['pyarrow'] = None\n"
        "from musetui.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    for opt in (["--dask", "tcp://127.0.0.1:8786"], ["--parquet", "x.parquet"]):
        run = subprocess.run(
            [sys.executable, "-c", code, "scan", str(sample_dir), "--json", *opt],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.count("\n") == 1 and "pip install 'musetui[fleet]'" in run.stderr, run.stderr


def test_a_parser_pinned_by_a_live_document_reads_every_line(sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a Dask worker's profiler does (it holds frames, and so documents) never turns lines malformed."""
    from musetui.core import sources
    from musetui.core.scanner import scan_file

    path = next(sample_dir.rglob("rollout-*.jsonl"))
    clean = scan_file(str(path), path.name, str(sample_dir))
    kept: list[object] = []
    real = sources.observer_for

    class Pinning:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def observe(self, doc: Any, line: int) -> Any:
            kept.append(doc)  # a reference that outlives the line, as a sampled frame does
            return self.inner.observe(doc, line)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    monkeypatch.setattr(sources, "observer_for", lambda fmt, summary: Pinning(real(fmt, summary)))
    pinned = scan_file(str(path), path.name, str(sample_dir))
    assert kept and clean.summary is not None and pinned.summary is not None
    assert pinned.summary.malformed_lines == 0
    assert pinned.summary.record() == clean.summary.record()
