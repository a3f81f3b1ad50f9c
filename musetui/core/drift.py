"""Format drift: record kinds and top-level keys that a format's known tables do not list.

Each format declares what it knows as data (:class:`Known`, the ``known`` field of its
:class:`~musetui.core.sources.spec.Format` entry). While a file is scanned, a :class:`Watch`
reads every record's kind and top-level keys and counts those the tables do not list, per
harness version (Claude Code's ``version``, Codex's ``cli_version``). Each file reports them
as diagnostics (so the cache, ``--diagnostics FILE`` and every diagnostics view carry them),
one per version and name, at the line it was first seen; :func:`tally` folds them across
files, so a kind never seen before is listed once, with its first file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from musetui.core.model import Diagnostic

#: A record's kind and nested kind as a :class:`Watch` read them (each None when it is no string).
Kinds = tuple[str | None, str | None]
#: What a record that is no object has.
NO_KINDS: Kinds = (None, None)
#: Every drift diagnostic's message starts with this.
PREFIX = "drift: "
_MESSAGE = re.compile(
    r'^drift: (?P<fmt>[\w.-]+) (?:version (?P<version>"(?:[^"\\]|\\.)*")|\(no version\)): '
    r'unknown (?P<what>[\w -]+?) (?P<name>"(?:[^"\\]|\\.)*") ×(?P<count>\d+)$'
)
#: What a top-level key is called in the messages.
KEY = "top-level key"
#: Longest kind, key or version text kept (longer ones are cut with ``…``).
MAX_NAME = 80
#: Distinct unknown names one file reports; the rest are counted under the name ``…``.
MAX_NAMES = 50


@dataclass(frozen=True, slots=True)
class Known:
    """What a format knows of its records: their kinds and top-level keys, as data.

    Attributes:
        what: what a kind is called in this format (``line type``, ``record type``, ``event kind``).
        kind: the path to a record's kind.
        kinds: the kinds the format reads.
        keys: the top-level keys its records carry.
        version: paths to the harness version; a record that carries one sets it for the lines after it.
        carriers: kinds whose records set the version for the lines after them (others are read only
            when they have drift to report: a Claude Code line carries its own ``version``).
        nested: a kind whose records have kinds of their own -> (the path to them, the known ones, what they are called).
    """

    what: str
    kind: tuple[str, ...]
    kinds: frozenset[str]
    keys: frozenset[str]
    version: tuple[tuple[str, ...], ...] = ()
    carriers: frozenset[str] = frozenset()
    nested: Mapping[str, tuple[tuple[str, ...], frozenset[str], str]] = field(default_factory=dict)


def _dig(doc: Any, path: tuple[str, ...]) -> Any:
    try:
        for key in path:
            doc = doc.get(key)
    except (AttributeError, TypeError, ValueError):
        return None
    return doc


def _cut(text: str) -> str:
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"


class Watch:
    """Counts one file's unknown kinds and keys per harness version (called on every record)."""

    __slots__ = (
        "b0", "b1", "carriers", "k0", "k1", "keys", "kinds", "known", "nested", "paths", "quiet", "seen", "shapes",
        "version",
    )  # fmt: skip

    def __init__(self, known: Known) -> None:
        # (:meth:`_bind`, inline: a watch is made per file)
        got = _DERIVED.get(id(known))
        if got is None or got[0] is not known:
            _derived(known)
            got = _DERIVED[id(known)]
        self.known = known
        self.keys, self.kinds, self.carriers = known.keys, known.kinds, known.carriers
        _known, self.nested, self.k0, self.k1, self.paths = got
        self.b0, self.b1 = self.k0.encode(), None if self.k1 is None else self.k1.encode()
        self.version: str | None = None
        #: (version, what, name) -> [count, first line]
        self.seen: dict[tuple[str | None, str, str], list[int]] = {}
        #: (kind, number of top-level keys) of records whose keys were all known: not checked again.
        self.shapes: set[tuple[object, int]] = set()
        #: (kind, nested kind, number of top-level keys), as :meth:`__call__` reads them first, of records that had
        #: nothing to count -> what the watch returned for them (:meth:`_check`): the same for every such record.
        self.quiet: dict[tuple[object, object, int], Kinds] = {}

    def _bind(self, known: Known) -> None:
        self.known = known
        self.keys, self.kinds, self.carriers = known.keys, known.kinds, known.carriers
        self.nested, self.k0, self.k1, self.paths = _derived(known)
        self.b0, self.b1 = self.k0.encode(), None if self.k1 is None else self.k1.encode()

    def __getstate__(self) -> tuple[Known, str | None, dict[tuple[str | None, str, str], list[int]]]:
        return self.known, self.version, self.seen

    def __setstate__(self, state: tuple[Known, str | None, dict[tuple[str | None, str, str], list[int]]]) -> None:
        known, self.version, self.seen = state
        self._bind(known)
        self.shapes = set()
        self.quiet = {}

    def __call__(self, doc: Any, line: int) -> Kinds:
        """Check one record (a parsed line: a dict, or the scanner's lazy proxy); returns its kinds as read.

        Most records are quiet: a known kind (no version carrier), a known nested kind, a known shape. Their kind,
        nested kind and key count are read first, and what :meth:`_judge` returned for a record that read the same
        is returned at once (:attr:`quiet`); any other record is judged from those values (callgrind, a 121-line
        Muse file: the watch went from ~8.2 k instructions a line to ~6.9 k, of which ~2.5 k are the proxy's four
        lookups and ~0.8 k the call).
        """
        try:  # (keys as bytes: a proxy takes them as they are, a str it encodes first; a dict has none: checked)
            n = len(doc)
            b1 = self.b1
            if b1 is None:
                parent = doc
                kind = doc[self.b0]
            else:
                parent = doc[self.b0]
                kind = parent[b1]
            raw = None
            path = self.paths[kind]
            if path:
                raw = parent
                for key in path:
                    raw = raw[key]
            read = self.quiet.get((kind, raw, n))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return self._check(doc, line)
        if read is not None:
            return read
        return self._judge(doc, line, n, kind, raw, type(raw) is str or raw is None)

    def _check(self, doc: Any, line: int) -> Kinds:
        """Check one record (what :meth:`__call__` does for a record not known quiet).

        This runs on every line: a few lookups of the kind and a key count; the keys are read only for
        a kind and key count not yet seen all known (that costs more than parsing a Claude Code line),
        the version only from the kinds that carry it, or when there is drift to report.

        Kinds are read key by key (the first of duplicate keys, as simdjson's JSON pointers read them),
        a nested kind under the kind's own object (Muse's ``payload.event.kind``) from that object
        (callgrind, a Muse line: ~9.4 k instructions with two JSON pointers, ~8.0 k so). Returned:
        (kind, nested kind), strings or None (no proxy kept), which the format's probe then takes.
        """
        try:
            n = len(doc)
        except (AttributeError, TypeError, ValueError):
            return NO_KINDS  # a number or null: not a record
        parent: Any = None
        k1 = self.k1
        try:
            if k1 is None:
                kind = doc[self.k0]
            else:
                parent = doc[self.k0]
                kind = parent[k1]
        except (KeyError, TypeError, ValueError):
            kind = None  # (an array, or a string: not an object of the format's records)
        skind: Any = None
        sub = self.nested.get(kind) if kind in self.kinds else None
        if sub is not None:
            under, path, _names, _what = sub
            skind = parent if under else doc
            try:
                for key in path:
                    skind = skind[key]
            except (KeyError, TypeError, ValueError):
                skind = None
        return self._judge(doc, line, n, kind, skind, False)

    def _judge(self, doc: Any, line: int, n: int, kind: Any, skind: Any, hush: bool) -> Kinds:
        """The check of a record whose key count, kind and nested kind (as read, if it has one) are read.

        ``hush``: keep what it returns as quiet (:attr:`quiet`), under the values read, if it counts nothing
        (:meth:`__call__` reads them so; ``skind`` a string or null).
        """
        raw = skind
        if kind in self.kinds:  # (a known kind: a string)
            if kind in self.carriers:
                self._read_version(doc)
            sub = self.nested.get(kind)
            if sub is not None:
                names, what = sub[2], sub[3]
                if type(skind) is not str:
                    skind = None
                elif skind not in names:
                    self._read_version(doc)
                    self._add(what, skind, line)
                    hush = False
            read = (kind, skind)
        elif type(kind) is str:
            self._read_version(doc)
            self._add(self.known.what, kind, line)
            read = (kind, None)
        else:
            read = NO_KINDS
        shape = (kind, n)
        if shape in self.shapes:
            if hush:
                self.quiet[(kind, raw, n)] = read
            return read
        try:
            keys = list(doc.keys())
        except AttributeError:
            return read  # an array: not a record
        if self.keys.issuperset(keys):
            self.shapes.add(shape)
            if hush:
                self.quiet[(kind, raw, n)] = read
            return read
        self._read_version(doc)
        for k in keys:
            if k not in self.keys:
                self._add(KEY, k, line)
        return read

    def _read_version(self, doc: Any) -> None:
        for path in self.known.version:
            v = _dig(doc, path)
            if type(v) is str:
                self.version = v
                return

    def _add(self, what: str, name: str, line: int) -> None:
        key = (self.version, what, name)
        entry = self.seen.get(key)
        if entry is None and len(self.seen) >= MAX_NAMES:
            key = (self.version, what, "…")
            entry = self.seen.get(key)
        if entry is None:
            self.seen[key] = [1, line]
        else:
            entry[0] += 1

    def diagnostics(self, path: str, fmt: str) -> list[Diagnostic]:
        """One diagnostic per version and unknown name, at its first line, counting the whole file.

        After an append, the file's diagnostics say it all again: :func:`tally` keeps a file's last word.
        """
        return [
            Diagnostic(path, first, message(fmt, version, what, name, count))
            for (version, what, name), (count, first) in self.seen.items()
        ]


