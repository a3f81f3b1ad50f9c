"""Extract the HTTP captures of bench/eval_sources.toml from repository snapshots, for bench/eval_attribution.py.

Usage: python scripts/fetch_eval_corpora.py SNAPSHOTS_DIR [CACHE_DIR]

SNAPSHOTS_DIR holds bare git directories, one per repository, as ``<owner>+<name>/repo``
(or ``<owner>+<name>`` itself, or ``<owner>/<name>``), as the search tool's ``fetch`` lays them
out. For each listed repository, every file of the listed commit (``git ls-tree``; the
snapshot's HEAD, reported, when that commit is absent) whose path matches one of its
``include`` globs and whose content is an HTTP recording, gzipped or not (a vcrpy, go-vcr or Ruby VCR YAML
cassette, a HAR file, a JSON cassette with ``interactions``, or a Go ``httprr`` trace) is
written byte for byte to ``CACHE_DIR/<owner>__<name>/<path with / as __>``. ``CACHE_DIR/MANIFEST.json``
lists every file written, with its repository, commit, path and kind.

CACHE_DIR defaults to ``<user cache dir>/musetui/eval``, outside the repository: these files are
other people's work, and none of them is ever committed.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import platformdirs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from eval_labels import sniff  # one home for what a capture is

SOURCES = Path(__file__).resolve().parents[1] / "bench" / "eval_sources.toml"
#: Larger files are left out: a snapshot lacks files of 4 MiB and more anyway.
MAX_BYTES = 4 * 1024 * 1024


def default_cache_dir() -> Path:
    """Where the captures go when no CACHE_DIR is given (the evaluation looks there too)."""
    return Path(platformdirs.user_cache_dir("musetui")) / "eval"


def local_name(repo: str, path: str) -> str:
    """The cache-relative file name of one capture."""
    return repo.replace("/", "__") + "/" + path.replace("/", "__")


def _git_dir(snapshots: Path, repo: str) -> Path | None:
    owner, name = repo.split("/", 1)
    for cand in (
        snapshots / f"{owner}+{name}" / "repo",
        snapshots / f"{owner}+{name}",
        snapshots / owner / name,
    ):
        if (cand / "HEAD").is_file() or (cand / ".git").exists():
            return cand
    return None


def _git(git_dir: Path, *args: str) -> bytes | None:
    proc = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False)
    return proc.stdout if proc.returncode == 0 else None


def _tree(git_dir: Path, rev: str) -> list[tuple[str, int, str]]:
    """(blob sha, size, path) of every file at ``rev``."""
    out = _git(git_dir, "ls-tree", "-r", "-l", "-z", rev) or b""
    rows = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _tab, path = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == b"blob" and parts[3].isdigit():
            rows.append((parts[2].decode(), int(parts[3]), path.decode("utf-8", "surrogateescape")))
    return rows


def _blobs(git_dir: Path, shas: list[str]) -> list[bytes | None]:
    """The contents of many blobs through one ``git cat-file --batch``."""
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(s + "\n" for s in shas).encode(),
        capture_output=True,
        check=False,
    )
    data, pos = proc.stdout, 0
    out: list[bytes | None] = []
    for _sha in shas:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3:  # "<sha> missing"
            out.append(None)
            continue
        size = int(header[2])
        out.append(data[pos : pos + size])
        pos += size + 1
    return out


def _wanted(path: str, size: int, spec: dict[str, Any]) -> bool:
    if size >= MAX_BYTES or size == 0:
        return False
    if not any(fnmatch.fnmatch(path, g) for g in spec.get("include", ["*"])):
        return False
    return not any(fnmatch.fnmatch(path, g) for g in spec.get("exclude", []))


def extract_repo(git_dir: Path, spec: dict[str, Any], cache: Path) -> tuple[list[dict[str, Any]], str]:
    """Write one repository's captures into ``cache``; return their manifest rows and a note."""
    rev, note = spec["commit"], ""
    if _git(git_dir, "cat-file", "-e", f"{rev}^{{commit}}") is None:
        rev = (_git(git_dir, "rev-parse", "HEAD") or b"").decode().strip()
        note = f" (commit {spec['commit'][:12]} absent: took HEAD {rev[:12]})"
    rows = [r for r in _tree(git_dir, rev) if _wanted(r[2], r[1], spec)]
    out = []
    for (_sha, _size, path), data in zip(rows, _blobs(git_dir, [r[0] for r in rows]), strict=True):
        kind = sniff(data) if data else None
        if kind is None or data is None:
            continue
        name = local_name(spec["name"], path)
        target = cache / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        out.append(
            {
                "repo": spec["name"],
                "commit": rev,
                "path": path,
                "kind": kind,
                "file": name,
                "bytes": len(data),
            }
        )
    return out, note


def main(argv: list[str]) -> int:
    """Extract every listed repository's captures; print one line per repository; 0 when all were found."""
    if len(argv) not in (1, 2):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    snapshots = Path(argv[0])
    cache = Path(argv[1]) if len(argv) == 2 else default_cache_dir()
    repos = tomllib.loads(SOURCES.read_text(encoding="utf-8"))["repo"]
    manifest: list[dict[str, Any]] = []
    missing = 0
    for spec in repos:
        git_dir = _git_dir(snapshots, spec["name"])
        if git_dir is None:
            missing += 1
            print(f"missing  {spec['name']}: no snapshot in {snapshots}")
            continue
        rows, note = extract_repo(git_dir, spec, cache)
        manifest.extend(rows)
        print(f"ok       {spec['name']}: {len(rows)} captures{note}")
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(manifest)} captures from {len(repos) - missing} of {len(repos)} repositories in {cache}")
    return 0 if missing == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
