"""The validating JSON parser: one simdjson parser per thread, shared by its scans.

simdjson only validates most lines (the few an observer reads are parsed again by orjson), so
one parser's buffers serve every file a thread scans; they are sized once, not per file.
"""

from __future__ import annotations

import threading
from typing import Any

import orjson
import simdjson

_LOCAL = threading.local()
#: A parser that read more than this many bytes at once is dropped (its buffers keep that size).
SHARED_PARSER_BYTES = 4 * 1024 * 1024


def thread_parser() -> Any:
    """This thread's simdjson parser."""
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = simdjson.Parser()
    return parser


def keep_parser(parser: Any, nbytes: int) -> None:
    """Keep ``parser`` (or its replacement) as this thread's, unless it read ``nbytes`` at once past the limit."""
    _LOCAL.parser = parser if nbytes <= SHARED_PARSER_BYTES else None


def parses(line: bytes) -> bool:
    """Whether simdjson reads ``line`` (with this thread's parser, or a new one when it refuses re-use)."""
    parser = thread_parser() if len(line) <= SHARED_PARSER_BYTES else simdjson.Parser()
    try:
        doc = parser.parse(line)
    except RuntimeError as exc:
        if "re-use" not in str(exc):
            return False
        parser = _LOCAL.parser = simdjson.Parser()
        try:
            doc = parser.parse(line)
        except (ValueError, RuntimeError, UnicodeDecodeError):
            return False
    except (ValueError, UnicodeDecodeError):
        return False
    del doc
    return True


def is_object(line: bytes) -> bool:
    """Whether ``line`` is one JSON object: simdjson reads it, else orjson (the reference parser) does.

    The scan's definition of a record (see :mod:`musetui.core.scan.validate`). simdjson only
    validates, so no Python object is built for a line it reads; a line past the shared
    parser's size goes to orjson, so the shared buffers never grow.
    """
    try:
        if len(line) > SHARED_PARSER_BYTES:
            raise ValueError("past the shared parser's size")
        doc = thread_parser().parse(line)
    except (ValueError, RuntimeError, UnicodeDecodeError):
        try:
            return type(orjson.loads(line)) is dict
        except orjson.JSONDecodeError:
            return False
    ok = type(doc) is simdjson.Object
    del doc
    return ok
