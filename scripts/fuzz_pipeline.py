#!/usr/bin/env python3
"""Fuzz the whole pipeline with mutated real lines; exit 1 on any exception.

Usage: python scripts/fuzz_pipeline.py [--count N] [--seed S] [--real DIR] [--show N]

Lines come from the bundled sample, the real public captures (``../shared/fixtures/real``
when present) and a small generated corpus. Each case is a short file: the first lines of a
real file (so the format is recognised) with one line mutated: a value swapped for another
type (number, list, object, null, deep nesting, a big integer, a string), a key deleted or
duplicated, the record wrapped or made a scalar, or its bytes truncated, flipped or spliced.
Each case goes through the scanner (:func:`musetui.core.scanner.scan_bytes`, validation,
observers, raw evidence, attribution), the item builders of its format and the generic ones,
the session's Markdown report, and the Markdown report of every item. The per-file boundary
(``internal error`` diagnostics) counts as a failure here: the point is to find its causes.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson

from musetui.core import sources
from musetui.core.model import SessionSummary
from musetui.core.report import item_markdown, session_markdown
from musetui.core.scanner import scan_bytes
from musetui.core.session import OpenedSession, read_records
from musetui.core.walk import walk_roots

REPO = Path(__file__).resolve().parents[1]
HEAD_LINES = 3  # real lines kept before the mutated one (format sniffing sees them)


def _load_files(dirs: list[Path]) -> list[list[bytes]]:
    """The first lines of every candidate file under ``dirs`` (at most 40 per file)."""
    out: list[list[bytes]] = []
    for d in dirs:
        if not d.is_dir():
            continue
        for e in walk_roots([str(d)], []):
            try:
                data = Path(e.abspath).read_bytes()[: 4 * 1024 * 1024]
            except OSError:
                continue
            try:
                lines = [orjson.dumps(orjson.loads(data))]  # a whole-file document: one compact line
            except orjson.JSONDecodeError:
                lines = [ln for ln in data.split(b"\n") if ln.strip()][:40]
            if lines:
                out.append(lines)
    return out


def _values(rng: random.Random) -> Any:
    """A replacement value of a random type."""
    pick = rng.randrange(12)
    if pick == 0:
        return rng.choice([0, -1, 5, 2**63, 10**20, -(10**25), 1.5e300])
    if pick == 1:
        return [rng.choice([1, "a", None, {}])] * rng.randrange(3)
    if pick == 2:
        return {"type": rng.choice(["message", "reasoning", ["x"], 5, None]), "id": rng.choice(["rs_1", 7, [], None])}
    if pick == 3:
        return None
    if pick == 4:
        return rng.choice([True, False])
    if pick == 5:  # deep nesting, up to what the parsers accept
        depth = rng.choice([300, 900, 1000])
        v: Any = rng.choice([1, "x", []])
        for _ in range(depth):
            v = [v] if rng.random() < 0.5 else {"content": v}
        return v
    if pick == 6:
        return rng.choice(
            ["", "\x00", "\u202e\u200b", "a\nb", "gAAAAA" + "A" * 80, "rs_" + "0" * 50, "2026-09-01T22:01:03Z"]
        )
    if pick == 7:
        return [
            {
                "type": rng.choice(["text", "thinking", "tool_use", "function_call", "output_text"]),
                "text": rng.choice([5, None, [], "t"]),
                "content": rng.choice([5, [], {}, "c"]),
            }
        ]
    if pick == 8:
        return rng.choice(["x" * rng.randrange(1, 3000), "😀" * 10])
    if pick == 9:
        return {"a": {"b": {"c": rng.choice([1, "x", None])}}}
    if pick == 10:
        return rng.choice([float("1e308"), -0.0, 123456789012345678901234567890])
    return rng.choice(["user", "assistant", "tool", "system", "developer"])


def _paths(obj: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``obj`` (not too deep)."""
    out = [prefix]
    if depth > 8:
        return out
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_paths(v, (*prefix, k), depth + 1))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:6]):
            out.extend(_paths(v, (*prefix, i), depth + 1))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    cur = obj
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return obj


def _dump(obj: Any) -> bytes:
    try:
        return orjson.dumps(obj)
    except TypeError:
        import json

        try:
            return json.dumps(obj).encode()
        except (TypeError, ValueError, RecursionError):
            return b"{}"


