"""Compare two golden scan outputs ignoring ``segments``: every other change, and every flag change with its reason.

Usage: python bench/golden_segments.py OLD_DIR NEW_DIR (the ``*.jsonl`` of /work/golden.sh, by name).
Exit 1 when anything but ``segments`` and the flags the segments raise changed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

#: The flags the segment work may add (and only add).
NEW_FLAGS = {"provider-switch", "time-mismatch", "declared-mismatch"}


def _records(path: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for line in path.read_bytes().splitlines():
        if line.strip():
            r = orjson.loads(line)
            out[(r["root"], r["path"])] = r
    return out


def _strip(r: dict) -> dict:
    r = dict(r)
    r.pop("segments", None)
    r.pop("flags", None)
    return r


def main(old_dir: str, new_dir: str) -> int:
    bad = 0
    for old_file in sorted(Path(old_dir).glob("*.jsonl")):
        new_file = Path(new_dir) / old_file.name
        old, new = _records(old_file), _records(new_file)
        if old.keys() != new.keys():
            print(f"{old_file.name}: sessions differ: {sorted(old.keys() ^ new.keys())[:5]}")
            bad += 1
        for key in sorted(old.keys() & new.keys()):
            a, b = old[key], new[key]
            added = [f for f in b["flags"] if f not in a["flags"]]
            removed = [f for f in a["flags"] if f not in b["flags"]]
            if _strip(a) != _strip(b):
                diff = [k for k in set(a) | set(b) if k not in ("segments", "flags") and a.get(k) != b.get(k)]
                print(f"{old_file.name}: {key[1]}: CHANGED {diff}")
                bad += 1
            if removed or set(added) - NEW_FLAGS:
                print(f"{old_file.name}: {key[1]}: flags {a['flags']} -> {b['flags']}")
                bad += 1
            if added:
                segs = ", ".join(
                    f"{g['first_line']}-{g['last_line']} {g['provider']}/{g['host']}" for g in b["segments"]
                )
                print(
                    f"{old_file.name}: {key[1]}: +{added} (provider {b['provider']}, declared {b['declared_model']}); segments {segs}"
                )
            if "segments" not in b or not b["segments"]:
                print(f"{old_file.name}: {key[1]}: no segments")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
