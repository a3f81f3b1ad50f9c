"""Claude Code projects: ``projects/<proj>/<sessionId>.jsonl`` and their subagents (FINGERPRINTS.md §3).

Subagents live in ``<sessionId>/subagents/agent-<agentId>.jsonl`` (2.1.x) or in
``agent-<id>.jsonl`` beside the session (older); 1.0.x kept them inline as
``isSidechain`` lines. One API message split over several lines (one content block
each, same ``message.id`` and ``requestId``) becomes one item.

Headless runs (``claude -p --output-format stream-json``, the Agent SDK's wire protocol, and
the JSON array that CI actions save) write the same messages with ``session_id`` in snake
case: a ``system``/``init`` line that declares the model, ``assistant`` and ``user`` lines
that carry ``parent_tool_use_id``, and a closing ``result`` line.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any

from musetui.core.drift import Kinds, Known
from musetui.core.model import Item
from musetui.core.sources.base import (
    ZONE_MODEL,
    ZONE_QUOTED,
    Observer,
    Probe,
    Record,
    as_dict,
    as_list,
    as_text,
    content_text,
    dig,
    file_stem,
    find_string_value,
    json_text,
    new_item,
    record_time,
    text_of,
)
from musetui.core.sources.spec import Format
from musetui.core.sources.zones import ZONE_TEXT, ZONE_TOOL_ARGS, Zones

FORMAT = "claude-code"

#: Where Anthropic's stack writes in a Claude Code line, and what the model wrote
#: (docs/fingerprints.md#zones): text and thinking blocks and tool_use inputs (a Write's file
#: content, say) are quoted; user lines, tool results and summaries are quoted input.
ZONES = Zones(
    stack=(
        "message.id",
        "message.model",
        "message.content[].id",
        "message.content[].signature",
        "message.content[].data",
        "message.usage*",
        "message.container*",
        "requestId",
        "parent_tool_use_id",
        "message.content[].tool_use_id",
        "sessionId",
        "session_id",
        "uuid",
        "parentUuid",
        "agentId",
    ),
    quoted=(
        ("message.content[].input", ZONE_TOOL_ARGS),
        ("message.content[].text", ZONE_TEXT),
        ("message.content[].thinking", ZONE_TEXT),
        ("message.content[].content", ZONE_QUOTED),
        ("toolUseResult", ZONE_QUOTED),
    ),
)

LINE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "pr-link",
        "agent-name",
        "custom-title",
        "last-prompt",
    }
)

#: What Claude Code writes, as read from real transcripts (1.0.x, 2.0.x, 2.1.x; FINGERPRINTS.md §3.2) and the
#: headless stream (``result``, ``stream_event``): anything else is drift, counted per ``version``.
KNOWN = Known(
    what="line type",
    kind=("type",),
    kinds=LINE_TYPES | {"result", "stream_event"},
    keys=frozenset(
        {
            # every line of a project transcript
            "type",
            "uuid",
            "parentUuid",
            "logicalParentUuid",
            "sessionId",
            "timestamp",
            "version",
            "cwd",
            "isSidechain",
            "userType",
            "gitBranch",
            "slug",
            "agentId",
            "teamName",
            "entrypoint",
            "message",
            "requestId",
            "error",
            "isApiErrorMessage",
            "attributionSkill",
            "effort",
            # user lines
            "toolUseResult",
            "sourceToolAssistantUUID",
            "sourceToolUseID",
            "promptId",
            "permissionMode",
            "isMeta",
            "isCompactSummary",
            "isVisibleInTranscriptOnly",
            "thinkingMetadata",
            "todos",
            "imagePasteIds",
            "planContent",
            # system, progress, summary, snapshot and queue lines
            "subtype",
            "level",
            "content",
            "compactMetadata",
            "retryInMs",
            "retryAttempt",
            "maxRetries",
            "durationMs",
            "hookCount",
            "hookInfos",
            "hookErrors",
            "preventedContinuation",
            "stopReason",
            "hasOutput",
            "toolUseID",
            "parentToolUseID",
            "data",
            "summary",
            "leafUuid",
            "messageId",
            "snapshot",
            "isSnapshotUpdate",
            "operation",
            # the headless stream (claude -p --output-format stream-json)
            "session_id",
            "parent_tool_use_id",
            "tools",
            "mcp_servers",
            "model",
            "apiKeySource",
            "claude_code_version",
            "output_style",
            "agents",
            "skills",
            "plugins",
            "slash_commands",
            "is_error",
            "duration_ms",
            "duration_api_ms",
            "num_turns",
            "result",
            "total_cost_usd",
            "usage",
            "modelUsage",
            "permission_denials",
            "event",
        }
    ),
    version=(("version",), ("claude_code_version",)),
    carriers=frozenset({"system"}),  # a headless run's init line: its claude_code_version holds for the run
)


def _spaced(line: bytes) -> bool:
    """A line written with Python's ``json.dumps`` separators (``": "`` after its first key), not
    Claude Code's compact JSON: a headless run's messages saved by an SDK user."""
    return line.find(b'": ', 0, 64) >= 0


class ClaudeProbe(Probe):
    """Only assistant lines (model, message id, request id) and agent ids need observing.

    The markers are searched inline (this runs for every line); their spaced forms only in a
    spaced line, so compact lines cost what they did.
    """

    observe_all = False
    time_key = b'"timestamp":"'

    def wants(self, line: bytes) -> bool:
        return (
            b'"type":"assistant"' in line or b'"agentId"' in line or (_spaced(line) and b'"type": "assistant"' in line)
        )

    def glean(self, line: bytes, observer: Observer, kinds: Kinds | None = None) -> bool:
        if (
            b'"type":"assistant"' in line
            or b'"agentId"' in line
            or b'"type":"summary"' in line
            or line.find(b'"subtype":"init"', 0, 200) >= 0  # a headless run's first line: near its start
        ):
            return True
        spaced = line.find(b'": ', 0, 64) >= 0  # _spaced, inline
        if spaced and (
            b'"type": "assistant"' in line
            or b'"type": "summary"' in line
            or line.find(b'"subtype": "init"', 0, 200) >= 0
        ):
            return True
        return observer.summary.title is None and (b'"type":"user"' in line or (spaced and b'"type": "user"' in line))

    def zone(self, line: bytes) -> int:
        assistant = b'"type":"assistant"' in line or (line.find(b'": ', 0, 64) >= 0 and b'"type": "assistant"' in line)
        return ZONE_MODEL if assistant else ZONE_QUOTED

    def time(self, line: bytes) -> Any:
        v = find_string_value(line, self.time_key)
        return v.decode("ascii", "replace") if v else None


def sniff(obj: Any) -> str | None:
    """Recognise a Claude Code line."""
    t = dig(obj, "type")
    if (
        isinstance(t, str)
        and t in LINE_TYPES
        and dig(obj, "sessionId") is not None
        and (dig(obj, "uuid") is not None or dig(obj, "parentUuid") is not None or t == "progress")
    ):
        return f"claude-code: type == {t!r} with sessionId and uuid"
    if t == "summary" and dig(obj, "leafUuid") is not None:
        return "claude-code: summary line with leafUuid"
    if t == "file-history-snapshot" and dig(obj, "messageId") is not None:
        return "claude-code: file-history-snapshot line"
    return _sniff_stream(obj, t)


def _sniff_stream(obj: Any, t: Any) -> str | None:
    """The init line of a headless run's stream (``--output-format stream-json``), by its version key.

    Other harnesses write the same protocol: Qwen Code's stream has ``parent_tool_use_id`` on its
    messages and ``num_turns`` in its result, and Cursor's agent CLI an init line with
    ``apiKeySource`` and ``permissionMode``. Only ``claude_code_version`` is Claude Code's own; a
    stream without it (older versions, or a file cut before its init line) stays generic.
    """
    if (
        t == "system"
        and isinstance(obj, dict)
        and obj.get("subtype") == "init"
        and isinstance(obj.get("session_id"), str)
        and "claude_code_version" in obj
    ):
        return "claude-code: stream-json system init line (claude -p --output-format stream-json)"
    return None


def is_agent_file(path: str) -> bool:
    """True for a subagent transcript file (``agent-*.jsonl``)."""
    return os.path.basename(path).startswith("agent-")


class ClaudeObserver(Observer):
    """Reads session and agent ids, models (skipping ``<synthetic>``) and split-message duplicates."""

    def __init__(self, summary: Any) -> None:
        self.summary = summary  # (Observer.__init__, inline: an observer is made per file)
        self.seen: set[tuple[str, str]] = set()
        #: the lines of assistant records that continue an API message already seen: not items of their own
        self.merged_lines: list[int] = []
        self.session: str | None = None
        self.agent: str | None = None
        self.sidechain = 0
        self.synthetic = 0
        #: "message id|request id" -> that API message's usage (its split lines repeat it: the last one is kept).
        self.usages: dict[str, list[Any]] = {}

    def observe(self, doc: Any, line: int) -> tuple[Any, int]:
        # Each read is ``x.get(key)`` when ``x`` is a dict (orjson's records: nearly all), else ``dig(x, key)``
        # (a parser's proxy, a list, a string...): what dig reads either way, without its call on most reads
        # (callgrind, bar150 claude[::40]: dig was ~1.2 k instructions a call, 14 calls an assistant line).
        plain = type(doc) is dict
        if self.session is None:
            sid = text_of(dig(doc, "sessionId") or dig(doc, "session_id"))
            if sid:
                self.session = sid
        if self.agent is None:
            aid = text_of(doc.get("agentId") if plain else dig(doc, "agentId"))
            if aid:
                self.agent = aid
        t = doc.get("type") if plain else dig(doc, "type")
        zone = ZONE_MODEL
        if t == "assistant":
            self._assistant(doc, plain, line)
        elif t in ("user", "summary", "system", "progress", "queue-operation", "last-prompt", "result"):
            zone = ZONE_QUOTED
            if t == "system" and dig(doc, "subtype") == "init":
                self.declare_model(text_of(dig(doc, "model")))  # a headless run's declared model
            elif t == "summary":
                self.offer_title(dig(doc, "summary"), named=True)
            elif t == "user" and self.summary.title is None:
                content = dig(doc, "message", "content")
                if isinstance(content, str) and not content.startswith("<"):
                    self.offer_title(content)
        return doc.get("timestamp") if plain else dig(doc, "timestamp"), zone

    def _assistant(self, doc: Any, plain: bool, line: int) -> None:
        """An assistant line: its model, its API message (id, request id) and that message's usage."""
        msg = doc.get("message") if plain else dig(doc, "message")
        m = type(msg) is dict
        model = text_of(msg.get("model") if m else dig(msg, "model"))
        if model == "<synthetic>":
            self.synthetic += 1
        else:
            self.declare_model(model)
        mid = text_of(msg.get("id") if m else dig(msg, "id"))
        rid = text_of(doc.get("requestId") if plain else dig(doc, "requestId")) or ""
        usage = msg.get("usage") if m else dig(msg, "usage")
        if usage is not None and model != "<synthetic>":
            got = usage.get if type(usage) is dict else functools.partial(dig, usage)  # (dig's reading either way)
            counts = [got("input_tokens"), got("output_tokens"), got("cache_read_input_tokens")]
            counts += [got("cache_creation_input_tokens"), dig(got("output_tokens_details"), "thinking_tokens")]
            self.usages[f"{mid}|{rid}" if mid else f"line {line}"] = counts
        if mid:
            key = (mid, rid)
            if key in self.seen:
                self.merged_lines.append(line)
            else:
                self.seen.add(key)

    def raw_finish(self, data: bytes) -> None:
        self.sidechain = data.count(b'"isSidechain":true') + data.count(b'"isSidechain": true')
        if b'"parent_tool_use_id"' in data:  # a headless run: its Task subagents' lines name their tool call
            self.sidechain += data.count(b'"parent_tool_use_id":"') + data.count(b'"parent_tool_use_id": "')

    def finish(self) -> None:
        s = self.summary
        s.items = max(0, s.items - len(self.merged_lines))
        stem = file_stem(s.path)
        if self.agent and self.session and self.agent != self.session:
            # A subagent's lines carry its own agentId and the parent's sessionId, whatever the file's name.
            s.session_id = self.agent
            s.parent_session_id = self.session
            s.label = f"agent {self.agent}"
        elif is_agent_file(s.path):
            s.session_id = self.agent or stem.removeprefix("agent-")
            s.parent_session_id = self.session or _dir_session(s.path)
            s.label = f"agent {s.session_id}"
        else:
            s.session_id = self.session or stem
        for fresh, output, read, created, thinking in self.usages.values():
            # Anthropic's input_tokens leaves out cache reads and writes: the input is all three.
            parts = [v for v in (fresh, read, created) if type(v) is int]
            self.add_usage(sum(parts) if parts else None, output, read, thinking)
        if self.merged_lines:
            s.notes.append(f"{len(self.merged_lines)} lines continue an API message split over several lines (merged)")
        if self.sidechain and not is_agent_file(s.path):
            s.notes.append(f"{self.sidechain} inline sidechain (Task subagent) lines")
        if self.synthetic:
            s.notes.append(f"{self.synthetic} <synthetic> assistant lines (generated locally, not attributed)")


