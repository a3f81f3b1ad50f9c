"""Validate: which lines of a window are JSON records (simdjson; orjson has the last word), and why the others are not."""

from __future__ import annotations

from typing import Any

import orjson
import simdjson

from musetui.core.diagnostics import LineError
from musetui.core.drift import Kinds
from musetui.core.model import Malformed
from musetui.core.reader import sse_payload
from musetui.core.scan.stages import RecordWatch, Validated, Window
from musetui.core.validate import SHARED_PARSER_BYTES, keep_parser, thread_parser

__all__ = ["LONE_CR", "parse_any", "record", "second_opinion", "validate"]

#: A line that fails to parse and holds a CR that ends no line: lone-CR (classic Mac OS) line ends.
LONE_CR = "lone CR line ends (classic Mac OS): musetui reads lines ending in LF or CRLF"


def validate(window: Window, sse: bool, grew: bool, max_line: int, watch: RecordWatch | None = None) -> Validated:
    """The records of ``window``: each line trimmed (an SSE line: its payload) and validated.

    A line is a record when simdjson reads it, or else orjson (the reference parser) does.
    Lines over ``max_line`` bytes, and lines neither reads, are malformed, with a reason.
    ``watch`` (format drift, once the format is known) sees each record as it is parsed here.
    """
    lines, n, base_line = window.lines, len(window.lines), window.base_line
    parser = thread_parser()
    parse = parser.parse
    see = watch.__call__ if watch is not None else None  # (bound: calling the watch costs a slot lookup)
    kinds: list[Kinds] = []  # (what the watch read of each record, for the format's probe)
    start = 0
    if not sse and window.size <= max_line:  # (no line can be over the limit)
        start = _plain_run(lines, parse, see, base_line, kinds)
        if start == n:  # every line a plain record (most windows): what the loop below leaves for them
            if window.size > SHARED_PARSER_BYTES:  # (else keep_parser keeps the thread's parser, as it is)
                keep_parser(parser, window.size)
            return Validated(list(range(n)), lines[:], [], kinds if see is not None else None)
    records, texts = list(range(start)), lines[:start]
    malformed: list[Malformed] = []
    add_record, add_text, add_kinds = records.append, texts.append, kinds.append
    i = -1
    try:
        for i in range(start, n):
            line = lines[i]
            if not line:
                continue
            c = line[0]
            if c in (32, 9, 13):
                line = line.strip()
                if not line:
                    continue
            elif line[-1] == 13:
                line = line[:-1]
            if sse:
                payload = sse_payload(line)
                if payload is None:
                    continue
                line = payload
            if len(line) > max_line:
                reason = f"line of {len(line):,} bytes exceeds the {max_line // 2**20} MiB limit"
                malformed.append(Malformed(base_line + i + 1, window.starts[i], reason))
                continue
            try:
                doc = parse(line)  # (dropped at once below: the parser is free for the next line)
            except (ValueError, RuntimeError, UnicodeDecodeError) as exc:
                doc, parser = second_opinion(exc, line, parser)
                parse = parser.parse
                if doc is None:
                    last = window.partial_last and i == n - 1
                    malformed.append(Malformed(base_line + i + 1, window.starts[i], _classify(exc, line, last, grew)))
                    continue
            if see is not None:
                add_kinds(see(doc, base_line + i + 1))
            del doc
            add_record(i)
            add_text(line)
    except Exception as exc:
        raise LineError(base_line + i + 1, exc) from exc
    # Keep the parser (or its replacement, when the old one refused re-use) unless its buffers
    # may have grown to a big line's size.
    keep_parser(parser, window.size)
    return Validated(records, texts, malformed, kinds if see is not None else None)


def _plain_run(lines: list[bytes], parse: Any, see: Any, base_line: int, kinds: list[Kinds]) -> int:
    """How many of the first lines are plain records (:func:`validate`'s loop, for the lines it leaves as they are).

    Each is a line :func:`validate` would not trim (not empty, no space, tab or CR first, no CR last) that
    simdjson reads; the first line that is not stops the run, and :func:`validate` goes on from there
    (parsing it again). The run's records are then its indices and lines, built at once (~1 k instructions
    a line less, callgrind). Only for a window of no SSE lines, none of which can be over the line limit.
    ``kinds`` gets what the drift watch ``see`` (if any) read of each record.
    """
    add_kinds = kinds.append
    i = 0
    try:
        for line in lines:
            if not line or line[0] in _TRIMMED or line[-1] == 13:
                break
            try:
                doc = parse(line)
            except (ValueError, RuntimeError, UnicodeDecodeError):
                break  # (validate parses it again, and asks orjson)
            if see is not None:
                add_kinds(see(doc, base_line + i + 1))
            del doc  # (the parser is free for the next line)
            i += 1
    except Exception as exc:
        raise LineError(base_line + i + 1, exc) from exc
    return i


#: First bytes :func:`validate` trims a line at (space, tab, CR).
_TRIMMED = b" \t\r"


def _classify(exc: BaseException, line: bytes, partial_last: bool, grew: bool) -> str:
    msg = str(exc)
    if b"\r" in line.rstrip(b"\r"):
        return LONE_CR
    if partial_last:
        return "truncated: last line is incomplete (no newline; the file may still be being written)"
    if b"\x00" in line[:4096]:
        return "binary data (NUL bytes), not JSON"
    if isinstance(exc, UnicodeDecodeError) or "UTF8" in msg or "UTF-8" in msg:
        return "invalid UTF-8"
    if "DEPTH" in msg or "depth" in msg:
        return "nested deeper than the parser limit (1024 levels)"
    if "STRING_ERROR" in msg:
        return "invalid JSON string (bad escape or lone surrogate)"
    if "TAPE_ERROR" in msg:
        return "invalid JSON (truncated or broken structure)"
    return "invalid JSON (" + msg.split(":", 1)[0][:60] + ")"


def second_opinion(exc: BaseException, line: bytes, parser: Any) -> tuple[Any, Any]:
    """A line simdjson refused, judged by orjson (the reference parser); returns (record or None, parser).

    orjson decides what a record is everywhere (the item view and search use it): a line
    simdjson cannot hold (an integer beyond 64 bits) is still a record when orjson reads it.
    A parser that refuses to be re-used (a proxy of its last document is still alive) is
    replaced, and the line parsed again.
    """
    if isinstance(exc, RuntimeError) and "re-use" in str(exc):
        parser = simdjson.Parser()
        try:
            return parser.parse(line), parser
        except (ValueError, RuntimeError, UnicodeDecodeError):
            pass
    try:
        return orjson.loads(line), parser
    except orjson.JSONDecodeError:
        return None, parser


def record(line: bytes) -> Any:
    """The record an observer sees: the line as orjson reads it (else as simdjson reads it).

    simdjson only validates the lines; the few that an observer reads are parsed again by
    orjson, the parser of the item view and of search, so that all three agree on what a
    line holds (the last of duplicate keys wins, as in orjson, JSON.parse and Python's json).
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:  # (rare: a parser of its own, which the record's proxy keeps alive)
        return parse_any(simdjson.Parser(), line)


def parse_any(parser: Any, line: bytes) -> Any:
    """One line as a record (simdjson, else orjson), or None when it is not JSON."""
    try:
        return parser.parse(line)
    except (ValueError, RuntimeError, UnicodeDecodeError) as exc:
        return second_opinion(exc, line, parser)[0]
