"""Fit musetui's calibration map on the evaluation's fit split, and write calibration.toml.

Usage: python bench/eval_calibration.py [CORPUS_DIR] [--out FILE]

Runs ``bench/eval_attribution.py``'s evaluation (both modes) with the map switched off, keeps the
verdicts of the *fit* repositories that artifacts decided and that raised no flag, and writes, for
each raw-confidence bin, the lower 95% Wilson bound of the fraction right: a floor that never claims
more than the evidence showed (made non-decreasing, and at most 0.99). The held-out repositories are
not read here; the next ``eval_attribution.py`` run scores the map on them.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path
from typing import Any

import platformdirs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_attribution import Case, evaluate

from musetui.core.fingerprints import calibration

EDGES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
Z = 1.96


def wilson_low(right: int, n: int, z: float = Z) -> float:
    """The lower bound of the Wilson score interval of ``right`` successes in ``n``."""
    if n == 0:
        return 0.0
    p = right / n
    d = 1 + z * z / n
    return (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / d


def decided(c: Case) -> bool:
    """Artifacts, not the declaration alone, named this verdict's provider; no flag was raised."""
    got: dict[str, Any] = c.got
    if got["provider"] == "unknown" or got["flags"]:
        return False
    return any(
        e.get("provider") == got["provider"] and float(e.get("weight", 0)) > 0 and e["detector"] not in ("outlier",)
        for e in got.get("evidence", [])
    )


def fit(cases: list[Case]) -> list[dict[str, float | int]]:
    """One row per bin: its range, its floor, and the counts behind it."""
    rows: list[dict[str, float | int]] = []
    floor = 0.0
    for low, high in itertools.pairwise(EDGES):
        top = high if high < 1.0 else 1.0001
        group = [c for c in cases if low <= float(c.got["confidence"]) < top]
        right = sum(c.right for c in group)
        floor = min(0.99, max(floor, round(wilson_low(right, len(group)), 3)))
        rows.append({"low": low, "high": top, "floor": floor, "verdicts": len(group), "right": right})
    return rows


def toml_text(rows: list[dict[str, float | int]], meta: dict[str, Any]) -> str:
    head = [
        "# musetui's calibration map: written by bench/eval_calibration.py, never edited by hand.",
        f"# Fitted on {meta['fit_verdicts']} verdicts of the fit split ({meta['repositories']} repositories,",
        f"# {meta['date']}, commit {meta['commit']}) that artifacts decided and that raised no flag.",
        "# floor = the lower 95% Wilson bound of the fraction right in the bin (non-decreasing, <= 0.99).",
        "",
    ]
    body = []
    for r in rows:
        body += ["[[bin]]", *(f"{k} = {v}" for k, v in r.items()), ""]
    return "\n".join(head + body)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="eval_calibration", description=__doc__.splitlines()[0])
    p.add_argument("corpus", nargs="?", default=str(Path(platformdirs.user_cache_dir("musetui")) / "eval"))
    p.add_argument("--out", default=str(calibration.BUILTIN_PATH), help="where to write (default: the built-in map)")
    args = p.parse_args(argv)
    saved = calibration.table
    calibration.table = lambda: ()  # type: ignore[assignment]  # score the raw confidences
    try:
        result, cases = evaluate(Path(args.corpus))
    finally:
        calibration.table = saved  # type: ignore[method-assign]
    fit_cases = [c for mode in cases.values() for c in mode if c.split == "fit" and decided(c)]
    rows = fit(fit_cases)
    meta = {
        "fit_verdicts": len(fit_cases),
        "repositories": len({c.repo for c in fit_cases}),
        "date": result["corpus"]["date"],
        "commit": result["corpus"]["commit"],
    }
    Path(args.out).write_text(toml_text(rows, meta), encoding="utf-8")
    for r in rows:
        print(
            f"{r['low']:.1f}-{min(float(r['high']), 1.0):.1f}: {r['right']}/{r['verdicts']} right -> floor {r['floor']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
