"""The matcher: a query's patterns compiled into Hyperscan databases, and what they find.

Hyperscan matches every pattern of a database in one linear-time pass over a buffer. Each
pattern is first written as a Hyperscan expression (:mod:`.hsexpr`). A pattern Hyperscan can
run exactly decides alone; one that needs a construct Hyperscan lacks runs in prefilter mode
(a superset of its matches) and ``re`` confirms each candidate line.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Sequence
from typing import Any

from musetui.core import patternset as ps
from musetui.core.patternset import CompileError as CompileError
from musetui.core.search.hsexpr import Expr, expression, regex_of

__all__ = ["Expr", "LineFinder", "TermRegex", "expression", "finder", "regex_of"]

_FLAGS_EXACT = ps.MULTILINE
_FLAGS_PREFILTER = ps.MULTILINE | ps.PREFILTER


# ---------------------------------------------------------------------------------------------
# Compiled databases (one per pattern set, per thread: a scratch space is not shared)
# ---------------------------------------------------------------------------------------------

_LOCAL = threading.local()


def _compile(exprs: Sequence[bytes], flags: Sequence[int]) -> Any:
    return ps.compile_set(exprs, flags)


def _flags_for(e: Expr, som: bool = False) -> list[int]:
    """Ways to compile one expression, strictest first."""
    base = _FLAGS_EXACT if e.exact else _FLAGS_PREFILTER
    if som:
        base |= ps.SOM_LEFTMOST
    return [base, base | ps.ALLOWEMPTY]


def _compile_one(e: Expr, som: bool = False) -> tuple[Any, int] | None:
    """A database for one expression and the flags it took; None if Hyperscan refuses it."""
    return ps.compile_first(e.source, _flags_for(e, som))


#: Compiled databases kept per thread (the TUI compiles one query per pause in typing).
CACHE_SIZE = 256


def _cache() -> dict[Any, Any]:
    c: dict[Any, Any] | None = getattr(_LOCAL, "cache", None)
    if c is None or len(c) > CACHE_SIZE:
        c = _LOCAL.cache = {}
    return c


def compilable(e: Expr, som: bool = False) -> bool:
    """Whether Hyperscan takes the expression (cached)."""
    key = ("one", e, som)
    cache = _cache()
    if key not in cache:
        cache[key] = _compile_one(e, som)
    return cache[key] is not None


# ---------------------------------------------------------------------------------------------
# Finding candidate lines in a file
# ---------------------------------------------------------------------------------------------


class LineFinder:
    """The lines of a buffer where any of a set of expressions matches, one scan call per line.

    The scan stops at the first match (a callback returning True); the next scan starts
    after that line's newline, so a line full of matches costs one callback.

    :meth:`any` may first run a *lead* database: when every expression starts with a
    literal (:data:`~musetui.core.search.hsexpr.LEAD_MIN` bytes or more) and has a bounded width, and no anchor or word
    boundary, every match lies in a window of that width from some occurrence of a lead.
    The leads are found at literal speed and only their windows (joined by newlines, which
    no match crosses) are scanned with the full database; Hyperscan runs a bounded
    repeat over the whole buffer up to 3x slower. A buffer with too many leads is scanned
    whole instead.
    """

    __slots__ = ("_at", "_budget", "_collect", "_db", "_lead", "_owner", "_pos", "_stop", "_win")

    def __init__(self, db: Any, owner: Sequence[int], lead: Any = None, win: Sequence[tuple[int, int]] = ()) -> None:
        self._db = db
        self._owner = owner
        self._lead = lead
        self._win = win  # per lead id: (its length, the width of a match)
        self._at = [-1, -1]
        self._pos: list[tuple[int, int]] = []
        self._budget = [0]
        at, pos, budget = self._at, self._pos, self._budget

        def stop(eid: int, _from: int, to: int, _flags: int, _ctx: object) -> bool:
            at[0] = to
            at[1] = eid
            return True

        def collect(eid: int, _from: int, to: int, _flags: int, _ctx: object) -> bool:
            pos.append((eid, to))
            return len(pos) > budget[0]

        self._stop = stop
        self._collect = collect

    def any(self, buf: Any) -> bool:
        """Whether any expression matches somewhere in ``buf`` (bytes, bytearray or memoryview)."""
        if self._lead is not None:
            got = self._windows(buf)
            if got is not None:
                return got
        at = self._at
        at[0] = -1
        try:
            self._db.scan(buf, match_event_handler=self._stop)
        except ps.Terminated:
            return True
        return at[0] >= 0

    def _windows(self, buf: Any) -> bool | None:
        """:meth:`any` through the lead database; None when the buffer has too many leads."""
        pos = self._pos
        pos.clear()
        self._budget[0] = 16 + (len(buf) >> 11)
        try:
            self._lead.scan(buf, match_event_handler=self._collect)
        except ps.Terminated:
            return None
        if not pos:
            return False
        win = self._win
        hay = b"\n".join([buf[to - win[i][0] : to - win[i][0] + win[i][1]] for i, to in pos])
        at = self._at
        at[0] = -1
        try:
            self._db.scan(hay, match_event_handler=self._stop)
        except ps.Terminated:
            return True
        return at[0] >= 0

    def lines(self, data: bytes) -> list[tuple[int, int, int]]:
        """(line start, line end, owner of the first match) of every line with a match."""
        out: list[tuple[int, int, int]] = []
        n = len(data)
        view = memoryview(data)
        at = self._at
        db, stop, owner = self._db, self._stop, self._owner
        pos = 0
        while pos < n:
            at[0] = -1
            with contextlib.suppress(ps.Terminated):
                db.scan(view[pos:] if pos else data, match_event_handler=stop)
            if at[0] < 0:
                break
            end = pos + at[0]
            p = end - 1 if end > pos and data[end - 1] != 10 else end
            if p >= n and data[n - 1] == 10:
                break  # an empty match after the last newline: no line is there
            ls = data.rfind(b"\n", 0, p) + 1 if p > 0 else 0
            le = data.find(b"\n", p)
            if le < 0:
                le = n
            out.append((ls, le, owner[at[1]]))
            pos = le + 1
        return out


def finder(exprs: Sequence[tuple[Expr, int]]) -> LineFinder | None:
    """One database for ``(expression, owner)`` pairs (cached per thread); None when empty.

    An expression Hyperscan refuses is left out only if it is a hint; the caller checks
    :func:`compilable` for the others first.
    """
    key = ("set", tuple(exprs))
    cache = _cache()
    if key in cache:
        got: LineFinder | None = cache[key]
        return got
    srcs: list[bytes] = []
    flags: list[int] = []
    owners: list[int] = []
    kept: list[Expr] = []
    for e, owner in exprs:
        one = _compile_one(e)
        if one is None:
            continue
        kept.append(e)
        srcs.append(e.source)
        flags.append(one[1])
        owners.append(owner)
    lf = LineFinder(_compile(srcs, flags), owners, *_leads(kept)) if srcs else None
    cache[key] = lf
    return lf


def _leads(exprs: Sequence[Expr]) -> tuple[Any, list[tuple[int, int]]]:
    """The lead database of a set of expressions, or None where it would not pay (see :class:`LineFinder`).

    It pays only when every expression has a lead and one of them is more than its lead
    (a set of plain literals runs at literal speed already).
    """
    if not exprs or not all(e.lead for e in exprs) or all(e.width == len(e.lead) for e in exprs):
        return None, []
    leads = [b"".join(b"\\x%02x" % c for c in e.lead) for e in exprs]
    flags = [ps.CASELESS if e.lead_ic else 0 for e in exprs]
    try:
        db = _compile(leads, flags)
    except ps.CompileError:
        return None, []
    return db, [(len(e.lead), e.width) for e in exprs]


# ---------------------------------------------------------------------------------------------
# A regex term: line checks and match spans, linear-time where Hyperscan runs it exactly
# ---------------------------------------------------------------------------------------------


class TermRegex:
    """How a ``/regex/`` term is checked on one line and located in a value.

    ``exact``: Hyperscan decides (no ``re`` call); otherwise Hyperscan prefilters (when it
    can) and ``re`` confirms, over at most ``cap`` bytes of a line.
    """

    def __init__(self, expr: Expr | None, raw: re.Pattern[bytes], matcher: re.Pattern[str]) -> None:
        self.expr = expr
        self.raw = raw
        self.matcher = matcher
        self.exact = expr is not None and expr.exact and compilable(expr)
        self.prefilter = expr is not None and compilable(expr)
        self._som: Any = _UNSET
        # Every match of an exact regex with a lead starts with it: text without it is skipped.
        lead = expr.lead if self.exact and expr is not None and expr.lead.isascii() else b""
        self._lead = lead.decode("ascii").lower() if expr is not None and expr.lead_ic else lead.decode("ascii")
        self._lead_ic = expr is not None and expr.lead_ic

    def _may_match(self, text: str) -> bool:
        """False when ``text`` cannot hold a match (it lacks the lead; ``str.lower`` folds ASCII as ``re`` does, and more)."""
        lead = self._lead
        return not lead or lead in (text.lower() if self._lead_ic else text)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its patterns (workers compile their own databases)."""
        return (TermRegex, (self.expr, self.raw, self.matcher))

    def line(self, raw: bytes, cap: int) -> bool:
        """Whether the regex matches the line ``raw``."""
        if self.expr is None:
            return False  # needs a newline: never on one line
        if self.prefilter:
            lf = finder(((self.expr, 0),))
            if lf is None or not lf.any(raw):
                return False
            if self.exact:
                return True
        return self.raw.search(raw[:cap] if len(raw) > cap else raw) is not None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of the matches in ``text`` (character offsets).

        Hyperscan cannot report where a match starts for a pattern that matches the empty
        string: such matches are given as empty spans at their ends (nothing to highlight).
        """
        if not self.exact:
            return [m.span() for m in self.matcher.finditer(text)]
        if not self._may_match(text):
            return []
        db, som = self._span_db()
        data = text.encode("utf-8", "surrogatepass")
        got: list[tuple[int, int]] = []
        if som:
            db.scan(data, match_event_handler=lambda _i, a, b, _f, _c: got.append((a, b)))
            return _char_spans(data, _leftmost(got))
        db.scan(data, match_event_handler=lambda _i, _a, b, _f, _c: got.append((b, b)))
        return _char_spans(data, sorted(set(got)))

    def search(self, text: str) -> tuple[int, int] | None:
        """The first match in ``text`` (the one that ends first, for Hyperscan), or None."""
        if not self.exact:
            m = self.matcher.search(text)
            return m.span() if m is not None else None
        if not self._may_match(text):
            return None
        db, som = self._span_db()
        data = text.encode("utf-8", "surrogatepass")
        got: list[tuple[int, int]] = []

        def first(_i: int, a: int, b: int, _f: int, _c: object) -> bool:
            got.append((a, b) if som else (b, b))
            return True

        with contextlib.suppress(ps.Terminated):
            db.scan(data, match_event_handler=first)
        return _char_spans(data, got)[0] if got else None

    def _span_db(self) -> tuple[Any, bool]:
        """A database reporting match starts when Hyperscan can, else one reporting ends."""
        if self._som is _UNSET:
            assert self.expr is not None
            one = _compile_one(self.expr, som=True)
            if one is not None:
                self._som = (one[0], True)
            else:
                plain = _compile_one(self.expr)
                assert plain is not None  # exact: it compiled without SOM
                self._som = (plain[0], False)
        got: tuple[Any, bool] = self._som
        return got


_UNSET: Any = object()


def _leftmost(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Non-overlapping matches, leftmost first and longest at each start (as ``re`` reports them)."""
    best: dict[int, int] = {}
    for a, b in spans:
        if b > best.get(a, -1):
            best[a] = b
    out: list[tuple[int, int]] = []
    end = -1
    for a in sorted(best):
        if a >= end:
            out.append((a, best[a]))
            end = max(best[a], a + 1)
    return out


def _char_spans(data: bytes, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte spans of UTF-8 ``data`` as character spans."""
    if data.isascii():
        return spans
    return [
        (
            len(data[:a].decode("utf-8", "ignore")),
            len(data[:b].decode("utf-8", "ignore")),
        )
        for a, b in spans
    ]
