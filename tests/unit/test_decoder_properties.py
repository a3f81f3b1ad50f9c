"""Property tests: the decoders never raise, keep their invariants, and round-trip genuine shapes."""

from __future__ import annotations

import base64
import json
import math
import re
import string
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musetui.core.fingerprints import decoders as d
from musetui.core.fingerprints.decoders import _common
from musetui.core.fingerprints.seeds import REAL_ID_SEEDS
from musetui.core.fingerprints.types import Decoded
from musetui.core.model import HOSTS, PROVIDERS
from musetui_synth.mint import pb_field as _pb

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "real"

WHOLE: list[Callable[[str], Decoded | None]] = list(d.WHOLE_STRING_DECODERS)
KEYS: list[str | None] = [
    None,
    "id",
    "call_id",
    "tool_call_id",
    "responseId",
    "system_fingerprint",
    "signature",
    "thoughtSignature",
    "text",
    "model",
]
PRESENCE_KEYS = [
    "content_filters",
    "prompt_filter_results",
    "content_filter_results",
    "inference_geo",
    "cache_creation",
    "service_tier",
    "prompt_cache_hit_tokens",
    "x_groq",
    "cost_in_usd_ticks",
    "raw_output",
    "reasoning_content",
]
PROBLEMS = {
    "implausible-time",
    "bad-marker",
    "bad-store-byte",
    "truncated",
    "bad-structure",
    "bad-encoding",
}
B64URL = string.ascii_letters + string.digits + "-_"
B64STD = string.ascii_letters + string.digits + "+/"


def check(dec: Decoded) -> None:
    """The invariants every Decoded keeps."""
    assert isinstance(dec, Decoded)
    assert dec.detector and isinstance(dec.value, str)
    assert dec.strength in ("strong", "medium", "weak")
    assert dec.tag in ("verified", "source", "guess")
    assert dec.provider is None or dec.provider in PROVIDERS
    assert dec.host is None or dec.host in HOSTS
    assert dec.time is None or (isinstance(dec.time, float) and math.isfinite(dec.time))
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in dec.fields)
    assert set(dec.problems) <= PROBLEMS
    assert isinstance(dec.meaning, str) and dec.meaning
    if not dec.genuine:
        assert dec.provider is None and dec.strength == "weak"


def run_everything(s: str) -> None:
    """Every public entry point on ``s``; none may raise, every result keeps the invariants."""
    for fn in WHOLE:
        got = fn(s)
        if got is not None:
            check(got)
            assert got.value == s or fn is d.decode_signature_value
    for key in KEYS:
        for got in d.decode_string(s, key):
            check(got)
            assert got.value in s
    for key in PRESENCE_KEYS:
        for value in (s, None, {"a": s}, [s], 0):
            got = d.decode_key(key, value)
            if got is not None:
                check(got)
    got_key = d.decode_key(s, s)
    if got_key is not None:
        check(got_key)
        assert got_key.value == s


# ---------------------------------------------------------------------------------------------
# Seeds for mutation: real values (inline, so a fresh clone has them) plus the fixture tokens
# ---------------------------------------------------------------------------------------------


def make_signature(version: int, model: str | None, cipher: int = 64, lead: bool = False) -> str:
    header = _pb(1, version) + _pb(3, 2) + _pb(5, bytes(range(64)))
    if model is not None:
        header += _pb(6, model.encode()) + _pb(7, 1)
    body = _pb(1, header) + _pb(2, bytes(12)) + _pb(3, bytes(12)) + _pb(4, bytes(48))
    body += _pb(5, bytes(cipher))
    raw = (_pb(1, 2) if lead else b"") + _pb(2, body) + _pb(3, 1)
    return base64.b64encode(raw).decode()


def make_fernet(when: int, blocks: int, fill: bytes = b"\x5a") -> str:
    raw = b"\x80" + when.to_bytes(8, "big") + fill * (16 + 16 * blocks + 32)
    return base64.urlsafe_b64encode(raw).decode()


SEEDS: list[str] = [
    *REAL_ID_SEEDS,
    make_signature(12, "claude-sonnet-4-6"),
    make_signature(16, "claude-opus-5", lead=True),
    make_fernet(1_765_587_003, 5),
    "gpt_responses_v1:" + make_fernet(1_790_000_000, 2),
]


