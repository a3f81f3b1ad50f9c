"""Muse VM sessions: ``sessions/<id>/session.jsonl`` envelopes and ``subagent*/<child>/`` workers.

Envelope (FINGERPRINTS.md §1.2): ``{"stream":{"kind":"session","id":…},"recorded_at":µs,
"payload":{"kind":"metadata"|"route_facts"|"run", "record"|"event":{…}}}``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
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
    as_list,
    as_text,
    dig,
    find_number_value,
    json_text,
    new_item,
    record_time,
    text_of,
)
from musetui.core.sources.spec import Format
from musetui.core.sources.zones import ZONE_TEXT, ZONE_TOOL_ARGS, Zones

FORMAT = "muse"

#: Where the serving stack writes in a Muse record, and what the model or the harness wrote
#: (docs/fingerprints.md#zones): the reply and reasoning text and the tool calls' arguments are
#: quoted, whatever they hold; started prompts and tool results are quoted input.
ZONES = Zones(
    stack=(
        "stream.id",
        "payload.record.*",
        "payload.event.message_id",
        "payload.event.signature",
        "payload.event.tool_calls[].call_id",
        "payload.event.tool_calls[].id",
        "payload.event.usage*",
        "payload.event.model",
    ),
    quoted=(
        ("payload.event.tool_calls[].args", ZONE_TOOL_ARGS),
        ("payload.event.text", ZONE_TEXT),
        ("payload.event.prompt", ZONE_QUOTED),
        ("payload.event.results", ZONE_QUOTED),
    ),
)

KNOWN_EVENTS = frozenset(
    {
        "started",
        "reasoning_committed",
        "assistant_tool_calls_committed",
        "tool_result_batch_committed",
        "model_completed",
        "assistant_message_committed",
    }
)

#: What a Muse envelope holds: anything else is drift. Muse writes no schema or harness version.
KNOWN = Known(
    what="payload kind",
    kind=("payload", "kind"),
    kinds=frozenset({"metadata", "route_facts", "run"}),
    keys=frozenset({"stream", "recorded_at", "payload"}),
    nested={"run": (("payload", "event", "kind"), KNOWN_EVENTS, "event kind")},
)


_EVENT_KIND = b'"event":{"kind":"'
_EVENT_KIND_LEN = len(_EVENT_KIND)
#: Event kinds whose records carry nothing for the summary (the observer can skip them).
_PLAIN_EVENTS = frozenset(
    {
        b"started",
        b"reasoning_committed",
        b"assistant_tool_calls_committed",
        b"tool_result_batch_committed",
        b"assistant_message_committed",
    }
)
_QUOTED_EVENTS = frozenset({b"tool_result_batch_committed", b"started"})
#: The plain event kinds, as the drift watch reads them (strings).
_PLAIN_NAMES = frozenset(k.decode() for k in _PLAIN_EVENTS)


def _event_kind(line: bytes) -> bytes | None:
    j = line.find(_EVENT_KIND, 0, 400)
    if j < 0:
        return None
    j += len(_EVENT_KIND)
    k = line.find(b'"', j)
    return line[j:k] if k >= 0 else None


#: How Muse writes a ``model_completed`` event after its kind (from the kind's closing quote): the model,
#: then a flat usage object of the four counts, in order, all members of the event object itself. Where it
#: matches, it reads what parsing the line reads; any other layout is parsed (a first ``"model":"`` or
#: ``"usage":{`` found anywhere in the line may belong to a nested object: reading those credited an event
#: with a quoted model's usage). Counts of at most 18 digits (below 2**63: orjson reads them as ints when
#: :meth:`MuseObserver.add_usages` sums them); a longer one is parsed.
_COMPLETED = re.compile(
    rb'","model":"([^"\\]*)","usage":(\{"input_tokens":\d{1,18},"output_tokens":\d{1,18},'
    rb'"cached_tokens":\d{1,18},"reasoning_tokens":\d{1,18}\})'
).match
#: What :meth:`MuseObserver.add_usages` removes from the usage objects :data:`_COMPLETED` matched (joined by
#: commas), leaving their counts, in order, as the items of one JSON list: ``I,O,C,R,I,O,C,R…``.
_USAGE_KEYS = (b'{"input_tokens":', b'"output_tokens":', b'"cached_tokens":', b'"reasoning_tokens":', b"}")


class MuseProbe(Probe):
    """Muse lines: the event kind sits near the start of the envelope."""

    observe_all = False
    time_key = b'"recorded_at":'
    time_in_place = True  # (after the session's stream object)
    #: (what :meth:`glean` does with the watch's kinds: a plain event other than ``started`` carries nothing)
    skip = frozenset(("run", name) for name in _PLAIN_NAMES - {"started"})

    def wants(self, line: bytes) -> bool:
        return _event_kind(line) not in _PLAIN_EVENTS

    def glean(self, line: bytes, observer: MuseObserver, kinds: Kinds | None = None) -> bool:
        if kinds is not None:  # (the payload's kind and its event's, as the drift watch read them)
            pkind, ekind = kinds
            if pkind != "run" or ekind is None or (ekind not in _PLAIN_NAMES and ekind != "model_completed"):
                return True
            if ekind != "model_completed":
                return ekind == "started" and observer.summary.title is None
        j = line.find(_EVENT_KIND, 0, 400)  # _event_kind, inline: this runs for every Muse line
        kind: bytes | None = None
        if j >= 0:
            j += _EVENT_KIND_LEN
            k = line.find(b'"', j)
            if k >= 0:
                kind = line[j:k]
        if kind in _PLAIN_EVENTS:
            # (read as the watch reads it, the event is a model_completed one: parsed, where the bytes disagree)
            return kinds is not None or (kind == b"started" and observer.summary.title is None)
        if kind == b"model_completed":
            # (k is the kind's closing quote.) Fast path: the plain layout, read in one match; on bar150[::40]
            # (callgrind, in-process) the scan went 480.3 -> 464.3 M instructions (-3.3%). Its counts are
            # summed once, at the end (ints: their order does not matter); the models are counted in order.
            m = _COMPLETED(line, k)
            if m is not None:
                model_b, usage_b = m.groups()
                observer.declare_model(model_b.decode("utf-8", "replace"))
                observer.usages.append(usage_b)
                return False
        return True

    def zone(self, line: bytes) -> int:
        j = line.find(_EVENT_KIND, 0, 400)  # (_event_kind, inline)
        if j < 0:
            return ZONE_MODEL
        j += _EVENT_KIND_LEN
        k = line.find(b'"', j)
        return ZONE_QUOTED if k >= 0 and line[j:k] in _QUOTED_EVENTS else ZONE_MODEL

    def time(self, line: bytes) -> Any:
        return find_number_value(line, self.time_key)


def sniff(obj: Any) -> str | None:
    """Recognise a Muse envelope record."""
    if dig(obj, "stream", "kind") == "session" and dig(obj, "payload", "kind") is not None:
        return "muse: stream.kind == 'session' and payload.kind present"
    return None


def parent_from_path(path: str) -> str | None:
    """The parent session id from the layout ``<parent>/subagent*/<child>/session.jsonl``."""
    parts = path.replace(os.sep, "/").rsplit("/", 4)  # (the last four names: all it reads)
    if len(parts) >= 4 and parts[-3].startswith("subagent"):
        return parts[-4]
    return None


class MuseObserver(Observer):
    """Reads the session id, declared route and models, and counts unknown event kinds."""

    def __init__(self, summary: Any) -> None:
        self.summary = summary  # (Observer.__init__, inline: an observer is made per file)
        self.unknown: dict[str, int] = {}
        #: The usage objects of plain ``model_completed`` events the probe gleaned, summed by :meth:`add_usages`
        #: after each window (so they hold a window's lines at most).
        self.usages: list[bytes] = []

    def raw_finish(self, data: bytes) -> None:
        self.add_usages()

    def add_usages(self) -> None:
        """Add the gleaned usage objects' counts to the session's usage (one JSON list of their counts, in C)."""
        rows, self.usages = self.usages, []
        if not rows:
            return
        flat = b",".join(rows)
        for key in _USAGE_KEYS:
            flat = flat.replace(key, b"")
        counts = orjson.loads(b"[" + flat + b"]")
        self.add_usage(sum(counts[0::4]), sum(counts[1::4]), sum(counts[2::4]), sum(counts[3::4]))

    def observe(self, doc: Any, line: int) -> tuple[Any, int]:
        s = self.summary
        try:
            if s.session_id is None:
                sid = dig(doc, "stream", "id")
                if isinstance(sid, str):
                    s.session_id = sid
            payload = doc.get("payload")
            pkind = payload.get("kind")
            zone = ZONE_MODEL
            if pkind == "run":
                event = payload.get("event")
                ekind = event.get("kind") if event is not None else None
                if ekind == "tool_result_batch_committed" or ekind == "started":
                    zone = ZONE_QUOTED
                    if ekind == "started":
                        self.offer_title(event.get("prompt"))
                elif ekind == "model_completed":
                    self.declare_model(text_of(event.get("model")))
                    usage = event.get("usage")  # one model call's own counts
                    if usage is not None:
                        self.add_usage(
                            usage.get("input_tokens"),
                            usage.get("output_tokens"),
                            usage.get("cached_tokens"),
                            usage.get("reasoning_tokens"),
                        )
                elif isinstance(ekind, str) and ekind not in KNOWN_EVENTS:
                    self.unknown[ekind] = self.unknown.get(ekind, 0) + 1
                record = payload.get("record")
            else:
                record = payload.get("record")
                event = payload.get("event")
                if event is not None:
                    ekind = event.get("kind")
                    if isinstance(ekind, str) and ekind not in KNOWN_EVENTS:
                        self.unknown[ekind] = self.unknown.get(ekind, 0) + 1
                elif pkind not in ("metadata", "route_facts") and isinstance(pkind, str):
                    self.unknown[pkind] = self.unknown.get(pkind, 0) + 1
            if record is not None:
                prov = text_of(dig(record, "provider_id"))
                model = text_of(dig(record, "model_id"))
                if prov and s.declared_provider is None:
                    s.declared_provider = prov
                if model:
                    self.declare_model(model)
            return doc.get("recorded_at"), zone
        except (AttributeError, TypeError, ValueError):
            return dig(doc, "recorded_at"), ZONE_MODEL

    def finish(self) -> None:
        self.add_usages()
        s = self.summary
        parent = parent_from_path(s.abspath)  # (not the root-relative path: the same parent under any root)
        if parent:
            s.parent_session_id = parent
        if self.unknown:
            kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(self.unknown.items()))
            s.notes.append(f"unknown Muse event kinds kept as generic items: {kinds}")
        # A declared model may carry its route: "azure/muse-special".
        if s.declared_provider is None and s.declared_model and "/" in s.declared_model:
            s.declared_provider = s.declared_model.split("/", 1)[0]


def items(records: list[Record]) -> list[Item]:
    """Turn Muse records into items (one per record)."""
    out: list[Item] = []
    for rec in records:
        obj = as_dict(rec.obj)
        t = record_time(obj.get("recorded_at"))
        payload = as_dict(obj.get("payload"))
        event = as_dict(payload.get("event")) or None
        record = as_dict(payload.get("record")) or None
        if event is None:
            out.append(_payload_item(rec, len(out), t, payload.get("kind"), record))
            continue
        ek = as_text(event.get("kind"))
        mid = event.get("message_id")
        ids = [mid] if isinstance(mid, str) else []
        out.append(_EVENTS.get(ek, _other_event)(rec, len(out), t, ek, event, ids))
    return out


def _payload_item(rec: Record, idx: int, t: float | None, pkind: Any, record: dict[str, Any] | None) -> Item:
    """A record without an event: the session's metadata, else an unknown payload."""
    if record is None:
        return new_item(rec, idx, "unknown", time=t, subkind=as_text(pkind), text=f"payload kind {as_text(pkind)}")
    prov, model = record.get("provider_id"), record.get("model_id")
    return new_item(
        rec,
        idx,
        "meta",
        role="system",
        time=t,
        subkind=as_text(pkind),
        name=as_text(pkind),
        text=f"{as_text(pkind)}: provider_id={as_text(prov)} model_id={as_text(model)} cwd={as_text(record.get('cwd'))}",
    )


