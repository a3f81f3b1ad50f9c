"""No read moves an access time: scan, search, show, report, bundle, fleet and an app session.

The tree lies on a tmpfs mounted ``strictatime``, which updates the access time on every
read and every directory listing, so any read or listing without ``O_NOATIME`` shows.
Where that mount cannot be made (no root, or a container without the capability), the
temporary directory is used if it updates access times (``relatime`` does, since every
atime is first set years back); as root, a directory that updates none fails the test
loudly: CI runs as root, and this test must not pass by skipping there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from musetui.app import MuseApp
from musetui.cli import main as cli_main

from .conftest import SAMPLE
from .helpers import OUTLIER_ID, SIZE, current, press, settle

OLD = 1_577_836_800_000_000_000  # 2020-01-01T00:00:00Z, in ns: older than every mtime


def _updates_atimes(d: Path) -> bool:
    """Whether reading a file and listing a directory under ``d`` move their (aged) access times."""
    probe = d / "probe-dir"
    probe.mkdir()
    (probe / "f").write_bytes(b"x\n")
    for p in (probe / "f", probe):
        os.utime(p, ns=(OLD, p.stat().st_mtime_ns))
    (probe / "f").read_bytes()
    os.listdir(probe)
    moved = (probe / "f").stat().st_atime_ns != OLD and probe.stat().st_atime_ns != OLD
    shutil.rmtree(probe)
    return moved


@pytest.fixture
def strict_mount(tmp_path: Path) -> Iterator[Path]:
    """A directory whose file system updates access times: a fresh ``strictatime`` tmpfs where possible."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "strictatime,size=64m,mode=0755", "tmpfs", str(mnt)],
            capture_output=True,
            text=True,
            check=False,
        )
        if shutil.which("mount")
        else None
    )
    if done is None or done.returncode != 0:
        why = done.stderr.strip() if done is not None else "no mount command"
        if _updates_atimes(mnt):
            yield mnt  # (relatime or strictatime already: aged atimes still show every read)
            return
        if os.geteuid() == 0:
            pytest.fail(f"running as root, but cannot mount a strictatime tmpfs ({why}) and {mnt} updates no atime")
        pytest.skip(f"no strictatime mount ({why}) and {mnt} updates no atime")
    try:
        assert _updates_atimes(mnt)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _age(root: Path) -> dict[str, int]:
    """Set every atime under ``root`` (directories too, ``root`` included) to 2020; return them."""
    for p in _atimes(root):
        os.utime(p, ns=(OLD, os.lstat(p).st_mtime_ns), follow_symlinks=False)
    return _atimes(root)


def _atimes(root: Path) -> dict[str, int]:
    """Every atime under ``root``, taken with listings through ``O_NOATIME`` and ``lstat`` (which move none)."""
    from musetui.core.reader import scan_dir

    seen = {str(root): root.lstat().st_atime_ns}
    stack = [str(root)]
    while stack:
        d = stack.pop()
        with scan_dir(d) as it:
            for e in it:
                p = os.path.join(d, e.name)
                seen[p] = os.lstat(p).st_atime_ns
                if e.is_dir(follow_symlinks=False):
                    stack.append(p)
    return seen


def _moved(root: Path, before: dict[str, int]) -> list[str]:
    """The paths under ``root`` whose atime is not what it was."""
    now = _atimes(root)
    return sorted(os.path.relpath(p, root) for p in set(now) | set(before) if now.get(p) != before.get(p))


def _run(*argv: str) -> int:
    return cli_main(list(argv))


async def test_nothing_moves_an_access_time(
    strict_mount: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = strict_mount / "sample"
    shutil.copytree(SAMPLE, root)
    outlier = next(p for p in root.rglob("session.jsonl") if OUTLIER_ID in str(p))  # (before the atimes are set)
    before = _age(root)
    assert _moved(root, before) == []  # the check itself reads nothing
    # The mount does update atimes: a plain read and a plain listing move them (then reset).
    probe = next(root.rglob("session.jsonl"))
    probe.read_bytes()
    os.listdir(probe.parent)
    assert {os.path.relpath(probe, root), os.path.relpath(probe.parent, root)} <= set(_moved(root, before))
    before = _age(root)

    out = tmp_path / "out"
    out.mkdir()
    assert _run("scan", str(root), "--json", "--no-cache") == 0
    assert _run("scan", str(root)) == 0  # through the cache, then the stored output
    assert _run("scan", str(root), "--json") == 0
    assert _run("scan", str(root), "--json") == 0
    assert _run("search", str(root), "avocado") == 0
    assert _run("search", str(root), "provider:openai has:encrypted", "--no-cache") == 0
    assert _run("show", str(outlier)) == 0
    assert _run("show", str(outlier), "--line", "4") == 0
    assert _run("report", str(root), "-o", str(out / "r.html")) == 0
    assert _run("report", str(root), "-o", str(out / "r.md"), "--flagged") == 0
    assert _run("bundle", str(root), "-o", str(out / "b.zip")) == 0
    assert _run("bundle", str(root), "-o", str(out / "f.zip"), "--flagged") == 0
    assert _run("fleet", str(root), "--json") == 0
    capsys.readouterr()
    assert _moved(root, before) == [], "the command line moved access times"

    app = MuseApp([str(root)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "y", "enter", "j", "j", "j", "1", "2", "3", "4", "5", "y", "Y")
        assert current(app).session_id == OUTLIER_ID
        await press(pilot, "slash")
        await pilot.press(*"avocado")
        await settle(pilot)
        await press(pilot, "enter")
    assert _moved(root, before) == [], "the app moved access times"
