"""The Hyperscan candidate finder gives exactly what the four ``re`` passes give.

Compared per file (hits: decoded value, line, offset, key) and per scan record (evidence,
flags, verdict), on the bundled sample, the real public captures and a generated tree.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musetui.core import scanner
from musetui.core.fingerprints import extract, patterns
from musetui.core.scan import windows
from musetui_synth import mint
from musetui_synth.corpus import generate


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))


def _hits(data: bytes, finder: Any) -> list[tuple[Any, ...]]:
    _lines, starts, _partial = windows.split(data)
    return [
        (h.decoded, h.line_index, h.offset, h.key, h.field, h.value)
        for h in extract.scan_raw(data, starts, set(), finder)
    ]


def _record(path: Path, root: Path) -> Any:
    try:
        out = scanner.scan_file(str(path), path.relative_to(root).as_posix(), str(root))
    except Exception as exc:  # a scanner bug elsewhere: compared as such
        return ("raised", type(exc).__name__)
    s = out.summary
    return None if s is None else orjson.dumps(s.record(), option=orjson.OPT_SORT_KEYS)


def _compare(root: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    files = _files(root)
    assert files, root
    for p in files:
        data = p.read_bytes()
        assert _hits(data, None) == _hits(data, extract.candidates_re), p
    new = [_record(p, root) for p in files]
    monkeypatch.setattr(extract, "_candidates", extract.candidates_re)
    old = [_record(p, root) for p in files]
    for p, a, b in zip(files, new, old, strict=True):
        assert a == b, p
    return len(files)


def test_sample(sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _compare(sample_dir, monkeypatch) > 10


def test_real_fixtures(real_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _compare(real_dir, monkeypatch) > 10


def test_generated_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate(tmp_path / "gen", 3.0, 11)
    assert _compare(tmp_path / "gen", monkeypatch) > 50


HEXID = b"0953eda47ee17412006933306199c88195b44f9cf2986e1d5b"
HOSTILE = [
    b"rs_" + HEXID,
    b'{"id":"rs_' + HEXID + b'"}',
    b"abcdefghij_" + HEXID[:32] + b" abcdefghijk_" + HEXID[:32],
    b"x_" + HEXID[:32] + b"_" + HEXID[:32] + b"\n",
    b"call_00_" + b"A" * 24 + b" call_" + b"a1" * 12 + b" call_12345678",
    b'"call_id": "functions.read_file:0" "tool_id":"abcdefghi" "x_id":"chatcmpl-tool-' + b"0" * 20 + b'"',
    b'"content_filters": null, "inference_geo":"us", "gpt_responses_v1:gAAAAABo2DUX' + b"A" * 90,
    b'"signature": "EqQBCkgIBxABGAIqQK' + b"A" * 40 + b'", "thoughtSignature":"",',
    b"msg_bdrk_01" + b"A" * 22 + b" msg_vrtx_01" + b"B" * 24 + b" toolu_01" + b"C" * 22,
    b"gAAAAA" * 5 + b"=",
    b"_" * 40 + b"rs_" + b"f" * 32,
    b'"file_' + b"A1" * 12 + b'" "asst_' + HEXID[:32] + b'" xrs_' + HEXID[:32] + b" .rs_" + HEXID,
    b'"_id": "functions.a.rs_' + HEXID[:32] + b':0" rs_' + HEXID[:32],
    b'"signature": "file_' + b"A1" * 12 + b'" file_' + b"A1" * 12,
    # a signature value is read to its first quote, unless a backslash comes first (then no match there)
    b'"signature": "Eq\\"x", "signature" :\t"abc\\\\", "thoughtSignature":\n"EqQB", "signature":"ab',
    b'"signature":"' + b"E" * 3000 + b'\\u0041"' + b' "signature":"",' * 3,
    b'"signature": "EqQBCkgIBxABGAIqQK' + b"A" * 40 + b'\\", "signature": "EqQBCkgIBxABGAIqQK' + b"B" * 40 + b'"',
    # the _id head's start is the last _id" before its end (Hyperscan tracks no start for it)
    b'"a_id"_id" \t :\n "functions.x:1" "b_id"  :"abcdefghi" "c_id":"chatcmpl-tool-' + b"0" * 16 + b'"',
    b'_id"_id":"_id":"abcdefghi"'
    + b'"x_id" : "_id" : "functions.'
    + b" " * 300
    + b'"y_id":'
    + b" " * 200
    + b'"abcdefghi"',
]


def test_hostile_bytes_agree() -> None:
    """Heads at the very start and end, prefixes of 10 and 11 letters, overlaps, cut tokens."""
    for data in HOSTILE:
        assert _hits(data, None) == _hits(data, extract.candidates_re), data


def test_every_head_is_sound_when_hyperscan_runs_every_pass(sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every pass on Hyperscan (whatever the default), the heads give what re gives."""
    monkeypatch.setattr(patterns, "HS_PASSES", patterns.PASSES)
    monkeypatch.setattr(extract, "_DB", None)
    monkeypatch.setattr(extract, "_META", [])
    for p in _files(sample_dir):
        data = p.read_bytes()
        assert _hits(data, None) == _hits(data, extract.candidates_re), p
    for data in HOSTILE:
        assert _hits(data, None) == _hits(data, extract.candidates_re), data