def _started(rec: Record, idx: int, t: float | None, ek: str, event: dict[str, Any], ids: list[str]) -> Item:
    text = as_text(event.get("prompt") or "")
    return new_item(rec, idx, "message", role="user", time=t, subkind=ek, name=ek, text=text)


def _reasoning(rec: Record, idx: int, t: float | None, ek: str, event: dict[str, Any], ids: list[str]) -> Item:
    text = as_text(event.get("text") or "")
    state = _reasoning_state(text, event.get("signature"))
    return new_item(
        rec, idx, "reasoning", role="assistant", time=t, subkind=ek, name=ek, ids=ids, text=text, reasoning=state
    )


def _tool_calls(rec: Record, idx: int, t: float | None, ek: str, event: dict[str, Any], ids: list[str]) -> Item:
    calls = as_list(event.get("tool_calls"))
    names = []
    for c in calls:
        if isinstance(c, dict):
            cid = c.get("call_id") or c.get("id")
            if isinstance(cid, str):
                ids.append(cid)
            names.append(as_text(c.get("name")))
    args = [c.get("args") or c.get("arguments") for c in calls if isinstance(c, dict)]
    return new_item(
        rec,
        idx,
        "tool_call",
        role="assistant",
        time=t,
        subkind=ek,
        name=", ".join(names),
        ids=ids,
        text=_short_json(args),
    )


