"""A hit's field: :func:`first_match` gives what a plain scan of :func:`values` gives, on awkward records."""

from __future__ import annotations

import collections
import json
import random
import re
from typing import Any

import orjson

from musetui.core.search.locate import MAX_DEPTH, first_match, on_line, scalar_text, values


def reference(objs: list[Any], pattern: str, raw: bytes | None = None) -> tuple[str, str, int, int] | None:
    """The definition: the first value that matches in walk order, else the first key (shown with its value)."""
    rx = re.compile(pattern)
    key_hit = None
    for obj in objs:
        for path, text, value, is_key in values(obj):
            if raw is not None and not on_line(text, value, is_key, raw):
                continue
            m = rx.search(text)
            if m is None:
                continue
            if not is_key:
                return path, text, m.start(), m.end()
            if key_hit is None:
                shown = (
                    scalar_text(value)
                    if not isinstance(value, dict | list)
                    else orjson.dumps(value).decode("utf-8", "replace")[:300]
                )
                key_hit = (path, text + ": " + shown, m.start(), m.end())
    return key_hit


def located(objs: list[Any], pattern: str, raw: bytes | None = None) -> tuple[str, str, int, int] | None:
    rx = re.compile(pattern)

    def search(text: str) -> tuple[int, int] | None:
        m = rx.search(text)
        return m.span() if m is not None else None

    return first_match(objs, search, raw)


def nested(depth: int, leaf: Any) -> Any:
    """``leaf`` under ``depth`` alternating lists and objects, parsed by orjson (as search parses lines)."""
    text = json.dumps(leaf)
    for i in range(depth):
        text = f'{{"k{i}": {text}}}' if i % 2 else f"[{text}]"
    return orjson.loads(text)


def test_awkward_records_locate_as_the_definition_says() -> None:
    cases: list[tuple[list[Any], str]] = [
        ([{"needle": {"a": 1}, "b": "x"}], "needle"),  # only a key matches: shown with its value
        ([{"needle": "no"}, {"c": "a needle"}], "needle"),  # a key in one record, a value in the next
        ([{"a": [True, None, 1.5, 7, "v"]}], "true|null|1.5"),  # scalars as text
        ([{"args": json.dumps({"cmd": ["x", {"deep": "needle"}]})}], "needle"),  # JSON held in a string
        ([{"args": json.dumps({"cmd": ["x", {"deep": "needle"}]})}], "^needle$"),  # ... found only inside
        ([{"args": json.dumps({"needle": 1})}], "^needle$"),  # ... a key inside
        ([{"s": "[not json needle"}], "needle"),
        ([{"s": json.dumps(json.dumps({"twice": "needle"}))}], "needle"),
        ([{"é": "ſ", "日本": {"needle": None}}], "needle|日本"),
        ([{"a": "x"}], "needle"),  # no match at all
        ([{"k": ""}], "^$"),  # an empty match
    ]
    for depth in (MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 3, 500):
        cases.append(([{"n": depth, "v": nested(depth, "needle")}], "needle"))
        cases.append(([{"s": json.dumps(nested(depth - 5, json.dumps(nested(4, "needle"))))}], "^needle$"))
    cases.append(([collections.OrderedDict([("a", collections.OrderedDict(needle=["needle"]))])], "needle"))
    rnd = random.Random(7)
    words = ["needle", "hay", "Needle", "x", "{}", "[1]", '{"needle": 1}', "", "needle\n"]
    for _ in range(300):
        cases.append(([_random_record(rnd, words, 4)], rnd.choice(["needle", "^[Nn]eedle$", "^hay|^x$", "^1"])))
    for objs, pattern in cases:
        assert located(objs, pattern) == reference(objs, pattern), (objs, pattern)
    assert located([{"needle": {"a": 1}}], "needle") == ("needle", 'needle: {"a":1}', 0, 6)


def test_a_document_line_locates_only_what_it_holds() -> None:
    doc = [{"a": "needle one", "b": {"needle": "needle two"}}]
    for raw in (b'  "b": {"needle": "needle two"}', b'  "a": "needle one",', b"}"):
        assert located(doc, "needle", raw) == reference(doc, "needle", raw)
    assert located(doc, "needle", b'    "needle": "needle two"') == ("b.needle", "needle two", 0, 6)


def _random_record(rnd: random.Random, words: list[str], depth: int) -> Any:
    r = rnd.random()
    if depth == 0 or r < 0.3:
        return rnd.choice([*words, 1, 2.5, True, False, None])
    if r < 0.65:
        return {rnd.choice(words) + str(i): _random_record(rnd, words, depth - 1) for i in range(rnd.randint(0, 4))}
    if r < 0.9:
        return [_random_record(rnd, words, depth - 1) for _ in range(rnd.randint(0, 4))]
    return json.dumps(_random_record(rnd, words, depth - 1))
