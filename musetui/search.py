"""Search every session: the query language and its execution.

Query language
==============
See :data:`QUERY_HELP` (also shown by the README and the TUI help screen). In short:

* ``foo bar``: every term must match (AND); ``foo bar|baz`` is foo AND (bar OR baz): ``|``
  binds tighter than the implicit AND. ``-term`` negates a term.
* Words and ``"quoted phrases"`` are literals, ``/regex/`` is a Python regular expression;
  all are smart-case (case-insensitive unless they contain an uppercase letter).
* ``field:value`` filters. Session level (decided from the index, so sessions that fail them
  are never read): ``provider: host: model: format: flag: session: path:``. Item level:
  ``kind: role: id: has: after: before:``. ``|`` inside a value is OR.

What a term matches
===================
A hit is one physical line of a session file (like ``rg``), with the item built from its record.

* A word or phrase matches the raw line in any of its JSON encodings (plain, ``\\"``-escaped,
  ``\\uXXXX``-escaped, escaped twice for JSON held inside a JSON string), so it finds the text as
  the item shows it, not only as the file spells it.
* A ``/regex/`` matches the raw line bytes, exactly as ``rg`` would (``\\w``, ``\\d``, ``\\s`` are ASCII).
* A word or phrase that is a UTC date or time (``2026-09-01``, ``2026-09-01T22:01``,
  ``2026-09-01T22:01:03``, optional fraction and ``Z``) also matches the *decoded* time of a
  fingerprint: ids and tokens carry their time encoded (hex, base64, base58), never as text, so
  the time window is turned into byte patterns for OpenAI item ids, Fernet tokens, UUIDv7,
  Anthropic ``01…`` ids and ULIDs, and every candidate is confirmed by the decoders
  (:func:`musetui.fingerprints.extract.walk_record`). Markers, store bytes and conversation keys
  are substrings of the raw id already (``8196`` finds the ``rs_`` id whose marker is 8196).
* The ``field`` of a hit is the JSON path of the first value (or key) the term matches
  (``payload.event.text``, ``output[1].call_id``, ``…arguments<json>.path`` inside JSON held in a
  string), or ``raw`` when only the raw line matched (a match across JSON syntax).
* A query with no positive text term (``kind:reasoning``, ``has:encrypted``) reports every item
  that passes, on the line of its record (for a pretty-printed JSON document, the line of the
  value that satisfied the filter, or of the item's id).

Execution and speed
===================
``run_search`` walks the roots itself (the same candidate rules as :mod:`musetui.index`) and
reads each file once. The most selective term group drives the search: one pass over the whole
file buffer, never line by line. A case-sensitive literal is a ``bytes.find`` loop; a
case-insensitive one is a bytes regex that starts at a literal *anchor* (its longest run
without letters, or its rarest letter in both cases) and checks the rest around it, because
``re`` scans for a leading literal about as fast as ``bytes.find`` while ``re.IGNORECASE``
alone is ten times slower (a word of common letters only, ``the``, is searched in one lowered
copy of the buffer instead). A regex is found through a literal every match must contain, then
run on that line only. Match offsets become line numbers by counting newlines; only the
matching lines are parsed (orjson), to check the other terms, the item-level filters and to
name the field. Filters that have a sound raw hint (``id:`` globs, ``has:``) drive the search
the same way. Big trees are split into directories that a process pool walks and searches;
hits always come sorted by path (as strings, like ``scan``), then line.

Only sessions are searched: a file with no JSON record in it (binary, every line broken) is
skipped, as the index skips it; the malformed lines of a session are searched like the others.

Sessions are *not* attributed on this path: the format and session id of a file with hits come
from its first records (the same sniffing and observers the scanner uses). Only a query with an
attribution filter (``provider:``, ``host:``, ``flag:``) runs the full index scan first, and then
reads only the sessions that pass. :func:`search_sessions` searches summaries the caller already
has (the TUI) and never scans.

Bounding regexes
================
Python's ``re`` backtracks and cannot be interrupted, so a regex is bounded in two ways:

1. Shapes known to explode are rejected with a :class:`QueryError` before anything is read: a
   variable quantifier nested in a repeated group when what it matches can also follow it
   (``(a+)+``, ``(a*)*``, ``(.*a){12}``), and a repeated alternation whose branches can start with
   the same character (``(a|a)*``, ``(a|aa)+``). ``(\\d+\\.)+`` stays allowed (the ``.`` separates
   the iterations); possessive quantifiers (``a++``) and atomic groups (``(?>…)``) are always safe.
2. A regex never sees more than one line, and at most :data:`REGEX_LINE_CAP` bytes (1 MiB) of
   it: regexes that can match a newline (or use ``\\A``/``\\Z``) run line by line, the others over
   the whole buffer where every match attempt stops at the end of its line, and files that hold
   a line longer than the cap are searched line by line with each line cut at the cap. What
   remains is polynomial backtracking (``.*a.*b`` on a line full of ``a``), bounded by the cap.
   Lines searched only in part are counted in :attr:`SearchRun.long_lines` and noted.
Literals (words, phrases, their JSON encodings, encoded times) need no bound: their patterns
are fixed strings or fixed-width classes.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import heapq
import importlib
import os
import re
import stat
import threading
import warnings
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, get_args

import orjson

from musetui.model import ItemKind
from musetui.walk import candidate

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from musetui.fingerprints.types import Decoded
    from musetui.model import Item, SessionSummary

__all__ = [
    "FIELDS",
    "QUERY_HELP",
    "REGEX_LINE_CAP",
    "SNIPPET_MAX",
    "FieldFilter",
    "Hit",
    "Query",
    "QueryError",
    "SearchRun",
    "Term",
    "TextTerm",
    "parse_query",
    "run_search",
    "search_sessions",
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
Regexes that can take exponential time ((a+)+, (a|a)*) are refused; lines are searched by a
regex up to 1 MiB. A query with only filters lists every item that passes.
"""

#: Longest part of one line a regex is run over (see "Bounding regexes" above).
REGEX_LINE_CAP = 1024 * 1024
#: Longest snippet, in characters.
SNIPPET_MAX = 200
#: Session-level fields: decided per session from the index, before any file is read.
SESSION_FIELDS: tuple[str, ...] = ("provider", "host", "model", "format", "flag", "session", "path")
#: Item-level fields: decided per item.
ITEM_FIELDS: tuple[str, ...] = ("kind", "role", "id", "has", "after", "before")
FIELDS: tuple[str, ...] = (
    "provider",
    "host",
    "model",
    "format",
    "kind",
    "role",
    "id",
    "flag",
    "has",
    "after",
    "before",
    "session",
    "path",
)
ATTRIBUTION_FIELDS = frozenset({"provider", "host", "flag"})
ITEM_KINDS: tuple[str, ...] = get_args(ItemKind)
HAS_VALUES: tuple[str, ...] = ("encrypted", "signature")
#: Fewer files than this are searched in-process (a pool costs more than it saves).
PARALLEL_MIN_FILES = 256
#: ... and fewer bytes than this, when the sizes are known.
PARALLEL_MIN_BYTES = 16 * 1024 * 1024

_GLOB_CHARS = frozenset("*?[")


class QueryError(ValueError):
    """A query that cannot be parsed or run; the message says why, on one line."""


# ---------------------------------------------------------------------------------------------
# The parsed query
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Finder:
    """One way to find candidate lines in a file buffer.

    ``find``: an exact literal, searched with ``bytes.find`` (over a lowered copy of the
    buffer when ``lower``: case-insensitive literals whose letters are all common).
    ``re``: bytes regexes that never cross a newline, searched over the whole buffer; a line
    is a candidate when any of them matches.
    ``regex``: a user regex (``pattern``), found through a literal every match contains
    (``needle``, or ``patterns`` when it is case-insensitive) and then run on that line only;
    or run line by line (``line_mode``).
    """

    mode: Literal["find", "re", "regex"]
    needle: bytes = b""
    lower: bool = False
    patterns: tuple[re.Pattern[bytes], ...] = ()
    pattern: re.Pattern[bytes] | None = None
    line_mode: bool = False
    #: how far past the start of the hint's occurrence the search reports it (an anchored
    #: case-insensitive pattern reports its anchor, inside the literal)
    anchor_at: int = 0
    #: ``regex`` only: every match of ``pattern`` starts with the hint, so it is tried at
    #: each occurrence (``match``) instead of over the whole line (``search``)
    leads: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class TextTerm:
    """A word, a quoted phrase or a ``/regex/``.

    Attributes:
        kind: ``word``, ``phrase`` or ``regex``.
        text: the word, the phrase (unescaped) or the regex source.
        case_sensitive: smart case: True when the text has an uppercase letter.
        matcher: the term over decoded text (JSON values, snippets).
        raw: the term over raw line bytes (every JSON encoding, for literals).
        literal: the plain-ASCII fast path (lowercased when case-insensitive), if it applies.
        window: for a date/time term, the UTC window ``[start, end)`` in unix seconds.
    """

    kind: Literal["word", "phrase", "regex"]
    text: str
    case_sensitive: bool
    matcher: re.Pattern[str]
    raw: re.Pattern[bytes]
    literal: bytes | None = None
    window: tuple[float, float] | None = None
    finders: tuple[_Finder, ...] = ()
    encoded_matcher: re.Pattern[str] | None = None  # the raw encodings, over decoded raw text
    score: float = 0.0

    @property
    def lower(self) -> bool:
        """True when the literal fast path searches a lowered buffer."""
        return (
            not self.case_sensitive
            and self.literal is not None
            and self.literal != self.literal.upper()
        )

    def describe(self) -> str:
        """The term as it would be written."""
        if self.kind == "regex":
            return f"/{self.text}/"
        if self.kind == "phrase":
            return '"' + self.text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return self.text


@dataclass(frozen=True, slots=True, eq=False)
class FieldFilter:
    """A ``field:value`` filter; ``values`` are ORed.

    Attributes:
        name: the field (one of :data:`FIELDS`).
        values: normalised values (lowercase unless ``case_sensitive``).
        case_sensitive: smart case for ``id:`` and ``path:`` globs.
        times: for ``after:``/``before:``, the instants (unix seconds) of ``values``.
        source: the values as written.
    """

    name: str
    values: tuple[str, ...]
    case_sensitive: bool = False
    times: tuple[float, ...] = ()
    source: str = ""
    finders: tuple[_Finder, ...] = ()
    score: float = 0.0

    @property
    def session_level(self) -> bool:
        """True for filters decided per session (from the index)."""
        return self.name in SESSION_FIELDS

    def describe(self) -> str:
        """The filter as it would be written."""
        return f"{self.name}:{self.source}"


@dataclass(frozen=True, slots=True)
class Term:
    """One term of a query: a text term or a filter, maybe negated."""

    atom: TextTerm | FieldFilter
    negated: bool = False

    def describe(self) -> str:
        """The term as it would be written."""
        return ("-" if self.negated else "") + self.atom.describe()


@dataclass(frozen=True, slots=True, eq=False)
class Query:
    """A parsed query: an AND of groups, each an OR of terms.

    Attributes:
        source: the text it was parsed from.
        groups: the AND of ORs.
        driver: index of the group whose raw hints drive the search, or -1 when every
            item of every session that passes the session filters must be looked at.
    """

    source: str
    groups: tuple[tuple[Term, ...], ...]
    driver: int = -1
    #: groups made only of session-level filters (decided before a file is read)
    session_only: tuple[tuple[Term, ...], ...] = field(init=False, default=())
    #: filters need every record observed (declared models, session times)
    needs_full_session: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        only = tuple(
            g
            for g in self.groups
            if all(isinstance(t.atom, FieldFilter) and t.atom.session_level for t in g)
        )
        object.__setattr__(self, "session_only", only)
        object.__setattr__(
            self, "needs_full_session", bool(self.field_names() & {"model", "after", "before"})
        )

    @property
    def needs_attribution(self) -> bool:
        """True when a filter needs attribution verdicts (provider, host, flag)."""
        return any(
            isinstance(t.atom, FieldFilter) and t.atom.name in ATTRIBUTION_FIELDS
            for t in self.terms
        )

    @property
    def terms(self) -> list[Term]:
        """Every term, in query order."""
        return [t for g in self.groups for t in g]

    @property
    def positive_text(self) -> list[TextTerm]:
        """The text terms that are not negated (what hits are highlighted for)."""
        return [t.atom for t in self.terms if isinstance(t.atom, TextTerm) and not t.negated]

    def field_names(self) -> set[str]:
        """The filter fields the query uses."""
        return {t.atom.name for t in self.terms if isinstance(t.atom, FieldFilter)}

    def session_groups(self) -> list[tuple[Term, ...]]:
        """Groups made only of session-level filters (decidable before reading a file)."""
        return list(self.session_only)

    def describe(self) -> str:
        """A normalised rendering: ``a b|c -d``."""
        return " ".join("|".join(t.describe() for t in g) for g in self.groups)


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------

