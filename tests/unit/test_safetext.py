"""The one text cleaner: its character data against Unicode's definitions, and each of its four ways to show a value."""

from __future__ import annotations

import html
import re
import unicodedata

import orjson
from hostile import BIDI, CONTROLS, FORBIDDEN, IGNORABLE, derived_default_ignorable
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from musetui.core import safetext
from musetui.core.safetext import (
    escape_name,
    json_bytes,
    md_block,
    md_code,
    md_text,
    one_line,
    strip_controls,
    unescape_name,
)

#: Bidi classes of the explicit embedding, override and isolate controls (UAX #9).
EXPLICIT_BIDI = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
#: Text drawn from every kind of character these helpers care about, and ordinary text.
TEXT = st.text(
    st.sampled_from(sorted(FORBIDDEN | set("ab \\`*_[]()<>&!|~#:/.@-=+1\n\té€😀")))
    | st.characters(exclude_categories=("Cs",)),
    max_size=60,
)
COMMONMARK = MarkdownIt("commonmark")


def _expand(ranges: tuple[tuple[int, int], ...]) -> set[int]:
    return {c for a, b in ranges for c in range(a, b + 1)}


def test_default_ignorable_is_the_published_property() -> None:
    """The ranges kept as data are exactly Default_Ignorable_Code_Point as UAX #44 derives it."""
    assert _expand(safetext.DEFAULT_IGNORABLE) == derived_default_ignorable()
    for c in (
        0x061C,
        0x115F,
        0x1160,
        0x3164,
        0xFFA0,
        0xFE0F,
        0x180F,
        0xE0001,
        0xE0041,
        0xE0100,
        0xE0FFF,
        0x2065,
    ):
        assert c in derived_default_ignorable(), hex(c)


def test_bidi_control_is_the_published_property_and_ignorable() -> None:
    explicit = {c for c in range(0x10000) if unicodedata.bidirectional(chr(c)) in EXPLICIT_BIDI}
    assert _expand(safetext.BIDI_CONTROL) == explicit | {0x061C, 0x200E, 0x200F}  # ALM, LRM, RLM
    assert _expand(safetext.BIDI_CONTROL) <= _expand(safetext.DEFAULT_IGNORABLE)
    assert {ord(c) for c in BIDI} == _expand(safetext.BIDI_CONTROL)


def test_every_forbidden_character_through_every_helper() -> None:
    for c in sorted(FORBIDDEN | {"\n", "\t"}):
        s = f"a{c}b"
        block = strip_controls(s)
        assert block == ("a\nb" if c in "\n\u2028\u2029" else s if c == "\t" else "ab"), hex(ord(c))
        assert one_line(s) == ("a b" if c in "\n\t\u2028\u2029" else "ab"), hex(ord(c))
        name = escape_name(s)
        assert name.isprintable() and name.isascii() and unescape_name(name) == s and name != "ab", hex(ord(c))
        js = json_bytes(orjson.dumps({"k": s}))
        assert js.isascii() and orjson.loads(js) == {"k": s}, hex(ord(c))
        for md in (md_code(s), md_text(s), "\n".join(md_block(s))):
            assert not set(md) & FORBIDDEN, hex(ord(c))
    assert len(IGNORABLE) == 4174 and len(CONTROLS) == 65


def test_names_escape_visibly() -> None:
    assert escape_name("gpt\u3164") == "gpt\\u3164"
    assert escape_name("a\U000e0041") == "a\\U000e0041"
    assert escape_name("soft\u00adhyphen\x85") == "soft\\u00adhyphen\\u0085"  # (\\xNN above 0x7f is a byte)
    assert escape_name("x\udcff") == "x\\xff"
    assert escape_name("plain-name_1.jsonl") == "plain-name_1.jsonl"


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_escape_name_round_trips_and_shows_everything(text: str) -> None:
    e = escape_name(text)
    assert unescape_name(e) == text
    assert not set(e) & FORBIDDEN


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_json_bytes_keeps_every_value(text: str) -> None:
    raw = orjson.dumps({text: [text, 1]}, option=orjson.OPT_APPEND_NEWLINE)
    out = json_bytes(raw)
    assert orjson.loads(out) == {text: [text, 1]}
    assert not set(out.decode("utf-8")) & FORBIDDEN
    if not set(text) & FORBIDDEN - set(CONTROLS[:32]):
        assert out == raw  # nothing to escape: byte for byte the same


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_a_code_span_shows_its_text_and_nothing_else(text: str) -> None:
    rendered = COMMONMARK.render(md_code(text))
    m = re.fullmatch(r"<p><code>(.*)</code></p>\n", rendered, re.S)
    assert m, rendered
    assert html.unescape(m.group(1)) == (one_line(text) or " ")


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_markdown_text_reads_as_it_is(text: str) -> None:
    """Rendered, the escaped text is the text itself: no element, and every character back."""
    for prefix in ("", "- **Why:** ", "  "):
        rendered = COMMONMARK.render(prefix + md_text(text))
        inner = re.sub(r"</?(p|ul|li|strong)>|\n", "", rendered)
        assert "<" not in inner, rendered
        shown = html.unescape(inner)
        shown = shown.removeprefix("Why:") if prefix else shown
        assert shown.strip(" ") == one_line(text).strip(" "), (text, rendered)


def test_markdown_payloads() -> None:
    for s in (
        "[a](http://127.0.0.1/)",
        "<http://127.0.0.1/>",
        "http://x.y/z",
        "www.example.com",
        "a@b.co",
        "<img src=x>",
        "<script>x</script>",
        "`",
        "``a``",
        "&lt;b&gt;",
        "![i](http://x/i.png)",
    ):
        for md in (md_code(s), md_text(s)):
            gfm = MarkdownIt("gfm-like")
            gfm.linkify.set({"fuzzy_link": False})
            for r in (COMMONMARK, gfm):
                out = r.render(md)
                assert not re.search(r"<(?!/?(p|code)>)", out), (s, md, out)
    assert md_block("a\n````\nb", "json") == ["`````json", "a\n````\nb", "`````"]
