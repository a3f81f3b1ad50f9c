"""The query language: parse a query, validate it, and describe it (no I/O).

See :data:`QUERY_HELP`. A query is an AND of groups, each an OR of terms; a term is a word,
a ``"phrase"``, a ``/regex/`` or a ``field:value`` filter, maybe negated (the parsed types are
in :mod:`.querymodel`). Each text term and filter carries the Hyperscan expressions that find
its candidate lines (:mod:`.matcher`); the driver is the group whose expressions find lines best.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Literal

from musetui.core.search.encodings import encodings
from musetui.core.search.matcher import Expr, TermRegex, expression, regex_of
from musetui.core.search.querymodel import (
    FIELDS,
    HAS_VALUES,
    ITEM_KINDS,
    REGEX_LINE_CAP,
    SNIPPET_MAX,
    FieldFilter,
    Query,
    QueryError,
    Term,
    TextTerm,
)
from musetui.core.search.timeterms import time_patterns, time_window

__all__ = [
    "FIELDS",
    "QUERY_HELP",
    "REGEX_LINE_CAP",
    "SNIPPET_MAX",
    "FieldFilter",
    "Query",
    "QueryError",
    "Term",
    "TextTerm",
    "parse_query",
]

QUERY_HELP: str = """\
Search syntax
-------------
  foo bar            lines matching foo AND bar (terms are ANDed)
  foo bar|baz        foo AND (bar OR baz): | binds tighter than AND
  "exact phrase"     a phrase; \\" and \\\\ escape inside quotes
  /rs_[0-9a-f]{50}/  a regular expression (Python re, over the raw line)
  -term              negation: lines NOT matching term (also -field:value)
Smart case: a word, phrase or regex is case-insensitive unless it has an uppercase letter.
Words and phrases find text as items show it, whatever its JSON escaping. A date or UTC time
(2026-09-01T22:01:03) also finds ids and tokens whose decoded time falls in it.

