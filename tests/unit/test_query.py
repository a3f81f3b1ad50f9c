"""The search query language: parsing, smart case, filters, errors and regex bounds (no I/O)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musetui.core.search import (
    FIELDS,
    QUERY_HELP,
    REGEX_LINE_CAP,
    FieldFilter,
    Query,
    QueryError,
    TextTerm,
    matcher,
    parse_query,
)


def shape(q: Query) -> list[list[str]]:
    """The query as nested lists of written terms (AND of ORs)."""
    return [[t.describe() for t in g] for g in q.groups]


def text(q: Query, g: int = 0, t: int = 0) -> TextTerm:
    atom = q.groups[g][t].atom
    assert isinstance(atom, TextTerm)
    return atom


def flt(q: Query, g: int = 0, t: int = 0) -> FieldFilter:
    atom = q.groups[g][t].atom
    assert isinstance(atom, FieldFilter)
    return atom


# -- structure ---------------------------------------------------------------------------------


def test_words_are_anded() -> None:
    assert shape(parse_query("foo bar  baz")) == [["foo"], ["bar"], ["baz"]]


def test_or_binds_tighter_than_and() -> None:
    assert shape(parse_query("foo bar|baz")) == [["foo"], ["bar", "baz"]]
    assert shape(parse_query("foo bar | baz qux")) == [["foo"], ["bar", "baz"], ["qux"]]
    assert shape(parse_query("a|b|c")) == [["a", "b", "c"]]


def test_negation() -> None:
    q = parse_query("foo -bar -kind:reasoning")
    assert [t.negated for g in q.groups for t in g] == [False, True, True]
    assert shape(q) == [["foo"], ["-bar"], ["-kind:reasoning"]]


def test_negation_inside_or() -> None:
    q = parse_query("-a|b")
    assert [(t.describe(), t.negated) for t in q.groups[0]] == [("-a", True), ("b", False)]


def test_lone_dash_is_a_word() -> None:
    assert shape(parse_query("a - b")) == [["a"], ["-"], ["b"]]


def test_phrase_with_escapes() -> None:
    q = parse_query(r'"say \"hi\" to C:\\dir" x')
    t = text(q)
    assert t.kind == "phrase"
    assert t.text == 'say "hi" to C:\\dir'
    assert shape(q)[1] == ["x"]


def test_regex_term() -> None:
    q = parse_query("/rs_[0-9a-f]{50}/ foo")
    t = text(q)
    assert t.kind == "regex" and t.text == "rs_[0-9a-f]{50}"
    assert shape(q)[1] == ["foo"]


def test_regex_may_hold_spaces_and_bars() -> None:
    t = text(parse_query("/a b|c/"))
    assert t.kind == "regex" and t.text == "a b|c"


def test_slash_paths_are_words() -> None:
    q = parse_query("/home/dev/site api/order.py")
    assert [text(q, i).kind for i in range(2)] == ["word", "word"]
    assert text(q).text == "/home/dev/site"


def test_regex_or_regex() -> None:
    q = parse_query("/a/|/b/")
    assert [t.atom.describe() for t in q.groups[0]] == ["/a/", "/b/"]


def test_describe_round_trips() -> None:
    for src in ['a b|c -"d e" /f.g/ kind:reasoning|tool_call -provider:openai path:"x y"', "x|-y"]:
        q = parse_query(src)
        assert parse_query(q.describe()).describe() == q.describe()


# -- smart case ---------------------------------------------------------------------------------


def test_smart_case_words() -> None:
    lower, upper = text(parse_query("lighthouse")), text(parse_query("Lighthouse"))
    assert not lower.case_sensitive and upper.case_sensitive
    assert lower.matcher.search("LIGHTHOUSE CI") and not upper.matcher.search("LIGHTHOUSE CI")
    assert upper.matcher.search("a Lighthouse gate")


def test_smart_case_phrases() -> None:
    assert not text(parse_query('"dark rye"')).case_sensitive
    assert text(parse_query('"Dark rye"')).case_sensitive


def test_smart_case_regex_ignores_escapes() -> None:
    assert not text(parse_query(r"/\S+\W\d/")).case_sensitive
    assert text(parse_query(r"/call_[A-Z]/")).case_sensitive
    t = text(parse_query(r"/gaaaaa\w+/"))
    assert t.matcher.search("gAAAAABql0tI")


# -- literals and their JSON encodings -----------------------------------------------------------


def hs_finds(t: TextTerm | FieldFilter, line: bytes) -> bool:
    """Whether the term's Hyperscan expressions match somewhere in ``line``."""
    lf = matcher.finder(tuple((e, 0) for e in t.exprs))
    return lf is not None and lf.any(line)


