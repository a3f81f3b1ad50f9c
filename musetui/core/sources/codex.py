"""Codex CLI / Desktop rollouts: ``{"timestamp", "type", "payload"}`` lines (FINGERPRINTS.md §2)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import orjson

from musetui.core.drift import Kinds, Known
from musetui.core.model import Item
from musetui.core.sources.base import (
    ZONE_MODEL,
    ZONE_QUOTED,
    Observer,
    Probe,
    Record,
    as_dict,
    as_text,
    content_text,
    dig,
    find_string_value,
    json_text,
    new_item,
    record_time,
    text_of,
)
from musetui.core.sources.spec import Format
from musetui.core.sources.zones import ZONE_TEXT, ZONE_TOOL_ARGS, Zones

FORMAT = "codex"

#: Where OpenAI's stack writes in a rollout line, and what the model wrote
#: (docs/fingerprints.md#zones): message and reasoning-summary text, tool-call arguments and
#: custom tool inputs are quoted; tool outputs, user messages and instructions are quoted input.
ZONES = Zones(
    stack=(
        "payload.id",
        "payload.call_id",
        "payload.encrypted_content",
        "payload.info*",
        "payload.rate_limits*",
        "payload.model_provider",
        "payload.model",
        "payload.turn_id",
        "thread_id",
        "item.id",
        "usage*",
    ),
    quoted=(
        ("payload.arguments", ZONE_TOOL_ARGS),
        ("payload.input", ZONE_TOOL_ARGS),
        ("payload.action", ZONE_TOOL_ARGS),
        ("item.command", ZONE_TOOL_ARGS),
        ("payload.content", ZONE_TEXT),
        ("payload.summary", ZONE_TEXT),
        ("payload.message", ZONE_TEXT),
        ("payload.text", ZONE_TEXT),
        ("item.text", ZONE_TEXT),
        ("payload.output", ZONE_QUOTED),
        ("item.aggregated_output", ZONE_QUOTED),
    ),
)

RECORD_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
#: Event types of the ``codex exec --json`` stream (thread, turn and item lifecycle).
EXEC_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)
#: ``response_item`` payload types, as real rollouts (0.104, 0.141; FINGERPRINTS.md §2) write them.
RESPONSE_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
        "compaction",
        "compaction_summary",
        "ghost_snapshot",
    }
)
#: What Codex writes: anything else is drift, counted per ``session_meta.payload.cli_version``.
KNOWN = Known(
    what="record type",
    kind=("type",),
    kinds=RECORD_TYPES | EXEC_TYPES,
    keys=frozenset({"timestamp", "type", "payload", "thread_id", "item", "usage", "error", "message"}),
    version=(("payload", "cli_version"),),
    carriers=frozenset({"session_meta"}),
    nested={"response_item": (("payload", "type"), RESPONSE_TYPES, "response_item type")},
)
#: Item types of that stream whose text is tool output or input, not model output.
_EXEC_QUOTED = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})


#: A ``token_count`` event's running totals (its ``info.last_token_usage`` is the last call's own).
_TOTAL_USAGE = b'"total_token_usage":{'

_QUOTED_PAYLOADS = frozenset({b"function_call_output", b"custom_tool_call_output", b"user_message"})


class CodexProbe(Probe):
    """Rollout lines start ``{"timestamp":…,"type":…,"payload":{"type":…``."""

    observe_all = False
    time_key = b'"timestamp":"'
    time_in_place = True

    def wants(self, line: bytes) -> bool:
        return _record_type(line) not in (b"response_item", b"event_msg")

    def glean(self, line: bytes, observer: Observer, kinds: Kinds | None = None) -> bool:
        if kinds is not None:  # (the record's type, as the drift watch read it)
            if kinds[0] != "event_msg":
                return kinds[0] != "response_item"
        else:
            j = line.find(b'"type":"', 0, 96)  # (_record_type and find_string_value, inline: this runs for every line)
            if j < 0:
                return True
            k = line.find(b'"', j + 8)
            rtype = line[j + 8 : k] if k >= 0 else None
            if rtype != b"event_msg":
                return rtype != b"response_item"
        j = line.find(b'"payload":{"type":"', 0, 160)
        if j < 0:
            return False
        k = line.find(b'"', j + 19)
        ptype = line[j + 19 : k] if k >= 0 else None
        return ptype == b"thread_name_updated" or (ptype == b"user_message" and observer.summary.title is None)

    def zone(self, line: bytes) -> int:
        rtype = _record_type(line)
        if rtype in (b"session_meta", b"compacted"):
            return ZONE_QUOTED
        if rtype is not None and rtype.startswith(b"item."):
            itype = _exec_item_type(line)
            return ZONE_QUOTED if itype in _EXEC_QUOTED_B else ZONE_MODEL
        ptype = find_string_value(line, b'"payload":{"type":"', 160)
        if ptype in _QUOTED_PAYLOADS:
            return ZONE_QUOTED
        if ptype == b"message" and find_string_value(line, b'"role":"', 200) in (b"user", b"developer", b"system"):
            return ZONE_QUOTED
        return ZONE_MODEL

    def time(self, line: bytes) -> Any:
        v = find_string_value(line, self.time_key, 64)
        return v.decode("ascii", "replace") if v else None


_EXEC_QUOTED_B = frozenset(t.encode() for t in _EXEC_QUOTED)


def _record_type(line: bytes) -> bytes | None:
    """A raw line's record ``type`` (the first ``"type":"`` in its first 96 bytes: the rollout's own)."""
    return find_string_value(line, b'"type":"', 96)


def _exec_item_type(line: bytes) -> bytes | None:
    """The ``item.type`` of a raw ``codex exec --json`` item line."""
    j = line.find(b'"item":{')
    return find_string_value(line[j:], b'"type":"') if j >= 0 else None


def sniff(obj: Any) -> str | None:
    """Recognise a rollout line (a known ``type`` with ``payload`` and ``timestamp``) or an exec event."""
    t = dig(obj, "type")
    if (
        isinstance(t, str)
        and t in RECORD_TYPES
        and dig(obj, "payload") is not None
        and dig(obj, "timestamp") is not None
    ):
        return f"codex: type == {t!r} with payload and timestamp"
    if t == "thread.started" and isinstance(dig(obj, "thread_id"), str):
        return "codex: codex exec --json stream (thread.started with thread_id)"
    if isinstance(t, str) and t.startswith("item.") and t in EXEC_TYPES and isinstance(dig(obj, "item", "id"), str):
        return f"codex: codex exec --json stream ({t} with item.id)"
    return None


class CodexObserver(Observer):
    """Reads session_meta (id, parent, provider, fork), turn_context models and unknown types."""

    def __init__(self, summary: Any) -> None:
        self.summary = summary  # (Observer.__init__, inline: an observer is made per file)
        self.unknown: dict[str, int] = {}
        #: The last ``token_count`` event's running totals (input, cached, output, reasoning), from the raw bytes.
        self.totals: dict[str, Any] | None = None

    def raw_finish(self, data: bytes) -> None:
        j = data.rfind(_TOTAL_USAGE)
        if j < 0:
            return
        j += len(_TOTAL_USAGE) - 1
        k = data.find(b"}", j)
        try:
            totals = orjson.loads(data[j : k + 1]) if k > j else None
        except orjson.JSONDecodeError:
            return
        if isinstance(totals, dict):
            self.totals = totals

    def observe(self, doc: Any, line: int) -> tuple[Any, int]:
        s = self.summary
        rtype = text_of(dig(doc, "type"))
        payload = dig(doc, "payload")
        zone = ZONE_MODEL
        if rtype == "response_item":
            ptype = text_of(dig(payload, "type"))
            if ptype in ("function_call_output", "custom_tool_call_output") or (
                ptype == "message" and dig(payload, "role") in ("user", "developer", "system")
            ):
                zone = ZONE_QUOTED
        elif rtype == "event_msg":
            etype = dig(payload, "type")
            if etype == "user_message":
                zone = ZONE_QUOTED
                self.offer_title(dig(payload, "message"))
            elif etype == "thread_name_updated":
                self.offer_title(dig(payload, "thread_name"), named=True)
        elif rtype == "turn_context":
            self.declare_model(text_of(dig(payload, "model")))
        elif rtype == "session_meta":
            zone = ZONE_QUOTED  # base instructions are prompt text
            sid = text_of(dig(payload, "id"))
            if sid and s.session_id is None:
                s.session_id = sid
            prov = text_of(dig(payload, "model_provider"))
            if prov and s.declared_provider is None:
                s.declared_provider = prov
            parent = text_of(dig(payload, "source", "subagent", "thread_spawn", "parent_thread_id"))
            if parent:
                s.parent_session_id = parent
            fork = text_of(dig(payload, "forked_from_id"))
            if fork:
                s.notes.append(f"forked from {as_text(fork)}")
            nick = text_of(dig(payload, "agent_nickname")) or text_of(dig(payload, "agent_role"))
            if nick:
                s.label = nick
        elif rtype == "compacted":
            zone = ZONE_QUOTED  # replacement_history replays earlier items
        elif rtype in EXEC_TYPES:
            if rtype == "thread.started":
                tid = text_of(dig(doc, "thread_id"))
                if tid and s.session_id is None:
                    s.session_id = tid
            elif rtype == "turn.completed":  # one turn's own counts
                usage = dig(doc, "usage")
                if usage is not None:
                    self.add_usage(
                        dig(usage, "input_tokens"),
                        dig(usage, "output_tokens"),
                        dig(usage, "cached_input_tokens"),
                        dig(usage, "reasoning_output_tokens"),
                    )
            elif text_of(dig(doc, "item", "type")) in _EXEC_QUOTED:
                zone = ZONE_QUOTED
        elif isinstance(rtype, str):
            self.unknown[rtype] = self.unknown.get(rtype, 0) + 1
        return dig(doc, "timestamp"), zone

    def finish(self) -> None:
        t = self.totals
        if t is not None:  # running totals: the last event holds the session's
            self.add_usage(
                t.get("input_tokens"),
                t.get("output_tokens"),
                t.get("cached_input_tokens"),
                t.get("reasoning_output_tokens"),
            )
        if self.unknown:
            kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(self.unknown.items()))
            self.summary.notes.append(f"unknown rollout record types kept as generic items: {kinds}")


def items(records: list[Record]) -> list[Item]:
    """Turn rollout lines into items (one per line)."""
    out: list[Item] = []
    for rec in records:
        obj = as_dict(rec.obj)
        t = record_time(obj.get("timestamp"))
        rtype = as_text(obj.get("type"))
        p = as_dict(obj.get("payload"))
        ptype = p.get("type")
        idx = len(out)
        pid = p.get("id")
        ids = [pid] if isinstance(pid, str) else []
        if rtype == "session_meta":
            src = p.get("source")
            out.append(
                new_item(
                    rec,
                    idx,
                    "meta",
                    role="system",
                    time=t,
                    subkind=rtype,
                    name="session_meta",
                    ids=ids,
                    text=f"session {as_text(p.get('id'))} provider={as_text(p.get('model_provider'))} "
                    f"originator={as_text(p.get('originator'))} cli={as_text(p.get('cli_version'))} source={_j(src)}",
                )
            )
        elif rtype == "turn_context":
            out.append(
                new_item(
                    rec,
                    idx,
                    "meta",
                    role="system",
                    time=t,
                    subkind=rtype,
                    name="turn_context",
                    text=f"model={as_text(p.get('model'))} effort={as_text(p.get('effort'))} cwd={as_text(p.get('cwd'))}",
                )
            )
        elif rtype == "response_item":
            out.append(_response_item(rec, idx, t, p, ids))
        elif rtype == "event_msg":
            kind = "usage" if ptype == "token_count" else "event"
            role = (
                "user"
                if ptype == "user_message"
                else ("assistant" if ptype in ("agent_message", "agent_reasoning") else None)
            )
            text = p.get("message") or p.get("text") or _j({k: v for k, v in p.items() if k != "type"})
            out.append(
                new_item(
                    rec, idx, kind, role=role, time=t, subkind=as_text(ptype), name=as_text(ptype), text=as_text(text)
                )
            )
        elif rtype == "compacted":
            out.append(
                new_item(
                    rec,
                    idx,
                    "summary",
                    role="system",
                    time=t,
                    subkind=rtype,
                    name="compacted",
                    text=as_text(p.get("message") or ""),
                )
            )
        elif rtype in EXEC_TYPES:
            out.append(_exec_item(rec, idx, obj))
        else:
            out.append(new_item(rec, idx, "unknown", time=t, subkind=rtype, name=rtype, text=_j(p)))
    return out


def _exec_item(rec: Record, idx: int, obj: dict[str, Any]) -> Item:
    """One ``codex exec --json`` event as an item."""
    rtype = str(obj.get("type"))
    it = as_dict(obj.get("item"))
    itype = str(it.get("type") or "")
    ids = [i for i in (it.get("id"), obj.get("thread_id")) if isinstance(i, str)]
    if itype == "reasoning":
        return new_item(
            rec,
            idx,
            "reasoning",
            role="assistant",
            subkind=itype,
            name=rtype,
            ids=ids,
            text=str(it.get("text") or ""),
            reasoning="visible",
        )
    if itype == "agent_message":
        return new_item(
            rec, idx, "message", role="assistant", subkind=itype, name=rtype, ids=ids, text=str(it.get("text") or "")
        )
    if itype == "command_execution":
        kind = "tool_result" if rtype == "item.completed" else "tool_call"
        text = str(it.get("command") or "") + (
            "\n" + str(it.get("aggregated_output") or "") if kind == "tool_result" else ""
        )
        return new_item(
            rec,
            idx,
            kind,
            role="tool" if kind == "tool_result" else "assistant",
            subkind=itype,
            name="command_execution",
            ids=ids,
            text=text,
        )
    if rtype == "turn.completed":
        return new_item(rec, idx, "usage", subkind=rtype, name=rtype, text=_j(obj.get("usage")))
    if itype:
        return new_item(rec, idx, "event", subkind=itype, name=rtype, ids=ids, text=_j(it))
    return new_item(
        rec, idx, "event", subkind=rtype, name=rtype, ids=ids, text=_j({k: v for k, v in obj.items() if k != "type"})
    )


#: The rollout's ``response_item`` types that are a tool call (its arguments are the item's text).
_TOOL_CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
    }
)


def _response_item(rec: Record, idx: int, t: float | None, p: dict[str, Any], ids: list[str]) -> Item:
    ptype = as_text(p.get("type"))
    cid = p.get("call_id")
    if isinstance(cid, str):
        ids.append(cid)
    if ptype == "message":
        return new_item(
            rec,
            idx,
            "message",
            role=as_text(p.get("role")),
            time=t,
            subkind=ptype,
            name=as_text(p.get("phase") or ""),
            ids=ids,
            text=content_text(p.get("content")),
        )
    if ptype == "reasoning":
        summary = content_text(p.get("summary"))
        visible = content_text(p.get("content"))
        enc = p.get("encrypted_content")
        state = "encrypted" if isinstance(enc, str) and enc else "visible"
        return new_item(
            rec,
            idx,
            "reasoning",
            role="assistant",
            time=t,
            subkind=ptype,
            ids=ids,
            text=visible or summary,
            reasoning=state,
        )
    if ptype in _TOOL_CALLS:
        args = p.get("arguments", p.get("input", p.get("action")))
        return new_item(
            rec,
            idx,
            "tool_call",
            role="assistant",
            time=t,
            subkind=ptype,
            name=as_text(p.get("name") or ptype),
            ids=ids,
            text=args if isinstance(args, str) else _j(args),
        )
    if ptype in ("function_call_output", "custom_tool_call_output"):
        o = p.get("output")
        return new_item(
            rec,
            idx,
            "tool_result",
            role="tool",
            time=t,
            subkind=ptype,
            name=ptype,
            ids=ids,
            text=o if isinstance(o, str) else content_text(o) or _j(o),
        )
    if ptype in ("compaction", "compaction_summary"):
        return new_item(
            rec,
            idx,
            "summary",
            role="system",
            time=t,
            subkind=ptype,
            name=ptype,
            ids=ids,
            text="compaction (encrypted)",
            reasoning="encrypted",
        )
    return new_item(rec, idx, "unknown", time=t, subkind=ptype, name=ptype, ids=ids, text=_j(p))


def _j(value: Any) -> str:
    return json_text(value)


_ROLLOUT = re.compile(r"rollout-.*\.jsonl(?:\.gz)?")
_DATE_PARTS = (re.compile(r"[0-9]{4}"), re.compile(r"[0-9]{2}"), re.compile(r"[0-9]{2}"))


def family_root(parts: Sequence[str]) -> str | None:
    """The folder above ``YYYY/MM/DD`` of a rollout at ``sessions/YYYY/MM/DD/rollout-*.jsonl``, or ``archived_sessions``."""
    if not parts or not _ROLLOUT.fullmatch(parts[-1]):
        return None
    if len(parts) >= 6 and all(p.fullmatch(x) for p, x in zip(_DATE_PARTS, parts[-4:-1], strict=True)):
        return os.sep.join(parts[:-4]) or os.sep
    if len(parts) >= 3 and parts[-2] == "archived_sessions":
        return os.sep.join(parts[:-1])
    return None


SPEC = Format(
    FORMAT, "records", sniff, CodexObserver, items, probe=CodexProbe, family_root=family_root, zones=ZONES, known=KNOWN
)
