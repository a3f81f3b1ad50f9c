"""The one walk over a parsed JSON record: every key and value in document order, with its field path.

Field paths read ``a.b[2].c``; JSON held in a string is walked too, below the string's path with
the suffix ``<json>`` (``args<json>.cmd``). Each key comes before its value. The fingerprint
walk, the field-path finder and search's hit locator are all consumers of :func:`entries`;
they differ only in the parameters (whether leaves count as a level, whether scalars and JSON
held in strings are visited).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

__all__ = ["MAX_DEPTH", "Entry", "entries", "inner_json", "path_of"]

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
    frames: list[_Frame] = []
    if depth > max_depth:
        return
    if isinstance(obj, dict | list):
        frames.append(_frame(obj, path, depth))
    elif isinstance(obj, str):
        yield path, None, None, obj, False, depth
        inner = inner_json(obj) if json else None
        if inner is not None and depth + nest <= max_depth:
            frames.append(_frame(inner, path + "<json>", depth + nest))
    elif scalars:
        yield path, None, None, obj, False, depth
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
            tv = type(v)
            if tv is str or (tv is not dict and tv is not list and isinstance(v, str)):
                if nest and level > max_depth:
                    continue
                yield base, k, key, v, False, level
                if json:
                    inner = inner_json(v)
                    if inner is not None and level + nest <= max_depth:
                        frames.append(_frame(inner, path_of(base, k) + "<json>", level + nest))
                        break
            elif tv is dict or tv is list or isinstance(v, dict | list):
                if level <= max_depth:
                    frames.append(_frame(v, path_of(base, k), level))
                    break
            elif scalars and not (nest and level > max_depth):
                yield base, k, key, v, False, level
        else:
            frames.pop()
