"""Where a hit matched inside its record: the field path, the text, and a clean snippet around it.

A record is walked by :func:`musetui.core.jsonwalk.entries` (each key, then its value; JSON held
in a string too, path suffix ``<json>``), with every value a level of its own.
The ``field`` of a hit is the first value the term matches, else the first key, else ``raw``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from musetui.core.jsonwalk import MAX_DEPTH, entries, path_of
from musetui.core.safetext import drop_invisible
from musetui.core.search.query import SNIPPET_MAX

if TYPE_CHECKING:
    from musetui.core.search.query import TextTerm

__all__ = ["MAX_DEPTH", "first_match", "on_line", "raw_location", "snippet", "values"]

_BLANK_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\s]+")

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
    for base, member, key, value, is_key, _level in entries(obj, path, depth, leaves_nest=True):
        if is_key:
            yield path_of(base, member), str(key), value, True
        else:
            yield path_of(base, member), value if isinstance(value, str) else scalar_text(value), value, False


def first_match(
    objs: Iterable[Any],
    search: Callable[[str], tuple[int, int] | None],
    raw: bytes | None = None,
) -> Located | None:
    """The first value of the records that ``search`` matches, else their first key (:func:`values` order).

    With ``raw`` (a line of a pretty-printed document), only what is written on that line
    counts (see :func:`on_line`). The same answer as scanning :func:`values` for the first
    value match while remembering the first key match; the walk stops at the first value.
    """
    key_hit: list[tuple[str, str, Any, tuple[int, int]]] = []
    for obj in objs:
        if raw is None:
            found = _first(obj, search, key_hit)
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


def _first(obj: Any, search: Callable[[str], tuple[int, int] | None], key_hit: _KeyHit) -> Located | None:
    """:func:`first_match` over one record: the walk stops at the first value that matches."""
    for base, member, key, value, is_key, _level in entries(obj, leaves_nest=True):
        if is_key:
            if not key_hit:
                ks = str(key)
                m = search(ks)
                if m is not None:
                    key_hit.append((path_of(base, member), ks, value, m))
            continue
        text = value if isinstance(value, str) else scalar_text(value)
        m = search(text)
        if m is not None:
            return path_of(base, member), text, m[0], m[1]
    return None


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


def snippet(text: str, s: int, e: int, terms: Sequence[TextTerm]) -> tuple[str, list[tuple[int, int]]]:
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
