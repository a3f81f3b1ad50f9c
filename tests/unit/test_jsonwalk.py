"""The one JSON walk: a root that is no container, and values of types orjson never builds."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from musetui.core import jsonwalk
from musetui.core.jsonwalk import Steps, entries, find_path, find_unique, spells_needles, steps_of


class _Text(str):
    """A ``str`` subclass: walked as a string."""


def test_a_string_root_holding_json_is_walked_below_its_path() -> None:
    assert list(entries('{"a": [1, "x"]}', "args")) == [
        ("args", None, None, '{"a": [1, "x"]}', False, 0),
        ("args<json>", "a", "a", [1, "x"], True, 1),
        ("args<json>.a", 0, "a", 1, False, 2),
        ("args<json>.a", 1, "a", "x", False, 2),
    ]
    # With leaves as levels, the JSON sits one level below its string: past max_depth it is not walked.
    assert list(entries('{"a": 1}', "args", leaves_nest=True, max_depth=0)) == [
        ("args", None, None, '{"a": 1}', False, 0)
    ]
    assert list(entries('{"a": 1}', "args", json=False)) == [("args", None, None, '{"a": 1}', False, 0)]


def test_a_scalar_root_is_an_entry_only_when_scalars_are_visited() -> None:
    assert list(entries(7, "n")) == [("n", None, None, 7, False, 0)]
    assert list(entries(7, "n", scalars=False)) == []
    assert list(entries(7, "n", depth=3, max_depth=2)) == []


def test_subclasses_of_str_and_dict_are_walked_as_their_base_types() -> None:
    got = list(entries({"k": _Text("v"), "o": OrderedDict(z=[True])}, keys=False))
    assert got == [("", "k", "k", "v", False, 1), ("o.z", 0, "z", True, False, 3)]
    assert type(got[0][3]) is _Text


# --- find_unique: find_path read off a guessed path, where the text shows the needle is in one place

_NEEDLES = ["rs_1", "ab", "key", "a/b"]
_LEAF = st.sampled_from(
    ["rs_1", "ab", "", "x rs_1", '{"a": "rs_1"}', '["rs_1"]', "key", "a/b", "xa/bx", "q", "key_n", '{"key_n": 1}']
)
_RECORD = st.recursive(
    st.one_of(_LEAF, st.integers(-5, 5), st.booleans(), st.none()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["a", "b", "key", "rs_1", "a.b", "", "[0]", "id", "key_n", "xkey"]), inner, max_size=4
        ),
    ),
    max_leaves=20,
)


def _escape_some(text: bytes, picks: list[int]) -> bytes:
    """``text`` with some printable ASCII letters inside strings spelled as ``\\u00XX`` (and ``/`` as ``\\/``)."""
    out = bytearray()
    in_string = escaped = False
    for i, b in enumerate(text):
        if in_string and not escaped and b != 0x22 and b != 0x5C and i in picks:
            out += b"\\/" if b == 0x2F else b"\\u%04x" % b
            continue
        out.append(b)
        if escaped:
            escaped = False
        elif b == 0x5C:
            escaped = in_string
        elif b == 0x22:
            in_string = not in_string
    return bytes(out)


def _all_steps(obj: Any, here: Steps = ()) -> list[Steps]:
    """The members leading to every member of ``obj`` (the best guesses there are), and a few wrong ones."""
    got: list[Steps] = [(), ("a",), ("a", 0), (0, "a")] if not here else []
    members = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in members:
        got.append((*here, k))
        got.extend(_all_steps(v, (*here, k)))
    return got


@settings(max_examples=1500, deadline=None)
@given(
    _RECORD,
    st.sampled_from(_NEEDLES),
    st.booleans(),
    st.lists(st.integers(0, 200), max_size=6),
    st.integers(0, 3),
    st.booleans(),
)
def test_find_unique_is_find_path_when_it_answers(
    obj: Any, needle: str, as_key: bool, picks: list[int], skip: int, indent: bool
) -> None:
    text = orjson.dumps(obj, option=orjson.OPT_INDENT_2 if indent else None)
    if picks:
        text = _escape_some(text, picks)
    parsed = orjson.loads(text)
    key = needle if as_key else None
    guesses = _all_steps(parsed)[::-1][skip:]  # (latest first: a wrong place found first is caught)
    got = find_unique(parsed, text, needle, key, guesses) if spells_needles(text) else None
    if got is not None:
        assert got == find_path(parsed, needle, key)
    if not picks and text.count(needle.encode()) == 1 and find_path(parsed, needle, key) is not None:
        # the guesses include the right one: a unique needle in literally spelled text is always read off
        assert find_unique(parsed, text, needle, key, _all_steps(parsed)) is not None or not _plain_find(parsed)


def _plain_find(obj: Any) -> bool:
    """False when the find may sit inside JSON a string holds (find_unique leaves those to find_path)."""
    return not any(
        isinstance(v, str) and v[:1] in "{[" for _b, _m, _k, v, _ik, _d in entries(obj, json=False, scalars=False)
    )


def test_find_unique_declines_what_it_cannot_prove() -> None:
    obj = {"a": {"id": "msg_1"}, "b": "msg_1"}
    text = orjson.dumps(obj)
    assert find_unique(obj, text, "msg_1", None, [("b",)]) is None  # two places: find_path decides
    one = {"a": {"id": "msg_1"}, "b": "x"}
    assert find_unique(one, orjson.dumps(one), "msg_1", None, [("b",), ("a", "id")]) == "a.id"
    assert find_unique(one, orjson.dumps(one), "msg_1", None, [("a",)]) is None  # no guess leads there
    assert not spells_needles(b'{"b": "msg\\u005f1"}') and not spells_needles(b'{"b": "a\\/b"}')
    assert spells_needles(b'{"b": "tab\\t\\u001b[0m \\"q\\""}')
    assert find_unique({"k": {"geo": 1}}, b'{"k":{"geo":1}}', "geo", "geo", [("k", "geo")]) == "k.geo"
    # a key's name inside longer keys only: still one place (find_path matches keys whole)
    usage = {"u": {"cache_creation_input_tokens": 1, "cache_creation": {"x": 1}}}
    text = orjson.dumps(usage)
    assert find_unique(usage, text, "cache_creation", "cache_creation", [("u", "cache_creation")]) == "u.cache_creation"
    quoted = {"u": {"cache_creation": 1}, "t": "cache_creation_x"}  # ... but not inside a string
    assert (
        find_unique(quoted, orjson.dumps(quoted), "cache_creation", "cache_creation", [("u", "cache_creation")]) is None
    )
    inner = {"u": {"cache_creation": 1}, "t": '{"cache_creation_x": 1}'}  # ... nor inside JSON a string holds
    assert (
        find_unique(inner, orjson.dumps(inner), "cache_creation", "cache_creation", [("u", "cache_creation")]) is None
    )
    assert steps_of("m.content[0].id") == ("m", "content", 0, "id") and steps_of("a<json>.b") is None
    assert steps_of("[2].a") == (2, "a") and steps_of("") is None


_ESCAPE_PIECES = st.sampled_from(
    [b"\\", b"u", b"0", b"02", b"07", b"08", b"/", b"a", b'"', b"\\\\", b"\\u0041", b"\\/"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_ESCAPE_PIECES, max_size=12).map(b"".join))
def test_spells_needles_is_the_plain_search(text: bytes) -> None:
    """The fast check (no backslash, else the regex from the first one on) answers as the regex over the whole text."""
    assert spells_needles(text) == (jsonwalk._ASCII_ESCAPE.search(text) is None)
