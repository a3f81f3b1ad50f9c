"""One file against a query: candidate lines from the matcher, then every term on each line."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from musetui.core.search import matcher
from musetui.core.search.files import Info, Task, read
from musetui.core.search.filters import filter_location, item_filter
from musetui.core.search.filters import session_passes as session_passes
from musetui.core.search.locate import first_match, on_line, raw_location, snippet, values
from musetui.core.search.query import (
    REGEX_LINE_CAP,
    Query,
    Term,
    TextTerm,
)
from musetui.core.search.results import Hit, Stats

if TYPE_CHECKING:
    from musetui.core.fingerprints.types import Decoded
    from musetui.core.model import Item


def group_finder(group: tuple[Term, ...]) -> matcher.LineFinder | None:
    """One Hyperscan database for every expression of a group (cached per thread)."""
    pairs = tuple((e, i if e.exact else -1) for i, t in enumerate(group) for e in t.atom.exprs)
    return matcher.finder(pairs)


# ---------------------------------------------------------------------------------------------
# One file
# ---------------------------------------------------------------------------------------------

_UNSET: Any = object()


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
            from musetui.core.fingerprints import extract

            out: list[tuple[Decoded, str | None, str]] = []
            for obj in self.objs:
                for dec, key, path in extract.walk_record(obj):
                    if self.doc and dec.value and dec.value.encode("utf-8", "replace") not in self.raw:
                        continue
                    out.append((dec, key, path))
            self.decoded = out
        return self.decoded


class FileSearch:
    """Searches one file: candidate lines, then the full query on each."""

    def __init__(self, task: Task, query: Query, stats: Stats) -> None:
        self.task = task
        self.query = query
        self.stats = stats
        self.data = b""
        self._doc: Any = _UNSET
        self._capture = False  # an HTTP capture: its records are its interactions
        self._capture_records: list[Any] = []  # (its exchanges as read once, with their lines)
        self.info: Info | None = task.info
        self.sse = False
        self.session_groups = query.session_only
        self.need_full = query.needs_full_session

    # -- data ----------------------------------------------------------------------------------
    def read(self) -> bool:
        """Read the file once (read-only, non-blocking open; up to the indexed size)."""
        t = self.task
        try:
            data = read(t.abspath, t.read_limit)
        except OSError as exc:
            self.stats.notes.append(f"{t.path}: unreadable: {getattr(exc, 'strerror', None) or exc}")
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

    def document(self) -> list[Any] | None:
        """The records of a whole-file JSON document (as the scanner decides), or None for lines."""
        if self._doc is _UNSET:
            from musetui.core.sources import http_capture
            from musetui.core.sources.registry import LOOKUP, identify

            self._doc = None
            shape = identify(self.task.path, self.data)
            if shape.kind == "capture":
                self._capture = True
                self._capture_records = http_capture.records(self.data, self.task.path, LOOKUP)
                self._doc = [r.obj for r in self._capture_records] or None
            elif shape.kind == "document":
                whole = shape.document
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
        from musetui.core.reader import MAX_LINE_BYTES

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
    def session(self) -> Info | None:
        """Format and session id (and, when filters need them, models and times)."""
        if self.info is not None:
            return self.info
        from musetui.core import sources
        from musetui.core.model import SessionSummary, parse_time
        from musetui.core.sources.registry import Sniffer

        t = self.task
        summary = SessionSummary(path=t.path, abspath=t.abspath, root=t.root, format="generic", format_rule="")
        observer: Any = None
        pending: list[tuple[int, Any]] = []
        times: list[Any] = []
        is_doc = self.document() is not None
        if self._capture:
            from musetui.core.sources import http_capture
            from musetui.core.sources.registry import LOOKUP

            if not http_capture.identify(self.data, summary, LOOKUP):
                return None
            models = tuple(dict.fromkeys([m for m in (summary.declared_model, *summary.models) if m]))
            self.info = Info(
                summary.format,
                summary.session_id,
                summary.started_at,
                summary.ended_at,
                models,
                full=self.need_full,
            )
            return self.info
        agent_file = os.path.basename(t.path).startswith("agent-")
        sniffer = Sniffer()
        for line, _off, _len, obj in self.records():
            if observer is None:
                found = sniffer.offer(obj)
                if found is None:
                    pending.append((line, obj))
                    continue
                summary.format = found[0]
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
        self.info = Info(summary.format, summary.session_id, first, last, models, full=self.need_full)
        return self.info

    # -- candidates ----------------------------------------------------------------------------
    def candidates(self, group: tuple[Term, ...]) -> list[tuple[int, int, int]]:
        """(line start, line end, exact term) of the lines the group's expressions hit.

        The exact term is the index in ``group`` of a term whose match on that line is
        already decided (a literal, or a regex Hyperscan runs exactly), else -1.
        """
        lf = group_finder(group)
        return lf.lines(self.data) if lf is not None else []

    # -- evaluation ----------------------------------------------------------------------------
    def run(self, data: bytes | None = None) -> list[Hit]:
        """The file's hits; ``data``: its bytes, when the caller has read them.

        Behind the per-file boundary: a failure inside this file becomes its note.
        """
        try:
            if not (self.read() if data is None else self.use(data)):
                return []
            if self.query.driver >= 0:
                return self._anchored()
            return self._all_items()
        except Exception as exc:
            from musetui.core.diagnostics import internal_error

            self.stats.notes.append(internal_error(self.task.path, exc).text())
            return []

    def _session_ok(self) -> Info | None:
        info = self.session()
        if info is None:
            return None
        if self.session_groups and not session_passes(self.query, info, self.task.path, self.session_groups):
            return None
        return info

    def _anchored(self) -> list[Hit]:
        q = self.query
        group = q.groups[q.driver]
        spans = self.candidates(group)
        encoded = self._encoded_exchanges() if may_encode_bodies(self.task.path, self.data) else []
        if not spans and not encoded:
            return []
        info = self._session_ok()
        if info is None:
            return []
        if encoded:
            return self._encoded_hits(group, info, encoded)
        data = self.data
        doc = self.document()
        doc_items: list[Item] | None = None
        if doc is not None:
            doc_items = self._items_of_doc(info, doc)
        hits: list[Hit] = []
        lineno, prev = 1, 0
        for ls, le, exact in spans:
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
            if exact >= 0:
                unit.memo[id(group[exact].atom)] = "raw"
            hit = self._evaluate(unit, info)
            if hit is not None:
                hits.append(hit)
        return hits

    def _encoded_exchanges(self) -> list[Any]:
        """A capture's exchanges (records) when some of its bodies are stored encoded, else none."""
        if self.document() is None or not self._capture:
            return []
        return self._capture_records  # (read by document(): the capture is parsed once)

    def _encoded_hits(self, group: tuple[Term, ...], info: Info, recs: list[Any]) -> list[Hit]:
        """The hits of a capture whose bodies are base64 (VCR ``!binary``, ``base64_string``, HAR ``encoding``).

        The raw bytes do not show such a body's text, so each exchange is matched as its decoded
        record (what the item view shows: request and response, headers and bodies), and a hit
        is placed on the exchange's first line, one per exchange.
        """
        lf = group_finder(group)
        doc = self.document()
        assert doc is not None
        doc_items = self._items_of_doc(info, doc)
        hits: list[Hit] = []
        for k, rec in enumerate(recs):
            text = orjson.dumps(rec.obj)
            if lf is not None and not lf.lines(text):
                continue
            items = [doc_items[k]] if k < len(doc_items) else doc_items
            unit = _Unit(rec.line, rec.offset, text, [rec.obj], items, True)
            hit = self._evaluate(unit, info)
            if hit is not None:
                hits.append(hit)
        return hits

    def _items_of(self, info: Info, line: int, ls: int, le: int, obj: Any) -> list[Item]:
        from musetui.core import sources
        from musetui.core.sources.base import Record

        try:
            return sources.build_items(info.format, [Record(line, ls, le - ls, obj)])
        except Exception as exc:  # an adapter bug must not end the search
            self.stats.notes.append(f"{self.task.path}:{line}: items not built ({type(exc).__name__})")
            return []

    def _items_of_doc(self, info: Info, doc: list[Any]) -> list[Item]:
        from musetui.core import sources
        from musetui.core.sources.base import Record

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
        elif term.regex is not None:
            if term.regex.line(unit.raw, REGEX_LINE_CAP):
                how = "raw"
            if not term.regex.exact and len(unit.raw) > REGEX_LINE_CAP:
                self.stats.long_lines += 1
        elif term.raw.search(unit.raw):
            how = "raw"
        if how is None and term.window is not None and unit.objs and self._decoded_in(term, unit) is not None:
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

    def _passes(self, unit: _Unit, item: Item | None, info: Info) -> bool:
        for group in self.query.groups:
            ok = False
            for t in group:
                atom = t.atom
                got = (
                    (self._text(atom, unit) is not None)
                    if isinstance(atom, TextTerm)
                    else item_filter(atom, unit.raw, item, info, self.task.path)
                )
                if got != t.negated:
                    ok = True
                    break
            if not ok:
                return False
        return True

    def _evaluate(self, unit: _Unit, info: Info) -> Hit | None:
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
    def _hit(self, unit: _Unit, item: Item | None, info: Info) -> Hit:
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
            located = filter_location(self.query.terms, list(self._walk(unit)), item, unit.raw)
        fld, text, s, e = located
        shown, spans = snippet(text, s, e, terms)
        t = self.task
        return Hit(
            path=t.path,
            abspath=t.abspath,
            session_id=info.session_id,
            line=unit.line,
            field=fld,
            snippet=shown,
            match_spans=spans,
            item_kind=item.kind if item is not None else None,
            offset=unit.offset,
            root=t.root,
        )

    def _walk(self, unit: _Unit) -> Iterator[tuple[str, str, Any, bool]]:
        for obj in unit.objs:
            for entry in values(obj):
                if unit.doc and not on_line(entry[1], entry[2], entry[3], unit.raw):
                    continue
                yield entry

    def _locate(self, term: TextTerm, unit: _Unit) -> tuple[str, str, int, int]:
        """The first value (or key) the term matches: (field, text, start, end)."""
        found = first_match(unit.objs, term.search, unit.raw if unit.doc else None)
        return found if found is not None else raw_location(term, unit.raw)