def test_pass_regexes_are_the_table() -> None:
    """The confirming regexes are built from the rows, in order (one row per detector)."""
    assert extract.U_RE.pattern.startswith(b"_(?:(?P<hex>")
    assert [r.pass_ for r in patterns.ROWS].count("u") == 7
    for row in patterns.ROWS:
        assert row.confirm in extract._PASS_RES[row.pass_].pattern


PIECES = st.sampled_from(
    [
        b"rs_",
        b"call_",
        b"_",
        b"msg_01",
        b"toolu_",
        b"bdrk_01",
        b"gAAAAA",
        b'ignature": "',
        b'"',
        b'_id": "',
        b"functions.x:1",
        HEXID[:16],
        b"A" * 12,
        b"a1b2",
        b"0123",
        b" ",
        b"\n",
        b'_content": ',
        b"null",
        b"-",
        b"=",
        b"xyzabcdefgh",
        b"\\",
        b"file_",
        b"fc_",
        b"resp_",
        b".",
        b"12345678",
        b'_id"',
        b":",
        b"\t",
        b"chatcmpl-tool-",
        b'abcdefghi"',
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=40).map(b"".join))
def test_random_soup_agrees(data: bytes) -> None:
    assert _hits(data, None) == _hits(data, extract.candidates_re)


_BODIES = st.sampled_from(
    [
        HEXID[:32],
        HEXID[:48],
        HEXID,
        b"01" + b"A" * 22,
        b"bdrk_01" + b"B" * 22,
        b"00_" + b"C" * 24,
        b"a1" * 12,
        b"12345678",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10), _BODIES)
def test_only_the_id_prefixes_decode(prefix: str, body: bytes) -> None:
    """The raw pass looks for ids behind ``extract.ID_PREFIXES`` only: no other prefix decodes."""
    token = prefix + "_" + body.decode()
    if prefix not in extract.ID_PREFIXES:
        assert extract._decode_id(token) is None, token
    data = b" " + token.encode() + b" "
    assert _hits(data, None) == _hits(data, extract.candidates_re)


def test_raw_hits_without_keys_are_scan_raw_without_keys() -> None:
    """The scanner's raw_hits(keys=False) gives scan_raw's hits (but the keys), on every hostile input.

    Including inputs where a signature is the only candidate (no key is left over from the
    id pass) and where the empty signature repeats.
    """
    extra = [b'{"signature":""}', b'{"a":{"signature":""},"b":{"thoughtSignature":""}}', b'"signature": "x"\n']
    for data in [*HOSTILE, *extra]:
        _lines, starts, _partial = windows.split(data)
        want = [(h.decoded, h.offset, h.value) for h in extract.scan_raw(data, starts, set())]
        got = [
            (dec, pos, None if raw is None else raw.decode("ascii", "replace"), key)
            for dec, pos, key, raw in extract.raw_hits(data, set(), keys=False)
        ]
        assert [(d, p, v) for d, p, v, _k in got] == want, data
        assert all(k is None for *_x, k in got if _x[0].detector in ("empty-signature", "anthropic-signature")), data
    assert any(d.detector == "empty-signature" for d, *_ in extract.raw_hits(extra[0], set(), keys=False))


