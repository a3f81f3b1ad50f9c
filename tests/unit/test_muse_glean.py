"""Muse ``model_completed`` lines: the probe's one-match fast path reads what its general byte reading reads
(the same answer, declared models and token usage), on lines as Muse writes them and on others (hypothesis)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from musetui.core.model import SessionSummary
from musetui.core.sources import muse

_COUNT = st.one_of(
    st.integers(min_value=0, max_value=10**12),
    st.integers(max_value=-1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.none(),
    st.text(max_size=3),
)
_NAMES = ["input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens"]
_MODEL = st.one_of(st.sampled_from(["meta/avocado-1.3", "gpt-5", "<synthetic>", ""]), st.text(max_size=12), st.none())


@st.composite
def _event(draw: Any) -> dict[str, Any]:
    """A model_completed event: often as Muse writes it (a model, then the four counts in order), else not."""
    event: dict[str, Any] = {"kind": "model_completed"}
    if draw(st.booleans()):  # the plain layout (the fast path's)
        event["model"] = draw(st.sampled_from(["meta/avocado-1.3", "<synthetic>", "", "é"]))
        event["usage"] = {n: draw(st.integers(min_value=0, max_value=10**12)) for n in _NAMES}
        return event
    model = draw(_MODEL)
    if model is not None:
        event["model"] = model
    if draw(st.booleans()):
        names = draw(st.permutations(_NAMES)) if draw(st.booleans()) else _NAMES
        usage: dict[str, Any] = {n: draw(_COUNT) for n in names if draw(st.integers(0, 9))}
        if draw(st.integers(0, 5)) == 0:
            usage["extra"] = {"input_tokens": 1}
        event["usage"] = usage
    if draw(st.integers(0, 5)) == 0:
        event["model_usage"] = {"model": "other", "usage": {"input_tokens": 5}}
    return event


def _summary() -> SessionSummary:
    return SessionSummary(path="s.jsonl", abspath="/x/s.jsonl", root="/x", format="muse", format_rule="")


def _glean(line: bytes) -> tuple[bool, Any, Any, Any]:
    obs = muse.MuseObserver(_summary())
    wants_parse = muse.MuseProbe().glean(line, obs)
    s = obs.summary
    return wants_parse, s.usage, s.models, s.declared_model


@given(_event(), st.booleans(), st.integers(min_value=0, max_value=2**53))
def test_the_fast_path_reads_what_the_byte_reading_reads(event: dict[str, Any], stream_model: bool, t: int) -> None:
    stream: dict[str, Any] = {"kind": "session", "id": "019e83d1-5e9e-7157-a288-9ce6d8de50a0"}
    if stream_model:  # a "model" (and a "usage") before the event's: the first one is what the bytes read
        stream["model"] = "before"
        stream["usage"] = {"input_tokens": 3}
    line = orjson.dumps({"stream": stream, "recorded_at": t, "payload": {"kind": "run", "event": event}})
    fast = _glean(line)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(muse, "_COMPLETED", lambda line, pos: None)  # the general reading alone
        assert _glean(line) == fast


def test_the_plain_layout_is_read_from_its_bytes() -> None:
    """The layout Muse writes is gleaned (the fast path): the test above compares something."""
    event = {"kind": "model_completed", "model": "m", "usage": dict(zip(_NAMES, [5, 6, 7, 8], strict=True))}
    line = orjson.dumps(
        {"stream": {"kind": "session", "id": "s"}, "recorded_at": 1, "payload": {"kind": "run", "event": event}}
    )
    assert muse._COMPLETED(line, line.index(b'model_completed"') + len("model_completed")) is not None
    assert _glean(line) == (False, {"input": 5, "output": 6, "cached": 7, "reasoning": 8}, {"m": 1}, "m")
