"""The scanner's stages, each on its own: a window's lines, which are records, and what observing them gives."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from musetui.core.model import SessionSummary
from musetui.core.reader import MAX_LINE_BYTES
from musetui.core.scan import windows
from musetui.core.scan.observe import observe, presniff
from musetui.core.scan.validate import LONE_CR, validate
from musetui.core.sources import registry
from musetui.core.sources.registry import Sniffer

DATA = (
    b'{"timestamp":"2026-09-01T22:05:28.511Z","type":"session_meta","payload":{"id":"s1","cwd":"/w",'
    b'"originator":"codex_cli_rs","cli_version":"0.141.0"}}\n'
    b"\n"
    b'  {"a": 1}  \r\n'
    b"not json\n"
    b'{"b":2}\rX\n'
    b'{"c":3'
)


def _summary() -> SessionSummary:
    return SessionSummary(
        path="s.jsonl", abspath="/x/s.jsonl", root="/x", format="generic", format_rule="", size=len(DATA),
        mtime_ns=0, inode=0, device=0, read_bytes=len(DATA),
    )  # fmt: skip


def test_validate_returns_the_records_their_text_and_the_malformed_lines() -> None:
    window = windows.window(DATA, 0, 0, _summary(), grew=False)
    assert window.partial_last and len(window.lines) == 6
    checked = validate(window, sse=False, grew=False, max_line=MAX_LINE_BYTES)
    assert checked.records == [0, 2]
    assert checked.texts[1] == b'{"a": 1}'  # trimmed: the observer reads what the parser read
    reasons = {m.line: m.reason for m in checked.malformed}
    assert set(reasons) == {4, 5, 6}
    assert reasons[5] == LONE_CR and reasons[6].startswith("truncated")


def test_observe_sniffs_the_format_then_times_each_record() -> None:
    summary = _summary()
    window = windows.window(DATA, 0, 0, summary, grew=False)
    checked = validate(window, sse=False, grew=False, max_line=MAX_LINE_BYTES)
    seen = observe(window, checked, summary, None, None)
    assert seen.observer is not None and seen.fmt == summary.format == "codex"
    assert seen.times[0] == "2026-09-01T22:05:28.511Z" and summary.session_id == "s1"
    assert len(seen.times) == len(window.lines) and len(seen.zones) == len(window.lines)
    empty = windows.window(b"\n\n", 0, 0, summary, grew=False)
    nothing = observe(empty, validate(empty, False, False, MAX_LINE_BYTES), summary, None, None)
    assert nothing.observer is None  # no record: a later window may have the first


def test_presniff_decides_as_the_sniffer_does_on_a_first_record() -> None:
    """:func:`presniff` decides without a :class:`Sniffer`: what one decides on its first record (held back: None)."""
    firsts = [
        b'{"stream":{"kind":"session","id":"s"},"recorded_at":1,"payload":{"kind":"metadata","record":{}}}',
        b'{"timestamp":"t","type":"session_meta","payload":{"id":"s1"}}',
        b'{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}',
        b'{"unknown": 1}',
        b"[1, 2]",
        b"3",
    ]
    for first in firsts:
        for rest in (b"", b'\n{"x": 2}\n', b"\n"):  # the only line (unended, ended) or one of several
            data = first + rest
            window = windows.window(data, 0, 0, _summary(), grew=False)
            got = presniff(window, False, MAX_LINE_BYTES)
            want = Sniffer().offer(orjson.loads(first), last=len(window.lines) == 1)
            assert (None if got is None else (got[0].fmt, got[0].rule, got[1])) == (
                None if want is None else (*want, 0)
            ), data


@given(st.binary(max_size=40).map(lambda b: bytes(b"ab\n\r "[x % 5] for x in b)), st.data())
def test_split_upto_reads_the_lines_one_find_each_reads(data: bytes, draw: st.DataObject) -> None:
    """:func:`windows.split_upto` splits by ``BytesIO.readlines`` where no cap can bind: what a ``find`` per line gives."""
    base = draw.draw(st.integers(0, len(data)))
    for cap in (-1, 0, 1, 2, 3, len(data) - base, len(data) - base + 1, 1 << 18):
        assert windows.split_upto(data, base, cap) == windows._split_capped(data, base, cap), (data, base, cap)


def test_a_one_line_file_is_tried_as_a_capture_or_an_array_by_its_first_byte() -> None:
    """:func:`identify` asks the one-line capture only of an object, the array only of an array: what asking both gives."""
    har = b'{"log":{"version":"1.2","entries":[{"request":{"method":"POST","url":"https://api.openai.com/v1/x"},'
    har += b'"response":{"status":200,"content":{"text":"{}"}}}]}}'
    claude = b'[{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}]'
    for doc in (har, claude, b'{"a":1}', b"[1,2]"):
        for lead, end in ((b"", b""), (b" \t", b"\n"), (b"\x0c", b" \n")):
            data = lead + doc + end
            shape = registry.identify("x.json", data)
            capture, array = registry._one_line_capture(data), registry._one_line_array(data)
            want = ("capture", capture) if capture is not None else ("document", array) if array else ("lines", None)
            assert (shape.kind, shape.document) == want, data
    assert registry.identify("x.json", har).kind == "capture"
    assert registry.identify("x.json", b" " + claude).kind == "document"