_FIELD_RE = re.compile(r"([A-Za-z]+):")
_OR = object()


def parse_query(text: str) -> Query:
    """Parse a query; raises :class:`QueryError` (and nothing else) when it is not valid.

    Args:
        text: the query, e.g. ``'provider:openai has:encrypted rs_ -"hello world"'``.

    Returns:
        The parsed :class:`Query`.
    """
    if not isinstance(text, str):
        raise QueryError("the query must be text")
    try:
        return _parse(text)
    except QueryError:
        raise
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise QueryError(f"query too complex: {type(exc).__name__}") from exc
    except Exception as exc:  # a bug must not crash the caller with a raw traceback
        raise QueryError(f"cannot parse query: {type(exc).__name__}: {_reason(exc)}") from exc


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
        out.append(Term(_literal_term("word", text[i:j]), negated))
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
    cs = _has_upper(value)
    flags = 0 if cs else re.IGNORECASE
    try:
        matcher = re.compile(re.escape(value), flags)
    except (re.error, ValueError, OverflowError) as exc:  # pragma: no cover - escape() is total
        raise QueryError(f"cannot search for {value!r}: {exc}") from exc
    plain, raw_src, enc_src = _encodings(value, cs)
    raw = re.compile(raw_src, flags)
    finders: list[_Finder] = []
    literal: bytes | None = None
    encoded: re.Pattern[str] | None = None
    if plain is not None:
        literal = plain if cs else plain.lower()
        finders.append(_literal_finder(literal, cs))
        score = float(len(literal))
    else:
        finders.append(_Finder("re", patterns=(raw,)))
        encoded = re.compile(enc_src, flags)
        score = float(len(value.encode("utf-8", "replace")))
    window = _time_window(value)
    if window is not None:
        finders.append(_Finder("re", patterns=tuple(_time_patterns(*window))))
        score = min(score, 3.0)
    return TextTerm(
        kind=kind,
        text=value,
        case_sensitive=cs,
        matcher=matcher,
        raw=raw,
        literal=literal,
        window=window,
        finders=tuple(finders),
        encoded_matcher=encoded,
        score=score,
    )


_LETTERS_RE = re.compile(rb"[A-Za-z]+")
_NON_LETTERS_RE = re.compile(rb"[^A-Za-z]+")
#: Approximate frequency (percent) of letters in English text: a rare letter is a fast anchor.
_LETTER_FREQ = dict(
    zip(
        b"etaoinshrdlcumwfgypbvkjxqz",
        (
            12.7,
            9.1,
            8.2,
            7.5,
            7.0,
            6.7,
            6.3,
            6.1,
            6.0,
            4.3,
            4.0,
            2.8,
            2.8,
            2.4,
            2.4,
            2.2,
            2.0,
            2.0,
            1.9,
            1.5,
            1.0,
            0.8,
            0.2,
            0.2,
            0.1,
            0.1,
        ),
        strict=True,
    )
)
#: Bytes found everywhere in JSON lines: useless alone as an anchor.
_COMMON_BYTES = frozenset(b" \"':,{}[]")


def _byte_weight(b: int) -> int:
    """How rare a byte is in JSON transcripts, roughly: 1 everywhere ... 3 rare."""
    if b in _COMMON_BYTES or b in b"etaoinsrhldcum_-./0123456789abcdef":
        return 1
    if 97 <= b <= 122:
        return 2
    return 3


def _rarity(run: bytes) -> int:
    """A literal's selectivity: longer and made of rarer bytes is better."""
    return sum(_byte_weight(b) for b in run)


def _literal_finder(literal: bytes, case_sensitive: bool) -> _Finder:
    """How to find a plain ASCII literal (already lowered when case-insensitive)."""
    if case_sensitive or literal == literal.upper():
        return _Finder("find", needle=literal)
    found = _ci_patterns(literal)
    if found is None:
        return _Finder("find", needle=literal, lower=True)
    return _Finder("re", patterns=found[0], anchor_at=found[1])


def _ci_patterns(needle: bytes) -> tuple[tuple[re.Pattern[bytes], ...], int] | None:
    """Case-insensitive search for a lowercase ASCII literal without lowering the buffer.

    ``re`` scans fast for a pattern that starts with a literal, so the pattern starts at an
    *anchor*: the needle's longest run without letters (``-1.3`` in ``avocado-1.3``), then
    checks the text before it with a lookbehind and the text after it, both case-insensitive.
    A needle of letters only is anchored on its rarest letter, in both cases (two patterns).
    Returns the patterns and the anchor's offset in the needle (a match starts there); None
    when every letter is common: lowering the buffer once is then cheaper.
    """
    best: tuple[int, int] | None = None
    for m in _NON_LETTERS_RE.finditer(needle):
        run = m.group()
        if all(b in _COMMON_BYTES for b in run):
            continue
        if best is None or _rarity(run) > _rarity(needle[best[0] : best[1]]):
            best = (m.start(), m.end())
    if best is not None:
        return (_anchored(needle, best[0], best[1], needle[best[0] : best[1]]),), best[0]
    letters = [(_LETTER_FREQ.get(c, 5.0), i) for i, c in enumerate(needle) if 97 <= c <= 122]
    freq, i = min(letters)
    if freq >= 6.0:
        return None
    ch = needle[i : i + 1]
    return (_anchored(needle, i, i + 1, ch), _anchored(needle, i, i + 1, ch.upper())), i


def _anchored(needle: bytes, start: int, end: int, anchor: bytes) -> re.Pattern[bytes]:
    pre, post = needle[:start], needle[end:]
    pat = re.escape(anchor)
    if pre:
        pat += b"(?<=(?i:" + re.escape(pre) + b")" + re.escape(anchor) + b")"
    if post:
        pat += b"(?i:" + re.escape(post) + b")"
    return re.compile(pat)


# JSON encodings of one character, beyond the character itself (UTF-8): what a JSON writer may
# emit for it, plain and escaped once more (JSON held inside a JSON string).
_SIMPLE_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "/": "\\/",
}
_SPECIAL = frozenset("\"\\<>&'") | frozenset(chr(c) for c in range(32)) | {"\x7f"}


def _u_escapes(c: str) -> list[str]:
    """``\\uXXXX`` spellings of ``c`` (a surrogate pair for astral characters)."""
    cp = ord(c)
    if cp > 0xFFFF:
        v = cp - 0x10000
        return [f"\\u{0xD800 + (v >> 10):04x}\\u{0xDC00 + (v & 0x3FF):04x}"]
    return [f"\\u{cp:04x}"]


def _char_variants(c: str) -> list[str]:
    """Every way ``c`` may be spelled in raw JSON (the first is the plain character)."""
    once: list[str] = []
    if c in _SIMPLE_ESCAPES:
        once.append(_SIMPLE_ESCAPES[c])
    if c in _SPECIAL or ord(c) > 0x7E:
        once.extend(_u_escapes(c))
    # Escaped once more: a JSON string inside a JSON string doubles every backslash.
    twice = [v.replace("\\", "\\\\") for v in once if "\\" in v]
    if c == '"':
        twice.append('\\\\\\"')
    out = [c, *once, *twice]
    seen: list[str] = []
    for v in out:
        if v not in seen:
            seen.append(v)
    return seen


def _encodings(value: str, case_sensitive: bool) -> tuple[bytes | None, bytes, str]:
    """The raw forms of a literal.

    Returns:
        (plain, bytes pattern, str pattern): ``plain`` is the UTF-8 literal when every
        character is printable ASCII with no JSON escape (the ``bytes.find`` fast path), else
        None; the patterns match any JSON spelling of the literal (bytes: over raw lines; str:
        over decoded raw text, for highlighting).
    """
    if all(32 <= ord(c) < 127 and c not in _SPECIAL for c in value):
        esc = re.escape(value)
        return value.encode("ascii"), esc.encode("ascii"), esc
    bparts: list[bytes] = []
    sparts: list[str] = []
    for c in value:
        forms = {c}
        if not case_sensitive and ord(c) > 0x7E:
            forms |= {f for f in (c.lower(), c.upper()) if len(f) == 1}
        variants: list[str] = []
        for f in sorted(forms):
            for v in _char_variants(f):
                if v not in variants:
                    variants.append(v)
        if len(variants) == 1:
            bparts.append(re.escape(variants[0].encode("utf-8", "surrogatepass")))
            sparts.append(re.escape(variants[0]))
            continue
        # Longest first, so that a longer escape is preferred to its prefix.
        variants.sort(key=len, reverse=True)
        balts = [_bytes_variant(v) for v in variants]
        bparts.append(b"(?:" + b"|".join(balts) + b")")
        sparts.append("(?:" + "|".join(_str_variant(v) for v in variants) + ")")
    return None, b"".join(bparts), "".join(sparts)


def _bytes_variant(v: str) -> bytes:
    """A regex for one spelling; the hex digits of ``\\u`` escapes match in either case."""
    if "\\u" not in v:
        return re.escape(v.encode("utf-8", "surrogatepass"))
    return re.sub(
        rb"[0-9a-f]",
        lambda m: b"[" + m.group() + m.group().upper() + b"]" if m.group().isalpha() else m.group(),
        re.escape(v.encode("ascii")),
    )


def _str_variant(v: str) -> str:
    if "\\u" not in v:
        return re.escape(v)
    return re.sub(
        r"[0-9a-f]",
        lambda m: "[" + m.group() + m.group().upper() + "]" if m.group().isalpha() else m.group(),
        re.escape(v),
    )


# ---------------------------------------------------------------------------------------------
# Regex terms: compile, refuse explosive shapes, find a prefilter literal
# ---------------------------------------------------------------------------------------------


def _regex_term(pattern: str) -> TextTerm:
    shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    cs = _regex_has_upper(pattern)
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
        raise QueryError(
            f"invalid regex /{shown}/: {_reason(exc)} (regexes run over raw bytes)"
        ) from exc
    info = _analyze_regex(pattern, flags, shown)
    pref = info.prefilter
    if pref is None:
        finder = _Finder("regex", pattern=raw, line_mode=info.line_mode)
    else:
        found = _literal_finder(pref, cs)
        finder = _Finder(
            "regex",
            needle=found.needle,
            lower=found.lower,
            patterns=found.patterns,
            pattern=raw,
            line_mode=info.line_mode,
            anchor_at=found.anchor_at,
            leads=info.lead.startswith(pref),
        )
    score = float(len(pref)) if pref else 0.5
    return TextTerm(
        kind="regex",
        text=pattern,
        case_sensitive=cs,
        matcher=matcher,
        raw=raw,
        finders=(finder,),
        score=score,
    )


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


_ESCAPE_RE = re.compile(r"\\.", re.DOTALL)


def _regex_has_upper(pattern: str) -> bool:
    """Smart case for a regex: an uppercase letter outside escapes (``\\S``, ``\\W`` don't count)."""
    return _has_upper(_ESCAPE_RE.sub("", pattern))


@dataclass(frozen=True, slots=True)
class _CharSet:
    """A set of code points, or its complement (``neg``)."""

    neg: bool
    chars: frozenset[int]

    def union(self, other: _CharSet) -> _CharSet:
        if not self.neg and not other.neg:
            return _CharSet(False, self.chars | other.chars)
        if self.neg and other.neg:
            return _CharSet(True, self.chars & other.chars)
        pos, neg = (other, self) if self.neg else (self, other)
        return _CharSet(True, neg.chars - pos.chars)

    def overlaps(self, other: _CharSet) -> bool:
        if not self.neg and not other.neg:
            return bool(self.chars & other.chars)
        if self.neg and other.neg:
            return True
        pos, neg = (other, self) if self.neg else (self, other)
        return bool(pos.chars - neg.chars)


_EMPTY = _CharSet(False, frozenset())
_ALL = _CharSet(True, frozenset())
_NEWLINE = _CharSet(False, frozenset({10}))
_DIGITS = frozenset(range(48, 58))
_WORD = frozenset(range(48, 58)) | frozenset(range(65, 91)) | frozenset(range(97, 123)) | {95}
_SPACE = frozenset({9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160})