def _cold_then_warm(files: list[Path]) -> int:
    """Each file's hits with the shape cache empty equal its hits after every other file warmed it."""
    cold = []
    for p in files:
        extract._BY_SHAPE.clear()
        cold.append(_hits(p.read_bytes(), None))
    extract._BY_SHAPE.clear()
    for p in reversed(files):  # warm: every shape decoded first by some other file
        _hits(p.read_bytes(), None)
    shared = 0
    for p, want in zip(files, cold, strict=True):
        got = _hits(p.read_bytes(), None)
        assert got == want, p
        shared += sum(1 for h in got if h[-1] is not None)
    return shared


def test_shape_decodes_shared_across_files(sample_dir: Path, real_dir: Path, tmp_path: Path) -> None:
    """The time-less shape decodes kept for the process give every file what its own decodes would."""
    generate(tmp_path / "gen", 2.0, 5)
    shared = 0
    for root in (sample_dir, real_dir, tmp_path / "gen"):
        shared += _cold_then_warm(_files(root))
    assert shared > 50  # shapes were shared within files too (value carried as raw)


#: Whole tokens and their surroundings, so that a soup repeats them (keys: the repeats _confirm skips).
_REPEATED = st.sampled_from(
    [
        b'"id":"msg_01' + b"A" * 22 + b'"',
        b'"id":"toolu_01' + b"B" * 22,
        b"xtoolu_01" + b"B" * 22,
        b"toolu_01" + b"B" * 23,
        b"_01" + b"B" * 22,
        b'"requestId":"req_011C' + b"C" * 20 + b'"}',
        b"req_011C" + b"C" * 20 + b"a",
        b"rs_" + HEXID[:32],
        b"rs_" + HEXID[:32] + b"0",
        b"call_" + b"a1" * 12,
        b'"service_tier":"standard"',
        b'"service_tier":null',
        b'"service_tier" : "x\\"',
        b'xservice_tier":1',
        b'"inference_geo":"' + b"g" * 64 + b'"',
        b'"inference_geo":"' + b"g" * 65 + b'"',
        b'"cache_creation":{',
        b"a" * 50 + b'_geo":1',
        b"a" * 47 + b'_geo":1',
        b'"_geo":[',
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_REPEATED, PIECES), max_size=30).map(b"".join))
def test_repeated_tokens_agree(data: bytes) -> None:
    """Skipping a presence key's repeat before matching it changes no hit (nor do repeated ids)."""
    assert _hits(data, None) == _hits(data, extract.candidates_re)
    assert list(extract.raw_hits(data, set(), keys=False)) == list(
        extract.raw_hits(data, set(), extract.candidates_re, keys=False)
    )


def test_a_repeat_is_told_by_every_byte_its_match_reads() -> None:
    """The letters before a key, and every byte of its value, decide whether a match repeats an earlier one."""
    body = b"01" + b"B" * 22
    cases = [
        b' "toolu_' + body + b'" "toolu_' + body + b'B" "toolu_' + body + b'"',  # a longer id after its prefix
        b' "msg_' + body + b'", xmsg_' + body + b'", "msg_' + body + b'"',  # behind a key character: not an id
        b'"service_tier":"a" "service_tier":null "xservice_tier":"a" "service_tier":"a"',
        b'"inference_geo":"' + b"g" * 64 + b'" "inference_geo":"' + b"g" * 65 + b'" "inference_geo":1',
    ]
    for data in cases:
        assert _hits(data, None) == _hits(data, extract.candidates_re), data


