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
