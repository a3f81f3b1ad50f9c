"""Muse ``model_completed`` lines: what the probe reads from a line's bytes is what parsing the line gives
(declared models and token usage), on lines as Muse writes them and on others, where it parses (hypothesis);
and over many lines, the gleaned counts summed at the end are what adding each parsed line's gives."""

from __future__ import annotations

from typing import Any

import orjson
import simdjson
from hypothesis import given
from hypothesis import strategies as st

from musetui.core.drift import Watch
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
        big = draw(st.integers(0, 9)) == 0  # (counts of 19 digits and more are parsed, not gleaned)
        top = 2**64 - 1 if big else 10**12  # (orjson writes integers up to 64 bits)
        event["usage"] = {n: draw(st.integers(min_value=0, max_value=top)) for n in _NAMES}
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


def _kinds(line: bytes) -> Any:
    """The line's kinds as the scan's drift watch reads them (from simdjson's proxy), for the probe."""
    doc = simdjson.Parser().parse(line)
    kinds = Watch(muse.KNOWN)(doc, 1)
    del doc
    return kinds


def _glean(line: bytes, watched: bool = False) -> tuple[bool, Any, Any, Any]:
    """What the scan reads of ``line``: from its bytes (and the watch's kinds) when the probe can, else by parsing it."""
    obs = muse.MuseObserver(_summary())
    wants_parse = muse.MuseProbe().glean(line, obs, _kinds(line) if watched else None)
    if wants_parse:
        obs.observe(orjson.loads(line), 1)
    obs.add_usages()  # (the gleaned counts are summed once, when the observer finishes)
    s = obs.summary
    return wants_parse, s.usage, s.models, s.declared_model


def _parsed(line: bytes) -> tuple[Any, Any, Any]:
    obs = muse.MuseObserver(_summary())
    obs.observe(orjson.loads(line), 1)
    s = obs.summary
    return s.usage, s.models, s.declared_model


@given(_event(), st.booleans(), st.integers(min_value=0, max_value=2**53))
def test_what_the_bytes_give_is_what_parsing_gives(event: dict[str, Any], stream_model: bool, t: int) -> None:
    stream: dict[str, Any] = {"kind": "session", "id": "019e83d1-5e9e-7157-a288-9ce6d8de50a0"}
    if stream_model:  # a "model" (and a "usage") of another object before the event's
        stream["model"] = "before"
        stream["usage"] = {"input_tokens": 3}
    line = orjson.dumps({"stream": stream, "recorded_at": t, "payload": {"kind": "run", "event": event}})
    assert _glean(line)[1:] == _parsed(line)
    assert _glean(line, watched=True)[1:] == _parsed(line)


def test_a_nested_model_and_usage_are_not_the_events() -> None:
    """An event with no model or usage of its own, quoting another's, is credited nothing (the bytes once gave 5 tokens)."""
    event = {"kind": "model_completed", "model_usage": {"model": "other", "usage": {"input_tokens": 5}}}
    line = orjson.dumps(
        {"stream": {"kind": "session", "id": "s"}, "recorded_at": 1, "payload": {"kind": "run", "event": event}}
    )
    wants_parse, usage, models, declared = _glean(line)
    assert wants_parse
    assert (usage, models, declared) == _parsed(line)
    assert "other" not in (models or {})


def test_the_plain_layout_is_read_from_its_bytes() -> None:
    """The layout Muse writes is gleaned (the fast path): the test above compares something."""
    event = {"kind": "model_completed", "model": "m", "usage": dict(zip(_NAMES, [5, 6, 7, 8], strict=True))}
    line = orjson.dumps(
        {"stream": {"kind": "session", "id": "s"}, "recorded_at": 1, "payload": {"kind": "run", "event": event}}
    )
    assert muse._COMPLETED(line, line.index(b'model_completed"') + len("model_completed")) is not None
    assert _glean(line) == (False, {"input": 5, "output": 6, "cached": 7, "reasoning": 8}, {"m": 1}, "m")


def _line(event: dict[str, Any], t: int) -> bytes:
    stream = {"kind": "session", "id": "019e83d1-5e9e-7157-a288-9ce6d8de50a0"}
    return orjson.dumps({"stream": stream, "recorded_at": t, "payload": {"kind": "run", "event": event}})


