"""Validation's run of plain lines (parsed as they are, records built at once) gives what its line-by-line
loop gives: the same records, texts, malformed lines and drift-watch calls, on adversarial lines (hypothesis)."""

from __future__ import annotations

import dataclasses
from typing import Any

import simdjson
from hypothesis import given
from hypothesis import strategies as st

from musetui.core.model import SessionSummary
from musetui.core.scan import windows
from musetui.core.scan.validate import validate
from musetui.core.validate import thread_parser

_LINES = st.one_of(
    st.sampled_from(
        [
            b'{"a":1}',
            b"[1,2]",
            b"7",
            b'"s"',
            b"",
            b"  ",
            b' {"a":1} ',
            b'{"a":1}\r',
            b'{"a":1} ',
            b"\t[]",
            b'{"a":1},{"b":2}',
            b'{"k":[[{}',
            b"{}]]}",
            b'{"big":123456789012345678901234567890}',
            b'{"s":"\\ud800"}',
            b"\xff",
            b"nul\x00",
            b'{"a":1}\rX',
            b"{",
        ]
    ),
    st.binary(max_size=12),
)


class _Seen:
    """A drift watch that keeps what it was shown."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, Any]] = []

    def __call__(self, doc: Any, line: int) -> tuple[str, None]:
        self.calls.append((line, doc.mini if isinstance(doc, simdjson.Object | simdjson.Array) else doc))
        return str(line), None  # (the kinds validate keeps per record)

    def diagnostics(self, path: str, fmt: str) -> list[Any]:
        return []


def _validated(window: windows.Window, max_line: int) -> tuple[Any, list[tuple[int, Any]]]:
    watch = _Seen()
    checked = validate(window, False, False, max_line, watch)
    return (checked.records, checked.texts, checked.malformed, checked.kinds), watch.calls


@given(st.lists(_LINES, max_size=10), st.booleans(), st.integers(0, 3))
def test_the_run_of_plain_lines_is_the_loop(lines: list[bytes], newline_last: bool, base_line: int) -> None:
    data = b"\n".join(lines) + (b"\n" if newline_last and lines else b"")
    summary = SessionSummary(path="s.jsonl", abspath="/x/s.jsonl", root="/x", format="generic", format_rule="")
    window = windows.window(data, base_line, 0, summary, grew=False)
    max_line = max(64, window.size)
    run = _validated(window, max_line)  # (a window no line of which can be over the limit: the run first)
    loop = _validated(dataclasses.replace(window, size=max_line + 1), max_line)  # (the loop alone)
    assert run == loop
    parser = thread_parser()
    validate(window, False, False, max_line)
    assert thread_parser() is parser  # (a small window keeps the thread's parser, whichever way it went)