#: What a watch reads its records by, derived once per :class:`Known` (a watch is made per file): id ->
#: (the Known, nested kinds by kind (read from the kind's object?, the keys from there, the known ones, what
#: they are called), first key, second key).
_DERIVED: dict[
    int,
    tuple[
        Known,
        dict[str, tuple[bool, tuple[str, ...], frozenset[str], str]],
        str,
        str | None,
        dict[str, tuple[bytes, ...]],
    ],
] = {}


def _derived(
    known: Known,
) -> tuple[dict[str, tuple[bool, tuple[str, ...], frozenset[str], str]], str, str | None, dict[str, tuple[bytes, ...]]]:
    """The tables :class:`Watch` reads records by (shared, never changed): built on a Known's first watch.

    (callgrind, a 3-line Muse file scanned 50 times: ~25 k instructions a file went to building them.)
    """
    got = _DERIVED.get(id(known))
    if got is None or got[0] is not known:
        if not 1 <= len(known.kind) <= 2:
            raise ValueError("a record's kind is one or two keys deep")
        k1 = known.kind[1] if len(known.kind) == 2 else None
        nested = {}
        for k, (path, names, what) in known.nested.items():
            under = k1 is not None and len(path) > 1 and path[0] == known.kind[0]  # (under the kind's own object)
            nested[k] = (under, path[1:] if under else path, names, what)
        # The kinds :meth:`Watch.__call__` may find quiet -> the keys of their nested kind from what the kind is read
        # in (none: no nested kind). Not the version carriers (their records set the version).
        paths: dict[str, tuple[bytes, ...]] = {}
        for k in known.kinds - known.carriers:
            sub = nested.get(k)
            if sub is None:
                paths[k] = ()
            elif sub[0] or k1 is None:
                paths[k] = tuple(key.encode() for key in sub[1])
        if len(_DERIVED) >= 64:  # (a Known unpickled with a resume state is another object: keep the table small)
            _DERIVED.clear()
        got = _DERIVED[id(known)] = (known, nested, known.kind[0], k1, paths)
    return got[1:]


