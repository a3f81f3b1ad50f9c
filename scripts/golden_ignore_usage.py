"""Compare two directories of ``scan --json`` outputs record by record, ignoring the ``usage`` field.

Usage: ``python scripts/golden_ignore_usage.py /work/golden-main /tmp/NAME-golden``. Prints one line
per record that differs in anything but ``usage`` (or per file whose record count differs), and
nothing when the outputs agree; exits 1 when something differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(old_dir: str, new_dir: str, ignore: tuple[str, ...] = ("usage",)) -> int:
    differs = 0
    for old in sorted(Path(old_dir).glob("*.jsonl")):
        new = Path(new_dir) / old.name
        a = old.read_text(encoding="utf-8").splitlines()
        b = new.read_text(encoding="utf-8").splitlines() if new.exists() else []
        if len(a) != len(b):
            print(f"{old.name}: {len(a)} records, now {len(b)}")
            differs += 1
            continue
        for n, (x, y) in enumerate(zip(a, b, strict=True), 1):
            rx, ry = json.loads(x), json.loads(y)
            for key in ignore:
                ry.pop(key, None)
            if list(rx.items()) != list(ry.items()):
                print(f"{old.name}:{n}: differs beyond {', '.join(ignore)}")
                differs += 1
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
