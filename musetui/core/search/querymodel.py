"""A parsed query: its terms, filters and groups, and the fields a filter can name (no I/O).

:mod:`.query` builds them from the query's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, get_args

from musetui.core.model import ItemKind
from musetui.core.search.matcher import Expr, TermRegex

__all__ = [
    "ATTRIBUTION_FIELDS",
    "FIELDS",
    "HAS_VALUES",
    "ITEM_FIELDS",
    "ITEM_KINDS",
    "REGEX_LINE_CAP",
    "SESSION_FIELDS",
    "SNIPPET_MAX",
    "FieldFilter",
    "Query",
    "QueryError",
    "Term",
    "TextTerm",
]

#: Longest part of one line that Python ``re`` confirms a prefiltered regex over.
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


class QueryError(ValueError):
    """A query that cannot be parsed or run; the message says why, on one line."""


# ---------------------------------------------------------------------------------------------
# The parsed query
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class TextTerm:
    """A word, a quoted phrase or a ``/regex/``.

    Attributes:
        kind: ``word``, ``phrase`` or ``regex``.
        text: the word, the phrase (unescaped) or the regex source.
        case_sensitive: smart case: True when the text has an uppercase letter.
        matcher: the term over decoded text (JSON values, snippets).
        raw: the term over raw line bytes (every JSON encoding, for literals).
        literal: the plain-ASCII literal (lowercased when case-insensitive), if it applies.
        window: for a date/time term, the UTC window ``[start, end)`` in unix seconds.
        exprs: what finds candidate lines (Hyperscan expressions; see :mod:`.matcher`).
        regex: for a ``/regex/``, its line check and match spans (linear-time when exact).
    """

    kind: Literal["word", "phrase", "regex"]
    text: str
    case_sensitive: bool
    matcher: re.Pattern[str]
    raw: re.Pattern[bytes]
    literal: bytes | None = None
    window: tuple[float, float] | None = None
    exprs: tuple[Expr, ...] = ()
    encoded_matcher: re.Pattern[str] | None = None  # the raw encodings, over decoded raw text
    score: float = 0.0
    regex: TermRegex | None = None

    @property
    def lower(self) -> bool:
        """True when the literal is compared with a lowered line."""
        return not self.case_sensitive and self.literal is not None and self.literal != self.literal.upper()

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the term matches decoded ``text`` (character offsets)."""
        if self.regex is not None:
            return self.regex.spans(text)
        return [m.span() for m in self.matcher.finditer(text)]

    def search(self, text: str) -> tuple[int, int] | None:
        """The first match of the term in decoded ``text``."""
        if self.regex is not None:
            return self.regex.search(text)
        m = self.matcher.search(text)
        return m.span() if m is not None else None

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
    exprs: tuple[Expr, ...] = ()
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
        only = tuple(g for g in self.groups if all(isinstance(t.atom, FieldFilter) and t.atom.session_level for t in g))
        object.__setattr__(self, "session_only", only)
        object.__setattr__(self, "needs_full_session", bool(self.field_names() & {"model", "after", "before"}))

    @property
    def needs_attribution(self) -> bool:
        """True when a filter needs attribution verdicts (provider, host, flag)."""
        return any(isinstance(t.atom, FieldFilter) and t.atom.name in ATTRIBUTION_FIELDS for t in self.terms)

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