def _dir_session(path: str) -> str | None:
    parts = path.replace(os.sep, "/").split("/")
    if len(parts) >= 3 and parts[-2] == "subagents":
        return parts[-3]
    return None


def items(records: list[Record]) -> list[Item]:
    """Turn lines into items, merging lines that continue the same API message."""
    out: list[Item] = []
    by_key: dict[tuple[str, str], Item] = {}
    for rec in records:
        obj = as_dict(rec.obj)
        t = record_time(obj.get("timestamp"))
        ltype = as_text(obj.get("type"))
        msg = as_dict(obj.get("message"))
        side = " (sidechain)" if obj.get("isSidechain") else ""
        if ltype == "assistant":
            _assistant_line(rec, t, obj, msg, side, out, by_key)
        else:
            out.append(_LINES.get(ltype, _event_line)(rec, len(out), t, ltype, obj, msg, side))
    return out


def _assistant_line(
    rec: Record,
    t: float | None,
    obj: dict[str, Any],
    msg: dict[str, Any],
    side: str,
    out: list[Item],
    by_key: dict[tuple[str, str], Item],
) -> None:
    """An assistant line: a new item, or merged into the item of the same message and request."""
    mid = msg.get("id")
    key = (mid, as_text(obj.get("requestId") or "")) if isinstance(mid, str) else None
    if key is not None:
        prev = by_key.get(key)
        if prev is not None:
            _merge(prev, rec, msg)
            return
    ids = [i for i in (mid, obj.get("requestId")) if isinstance(i, str)]
    item = _assistant(rec, len(out), t, msg, ids)
    if side:
        item.name = (item.name or "") + side
    if key is not None:
        by_key[key] = item
    out.append(item)


