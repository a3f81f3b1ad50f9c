"""Where a hit matched inside its record: the field path, the text, and a clean snippet around it.

A record is walked in document order: each key (``is_key``), then its value; lists by index;
JSON held in a string is walked too (path suffix ``<json>``), as the fingerprint walk does.
The ``field`` of a hit is the first value the term matches, else the first key, else ``raw``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from musetui.core.safetext import drop_invisible
from musetui.core.search.query import SNIPPET_MAX

if TYPE_CHECKING:
    from musetui.core.search.query import TextTerm

__all__ = ["first_match", "on_line", "raw_location", "snippet", "values"]

_BLANK_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\s]+")
#: Records nested deeper than this are not walked further.
MAX_DEPTH = 200

#: A located match: (field path, text, start, end) of the match in ``text``.
Located = tuple[str, str, int, int]


def clean(text: str) -> str:
    """One line: invisible characters dropped (see :mod:`musetui.core.safetext`), each run of blanks and controls one space."""
    return _BLANK_RE.sub(" ", drop_invisible(text))


def scalar_text(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def values(obj: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, str, Any, bool]]:
    """Every key and value of a record as text, in walk order: (field path, text, value, is_key)."""
    if depth > MAX_DEPTH:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            sub = f"{path}.{k}" if path else str(k)
            yield sub, str(k), v, True
            yield from values(v, sub, depth + 1)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from values(v, f"{path}[{i}]", depth + 1)
    elif isinstance(obj, str):
        yield path, obj, obj, False
        inner = _inner_json(obj)
        if inner is not None:
            yield from values(inner, path + "<json>", depth + 1)
    else:
        yield path, scalar_text(obj), obj, False


def _inner_json(s: str) -> dict[str, Any] | list[Any] | None:
    """The object or array a string holds as JSON text, else None."""
    if len(s) >= 2 and s[0] in "{[" and s[-1] in "}]":
        try:
            inner = orjson.loads(s)
        except orjson.JSONDecodeError:
            return None
        if isinstance(inner, dict | list):
            return inner
    return None


def first_match(
    objs: Iterable[Any],
    search: Callable[[str], tuple[int, int] | None],
    raw: bytes | None = None,
) -> Located | None:
    """The first value of the records that ``search`` matches, else their first key (:func:`values` order).

    With ``raw`` (a line of a pretty-printed document), only what is written on that line
    counts (see :func:`on_line`). The same answer as scanning :func:`values` for the first
    value match while remembering the first key match; records from ``orjson`` are walked
    without a generator per level, and the walk stops at the first value.
    """
    key_hit: list[tuple[str, str, Any, tuple[int, int]]] = []
    for obj in objs:
        if raw is None:
            found = _first(obj, "", 0, search, key_hit)
        else:
            entries = (x for x in values(obj) if on_line(x[1], x[2], x[3], raw))
            found = _first_entry(entries, search, key_hit)
        if found is not None:
            return found
    if key_hit:
        path, text, value, (s, e) = key_hit[0]
        shown = (
            scalar_text(value)
            if not isinstance(value, dict | list)
            else orjson.dumps(value).decode("utf-8", "replace")[:300]
        )
        return path, f"{text}: {shown}", s, e
    return None


#: The first key a term matched: (field path, key, its value, the match).
_KeyHit = list[tuple[str, str, Any, tuple[int, int]]]


def _first(
    obj: Any, path: str, depth: int, search: Callable[[str], tuple[int, int] | None], key_hit: _KeyHit
) -> Located | None:
    """:func:`first_match` over one record, recursively (exact ``orjson`` types; others by :func:`values`)."""
    if depth > MAX_DEPTH:
        return None
    tp = type(obj)
    if tp is str:
        m = search(obj)
        if m is not None:
            return path, obj, m[0], m[1]
        inner = _inner_json(obj)
        return None if inner is None else _first(inner, path + "<json>", depth + 1, search, key_hit)
    if tp is dict:
        for k, v in obj.items():
            ks = str(k)
            sub = f"{path}.{ks}" if path else ks
            if not key_hit:
                m = search(ks)
                if m is not None:
                    key_hit.append((sub, ks, v, m))
            found = _first(v, sub, depth + 1, search, key_hit)
            if found is not None:
                return found
        return None
    if tp is list:
        for i, v in enumerate(obj):
            found = _first(v, f"{path}[{i}]", depth + 1, search, key_hit)
            if found is not None:
                return found
        return None
    if isinstance(obj, dict | list | str):  # a subclass (not from orjson)
        return _first_entry(values(obj, path, depth), search, key_hit)
    text = scalar_text(obj)
    m = search(text)
    return None if m is None else (path, text, m[0], m[1])


def _first_entry(
    entries: Iterable[tuple[str, str, Any, bool]],
    search: Callable[[str], tuple[int, int] | None],
    key_hit: _KeyHit,
) -> Located | None:
    """:func:`first_match` over walked entries."""
    for path, text, value, is_key in entries:
        m = search(text)
        if m is None:
            continue
        if not is_key:
            return path, text, m[0], m[1]
        if not key_hit:
            key_hit.append((path, text, value, m))
    return None


def on_line(text: str, value: Any, is_key: bool, raw: bytes) -> bool:
    """Whether a value (or key) is written on this physical line (pretty-printed documents)."""
    if is_key:
        return b'"' + orjson.dumps(text)[1:-1] + b'"' in raw
    if isinstance(value, str):
        return orjson.dumps(value)[1:-1] in raw
    return text.encode("utf-8", "replace") in raw


def raw_location(term: TextTerm, raw: bytes) -> Located:
    """The match of a term in the raw line itself (field ``raw``)."""
    text = raw.decode("utf-8", "replace")
    found = term.search(text)
    if found is not None:
        return "raw", text, found[0], found[1]
    if term.encoded_matcher is not None:
        m = term.encoded_matcher.search(text)
        if m is not None:
            return "raw", text, m.start(), m.end()
    return "raw", text, 0, 0


def snippet(
    text: str, s: int, e: int, terms: Sequence[TextTerm]
) -> tuple[str, list[tuple[int, int]]]:
    """At most :data:`SNIPPET_MAX` characters of ``text`` around ``[s, e)``, one clean line, and the terms' spans in it."""
    e = min(max(e, s), s + SNIPPET_MAX - 2)
    w0, w1 = max(0, s - 400), min(len(text), e + 400)
    before = clean(text[w0:s])
    middle = clean(text[s:e])
    after = clean(text[e:w1])
    if w0 == 0:
        before = before.lstrip()
    if w1 == len(text):
        after = after.rstrip()
    budget = SNIPPET_MAX - 2 - len(middle)
    if budget < 0:
        middle, budget = middle[: SNIPPET_MAX - 2], 0
    lead = min(len(before), max(budget // 3, budget - len(after)))
    tail = min(len(after), budget - lead)
    left_cut = w0 > 0 or lead < len(before)
    right_cut = w1 < len(text) or tail < len(after)
    head = ("…" if left_cut else "") + before[len(before) - lead :]
    out = head + middle + after[:tail] + ("…" if right_cut else "")
    spans: set[tuple[int, int]] = set()
    if middle:
        spans.add((len(head), len(head) + len(middle)))
    for term in terms:
        found = term.spans(out)
        if term.encoded_matcher is not None:
            found += [m.span() for m in term.encoded_matcher.finditer(out)]
        spans.update((a, b) for a, b in found if b > a)
    return out, _merge(spans)


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out
