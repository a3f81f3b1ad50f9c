"""The one multi-pattern matcher: Hyperscan pattern sets, compiled one way for fingerprints and search.

A pattern set is one Hyperscan database in block mode: every expression of it is matched in one
linear-time pass over a buffer, and ``db.scan(buf, match_event_handler=on)`` reports each
match's expression id and end (and its start, for expressions compiled with
:data:`SOM_LEFTMOST`). A handler that returns True stops the scan (:class:`Terminated` is
raised). The fingerprint heads (:mod:`musetui.core.fingerprints.extract`) report *candidates* that
``re`` then reads whole; a search query's expressions (:mod:`musetui.core.search.matcher`) report
*confirmed* matches, or candidates in prefilter mode. Nothing else imports Hyperscan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import hyperscan

__all__ = [
    "ALLOWEMPTY",
    "CASELESS",
    "MULTILINE",
    "PREFILTER",
    "SOM_LEFTMOST",
    "CompileError",
    "Terminated",
    "compile_first",
    "compile_set",
]

CASELESS: int = hyperscan.HS_FLAG_CASELESS
MULTILINE: int = hyperscan.HS_FLAG_MULTILINE
PREFILTER: int = hyperscan.HS_FLAG_PREFILTER
SOM_LEFTMOST: int = hyperscan.HS_FLAG_SOM_LEFTMOST
ALLOWEMPTY: int = hyperscan.HS_FLAG_ALLOWEMPTY
#: Raised out of ``db.scan`` when a match handler returns True (the scan stopped early).
Terminated = hyperscan.ScanTerminated


class CompileError(ValueError):
    """Hyperscan refused a pattern set (or every way of compiling one expression)."""


def compile_set(exprs: Sequence[bytes], flags: Sequence[int]) -> Any:
    """One block-mode database of ``exprs`` (ids are their positions).

    Raises:
        CompileError: Hyperscan refused the set (the message says which expression and why).
    """
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(expressions=list(exprs), ids=list(range(len(exprs))), elements=len(exprs), flags=list(flags))
    except hyperscan.error as exc:
        raise CompileError(str(exc)) from exc
    return db


def compile_first(expr: bytes, choices: Sequence[int]) -> tuple[Any, int] | None:
    """A database of one expression with the first of ``choices`` (flags) Hyperscan takes, and those flags."""
    for flags in choices:
        try:
            return compile_set([expr], [flags]), flags
        except CompileError:
            continue
    return None