def _fixture_seeds() -> list[str]:
    """Long real tokens and signatures from ../shared when it is present (else none)."""
    folder = REAL / "vercel__ai"
    if not folder.is_dir():
        return []
    out: list[str] = []
    for path in sorted(folder.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        out += re.findall(r'"(gAAAAA[A-Za-z0-9_\-=]{0,2000})"', text)[:2]
        for obj in re.findall(r'"(?:signature|thoughtSignature)": "([^"]+)"', text):
            out.append(obj)
    return out


SEEDS += _fixture_seeds()


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A real seed after 1–3 random edits: truncate, flip, insert, delete or splice."""
    s = draw(st.sampled_from(SEEDS))
    alphabet = st.sampled_from(B64URL + B64STD + "=._-:# \u2026\x00é")
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "splice"]))
        i = draw(st.integers(0, len(s)))
        if op == "truncate":
            s = s[:i]
        elif op == "flip" and i < len(s):
            s = s[:i] + draw(alphabet) + s[i + 1 :]
        elif op == "insert":
            s = s[:i] + draw(alphabet) + s[i:]
        elif op == "delete" and i < len(s):
            s = s[:i] + s[i + 1 :]
        elif op == "splice":
            s = s[:i] + draw(st.sampled_from(SEEDS))
    return s


FAST = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


@FAST
@given(st.text())
def test_never_raises_on_text(s: str) -> None:
    run_everything(s)


@FAST
@given(
    st.sampled_from(["gAAAAA", "gAAAAAB", "E", "Eu", "Er", "C", "CAIS", "Ci", "Eq", ""]),
    st.text(alphabet=B64URL + B64STD + "=", max_size=160),
)
def test_never_raises_on_base64ish(prefix: str, body: str) -> None:
    run_everything(prefix + body)


@FAST
@given(
    st.sampled_from(
        [
            "rs_",
            "resp_",
            "msg_",
            "msg_01",
            "req_011C",
            "toolu_01",
            "msg_bdrk_01",
            "call_",
            "chatcmpl-",
            "fp_",
        ]
    ),
    st.text(alphabet="0123456789abcdefABCDEFxyz_-", max_size=60),
)
def test_never_raises_on_id_shapes(prefix: str, body: str) -> None:
    run_everything(prefix + body)


@settings(max_examples=400, deadline=None, database=None)
@given(mutated())
def test_never_raises_on_mutated_real_values(s: str) -> None:
    run_everything(s)


@FAST
@given(st.lists(st.sampled_from(SEEDS), min_size=1, max_size=4), st.text(max_size=30))
def test_embedded_values_are_found_in_json_text(values: list[str], noise: str) -> None:
    text = json.dumps({"noise": noise, "items": values})
    found = d.decode_string(text, "output")
    for f in found:
        check(f)
        assert f.value in text


# ---------------------------------------------------------------------------------------------
# Round trips: genuine shapes decode to exactly what was put in
# ---------------------------------------------------------------------------------------------

hexs = st.text(alphabet="0123456789abcdef", min_size=1, max_size=1)


def hexn(n: int) -> st.SearchStrategy[str]:
    return st.text(alphabet="0123456789abcdef", min_size=n, max_size=n)


@FAST
@given(
    st.sampled_from(sorted(d.OPENAI_ITEM_TYPES)),
    hexn(16),
    st.sampled_from(["00", "01"]),
    st.integers(d.OPENAI_TIME_MIN, d.OPENAI_TIME_MAX),
    hexn(4),
    hexn(2),
    hexn(16),
)
def test_new50_round_trip(prefix: str, key: str, store: str, t: int, counter: str, mk: str, rnd: str) -> None:
    ident = f"{prefix}_{key}{store}{t:08x}{counter}81{mk}{rnd}"
    got = d.decode_openai_item_id(ident)
    assert got is not None and got.genuine and got.provider == "openai"
    assert got.time == t and got.shape == "new50"
    assert dict(got.fields)["conversation key"] == key
    assert dict(got.fields)["store byte"].startswith(store)
    assert d.decode_string(f"x {ident} y") == [got]


@FAST
@given(
    st.sampled_from(sorted(d.OPENAI_ITEM_TYPES)),
    st.integers(0, 0xFFFFFFFF),
    hexn(4),
    hexn(4),
    hexn(32),
)
def test_legacy48_window_and_marker(prefix: str, t: int, counter: str, marker: str, rest: str) -> None:
    ident = f"{prefix}_{t:08x}{counter}{marker}{rest}"
    got = d.decode_openai_item_id(ident)
    body = ident.split("_", 1)[1]
    if len(body) - body.count("0") <= 4:  # a scrubbed stand-in: no time, no credit, no flag
        assert got is not None and got.problems == ("placeholder",) and got.time is None
        return
    assert got is not None and got.time == t
    plausible = d.OPENAI_TIME_MIN <= t <= d.OPENAI_TIME_MAX
    genuine_marker = marker.startswith("81") or marker in ("87d1", "87d2")
    assert got.genuine == (plausible and genuine_marker)
    assert ("implausible-time" in got.problems) == (not plausible)


B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58(value: int, width: int = 22) -> str:
    out = ""
    while value:
        value, r = divmod(value, 58)
        out = B58[r] + out
    return out.rjust(width, "1")


@FAST
@given(
    st.integers(d.WINDOW_MIN_MS, d.WINDOW_END_MS - 1),
    st.integers(0, (1 << 74) - 1),
    st.sampled_from(["req_", "msg_", "msg_vrtx_", "msg_bdrk_", "toolu_"]),
)
def test_anthropic_uuid7_round_trip(ms: int, rnd: int, prefix: str) -> None:
    rand_a, rand_b = rnd >> 62, rnd & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    ident = f"{prefix}01{b58(value)}"
    got = d.decode_anthropic_id(ident)
    assert got is not None and got.provider == "anthropic"
    assert got.time == ms / 1000
    assert dict(got.fields)["UUID"].startswith(f"{value:032x}"[:8])


@FAST
@given(
    st.integers(d.WINDOW_MIN_S, d.WINDOW_END_S - 1),
    st.integers(1, 80),
    st.binary(min_size=1, max_size=1),
)
def test_fernet_round_trip_and_truncation(t: int, blocks: int, fill: bytes) -> None:
    tok = make_fernet(t, blocks, fill)
    got = d.decode_fernet(tok)
    assert got is not None and got.problems == () and got.time == t
    assert dict(got.fields)["bytes"] == str(57 + 16 * blocks)
    cut = d.decode_fernet(tok[: len(tok) // 2])
    assert cut is not None and cut.time == t and "truncated" in cut.problems and cut.genuine


@FAST
@given(st.integers(d.WINDOW_MIN_MS, d.WINDOW_END_MS - 1), st.integers(0, (1 << 80) - 1), st.booleans())
def test_ulid_round_trip(ms: int, rnd: int, lower: bool) -> None:
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    value = (ms << 80) | rnd
    text = "".join(alphabet[(value >> (5 * i)) & 31] for i in reversed(range(26)))
    if lower:
        text = text.lower()
    got = d.decode_ulid(text)
    assert got is not None and got.time == ms / 1000


@FAST
@given(st.integers(d.WINDOW_MIN_MS, d.WINDOW_END_MS - 1), hexn(3), st.sampled_from("89ab"), hexn(15))
def test_uuid7_round_trip(ms: int, a: str, variant: str, b: str) -> None:
    h = f"{ms:012x}"
    text = f"{h[:8]}-{h[8:]}-7{a}-{variant}{b[:3]}-{b[3:]}"
    got = d.decode_uuid7(text)
    assert got is not None and got.time == ms / 1000


@FAST
@given(
    st.integers(1, 63),
    st.one_of(st.none(), st.from_regex(r"claude-[a-z0-9\-]{1,30}", fullmatch=True)),
    st.integers(16, 400),
    st.booleans(),
)
def test_signature_round_trip(version: int, model: str | None, cipher: int, lead: bool) -> None:
    sig = make_signature(version, model, cipher, lead)
    got = d.decode_anthropic_signature(sig)
    assert got is not None and got.detector == "anthropic-signature" and got.problems == ()
    assert dict(got.fields)["version"] == str(version)
    assert dict(got.fields).get("model") == model
    assert d.decode_gemini_thought_signature(sig) is None
    assert [x.detector for x in d.decode_string(sig)] == ["anthropic-signature"]


@FAST
@given(st.binary(min_size=8, max_size=600), st.booleans(), st.integers(0, 50))
def test_gemini_round_trip(payload: bytes, outer: bool, shorten: int) -> None:
    inner = b"\x01" + payload
    raw = _pb(1, inner)
    if outer:
        raw = _pb(2, raw)
    sig = base64.b64encode(raw).decode()
    got = d.decode_gemini_thought_signature(sig)
    assert got is not None and got.provider == "google" and got.problems == ()
    assert d.decode_anthropic_signature(sig) is None
    short = sig[: max(16, len(sig) - 4 * shorten - 4)]
    got2 = d.decode_gemini_thought_signature(short)
    if got2 is not None:
        assert got2.provider == "google"


# --- the decoders' shortcuts against the plain computation they replace


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=B64URL + B64STD + "=é \x00.", max_size=80),
    st.booleans(),
)
def test_base64_run_is_the_regex_run(s: str, url: bool) -> None:
    """The run told by deleting the alphabet is the regex's longest base64 prefix."""
    m = (_common._B64_URL_RUN if url else _common._B64_STD_RUN).match(s)
    assert _common._b64_run(s, url) == (m.end() if m else 0)


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=0, max_value=253_402_300_799_999))
def test_millisecond_times_render_as_datetime_does(ms: int) -> None:
    """The table-built ISO text is datetime's, to the millisecond."""
    d = datetime.fromtimestamp(ms // 1000, tz=UTC)
    want = f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}.{ms % 1000:03d}Z"
    assert _common._iso_ms(ms) == want