def test_plain_literal_fast_path() -> None:
    t = text(parse_query("call_YunNGbIwdVJ2i0y0Mybva4Pw"))
    assert t.literal == b"call_YunNGbIwdVJ2i0y0Mybva4Pw"
    assert hs_finds(t, b'x "call_YunNGbIwdVJ2i0y0Mybva4Pw"')
    assert not hs_finds(t, b"call_YunNGbIwdVJ2i0y0MYBVA4Pw")
    t = text(parse_query("muse-special"))
    assert t.literal == b"muse-special" and t.lower and t.exprs[0].exact
    assert hs_finds(t, b"MUSE-Special") and not hs_finds(t, b"muse_special")


def test_literal_matches_json_escapes() -> None:
    t = text(parse_query('"said \\"hi\\""'))
    assert t.literal is None
    assert t.raw.search(rb'{"text":"she said \"hi\" twice"}')
    assert t.raw.search(rb'{"args":"{\"text\":\"she said \\\"hi\\\"\"}"}')  # JSON inside a string
    assert not t.raw.search(rb'{"text":"said hi"}')


def test_literal_matches_unicode_escapes_and_newlines() -> None:
    t = text(parse_query('"café au lait"'))
    assert t.raw.search("un café au lait".encode())
    assert t.raw.search(rb"un caf\u00e9 au lait")
    assert t.raw.search(rb"un caf\u00E9 au lait")
    t = text(parse_query('"CAFÉ"'))
    assert t.case_sensitive and not t.raw.search("café".encode())
    t = text(parse_query('"café"'))
    assert t.raw.search("CAFÉ".encode()), "smart case folds non-ASCII letters too"


def test_html_escapes_of_go_encoders() -> None:
    t = text(parse_query("<html>"))
    assert t.raw.search(rb"\u003chtml\u003e") and t.raw.search(b"<html>")


# -- filters ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "name", "values"),
    [
        ("provider:openai", "provider", ("openai",)),
        ("provider:OpenAI|anthropic", "provider", ("openai", "anthropic")),
        ("host:azure", "host", ("azure",)),
        ("host:none", "host", ("none",)),
        ("model:avocado*", "model", ("avocado*",)),
        ("format:codex", "format", ("codex",)),
        ("format:claude-code|muse", "format", ("claude-code", "muse")),
        ("kind:reasoning|tool_call|message", "kind", ("reasoning", "tool_call", "message")),
        ("role:assistant", "role", ("assistant",)),
        ("id:rs_*", "id", ("rs_*",)),
        ("flag:outlier", "flag", ("outlier",)),
        ("has:encrypted", "has", ("encrypted",)),
        ("has:signature|encrypted", "has", ("signature", "encrypted")),
        ("after:2026-09-01", "after", ("2026-09-01",)),
        ("before:2026-09-01T22:01:03Z", "before", ("2026-09-01t22:01:03z",)),
        ("session:019A", "session", ("019a",)),
        ("path:*/subagents/*", "path", ("*/subagents/*",)),
        ('path:"my dir/*.jsonl"', "path", ("my dir/*.jsonl",)),
    ],
)
def test_every_filter(src: str, name: str, values: tuple[str, ...]) -> None:
    f = flt(parse_query(src))
    assert f.name == name and f.values == values
    assert f.session_level == (name in ("provider", "host", "model", "format", "flag", "session", "path"))


def test_field_names_are_case_insensitive() -> None:
    assert flt(parse_query("Kind:reasoning")).name == "kind"


def test_every_field_is_documented() -> None:
    for name in FIELDS:
        assert f"{name}:" in QUERY_HELP
    assert "smart case" in QUERY_HELP.lower()
    for needle in ("-term", '"exact phrase"', "/rs_", "|"):
        assert needle in QUERY_HELP


def test_id_and_path_globs_are_smart_case() -> None:
    assert not flt(parse_query("id:rs_*")).case_sensitive
    f = flt(parse_query("id:call_YunNG*"))
    assert f.case_sensitive and f.values == ("call_YunNG*",)