def test_a_raw_key_decodes_as_the_decoder_says() -> None:
    """The raw pass's once-per-process key decodes are decode_key's, for null and for a value."""
    from musetui.core.fingerprints import decoders

    for name in [*sorted(decoders.PRESENCE_KEYS), "unknown_key", "x_geo"]:
        for state, value in ((b"null", None), (b"set", "…")):
            tag = name.encode() + b"=" + state
            assert extract._decode_key(tag) == decoders.decode_key(name, value), tag
            assert extract._decode_key(tag) == decoders.decode_key(name, value), tag  # (the cached one too)


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _anthropic_body(kind: int, value: int, text: str, width: int) -> str:
    """An id body: UUIDv7-shaped bits, any value of up to 135 bits, or base58 text."""
    if kind == 0:  # the version and variant bits of a UUIDv7, any time (in or out of the window)
        value = (value & ~(0xF << 76) & ~(3 << 62)) | (7 << 76) | (2 << 62)
    if kind < 2:
        return "01" + mint.b58_fixed(value, width)
    return "01" + text


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(sorted(extract.ID_PREFIXES) + ["msg", "req", "toolu", "srvtoolu"] * 3),
    st.integers(0, 2),
    st.integers(0, 2**135),
    st.text(alphabet=_B58, min_size=18, max_size=26),
    st.integers(20, 24),
)
def test_raw_pass_decodes_ids_as_decode_id(prefix: str, kind: int, value: int, text: str, width: int) -> None:
    """An id the raw pass finds decodes as ``_decode_id`` decodes it (Anthropic ids skip its checks, made already)."""
    token = f"{prefix}_{_anthropic_body(kind, value, text, width)}"
    got = list(extract.raw_hits(b'"' + token.encode() + b'"'))
    want = extract._decode_id(token)
    if got:
        assert [h[0] for h in got] == [want], token
    else:
        assert want is None or not extract.U_RE.search(token.encode()), token


def _confirm_keys_plain(data: bytes, heads: list[int]) -> list[tuple[int, int]]:
    """The key pass's matches at ``heads``, less repeats, told as plainly as can be (the reference)."""
    found: list[tuple[int, int]] = []
    end = 0
    earlier: set[bytes] = set()
    for pos in heads:
        if pos < end:
            continue
        lo = max(0, pos - 48)
        lead = lo + len(data[lo:pos].rstrip(extract._KEYB))
        repeat = [r for r in earlier if data.startswith(r, lead) and r.startswith(data[lead : pos + 1])]
        if repeat:
            end = lead + len(min(repeat))  # (the repeat the fast check finds first reads alike: the regex's match)
            continue
        m = extract.K_RE.match(data, pos)
        if m is None:
            continue
        found.append((m.start(), m.end()))
        end = m.end()
        if m.lastgroup == "kval":
            earlier.add(data[lead:end])
    return found


KEY_PIECES = st.sampled_from(
    [
        *(b"inference_geo", b"xinference_geo", b"prompt_filter_results", b"x", b"_", b'"', b'": ', b":", b"null"),
        *(b'"us"', b"a" * 40, b"_geo", b"{", b"1", b" ", b"service_tier", b"tier", b",", b"\\"),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(KEY_PIECES, max_size=40).map(b"".join))
@example(b'"inference_geo": null, "xinference_geo": null, "inference_geo": null')  # a key inside a longer one
@example(b'"' + b"a" * 40 + b'inference_geo":1 ' + b"a" * 40 + b'inference_geo":1')  # (48 letters back at most)
@example(b'inference_geo":1 "inference_geo":1')  # (from the very start)
def test_key_repeats_are_told_as_plainly(data: bytes) -> None:
    """A key's repeat is skipped where the plain check (the key's letters, then its bytes) skips it."""
    heads = [m.start() for m in re.finditer(rb"_(?=[a-z_]+\")", data)]
    got = [(m.start(), m.end()) for m in extract._confirm(extract.K_RE, data, heads, "k")]
    assert got == _confirm_keys_plain(data, heads)