@dataclass(frozen=True, slots=True)
class _RegexInfo:
    prefilter: bytes | None
    line_mode: bool
    #: the literal every match starts with (lowered when case-insensitive; may be empty)
    lead: bytes = b""


class _Sre:
    """The private ``re`` parser and its opcodes (stable from 3.11 on), looked up once."""

    def __init__(self) -> None:
        try:
            self.parser: Any = importlib.import_module("re._parser")
            c: Any = importlib.import_module("re._constants")
        except ImportError:  # pragma: no cover - Python < 3.11
            self.parser = importlib.import_module("sre_parse")
            c = importlib.import_module("sre_constants")
        self.c = c
        self.repeats = {c.MAX_REPEAT, c.MIN_REPEAT}
        self.possessive = getattr(c, "POSSESSIVE_REPEAT", None)
        self.atomic = getattr(c, "ATOMIC_GROUP", None)
        self.maxrepeat = c.MAXREPEAT


_SRE: _Sre | None = None


def _sre() -> _Sre:
    global _SRE
    if _SRE is None:
        _SRE = _Sre()
    return _SRE


def _analyze_regex(pattern: str, flags: int, shown: str) -> _RegexInfo:
    s = _sre()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = s.parser.parse(pattern, flags)
    except (re.error, ValueError, OverflowError, RecursionError, TypeError, IndexError) as exc:
        raise QueryError(f"invalid regex /{shown}/: {_reason(exc)}") from exc
    gflags = int(parsed.state.flags)
    an = _Analyzer(s, shown)
    try:
        an.check(list(parsed), gflags, _EMPTY, False)
        crosses = an.newline_or_anchor(list(parsed), gflags)
        prefilter = an.required_literal(list(parsed), gflags)
        lead = an.leading_literal(list(parsed), gflags)
    except RecursionError as exc:
        raise QueryError(f"regex /{shown}/ is nested too deeply") from exc
    return _RegexInfo(prefilter if prefilter and len(prefilter) >= 3 else None, crosses, lead)


class _Analyzer:
    """Walks an ``re`` parse tree: explosive shapes, newline reach, required literals."""

    def __init__(self, s: _Sre, shown: str) -> None:
        self.s = s
        self.c = s.c
        self.shown = shown

    # -- character sets ------------------------------------------------------------------------
    def _lit(self, code: int, flags: int) -> _CharSet:
        if flags & re.IGNORECASE:
            ch = chr(code)
            return _CharSet(False, frozenset({code, ord(ch.lower()[0]), ord(ch.upper()[0])}))
        return _CharSet(False, frozenset({code}))

    def _in(self, items: list[tuple[Any, Any]], flags: int) -> _CharSet:
        c = self.c
        acc = _EMPTY
        neg = False
        for op, av in items:
            if op is c.NEGATE:
                neg = True
            elif op is c.LITERAL:
                acc = acc.union(self._lit(av, flags))
            elif op is c.RANGE:
                lo, hi = av
                if hi - lo > 4096:
                    acc = _ALL
                else:
                    rng = _CharSet(False, frozenset(range(lo, hi + 1)))
                    if flags & re.IGNORECASE:
                        rng = _CharSet(
                            False,
                            frozenset(
                                x
                                for ch in map(chr, rng.chars)
                                for x in (ord(ch.lower()[0]), ord(ch.upper()[0]), ord(ch))
                            ),
                        )
                    acc = acc.union(rng)
            elif op is c.CATEGORY:
                acc = acc.union(self._category(av))
            else:
                acc = _ALL
        if neg:
            if acc.neg:
                return _CharSet(False, acc.chars)
            return _CharSet(True, acc.chars)
        return acc

    def _category(self, cat: Any) -> _CharSet:
        c = self.c
        name = str(cat)
        if "NOT_" in name:
            base = self._category(getattr(c, name.replace("NOT_", "")))
            return _CharSet(not base.neg, base.chars)
        if name.endswith("DIGIT"):
            return _CharSet(False, _DIGITS)
        if name.endswith("SPACE"):
            return _CharSet(False, _SPACE)
        if name.endswith("WORD"):
            return _CharSet(False, _WORD)
        if name.endswith("LINEBREAK"):
            return _NEWLINE
        return _ALL

    def _sub(self, av: Any, flags: int) -> tuple[list[Any], int]:
        _group, add, rem, p = av
        return list(p), (flags | int(add)) & ~int(rem)

    def first(self, seq: list[Any], flags: int) -> tuple[_CharSet, bool]:
        """What the sequence can start with, and whether it can match empty."""
        acc = _EMPTY
        for item in seq:
            f, nullable = self._first_item(item, flags)
            acc = acc.union(f)
            if not nullable:
                return acc, False
        return acc, True

    def _first_item(self, item: Any, flags: int) -> tuple[_CharSet, bool]:
        c = self.c
        op, av = item
        if op is c.LITERAL:
            return self._lit(av, flags), False
        if op is c.NOT_LITERAL:
            return _CharSet(True, frozenset({av})), False
        if op is c.ANY:
            return (_ALL if flags & re.DOTALL else _CharSet(True, frozenset({10}))), False
        if op is c.IN:
            return self._in(av, flags), False
        if op is c.AT or op is c.ASSERT or op is c.ASSERT_NOT:
            return _EMPTY, True
        if op is c.SUBPATTERN:
            p, sub_flags = self._sub(av, flags)
            return self.first(p, sub_flags)
        if op in self.s.repeats or op is self.s.possessive:
            lo, _hi, body = av
            cs, nullable = self.first(list(body), flags)
            return cs, nullable or lo == 0
        if op is c.BRANCH:
            acc, any_null = _EMPTY, False
            for alt in av[1]:
                cs, nullable = self.first(list(alt), flags)
                acc = acc.union(cs)
                any_null = any_null or nullable
            return acc, any_null
        if op is self.s.atomic:
            return self.first(list(av), flags)
        return _ALL, True

    def chars(self, seq: list[Any], flags: int, asserts: bool = False) -> _CharSet:
        """Every character the sequence can consume (or look at, with ``asserts``)."""
        c = self.c
        acc = _EMPTY
        for op, av in seq:
            if op is c.LITERAL or op is c.NOT_LITERAL or op is c.ANY or op is c.IN:
                acc = acc.union(self._first_item((op, av), flags)[0])
            elif op is c.SUBPATTERN:
                p, f = self._sub(av, flags)
                acc = acc.union(self.chars(p, f, asserts))
            elif op in self.s.repeats or op is self.s.possessive:
                acc = acc.union(self.chars(list(av[2]), flags, asserts))
            elif op is c.BRANCH:
                for alt in av[1]:
                    acc = acc.union(self.chars(list(alt), flags, asserts))
            elif op is self.s.atomic:
                acc = acc.union(self.chars(list(av), flags, asserts))
            elif op is c.ASSERT or op is c.ASSERT_NOT:
                if asserts:
                    acc = acc.union(self.chars(list(av[1]), flags, asserts))
            elif op is c.AT:
                continue
            elif op is getattr(c, "GROUPREF_EXISTS", None):
                _g, yes, no = av
                acc = acc.union(self.chars(list(yes), flags, asserts))
                if no is not None:
                    acc = acc.union(self.chars(list(no), flags, asserts))
            else:
                return _ALL
        return acc

    # -- explosive shapes ----------------------------------------------------------------------
    def check(self, seq: list[Any], flags: int, follow: _CharSet, inside: bool) -> None:
        """Refuse nested variable quantifiers and ambiguous alternations inside a repeat.

        Args:
            seq: the sequence to check.
            follow: what can come right after the sequence (inside a repeat: what the next
                iteration starts with).
            inside: True inside the body of a repeat that can iterate (max > 1).
        """
        c = self.c
        for idx, (op, av) in enumerate(seq):
            rest_first, rest_null = self.first(seq[idx + 1 :], flags)
            after = rest_first.union(follow) if rest_null else rest_first
            if op in self.s.repeats:
                lo, hi, body_p = av
                body = list(body_p)
                if inside and hi != lo and self.chars(body, flags).overlaps(after):
                    raise QueryError(
                        f"regex /{self.shown}/ nests a quantifier in a repeated group ((a+)+ style), "
                        "which can take exponential time; make the inner one possessive (a++) "
                        "or atomic ((?>...)), or simplify it"
                    )
                if hi > 1:
                    # Inside the body, what matters is what the next iteration can start with:
                    # text two iterations can share is what makes backtracking exponential.
                    bfirst, _ = self.first(body, flags)
                    self.check(body, flags, bfirst, True)
                else:
                    self.check(body, flags, after, inside)
            elif op is self.s.possessive or op is self.s.atomic:
                body = list(av[2]) if op is self.s.possessive else list(av)
                self.check(body, flags, after, False)
            elif op is c.SUBPATTERN:
                p, f = self._sub(av, flags)
                self.check(p, f, after, inside)
            elif op is c.BRANCH:
                alts = [list(a) for a in av[1]]
                if inside:
                    firsts: list[_CharSet] = []
                    for alt in alts:
                        cs, nullable = self.first(alt, flags)
                        firsts.append(cs.union(after) if nullable else cs)
                    for i in range(len(firsts)):
                        for j in range(i + 1, len(firsts)):
                            if firsts[i].overlaps(firsts[j]):
                                raise QueryError(
                                    f"regex /{self.shown}/ repeats an alternation whose branches can "
                                    "match the same text ((a|aa)* style), which can take exponential "
                                    "time; make the branches start differently or use (?>...)"
                                )
                for alt in alts:
                    self.check(alt, flags, after, inside)
            elif op is c.ASSERT or op is c.ASSERT_NOT:
                self.check(list(av[1]), flags, _ALL, False)
            elif op is getattr(c, "GROUPREF_EXISTS", None):
                _g, yes, no = av
                self.check(list(yes), flags, after, inside)
                if no is not None:
                    self.check(list(no), flags, after, inside)

    # -- line reach ------------------------------------------------------------------------------
    def newline_or_anchor(self, seq: list[Any], flags: int) -> bool:
        """True when the regex may match or look at a newline, or anchors to the whole text."""
        if self.chars(seq, flags, asserts=True).overlaps(_NEWLINE):
            return True
        return self._string_anchor(seq)

    def _string_anchor(self, seq: list[Any]) -> bool:
        c = self.c
        for op, av in seq:
            if op is c.AT and av in (c.AT_BEGINNING_STRING, c.AT_END_STRING):
                return True
            if op is c.GROUPREF:
                return True
            children: list[Any] = []
            if op is c.SUBPATTERN:
                children = [av[3]]
            elif op in self.s.repeats or op is self.s.possessive:
                children = [av[2]]
            elif op is c.BRANCH:
                children = list(av[1])
            elif op is self.s.atomic:
                children = [av]
            elif op is c.ASSERT or op is c.ASSERT_NOT:
                children = [av[1]]
            elif op is getattr(c, "GROUPREF_EXISTS", None):
                children = [x for x in av[1:] if x is not None]
            if any(self._string_anchor(list(ch)) for ch in children):
                return True
        return False

    # -- prefilter -------------------------------------------------------------------------------
    def leading_literal(self, seq: list[Any], flags: int) -> bytes:
        """The literal every match starts with: the pattern's first plain characters.

        Stops at anything else (a class, a group, a repeat, an anchor): what is returned is
        then certainly at the start of every match. Lowered when case-insensitive; a
        non-ASCII letter ends it then (its case folding is not a byte lowering).
        """
        out: list[str] = []
        for op, av in seq:
            if op is not self.c.LITERAL:
                break
            ch = chr(av)
            if flags & re.IGNORECASE and ord(ch) > 0x7F and ch.lower() != ch.upper():
                break
            out.append(ch)
        text = "".join(out).encode("utf-8", "surrogatepass")
        return text.lower() if flags & re.IGNORECASE else text

    def required_literal(self, seq: list[Any], flags: int) -> bytes | None:
        """The longest literal every match contains (UTF-8; lowered when case-insensitive)."""
        runs: list[bytes] = []
        cur: list[str] = []

        def flush() -> None:
            if cur:
                runs.append("".join(cur).encode("utf-8", "surrogatepass"))
                cur.clear()

        self._runs(seq, flags, cur, flush, runs)
        flush()
        runs = [r for r in runs if len(r) >= 3]
        if not runs:
            return None
        if flags & re.IGNORECASE:
            # A piece without letters needs no case folding at all: prefer it if long enough.
            plain = [p for r in runs for p in _LETTERS_RE.split(r) if len(p) >= 3]
            if plain:
                return max(plain, key=_rarity)
            return max(runs, key=_rarity).lower()
        return max(runs, key=_rarity)

    def _runs(
        self,
        seq: list[Any],
        flags: int,
        cur: list[str],
        flush: Callable[[], None],
        runs: list[bytes],
    ) -> None:
        c = self.c
        for op, av in seq:
            if op is c.LITERAL:
                ch = chr(av)
                if flags & re.IGNORECASE and ord(ch) > 0x7F and ch.lower() != ch.upper():
                    flush()
                    continue
                cur.append(ch)
            elif op is c.SUBPATTERN:
                p, f = self._sub(av, flags)
                if (f ^ flags) & re.IGNORECASE:
                    flush()
                    sub: list[str] = []
                    self._runs(p, f, sub, lambda: None, runs)
                    if sub:
                        text = "".join(sub).encode("utf-8", "surrogatepass")
                        runs.append(text.lower() if f & re.IGNORECASE else text)
                    flush()
                    continue
                self._runs(p, f, cur, flush, runs)
            elif op in self.s.repeats or op is self.s.possessive:
                lo, _hi, body = av
                flush()
                if lo >= 1:
                    inner: list[str] = []
                    inner_runs: list[bytes] = []

                    def inner_flush(
                        inner: list[str] = inner, inner_runs: list[bytes] = inner_runs
                    ) -> None:
                        if inner:
                            inner_runs.append("".join(inner).encode("utf-8", "surrogatepass"))
                            inner.clear()

                    self._runs(list(body), flags, inner, inner_flush, inner_runs)
                    inner_flush()
                    runs.extend(inner_runs)
            elif op is c.AT:
                continue
            else:
                flush()