def message(fmt: str, version: str | None, what: str, name: str, count: int) -> str:
    """``drift: claude-code version "2.1.3": unknown line type "foo" ×2``."""
    ver = f"version {orjson.dumps(_cut(version)).decode()}" if version is not None else "(no version)"
    return f"{PREFIX}{fmt} {ver}: unknown {what} {orjson.dumps(_cut(name)).decode()} ×{count}"


@dataclass(frozen=True, slots=True)
class Row:
    """One unknown kind or key of one format and version, over every file that has it."""

    format: str
    version: str | None
    what: str
    name: str
    count: int
    files: int
    first_path: str
    first_line: int

    def text(self) -> str:
        """``drift: codex version "0.141.0": unknown record type "x" ×3 in 2 files``."""
        head = message(self.format, self.version, self.what, self.name, self.count)
        return f"{head} in {self.files:,} file{'s' if self.files != 1 else ''}"


def parse(diag: Diagnostic) -> tuple[str, str | None, str, str, int] | None:
    """(format, version, what, name, count) of a drift diagnostic, else None."""
    if not diag.message.startswith(PREFIX):
        return None
    m = _MESSAGE.match(diag.message)
    if m is None:
        return None
    version = m.group("version")
    return (
        m.group("fmt"),
        orjson.loads(version) if version else None,
        m.group("what"),
        orjson.loads(m.group("name")),
        int(m.group("count")),
    )


