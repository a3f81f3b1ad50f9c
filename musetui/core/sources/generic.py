"""Any other JSON or JSONL file: a session of generic items (fingerprints are still reported)."""

from __future__ import annotations

from typing import Any

from musetui.core.model import Item
from musetui.core.sources.base import (
    ZONE_MODEL,
    Observer,
    Record,
    as_text,
    dig,
    json_text,
    new_item,
    record_time,
    text_of,
)
from musetui.core.sources.spec import Format

FORMAT = "generic"

_TIME_KEYS = ("timestamp", "created_at", "created", "time", "ts", "recorded_at")


class GenericObserver(Observer):
    """Picks up an id, a model and a time where common keys hold them."""

    def observe(self, doc: Any, line: int) -> tuple[Any, int]:
        s = self.summary
        if s.session_id is None:
            for key in ("session_id", "sessionId", "id"):
                v = text_of(dig(doc, key))
                if v:
                    s.session_id = v
                    break
        model = text_of(dig(doc, "model"))
        if model:
            self.declare_model(model)
        for key in _TIME_KEYS:
            v = dig(doc, key)
            if v is not None and not isinstance(v, dict | list):
                return v, ZONE_MODEL
        return None, ZONE_MODEL


def items(records: list[Record]) -> list[Item]:
    """One item per record, with a compact JSON preview."""
    out: list[Item] = []
    for rec in records:
        obj = rec.obj
        t = None
        kind = "unknown"
        name = None
        if isinstance(obj, dict):
            for key in _TIME_KEYS:
                t = record_time(obj.get(key))
                if t is not None:
                    break
            name = as_text(obj.get("type") or obj.get("kind") or "") or None
        text = json_text(obj)
        out.append(new_item(rec, len(out), kind, time=t, name=name, subkind=name, text=text[:4000]))
    return out


SPEC = Format(FORMAT, "records", None, GenericObserver, items)