# ---------------------------------------------------------------------------------------------
# Date and time terms: a UTC window, and byte patterns for ids and tokens minted in it
# ---------------------------------------------------------------------------------------------

_TIME_TERM_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?)?[Zz]?"
)
#: Decoded times are plausible only in this window (the decoders' 2020–2035).
_TIME_MIN = 1_577_836_800
_TIME_MAX = 2_082_758_400


def _time_window(text: str) -> tuple[float, float] | None:
    """The UTC window a date/time term names (``2026-09-01T22`` is that hour), or None."""
    m = _TIME_TERM_RE.fullmatch(text.strip())
    if m is None:
        return None
    y, mo, d, hh, mm, ss, frac = m.groups()
    try:
        start = datetime(
            int(y), int(mo), int(d), int(hh or 0), int(mm or 0), int(ss or 0), tzinfo=UTC
        )
    except ValueError:
        return None
    if frac is not None:
        step = timedelta(microseconds=10 ** (6 - len(frac)))
        start += timedelta(microseconds=int(frac) * 10 ** (6 - len(frac)))
    elif ss is not None:
        step = timedelta(seconds=1)
    elif mm is not None:
        step = timedelta(minutes=1)
    elif hh is not None:
        step = timedelta(hours=1)
    else:
        step = timedelta(days=1)
    t0 = start.timestamp()
    t1 = (start + step).timestamp()
    return t0, t1


_HEX = "0123456789abcdef"
_B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _digits(value: int, base: int, width: int) -> list[int]:
    out = [0] * width
    for i in range(width - 1, -1, -1):
        value, out[i] = divmod(value, base)
    return out


def _range_alts(lo: list[int], hi: list[int], base: int) -> list[list[tuple[int, int]]]:
    """Fixed-width digit strings between ``lo`` and ``hi`` (inclusive), as position ranges."""
    if not lo:
        return [[]]
    if lo[0] == hi[0]:
        return [[(lo[0], lo[0]), *rest] for rest in _range_alts(lo[1:], hi[1:], base)]
    n = len(lo) - 1
    alts: list[list[tuple[int, int]]] = []
    if all(x == 0 for x in lo[1:]):
        first_full = lo[0]
    else:
        alts += [[(lo[0], lo[0]), *r] for r in _range_alts(lo[1:], [base - 1] * n, base)]
        first_full = lo[0] + 1
    last_full = hi[0] if all(x == base - 1 for x in hi[1:]) else hi[0] - 1
    if first_full <= last_full:
        alts.append([(first_full, last_full)] + [(0, base - 1)] * n)
    if last_full != hi[0]:
        alts += [[(hi[0], hi[0]), *r] for r in _range_alts([0] * n, hi[1:], base)]
    return alts


def _class(chars: str) -> str:
    if len(chars) == 1:
        return re.escape(chars)
    return "[" + "".join("\\" + ch if ch in "\\]^-[" else ch for ch in chars) + "]"


def _range_regex(
    lo: int, hi: int, base: int, width: int, alphabet: str, insert: dict[int, str] | None = None
) -> str:
    """A regex for the fixed-width renderings of every value in ``[lo, hi]``.

    The common leading digits come first as a literal (so ``re`` can search for it fast);
    ``insert`` puts fixed text before a position (the dash of a UUID).
    """
    lo_d, hi_d = _digits(lo, base, width), _digits(hi, base, width)
    alts = _range_alts(lo_d, hi_d, base)
    insert = insert or {}

    prefix_len = 0
    while prefix_len < width and lo_d[prefix_len] == hi_d[prefix_len]:
        prefix_len += 1
    head = "".join(insert.get(i, "") + re.escape(alphabet[lo_d[i]]) for i in range(prefix_len))
    bodies = []
    for alt in alts:
        parts = []
        for i in range(prefix_len, width):
            a, b = alt[i]
            parts.append(insert.get(i, "") + _class(alphabet[a : b + 1]))
        bodies.append("".join(parts))
    if not bodies or bodies == [""]:
        return head
    return head + "(?:" + "|".join(bodies) + ")"