def test_after_before_instants() -> None:
    f = flt(parse_query("after:2026-09-01"))
    assert f.times == (datetime(2026, 9, 1, tzinfo=UTC).timestamp(),)
    f = flt(parse_query("before:2026-09-01T22:01:03+01:00"))
    assert f.times == (datetime(2026, 9, 1, 21, 1, 3, tzinfo=UTC).timestamp(),)


def test_attribution_filters_are_flagged() -> None:
    assert parse_query("provider:openai foo").needs_attribution
    assert parse_query("host:azure").needs_attribution
    assert parse_query("flag:outlier").needs_attribution
    assert not parse_query("model:x* format:codex session:01 path:a foo").needs_attribution


def test_driver_is_the_most_selective_group() -> None:
    q = parse_query("kind:reasoning a call_YunNGbIwdVJ2i0y0Mybva4Pw")
    assert q.driver == 2
    assert parse_query("kind:reasoning -foo").driver == -1, "nothing can find candidate lines"
    assert parse_query("foo|kind:reasoning").driver == -1, "an OR with a filter cannot drive"
    assert parse_query("has:encrypted provider:openai").driver == 0, "has: has a raw hint"


# -- errors -------------------------------------------------------------------------------------


def test_unknown_field_message() -> None:
    with pytest.raises(QueryError) as err:
        parse_query("foo:bar")
    msg = str(err.value)
    assert msg.startswith("unknown field 'foo:' (known: provider, host, model, format, kind")
    assert all(name in msg for name in FIELDS)


def test_invalid_regex_message() -> None:
    with pytest.raises(QueryError) as err:
        parse_query("/[a-/")
    assert str(err.value).startswith("invalid regex /[a-/: ")
    with pytest.raises(QueryError, match=r"^invalid regex /\(unclosed/: missing \)"):
        parse_query("/(unclosed/")


@pytest.mark.parametrize(
    ("src", "message"),
    [
        ("", "empty query"),
        ("   ", "empty query"),
        ('"unterminated', "unterminated quote"),
        ("a |", "'|' needs a term on both sides"),
        ("| a", "'|' needs a term on both sides"),
        ("a || b", "'|' needs a term on both sides"),
        ('""', "empty phrase"),
        ("kind:", "empty value for kind:"),
        ("kind:reasoning|", "'|' needs a term on both sides"),
        ("kind:|x", "empty value for kind:"),
        ("provider:azure", "unknown provider 'azure' (known: openai, anthropic"),
        ("kind:thought", "unknown kind 'thought'"),
        ("has:fernet", "unknown has 'fernet' (known: encrypted, signature)"),
        ("format:jsonl", "unknown format 'jsonl'"),
        ("flag:weird", "unknown flag 'weird'"),
        ("after:yesterday", "invalid date for after: 'yesterday'"),
        ("before:2026-13-01", "invalid date for before:"),
        ("http://example.com", "unknown field 'http:'"),
    ],
)
def test_errors(src: str, message: str) -> None:
    with pytest.raises(QueryError) as err:
        parse_query(src)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_quoted_url_is_a_phrase() -> None:
    assert text(parse_query('"http://example.com"')).text == "http://example.com"


def test_colon_words_that_are_not_fields() -> None:
    for word in ("gpt_responses_v1:gAAAAA", "2026-09-01T22:01:03", "a1:b", "::"):
        assert text(parse_query(word)).text == word


# -- regexes: linear time, exact where Hyperscan can, re-confirmed where it cannot ------------------


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a+)+$",
        r"(a*)*b",
        r"(a|a)*c",
        r"(a|aa)+$",
        r"(.*a){12}",
        r"(\w+\s?)*$",
        r"(?:x+x+)+y",
        r"([a-z]+)*=",
    ],
)
def test_exponential_shapes_run_in_linear_time(pattern: str) -> None:
    """Shapes that backtrack exponentially in re: Hyperscan decides them alone, at once."""
    t = text(parse_query(f"/{pattern}/"))
    assert t.regex is not None and t.regex.exact, pattern
    line = b"a" * 200_000 + b"!" + b"x" * 30 + b"=" * 0
    start = time.perf_counter()
    got = t.regex.line(line, REGEX_LINE_CAP)
    assert time.perf_counter() - start < 2.0, pattern
    short = b"a" * 8 + b"!"
    assert t.regex.line(short, REGEX_LINE_CAP) == bool(t.raw.search(short)), pattern
    assert isinstance(got, bool)


