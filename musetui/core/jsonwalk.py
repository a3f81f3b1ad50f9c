"""The one walk over a parsed JSON record: every key and value in document order, with its field path.

Field paths read ``a.b[2].c``; JSON held in a string is walked too, below the string's path with
the suffix ``<json>`` (``args<json>.cmd``). Each key comes before its value. The fingerprint
walk and search's hit locator are consumers of :func:`entries`; they differ only in the
parameters (whether leaves count as a level, whether keys, scalars and JSON held in strings
are visited). :func:`find_path` is the same walk as a targeted search, for the scan's hot path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

__all__ = [
    "MAX_DEPTH",
    "Entry",
    "Steps",
    "entries",
    "find_path",
    "find_unique",
    "inner_json",
    "path_of",
    "spells_needles",
    "steps_of",
]

#: Containers nested deeper than this are not walked.
MAX_DEPTH = 200

#: One step of the walk: (base, member, key, value, is_key, depth).
#:
#: ``base`` is the path of the container, ``member`` the key (a ``str``) or list index (an
#: ``int``) in it, or None for the walk's root; :func:`path_of` spells the entry's field path,
#: so a consumer pays for a path only where it keeps one. A key entry carries the key and the
#: member's value (a container too). A value entry is a string or scalar leaf; its ``key`` is
#: the member's key, or for a list's element the last dotted segment of the list's own path
#: (None at the top). ``depth`` is the entry's own level: the root is at the walk's starting
#: depth, a container's members one below it.
Entry = tuple[str, "str | int | None", "str | None", Any, bool, int]

#: The types orjson builds: anything else is told apart by ``isinstance``.
_EXACT = frozenset({str, dict, list, int, float, bool, type(None)})

#: A walk frame: the members still to visit, the container's path, depth, list key, is a dict.
_Frame = tuple[Iterator[tuple[Any, Any]], str, int, "str | None", bool]


def path_of(base: str, member: str | int | None) -> str:
    """The field path of an entry: ``base.key``, ``base[index]``, or ``base`` for the root."""
    if member is None:
        return base
    if type(member) is int:
        return f"{base}[{member}]"
    return f"{base}.{member}" if base else str(member)


def inner_json(s: str) -> dict[str, Any] | list[Any] | None:
    """The object or array a string holds as JSON text, else None."""
    if len(s) >= 2 and s[0] in "{[" and s[-1] in "}]":
        try:
            inner = orjson.loads(s)
        except orjson.JSONDecodeError:
            return None
        if isinstance(inner, dict | list):
            return inner
    return None


def _frame(obj: dict[Any, Any] | list[Any], path: str, depth: int) -> _Frame:
    if isinstance(obj, dict):
        return iter(obj.items()), path, depth, None, True
    return iter(enumerate(obj)), path, depth, (path.rsplit(".", 1)[-1] if path else None), False


def _leaf_root(
    obj: Any, path: str, depth: int, nest: int, scalars: bool, json: bool, max_depth: int
) -> tuple[list[Entry], list[_Frame]]:
    """The walk of a root that is no container: its own entry, and the frame of the JSON a string holds."""
    if isinstance(obj, str):
        inner = inner_json(obj) if json else None
        frames = (
            [_frame(inner, path + "<json>", depth + nest)] if inner is not None and depth + nest <= max_depth else []
        )
        return [(path, None, None, obj, False, depth)], frames
    return ([(path, None, None, obj, False, depth)] if scalars else []), []


def _kind(v: Any) -> type | None:
    """The orjson type an instance of another type stands for (a ``str``, ``dict`` or ``list`` subclass), or None."""
    return str if isinstance(v, str) else dict if isinstance(v, dict) else list if isinstance(v, list) else None


def entries(
    obj: Any,
    path: str = "",
    depth: int = 0,
    *,
    leaves_nest: bool = False,
    keys: bool = True,
    scalars: bool = True,
    json: bool = True,
    max_depth: int = MAX_DEPTH,
) -> Iterator[Entry]:
    """Every key and leaf value of ``obj`` in document order, as :data:`Entry` tuples.

    One generator for the whole record (no generator per level), so a consumer that stops at
    its first find pays only for what it read.

    Args:
        obj: a parsed record (orjson's types, or any dict/list/str/scalar).
        path: the field path of ``obj`` itself.
        depth: the level of ``obj``; a container past ``max_depth`` is not entered.
        leaves_nest: a leaf counts as a level of its own: leaves past ``max_depth`` are
            dropped, and the JSON a string holds sits one level below the string. Without
            it a leaf is visited whenever its container is, and its JSON sits at its level.
        keys: visit keys (as key entries, each before its value).
        scalars: visit numbers, booleans and nulls too (as value entries).
        json: walk the object or array a string holds as JSON text, right after the string.
        max_depth: the deepest level walked.
    """
    nest = 1 if leaves_nest else 0
    if depth > max_depth:
        return
    if isinstance(obj, dict | list):
        frames = [_frame(obj, path, depth)]
    else:
        head, frames = _leaf_root(obj, path, depth, nest, scalars, json, max_depth)
        yield from head
    while frames:
        it, base, d, list_key, is_dict = frames[-1]
        level = d + 1
        key: str | None
        for k, v in it:
            if is_dict:
                if type(k) is not str:
                    k = str(k)
                key = k
                if keys:
                    yield base, k, key, v, True, level
            else:
                key = list_key
            tv: type | None = type(v)
            if tv not in _EXACT:  # a subclass, or a type orjson never builds
                tv = _kind(v)
            if tv is str:
                if nest and level > max_depth:
                    continue
                yield base, k, key, v, False, level
                if json:
                    inner = inner_json(v)
                    if inner is not None and level + nest <= max_depth:
                        frames.append(_frame(inner, path_of(base, k) + "<json>", level + nest))
                        break
            elif tv is dict:
                if level <= max_depth:
                    sub = (f"{base}.{k}" if base else k) if is_dict else f"{base}[{k}]"
                    frames.append((iter(v.items()), sub, level, None, True))
                    break
            elif tv is list:
                if level <= max_depth:
                    sub = (f"{base}.{k}" if base else k) if is_dict else f"{base}[{k}]"
                    frames.append((iter(enumerate(v)), sub, level, sub.rsplit(".", 1)[-1] if sub else None, False))
                    break
            elif scalars and not (nest and level > max_depth):
                yield base, k, key, v, False, level
        else:
            frames.pop()


_SCALARS = frozenset({int, float, bool, type(None)})


def find_path(obj: Any, needle: str, key: str | None = None, path: str = "", depth: int = 0) -> str | None:
    """The path of the first string that contains ``needle`` (or key equal to ``key``), else None.

    The first find in the order of ``entries(obj, path, depth, keys=key is not None,
    scalars=False, json=False)``, except that a string holding JSON (longer than the needle)
    is searched inside too, and the find inside it wins. Written as a recursive search
    rather than over :func:`entries`: the scan names the field of every evidence example with
    it, and the generator's cost per step doubled the scan's time here (callgrind, bar150
    every 200th file: +2.7 M of 73 M instructions).
    """
    if depth > MAX_DEPTH:
        return None
    if isinstance(obj, dict):
        for k, v in obj.items():
            if key is not None and k == key:
                return f"{path}.{k}" if path else str(k)
            tv = type(v)
            if tv is str:
                if needle and needle in v:
                    return _in_string(v, needle, key, f"{path}.{k}" if path else str(k), depth)
            elif tv in _SCALARS:
                continue
            elif tv is dict or tv is list or isinstance(v, dict | list):
                if v:
                    found = find_path(v, needle, key, f"{path}.{k}" if path else str(k), depth + 1)
                    if found is not None:
                        return found
            elif isinstance(v, str) and needle and needle in v:
                return _in_string(v, needle, key, f"{path}.{k}" if path else str(k), depth)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            tv = type(v)
            if tv is str or isinstance(v, str):
                if needle and needle in v:
                    return _in_string(v, needle, key, f"{path}[{i}]", depth)
            elif tv in _SCALARS:
                continue
            elif isinstance(v, dict | list) and v:
                found = find_path(v, needle, key, f"{path}[{i}]", depth + 1)
                if found is not None:
                    return found
    return None


def _in_string(v: str, needle: str, key: str | None, sub: str, depth: int) -> str:
    """The path of a string holding the needle: inside it when it holds JSON that has it."""
    if len(v) > len(needle):
        inner = inner_json(v)
        if inner is not None:
            return find_path(inner, needle, key, sub + "<json>", depth + 1) or sub
    return sub


#: A field path as the members that lead to it from the root (keys and list indices).
Steps = tuple["str | int", ...]

#: JSON escapes that can spell a printable ASCII character other than a quote or backslash.
_ASCII_ESCAPE = re.compile(rb"\\(?:u00[2-7]|/)")
_STEP = re.compile(r"[^.\[\]]+|\[(\d+)\]")


def spells_needles(text: bytes) -> bool:
    """True when ``text`` spells every printable ASCII character literally (no ``\\u0041`` or ``\\/``).

    In such JSON text a string or key holds a printable ASCII needle (no quote, no backslash)
    only where the needle's bytes are: a needle whose bytes occur once is in one place at most.
    """
    # (every escape starts at a backslash, and most lines hold none: one byte search, then the regex from
    # the first backslash on; callgrind, a Claude Code line of 3 KB: 2.4 k instructions, 9.2 k by the regex alone)
    first = text.find(b"\\")
    return first < 0 or _ASCII_ESCAPE.search(text, first) is None


def steps_of(path: str) -> Steps | None:
    """The members a path found by :func:`find_path` names, when its spelling is plain (else None).

    ``a.b[2].c`` gives ``("a", "b", 2, "c")``; a path inside JSON held in a string gives None.
    (A key holding ``.`` or ``[`` reads as other members: such steps lead elsewhere, or nowhere.)
    """
    if not path or "<json>" in path:
        return None
    return tuple(int(m.group(1)) if m.group(1) is not None else m.group() for m in _STEP.finditer(path))


def find_unique(obj: Any, text: bytes, needle: str, key: str | None, candidates: Iterable[Steps]) -> str | None:
    """:func:`find_path` (``obj``, ``needle``, ``key``) read off the first of ``candidates`` that leads to the needle.

    Exact, or None (then ask :func:`find_path`): it answers only when ``text``, the JSON
    ``obj`` was parsed from (or any text holding it), shows that the needle can be in one
    place alone: a printable ASCII needle without quote or backslash, whose bytes occur once
    in ``text``, which spells such characters literally (:func:`spells_needles`, checked by
    the caller). That one place is then the first find in any order: a candidate that leads to
    a string holding the needle (holding no JSON of its own), or for a ``key``, to a mapping
    with that key, leads to it, and the path it spells is :func:`find_path`'s.
    """
    for steps in candidates:
        if not steps:
            continue  # (find_path names nothing at the root)
        cur = obj
        for step in steps[:-1]:  # (_has, inline)
            if type(step) is int:
                if type(cur) is not list or step >= len(cur):
                    break
            elif type(cur) is not dict or step not in cur:
                break
            cur = cur[step]
        else:
            step = steps[-1]
            if key is not None and step == key and type(cur) is dict and key in cur:
                return _spell(steps) if _once(text, needle) or (key == needle and _one_key(text, needle)) else None
            if not _has(cur, step):
                continue
            cur = cur[step]
            if type(cur) is str and (cur == needle or needle in cur):  # (mostly the value itself)
                if len(cur) > len(needle) and cur[:1] in "{[" and cur[-1:] in "}]":
                    return None  # (a string that may hold JSON: the find may be inside it)
                return _spell(steps) if _once(text, needle) else None
    return None


def _has(cur: Any, step: str | int) -> bool:
    """Whether ``cur`` has the member ``step`` (an index of a list, a key of a mapping)."""
    return (type(cur) is list and step < len(cur)) if type(step) is int else (type(cur) is dict and step in cur)


def _once(text: bytes, needle: str) -> bool:
    """True when ``needle`` is printable ASCII without quote or backslash, and its bytes occur once in ``text``."""
    if not needle or not needle.isascii() or '"' in needle or "\\" in needle:
        return False
    return text.count(needle.encode()) == 1


#: What follows a needle inside a key: the rest of the key (no quote, no backslash), its closing quote, a colon.
_KEY_TAIL = re.compile(rb'[^"\\]*"[ \t\r\n]*:')


def _one_key(text: bytes, needle: str) -> bool:
    """True when the bytes of ``needle`` (as :func:`_once` allows) occur in ``text`` only inside keys, one of them ``needle`` itself.

    A key's name repeated inside longer keys (``cache_creation`` in ``cache_creation_input_tokens``)
    is then in one place as far as :func:`find_path` goes: it matches a key by equality, and no
    string holds the needle. (In JSON text a string followed by a colon is a key; the rest of a key
    has no quote, and no backslash: a string holding JSON would show its quotes escaped.)
    """
    if not needle or not needle.isascii() or '"' in needle or "\\" in needle:
        return False
    nb = needle.encode()
    i = text.find(nb)
    while i >= 0:
        if _KEY_TAIL.match(text, i + len(nb)) is None:
            return False
        i = text.find(nb, i + 1)
    return text.count(b'"' + nb + b'"') == 1


#: The paths spelled lately, by their members (few kinds of evidence: few paths).
_SPELLED: dict[Steps, str] = {}


def _spell(steps: Steps) -> str:
    """The path :func:`find_path` spells for these members (as :func:`path_of`, step by step)."""
    path = _SPELLED.get(steps)
    if path is not None:
        return path
    path = ""
    for step in steps:
        path = f"{path}[{step}]" if type(step) is int else (f"{path}.{step}" if path else str(step))
    if len(_SPELLED) >= 4096:
        _SPELLED.clear()
    _SPELLED[steps] = path
    return path