def mutate(line: bytes, rng: random.Random) -> bytes:
    """One mutation of a real line."""
    kind = rng.randrange(14)
    if kind >= 10:
        kind = rng.randrange(4)
    if kind <= 4:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            obj = None
        if obj is not None:
            paths = _paths(obj)
            path = rng.choice(paths)
            if kind == 4 and len(path) >= 1 and isinstance(obj, dict):
                # delete or duplicate a key
                parent = obj
                for k in path[:-1]:
                    parent = parent[k]
                if isinstance(parent, dict) and path[-1] in parent:
                    if rng.random() < 0.5:
                        del parent[path[-1]]
                        return _dump(obj)
                    raw = _dump(obj)
                    dup = b'"' + str(path[-1]).encode() + b'":' + _dump(_values(rng)) + b","
                    return raw[:1] + dup + raw[1:] if raw.startswith(b"{") and raw != b"{}" else raw
            return _dump(_set(obj, path, _values(rng)))
    if kind == 5:
        return _dump(rng.choice([[orjson.loads(line) if line[:1] in b"{[" and _ok(line) else 1], 5, "s", None, []]))
    if kind == 6 and line:
        i = rng.randrange(len(line))
        return line[:i]
    if kind == 7 and line:
        b = bytearray(line)
        for _ in range(rng.randrange(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == 8 and line:
        i = rng.randrange(len(line))
        return line[:i] + rng.choice([b'"', b"{", b"]", b"\\u", b"\xff", b"\x00", b",", b"\r"]) + line[i:]
    return b"\xef\xbb\xbf" + line if rng.random() < 0.5 else line + b"\r"


def _ok(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def run_case(data: bytes) -> None:
    """The scanner, the item builders and the Markdown reports over one file's bytes."""
    summary = SessionSummary(
        path="fuzz.jsonl", abspath="/fuzz/fuzz.jsonl", root="/fuzz", format="generic", format_rule="", size=len(data)
    )
    outcome = scan_bytes(data, summary, keep_offsets=True)
    for d in outcome.diagnostics:
        if d.message.startswith("internal error"):
            raise RuntimeError(d.message)
    s = outcome.summary
    if s is None:
        return
    s.record()
    orjson.dumps(s.record())
    session_markdown(s)
    records, starts = read_records(data)
    items = sources.build_items(s.format, records)
    sources.build_items("generic", records)
    opened = OpenedSession(s, items, data, starts)
    for it in items[:50]:
        item_markdown(s, it, opened.raw(it), opened.decoded(it))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--real", type=Path, default=REPO.parent / "shared" / "fixtures" / "real")
    ap.add_argument("--show", type=int, default=5, help="tracebacks printed per distinct failure site")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    files = _load_files([REPO / "sample_transcripts", args.real])
    if not files:
        print("no input lines found", file=sys.stderr)
        return 2
    failures: collections.Counter[str] = collections.Counter()
    shown: collections.Counter[str] = collections.Counter()
    mutations = collections.Counter[str]()
    t0 = time.monotonic()
    sys.setrecursionlimit(1000)
    for n in range(args.count):
        lines = rng.choice(files)
        head = lines[: rng.randrange(0, HEAD_LINES + 1)]
        target = rng.choice(lines)
        mutated = mutate(target, rng)
        mutations["valid JSON" if _ok(mutated) else "not JSON"] += 1
        data = b"\n".join([*head, mutated, *lines[len(head) + 1 : len(head) + 2]]) + b"\n"
        try:
            run_case(data)
        except Exception as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            site = (
                f"{type(exc).__name__} at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}"
                if tb
                else type(exc).__name__
            )
            if str(exc).startswith("internal error"):
                site = str(exc)[:120]
            failures[site] += 1
            if shown[site] < args.show:
                shown[site] += 1
                print(f"--- case {n}: {site}\n{traceback.format_exc()}", file=sys.stderr)
        if n and n % 10_000 == 0:
            print(f"{n:,} cases, {sum(failures.values())} exceptions, {time.monotonic() - t0:.0f} s", file=sys.stderr)
    total = sum(failures.values())
    print(
        f"{args.count:,} mutated lines ({mutations['valid JSON']:,} still valid JSON, {mutations['not JSON']:,} not) "
        f"from {len(files)} real files through scanner, adapters, item builders and Markdown reports: "
        f"{total} exceptions in {time.monotonic() - t0:.0f} s"
    )
    for site, count in failures.most_common():
        print(f"  {count:6d}  {site}")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