@pytest.mark.parametrize(
    "pattern",
    [r"rs_[0-9a-f]{50}", r"(?:.|\n)*x", r"(\n)*foo", r"\Afoo\Z", r"(?i:Foo)bar"],
)
def test_regexes_run_exactly_by_hyperscan(pattern: str) -> None:
    t = text(parse_query(f"/{pattern}/"))
    assert t.regex is not None and t.regex.exact, pattern
    for line in (b"aab", b"foobar", b"foobaz", b"xfoo", b"fooBAR", b"aa", b"x", b"FOObar"):
        assert t.regex.line(line, REGEX_LINE_CAP) == bool(t.raw.search(line)), (pattern, line)


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"a++b", "possessive repeat"),
        (r"(?>a+)+b", "atomic group"),
        (r"(a)\1", "back-reference"),
        (r"foo(?=bar)", "look-around"),
        (r"(?<!x)foo", "look-around"),
        (r"(a|a)+(?!q)q", "look-around"),
        (r"(a)?(?(1)b|c)", "conditional group"),
    ],
)
def test_regexes_that_need_backtracking_are_refused_with_the_reason(pattern: str, why: str) -> None:
    """No linear-time engine runs these: the query is refused at once, never run for hours."""
    start = time.perf_counter()
    with pytest.raises(QueryError) as caught:
        parse_query(f"/{pattern}/")
    assert why in str(caught.value) and "linear time" in str(caught.value)
    assert time.perf_counter() - start < 1.0


def test_the_backtracking_bomb_of_the_hardening_issue_never_runs(tmp_path: Path) -> None:
    """``/(a|a)+(?!q)q/`` over a 1 MB line: refused in under a second, exit 2, one line."""
    (tmp_path / "s.jsonl").write_text('{"text": "' + "a" * 1_000_000 + '"}\n')
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "musetui", "search", str(tmp_path), "/(a|a)+(?!q)q/"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert run.returncode == 2 and "look-around" in run.stderr and run.stderr.count("\n") == 1
    assert time.perf_counter() - start < 10.0  # interpreter start-up included


def test_a_regex_that_needs_a_newline_never_matches_a_line() -> None:
    t = text(parse_query("/a\\nb/"))
    assert t.regex is not None and not t.regex.line(b"a\\nb a b", REGEX_LINE_CAP)


#: Non-empty lines: on an empty one re's \B never matches (a quirk of re; rg and Hyperscan match).
LINE_BYTES = st.text(alphabet='abAB-_.1 "\\', min_size=1, max_size=10).map(str.encode)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="abAB()*+?|{},.\\dswDSW[]^$-_:", min_size=1, max_size=14), st.lists(LINE_BYTES, max_size=6))
def test_hyperscan_agrees_with_re_on_every_line(pattern: str, lines: list[bytes]) -> None:
    """The expression written from re's parse means what re means, line by line (smart case too)."""
    try:
        q = parse_query(f"/{pattern}/")
    except QueryError:
        return
    t = q.groups[0][0].atom
    if not isinstance(t, TextTerm) or t.regex is None:
        return
    for line in lines:
        assert t.regex.line(line, REGEX_LINE_CAP) == bool(t.raw.search(line)), (pattern, line)
    if t.exprs and t.regex.exact and lines:
        data = b"\n".join(lines)
        lf = matcher.finder(tuple((e, 0) for e in t.exprs))
        assert lf is not None
        got = {data[ls:le] for ls, le, _ in lf.lines(data)}
        want = {line for line in data.split(b"\n") if t.raw.search(line)}
        assert got == want, (pattern, lines)


def test_match_spans_come_from_hyperscan_for_exact_regexes() -> None:
    t = text(parse_query("/r[a-z]+e/"))
    assert t.spans("the dark rye and the light rye, é rye") == [(9, 12), (27, 30), (34, 37)]
    assert t.search("no match here") is None


def test_a_used_regex_query_pickles_for_worker_processes() -> None:
    import pickle

    q = parse_query("/r[a-z]+e/ foo")
    t = text(q)
    assert t.spans("rye") == [(0, 3)]  # its span database is built
    back = pickle.loads(pickle.dumps(q))
    t2 = text(back)
    assert t2.regex is not None and t2.regex.exact and t2.spans("a rye") == [(2, 5)]


