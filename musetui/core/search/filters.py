"""Field filters: whether a session, or one line and its item, passes a filter of the query.

Session-level filters (path, provider, host, flag, format, session, model) are decided once per
session; the others (after, before, has, kind, role, id) per line and item.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from musetui.core.search.files import Info
from musetui.core.search.query import FieldFilter, Query, Term

if TYPE_CHECKING:
    from musetui.core.model import Item

_GLOB_CHARS = frozenset("*?[")
_SIGNATURE_RE = re.compile(rb'(?i)signature\\*"\s*:\s*\\*"(?!\\*")')
_FERNET_RE = re.compile(rb"gAAAAA[A-Za-z0-9_\-]{6,}={0,2}")
_FERNET_STR_RE = re.compile(r"gAAAAA[A-Za-z0-9_\-]{6,}={0,2}")


def glob_match(value: str, pattern: str, substring: bool) -> bool:
    """``pattern`` as a glob when it has glob characters, else a plain (sub)string match."""
    if not (_GLOB_CHARS & set(pattern)):
        return pattern in value if substring else value == pattern
    return fnmatch.fnmatchcase(value, pattern)


def session_filter(f: FieldFilter, info: Info, path: str) -> bool:
    """Whether a session passes one session-level filter (path, provider, host, flag, format, session, model)."""
    name = f.name
    if name == "path":
        p = path if f.case_sensitive else path.lower()
        return any(glob_match(p, v, True) for v in f.values)
    if name == "provider":
        return (info.provider or "unknown") in f.values
    if name == "host":
        return (info.host or "none") in f.values
    if name == "flag":
        return any(v in info.flags for v in f.values)
    if name == "format":
        return info.format in f.values
    if name == "session":
        sid = (info.session_id or "").lower()
        return any(sid.startswith(v) for v in f.values)
    if name == "model":
        models = [m.lower() for m in info.models]
        return any(glob_match(m, v, False) for m in models for v in f.values)
    return True


def session_passes(query: Query, info: Info | None, path: str, groups: Sequence[tuple[Term, ...]]) -> bool:
    """Whether the session passes the groups made only of session-level filters."""
    for group in groups:
        ok = False
        for t in group:
            assert isinstance(t.atom, FieldFilter)
            if info is None and t.atom.name != "path":
                ok = True  # not decidable yet
                break
            got = session_filter(t.atom, info or Info("generic", None), path)
            if got != t.negated:
                ok = True
                break
        if not ok:
            return False
    return True


def item_filter(f: FieldFilter, raw: bytes, item: Item | None, info: Info, path: str) -> bool:
    """Whether one line (``raw``) and the item chosen on it pass a field filter; session-level filters ask the session."""
    name = f.name
    if f.session_level:
        return session_filter(f, info, path)
    if name in ("after", "before"):
        t = item.time if item is not None else None
        if t is None:
            t = info.ended_at if name == "after" else info.started_at
        if t is None:
            return False
        if name == "after":
            return any(t >= x for x in f.times)
        return any(t < x for x in f.times)
    if name == "has":
        for v in f.values:
            if v == "encrypted":
                if item is not None and item.reasoning == "encrypted":
                    return True
                if has_fernet(raw):
                    return True
            elif v == "signature" and _SIGNATURE_RE.search(raw):
                return True
        return False
    if item is None:
        return False
    if name == "kind":
        return item.kind in f.values
    if name == "role":
        return (item.role or "").lower() in f.values
    if name == "id":
        ids = item.ids if f.case_sensitive else [i.lower() for i in item.ids if isinstance(i, str)]
        return any(glob_match(i, v, False) for i in ids for v in f.values)
    return True


def has_fernet(raw: bytes) -> bool:
    """Whether the line holds a Fernet token that decodes (encrypted reasoning)."""
    from musetui.core.fingerprints.decoders import decode_fernet

    return any(decode_fernet(m.group().decode("ascii")) is not None for m in _FERNET_RE.finditer(raw))


def filter_location(
    terms: Sequence[Term], entries: list[tuple[str, str, Any, bool]], item: Item | None, raw: bytes
) -> tuple[str, str, int, int]:
    """Field and snippet for a hit that no text term located: from the filters that passed.

    ``entries``: the line's values and keys, as :func:`musetui.core.search.locate.values` walks them.
    """
    filters = [t.atom for t in terms if isinstance(t.atom, FieldFilter) and not t.negated]
    wanted = {v for f in filters if f.name == "has" for v in f.values}
    id_filters = [f for f in filters if f.name == "id"]
    if "encrypted" in wanted:
        for path, text, _v, is_key in entries:
            if not is_key and (m := _FERNET_STR_RE.search(text)) is not None:
                return path, text, m.start(), m.end()
        for path, text, v, is_key in entries:
            if is_key and "encrypted" in text.lower() and isinstance(v, str) and v:
                return path, v, 0, min(len(v), 40)
    if "signature" in wanted:
        for path, text, v, is_key in entries:
            if is_key and text.lower().endswith("signature") and isinstance(v, str) and v:
                return path, v, 0, min(len(v), 40)
    for f in id_filters:
        for path, text, _v, is_key in entries:
            probe = text if f.case_sensitive else text.lower()
            if not is_key and any(glob_match(probe, v, False) for v in f.values):
                return path, text, 0, len(text)
    if item is not None and item.text:
        head = item.text[:60]
        for path, text, _v, is_key in entries:
            if not is_key and head and head in text:
                s = text.find(head)
                return path, text, s, s
    return "raw", raw.decode("utf-8", "replace"), 0, 0
