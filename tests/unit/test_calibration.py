"""The calibration map: data that the evaluation wrote, read and checked, applied only where it may be.

Only a verdict that artifacts decided, with no flag, rises to its bin's floor; a declaration
alone stays at 0.5, a flagged verdict keeps its raw confidence, nothing is lowered.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from musetui.core.fingerprints import calibration

REPO = Path(__file__).resolve().parents[2]


def _scan(root: Path) -> list[dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", str(root)],
        capture_output=True,
        check=True,
        text=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_the_builtin_map_is_the_fitters_and_never_lowers() -> None:
    """Each floor is what bench/eval_calibration.py computes from the counts beside it: the Wilson
    lower bound, made non-decreasing, at most 0.99 (a hand-edited floor fails here)."""
    sys.path.insert(0, str(REPO / "bench"))
    from eval_calibration import wilson_low

    bins = calibration.table()
    assert bins, "calibration.toml is empty: run bench/eval_calibration.py"
    text = calibration.BUILTIN_PATH.read_text(encoding="utf-8")
    assert text.startswith("# musetui's calibration map: written by bench/eval_calibration.py")
    floor = 0.0
    for b in bins:
        floor = min(0.99, max(floor, round(wilson_low(b.right, b.verdicts), 3)))
        assert b.floor == floor, b


def test_calibrate_raises_to_the_floor_and_says_so() -> None:
    bins = (calibration.Bin(0.5, 0.8, 0.9, 100, 99), calibration.Bin(0.8, 1.0001, 0.95, 10, 10))
    assert calibration.calibrate(0.6, bins) == (0.9, calibration.calibrate(0.6, bins)[1])
    assert "calibrated 0.60 -> 0.90: 99 of 100" in calibration.calibrate(0.6, bins)[1]
    assert calibration.calibrate(0.97, bins) == (0.97, "")  # above its floor: unchanged
    assert calibration.calibrate(0.3, bins) == (0.3, "")  # in no bin: unchanged


@pytest.mark.parametrize(
    "bad",
    [
        {"bin": [{"low": 0.5, "high": 0.6, "floor": 1.2, "verdicts": 1, "right": 1}]},
        {"bin": [{"low": 0.5, "high": 0.6, "floor": 0.9, "verdicts": 1, "right": 2}]},
        {"bin": [{"low": 0.5, "high": 0.7, "floor": 0.9, "verdicts": 1, "right": 1},
                 {"low": 0.6, "high": 0.8, "floor": 0.9, "verdicts": 1, "right": 1}]},
        {"bin": [{"low": 0.5}]},
    ],
)  # fmt: skip
def test_a_malformed_map_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(calibration.CalibrationError):
        calibration.parse(bad)


def test_the_map_round_trips_through_toml() -> None:
    data = tomllib.loads(calibration.BUILTIN_PATH.read_text(encoding="utf-8"))
    assert calibration.parse(data) == calibration.table()


def test_an_artifact_decided_verdict_is_calibrated_and_a_declared_one_is_not(real_dir: Path, tmp_path: Path) -> None:
    """vercel/ai's Azure Responses fixture (ids, Fernet, content_filters: decided, raw 0.90) rises to
    its bin's floor; its OpenAI Chat text fixture (a declared model and nothing else) stays at 0.5."""
    vercel = real_dir / "vercel__ai"
    for name in (
        "packages__azure__src____fixtures____azure-text.1.json",
        "packages__openai__src__chat____fixtures____openai-text.json",
    ):
        (tmp_path / name).write_bytes((vercel / name).read_bytes())
    recs = {Path(str(r["path"])).name: r for r in _scan(tmp_path)}
    decided = recs["packages__azure__src____fixtures____azure-text.1.json"]
    declared = recs["packages__openai__src__chat____fixtures____openai-text.json"]
    raw = 0.902  # its confidence before the map (docs/fingerprints.md#calibration)
    floor = next(b.floor for b in calibration.table() if b.low <= raw < b.high)
    assert (decided["provider"], decided["host"], decided["flags"]) == ("openai", "azure", [])
    assert decided["confidence"] == max(raw, floor)
    assert (declared["provider"], declared["confidence"]) == ("openai", 0.5)


def test_calibrate_memo_is_the_plain_map() -> None:
    """Remembered per confidence, the built-in map's answer is the bins' own, at every confidence."""
    import random

    rng = random.Random(3)
    confs = [i / 2000 for i in range(2001)] + [rng.random() for _ in range(3000)]
    calibration._BUILTIN.clear()
    for _ in range(2):  # the second pass reads the memo
        for c in confs:
            assert calibration.calibrate(c) == calibration._calibrate(c, calibration.table()), c
    assert calibration._BUILTIN
    one = calibration.calibrate(1)
    assert one == (1, "") and type(one[0]) is int  # (an int is never read from a float's entry)