@given(st.lists(_event(), max_size=12), st.booleans())
def test_many_lines_gleaned_sum_to_what_parsing_each_gives(events: list[dict[str, Any]], watched: bool) -> None:
    """A file's lines, gleaned where the probe can (their counts summed once, at the end), against each one parsed."""
    lines = [_line(e, i) for i, e in enumerate(events)]
    probe, gleaned, parsed = muse.MuseProbe(), muse.MuseObserver(_summary()), muse.MuseObserver(_summary())
    for i, line in enumerate(lines):
        if probe.glean(line, gleaned, _kinds(line) if watched else None):
            gleaned.observe(orjson.loads(line), i + 1)
        parsed.observe(orjson.loads(line), i + 1)
    gleaned.finish()
    parsed.finish()
    g, p = gleaned.summary, parsed.summary
    assert (g.usage, list(g.models.items()), g.declared_model) == (p.usage, list(p.models.items()), p.declared_model)
    assert gleaned.usages == []


def test_gleaned_counts_wait_for_the_finish() -> None:
    """The plain layout's counts are summed when the observer finishes a window (its raw bytes) or the file."""
    event = {"kind": "model_completed", "model": "m", "usage": dict(zip(_NAMES, [1, 2, 3, 4], strict=True))}
    obs = muse.MuseObserver(_summary())
    for t in range(3):
        assert not muse.MuseProbe().glean(_line(event, t), obs)
    assert obs.summary.usage is None and len(obs.usages) == 3
    obs.raw_finish(b"")
    assert obs.summary.usage == {"input": 3, "output": 6, "cached": 9, "reasoning": 12} and obs.usages == []
    assert not muse.MuseProbe().glean(_line(event, 3), obs)
    obs.finish()
    assert obs.summary.usage == {"input": 4, "output": 8, "cached": 12, "reasoning": 16}
    assert obs.summary.models == {"m": 4}


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["run", "metadata", "other"]),
            st.one_of(st.sampled_from(sorted(muse.KNOWN_EVENTS | {"new_kind"})), st.none(), st.integers(0, 2)),
            st.one_of(st.none(), st.sampled_from(["fix the bug", "", "  "])),
        ),
        max_size=8,
    ),
    st.booleans(),
)
def test_each_kind_gleaned_with_the_watchs_kinds_or_the_bytes_is_what_parsing_gives(
    records: list[tuple[str, Any, Any]], watched: bool
) -> None:
    """Every payload and event kind (titles from started events): gleaned, then observed where the probe says, as parsed."""
    probe, gleaned, parsed = muse.MuseProbe(), muse.MuseObserver(_summary()), muse.MuseObserver(_summary())
    for i, (pkind, ekind, prompt) in enumerate(records):
        payload: dict[str, Any] = {"kind": pkind}
        if ekind is not None:
            payload["event"] = {"kind": ekind} if prompt is None else {"kind": ekind, "prompt": prompt}
        else:
            payload["record"] = {"provider_id": "p", "model_id": "m"}
        line = orjson.dumps({"stream": {"kind": "session", "id": "s"}, "recorded_at": i, "payload": payload})
        if i == 0 or probe.glean(line, gleaned, _kinds(line) if watched else None):  # (the first decides the format)
            gleaned.observe(orjson.loads(line), i + 1)
        parsed.observe(orjson.loads(line), i + 1)
    g, p = gleaned.summary, parsed.summary
    assert (g.title, g.models, g.declared_provider, g.session_id) == (
        p.title,
        p.models,
        p.declared_provider,
        p.session_id,
    )


@given(
    st.lists(st.sampled_from(["", "a", "sessions", "subagents", "subagent-x", "p1", "c2", "session.jsonl"]), max_size=7)
)
def test_the_parent_is_read_from_the_last_names_as_from_every_name(names: list[str]) -> None:
    """:func:`muse.parent_from_path` splits off the last four names only: what splitting every name reads."""
    path = "/".join(names)
    parts = path.split("/")
    want = parts[-4] if len(parts) >= 4 and parts[-3].startswith("subagent") else None
    assert muse.parent_from_path(path) == want


@given(st.sampled_from(sorted(muse.MuseProbe.skip)), _event(), st.booleans(), st.booleans())
def test_the_kinds_the_scan_passes_by_are_those_glean_takes_nothing_from(
    kinds: Any, event: dict[str, Any], titled: bool, as_read: bool
) -> None:
    """A record of the probe's ``skip`` kinds is not shown to :meth:`glean` (observe.py): it would ask nothing, take nothing."""
    obs = muse.MuseObserver(_summary())
    if titled:
        obs.summary.title = "t"
    line = _line(dict(event, kind=kinds[1]) if as_read else event, 1)  # (its bytes, or a model_completed's)
    before = (obs.summary.title, obs.summary.models, obs.summary.usage, list(obs.usages))
    assert not muse.MuseProbe().glean(line, obs, kinds)
    assert (obs.summary.title, obs.summary.models, obs.summary.usage, list(obs.usages)) == before
