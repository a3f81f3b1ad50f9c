"""The id-shape table (shapes.toml) is checked as it is read, and the decoders classify by it."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from musetui.core.fingerprints import decoders as d
from musetui.core.fingerprints import shapes
from musetui.core.fingerprints.decoders.tools import _classify_tool_id

_CLASSIFIERS = {
    "chatcmpl-id": d.decode_chatcmpl_id,
    "system-fingerprint": d.classify_system_fingerprint,
    "tool-id": d.classify_tool_id,
}


def test_every_row_classifies_its_example_to_itself() -> None:
    """No row is shadowed by an earlier one, and each decodes to what the file says."""
    table = shapes.table()
    for detector in shapes.DETECTORS:
        rows = table.of(detector)
        assert rows, detector
        for row in rows:
            got = _CLASSIFIERS[detector](row.example)
            assert got is not None, (detector, row.shape, row.example)
            assert (got.detector, got.shape, got.provider, got.host) == (detector, row.shape, row.provider, row.host)
            assert (got.strength, got.tag, got.meaning, got.time) == (row.strength, row.tag, row.meaning, None)
            assert got.fields[0] == row.first_field
            strong = _classify_tool_id(row.example, strong_only=True) if detector == "tool-id" else got
            assert (strong is None) == (detector == "tool-id" and row.needs_id_key), row.shape


def test_a_family_prefix_claims_its_ids() -> None:
    """An id that starts with a family's prefix but fits none of its rows is no tool id."""
    assert d.classify_tool_id("call_abc") is None
    assert d.classify_tool_id("functions.x-1757000000000-abcdef") is None  # not Gemini CLI's
    assert d.classify_tool_id("run-1757000000000-abcdef0123456789") is not None  # no family: Gemini CLI's
    got = d.classify_system_fingerprint("fp_8802369eaa_prod0623_fp8_kvcache")
    assert got is not None and got.fields == (("shape", "fp_ + 10 hex + _prod…"), ("build", "prod0623_fp8_kvcache"))


def _data() -> dict[str, Any]:
    with shapes.BUILTIN_PATH.open("rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"provider": "opneai"}, "provider 'opneai' is not one of"),
        ({"host": "azur"}, "host 'azur' is not one of"),
        ({"strength": "strongest"}, "strength"),
        ({"tag": "rumour"}, "tag"),
        ({"pattern": "call_[a-z"}, "pattern does not compile"),
        ({"colour": "red"}, "unknown key(s) colour"),
        ({"detector": "chat-id"}, "detector 'chat-id'"),
        ({"meaning": ""}, "meaning must be a non-empty string"),
        ({"needs_id_key": "yes"}, "needs_id_key must be true or false"),
    ],
)
def test_a_bad_row_is_refused_at_load(change: dict[str, str], message: str) -> None:
    data = _data()
    data["shape"][0] = {**data["shape"][0], **change}
    with pytest.raises(shapes.ShapeTableError, match=message.replace("(", r"\(").replace(")", r"\)")):
        shapes.parse(data)


def test_prefix_is_for_tool_ids_only() -> None:
    data = _data()
    data["shape"][0] = {**data["shape"][0], "prefix": "chatcmpl-"}
    with pytest.raises(shapes.ShapeTableError, match="tool-id rows"):
        shapes.parse(data)