def _time_patterns(t0: float, t1: float) -> list[re.Pattern[bytes]]:
    """Byte patterns for ids and tokens whose embedded time falls in ``[t0, t1)``."""
    us0 = round(t0 * 1_000_000)
    us1 = round(t1 * 1_000_000)
    s0, s1 = -(-us0 // 1_000_000), -(-us1 // 1_000_000) - 1
    m0, m1 = -(-us0 // 1000), -(-us1 // 1000) - 1
    out: list[str] = []
    if s0 >= _TIME_MIN and s1 < _TIME_MAX and s0 <= s1:
        hexr = _range_regex(s0, s1, 16, 8, _HEX)
        # OpenAI item ids: new50 (time after 18 hex), legacy48 and old32 (time first).
        out.append(hexr + r"(?<=_[0-9a-f]{26})[0-9a-f]{24}(?![0-9a-f])")
        out.append(hexr + r"(?<=_[0-9a-f]{8})[0-9a-f]{24}(?:[0-9a-f]{16})?(?![0-9a-f])")
        # Fernet: base64url of 0x80 + the 8-byte time.
        out.append(_range_regex((0x80 << 64) | s0, (0x80 << 64) | s1, 64, 12, _B64URL))
    if m0 >= _TIME_MIN * 1000 and m1 < _TIME_MAX * 1000 and m0 <= m1:
        # UUIDv7: 48-bit milliseconds in the first 12 hex digits (a dash after 8).
        out.append(_range_regex(m0, m1, 16, 12, _HEX, insert={8: "-"}) + r"-7[0-9a-f]{3}-[89ab]")
        # Anthropic ids: "01" + base58 of a UUIDv7 (milliseconds in the top 48 of 128 bits).
        out.append(
            _range_regex(m0 << 80, ((m1 + 1) << 80) - 1, 58, 22, _B58)
            + r"(?<=_01[1-9A-HJ-NP-Za-km-z]{22})"
        )
        # ULIDs: milliseconds in the first 10 Crockford characters.
        out.append(_range_regex(m0, m1, 32, 10, _CROCKFORD) + r"[0-9A-HJKMNP-TV-Z]{16}")
        out.append(_range_regex(m0, m1, 32, 10, _CROCKFORD.lower()) + r"[0-9a-hjkmnp-tv-z]{16}")
    return [re.compile(p.encode("ascii")) for p in out]


# ---------------------------------------------------------------------------------------------
# Filters
# ---------------------------------------------------------------------------------------------

#: Raw hints for ``has:``: an item can be "encrypted" (or carry a signature) only if its line
#: holds one of these. Checked against every adapter (tests compare with the slow path).
#: "encrypted" is decided case-sensitively by the adapters: a Fernet token, an
#: ``encrypted…`` key or value, Gemini's ``thoughtSignature``, a compaction item. Plain
#: literals, each found with ``bytes.find`` (a case-insensitive alternation ran at 0.03 GB/s
#: over Muse lines, where every reasoning event has a ``signature`` key).
_HAS_HINTS: dict[str, tuple[_Finder, ...]] = {
    "encrypted": tuple(
        _Finder("find", needle=n) for n in (b"gAAAAA", b"encrypt", b"Signature", b"compaction")
    ),
    "signature": (_Finder("re", patterns=(re.compile(rb"(?i)signature"),)),),
}
_SIGNATURE_RE = re.compile(rb'(?i)signature\\*"\s*:\s*\\*"(?!\\*")')
_FERNET_RE = re.compile(rb"gAAAAA[A-Za-z0-9_\-]{6,}={0,2}")


def _parse_instant(name: str, value: str) -> float:
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise QueryError(
            f"invalid date for {name}: {value!r} (use 2026-09-01 or 2026-09-01T22:01:03Z)"
        ) from exc
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
    from musetui.model import FLAGS, FORMATS, HOSTS, PROVIDERS

    source = "|".join(
        ('"' + v + '"') if (not v or any(ch.isspace() or ch == "|" for ch in v)) else v
        for v in raw_values
    )
    values = [v.lower() for v in raw_values]
    cs = False
    times: tuple[float, ...] = ()
    finders: list[_Finder] = []
    score = 0.0
    if name == "provider":
        _check_known(name, values, PROVIDERS)
    elif name == "host":
        _check_known(name, values, (*HOSTS, "none"))
    elif name == "format":
        _check_known(name, values, FORMATS)
    elif name == "flag":
        _check_known(name, values, FLAGS)
    elif name == "kind":
        _check_known(name, values, ITEM_KINDS)
    elif name == "has":
        _check_known(name, values, HAS_VALUES)
        for v in dict.fromkeys(values):
            finders.extend(_HAS_HINTS[v])
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
                    finders.append(_literal_finder(needle if cs else needle.lower(), cs))
                score = float(min(len(x) for x in lits))
    return FieldFilter(
        name=name,
        values=tuple(values),
        case_sensitive=cs,
        times=times,
        source=source,
        finders=tuple(finders),
        score=score,
    )


def _pick_driver(groups: tuple[tuple[Term, ...], ...]) -> int:
    """The group whose raw hints find candidate lines best (-1: none can)."""
    best, best_score = -1, -1.0
    for gi, group in enumerate(groups):
        if not all(not t.negated and t.atom.finders for t in group):
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


@dataclass(slots=True)
class Hit:
    """One matching line of one session.

    Attributes:
        path: the file relative to the root it was found under (as in the scan record).
        abspath: the absolute path of the file.
        session_id: the session id from the transcript (as in the scan record).
        line: 1-based physical line of the match.
        field: JSON path of the value that matched (``payload.event.text``), or ``raw``.
        snippet: at most :data:`SNIPPET_MAX` characters around the match, one line, no controls.
        match_spans: ``(start, end)`` of every match of a positive term in ``snippet``.
        item_kind: the kind of the item on that line (None for a line that is not a record).
        offset: byte offset of the line in the file.
        root: the root the file was found under.
    """

    path: str
    abspath: str
    session_id: str | None
    line: int
    field: str
    snippet: str
    match_spans: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    item_kind: str | None = None
    offset: int = 0
    root: str = ""

    def record(self) -> dict[str, Any]:
        """The contract form of ``musetui search --json``: path, session_id, line, field, snippet."""
        return {
            "path": self.path,
            "session_id": self.session_id,
            "line": self.line,
            "field": self.field,
            "snippet": self.snippet,
        }


@dataclass(slots=True)
class _Stats:
    files: int = 0
    bytes: int = 0
    long_lines: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, other: _Stats) -> None:
        self.files += other.files
        self.bytes += other.bytes
        self.long_lines += other.long_lines
        self.notes.extend(other.notes)


class SearchRun:
    """The hits of a search, produced lazily, with what was noticed on the way.

    Iterate it for :class:`Hit` objects (sorted by path, then line). ``files``/``bytes``
    count what was read so far, ``long_lines`` the lines a regex searched only in part
    (see :data:`REGEX_LINE_CAP`), and ``notes`` holds one-line remarks (unreadable files,
    lines cut for regexes).
    """

    def __init__(
        self, query: Query, body: Callable[[SearchRun], Generator[Hit, None, None]]
    ) -> None:
        self.query = query
        self.hits = 0
        self._stats = _Stats()
        self._gen = body(self)

    @property
    def files(self) -> int:
        """Files read so far."""
        return self._stats.files

    @property
    def bytes(self) -> int:
        """Bytes read so far."""
        return self._stats.bytes

    @property
    def long_lines(self) -> int:
        """Lines longer than :data:`REGEX_LINE_CAP` that a regex searched only in part."""
        return self._stats.long_lines

    @property
    def notes(self) -> list[str]:
        """Remarks on the search so far (one line each)."""
        out = list(self._stats.notes)
        if self._stats.long_lines:
            out.append(
                f"{self._stats.long_lines} lines longer than {REGEX_LINE_CAP // 1024 // 1024} MiB "
                "were searched by a regex only in their first MiB"
            )
        return out

    def __iter__(self) -> SearchRun:
        return self

    def __next__(self) -> Hit:
        hit = next(self._gen)
        self.hits += 1
        return hit

    def close(self) -> None:
        """Stop the search (worker processes are shut down)."""
        self._gen.close()


# ---------------------------------------------------------------------------------------------
# What a file needs: where it is, and what is known of its session
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Info:
    """What session-level filters and hits need to know of a session."""

    format: str
    session_id: str | None
    started_at: float | None = None
    ended_at: float | None = None
    models: tuple[str, ...] = ()
    provider: str | None = None
    host: str | None = None
    flags: tuple[str, ...] = ()
    full: bool = False  # models and times come from every record

    @classmethod
    def of(cls, s: SessionSummary) -> _Info:
        models = tuple(dict.fromkeys([m for m in (s.declared_model, *s.models) if m]))
        a = s.attribution
        return cls(
            s.format,
            s.session_id,
            s.started_at,
            s.ended_at,
            models,
            a.provider,
            a.host,
            tuple(a.flags),
            True,
        )


#: The fields of :class:`_Info`, in ``__init__`` order (see :func:`_pack`).
_INFO_FIELDS = tuple(f.name for f in dataclasses.fields(_Info))


@dataclass(slots=True)
class _Task:
    abspath: str
    path: str
    root: str
    maybe: bool = False
    read_limit: int | None = None
    size: int = 0
    info: _Info | None = None


#: Directories deeper than this are not walked (a bind mount of an ancestor cannot loop forever).
MAX_DEPTH = 64


@dataclass(slots=True)
class _Subtree:
    """A directory to walk (by a worker, for big trees), in path order.

    ``links`` holds the identities of the symlinked directories on the way down (and of the
    directories below them), to cut symlink loops.
    """

    abspath: str
    path: str
    root: str
    root_real: str
    depth: int = 0
    links: frozenset[tuple[int, int]] = frozenset()


def _walk(roots: Sequence[str], notes: list[str]) -> Iterator[_Task]:
    """Candidate files under ``roots``, lazily, sorted by (path, root)."""
    walks = [_walk_units(_root_units(r, notes), notes) for r in roots]
    if len(walks) == 1:
        return walks[0]
    return heapq.merge(*walks, key=lambda t: (t.path, t.root))


def _root_units(root: str, notes: list[str]) -> list[_Task | _Subtree]:
    """A root as work: a file, or the directory to walk."""
    root_abs = os.path.abspath(root)
    try:
        st = os.stat(root_abs)
    except OSError as exc:
        notes.append(f"{root}: cannot read root: {exc.strerror or exc}")
        return []
    if stat.S_ISREG(st.st_mode):
        return [_Task(root_abs, os.path.basename(root_abs), root_abs, False, None, st.st_size)]
    if not stat.S_ISDIR(st.st_mode):
        notes.append(f"{root}: skipped: not a regular file or directory")
        return []
    return [_Subtree(root_abs, "", root_abs, os.path.realpath(root_abs))]


def _split(units: list[_Task | _Subtree], notes: list[str], want: int) -> list[_Task | _Subtree]:
    """Open directories level by level (order kept) until there are ``want`` of them to share."""
    for _ in range(6):
        dirs = sum(1 for u in units if isinstance(u, _Subtree))
        if dirs == 0 or dirs >= want:
            break
        opened: list[_Task | _Subtree] = []
        for u in units:
            if isinstance(u, _Subtree):
                opened.extend(_children(u, notes))
            else:
                opened.append(u)
        units = opened
    return units


def _walk_units(units: Iterable[_Task | _Subtree], notes: list[str]) -> Iterator[_Task]:
    """The files of a list of work units, depth first, in path order."""
    for u in units:
        if isinstance(u, _Task):
            yield u
            continue
        stack = _children(u, notes)
        stack.reverse()  # popped from the end: the first child first
        while stack:
            x = stack.pop()
            if type(x) is _Task:
                yield x
            else:
                assert isinstance(x, _Subtree)
                kids = _children(x, notes)
                kids.reverse()
                stack += kids


def _children(sub: _Subtree, notes: list[str]) -> list[_Task | _Subtree]:
    """One directory's candidate files and subdirectories, in path order.

    The rules are those of :func:`musetui.index.walk_roots` (not imported: it pulls in the
    scanner): files by extension, FIFOs/sockets/devices never opened, no symlink loop. Files
    are not ``stat``-ed (directory entry types suffice). A symlink to a directory inside the
    root is not followed: that directory is searched under its real path.
    """
    try:
        with os.scandir(sub.abspath) as it:
            entries = list(it)
    except OSError as exc:
        notes.append(f"{sub.path or '.'}: unreadable directory: {exc.strerror or exc}")
        return []
    keyed: list[tuple[str, _Task | _Subtree]] = []
    prefix = sub.path + "/" if sub.path else ""
    depth = sub.depth + 1
    for e in entries:
        name = e.name
        try:
            is_dir = e.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            rel = prefix + name
            if depth > MAX_DEPTH:
                notes.append(f"{rel}: skipped: deeper than {MAX_DEPTH} directories")
                continue
            links = sub.links
            if links or e.is_symlink():
                try:
                    if e.is_symlink():
                        real = os.path.realpath(e.path)
                        if real == sub.root_real or real.startswith(
                            sub.root_real.rstrip(os.sep) + os.sep
                        ):
                            notes.append(
                                f"{rel}: skipped: symlink into the tree (searched under its real path)"
                            )
                            continue
                    est = os.stat(e.path)
                except OSError:
                    continue
                ident = (est.st_dev, est.st_ino)
                if ident in links:
                    notes.append(f"{rel}: skipped: symlink loop (directory already visited)")
                    continue
                links = links | {ident}
            keyed.append(
                (name + "/", _Subtree(e.path, rel, sub.root, sub.root_real, depth, links))
            )
            continue
        cand = candidate(name)
        if cand is False:
            continue
        try:
            regular = e.is_file()
        except OSError:
            regular = False
        if regular:
            keyed.append((name, _Task(e.path, prefix + name, sub.root, cand is None)))
        elif not e.is_symlink():
            notes.append(f"{prefix + name}: skipped: not a regular file (not opened)")
    if len(keyed) > 1:
        # Keys are unique (names in one directory; a directory's ends with "/"), so the
        # tuples never compare their second items.
        keyed.sort()
    return [x for _k, x in keyed]


def _tasks_of(sessions: Iterable[SessionSummary]) -> list[_Task]:
    tasks = [
        _Task(s.abspath, s.path, s.root, False, s.read_bytes or None, s.size, _Info.of(s))
        for s in sessions
    ]
    tasks.sort(key=lambda t: (t.path, t.root))
    return tasks


# ---------------------------------------------------------------------------------------------
# Session-level filters
# ---------------------------------------------------------------------------------------------


def _glob(value: str, pattern: str, substring: bool) -> bool:
    if not (_GLOB_CHARS & set(pattern)):
        return pattern in value if substring else value == pattern
    return fnmatch.fnmatchcase(value, pattern)


def _session_filter(f: FieldFilter, info: _Info, path: str) -> bool:
    name = f.name
    if name == "path":
        p = path if f.case_sensitive else path.lower()
        return any(_glob(p, v, True) for v in f.values)
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
        return any(_glob(m, v, False) for m in models for v in f.values)
    return True


def _session_passes(
    query: Query, info: _Info | None, path: str, groups: Sequence[tuple[Term, ...]]
) -> bool:
    """Whether the session passes the groups made only of session-level filters."""
    for group in groups:
        ok = False
        for t in group:
            assert isinstance(t.atom, FieldFilter)
            if info is None and t.atom.name != "path":
                ok = True  # not decidable yet
                break
            got = _session_filter(t.atom, info or _Info("generic", None), path)
            if got != t.negated:
                ok = True
                break
        if not ok:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# One file
# ---------------------------------------------------------------------------------------------

_INVISIBLE_RE = re.compile("[\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_BLANK_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\s]+")
_FERNET_STR_RE = re.compile(r"gAAAAA[A-Za-z0-9_\-]{6,}={0,2}")
_UNSET: Any = object()


def _clean(text: str) -> str:
    """One line, no control, bidi or zero-width characters."""
    return _BLANK_RE.sub(" ", _INVISIBLE_RE.sub("", text))


def _scalar_text(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _values(obj: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, str, Any, bool]]:
    """Every key and value of a record as text: (field path, text, value, is_key).

    JSON held in a string is walked too (path suffix ``<json>``), as the fingerprint walk does.
    """
    if depth > 200:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            sub = f"{path}.{k}" if path else str(k)
            yield sub, str(k), v, True
            yield from _values(v, sub, depth + 1)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _values(v, f"{path}[{i}]", depth + 1)
    elif isinstance(obj, str):
        yield path, obj, obj, False
        if len(obj) >= 2 and obj[0] in "{[" and obj[-1] in "}]":
            try:
                inner = orjson.loads(obj)
            except orjson.JSONDecodeError:
                return
            if isinstance(inner, dict | list):
                yield from _values(inner, path + "<json>", depth + 1)
    else:
        yield path, _scalar_text(obj), obj, False


def _on_line(text: str, value: Any, is_key: bool, raw: bytes) -> bool:
    """Whether a value (or key) is written on this physical line (pretty-printed documents)."""
    if is_key:
        return b'"' + orjson.dumps(text)[1:-1] + b'"' in raw
    if isinstance(value, str):
        return orjson.dumps(value)[1:-1] in raw
    return text.encode("utf-8", "replace") in raw


@dataclass(slots=True)
class _Unit:
    """One physical line under evaluation, with the record(s) it belongs to."""

    line: int
    offset: int
    raw: bytes
    objs: list[Any]
    items: list[Item]
    doc: bool
    lowered: bytes | None = None
    decoded: list[tuple[Decoded, str | None, str]] | None = None
    memo: dict[int, str | None] = field(default_factory=dict)

    def low(self) -> bytes:
        if self.lowered is None:
            self.lowered = self.raw.lower()
        return self.lowered

    def fingerprints(self) -> list[tuple[Decoded, str | None, str]]:
        if self.decoded is None:
            from musetui.fingerprints import extract

            out: list[tuple[Decoded, str | None, str]] = []
            for obj in self.objs:
                for dec, key, path in extract.walk_record(obj):
                    if (
                        self.doc
                        and dec.value
                        and dec.value.encode("utf-8", "replace") not in self.raw
                    ):
                        continue
                    out.append((dec, key, path))
            self.decoded = out
        return self.decoded


class _FileSearch:
    """Searches one file: candidate lines, then the full query on each."""

    def __init__(self, task: _Task, query: Query, stats: _Stats) -> None:
        self.task = task
        self.query = query
        self.stats = stats
        self.data = b""
        self._lowered: bytes | None = None
        self._doc: Any = _UNSET
        self._capture = False  # an HTTP capture: its records are its interactions
        self._long: bool | None = None
        self.info: _Info | None = task.info
        self.sse = False
        self.session_groups = query.session_only
        self.need_full = query.needs_full_session

    # -- data ----------------------------------------------------------------------------------
    def read(self) -> bool:
        """Read the file once (read-only, non-blocking open; up to the indexed size)."""
        t = self.task
        try:
            data = _read(t.abspath, t.read_limit)
        except OSError as exc:
            self.stats.notes.append(
                f"{t.path}: unreadable: {getattr(exc, 'strerror', None) or exc}"
            )
            return False
        if t.maybe:
            head = data[:4096].lstrip()
            if not (head[:1] in (b"{", b"[") or head.startswith((b"data:", b"event:"))):
                return False
        return self.use(data)

    def use(self, data: bytes) -> bool:
        """Take the file's bytes (read here, or by :func:`_search_units`'s quick check)."""
        self.stats.files += 1
        self.stats.bytes += len(data)
        self.data = data
        self.sse = data[:6] in (b"data: ", b"event:") or data[:5] == b"data:"
        return bool(data) and not data.isspace()

    def lowered(self) -> bytes:
        if self._lowered is None:
            self._lowered = self.data.lower()
        return self._lowered

    def has_long_lines(self) -> bool:
        if self._long is None:
            data, n, pos = self.data, len(self.data), 0
            self._long = False
            if n > REGEX_LINE_CAP:
                while pos < n:
                    le = data.find(b"\n", pos)
                    if le < 0:
                        le = n
                    if le - pos > REGEX_LINE_CAP:
                        self._long = True
                        break
                    pos = le + 1
        return self._long

    def document(self) -> list[Any] | None:
        """The records of a whole-file JSON document (as the scanner decides), or None for lines."""
        if self._doc is _UNSET:
            from musetui.reader import MAX_DOCUMENT_BYTES
            from musetui.sources import http_capture

            self._doc = None
            data = self.data
            if http_capture.claims(self.task.path, data):
                self._capture = True
                self._doc = [r.obj for r in http_capture.records(data, self.task.path)] or None
                found: list[Any] | None = self._doc
                return found
            nl = data.find(b"\n")
            if (
                data.lstrip()[:1] in (b"{", b"[")
                and 0 <= nl < len(data.rstrip(b"\n"))
                and len(data) <= MAX_DOCUMENT_BYTES
            ):
                first = data[:nl].strip()
                parses = True
                if first not in (b"{", b"["):
                    try:
                        orjson.loads(first)
                    except orjson.JSONDecodeError:
                        parses = False
                if first in (b"{", b"[") or not parses:
                    try:
                        whole = orjson.loads(data)
                    except orjson.JSONDecodeError:
                        whole = None
                    if whole is not None and http_capture.is_har(whole):
                        self._capture = True
                        whole = [r.obj for r in http_capture.records(data, self.task.path)] or None
                    if whole is not None:
                        self._doc = whole if isinstance(whole, list) else [whole]
        doc: list[Any] | None = self._doc
        return doc

    def clean_line(self, line: bytes) -> bytes | None:
        """The JSON text of a line, as the scanner reads it (None: not a record)."""
        line = line.strip()
        if not line:
            return None
        if self.sse:
            if line.startswith(b"data:"):
                line = line[5:].strip()
                if line == b"[DONE]" or not line:
                    return None
            elif line.startswith((b"event:", b"id:", b":", b"retry:")):
                return None
        return line

    def parse_line(self, ls: int, le: int) -> Any:
        from musetui.reader import MAX_LINE_BYTES

        if le - ls > MAX_LINE_BYTES:
            return _UNSET
        text = self.clean_line(self.data[ls:le])
        if text is None:
            return _UNSET
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return _UNSET

    def records(self) -> Iterator[tuple[int, int, int, Any]]:
        """(line, offset, length, object) of every record, in order."""
        doc = self.document()
        data = self.data
        if doc is not None:
            length = len(data.rstrip())
            for obj in doc:
                yield 1, 0, length, obj
            return
        pos, n, lineno = 0, len(data), 0
        while pos < n:
            le = data.find(b"\n", pos)
            if le < 0:
                le = n
            lineno += 1
            obj = self.parse_line(pos, le)
            if obj is not _UNSET:
                end = le - 1 if le > pos and data[le - 1] == 13 else le
                yield lineno, pos, end - pos, obj
            pos = le + 1

    # -- the session ---------------------------------------------------------------------------
    def session(self) -> _Info | None:
        """Format and session id (and, when filters need them, models and times)."""
        if self.info is not None:
            return self.info
        from musetui import sources
        from musetui.model import SessionSummary, parse_time

        t = self.task
        summary = SessionSummary(
            path=t.path, abspath=t.abspath, root=t.root, format="generic", format_rule=""
        )
        observer: Any = None
        pending: list[tuple[int, Any]] = []
        times: list[Any] = []
        count = 0
        is_doc = self.document() is not None
        if self._capture:
            from musetui.sources import http_capture

            if not http_capture.identify(self.data, summary):
                return None
            models = tuple(dict.fromkeys([m for m in (summary.declared_model, *summary.models) if m]))
            self.info = _Info(
                summary.format, summary.session_id, summary.started_at, summary.ended_at, models,
                full=self.need_full,
            )
            return self.info
        agent_file = os.path.basename(t.path).startswith("agent-")
        for line, _off, _len, obj in self.records():
            count += 1
            if observer is None:
                found = sources.sniff(obj)
                if found is None and count < 8:
                    pending.append((line, obj))
                    continue
                summary.format = found[0] if found else "generic"
                observer = sources.observer_for(summary.format, summary)
                for pl, po in pending:
                    times.append(observer.observe(po, pl)[0])
                pending.clear()
            times.append(observer.observe(obj, line)[0])
            if not self.need_full and _identified(summary, observer, agent_file):
                break
        if observer is None:
            if not pending:
                return None
            observer = sources.observer_for("generic", summary)
            for pl, po in pending:
                times.append(observer.observe(po, pl)[0])
        observer.finish()
        known = [x for x in times if x is not None]
        first = parse_time(known[0]) if known else None
        last = first if is_doc else (parse_time(known[-1]) if known else None)
        models = tuple(dict.fromkeys([m for m in (summary.declared_model, *summary.models) if m]))
        self.info = _Info(
            summary.format, summary.session_id, first, last, models, full=self.need_full
        )
        return self.info

    # -- candidates ----------------------------------------------------------------------------
    def _seeker(self, finder: _Finder) -> Callable[[int], int] | None:
        """Position of the next candidate at or after ``pos`` (-1: none), or None: no hint."""
        data = self.data
        if finder.needle:
            hay = self.lowered() if finder.lower else data
            needle = finder.needle
            return lambda pos: hay.find(needle, pos)
        pats = finder.patterns
        if len(pats) == 1:
            pat = pats[0]

            def seek_one(pos: int) -> int:
                m = pat.search(data, pos)
                return m.start() if m is not None else -1

            return seek_one
        if not pats:
            return None
        nexts = [-2] * len(pats)  # the next match of each pattern (-1: exhausted)

        def seek_any(pos: int) -> int:
            best = -1
            for i, pat in enumerate(pats):
                at = nexts[i]
                if at == -1:
                    continue
                if at < pos:
                    m = pat.search(data, pos)
                    at = nexts[i] = m.start() if m is not None else -1
                    if at == -1:
                        continue
                if best < 0 or at < best:
                    best = at
            return best

        return seek_any

    def spans(self, finder: _Finder) -> Iterator[tuple[int, int]]:
        """(line start, line end) of the lines a finder hits, ascending, each once."""
        data = self.data
        n = len(data)
        seek = self._seeker(finder)
        pat = finder.pattern
        if pat is not None and (finder.line_mode or self.has_long_lines()):
            yield from self._regex_lines(pat, seek)
            return
        if pat is not None and seek is not None and finder.leads:
            yield from self._led_lines(pat, seek, finder.anchor_at)
            return
        if pat is not None and seek is None:
            seek = self._regex_seeker(pat)
            pat = None
        assert seek is not None
        p = seek(0)
        while p >= 0:
            ls = data.rfind(b"\n", 0, p) + 1
            le = data.find(b"\n", p)
            if le < 0:
                le = n
            if pat is None or pat.search(data, ls, le):
                yield ls, le
            if le >= n:
                return
            p = seek(le + 1)

    def _led_lines(
        self, pat: re.Pattern[bytes], seek: Callable[[int], int], anchor_at: int
    ) -> Iterator[tuple[int, int]]:
        """Lines where ``pat`` matches at an occurrence of the literal every match starts with.

        Equivalent to searching each candidate line whole, but ``match`` at each occurrence
        costs little where ``search`` (slow when case-insensitive) would scan the line.
        """
        data = self.data
        n = len(data)
        p = seek(0)
        while p >= 0:
            q = p - anchor_at
            le = data.find(b"\n", p)
            if le < 0:
                le = n
            if pat.match(data, q, le) is None:
                p = seek(p + 1)
                continue
            yield data.rfind(b"\n", 0, q) + 1, le
            if le >= n:
                return
            p = seek(le + 1)

    def _regex_seeker(self, pat: re.Pattern[bytes]) -> Callable[[int], int]:
        data = self.data

        def seek(pos: int) -> int:
            m = pat.search(data, pos)
            return m.start() if m is not None else -1

        return seek

    def _regex_lines(
        self, pat: re.Pattern[bytes], seek: Callable[[int], int] | None
    ) -> Iterator[tuple[int, int]]:
        """Line by line, each line cut at :data:`REGEX_LINE_CAP` (bounded backtracking)."""
        data = self.data
        n = len(data)
        pos = 0
        while pos < n:
            if seek is not None:
                p = seek(pos)
                if p < 0:
                    return
                pos = data.rfind(b"\n", 0, p) + 1
            le = data.find(b"\n", pos)
            if le < 0:
                le = n
            end = le
            if le - pos > REGEX_LINE_CAP:
                end = pos + REGEX_LINE_CAP
                self.stats.long_lines += 1
            if pat.search(data[pos:end]):
                yield pos, le
            pos = le + 1

    def candidates(
        self, group: tuple[Term, ...]
    ) -> list[tuple[int, int]] | Iterator[tuple[int, int]]:
        finders = [f for t in group for f in t.atom.finders]
        if len(finders) == 1:
            return self.spans(finders[0])
        merged: dict[int, int] = {}
        for f in finders:
            for ls, le in self.spans(f):
                merged[ls] = le
        return sorted(merged.items())

    # -- evaluation ----------------------------------------------------------------------------
    def run(self, data: bytes | None = None) -> list[Hit]:
        """The file's hits; ``data``: its bytes, when the caller has read them."""
        if not (self.read() if data is None else self.use(data)):
            return []
        if self.query.driver >= 0:
            return self._anchored()
        return self._all_items()

    def _session_ok(self) -> _Info | None:
        info = self.session()
        if info is None:
            return None
        if self.session_groups and not _session_passes(
            self.query, info, self.task.path, self.session_groups
        ):
            return None
        return info

    def _anchored(self) -> list[Hit]:
        q = self.query
        spans = iter(self.candidates(q.groups[q.driver]))
        first = next(spans, None)
        if first is None:
            return []
        info = self._session_ok()
        if info is None:
            return []
        data = self.data
        doc = self.document()
        doc_items: list[Item] | None = None
        if doc is not None:
            doc_items = self._items_of_doc(info, doc)
        hits: list[Hit] = []
        lineno, prev = 1, 0
        for ls, le in _chain(first, spans):
            lineno += data.count(b"\n", prev, ls)
            prev = ls
            raw = data[ls:le]
            if doc is not None:
                assert doc_items is not None
                unit = _Unit(lineno, ls, raw, doc, _line_items(doc_items, raw), True)
            else:
                obj = self.parse_line(ls, le)
                objs = [] if obj is _UNSET else [obj]
                items = self._items_of(info, lineno, ls, le, obj) if objs else []
                unit = _Unit(lineno, ls, raw, objs, items, False)
            hit = self._evaluate(unit, info)
            if hit is not None:
                hits.append(hit)
        return hits

    def _items_of(self, info: _Info, line: int, ls: int, le: int, obj: Any) -> list[Item]:
        from musetui import sources
        from musetui.sources.base import Record

        try:
            return sources.build_items(info.format, [Record(line, ls, le - ls, obj)])
        except Exception as exc:  # an adapter bug must not end the search
            self.stats.notes.append(
                f"{self.task.path}:{line}: items not built ({type(exc).__name__})"
            )
            return []

    def _items_of_doc(self, info: _Info, doc: list[Any]) -> list[Item]:
        from musetui import sources
        from musetui.sources.base import Record

        length = len(self.data.rstrip())
        try:
            return sources.build_items(info.format, [Record(1, 0, length, o) for o in doc])
        except Exception as exc:
            self.stats.notes.append(f"{self.task.path}: items not built ({type(exc).__name__})")
            return []

    def _all_items(self) -> list[Hit]:
        """No term can find candidate lines: look at every item of the session."""
        info = self._session_ok()
        if info is None:
            return []
        data = self.data
        doc = self.document()
        hits: list[Hit] = []
        seen: set[int] = set()
        if doc is not None:
            for item in self._items_of_doc(info, doc):
                ls, le, line = self._anchor(item)
                if line in seen:
                    continue
                hit = self._evaluate(_Unit(line, ls, data[ls:le], doc, [item], True), info)
                if hit is not None:
                    seen.add(line)
                    hits.append(hit)
            hits.sort(key=lambda h: h.line)
            return hits
        for line, off, _length, obj in self.records():
            le = data.find(b"\n", off)
            if le < 0:
                le = len(data)
            items = self._items_of(info, line, off, le, obj)
            hit = self._evaluate(_Unit(line, off, data[off:le], [obj], items, False), info)
            if hit is not None:
                hits.append(hit)
        return hits

    def _anchor(self, item: Item) -> tuple[int, int, int]:
        """The line of a document item: where its text starts, or its first id (else line 1)."""
        data = self.data
        probes = [item.text[:40]] if item.text and item.text.strip() else []
        probes += [i for i in item.ids if isinstance(i, str) and i]
        for probe in probes:
            p = data.find(orjson.dumps(probe)[1:-1])
            if p >= 0:
                ls = data.rfind(b"\n", 0, p) + 1
                le = data.find(b"\n", p)
                return ls, (le if le >= 0 else len(data)), data.count(b"\n", 0, ls) + 1
        le = data.find(b"\n")
        return 0, (le if le >= 0 else len(data)), 1

    def _text(self, term: TextTerm, unit: _Unit) -> str | None:
        """How a text term matches a unit: ``raw``, ``meta`` (decoded time) or None."""
        key = id(term)
        if key in unit.memo:
            return unit.memo[key]
        how: str | None = None
        if term.literal is not None:
            hay = unit.low() if term.lower else unit.raw
            if term.literal in hay:
                how = "raw"
        elif term.kind == "regex":
            raw = unit.raw
            if len(raw) > REGEX_LINE_CAP:
                raw = raw[:REGEX_LINE_CAP]
            if term.raw.search(raw):
                how = "raw"
        elif term.raw.search(unit.raw):
            how = "raw"
        if (
            how is None
            and term.window is not None
            and unit.objs
            and self._decoded_in(term, unit) is not None
        ):
            how = "meta"
        unit.memo[key] = how
        return how

    def _decoded_in(self, term: TextTerm, unit: _Unit) -> tuple[Decoded, str] | None:
        assert term.window is not None
        t0, t1 = term.window
        for dec, _key, path in unit.fingerprints():
            if dec.time is not None and t0 <= dec.time < t1:
                return dec, path
        return None

    def _filter(self, f: FieldFilter, unit: _Unit, item: Item | None, info: _Info) -> bool:
        name = f.name
        if f.session_level:
            return _session_filter(f, info, self.task.path)
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
                    if _has_fernet(unit.raw):
                        return True
                elif v == "signature" and _SIGNATURE_RE.search(unit.raw):
                    return True
            return False
        if item is None:
            return False
        if name == "kind":
            return item.kind in f.values
        if name == "role":
            return (item.role or "").lower() in f.values
        if name == "id":
            ids = (
                item.ids
                if f.case_sensitive
                else [i.lower() for i in item.ids if isinstance(i, str)]
            )
            return any(_glob(i, v, False) for i in ids for v in f.values)
        return True

    def _passes(self, unit: _Unit, item: Item | None, info: _Info) -> bool:
        for group in self.query.groups:
            ok = False
            for t in group:
                atom = t.atom
                got = (
                    (self._text(atom, unit) is not None)
                    if isinstance(atom, TextTerm)
                    else self._filter(atom, unit, item, info)
                )
                if got != t.negated:
                    ok = True
                    break
            if not ok:
                return False
        return True

    def _evaluate(self, unit: _Unit, info: _Info) -> Hit | None:
        chosen: Item | None = None
        ok = False
        candidates: list[Item | None] = list(unit.items) or [None]
        for item in candidates:
            if self._passes(unit, item, info):
                chosen, ok = item, True
                break
        if not ok:
            return None
        return self._hit(unit, chosen, info)

    # -- hits ----------------------------------------------------------------------------------
    def _hit(self, unit: _Unit, item: Item | None, info: _Info) -> Hit:
        terms = self.query.positive_text
        located: tuple[str, str, int, int] | None = None
        for term in terms:
            how = unit.memo.get(id(term), _UNSET)
            if how is _UNSET:
                how = self._text(term, unit)
            if how == "raw":
                located = self._locate(term, unit)
                break
            if how == "meta":
                got = self._decoded_in(term, unit)
                if got is not None:
                    dec, path = got
                    text = f"{dec.value}: {dec.meaning}"
                    located = (path, text, 0, len(dec.value))
                    break
        if located is None:
            located = self._locate_filters(unit, item)
        fld, text, s, e = located
        snippet, spans = _snippet(text, s, e, terms)
        t = self.task
        return Hit(
            path=t.path,
            abspath=t.abspath,
            session_id=info.session_id,
            line=unit.line,
            field=fld,
            snippet=snippet,
            match_spans=spans,
            item_kind=item.kind if item is not None else None,
            offset=unit.offset,
            root=t.root,
        )

    def _walk(self, unit: _Unit) -> Iterator[tuple[str, str, Any, bool]]:
        for obj in unit.objs:
            for entry in _values(obj):
                if unit.doc and not _on_line(entry[1], entry[2], entry[3], unit.raw):
                    continue
                yield entry

    def _locate(self, term: TextTerm, unit: _Unit) -> tuple[str, str, int, int]:
        """The first value (or key) the term matches: (field, text, start, end)."""
        key_hit: tuple[str, str, int, int] | None = None
        for path, text, value, is_key in self._walk(unit):
            m = term.matcher.search(text)
            if m is None:
                continue
            if not is_key:
                return path, text, m.start(), m.end()
            if key_hit is None:
                shown = (
                    text
                    + ": "
                    + (
                        _scalar_text(value)
                        if not isinstance(value, dict | list)
                        else orjson.dumps(value).decode("utf-8", "replace")[:300]
                    )
                )
                key_hit = (path, shown, m.start(), m.end())
        if key_hit is not None:
            return key_hit
        return _raw_location(term, unit.raw)

    def _locate_filters(self, unit: _Unit, item: Item | None) -> tuple[str, str, int, int]:
        """Field and snippet for a hit that no text term located: from the filters that passed."""
        filters = [
            t.atom for t in self.query.terms if isinstance(t.atom, FieldFilter) and not t.negated
        ]
        wanted = {v for f in filters if f.name == "has" for v in f.values}
        id_filters = [f for f in filters if f.name == "id"]
        entries = list(self._walk(unit))
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
                if not is_key and any(_glob(probe, v, False) for v in f.values):
                    return path, text, 0, len(text)
        if item is not None and item.text:
            head = item.text[:60]
            for path, text, _v, is_key in entries:
                if not is_key and head and head in text:
                    s = text.find(head)
                    return path, text, s, s
        return "raw", unit.raw.decode("utf-8", "replace"), 0, 0


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _read(path: str, limit: int | None) -> bytes:
    """A regular file's bytes (at most ``limit``), as :func:`musetui.reader.read_file` reads them.

    Opened read-only and non-blocking (a FIFO swapped in cannot block), checked to be a
    regular file; a file that grew while it was read ends at its last complete line.
    """
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"not a regular file: {path}")
        want = st.st_size if limit is None else min(st.st_size, limit)
        data = os.read(fd, want) if want else b""
        while len(data) < want:
            more = os.read(fd, want - len(data))
            if not more:
                break
            data += more
        if limit is None and data and data[-1] != 10 and os.fstat(fd).st_size > st.st_size:
            cut = data.rfind(b"\n") + 1
            data = data[:cut]
        return data
    finally:
        os.close(fd)