def _identified(summary: Any, observer: Any, agent_file: bool) -> bool:
    """Whether the first records already fixed the session id (the rest cannot change it)."""
    if summary.format == "claude-code":
        return bool(getattr(observer, "agent", None)) if agent_file else bool(getattr(observer, "session", None))
    return summary.session_id is not None


#: A capture storing bodies encoded: VCR's ``!!binary``/``!binary`` and ``base64_string``, HAR's
#: ``"encoding": "base64"``. Their text is not in the raw bytes (see :meth:`FileSearch._encoded_hits`).
ENCODED_BODY = re.compile(rb"!!?binary |base64_string|\"encoding\": ?\"base64\"")


def may_encode_bodies(path: str, data: bytes | memoryview) -> bool:
    """Whether a file may be a capture whose bodies are encoded (their text is not in its bytes).

    Only names that may hold a capture pay the check; a transcript never does.
    """
    from musetui.core.sources.layouts import may_hold_capture

    return may_hold_capture(path) and ENCODED_BODY.search(data) is not None


def _line_items(items: list[Item], raw: bytes) -> list[Item]:
    """The items of a document written on this line (by their ids), else all of them."""
    mine = [it for it in items if any(i and orjson.dumps(i)[1:-1] in raw for i in it.ids if isinstance(i, str))]
    return mine or items
