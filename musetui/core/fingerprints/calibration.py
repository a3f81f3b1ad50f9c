"""What a confidence means, measured: the calibration map fitted by the self-labelled evaluation.

The raw confidence of a verdict that artifacts decided (``scan --explain``, part 4) counts
evidence; on the evaluation's thousands of real captures those verdicts were right far more
often than it says. ``calibration.toml`` holds, per raw-confidence bin, the floor that the fit
split's verdicts earned: the lower 95% Wilson bound of the fraction right, so it never claims
more than the evidence showed. ``bench/eval_attribution.py --fit-calibration`` writes it; the
held-out repositories check it (docs/fingerprints.md, "What a confidence of 0.9 means").

Only verdicts that artifacts decided, with no flag raised, are raised; a declared model with
nothing else stays at medium confidence at most (DESIGN.md), and nothing is ever lowered.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

BUILTIN_PATH = Path(__file__).with_name("calibration.toml")


@dataclass(frozen=True, slots=True)
class Bin:
    """Raw confidences in [low, high) rise to ``floor``: ``right`` of ``verdicts`` were right."""

    low: float
    high: float
    floor: float
    verdicts: int
    right: int


class CalibrationError(ValueError):
    """calibration.toml is missing or malformed."""


def parse(data: dict[str, object]) -> tuple[Bin, ...]:
    """The bins of a calibration table, checked: ordered, not overlapping, floors in [0, 0.99]."""
    rows = data.get("bin", [])
    if not isinstance(rows, list):
        raise CalibrationError("[[bin]] must be an array of tables")
    bins: list[Bin] = []
    for n, row in enumerate(rows, 1):
        try:
            b = Bin(float(row["low"]), float(row["high"]), float(row["floor"]), int(row["verdicts"]), int(row["right"]))
        except (KeyError, TypeError, ValueError) as e:
            raise CalibrationError(f"[[bin]] #{n}: {e}") from None
        if not (0.0 <= b.low < b.high and 0.0 <= b.floor <= 0.99 and 0 <= b.right <= b.verdicts):
            raise CalibrationError(f"[[bin]] #{n}: out of range: {b}")
        if bins and b.low < bins[-1].high:
            raise CalibrationError(f"[[bin]] #{n}: overlaps the one before")
        bins.append(b)
    return tuple(bins)


@functools.cache
def table() -> tuple[Bin, ...]:
    """The built-in map, read and checked on first use."""
    try:
        with BUILTIN_PATH.open("rb") as f:
            return parse(tomllib.load(f))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CalibrationError(f"{BUILTIN_PATH}: {e}") from None


def calibrate(conf: float, bins: tuple[Bin, ...] | None = None) -> tuple[float, str]:
    """The calibrated confidence of an artifact-decided, unflagged verdict, and the note saying why.

    With the built-in map, remembered per confidence (verdicts share a few hundred values).
    """
    if bins is not None or type(conf) is not float or not conf:  # (1 == 1.0 and 0.0 == -0.0 as keys)
        return _calibrate(conf, table() if bins is None else bins)
    got = _BUILTIN.get(conf)
    if got is None:
        got = _calibrate(conf, table())
        if len(_BUILTIN) >= MEMO_MAX:
            _BUILTIN.clear()
        _BUILTIN[conf] = got
    return got


#: :func:`calibrate` by the built-in map, per confidence (at most :data:`MEMO_MAX`; past it, the memo starts again).
_BUILTIN: dict[float, tuple[float, str]] = {}
MEMO_MAX = 4096


def _calibrate(conf: float, bins: tuple[Bin, ...]) -> tuple[float, str]:
    for b in bins:
        if b.low <= conf < b.high:
            if b.floor <= conf:
                return conf, ""
            return b.floor, (
                f"calibrated {conf:.2f} -> {b.floor:.2f}: {b.right} of {b.verdicts} such verdicts were right "
                "in the evaluation (docs/fingerprints.md#calibration)"
            )
    return conf, ""