def _chain(first: tuple[int, int], rest: Iterator[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    yield first
    yield from rest


def _identified(summary: Any, observer: Any, agent_file: bool) -> bool:
    """Whether the first records already fixed the session id (the rest cannot change it)."""
    if summary.format == "claude-code":
        return (
            bool(getattr(observer, "agent", None))
            if agent_file
            else bool(getattr(observer, "session", None))
        )
    return summary.session_id is not None


def _line_items(items: list[Item], raw: bytes) -> list[Item]:
    """The items of a document written on this line (by their ids), else all of them."""
    mine = [
        it
        for it in items
        if any(i and orjson.dumps(i)[1:-1] in raw for i in it.ids if isinstance(i, str))
    ]
    return mine or items


def _has_fernet(raw: bytes) -> bool:
    from musetui.fingerprints.decoders import decode_fernet

    for m in _FERNET_RE.finditer(raw):
        if decode_fernet(m.group().decode("ascii")) is not None:
            return True
    return False


def _raw_location(term: TextTerm, raw: bytes) -> tuple[str, str, int, int]:
    text = raw.decode("utf-8", "replace")
    for pat in (term.matcher, term.encoded_matcher):
        if pat is None:
            continue
        m = pat.search(text)
        if m is not None:
            return "raw", text, m.start(), m.end()
    return "raw", text, 0, 0


def _snippet(
    text: str, s: int, e: int, terms: Sequence[TextTerm]
) -> tuple[str, list[tuple[int, int]]]:
    """At most :data:`SNIPPET_MAX` characters of ``text`` around ``[s, e)``, one clean line."""
    e = min(max(e, s), s + SNIPPET_MAX - 2)
    w0, w1 = max(0, s - 400), min(len(text), e + 400)
    before = _clean(text[w0:s])
    middle = _clean(text[s:e])
    after = _clean(text[e:w1])
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
    snippet = head + middle + after[:tail] + ("…" if right_cut else "")
    spans: set[tuple[int, int]] = set()
    if middle:
        spans.add((len(head), len(head) + len(middle)))
    for term in terms:
        for pat in (term.matcher, term.encoded_matcher):
            if pat is None:
                continue
            for m in pat.finditer(snippet):
                if m.end() > m.start():
                    spans.add((m.start(), m.end()))
    return snippet, _merge(spans)


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


# ---------------------------------------------------------------------------------------------
# Running a search
# ---------------------------------------------------------------------------------------------

_WORKER_QUERY: Query | None = None


def _init_worker(query: Query) -> None:
    global _WORKER_QUERY, _WORKER_WORK
    _WORKER_QUERY = query
    _WORKER_WORK = _FORK_WORK  # a forked worker keeps the units it was forked with


#: Files smaller than this are read into one reused buffer and, when the query's driving
#: group has plain hints (a literal, or literal-anchored patterns), dropped there if no hint
#: occurs: most files of a corpus never become a ``bytes`` object or a :class:`_FileSearch`.
QUICK_BUFFER = 1 << 20


@dataclass(frozen=True, slots=True)
class _Quick:
    """The hints of a query's driving group: a file none of them occurs in has no hit."""

    needles: tuple[bytes, ...]
    patterns: tuple[re.Pattern[bytes], ...]


def _quick_of(query: Query) -> _Quick | None:
    """The quick check of a query, or None when its driver has no plain hint.

    The same hints drive :meth:`_FileSearch.spans`, which yields nothing without one of
    them; case-insensitive literals searched over a lowered copy, and regexes found by
    running them whole, have no quick check.
    """
    if query.driver < 0:
        return None
    needles: list[bytes] = []
    patterns: list[re.Pattern[bytes]] = []
    for term in query.groups[query.driver]:
        for f in term.atom.finders:
            if f.needle and not f.lower:
                needles.append(f.needle)
            elif f.patterns and not f.needle:
                patterns.extend(f.patterns)
            else:
                return None
    return _Quick(tuple(needles), tuple(patterns))


def _search_units(
    units: Iterable[_Task | _Subtree],
    query: Query,
    stats: _Stats,
    cancelled: Callable[[], bool] | None = None,
) -> Iterator[list[Hit]]:
    """The hits of every file under ``units``, walked depth first in path order.

    Yields one list per file that has hits. With a quick check (:func:`_quick_of`), a file
    smaller than :data:`QUICK_BUFFER` is read into one reused buffer, as :func:`_read`
    reads it (a regular file, at most its indexed size, cut at its last complete line if it
    grew meanwhile), and searched further only when a hint of the driving group occurs in
    it. This is the hot loop of a search, kept flat on purpose: the walk, the read and the
    check inline, no generator or call per file (it saved 9-15 ms of a 0.25 s search).
    """
    quick = _quick_of(query)
    notes = stats.notes
    buf = bytearray(QUICK_BUFFER if quick is not None else 0)
    view = memoryview(buf)
    needles = quick.needles if quick is not None else ()
    patterns = quick.patterns if quick is not None else ()
    for unit in units:
        stack: list[_Task | _Subtree] = [unit]
        while stack:
            task = stack.pop()
            if type(task) is not _Task:
                assert isinstance(task, _Subtree)
                kids = _children(task, notes)
                kids.reverse()  # popped from the end: the first child first
                stack += kids
                continue
            if cancelled is not None and cancelled():
                return
            n = -1  # -1: the full read (no quick check, or the file does not fit)
            if quick is not None and not task.maybe:
                limit = task.read_limit
                try:
                    fd = os.open(task.abspath, _OPEN_FLAGS)
                except OSError:
                    fd = -1  # the full read reports why
                if fd >= 0:
                    try:
                        st = os.fstat(fd)
                        want = st.st_size if limit is None else min(st.st_size, limit)
                        if want < len(buf) and stat.S_ISREG(st.st_mode):
                            n = os.readv(fd, [view[:want]]) if want else 0
                            while n < want:
                                more = os.preadv(fd, [view[n:want]], n)
                                if not more:
                                    break
                                n += more
                            grew = limit is None and n and buf[n - 1] != 10
                            if grew and os.fstat(fd).st_size > want:  # whole lines only
                                n = buf.rfind(b"\n", 0, n) + 1
                    except OSError:
                        n = -1
                    finally:
                        os.close(fd)
            if n >= 0:
                hinted = False  # (loops, not any(): no generator object per file)
                for needle in needles:
                    if buf.find(needle, 0, n) >= 0:
                        hinted = True
                        break
                if not hinted:
                    for pattern in patterns:
                        if pattern.search(buf, 0, n) is not None:
                            hinted = True
                            break
                if not hinted:
                    stats.files += 1
                    stats.bytes += n
                    continue
                hits = _FileSearch(task, query, stats).run(bytes(view[:n]))
            else:
                hits = _FileSearch(task, query, stats).run()
            if hits:
                yield hits


def _search_chunk(chunk: list[_Task | _Subtree]) -> tuple[list[Hit], _Stats]:
    assert _WORKER_QUERY is not None
    stats = _Stats()
    hits: list[Hit] = []
    for found in _search_units(chunk, _WORKER_QUERY, stats):
        hits.extend(found)
    return hits, stats


def _execute(
    units: list[_Task | _Subtree] | Iterator[_Task],
    query: Query,
    run: SearchRun,
    limit: int | None,
    cancelled: Callable[[], bool] | None,
    workers: int | None,
    pool: SearchPool | None = None,
) -> Iterator[Hit]:
    """Search files (or directories to walk) in path order: in-process, or a process pool.

    A pool is used for more than :data:`PARALLEL_MIN_FILES` files (or as many directories,
    whose files the workers walk themselves); with known sizes, only above
    :data:`PARALLEL_MIN_BYTES`. Work is cut into ordered batches and results are yielded in
    that order, so hits stay sorted by path, then line.
    """
    stats = run._stats
    left = limit if limit is not None and limit > 0 else None
    nworkers = workers if workers is not None else (os.cpu_count() or 1)
    if isinstance(units, list):
        work = units
        if nworkers > 1:
            work = _split(work, stats.notes, nworkers * 32)
        ndirs = sum(1 for u in work if isinstance(u, _Subtree))
        files = [u for u in work if isinstance(u, _Task)]
        sized = bool(files) and ndirs == 0 and all(t.size for t in files)
        big = (ndirs >= 16 or len(files) >= PARALLEL_MIN_FILES) and not (
            sized and sum(t.size for t in files) < PARALLEL_MIN_BYTES
        )
    else:
        work = list(units)
        big = len(work) >= PARALLEL_MIN_FILES
    if nworkers <= 1 or not big:
        for found in _search_units(work, query, stats, cancelled):
            for hit in found:
                yield hit
                if left is not None:
                    left -= 1
                    if left <= 0:
                        return
        return
    size = max(1, -(-len(work) // (nworkers * 24)))
    bounds = [(i, min(i + size, len(work))) for i in range(0, len(work), size)]
    futures: deque[Future[tuple[list[Hit], _Stats]]]
    if pool is not None:
        executor = pool.executor()
        futures = deque(
            executor.submit(_search_chunk_of, (query, _pack(work[a:b]))) for a, b in bounds
        )
    else:
        executor, forked = _new_executor(nworkers, query, work)
        if forked:  # the workers have ``work`` already: send index ranges, not the units
            futures = deque(executor.submit(_search_range, a, b) for a, b in bounds)
        else:
            futures = deque(executor.submit(_search_chunk, work[a:b]) for a, b in bounds)
    try:
        while futures:
            hits, part = futures.popleft().result()
            stats.add(part)
            for hit in hits:
                yield hit
                if left is not None:
                    left -= 1
                    if left <= 0:
                        return
            if cancelled is not None and cancelled():
                return
    finally:
        for fut in futures:
            fut.cancel()
        if pool is None:
            executor.shutdown(wait=True, cancel_futures=True)


def _new_executor(
    nworkers: int, query: Query | None, work: list[_Task | _Subtree] | None = None
) -> tuple[ProcessPoolExecutor, bool]:
    """A process pool, and whether its workers are forked (they then inherit ``work``).

    Processes are forked when this process has no other thread (forking a threaded process
    can copy a held lock); otherwise spawned.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    fork = threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    if query is None:
        return ProcessPoolExecutor(max_workers=nworkers, mp_context=ctx), fork
    global _FORK_WORK
    _FORK_WORK = work if fork else None
    try:
        executor = ProcessPoolExecutor(
            max_workers=nworkers, mp_context=ctx, initializer=_init_worker, initargs=(query,)
        )
        if fork:
            # A forking pool starts all its processes on the first submit (Python >= 3.11):
            # start them while ``work`` is set.
            for fut in [executor.submit(_noop) for _ in range(nworkers)]:
                fut.result()
    finally:
        _FORK_WORK = None
    return executor, fork


#: The units of the search being started, for forked workers (see :func:`_new_executor`).
_FORK_WORK: list[_Task | _Subtree] | None = None
_WORKER_WORK: list[_Task | _Subtree] | None = None


def _search_range(start: int, end: int) -> tuple[list[Hit], _Stats]:
    """A batch of the inherited units, by index (nothing to unpickle)."""
    work = _WORKER_WORK if _WORKER_WORK is not None else _FORK_WORK
    assert work is not None
    return _search_chunk(work[start:end])


def _search_chunk_of(args: tuple[Query, list[Any]]) -> tuple[list[Hit], _Stats]:
    """A batch for a pool that outlives one search: the query travels with the batch."""
    query, packed = args
    _init_worker(query)
    return _search_chunk(_unpack(packed))


def _pack(units: list[_Task | _Subtree]) -> list[Any]:
    """Units as plain tuples for a worker process (pickled 3x faster than the dataclasses).

    A slotted dataclass pickles through Python-level ``__getstate__`` calls; tuples of
    strings and numbers pickle in C. A TUI search sends every session's task each time.
    """
    out: list[Any] = []
    for u in units:
        if isinstance(u, _Task):
            info = u.info
            out.append(
                (
                    u.abspath,
                    u.path,
                    u.root,
                    u.maybe,
                    u.read_limit,
                    u.size,
                    None if info is None else tuple(getattr(info, f) for f in _INFO_FIELDS),
                )
            )
        else:
            out.append(u)
    return out


def _unpack(packed: list[Any]) -> list[_Task | _Subtree]:
    """The units :func:`_pack` packed."""
    return [
        _Task(x[0], x[1], x[2], x[3], x[4], x[5], None if x[6] is None else _Info(*x[6]))
        if type(x) is tuple
        else x
        for x in packed
    ]


def _noop() -> None:
    return None


class SearchPool:
    """Worker processes kept between searches (the TUI searches on every pause in typing).

    Starting processes costs a few hundred milliseconds when the caller has threads (they
    are spawned, not forked); a pool kept here pays it once. :meth:`warm` starts it ahead
    of the first search; :meth:`close` ends it. A pool that broke is replaced.
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def executor(self) -> ProcessPoolExecutor:
        """The live executor (started, or restarted after a worker died)."""
        with self._lock:
            ex = self._executor
            # (``_broken`` is how concurrent.futures marks a pool whose worker died.)
            if ex is None or getattr(ex, "_broken", False):
                if ex is not None:
                    ex.shutdown(wait=False, cancel_futures=True)
                ex, _forked = _new_executor(self.workers, None)
                self._executor = ex
            return ex

    def warm(self) -> None:
        """Start the worker processes now (each runs one empty task)."""
        ex = self.executor()
        for fut in [ex.submit(_noop) for _ in range(self.workers)]:
            fut.result()

    def close(self) -> None:
        """Stop the worker processes."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None


def _as_query(query: Query | str) -> Query:
    return query if isinstance(query, Query) else parse_query(query)


def search_sessions(
    sessions: Sequence[SessionSummary],
    query: Query | str,
    limit: int | None = None,
    cancelled: Callable[[], bool] | None = None,
    workers: int | None = None,
    pool: SearchPool | None = None,
) -> SearchRun:
    """Search sessions the caller has already indexed (the TUI), sorted by path then line.

    Session-level filters are decided from the summaries, so a session that fails them is
    never read; nothing is rescanned.

    Args:
        sessions: the summaries to search.
        query: a query string or a parsed :class:`Query`.
        limit: stop after this many hits (None or 0: no limit).
        cancelled: polled between files (or batches of files); True stops the search.
        workers: worker processes for big corpora (default: CPU count; 1: in-process).
        pool: worker processes kept between searches (see :class:`SearchPool`); its size
            then decides the parallelism.

    Returns:
        A :class:`SearchRun`: iterate it for :class:`Hit` objects.

    Raises:
        QueryError: the query is not valid (raised here, before any file is read).
    """
    q = _as_query(query)
    groups = q.session_groups()

    def body(run: SearchRun) -> Generator[Hit, None, None]:
        tasks = _tasks_of(sessions)
        keep: list[_Task | _Subtree] = [
            t for t in tasks if _session_passes(q, t.info, t.path, groups)
        ]
        nworkers = pool.workers if pool is not None else workers
        yield from _execute(keep, q, run, limit, cancelled, nworkers, pool)

    return SearchRun(q, body)


def run_search(
    paths: Sequence[str],
    query: Query | str,
    limit: int | None = None,
    cancelled: Callable[[], bool] | None = None,
    workers: int | None = None,
    use_cache: bool = False,
) -> SearchRun:
    """Search every session under ``paths``; hits sorted by path, then line.

    Without an attribution filter nothing is attributed: files are walked and searched
    directly (see the module docstring). With ``provider:``, ``host:`` or ``flag:`` the roots
    are indexed first and only the sessions that pass are read.

    Args:
        paths: roots (directories or files), as given to ``musetui search``.
        query: a query string or a parsed :class:`Query`.
        limit: stop after this many hits (None or 0: no limit).
        cancelled: polled between files (or batches of files); True stops the search.
        workers: worker processes for big corpora (default: CPU count; 1: in-process).
        use_cache: index through the persistent cache (as ``musetui scan`` does) when an
            attribution filter needs the roots indexed: unchanged files are not read.

    Returns:
        A :class:`SearchRun`: iterate it for :class:`Hit` objects.

    Raises:
        QueryError: the query is not valid (raised here, before any file is read).
    """
    q = _as_query(query)
    roots = [str(p) for p in paths]

    def body(run: SearchRun) -> Generator[Hit, None, None]:
        if q.needs_attribution:
            from musetui.index import Index

            index = Index(roots, workers=workers, use_cache=use_cache, light=True).scan(cancelled)
            if cancelled is not None and cancelled():
                return
            keep = [
                s for s in index.sessions if _session_passes(q, _Info.of(s), s.path, q.session_only)
            ]
            yield from _execute(list(_tasks_of(keep)), q, run, limit, cancelled, workers)
            return
        paths_only = [
            g
            for g in q.session_only
            if all(isinstance(t.atom, FieldFilter) and t.atom.name == "path" for t in g)
        ]
        if len(roots) == 1 and not paths_only:
            yield from _execute(
                _root_units(roots[0], run._stats.notes), q, run, limit, cancelled, workers
            )
            return
        tasks = _walk(roots, run._stats.notes)
        if paths_only:
            tasks = (t for t in tasks if _session_passes(q, None, t.path, paths_only))
        yield from _execute(tasks, q, run, limit, cancelled, workers)

    return SearchRun(q, body)
