"""The scan record's memoized renderings (model.iso, model._round3) give what the plain functions give."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from musetui.core import model
from musetui.core.model import iso


def _plain_iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_iso_memo_agrees_with_isoformat_again_and_again() -> None:
    values = [0, 0.0, -0.0, 1, 1.0005, 1788630410.730227, 1788630410.7299999, 253402300799.999, -1.5]
    for _ in range(2):  # the second pass reads the memo
        for ts in values:
            assert iso(ts) == _plain_iso(ts)
    assert iso(None) is None
    assert iso(float("nan")) is None and iso(float("nan")) is None
    assert iso(1e300) is None and iso(1e300) is None


def test_iso_memo_is_bounded() -> None:
    for i in range(model.ISO_MEMO_MAX * 2 + 5):
        assert iso(1_700_000_000 + i) == _plain_iso(1_700_000_000 + i)
        assert len(model._ISO) <= model.ISO_MEMO_MAX


def test_round3_keeps_type_and_sign() -> None:
    r = model._round3
    for _ in range(2):
        assert r(0.12345) == 0.123
        got_int = r(1)
        assert got_int == 1 and type(got_int) is int
        assert r(1.0) == 1.0 and type(r(1.0)) is float
        assert math.copysign(1, r(-0.0)) == -1.0
        assert math.copysign(1, r(0.0)) == 1.0
        assert r(0) == 0 and type(r(0)) is int
        assert math.isnan(r(float("nan")))


def test_iso_fast_path_carries_as_fromtimestamp_does() -> None:
    """Fractions that round to a whole second carry into the minute, hour, day and year, as datetime's."""
    import random

    fracs = (0.0, 0.0005, 0.0004999, 0.9995, 0.9994999, 0.9999994, 0.9999995, 0.9999996, 0.5, 1e-7, 5e-7)
    wholes = [0, 59, 3599, 86399, 1798761599, 1788630410, 4102444799, 253402296000 - 1, 253402296000, 253402300799]
    rng = random.Random(5)
    values = [w + f for w in wholes for f in fracs]
    values += [rng.uniform(0, 253402300800.0) for _ in range(5000)] + [rng.uniform(1.7e9, 1.9e9) for _ in range(5000)]
    model._ISO.clear()
    model._HOURS.clear()
    for ts in values:
        try:
            want: str | None = _plain_iso(ts)
        except ValueError:  # (past year 9999)
            want = None
        assert iso(ts) == want, ts
    assert model._HOURS, "the hours are remembered"
