"""The cache's data-only encoding: exact round trips, and any other blob is a miss, never an error."""

from __future__ import annotations

import contextlib
import functools
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sample_scans import sample_outcomes

from musetui.core import stored
from musetui.core.cache import LIGHT, SNAPSHOT_ROWS
from musetui.core.cache_codec import Invalid, codec, dump, load, pack, unpack
from musetui.core.model import Diagnostic, Evidence
from musetui.core.scanner import Outcome


def test_outcomes_states_and_light_forms_round_trip(sample_dir: Path) -> None:
    for o in sample_outcomes(sample_dir):
        state = o.state
        o.state = None
        assert stored.decode_outcome(stored.encode_outcome(o)) == o
        light = stored.light_from(o)
        assert load(LIGHT, dump(LIGHT, light)) == light
        if state is None:  # (a whole JSON document: nothing to resume)
            continue
        got = stored.decode_state(stored.encode_state(state, "p"))
        assert got is not None
        back, prefix = got
        assert prefix == "p"
        for name in (
            "fmt",
            "n_lines",
            "offset",
            "items",
            "malformed",
            "located",
            "seen",
            "record_starts",
            "first_time",
        ):
            assert getattr(back, name) == getattr(state, name), name
        assert back.collapsed == state.collapsed
        for key, group in back.collapsed.items():  # the groups hold the very located objects (counted in place)
            assert all(any(x is y for y in back.located) for x in group), key


def test_values_json_cannot_write_plainly_round_trip() -> None:
    ev = Evidence("d", None, None, math.inf, 1, "f", "caf\udce9", "x", time=-math.inf, delta_s=math.nan)
    back = load(Evidence, dump(Evidence, ev))
    assert back.weight == math.inf and back.time == -math.inf and math.isnan(back.delta_s)
    assert back.value == "caf\udce9"  # a file name that is not UTF-8
    d = Diagnostic("p", 2**70, "big")
    assert load(Diagnostic, dump(Diagnostic, d)) == d
    raw = bytes(range(256))
    assert load(bytes, dump(bytes, raw)) == raw


@pytest.mark.parametrize(
    ("tp", "plain"),
    [
        (Diagnostic, ["p", True, "m"]),  # a bool is not a line number
        (Diagnostic, ["p", 1]),
        (Diagnostic, {"path": "p", "line": 1, "message": "m"}),
        (Evidence, ["d", None, None, "1.0", 1, "f", "v", "x", 1, None, None, "verified"]),
        (bytes, ["not base64!"]),
        (bytes, "caf\u00e9"),
        (LIGHT, [None, [["p", 1]]]),
    ],
)
def test_a_value_of_another_shape_is_invalid(tp: Any, plain: Any) -> None:
    with pytest.raises(Invalid):
        load(tp, pack(plain))


def test_blobs_that_are_not_ours_are_invalid() -> None:
    for blob in (
        b"",
        b"x",
        b"o",
        b"o" + b"\x78\x9c" + b"\x00" * 8,
        b"\x80\x04\x95",
        b"j" + __import__("zlib").compress(b"[1,"),
    ):
        with pytest.raises(Invalid):
            unpack(blob)
    bomb = b"o" + __import__("zlib").compress(b" " * 50_000_000)
    with pytest.raises(Invalid):
        unpack(bomb)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


def _replace(value: Any, path: list[int], new: Any) -> Any:
    """``value`` with the node that ``path`` picks (indices into lists, modulo their length) replaced by ``new``."""
    if not path or type(value) is not list or not value:
        return new
    i = path[0] % len(value)
    return [*value[:i], _replace(value[i], path[1:], new), *value[i + 1 :]]


@functools.cache
def _plains() -> list[tuple[str, Any]]:
    sample = Path(__file__).resolve().parents[2] / "sample_transcripts"
    o = next(
        x
        for x in sample_outcomes(sample)
        if x.state is not None and x.summary is not None and x.summary.attribution.evidence
    )
    state = o.state
    o.state = None
    light = stored.light_from(o)
    return [
        ("outcome", codec(Outcome)[0](o)),
        ("state", unpack(stored.encode_state(state, "p"))),
        ("light", codec(LIGHT)[0](light)),
        ("snapshot", codec(SNAPSHOT_ROWS)[0]([("/a", 1, 2, 3, 4, True, light, 5)])),
    ]


@given(which=st.integers(0, 3), path=st.lists(st.integers(0, 40), max_size=6), new=_json)
def test_a_mutated_blob_is_a_miss_or_a_value_never_an_error(which: int, path: list[int], new: Any) -> None:
    kind, plain = _plains()[which]
    blob = pack(_replace(plain, path, new))
    if kind == "outcome":
        got: Any = stored.decode_outcome(blob)
        assert got is None or isinstance(got, Outcome)
    elif kind == "state":
        assert stored.decode_state(blob) is None or isinstance(stored.decode_state(blob), tuple)
    else:
        with contextlib.suppress(Invalid):
            load(LIGHT if kind == "light" else SNAPSHOT_ROWS, blob)
