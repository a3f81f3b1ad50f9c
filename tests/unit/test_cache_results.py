"""A stored command output: checked line by line, replayed from its held text or decompressed again."""

from __future__ import annotations

import io
import zlib

import orjson
import pytest

from musetui.core import cache_results
from musetui.core.cache_codec import Invalid
from musetui.core.cache_results import Recorder, check
from musetui.core.validate import is_object


def _stored(lines: list[bytes]) -> bytes:
    out = io.BytesIO()
    rec = Recorder(out)
    for line in lines:
        rec.write(line + b"\n")
    blob = rec.blob()
    assert zlib.decompress(blob) == out.getvalue()
    return blob


#: (every fifth holds an integer past 64 bits: simdjson refuses the line, orjson reads it)
RECORDS = [
    orjson.dumps({"n": i, "text": "x" * (i % 97)})[:-1] + (b', "big": 1180591620717411303424}' if i % 5 == 0 else b"}")
    for i in range(3000)
]


@pytest.mark.parametrize("held", [64 << 20, 0])
def test_a_checked_output_replays_its_text(monkeypatch: pytest.MonkeyPatch, held: int) -> None:
    """Held (the common case) or too big to hold (decompressed again): the same text, the same count."""
    monkeypatch.setattr(cache_results, "HELD", held)
    blob = _stored(RECORDS)
    checked = check(blob)
    assert checked.lines == len(RECORDS)
    assert (checked.pieces is None) == (held == 0)
    out = io.BytesIO()
    checked.replay(out)
    assert out.getvalue() == b"".join(r + b"\n" for r in RECORDS) == checked.text()


@pytest.mark.parametrize(
    "bad",
    [b"[1, 2]", b'"a string"', b"{", b'{"a": 1}{"b": 2}', b'{"a": "\xff"}', b"", b'{"a": 1} x'],
)
def test_a_line_that_is_not_one_object_fails_the_check(bad: bytes) -> None:
    with pytest.raises(Invalid):
        check(_stored([RECORDS[0], bad, RECORDS[1]]))


def test_an_output_cut_before_its_last_newline_fails_the_check() -> None:
    blob = zlib.compress(RECORDS[0] + b"\n" + RECORDS[1])
    with pytest.raises(Invalid):
        check(blob)


def test_is_object_is_the_scans_definition_of_a_record() -> None:
    """simdjson reads it, else orjson does (an integer past 64 bits): a JSON object on one line."""
    assert is_object(b'{"n": 18446744073709551616}')  # simdjson refuses it; orjson reads it
    assert is_object(b'{"a": 1, "a": 2}')
    assert not is_object(b"[]")
    assert not is_object(b"null")
    assert not is_object(b'{"a": 1')
    assert not is_object(b'{"a": 1}\x00')
