"""Amazon Bedrock Converse and ConverseStream bodies (FINGERPRINTS.md §10.1).

A Converse response is ``{"output": {"message": {"role", "content": [...]}}, "stopReason",
"usage": {"inputTokens", …}, "metrics": {"latencyMs"}}``; content blocks hold ``text``,
``toolUse{toolUseId, name, input}`` and ``reasoningContent.reasoningText{text, signature}``.
A ConverseStream is one event per record, each an object with a single key
(``messageStart``, ``contentBlockStart``, ``contentBlockDelta``, ``contentBlockStop``,
``messageStop``, ``metadata``). Neither carries an id or a model: the maker shows only
through a signature, a tool-id shape or the model id in the request URL.
"""

from __future__ import annotations

from typing import Any

import orjson

from musetui.core.model import Item
from musetui.core.sources.api import ZONES as API_ZONES
from musetui.core.sources.base import ZONE_MODEL, Observer, Record, as_dict, dig, new_item
from musetui.core.sources.spec import Format

FORMAT = "bedrock-converse"
#: Converse bodies quote the model in the same fields as the other API bodies (docs/fingerprints.md#zones).
ZONES = API_ZONES

STREAM_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)


def sniff(obj: Any) -> str | None:
    """Recognise a Converse response or a ConverseStream event."""
    content = dig(obj, "output", "message", "content")
    if (
        content is not None
        and not isinstance(content, str | int | float)
        and (dig(obj, "stopReason") is not None or dig(obj, "metrics", "latencyMs") is not None)
    ):
        return "bedrock-converse: output.message.content with stopReason/metrics"
    for key in ("messageStart", "contentBlockDelta", "contentBlockStart", "messageStop"):
        ev = dig(obj, key)
        if ev is not None and not isinstance(ev, str | int | float | list):
            return f"bedrock-converse: ConverseStream event {key!r}"
    if dig(obj, "metadata", "usage", "inputTokens") is not None and dig(obj, "metadata", "metrics") is not None:
        return "bedrock-converse: ConverseStream metadata event"
    return None


class ConverseObserver(Observer):
    """Converse bodies declare nothing about themselves; only the stop reason is noted."""

    def observe(self, doc: Any, line: int) -> tuple[Any, int]:
        return None, ZONE_MODEL


def _block_item(rec: Record, idx: int, block: dict[str, Any], subkind: str) -> Item | None:
    """One Converse content block (or stream delta) as an item."""
    if "reasoningContent" in block:
        rc = as_dict(block.get("reasoningContent"))
        rt = as_dict(rc.get("reasoningText")) or rc
        if rc.get("redactedContent") is not None:
            return new_item(
                rec,
                idx,
                "reasoning",
                role="assistant",
                subkind=subkind,
                text="[redacted reasoning]",
                reasoning="redacted",
            )
        sig = rt.get("signature")
        text = str(rt.get("text") or "")
        state = "visible" if sig or not text else "empty-signature"
        return new_item(rec, idx, "reasoning", role="assistant", subkind=subkind, text=text, reasoning=state)
    if "toolUse" in block:
        tu = as_dict(block.get("toolUse"))
        tid = tu.get("toolUseId")
        inp = tu.get("input")
        return new_item(
            rec,
            idx,
            "tool_call",
            role="assistant",
            subkind=subkind,
            name=str(tu.get("name")),
            ids=[tid] if isinstance(tid, str) else [],
            text=inp if isinstance(inp, str) else orjson.dumps(inp).decode(),
        )
    if "toolResult" in block:
        tr = as_dict(block.get("toolResult"))
        tid = tr.get("toolUseId")
        return new_item(
            rec,
            idx,
            "tool_result",
            role="tool",
            subkind=subkind,
            ids=[tid] if isinstance(tid, str) else [],
            text=orjson.dumps(tr.get("content")).decode(),
        )
    said = block.get("text")
    if isinstance(said, str):
        return new_item(rec, idx, "message", role="assistant", subkind=subkind, text=said)
    return None


def items(records: list[Record]) -> list[Item]:
    """Items of Converse bodies (one per content block) or ConverseStream events (one per event)."""
    out: list[Item] = []
    for rec in records:
        obj = as_dict(rec.obj)
        content = dig(obj, "output", "message", "content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    it = _block_item(rec, len(out), block, "contentBlock")
                    if it is not None:
                        out.append(it)
            out.append(
                new_item(
                    rec,
                    len(out),
                    "usage",
                    role="system",
                    subkind="stopReason",
                    name=str(obj.get("stopReason")),
                    text=orjson.dumps({k: obj.get(k) for k in ("stopReason", "usage", "metrics")}).decode(),
                )
            )
            continue
        key: str | None = next((k for k in STREAM_EVENTS if k in obj), None)
        ev = as_dict(obj.get(key)) if key else {}
        it = None
        if key == "contentBlockDelta":
            it = _block_item(rec, len(out), as_dict(ev.get("delta")), key)
        elif key == "contentBlockStart":
            start = as_dict(ev.get("start"))
            it = _block_item(rec, len(out), start, key) if start else None
        if it is None:
            it = new_item(
                rec,
                len(out),
                "event",
                subkind=key or "event",
                name=key or "event",
                text=orjson.dumps(ev if key else obj).decode()[:2000],
            )
        out.append(it)
    return out


SPEC = Format(FORMAT, "records", sniff, ConverseObserver, items, api_body=True, zones=ZONES)
