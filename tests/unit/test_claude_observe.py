"""Claude Code's observer reads a record alike whether it is orjson's dict (its fast reads) or simdjson's proxy
(read with ``dig``): same models, usage, ids, merged lines, title and times (hypothesis, odd values included)."""

from __future__ import annotations

from typing import Any

import orjson
import simdjson
from hypothesis import given
from hypothesis import strategies as st

from musetui.core.model import SessionSummary
from musetui.core.sources import claude_code

_SCALAR = st.one_of(st.none(), st.integers(-2, 10**6), st.sampled_from(["", "x", "<synthetic>", "claude-x", "<cmd>"]))
_ODD = st.one_of(_SCALAR, st.just([1, "a"]), st.just({"a": 1}))
_COUNT = st.one_of(st.integers(0, 10**6), st.integers(0, 10**6), _SCALAR)


def _maybe(draw: Any, value: Any) -> Any:
    return value if draw(st.integers(0, 4)) else draw(_ODD)


@st.composite
def _record(draw: Any) -> dict[str, Any]:
    usage: Any = {
        k: draw(_COUNT)
        for k in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        if draw(st.integers(0, 5))
    }
    if draw(st.booleans()):
        usage["output_tokens_details"] = _maybe(draw, {"thinking_tokens": draw(_COUNT)})
    message = {
        "model": draw(
            st.one_of(st.sampled_from(["claude-a", "claude-b"]), st.sampled_from(["claude-a", "<synthetic>"]), _ODD)
        ),
        "id": draw(st.one_of(st.sampled_from(["msg_1", "msg_2", ""]), _ODD)),
        "usage": _maybe(draw, usage),
        "content": draw(st.one_of(st.sampled_from(["hello", "<local>", ""]), _ODD)),
    }
    rec: dict[str, Any] = {
        "type": draw(
            st.one_of(st.just("assistant"), st.sampled_from(["assistant", "user", "summary", "system"]), _ODD)
        ),
        "message": _maybe(draw, message),
        "requestId": draw(st.one_of(st.sampled_from(["req_1", "req_2"]), _ODD)),
        "timestamp": draw(st.one_of(st.just("2026-01-01T00:00:00Z"), _SCALAR)),
        "sessionId": draw(_SCALAR),
        "agentId": draw(_SCALAR),
        "subtype": draw(st.sampled_from(["init", "other"])),
        "model": draw(_SCALAR),
        "summary": draw(_SCALAR),
    }
    return {k: v for k, v in rec.items() if draw(st.integers(0, 6))}


def _state(records: list[bytes], proxies: bool) -> Any:
    summary = SessionSummary(path="s.jsonl", abspath="/x/s.jsonl", root="/x", format="claude-code", format_rule="")
    obs = claude_code.ClaudeObserver(summary)
    times = []
    for line_no, line in enumerate(records, 1):
        doc = simdjson.Parser().parse(line) if proxies else orjson.loads(line)
        t, zone = obs.observe(doc, line_no)
        times.append((t, zone))
        del doc
    obs.finish()
    s = obs.summary
    return times, s.usage, list(s.models.items()), s.declared_model, s.title, s.session_id, obs.merged_lines, s.notes


@given(st.lists(_record(), min_size=1, max_size=6))
def test_dicts_and_proxies_are_read_alike(records: list[dict[str, Any]]) -> None:
    lines = [orjson.dumps(r) for r in records]
    assert _state(lines, proxies=False) == _state(lines, proxies=True)
