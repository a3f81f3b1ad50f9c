"""Extract the real-world corpus of tests/real_world/SOURCES.toml from repository snapshots.

Usage: python scripts/fetch_real_world.py SNAPSHOTS_DIR [CACHE_DIR]

SNAPSHOTS_DIR holds bare git directories, one per repository, as ``<owner>+<name>/repo``
(or ``<owner>+<name>`` itself, or ``<owner>/<name>``). Each listed file is read with
``git show <commit>:<path>`` (falling back to the snapshot's HEAD when that commit is absent,
which is reported) and written to ``CACHE_DIR/<owner>__<name>/<path with / as __>``.
CACHE_DIR defaults to ``<user cache dir>/musetui/real_world``, outside the repository: the
files are other people's work and are never committed.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import platformdirs

SOURCES = Path(__file__).resolve().parents[1] / "tests" / "real_world" / "SOURCES.toml"


def default_cache_dir() -> Path:
    """Where the corpus goes when no CACHE_DIR is given (the test looks there too)."""
    return Path(platformdirs.user_cache_dir("musetui")) / "real_world"


def local_name(repo: str, path: str) -> str:
    """The cache-relative file name of one listed file."""
    return repo.replace("/", "__") + "/" + path.replace("/", "__")


def _git_dir(snapshots: Path, repo: str) -> Path | None:
    owner, name = repo.split("/", 1)
    for cand in (snapshots / f"{owner}+{name}" / "repo", snapshots / f"{owner}+{name}", snapshots / owner / name):
        if (cand / "HEAD").is_file() or (cand / ".git").exists():
            return cand
    return None


def _show(git_dir: Path, rev: str, path: str) -> bytes | None:
    proc = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{rev}:{path}"], capture_output=True, check=False)
    return proc.stdout if proc.returncode == 0 else None


def main(argv: list[str]) -> int:
    """Extract every listed file; print one line per file; return 0 when all were found."""
    if len(argv) not in (1, 2):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    snapshots = Path(argv[0])
    cache = Path(argv[1]) if len(argv) == 2 else default_cache_dir()
    files = tomllib.loads(SOURCES.read_text(encoding="utf-8"))["file"]
    missing = 0
    for f in files:
        git_dir = _git_dir(snapshots, f["repo"])
        data = None
        note = ""
        if git_dir is not None:
            data = _show(git_dir, f["commit"], f["path"])
            if data is None:
                data = _show(git_dir, "HEAD", f["path"])
                note = " (commit absent from the snapshot: taken from its HEAD)"
        if data is None:
            missing += 1
            print(f"missing  {f['repo']}:{f['path']}")
            continue
        out = cache / local_name(f["repo"], f["path"])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        print(f"ok       {out} ({len(data):,} bytes){note}")
    print(f"{len(files) - missing} of {len(files)} files in {cache}")
    return 0 if missing == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
