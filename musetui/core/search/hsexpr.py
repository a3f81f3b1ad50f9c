"""A Python regex as a Hyperscan expression: what :mod:`.matcher` compiles.

Each pattern is written here from Python's own parse of it (:func:`expression`), so that it
means what ``re`` means over one raw line: character classes become explicit byte sets (case
folded as a bytes ``re`` folds them, never holding a newline), ``^``/``$``/``\\A``/``\\Z`` mark
line ends. A construct Hyperscan lacks (back-references, look-arounds, atomic groups,
possessive repeats) makes the expression inexact: a superset of the pattern's matches, which
``re`` then confirms.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import warnings
from dataclasses import dataclass
from typing import Any

__all__ = ["LEAD_MIN", "WINDOW_MAX", "Expr", "expression", "regex_of"]


@dataclass(frozen=True, slots=True)
class Expr:
    """One Hyperscan expression.

    Attributes:
        source: the expression (Hyperscan syntax).
        exact: a match ends on a line exactly when the original pattern matches that line;
            otherwise the expression is a superset (prefilter mode) or only a hint.
    """

    source: bytes
    exact: bool
    lead: bytes = b""
    lead_ic: bool = False
    width: int = -1
    why: str = ""


#: Leads shorter than this are not worth a pass of their own (see :class:`LineFinder`).
LEAD_MIN = 3
#: Nor are windows wider than this.
WINDOW_MAX = 4096


class _Sre:
    """The private ``re`` parser and its opcodes (stable from 3.11 on), looked up once."""

    def __init__(self) -> None:
        self.parser: Any = importlib.import_module("re._parser")
        self.c: Any = importlib.import_module("re._constants")


_SRE: _Sre | None = None


def _sre() -> _Sre:
    global _SRE
    if _SRE is None:
        _SRE = _Sre()
    return _SRE


_DIGIT = frozenset(range(48, 58))
_WORD = _DIGIT | frozenset(range(65, 91)) | frozenset(range(97, 123)) | {95}
_SPACE = frozenset({9, 10, 11, 12, 13, 32})
_ALL = frozenset(range(256))


def _fold(chars: frozenset[int]) -> frozenset[int]:
    """ASCII case folding, as a bytes ``re`` with IGNORECASE does it."""
    extra = {c ^ 0x20 for c in chars if 65 <= c <= 90 or 97 <= c <= 122}
    return chars | extra


def _class(chars: frozenset[int]) -> bytes:
    """A byte set as a Hyperscan class (``[\\x41-\\x5a]``), the newline always left out."""
    chars = chars - {10}
    if not chars:
        raise _Never
    if len(chars) == 1:
        return b"\\x%02x" % next(iter(chars))
    out = [b"["]
    run: list[int] = []
    for c in sorted(chars):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(_range(run[0], run[-1]))
        run = [c]
    out.append(_range(run[0], run[-1]))
    out.append(b"]")
    return b"".join(out)


def _range(a: int, b: int) -> bytes:
    if a == b:
        return b"\\x%02x" % a
    return b"\\x%02x-\\x%02x" % (a, b)


class _Never(Exception):
    """A class with no byte left: the pattern part can never match on one line."""


class _Writer:
    """Writes a parsed ``re`` pattern in Hyperscan syntax; ``exact`` drops to False for a superset."""

    def __init__(self) -> None:
        self.exact = True
        self.why = ""  # why not exact: the first construct Hyperscan only approximates
        self.anchored = False  # an anchor or word boundary: a match depends on its context
        self.s = _sre()

    def not_exact(self, why: str) -> None:
        """The expression becomes a superset of the pattern, for this reason."""
        self.exact = False
        self.why = self.why or why

    def seq(self, items: Any, ic: bool) -> bytes:
        return b"".join(self.item(op, av, ic) for op, av in items)

    def chars_of(self, items: Any, ic: bool) -> frozenset[int]:
        c = self.s.c
        chars: set[int] = set()
        negate = False
        for op, av in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                chars.add(av)
            elif op is c.RANGE:
                chars.update(range(av[0], av[1] + 1))
            elif op is c.CATEGORY:
                chars |= self.category(av)
            else:
                raise ValueError(f"unsupported class item {op}")
        got = frozenset(c for c in chars if c < 256)
        if ic:
            got = _fold(got)
        return _ALL - got if negate else got

    def category(self, cat: Any) -> frozenset[int]:
        c = self.s.c
        table = {
            c.CATEGORY_DIGIT: _DIGIT,
            c.CATEGORY_NOT_DIGIT: _ALL - _DIGIT,
            c.CATEGORY_WORD: _WORD,
            c.CATEGORY_NOT_WORD: _ALL - _WORD,
            c.CATEGORY_SPACE: _SPACE,
            c.CATEGORY_NOT_SPACE: _ALL - _SPACE,
        }
        if cat not in table:
            raise ValueError(f"unsupported category {cat}")
        return table[cat]

    def item(self, op: Any, av: Any, ic: bool) -> bytes:
        c = self.s.c
        if op is c.LITERAL:
            if av == 10:
                raise _Never  # one line never holds a newline
            return _class(_fold(frozenset({av})) if ic else frozenset({av}))
        if op is c.NOT_LITERAL:
            return _class(_ALL - (_fold(frozenset({av})) if ic else frozenset({av})))
        if op is c.ANY:
            return _class(_ALL)
        if op is c.IN:
            return _class(self.chars_of(av, ic))
        if op is c.CATEGORY:
            return _class(self.category(av))
        if op is c.BRANCH:
            alts = []
            for alt in av[1]:
                with contextlib.suppress(_Never):  # an alternative no line can hold is dropped
                    alts.append(self.seq(alt, ic))
            if not alts:
                raise _Never
            return b"(?:" + b"|".join(alts) + b")"
        if op is c.SUBPATTERN:
            group, add, delete, sub = av
            if add & re.IGNORECASE:
                ic = True
            if delete & re.IGNORECASE:
                ic = False
            return (b"(" if group is not None else b"(?:") + self.seq(sub, ic) + b")"
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) or op is getattr(c, "POSSESSIVE_REPEAT", None):
            if op is not c.MAX_REPEAT and op is not c.MIN_REPEAT:
                self.not_exact("uses a possessive repeat (*+, ++, ?+)")  # possessive: the greedy repeat is a superset
            lo, hi, sub = av
            try:
                body = b"(?:" + self.seq(sub, ic) + b")"
            except _Never:
                if lo == 0:
                    return b""  # what no line holds, repeated zero times
                raise
            if hi == c.MAXREPEAT:
                quant = b"*" if lo == 0 else b"+" if lo == 1 else b"{%d,}" % lo
            elif lo == 0 and hi == 1:
                quant = b"?"
            elif lo == hi:
                quant = b"{%d}" % lo
            else:
                quant = b"{%d,%d}" % (lo, hi)
            return body + quant
        if op is c.AT:
            self.anchored = True
            if av in (c.AT_BEGINNING, c.AT_BEGINNING_LINE, c.AT_BEGINNING_STRING):
                return b"^"
            if av in (c.AT_END, c.AT_END_LINE, c.AT_END_STRING):
                return b"$"
            if av is c.AT_BOUNDARY:
                return b"\\b"
            if av is c.AT_NON_BOUNDARY:
                return b"\\B"
            raise ValueError(f"unsupported anchor {av}")
        if op is c.GROUPREF:
            self.not_exact("uses a back-reference (\\1)")
            return b"\\%d" % av
        if op in (c.ASSERT, c.ASSERT_NOT):
            self.not_exact("uses look-around ((?=, (?!, (?<=, (?<!)")
            direction, sub = av
            head = {(c.ASSERT, 1): b"(?=", (c.ASSERT, -1): b"(?<=", (c.ASSERT_NOT, 1): b"(?!"}
            return head.get((op, direction), b"(?<!") + self.seq(sub, ic) + b")"
        if op is getattr(c, "ATOMIC_GROUP", None):
            self.not_exact("uses an atomic group ((?>...))")
            return b"(?:" + self.seq(av, ic) + b")"
        if op is c.GROUPREF_EXISTS:
            self.not_exact("uses a conditional group ((?(1)...))")
            _group, yes, no = av
            return b"(?:" + self.seq(yes, ic) + b"|" + (self.seq(no, ic) if no else b"") + b")"
        raise ValueError(f"unsupported construct {op}")


def expression(pattern: bytes, ignorecase: bool) -> Expr | None:
    """A bytes regex (``re`` syntax) as a Hyperscan expression over raw lines.

    Returns None when the pattern can never match within one line (it needs a newline
    that a line cannot hold). Raises ValueError for a construct not written here.
    """
    s = _sre()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = s.parser.parse(pattern, re.IGNORECASE if ignorecase else 0)
    ic = bool(int(parsed.state.flags) & re.IGNORECASE)
    w = _Writer()
    items = list(parsed)
    try:
        src = w.seq(items, ic)
    except _Never:
        return None
    lead, width = b"", -1
    if w.exact and not w.anchored:
        lead = bytes(av for op, av in _leading(items, s.c.LITERAL))
        hi = parsed.getwidth()[1]
        if len(lead) >= LEAD_MIN and 10 not in lead and hi <= WINDOW_MAX:
            width = int(hi)
        else:
            lead = b""
    return Expr(src, w.exact, lead, ic and bool(lead), width, w.why)


def _leading(items: list[Any], literal: Any) -> list[Any]:
    """The leading run of plain literal items of a parsed pattern."""
    out = []
    for op, av in items:
        if op is not literal or av > 255:
            break
        out.append((op, av))
    return out


def regex_of(pattern: str, ignorecase: bool) -> Expr | None:
    """The Hyperscan expression of a user regex (``re`` syntax, over raw UTF-8 bytes)."""
    return expression(pattern.encode("utf-8"), ignorecase)
