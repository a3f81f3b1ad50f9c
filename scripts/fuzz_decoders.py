#!/usr/bin/env python3
"""Fuzz every public decoder with random and mutated strings; exit 1 on any exception.

Usage: python scripts/fuzz_decoders.py [--count N] [--seed S]

Strings come from five generators: arbitrary unicode, base64-ish runs behind artifact
prefixes, id-shaped strings, mutations (truncate/flip/insert/delete/splice) of real values,
and genuine shapes built from random parts. Each string goes through every whole-string
decoder, decode_string under several keys, decode_key and decode_signature_value.
"""

from __future__ import annotations

import argparse
import base64
import random
import string
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from musetui.core.fingerprints import decoders as d
from musetui.core.fingerprints.seeds import REAL_ID_SEEDS
from musetui.core.fingerprints.types import Decoded

WHOLE: list[Callable[[str], Decoded | None]] = list(d.WHOLE_STRING_DECODERS)
KEYS: list[str | None] = [None, "id", "call_id", "responseId", "system_fingerprint", "signature"]
PRESENCE = ["content_filters", "inference_geo", "cache_creation", "service_tier", "x_groq"]
B64 = string.ascii_letters + string.digits + "+/-_="
PREFIXES = ["gAAAAA", "gAAAAAB", "E", "Eu", "Er", "Eq", "C", "CAIS", "Ci", ""]
ID_PREFIXES = [
    "rs_",
    "resp_",
    "msg_",
    "msg_01",
    "req_011C",
    "toolu_01",
    "msg_vrtx_01",
    "call_",
    "fp_",
]
SEEDS = list(REAL_ID_SEEDS)


def fernet(rng: random.Random) -> str:
    """A token with genuine framing and a random time."""
    raw = b"\x80" + rng.getrandbits(64).to_bytes(8, "big") + rng.randbytes(48 + 16 * rng.randint(0, 40))
    return base64.urlsafe_b64encode(raw).decode()


def real_seeds() -> list[str]:
    """Tokens and signatures from ../shared/fixtures/real when present."""
    import re

    folder = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real" / "vercel__ai"
    out: list[str] = []
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            text = path.read_text(encoding="utf-8")
            out += re.findall(r'"(gAAAAA[A-Za-z0-9_\-=]{0,3000})"', text)[:2]
            out += re.findall(r'"(?:signature|thoughtSignature)": "([^"]+)"', text)
    return out


def mutate(rng: random.Random, s: str, pool: list[str]) -> str:
    """Apply 1–4 random edits to ``s``."""
    for _ in range(rng.randint(1, 4)):
        i = rng.randint(0, len(s))
        op = rng.randrange(5)
        if op == 0:
            s = s[:i]
        elif op == 1 and i < len(s):
            s = s[:i] + rng.choice(B64 + " .:#\u2026\x00é") + s[i + 1 :]
        elif op == 2:
            s = s[:i] + rng.choice(B64 + " .:#\u2026") + s[i:]
        elif op == 3 and i < len(s):
            s = s[:i] + s[i + 1 :]
        else:
            s = s[:i] + rng.choice(pool)
    return s


def generate(rng: random.Random, pool: list[str]) -> str:
    """One fuzz string from a randomly chosen generator."""
    kind = rng.randrange(6)
    if kind == 0:
        n = rng.randint(0, 80)
        return "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0, 0x2FFF)])) for _ in range(n))
    if kind == 1:
        return rng.choice(PREFIXES) + "".join(rng.choice(B64) for _ in range(rng.randint(0, 200)))
    if kind == 2:
        body = "".join(rng.choice("0123456789abcdefABCxyz_-") for _ in range(rng.randint(0, 60)))
        return rng.choice(ID_PREFIXES) + body
    if kind == 3:
        return mutate(rng, rng.choice(pool), pool)
    if kind == 4:
        return fernet(rng)
    return f"text {rng.choice(pool)} more {mutate(rng, rng.choice(pool), pool)}"


def exercise(s: str) -> int:
    """Run every entry point on ``s``; return how many Decoded came back."""
    hits = 0
    for fn in WHOLE:
        if fn(s) is not None:
            hits += 1
    for key in KEYS:
        hits += len(d.decode_string(s, key))
    for key in PRESENCE:
        if d.decode_key(key, s) is not None:
            hits += 1
    d.decode_key(s, None)
    return hits


def main(argv: list[str] | None = None) -> int:
    """Run the fuzz loop and report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=20260925)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    pool = SEEDS + real_seeds()
    failures = 0
    hits = 0
    start = time.perf_counter()
    for n in range(args.count):
        s = generate(rng, pool)
        try:
            hits += exercise(s)
        except Exception:
            failures += 1
            if failures <= 10:
                print(f"EXCEPTION on string #{n}: {s!r}", file=sys.stderr)
                traceback.print_exc()
    elapsed = time.perf_counter() - start
    print(
        f"fuzzed {args.count} strings (seed {args.seed}, {len(pool)} seed values) in {elapsed:.1f} s: "
        f"{hits} decodes, {failures} exceptions"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
