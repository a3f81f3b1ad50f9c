"""Format adapters and content-based format detection."""

from __future__ import annotations

from typing import Any

from musetui.fingerprints.types import Decoded
from musetui.model import Item, SessionSummary
from musetui.sources import api, bedrock, claude_code, codex, generic, http_capture, muse
from musetui.sources.base import Observer, Probe, Record


def sniff(obj: Any) -> tuple[str, str] | None:
    """Recognise one parsed record; returns (format, the rule that decided) or None."""
    rule = muse.sniff(obj)
    if rule:
        return muse.FORMAT, rule
    rule = codex.sniff(obj)
    if rule:
        return codex.FORMAT, rule
    rule = claude_code.sniff(obj)
    if rule:
        return claude_code.FORMAT, rule
    found = api.sniff(obj)
    if found is not None:
        return found
    rule = bedrock.sniff(obj)
    if rule:
        return bedrock.FORMAT, rule
    return None


def observer_for(fmt: str, summary: SessionSummary) -> Observer:
    """The scan-time observer for a format."""
    if fmt == muse.FORMAT:
        return muse.MuseObserver(summary)
    if fmt == codex.FORMAT:
        return codex.CodexObserver(summary)
    if fmt == claude_code.FORMAT:
        return claude_code.ClaudeObserver(summary)
    if fmt in (api.RESPONSES, api.CHAT, api.ANTHROPIC, api.GEMINI):
        return api.ApiObserver(summary)
    if fmt == bedrock.FORMAT:
        return bedrock.ConverseObserver(summary)
    return generic.GenericObserver(summary)


def probe_for(fmt: str) -> Probe:
    """Byte-level line probes for a format (observe everything when the format has none).

    Probes hold no state: each format's is made once per process.
    """
    probe = _PROBES.get(fmt)
    if probe is None:
        if fmt == muse.FORMAT:
            probe = muse.MuseProbe()
        elif fmt == codex.FORMAT:
            probe = codex.CodexProbe()
        elif fmt == claude_code.FORMAT:
            probe = claude_code.ClaudeProbe()
        else:
            probe = Probe()
        _PROBES[fmt] = probe
    return probe


_PROBES: dict[str, Probe] = {}


def build_items(fmt: str, records: list[Record]) -> list[Item]:
    """Items of an opened session, by format."""
    if fmt == muse.FORMAT:
        return muse.items(records)
    if fmt == codex.FORMAT:
        return codex.items(records)
    if fmt == claude_code.FORMAT:
        return claude_code.items(records)
    if fmt in (api.RESPONSES, api.CHAT, api.ANTHROPIC, api.GEMINI):
        return api.items(fmt, records)
    if fmt == bedrock.FORMAT:
        return bedrock.items(records)
    if fmt == http_capture.FORMAT:
        return http_capture.items(records)
    return generic.items(records)


API_FORMATS = frozenset({api.RESPONSES, api.CHAT, api.ANTHROPIC, api.GEMINI, bedrock.FORMAT})


def walk_record(obj: Any) -> list[tuple[Decoded, str | None, str]]:
    """Every artifact of one API record: the decoders' walk, plus a router's named upstream."""
    return http_capture.walk_body(obj)
