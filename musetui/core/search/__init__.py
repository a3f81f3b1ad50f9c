"""Search every session: a query language, a compiled matcher and an executor.

Three parts, each its own module (as ripgrep splits searcher, matcher and engines):

* :mod:`.query`: the language. ``foo bar`` is an AND, ``|`` an OR inside it, ``-term`` a
  negation; words and ``"phrases"`` are literals found in any of their JSON encodings,
  ``/regex/`` is a Python regular expression over the raw line; ``field:value`` filters
  (session level: decided from the index; item level: per item). See :data:`QUERY_HELP`.
* :mod:`.matcher`: every literal, regex and hint of the query's driving group compiled
  into one Hyperscan database, matched in one linear-time pass over each file buffer.
  Smart case and character classes are written out as bytes ``re`` means them.
* :mod:`.executor` (with :mod:`.files` and :mod:`.evaluate`): walk the roots with the index's
  candidate rules, read each file once, match, then parse only the candidate lines (orjson)
  to check the other terms and the item filters; :mod:`.locate` names the field and cuts
  the snippet; forked helpers or a process pool for big trees; hits sorted by path, then
  line (:mod:`.results`).

What a term matches
===================
A hit is one physical line of a session file (like ``rg``). A word or phrase matches the
raw line in any JSON spelling (plain, ``\\"``-escaped, ``\\uXXXX``, escaped twice); a
``/regex/`` matches the raw line bytes (``\\w``, ``\\d``, ``\\s`` are ASCII); a UTC date or
time also matches ids and tokens whose decoded time falls in it (the decoders confirm).
The ``field`` of a hit is the JSON path of the first value (or key) the term matches, or
``raw``. A query with no positive text term reports every item that passes.

Linear time
===========
Hyperscan runs a regex in time linear in the input, so ``(a+)+$`` on a 1 MiB line is as
quick as a literal. A regex that needs a construct Hyperscan lacks (back-references,
look-arounds, atomic groups, possessive repeats, conditional groups) needs backtracking, which
no linear-time engine runs: the query is refused with the construct named, never run for hours
(RE2 lacks the same constructs). A newline in a pattern matches nothing, as no line holds one.
"""

from __future__ import annotations

from musetui.core.search.executor import SearchPool
from musetui.core.search.query import (
    FIELDS,
    QUERY_HELP,
    REGEX_LINE_CAP,
    SNIPPET_MAX,
    FieldFilter,
    Query,
    QueryError,
    Term,
    TextTerm,
    parse_query,
)
from musetui.core.search.results import Hit, SearchRun
from musetui.core.search.run import run_search, search_sessions

__all__ = [
    "FIELDS",
    "QUERY_HELP",
    "REGEX_LINE_CAP",
    "SNIPPET_MAX",
    "FieldFilter",
    "Hit",
    "Query",
    "QueryError",
    "SearchPool",
    "SearchRun",
    "Term",
    "TextTerm",
    "parse_query",
    "run_search",
    "search_sessions",
]