def test_linear_time_is_documented() -> None:
    assert REGEX_LINE_CAP == 1024 * 1024
    import musetui.core.search as search

    doc = search.__doc__ or ""
    assert "Linear time" in doc and "1 MiB" in doc and "(a+)+$" in QUERY_HELP


# -- dates and times ----------------------------------------------------------------------------


def test_time_terms_have_a_window() -> None:
    t = text(parse_query("2026-09-01T22:01:03"))
    start = datetime(2026, 9, 1, 22, 1, 3, tzinfo=UTC).timestamp()
    assert t.window == (start, start + 1)
    assert text(parse_query("2026-09-01")).window == (
        datetime(2026, 9, 1, tzinfo=UTC).timestamp(),
        datetime(2026, 9, 2, tzinfo=UTC).timestamp(),
    )
    assert text(parse_query("2026-09-01T22")).window is not None
    assert text(parse_query('"2026-09-01 22:01"')).window is not None
    assert text(parse_query("2026-13-01")).window is None
    assert text(parse_query("8196")).window is None


def test_time_patterns_find_encoded_times() -> None:
    """An rs_ id and a Fernet token minted at 2026-09-01T22:01:43Z (from the bundled sample)."""
    t = text(parse_query("2026-09-01T22:01:43"))
    rs = b'"message_id":"rs_0fb0962a440df430006a974b47304a81967cd5f8099555ab70"'
    fernet = b'"signature":"gpt_responses_v1:gAAAAABql0tHAhsBweE2vwyfjVV6R19X3sv8LA_es"'
    assert hs_finds(t, rs)
    assert hs_finds(t, fernet)
    other = text(parse_query("2026-09-01T22:01:44"))
    assert not hs_finds(other, rs)


def test_time_patterns_for_uuid7_and_anthropic_ids() -> None:
    # UUIDv7 01a05efc-7bb7-… : 0x01a05efc7bb7 ms; the Anthropic id of the sample decodes to its UUIDv7.
    from musetui.core.fingerprints.decoders import decode_anthropic_id, decode_uuid7

    u = decode_uuid7("01a05efc-7bb7-7cd1-8155-66af75f0734c")
    assert u is not None and u.time is not None
    when = datetime.fromtimestamp(u.time, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    t = text(parse_query(when))
    assert hs_finds(t, b'"id":"01a05efc-7bb7-7cd1-8155-66af75f0734c"')
    a = decode_anthropic_id("msg_011CedbEEfeVs5fZmENREs2N")
    assert a is not None and a.time is not None
    when = datetime.fromtimestamp(a.time, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    t = text(parse_query(when))
    assert hs_finds(t, b'"id": "msg_011CedbEEfeVs5fZmENREs2N"')


# -- never anything but QueryError ----------------------------------------------------------------

SYNTAX = st.sampled_from(
    [
        " ",
        "|",
        "-",
        '"',
        "\\",
        "/",
        ":",
        "*",
        "(",
        ")",
        "+",
        "?",
        "[",
        "]",
        "{",
        "}",
        "^",
        "$",
        ".",
        "a",
        "Z",
        "0",
        "kind:",
        "provider:",
        "has:",
        "id:",
        "after:",
        "path:",
        "model:",
        "foo:",
        "é",
        "\x00",
        "\n",
        "\ud800",
    ]
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80))
def test_parse_never_raises_anything_else(s: str) -> None:
    try:
        q = parse_query(s)
    except QueryError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert q.groups


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SYNTAX, max_size=30).map("".join))
def test_parse_never_raises_on_query_syntax_soup(s: str) -> None:
    try:
        q = parse_query(s)
    except QueryError:
        return
    for t in q.terms:
        if isinstance(t.atom, TextTerm):
            assert isinstance(t.atom.raw, re.Pattern)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab()*+?|{},.\\d[]^-:<>=!", max_size=24))
def test_regex_soup_is_refused_or_compiled(pattern: str) -> None:
    try:
        q = parse_query(f"/{pattern}/ x")
    except QueryError:
        return
    assert q.groups


def test_non_text_is_refused() -> None:
    with pytest.raises(QueryError):
        parse_query(b"foo")  # type: ignore[arg-type]