def _tool_results(rec: Record, idx: int, t: float | None, ek: str, event: dict[str, Any], ids: list[str]) -> Item:
    texts = []
    for r in as_list(event.get("results")):
        if isinstance(r, dict):
            cid = r.get("tool_call_id")
            if isinstance(cid, str):
                ids.append(cid)
            v = r.get("text", r.get("output"))
            texts.append(v if isinstance(v, str) else _short_json(v))
    return new_item(rec, idx, "tool_result", role="tool", time=t, subkind=ek, name=ek, ids=ids, text="\n".join(texts))


def _model_completed(rec: Record, idx: int, t: float | None, ek: str, event: dict[str, Any], ids: list[str]) -> Item:
    model = as_text(event.get("model"))
    text = f"model {model} usage {_short_json(event.get('usage'))}"
    return new_item(rec, idx, "usage", role="system", time=t, subkind=ek, name=model, text=text)


def _assistant_message(rec: Record, idx: int, t: float | None, ek: str, event: dict[str, Any], ids: list[str]) -> Item:
    text = as_text(event.get("text") or "")
    return new_item(rec, idx, "message", role="assistant", time=t, subkind=ek, name=ek, ids=ids, text=text)


def _other_event(rec: Record, idx: int, t: float | None, ek: str, event: dict[str, Any], ids: list[str]) -> Item:
    text = _short_json({k: v for k, v in event.items() if k != "kind"})
    return new_item(rec, idx, "event", time=t, subkind=ek, name=ek, ids=ids, text=text)


