"""Answers derived from a whole tree (the timeline's rows, the fleet's records), kept under the tree's digest.

A warm ``timeline`` or ``fleet`` over a large tree should not decode every session again: the
answer is stored in the cache's results with the digest of the walk (see
:func:`musetui.core.walk.tree_digest`). When nothing under the roots changed, the stored answer is
the answer; otherwise the index is brought up to date (light summaries, only changed files read),
the answer rebuilt from it and stored for next time. A stored answer that does not decode (another
layout, damage) is rebuilt, never trusted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from musetui.core.index import Index

__all__ = ["stored_or_built"]

T = TypeVar("T")


def stored_or_built(
    paths: Sequence[str],
    name: str,
    build: Callable[[Index], T],
    encode: Callable[[T], bytes | None],
    decode: Callable[[bytes], T | None],
    *,
    workers: int | None = None,
) -> tuple[T, list[str]]:
    """``name``'s answer over ``paths``, stored or built; with the index's notices (empty when stored).

    ``encode`` gives one JSON record (the results table keeps records), or None when the answer
    cannot be stored (a name that is not UTF-8); ``decode`` gives None for anything it did not write.
    """
    from musetui.core.cache import IndexCache
    from musetui.core.model import Diagnostic
    from musetui.core.walk import tree_digest, walk_roots

    roots = list(paths)
    diags: list[Diagnostic] = []
    files = walk_roots(roots, diags)
    digest = tree_digest(roots, files, diags)
    key = f"{name} " + repr([(os.path.abspath(p), p) for p in roots])
    if files:
        store = IndexCache(files[0].root, roots=roots)
        hit = store.result(key, digest)
        store.close()
        value = decode(hit[0]) if hit is not None else None
        if value is not None:
            return value, []
    from musetui.core.index import Index  # (not before: a stored answer needs no index)

    index = Index(roots, workers=workers, use_cache=True, light=True, prewalked=(files, diags))
    index.scan()
    value = build(index)
    blob = encode(value)
    if files and blob is not None:
        store = IndexCache(files[0].root, roots=roots)
        store.put_result(key, digest, blob + b"\n", [])  # (a line: the results table keeps JSON Lines records)
        store.close()
    return value, list(index.notices)
