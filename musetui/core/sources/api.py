"""Raw API captures: OpenAI Responses and Chat Completions, Anthropic Messages, Gemini generateContent.

Each file is either one response object (often pretty-printed over many lines) or a
stream with one event per line (optionally SSE ``data:`` lines). The whole file is one
session; its id is the response id.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from musetui.core.model import Item
from musetui.core.sources.base import (
    ZONE_MODEL,
    ZONE_QUOTED,
    Observer,
    Record,
    as_dict,
    as_list,
    as_text,
    content_text,
    dig,
    json_text,
    new_item,
    record_time,
    text_of,
)
from musetui.core.sources.spec import Format
from musetui.core.sources.zones import ZONE_TEXT, ZONE_TOOL_ARGS, Zones

RESPONSES = "openai-responses"
CHAT = "openai-chat"
ANTHROPIC = "anthropic-messages"
GEMINI = "gemini"

#: A raw API body is the serving stack's own envelope, except the fields that carry what the
#: model wrote (docs/fingerprints.md#zones): reply and reasoning text, tool-call arguments and
#: inputs, and server-tool results. One table for the four API formats (and Converse).
ZONES = Zones(
    stack=("*",),
    quoted=(
        ("*.text", ZONE_TEXT),
        ("*.thinking", ZONE_TEXT),
        ("*.summary", ZONE_TEXT),
        ("*.refusal", ZONE_TEXT),
        ("*.reasoning_content", ZONE_TEXT),
        ("choices[].message.content", ZONE_TEXT),
        ("choices[].delta.content", ZONE_TEXT),
        ("*.arguments", ZONE_TOOL_ARGS),
        ("*.input", ZONE_TOOL_ARGS),
        ("*.args", ZONE_TOOL_ARGS),
        ("*.partial_json", ZONE_TOOL_ARGS),
        ("*.content[].content", ZONE_QUOTED),
        ("delta", ZONE_TEXT),  # a Responses stream's text and argument deltas; Anthropic's delta events
    ),
    default=ZONE_MODEL,
    keep=("delta.signature", "delta.stop_reason", "delta.stop_sequence"),
)

#: Where each API body records token usage: (the usage object's key, each field's paths inside it,
#: summed when several). ``input`` counts the whole prompt (Anthropic's input_tokens leaves out cache
#: reads and writes); ``reasoning`` is the breakdown the body gives of the output, where it gives one.
USAGE: dict[str, tuple[str, dict[str, tuple[tuple[str, ...], ...]]]] = {
    RESPONSES: (
        "usage",
        {
            "input": (("input_tokens",),),
            "output": (("output_tokens",),),
            "cached": (("input_tokens_details", "cached_tokens"),),
            "reasoning": (("output_tokens_details", "reasoning_tokens"),),
        },
    ),
    CHAT: (
        "usage",
        {
            "input": (("prompt_tokens",),),
            "output": (("completion_tokens",),),
            "cached": (("prompt_tokens_details", "cached_tokens"),),
            "reasoning": (("completion_tokens_details", "reasoning_tokens"),),
        },
    ),
    ANTHROPIC: (
        "usage",
        {
            "input": (("input_tokens",), ("cache_read_input_tokens",), ("cache_creation_input_tokens",)),
            "output": (("output_tokens",),),
            "cached": (("cache_read_input_tokens",),),
            "reasoning": (("output_tokens_details", "thinking_tokens"),),
        },
    ),
    GEMINI: (
        "usageMetadata",
        {
            "input": (("promptTokenCount",),),
            "output": (("candidatesTokenCount",),),
            "cached": (("cachedContentTokenCount",),),
            "reasoning": (("thoughtsTokenCount",),),
        },
    ),
}

_ANTHROPIC_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)


def sniff(obj: Any) -> tuple[str, str] | None:
    """Recognise an API object or stream event; returns (format, rule)."""
    obj_type = dig(obj, "object")
    t = dig(obj, "type")
    if obj_type == "response":
        return RESPONSES, "openai-responses: object == 'response'"
    if isinstance(t, str) and t.startswith("response.") and dig(obj, "sequence_number") is not None:
        return RESPONSES, f"openai-responses: stream event type {t!r}"
    if obj_type in ("chat.completion", "chat.completion.chunk"):
        return CHAT, f"openai-chat: object == {obj_type!r}"
    choices = dig(obj, "choices")
    if (
        choices is not None
        and not isinstance(choices, str | int | float)
        and (dig(obj, "prompt_filter_results") is not None or dig(obj, "id") is not None)
    ):
        return CHAT, "openai-chat: has choices[]"
    if t == "message" and dig(obj, "role") == "assistant" and dig(obj, "content") is not None:
        return ANTHROPIC, "anthropic-messages: type == 'message', role == 'assistant'"
    if (
        isinstance(t, str)
        and t in _ANTHROPIC_EVENTS
        and (dig(obj, "message") is not None or dig(obj, "index") is not None or t in ("message_stop", "ping"))
    ):
        return ANTHROPIC, f"anthropic-messages: stream event {t!r}"
    if dig(obj, "candidates") is not None and (
        dig(obj, "usageMetadata") is not None
        or dig(obj, "modelVersion") is not None
        or dig(obj, "responseId") is not None
    ):
        return GEMINI, "gemini: candidates with usageMetadata/modelVersion/responseId"
    return None


class ApiObserver(Observer):
    """Reads the response id, model, creation time and token usage from objects or stream events.

    A stream repeats a response's usage (running or final counts): per response id, each count's
    last value is kept; a file of several responses sums them.
    """

    def __init__(self, summary: Any) -> None:
        super().__init__(summary)
        #: response id -> "field path" -> the last count seen
        self.counts: dict[str, dict[str, int]] = {}
        self.current = ""  # the response the events belong to (Anthropic's message_delta names none)

    def _usage(self, doc: Any, holder: Any, rid: str | None) -> None:
        table = USAGE.get(self.summary.format)
        if table is None:
            return
        key, fields = table
        usage = dig(holder, key) if holder is not doc else None
        if usage is None:
            usage = dig(doc, key)
        if rid:
            self.current = rid
        if usage is None or not hasattr(usage, "get"):
            return
        got = self.counts.setdefault(rid or self.current, {})
        for paths in fields.values():
            for path in paths:
                v = dig(usage, *path)
                if type(v) is int:
                    got[".".join(path)] = v

    def finish(self) -> None:
        table = USAGE.get(self.summary.format)
        if table is None or not self.counts:
            return
        fields = table[1]
        for got in self.counts.values():
            totals: dict[str, int | None] = {}
            for name, paths in fields.items():
                present = [got[k] for k in (".".join(p) for p in paths) if k in got]
                totals[name] = sum(present) if present else None
            self.add_usage(totals["input"], totals["output"], totals["cached"], totals["reasoning"])

    def observe(self, doc: Any, line: int) -> tuple[Any, int]:
        s = self.summary
        resp = dig(doc, "response")  # Responses stream events wrap the response
        message = dig(doc, "message")  # Anthropic message_start wraps the message
        holder = (
            resp
            if resp is not None and dig(resp, "id") is not None
            else (message if dig(message, "id") is not None else doc)
        )
        rid = text_of(dig(holder, "id")) or text_of(dig(holder, "responseId"))
        if rid and s.session_id is None:
            s.session_id = rid
        model = text_of(dig(holder, "model")) or text_of(dig(holder, "modelVersion"))
        if model:
            self.declare_model(model)
        self._usage(doc, holder, rid)
        t = dig(holder, "created_at")
        if t is None:
            created = dig(holder, "created")
            t = created if created not in (0, None) else None
        return t, ZONE_MODEL


#: Appends the items of one record (a whole response object) to the list.
_Builder = Callable[[Record, dict[str, Any], list[Item]], None]


def items(fmt: str, records: list[Record]) -> list[Item]:
    """Items for an API capture: the output items of each object, or one per stream event."""
    out: list[Item] = []
    whole = _WHOLE.get(fmt)
    for rec in records:
        obj = as_dict(rec.obj)
        if whole is not None and whole[0](obj):
            whole[1](rec, obj, out)
        else:
            out.append(_event_item(fmt, rec, len(out), obj))
    return out


def _responses_object(rec: Record, obj: dict[str, Any], out: list[Item]) -> None:
    t = record_time(obj.get("created_at"))
    out.append(
        new_item(
            rec,
            len(out),
            "meta",
            role="system",
            time=t,
            subkind="response",
            name=as_text(obj.get("model")),
            ids=[as_text(obj.get("id"))],
            text=f"response {as_text(obj.get('id'))} model={as_text(obj.get('model'))} store={as_text(obj.get('store'))}",
        )
    )
    for it in as_list(obj.get("output")):
        if isinstance(it, dict):
            out.append(_responses_item(rec, len(out), t, it))


def _chat_object(rec: Record, obj: dict[str, Any], out: list[Item]) -> None:
    t = record_time(obj.get("created"))
    for ch in as_list(obj.get("choices")):
        m = ch.get("message") if isinstance(ch, dict) else None
        if isinstance(m, dict):
            _chat_reasoning(rec, t, m, out)
            _chat_message(rec, t, obj, m, out)


def _chat_reasoning(rec: Record, t: float | None, m: dict[str, Any], out: list[Item]) -> None:
    for rd in as_list(m.get("reasoning_details")):
        # OpenRouter passes the upstream's reasoning through: summaries, text, encrypted blobs
        if isinstance(rd, dict):
            enc = rd.get("type") == "reasoning.encrypted"
            rid = rd.get("id")
            out.append(
                new_item(
                    rec,
                    len(out),
                    "reasoning",
                    role="assistant",
                    time=t,
                    subkind=as_text(rd.get("type")),
                    ids=[rid] if isinstance(rid, str) else [],
                    text="" if enc else as_text(rd.get("summary") or rd.get("text") or ""),
                    reasoning="encrypted" if enc else "visible",
                )
            )
    if m.get("reasoning_content"):
        out.append(
            new_item(
                rec,
                len(out),
                "reasoning",
                role="assistant",
                time=t,
                subkind="reasoning_content",
                text=as_text(m["reasoning_content"]),
                reasoning="visible",
            )
        )


def _chat_message(rec: Record, t: float | None, obj: dict[str, Any], m: dict[str, Any], out: list[Item]) -> None:
    calls = as_list(m.get("tool_calls"))
    if m.get("content"):
        out.append(
            new_item(
                rec,
                len(out),
                "message",
                role="assistant",
                time=t,
                subkind="message",
                ids=[as_text(obj.get("id"))],
                text=as_text(m["content"]),
            )
        )
    for c in calls:
        if isinstance(c, dict):
            fn = as_dict(c.get("function"))
            out.append(
                new_item(
                    rec,
                    len(out),
                    "tool_call",
                    role="assistant",
                    time=t,
                    subkind="tool_call",
                    name=as_text(fn.get("name")),
                    ids=[as_text(c.get("id"))],
                    text=as_text(fn.get("arguments")),
                )
            )


def _anthropic_object(rec: Record, obj: dict[str, Any], out: list[Item]) -> None:
    ids = [as_text(obj.get("id"))]
    for b in as_list(obj.get("content")):
        if isinstance(b, dict):
            bt = b.get("type")
            block = _ANTHROPIC_BLOCKS.get(bt) if isinstance(bt, str) else None
            out.append((block or _anthropic_other)(rec, len(out), ids, b))


def _anthropic_thinking(rec: Record, idx: int, ids: list[str], b: dict[str, Any]) -> Item:
    reasoning = "visible" if b.get("signature") else "empty-signature"
    text = as_text(b.get("thinking") or "")
    return new_item(
        rec, idx, "reasoning", role="assistant", subkind=b["type"], ids=list(ids), text=text, reasoning=reasoning
    )


def _anthropic_redacted(rec: Record, idx: int, ids: list[str], b: dict[str, Any]) -> Item:
    text = "[redacted thinking]"
    return new_item(
        rec, idx, "reasoning", role="assistant", subkind=b["type"], ids=list(ids), text=text, reasoning="redacted"
    )


def _anthropic_tool_use(rec: Record, idx: int, ids: list[str], b: dict[str, Any]) -> Item:
    name, own = as_text(b.get("name")), [as_text(b.get("id"))]
    text = json_text(b.get("input"))
    return new_item(rec, idx, "tool_call", role="assistant", subkind=b["type"], name=name, ids=own, text=text)


def _anthropic_other(rec: Record, idx: int, ids: list[str], b: dict[str, Any]) -> Item:
    subkind = as_text(b.get("type"))
    return new_item(rec, idx, "message", role="assistant", subkind=subkind, ids=list(ids), text=content_text([b]))


#: A message's content block type -> its item (any other type is a message).
_ANTHROPIC_BLOCKS: dict[str, Callable[[Record, int, list[str], dict[str, Any]], Item]] = {
    "thinking": _anthropic_thinking,
    "redacted_thinking": _anthropic_redacted,
    "tool_use": _anthropic_tool_use,
    "server_tool_use": _anthropic_tool_use,
}


def _gemini_object(rec: Record, obj: dict[str, Any], out: list[Item]) -> None:
    for cand in as_list(obj.get("candidates")):
        for part in as_list(dig(cand, "content", "parts")):
            if isinstance(part, dict):
                out.append(_gemini_part(rec, len(out), part))


def _gemini_part(rec: Record, idx: int, part: dict[str, Any]) -> Item:
    if "functionCall" in part:
        fc = part["functionCall"] if isinstance(part["functionCall"], dict) else {}
        return new_item(
            rec,
            idx,
            "tool_call",
            role="assistant",
            subkind="functionCall",
            name=as_text(fc.get("name")),
            text=json_text(fc.get("args")),
            reasoning="encrypted" if part.get("thoughtSignature") else None,
        )
    kind = "reasoning" if part.get("thought") else "message"
    return new_item(
        rec,
        idx,
        kind,
        role="assistant",
        subkind="part",
        text=as_text(part.get("text") or ""),
        reasoning=("visible" if kind == "reasoning" else None),
    )


#: Format -> (is this record a whole response object?, its items); other records are stream events.
_WHOLE: dict[str, tuple[Callable[[dict[str, Any]], bool], _Builder]] = {
    RESPONSES: (lambda obj: obj.get("object") == "response", _responses_object),
    CHAT: (lambda obj: obj.get("object") == "chat.completion", _chat_object),
    ANTHROPIC: (lambda obj: obj.get("type") == "message", _anthropic_object),
    GEMINI: (lambda obj: "candidates" in obj, _gemini_object),
}


def _responses_item(rec: Record, idx: int, t: float | None, it: dict[str, Any]) -> Item:
    typ = as_text(it.get("type"))
    ids = [i for i in (it.get("id"), it.get("call_id")) if isinstance(i, str)]
    if typ == "reasoning":
        enc = it.get("encrypted_content")
        return new_item(
            rec,
            idx,
            "reasoning",
            role="assistant",
            time=t,
            subkind=typ,
            ids=ids,
            text=content_text(it.get("content")) or content_text(it.get("summary")),
            reasoning="encrypted" if isinstance(enc, str) and enc else "visible",
        )
    if typ == "message":
        return new_item(
            rec,
            idx,
            "message",
            role=as_text(it.get("role")),
            time=t,
            subkind=typ,
            ids=ids,
            text=content_text(it.get("content")),
        )
    if typ.endswith("_call") or typ in ("program",):
        args = it.get("arguments", it.get("action", it.get("input")))
        return new_item(
            rec,
            idx,
            "tool_call",
            role="assistant",
            time=t,
            subkind=typ,
            name=as_text(it.get("name") or typ),
            ids=ids,
            text=args if isinstance(args, str) else json_text(args),
        )
    if typ.endswith("_output"):
        return new_item(
            rec, idx, "tool_result", role="tool", time=t, subkind=typ, ids=ids, text=json_text(it.get("output"))
        )
    if typ == "compaction":
        return new_item(
            rec,
            idx,
            "summary",
            role="system",
            time=t,
            subkind=typ,
            ids=ids,
            text="compaction (encrypted)",
            reasoning="encrypted",
        )
    return new_item(rec, idx, "unknown", time=t, subkind=typ, ids=ids, text=json_text(it)[:2000])


def _event_item(fmt: str, rec: Record, idx: int, obj: dict[str, Any]) -> Item:
    """One stream event as an item."""
    t = obj.get("type") or obj.get("object") or "event"
    ids = [
        i
        for i in (obj.get("id"), dig(obj, "item", "id"), dig(obj, "response", "id"), dig(obj, "message", "id"))
        if isinstance(i, str) and i
    ]
    text = ""
    delta = obj.get("delta")
    if isinstance(delta, str):
        text = delta
    elif isinstance(delta, dict):
        text = as_text(
            delta.get("text")
            or delta.get("thinking")
            or delta.get("partial_json")
            or delta.get("content")
            or delta.get("reasoning_content")
            or ""
        )
    elif fmt == CHAT:
        for ch in as_list(obj.get("choices")):
            d = ch.get("delta") if isinstance(ch, dict) else None
            if isinstance(d, dict):
                text += as_text(d.get("content") or d.get("reasoning_content") or "")
    kind = "reasoning" if ("reasoning" in as_text(t) or "thinking" in as_text(t)) else "event"
    return new_item(
        rec,
        idx,
        kind,
        time=record_time(obj.get("created_at") or obj.get("created") or None),
        subkind=as_text(t),
        name=as_text(t),
        ids=ids,
        text=text,
    )


def _spec(fmt: str) -> Format:
    """The registry's entry for one API format (:func:`sniff` tells the four apart)."""

    def sniff_one(obj: Any) -> str | None:
        found = sniff(obj)
        return found[1] if found is not None and found[0] == fmt else None

    return Format(fmt, "records", sniff_one, ApiObserver, functools.partial(items, fmt), api_body=True, zones=ZONES)


SPECS = (_spec(RESPONSES), _spec(CHAT), _spec(ANTHROPIC), _spec(GEMINI))
