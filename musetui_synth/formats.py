"""Line envelopes of the three transcript layouts, shared by the sample and the corpus writers."""

from __future__ import annotations

from typing import Any

from .times import iso_ms, micros

JSON = dict[str, Any]

#: Codex rollout file names use local time; the generated machines sit at UTC+1 (BST).
CODEX_LOCAL_OFFSET_HOURS = 1


def muse_line(session_id: str, t: float, payload: JSON) -> JSON:
    """Return one Muse ``session.jsonl`` line (§1.2): ``recorded_at`` in microseconds."""
    return {
        "stream": {"kind": "session", "id": session_id},
        "recorded_at": micros(t),
        "payload": payload,
    }


def muse_record(kind: str, record: JSON) -> JSON:
    """Return a ``metadata`` / ``route_facts`` payload."""
    return {"kind": kind, "record": record}


def muse_event(event: JSON) -> JSON:
    """Return a ``run`` payload carrying ``event``."""
    return {"kind": "run", "event": event}


def codex_line(t: float, kind: str, payload: JSON) -> JSON:
    """Return one Codex rollout line (§2.2)."""
    return {"timestamp": iso_ms(t), "type": kind, "payload": payload}


def codex_rate_limits(used_primary: float, used_secondary: float, resets_at: int) -> JSON:
    """Return a ``token_count.rate_limits`` object of a ChatGPT-login Codex session."""
    return {
        "limit_id": "codex",
        "limit_name": None,
        "primary": {"used_percent": used_primary, "window_minutes": 300, "resets_at": resets_at},
        "secondary": {
            "used_percent": used_secondary,
            "window_minutes": 10080,
            "resets_at": resets_at + 432_000,
        },
        "credits": {"has_credits": False, "unlimited": False, "balance": None},
        "plan_type": "plus",
    }


def codex_usage(inp: int, cached: int, out: int, reasoning: int) -> JSON:
    """Return a Codex token-usage object."""
    return {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "output_tokens": out,
        "reasoning_output_tokens": reasoning,
        "total_tokens": inp + out,
    }


def anthropic_usage(
    inp: int,
    out: int,
    cache_create: int,
    cache_read: int,
    *,
    geo: str = "global",
) -> JSON:
    """Return a first-party Anthropic ``usage`` object (service tier, nested cache, geo)."""
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": cache_create,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache_create,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": out,
        "service_tier": "standard",
        "inference_geo": geo,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "iterations": [],
        "speed": "standard",
    }
