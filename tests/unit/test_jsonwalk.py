"""The one JSON walk: a root that is no container, and values of types orjson never builds."""

from __future__ import annotations

from collections import OrderedDict

from musetui.core.jsonwalk import entries


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