#: Lines full of near-misses of a lead: ``ab_`` and ``AB_`` (smart case) and partial ids.
LEAD_LINES = st.text(alphabet='ab_AB019f "', min_size=0, max_size=40).map(str.encode)
#: Bounded pieces of a regex after its lead.
LEAD_TAILS = st.lists(
    st.sampled_from(["[0-9a-f]", "\\d", "x", "_", "[ab]{2}", "(?:a|bb)", "[01]{1,3}", "f?", ".", "[^ ]"]),
    max_size=5,
).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["ab_", "AB_", "ab_a", "b_ab"]), LEAD_TAILS, st.data())
def test_lead_windows_find_what_the_whole_scan_finds(lead: str, tail: str, data: st.DataObject) -> None:
    """A literal-led bounded regex is checked in windows after its leads: same answer as re."""
    q = parse_query(f"/{lead}{tail}/")
    t = q.groups[0][0].atom
    assert isinstance(t, TextTerm) and t.regex is not None and t.regex.exact
    lf = matcher.finder(tuple((e, 0) for e in t.exprs))
    assert lf is not None
    assert (lf._lead is not None) == any(e.width > len(e.lead) for e in t.exprs)  # not a plain literal
    match = st.from_regex(re.compile(lead + tail, t.matcher.flags), fullmatch=True).map(
        lambda x: x.encode("utf-8", "replace").replace(b"\n", b" ")
    )
    lines = data.draw(
        st.lists(st.one_of(LEAD_LINES, match, st.tuples(LEAD_LINES, match, LEAD_LINES).map(b"".join)), max_size=40)
    )
    buf = b"\n".join(lines)
    want = any(t.raw.search(line) for line in buf.split(b"\n"))
    assert lf.any(buf) == want, (lead, tail, lines)
    assert lf.any(memoryview(buf)) == want


def test_lead_windows_are_used_and_give_way_to_the_whole_scan_on_many_leads() -> None:
    q = parse_query("/rs_[0-9a-f]{18}6a9[0-9a-f]{5}/")
    t = q.groups[0][0].atom
    assert isinstance(t, TextTerm)
    (e,) = t.exprs
    assert (e.lead, e.lead_ic, e.width) == (b"rs_", True, 29)
    lf = matcher.finder(((e, 0),))
    assert lf is not None and lf._lead is not None
    hit = b'{"id": "rs_' + b"0" * 18 + b"6A9" + b"0" * 5 + b'"}'
    near = b'{"id": "rs_' + b"0" * 18 + b"6b9" + b"0" * 5 + b'"}'
    assert lf.any(hit) and not lf.any(near)
    crowd = b"rs_ " * 5000  # more leads than the budget: the whole buffer is scanned
    assert lf.any(crowd + b"\n" + hit) and not lf.any(crowd + b"\n" + near)
    for pattern in ("rs_[0-9a-f]+", "^rs_[0-9a-f]{3}", r"rs_\b", "(?:rs|xs)_[0-9]{3}", "muse-special"):
        q = parse_query(f"/{pattern}/")
        t = q.groups[0][0].atom
        assert isinstance(t, TextTerm)
        lf = matcher.finder(tuple((x, 0) for x in t.exprs))
        assert lf is not None and lf._lead is None, pattern


def test_case_modes_and_regex_words() -> None:
    """The search view's toggles: case smart/match/ignore, and bare words read as regexes."""

    def atoms(**kw: object) -> list[tuple[str, bool]]:
        q = parse_query("Foo ba.r", **kw)  # type: ignore[arg-type]
        return [(t.atom.kind, t.atom.case_sensitive) for g in q.groups for t in g]  # type: ignore[union-attr]

    assert atoms() == [("word", True), ("word", False)]
    assert atoms(case="match") == [("word", True), ("word", True)]
    assert atoms(case="ignore") == [("word", False), ("word", False)]
    assert atoms(regex_words=True) == [("regex", True), ("regex", False)]
    assert atoms() == [("word", True), ("word", False)]  # the options end with their parse
    quoted = parse_query('"ba.r"', regex_words=True).groups[0][0].atom
    assert quoted.kind == "phrase"  # type: ignore[union-attr]


def test_format_values_are_the_registry_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """A format added to the registry is a ``format:`` value at once: there is no second list to keep."""
    from musetui.core.sources import registry

    for name in registry.NAMES:
        assert parse_query(f"format:{name}").needs_attribution is False
    with pytest.raises(QueryError, match="unknown format 'aider'"):
        parse_query("format:aider")
    monkeypatch.setattr(registry, "NAMES", (*registry.NAMES, "aider"))
    assert not parse_query("format:aider").needs_attribution