Filters (a | inside the value means OR: kind:reasoning|tool_call)
  provider:openai    attributed provider      host:azure        attributed host (or none)
  model:avocado*     declared model (glob)     format:codex      transcript format
  flag:outlier       attribution flag         session:019a      session id prefix
  path:*/subagents/* file path (glob; plain text: substring)
  kind:reasoning     item kind: message reasoning tool_call tool_result meta usage event summary
  role:assistant     item role                id:rs_*           an item id (glob)
  has:encrypted      encrypted reasoning or a Fernet token      has:signature  a signature value
  after:2026-09-01   item time >= (date or ISO time, UTC)       before:2026-09-02  item time <
provider:, host: and flag: need the attribution scan; the others never read a skipped session.
Every query runs in linear time (Hyperscan), (a+)+$ included; a regex that needs
backtracking (back-references, look-arounds, atomic groups, possessive repeats) is refused.
A query with only filters lists every item that passes. An HTTP capture whose bodies are
stored base64 (VCR !!binary) is searched exchange by exchange, as its items show it.
"""

# ---------------------------------------------------------------------------------------------
# Parsing

# ---------------------------------------------------------------------------------------------

_FIELD_RE = re.compile(r"([A-Za-z]+):")
_OR = object()
#: How text terms treat case (see :func:`parse_query`).
CaseMode = Literal["smart", "match", "ignore"]
#: The case mode and the regex-words switch of the parse under way.
_OPTIONS: ContextVar[tuple[CaseMode, bool]] = ContextVar("_OPTIONS", default=("smart", False))


def parse_query(text: str, *, case: CaseMode = "smart", regex_words: bool = False) -> Query:
    """Parse a query; raises :class:`QueryError` (and nothing else) when it is not valid.

    Args:
        text: the query, e.g. ``'provider:openai has:encrypted rs_ -"hello world"'``.
        case: ``smart`` (a word, phrase or regex with an uppercase letter matches case),
            ``match`` (every one matches case) or ``ignore`` (none does).
        regex_words: bare words are regular expressions (as ``/…/`` would make them).

    Returns:
        The parsed :class:`Query`.
    """
    if not isinstance(text, str):
        raise QueryError("the query must be text")
    token = _OPTIONS.set((case, regex_words))
    try:
        return _parse(text)
    except QueryError:
        raise
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise QueryError(f"query too complex: {type(exc).__name__}") from exc
    except Exception as exc:  # a bug must not crash the caller with a raw traceback
        raise QueryError(f"cannot parse query: {type(exc).__name__}: {_reason(exc)}") from exc
    finally:
        _OPTIONS.reset(token)


def _case_sensitive(has_upper: bool) -> bool:
    """Whether a text term matches case, under the parse's case mode (smart: ``has_upper``)."""
    case = _OPTIONS.get()[0]
    return has_upper if case == "smart" else case == "match"


def _parse(text: str) -> Query:
    if len(text) > 10_000:
        raise QueryError("query too long (over 10,000 characters)")
    tokens = _tokenize(text)
    groups: list[list[Term]] = []
    expect_term = True
    joined = False
    for tok in tokens:
        if tok is _OR:
            if expect_term:
                raise QueryError("'|' needs a term on both sides")
            expect_term = True
            joined = True
            continue
        assert isinstance(tok, Term)
        if joined and groups:
            groups[-1].append(tok)
        else:
            groups.append([tok])
        expect_term = False
        joined = False
    if joined or (tokens and expect_term):
        raise QueryError("'|' needs a term on both sides")
    if not groups:
        raise QueryError("empty query: give a word, a phrase, a /regex/ or a field:value filter")
    frozen = tuple(tuple(g) for g in groups)
    return Query(text, frozen, _pick_driver(frozen))


def _tokenize(text: str) -> list[object]:
    out: list[object] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == "|":
            out.append(_OR)
            i += 1
            continue
        negated = False
        if c == "-" and i + 1 < n and not text[i + 1].isspace() and text[i + 1] != "|":
            negated = True
            i += 1
            c = text[i]
        if c == '"':
            value, i = _read_quoted(text, i)
            if value == "":
                raise QueryError('empty phrase ""')
            out.append(Term(_literal_term("phrase", value), negated))
            continue
        if c == "/":
            end = _regex_end(text, i)
            if end is not None and end > i + 1:
                out.append(Term(_regex_term(text[i + 1 : end]), negated))
                i = end + 1
                continue
        m = _FIELD_RE.match(text, i)
        if m is not None:
            name = m.group(1).lower()
            if name not in FIELDS:
                raise QueryError(
                    f"unknown field '{m.group(1)}:' (known: {', '.join(FIELDS)}); "
                    "quote the term to search for it as text"
                )
            values, i = _read_values(text, m.end(), name)
            out.append(Term(_field_filter(name, values), negated))
            continue
        j = i
        while j < n and not text[j].isspace() and text[j] != "|":
            j += 1
        word = text[i:j]
        out.append(Term(_regex_term(word) if _OPTIONS.get()[1] else _literal_term("word", word), negated))
        i = j
    return out


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """Read a ``"…"`` phrase starting at ``text[i] == '"'``; returns (value, index after it)."""
    buf: list[str] = []
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n and text[j + 1] in '"\\':
            buf.append(text[j + 1])
            j += 2
            continue
        if c == '"':
            return "".join(buf), j + 1
        buf.append(c)
        j += 1
    raise QueryError(f"unterminated quote starting at column {i + 1}")


def _regex_end(text: str, i: int) -> int | None:
    """Index of the ``/`` closing a regex opened at ``i``: one followed by a space, ``|`` or the end."""
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "/" and (j + 1 == n or text[j + 1].isspace() or text[j + 1] == "|"):
            return j
        j += 1
    return None


def _read_values(text: str, i: int, name: str) -> tuple[list[str], int]:
    """Read a filter value (``a|b|"c d"``) starting at ``i``; returns (values, index after)."""
    values: list[str] = []
    n = len(text)
    while True:
        if i < n and text[i] == '"':
            value, i = _read_quoted(text, i)
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] != "|":
                j += 1
            value, i = text[i:j], j
        if value == "":
            raise QueryError(f"empty value for {name}:")
        values.append(value)
        if i < n and text[i] == "|" and i + 1 < n and not text[i + 1].isspace():
            i += 1
            continue
        return values, i


# ---------------------------------------------------------------------------------------------
# Text terms
# ---------------------------------------------------------------------------------------------


def _has_upper(text: str) -> bool:
    return any(c.isupper() for c in text)


def _literal_term(kind: Literal["word", "phrase"], value: str) -> TextTerm:
    cs = _case_sensitive(_has_upper(value))
    flags = 0 if cs else re.IGNORECASE
    try:
        matcher = re.compile(re.escape(value), flags)
    except (re.error, ValueError, OverflowError) as exc:  # pragma: no cover - escape() is total
        raise QueryError(f"cannot search for {value!r}: {exc}") from exc
    plain, raw_src, enc_src = encodings(value, cs)
    raw = re.compile(raw_src, flags)
    exprs: list[Expr] = []
    literal: bytes | None = None
    encoded: re.Pattern[str] | None = None
    if plain is not None:
        literal = plain if cs else plain.lower()
        score = float(len(literal))
    else:
        encoded = re.compile(enc_src, flags)
        score = float(len(value.encode("utf-8", "replace")))
    found = expression(raw_src, not cs)
    if found is not None:
        exprs.append(found)
    window = time_window(value)
    if window is not None:
        for pat in time_patterns(*window):
            hint = expression(pat.pattern, False)
            if hint is not None:
                exprs.append(Expr(hint.source, False))
        score = min(score, 3.0)
    return TextTerm(
        kind=kind,
        text=value,
        case_sensitive=cs,
        matcher=matcher,
        raw=raw,
        literal=literal,
        window=window,
        exprs=tuple(exprs),
        encoded_matcher=encoded,
        score=score,
    )


def _regex_term(pattern: str) -> TextTerm:
    shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    cs = _case_sensitive(_regex_has_upper(pattern))
    flags = 0 if cs else re.IGNORECASE
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarnings about nested sets are not errors
            matcher = re.compile(pattern, flags)
        bpattern = pattern.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise QueryError(f"invalid regex /{shown}/: not valid Unicode") from exc
    except (re.error, ValueError, OverflowError, RecursionError, TypeError, IndexError) as exc:
        raise QueryError(f"invalid regex /{shown}/: {_reason(exc)}") from exc
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = re.compile(bpattern, flags | re.MULTILINE)
    except (re.error, ValueError, OverflowError, RecursionError, TypeError, IndexError) as exc:
        raise QueryError(f"invalid regex /{shown}/: {_reason(exc)} (regexes run over raw bytes)") from exc
    try:
        expr = regex_of(pattern, not cs)
    except (re.error, ValueError, OverflowError, RecursionError, TypeError, IndexError) as exc:
        raise QueryError(f"invalid regex /{shown}/: {_reason(exc)}") from exc
    regex = TermRegex(expr, raw, matcher)
    if expr is not None and not regex.exact:
        why = expr.why if not expr.exact else "is too large for the linear-time engine"
        raise QueryError(
            f"/{shown}/ {why}: every regex runs in linear time (Hyperscan), so constructs that "
            "need backtracking are refused; a search could otherwise run for hours"
        )
    exprs = (expr,) if expr is not None and regex.prefilter else ()
    return TextTerm(
        kind="regex",
        text=pattern,
        case_sensitive=cs,
        matcher=matcher,
        raw=raw,
        exprs=exprs,
        score=2.0,
        regex=regex,
    )


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


_ESCAPE_RE = re.compile(r"\\.", re.DOTALL)


def _regex_has_upper(pattern: str) -> bool:
    """Smart case for a regex: an uppercase letter outside escapes (``\\S``, ``\\W`` don't count)."""
    return _has_upper(_ESCAPE_RE.sub("", pattern))


#: Raw hints for ``has:``: an item can be "encrypted" (or carry a signature) only if its line
#: holds one of these. Checked against every adapter (tests compare with the slow path).
#: "encrypted" is decided case-sensitively by the adapters: a Fernet token, an
#: ``encrypted…`` key or value, Gemini's ``thoughtSignature``, a compaction item. Hyperscan
#: expressions (hints only: the filter itself decides).
_HAS_HINTS: dict[str, tuple[Expr, ...]] = {
    "encrypted": tuple(Expr(n, False) for n in (b"gAAAAA", b"encrypt", b"Signature", b"compaction")),
    "signature": (Expr(b"[Ss][Ii][Gg][Nn][Aa][Tt][Uu][Rr][Ee]", False),),
}


def _parse_instant(name: str, value: str) -> float:
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise QueryError(f"invalid date for {name}: {value!r} (use 2026-09-01 or 2026-09-01T22:01:03Z)") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        return dt.timestamp()
    except (OverflowError, ValueError, OSError) as exc:
        raise QueryError(f"invalid date for {name}: {value!r}") from exc


def _check_known(name: str, values: list[str], known: Sequence[str]) -> None:
    for v in values:
        if v not in known:
            raise QueryError(f"unknown {name} '{v}' (known: {', '.join(known)})")


def _glob_literal(glob: str) -> str:
    """The longest run of plain characters in a glob (what every match contains)."""
    parts = re.split(r"\[[^\]]*\]?|[*?]", glob)
    return max(parts, key=len) if parts else ""


def _field_filter(name: str, raw_values: list[str]) -> FieldFilter:
    from musetui.core.model import FLAGS, HOSTS, PROVIDERS

    source = "|".join(
        ('"' + v + '"') if (not v or any(ch.isspace() or ch == "|" for ch in v)) else v for v in raw_values
    )
    values = [v.lower() for v in raw_values]
    cs = False
    times: tuple[float, ...] = ()
    exprs: list[Expr] = []
    score = 0.0
    if name == "provider":
        _check_known(name, values, PROVIDERS)
    elif name == "host":
        _check_known(name, values, (*HOSTS, "none"))
    elif name == "format":
        from musetui.core.sources.registry import NAMES

        _check_known(name, values, NAMES)
    elif name == "flag":
        _check_known(name, values, FLAGS)
    elif name == "kind":
        _check_known(name, values, ITEM_KINDS)
    elif name == "has":
        _check_known(name, values, HAS_VALUES)
        for v in dict.fromkeys(values):
            exprs.extend(_HAS_HINTS[v])
        score = 1.0
    elif name in ("after", "before"):
        times = tuple(_parse_instant(name, v) for v in raw_values)
    elif name in ("id", "path"):
        cs = any(_has_upper(v) for v in raw_values)
        if cs:
            values = list(raw_values)
        if name == "id":
            lits = [_glob_literal(v) for v in values]
            if all(len(x.encode("utf-8")) >= 2 and x.isascii() for x in lits):
                for lit in dict.fromkeys(lits):
                    needle = lit.encode("ascii")
                    hint = expression(re.escape(needle), not cs)
                    if hint is not None:
                        exprs.append(Expr(hint.source, False))
                score = float(min(len(x) for x in lits))
    return FieldFilter(
        name=name,
        values=tuple(values),
        case_sensitive=cs,
        times=times,
        source=source,
        exprs=tuple(exprs),
        score=score,
    )


def _pick_driver(groups: tuple[tuple[Term, ...], ...]) -> int:
    """The group whose raw hints find candidate lines best (-1: none can)."""
    best, best_score = -1, -1.0
    for gi, group in enumerate(groups):
        if not all(not t.negated and t.atom.exprs for t in group):
            continue
        score = min(t.atom.score for t in group)
        if any(isinstance(t.atom, FieldFilter) for t in group):
            score = min(score, 2.5)  # a text term of similar length is rarer than a hint
        if score > best_score:
            best, best_score = gi, score
    return best


# ---------------------------------------------------------------------------------------------
# Hits
# ---------------------------------------------------------------------------------------------
