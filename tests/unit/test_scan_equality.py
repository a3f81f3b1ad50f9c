"""The cold scan's shortcuts change no output: records, evidence and flags stay what they were.

The sample's ``scan --json`` is compared byte for byte with the committed expectation
(``expected/sample_scan.jsonl``, written by the scan before the shortcuts). After a change
that is meant to move the output, rewrite it with
``python -m musetui scan --no-cache --json -q sample_transcripts > tests/unit/expected/sample_scan.jsonl``
(from the repository root) and review the diff. Each shortcut is also checked against the
plain code it replaced, on random input.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from musetui.core.fingerprints import extract
from musetui.core.fingerprints.decoders import _common, anthropic

REPO = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).with_name("expected") / "sample_scan.jsonl"


def _examples(deep: int) -> int:
    """A fifth of the deep run's examples by default: the same fixed draws on every run (see conftest);
    ``MUSETUI_SLOW=1`` draws all of them, fresh."""
    return deep if os.environ.get("MUSETUI_SLOW") else deep // 5


def test_sample_scan_is_the_committed_expectation() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", "-q", "sample_transcripts"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    expected = EXPECTED.read_bytes()
    assert out.count(b"\n") == expected.count(b"\n")
    for got, want in zip(out.splitlines(), expected.splitlines(), strict=True):
        assert got == want, orjson.loads(want)["path"]


def _iso_reference(seconds: int) -> str:
    try:
        d = datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return f"out of range ({seconds})"
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}Z"


@settings(max_examples=_examples(2000), deadline=None)
@given(
    st.one_of(
        st.integers(min_value=0, max_value=_common._ISO_FAST_END + 10),
        st.integers(min_value=-(10**12), max_value=10**13),
        st.sampled_from([0, 59, 60, 86399, 86400, _common._ISO_FAST_END - 1, _common._ISO_FAST_END, -1]),
    )
)
def test_iso_s_renders_as_datetime_does(seconds: int) -> None:
    assert _common._iso_s(seconds) == _iso_reference(seconds)


_B64 = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=!", max_size=200)


@settings(max_examples=_examples(1000), deadline=None)
@given(st.one_of(_B64, st.binary(max_size=150).map(lambda b: base64.urlsafe_b64encode(b).decode())), st.booleans())
def test_b64_head_is_the_head_of_b64_prefix(s: str, url: bool) -> None:
    data, clean = _common._b64_prefix(s, url)
    for n in (0, 1, 9, 25, 64):
        head, total, head_clean = _common._b64_head(s, url, n)
        assert (head, total, head_clean) == (data[:n], len(data), clean), (s, url, n)


@settings(max_examples=_examples(1000), deadline=None)
@given(
    st.text(alphabet=anthropic.B58_ALPHABET, min_size=20, max_size=24),
    st.sampled_from(["msg_", "req_", "toolu_", "msg_bdrk_"]),
)
def test_anthropic_base58_is_the_plain_base58_value(digits: str, prefix: str) -> None:
    got = anthropic.decode_anthropic_id(prefix + "01" + digits)
    value = 0
    for c in digits:
        value = value * 58 + anthropic._B58_INDEX[c]
    if value >= 1 << 128:
        assert got is None or got.problems == ("bad-encoding",)
    else:
        assert got is not None
        ms = int.from_bytes(value.to_bytes(16, "big")[:6], "big")
        assert got.time is None or got.time == ms / 1000.0


def _find_path_reference(obj: Any, needle: str, key: str | None, path: str = "") -> str | None:
    """The plain walk: the first string (or key) in document order holding the needle."""
    if isinstance(obj, dict):
        children = [(f"{path}.{k}" if path else str(k), k, v) for k, v in obj.items()]
    elif isinstance(obj, list):
        children = [(f"{path}[{i}]", None, v) for i, v in enumerate(obj)]
    else:
        return None
    for sub, k, v in children:
        if key is not None and k is not None and k == key:
            return sub
        if isinstance(v, str):
            if needle and needle in v:
                return _in_string_reference(v, needle, key, sub)
        elif isinstance(v, dict | list):
            found = _find_path_reference(v, needle, key, sub)
            if found is not None:
                return found
    return None


def _in_string_reference(v: str, needle: str, key: str | None, sub: str) -> str:
    if len(v) > len(needle) and v[:1] in "{[" and v[-1:] in "}]":
        try:
            inner = orjson.loads(v)
        except orjson.JSONDecodeError:
            return sub
        return _find_path_reference(inner, needle, key, sub + "<json>") or sub
    return sub


_WORDS = st.sampled_from(
    ["rs_1", "ab", "", "x rs_1", '{"a": "rs_1"}', '["rs_1"]', "key", '{".a": ["rs_1"]}', '[{"b": "x"}]']
)
_JSON = st.recursive(
    st.one_of(_WORDS, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "key", "rs_1", ".x", "", "[0]", ".."]), inner, max_size=4),
    ),
    max_leaves=25,
)


@settings(max_examples=_examples(3000), deadline=None)
@given(_JSON, st.sampled_from([("rs_1", None), ("ab", None), ("", None), ("rs_1", "key"), ("x", "b")]))
def test_field_path_is_the_plain_walk(obj: Any, needle_key: tuple[str, str | None]) -> None:
    needle, key = needle_key
    assert extract.field_path(obj, needle, key) == _find_path_reference(obj, needle, key)


def test_with_value_is_replace_of_every_field() -> None:
    from dataclasses import fields, replace

    from musetui.core.fingerprints.types import Decoded

    values: dict[str, Any] = {f.name: f"x-{f.name}" for f in fields(Decoded)}
    values.update(time=1.5, fields=(("a", "b"),), problems=("p",))
    d = Decoded(**values)
    assert d.with_value("other") == replace(d, value="other")


@settings(max_examples=_examples(3000), deadline=None)
@given(
    st.one_of(
        st.floats(min_value=-7e10, max_value=3e11, allow_nan=False),
        st.integers(min_value=0, max_value=2**35).map(lambda s: s + 0.9995),
        st.sampled_from([float("nan"), float("inf"), -1e20, 1e20, 253402300800.0, -62135596801.0, 0.0005, -0.0005]),
    )
)
def test_iso_renders_as_isoformat_does(ts: float) -> None:
    """model.iso spells out datetime.isoformat(timespec="milliseconds") with Z (rounding, padding, range)."""
    from musetui.core.model import iso

    try:
        want: str | None = datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        want = None
    assert iso(ts) == want


_TEXT = st.one_of(st.none(), st.text(max_size=8))


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, min_size=12, max_size=12), st.integers(min_value=6, max_value=12), st.booleans())
def test_decoded_init_stores_what_the_dataclass_would(values: list[Any], n: int, by_keyword: bool) -> None:
    """Decoded's construction (filled in unfrozen, then a Decoded) keeps the dataclass's fields, order, defaults and frozenness."""
    import dataclasses
    import pickle

    from musetui.core.fingerprints.types import Decoded

    names = [f.name for f in dataclasses.fields(Decoded)]
    defaults: list[Any] = [None, (), "", (), "", None]  # time, fields, meaning, problems, shape, via
    args = values[:n]
    d = Decoded(**dict(zip(names, args, strict=False))) if by_keyword else Decoded(*args)
    assert [getattr(d, k) for k in names] == args + defaults[n - 6 :]
    assert type(d) is Decoded and d == dataclasses.replace(d) and hash(d) == hash(dataclasses.replace(d))
    assert pickle.loads(pickle.dumps(d)) == d
    try:
        setattr(d, "value", "x")  # noqa: B010 (an assignment, as mypy would refuse it)
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("Decoded is no longer frozen")
    for bad in ({"detector": "a"}, {**dict(zip(names, args, strict=False)), "nope": 1}):
        try:
            Decoded(**bad)
        except TypeError:
            continue
        raise AssertionError(f"accepted {bad}")
