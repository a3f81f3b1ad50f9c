"""No read moves an access time: scan, search, show, report, bundle and an app session, on a strictatime mount.

A tmpfs mounted ``strictatime`` updates the access time on every read and every directory
listing, so any read or listing without ``O_NOATIME`` shows. Mounting needs root: CI runs
as root, where a failed mount fails the test loudly; elsewhere the test is skipped.
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


@pytest.fixture
def strict_mount(tmp_path: Path) -> Iterator[Path]:
    """A fresh tmpfs mounted ``strictatime`` (root only; as root, a failed mount is an error)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a strictatime tmpfs needs root (CI runs as root)")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "strictatime,size=64m,mode=0755", "tmpfs", str(mnt)],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"running as root but cannot mount a strictatime tmpfs: {done.stderr.strip()}")
    try:
        options = next(line.split()[3] for line in Path("/proc/mounts").read_text().splitlines() if line.split()[1] == str(mnt))
        assert "relatime" not in options and "noatime" not in options, options
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
    from musetui.reader import scan_dir

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


async def test_nothing_moves_an_access_time(strict_mount: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
        await pilot.pause(0.3)
        await settle(pilot)
        await press(pilot, "enter")
    assert _moved(root, before) == [], "the app moved access times"