def _user_line(
    rec: Record, idx: int, t: float | None, ltype: str, obj: dict[str, Any], msg: dict[str, Any], side: str
) -> Item:
    """A user line: the results of tool calls, else the user's message."""
    content = msg.get("content")
    results = (
        [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )
    if not results:
        return new_item(
            rec, idx, "message", role="user", time=t, subkind=ltype, name="user" + side, text=content_text(content)
        )
    rid = [b["tool_use_id"] for b in results if isinstance(b.get("tool_use_id"), str)]
    text = "\n".join(
        content_text(b.get("content")) if not isinstance(b.get("content"), str) else b["content"] for b in results
    )
    return new_item(
        rec, idx, "tool_result", role="tool", time=t, subkind=ltype, name="tool_result" + side, ids=rid, text=text
    )


def _summary_line(
    rec: Record, idx: int, t: float | None, ltype: str, obj: dict[str, Any], msg: dict[str, Any], side: str
) -> Item:
    text = as_text(obj.get("summary") or "")
    return new_item(rec, idx, "summary", role="system", time=t, subkind=ltype, name="summary", text=text)


#: Keys of a line that every line repeats (left out of an event's text).
_COMMON_KEYS = ("parentUuid", "uuid", "sessionId", "cwd", "version", "gitBranch", "userType")


def _event_line(
    rec: Record, idx: int, t: float | None, ltype: str, obj: dict[str, Any], msg: dict[str, Any], side: str
) -> Item:
    """Any other line: its ``content`` text, else the line's own fields."""
    content = obj.get("content")
    etext = content if isinstance(content, str) else _j({k: v for k, v in obj.items() if k not in _COMMON_KEYS})
    return new_item(rec, idx, "event", role="system", time=t, subkind=ltype, name=ltype, text=as_text(etext))


#: A line's type -> its item (assistant lines are merged apart; any other type is an event).
_LINES: dict[str, Callable[[Record, int, float | None, str, dict[str, Any], dict[str, Any], str], Item]] = {
    "user": _user_line,
    "summary": _summary_line,
}


def _assistant(rec: Record, idx: int, t: float | None, msg: dict[str, Any], ids: list[str]) -> Item:
    content = as_list(msg.get("content"))
    item = new_item(
        rec,
        idx,
        "message",
        role="assistant",
        time=t,
        subkind="assistant",
        name=as_text(msg.get("model") or ""),
        ids=ids,
        text="",
    )
    item.raw = [rec.obj]
    _apply_blocks(item, content)
    return item


def _apply_blocks(item: Item, content: list[Any]) -> None:
    texts = [item.text] if item.text else []
    for b in content:
        if not isinstance(b, dict):
            continue
        bt = b.get("type")
        if bt == "thinking":
            item.kind = "reasoning"
            sig = b.get("signature")
            item.reasoning = "visible" if sig else "empty-signature"
            texts.append(as_text(b.get("thinking") or ""))
        elif bt == "redacted_thinking":
            item.kind = "reasoning"
            item.reasoning = "redacted"
            texts.append("[redacted thinking]")
        elif bt in ("tool_use", "server_tool_use"):
            if item.kind == "message":
                item.kind = "tool_call"
            if isinstance(b.get("id"), str):
                item.ids.append(b["id"])
            item.name = as_text(b.get("name"))
            texts.append(_j(b.get("input")))
        elif bt == "text":
            texts.append(as_text(b.get("text") or ""))
    item.text = "\n".join(x for x in texts if x)


def _merge(item: Item, rec: Record, msg: dict[str, Any]) -> None:
    item.lines += 1
    item.merged.append(rec.line)
    item.length = rec.offset + rec.length - item.offset
    if isinstance(item.raw, list):
        item.raw.append(rec.obj)
    content = as_list(msg.get("content"))
    _apply_blocks(item, content)


def _j(value: Any) -> str:
    return json_text(value)


def family_root(parts: Sequence[str]) -> str | None:
    """The ``projects`` folder of ``projects/<project>/<sessionId>.jsonl`` or of a subagent at
    ``<project>/<sessionId>/subagents/agent-<id>.jsonl``."""
    name = parts[-1] if parts else ""
    if len(parts) >= 5 and parts[-2] == "subagents" and name.startswith("agent-") and name.endswith(".jsonl"):
        return os.sep.join(parts[:-4]) or os.sep
    if len(parts) >= 4 and parts[-3] == "projects" and name.endswith(".jsonl"):
        return os.sep.join(parts[:-2])
    return None


SPEC = Format(
    FORMAT,
    "records",
    sniff,
    ClaudeObserver,
    items,
    probe=ClaudeProbe,
    family_root=family_root,
    zones=ZONES,
    known=KNOWN,
)