#: An event's kind -> its item (any other kind is a generic event).
_EVENTS: dict[str, Callable[[Record, int, float | None, str, dict[str, Any], list[str]], Item]] = {
    "started": _started,
    "reasoning_committed": _reasoning,
    "assistant_tool_calls_committed": _tool_calls,
    "tool_result_batch_committed": _tool_results,
    "model_completed": _model_completed,
    "assistant_message_committed": _assistant_message,
}


def _reasoning_state(text: str, sig: Any) -> str:
    """visible / encrypted / empty-signature, from the text and the signature value."""
    blob = sig if isinstance(sig, str) else (_short_json(sig) if sig is not None else "")
    if "gAAAAA" in blob or "encrypted" in blob:
        return "encrypted"
    if sig is not None and blob == "" and text:
        return "empty-signature"
    return "visible"


def _short_json(value: Any) -> str:
    return json_text(value)


def family_root(parts: Sequence[str]) -> str | None:
    """The ``sessions`` folder of ``sessions/<id>/session.jsonl`` or ``sessions/<parent>/subagent*/<child>/session.jsonl``."""
    if len(parts) >= 5 and parts[-1] == "session.jsonl" and parts[-3].startswith("subagent"):
        return os.sep.join(parts[:-4]) or os.sep
    if len(parts) >= 4 and parts[-1] == "session.jsonl" and parts[-3] == "sessions":
        return os.sep.join(parts[:-2])
    return None


SPEC = Format(
    FORMAT, "records", sniff, MuseObserver, items, probe=MuseProbe, family_root=family_root, zones=ZONES, known=KNOWN
)