def is_drift(diag: Diagnostic) -> bool:
    """Whether ``diag`` reports format drift."""
    return diag.message.startswith(PREFIX) and _MESSAGE.match(diag.message) is not None


def tally(diags: Iterable[Diagnostic]) -> list[Row]:
    """Drift diagnostics folded across files: one row per format, version, kind of name and name.

    Rows keep the order in which their names were first met (the first file and line are those).
    A file that reports the same name again (its scan resumed after an append) replaces its count.
    """
    rows: dict[tuple[str, str | None, str, str], dict[str, tuple[int, int]]] = {}
    for d in diags:
        p = parse(d)
        if p is None:
            continue
        fmt, version, what, name, count = p
        rows.setdefault((fmt, version, what, name), {})[d.path] = (count, d.line)
    out = []
    for (f, v, w, n), files in rows.items():
        first_path, (_, first_line) = next(iter(files.items()))
        out.append(Row(f, v, w, n, sum(c for c, _ in files.values()), len(files), first_path, first_line))
    return out


def stats_line(diags: Iterable[Diagnostic]) -> str | None:
    """``drift: 3 unknown kinds or keys (5 records) in 2 formats``, or None when there is none."""
    rows = tally(diags)
    if not rows:
        return None
    records = sum(r.count for r in rows)
    formats = len({r.format for r in rows})
    per = ", ".join(
        f"{fmt} {orjson.dumps(_cut(ver)).decode() if ver is not None else '(no version)'} ×{n}"
        for (fmt, ver), n in _per_version(rows).items()
    )
    return (
        f"drift: {len(rows)} unknown {'kind or key' if len(rows) == 1 else 'kinds or keys'} "
        f"({records:,} record{'s' if records != 1 else ''}) in {formats} format{'s' if formats != 1 else ''}: {per}"
    )


def _per_version(rows: Iterable[Row]) -> dict[tuple[str, str | None], int]:
    out: dict[tuple[str, str | None], int] = {}
    for r in rows:
        out[(r.format, r.version)] = out.get((r.format, r.version), 0) + r.count
    return out


#: The report appendix's drift table: its header, and :func:`table_rows` its rows.
TABLE_HEADER = ("format", "version", "unknown", "name", "records", "files", "first seen")


def table_rows(diags: Iterable[Diagnostic]) -> list[tuple[str, str, str, str, str, str, str]]:
    """The rows of the report's drift table, one per :func:`tally` row (plain text: each view escapes it)."""
    return [
        (
            r.format,
            _cut(r.version) if r.version is not None else "-",
            r.what,
            _cut(r.name),
            f"{r.count:,}",
            f"{r.files:,}",
            f"{r.first_path}:{r.first_line}",
        )
        for r in tally(diags)
    ]
