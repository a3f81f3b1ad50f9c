"""Unit tests for musetui.core.fingerprints.decoders, on the real values FINGERPRINTS.md lists.

The tests that read ../shared/fixtures/real skip when it is absent (a fresh clone has no
../shared); the inline values below come from the same public captures and FINGERPRINTS.md.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from musetui.core.fingerprints import decoders as d
from musetui.core.fingerprints.types import Decoded
from musetui_synth.mint import pb_field as pb

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "real"
VERCEL = REAL / "vercel__ai"


def real_file(name: str) -> Path:
    """Path of a file in ../shared/fixtures/real, or skip when the directory is absent."""
    if not REAL.is_dir():
        pytest.skip(f"real public captures not available at {REAL} (../shared is outside this repo)")
    path = REAL / name
    assert path.is_file(), f"{path} is missing from ../shared/fixtures/real (renamed? update the test)"
    return path


def vercel(name: str) -> Any:
    """Parsed JSON of a vercel/ai fixture copy."""
    return json.loads(real_file(f"vercel__ai/{name}").read_text(encoding="utf-8"))


def ts(text: str) -> float:
    """Unix seconds of an ISO time with a trailing Z."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).timestamp()


def field(dec: Decoded, name: str) -> str | None:
    """The value of a display field, or None."""
    return dict(dec.fields).get(name)


# ---------------------------------------------------------------------------------------------
# §4 OpenAI Responses item ids
# ---------------------------------------------------------------------------------------------

# FINGERPRINTS.md §4.2: id, layout, embedded time, marker, store byte ("-" for legacy48).
SECTION_4_2_TEXT = """
resp_683b49b0916c819b9db77fc68c0ed429016e90871fbf8114    legacy48 2025-05-31T18:25:52Z 819b -
rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7      legacy48 2025-05-11T18:59:15Z 8191 -
resp_685ad7cc45a881a29612f39ab9db54b1037e766545fcdb76    legacy48 2025-06-24T16:52:28Z 81a2 -
rs_68798cedb4a8819b9395a9086b50fb3b03f9f114a443b8a7      legacy48 2025-07-17T23:53:17Z 819b -
ws_68798cf4dc84819b9e3e445d72afa87103f9f114a443b8a7      legacy48 2025-07-17T23:53:24Z 819b -
resp_687a7b53036c819baad6012d58b39bcb074adcd9e24850fc    legacy48 2025-07-18T16:50:27Z 819b -
rs_688404f677dc81a1b0f94bd50c9dbc4b064a6bfa4c1e652e      legacy48 2025-07-25T22:28:06Z 81a1 -
resp_688babb004988199b26c5250ba69c1e80abdf302bcd600d3    legacy48 2025-07-31T17:45:20Z 8199 -
resp_68af4030592c81938ec0a5fbab4a3e9f05438e46b5f69a3b    legacy48 2025-08-27T17:28:16Z 8193 -
resp_68b28c5cc7688195b56def0cfde4526a0527c59d17df88e4    legacy48 2025-08-30T05:30:04Z 8195 -
resp_68b4fb5d29ec81a3bd7145553d0fe17b0685257985494fa1    legacy48 2025-09-01T01:48:13Z 81a3 -
resp_68b99853289481908beaa09f6c0e48a40cf02427dc5db744    legacy48 2025-09-04T13:46:59Z 8190 -
resp_68d835172d4481a3adc02a0a27d80dad05b5406cc515b605    legacy48 2025-09-27T19:03:51Z 81a3 -
rs_68d83517d32481a3a885d6180985b19505b5406cc515b605      legacy48 2025-09-27T19:03:51Z 81a3 -
fc_68d8351802e881a3aeaf0e594cbdc6d505b5406cc515b605      legacy48 2025-09-27T19:03:52Z 81a3 -
resp_68da74aaae58819ca776fbd20244e8df0fdbc19a07110799    legacy48 2025-09-29T11:59:38Z 819c -
rs_68da74ab2c48819cb435ff526bd1ba1d0fdbc19a07110799      legacy48 2025-09-29T11:59:39Z 819c -
lsh_68da74abdaec819c9aa19c124308f4600fdbc19a07110799     legacy48 2025-09-29T11:59:39Z 819c -
rs_096368a558aa35b00168dbc36533f8819dae97fbd58256341c    new50    2025-09-30T11:47:49Z 819d 01
resp_0953eda47ee17412006933306199c88195b44f9cf2986e1d5b  new50    2025-12-05T19:20:01Z 8195 00
ws_0953eda47ee1741200693330682c988195aaa470a8cc51dfe4    new50    2025-12-05T19:20:08Z 8195 00
msg_0953eda47ee17412006933308e32f08195bdfb73a410a2abfc   new50    2025-12-05T19:20:46Z 8195 00
resp_0f35ed53160b395301693cc957829881909359e7f80cdd20b5  new50    2025-12-13T02:03:03Z 8190 01
resp_09d58369f84fca7901693cb8381f608196acdaff061ff8de58  new50    2025-12-13T00:50:00Z 8196 01
rs_09d58369f84fca7901693cb838c60c81968c2e61898eec89c7    new50    2025-12-13T00:50:00Z 8196 01
resp_0d6bb044bb6ff37200698c51948054819385e24e2ad931ae6e  new50    2026-02-11T09:53:24Z 8193 00
fc_0a2fa1b539ba14ba00698c519ebab0819494302fc0b5c31440    new50    2026-02-11T09:53:34Z 8194 00
rs_04364dc0792e538c0069843adfe52081969977053e81943ede    new50    2026-02-05T06:38:23Z 8196 00
rs_07f5da51d4930c320069a95c0418688196a15aa483c08870af    new50    2026-03-05T10:33:40Z 8196 00
cmp_0a311635443846b4016994b3fb8f6481968df9bf035c612c83   new50    2026-02-17T18:31:23Z 8196 01
resp_0465b6d1ae1f97c500699f88318ee481a3b627f7fcb4875152  new50    2026-02-25T23:39:29Z 81a3 00
resp_0742d30c1d273351016a6145ef9a28819fa909a12fb4ce083c  new50    2026-07-22T22:36:31Z 819f 01
cm_0742d30c1d273351016a6145f1d2d0819faa3ecfc950fceec4    new50    2026-07-22T22:36:33Z 819f 01
resp_0bac52ec5f239d30016a6145ff09a4819291ced3bf727cda6b  new50    2026-07-22T22:36:47Z 8192 01
rs_0a7479de7ebae170016a7ba1a0334c8198a95590217efe343c    new50    2026-08-11T22:26:40Z 8198 01
fc_02846e32f0fdc48f016a936b44ef9c87d18a0821787d86fcb4    new50    2026-08-29T23:29:08Z 87d1 01
ctc_0c83d0280e8ec08f016a98a20b7a5887d1b7c4a79ed9a79b49   new50    2026-09-02T22:24:11Z 87d1 01
rs_0c83d0280e8ec08f016a98a20e1e4487d1acc8cab5d491c068    new50    2026-09-02T22:24:14Z 87d1 01
"""
SECTION_4_2 = [
    (i, lay, when, mark, None if store == "-" else store)
    for i, lay, when, mark, store in (row.split() for row in SECTION_4_2_TEXT.strip().splitlines())
]


@pytest.mark.parametrize(("ident", "layout", "when", "marker", "store"), SECTION_4_2)
def test_openai_item_id_table(ident: str, layout: str, when: str, marker: str, store: str | None) -> None:
    got = d.decode_openai_item_id(ident)
    assert got is not None
    assert got.detector == "openai-item-id"
    assert got.provider == "openai"
    assert got.host is None  # never Azure from an id (box after §0)
    assert got.problems == ()
    assert got.genuine
    assert got.shape == layout
    assert got.time == ts(when)
    assert field(got, "layout") == layout
    assert field(got, "minted") == when
    assert (field(got, "marker") or "").startswith(marker)
    assert got.strength == ("medium" if marker == "87d1" else "strong")
    if store is None:
        assert field(got, "store byte") is None
        assert field(got, "response suffix") == ident.split("_", 1)[1][32:48]
    else:
        assert field(got, "store byte") == f"{store} (store:{'true' if store == '00' else 'false'})"
        assert field(got, "conversation key") == ident.split("_", 1)[1][0:16]


def test_openai_item_id_field_order_and_item_type() -> None:
    got = d.decode_openai_item_id("rs_09d58369f84fca7901693cb838c60c81968c2e61898eec89c7")
    assert got is not None
    assert [k for k, _ in got.fields] == [
        "layout",
        "item type",
        "minted",
        "marker",
        "store byte",
        "conversation key",
    ]
    assert field(got, "item type") == "reasoning"
    assert "OpenAI or Azure" in got.meaning


@pytest.mark.parametrize(
    ("prefix", "item_type"),
    [
        ("lsh", "local_shell_call"),
        ("ctc", "custom_tool_call"),
        ("cmp", "compaction"),
        ("mcpl", "mcp_list_tools"),
    ],
)
def test_openai_item_prefixes(prefix: str, item_type: str) -> None:
    got = d.decode_openai_item_id(f"{prefix}_0953eda47ee17412006933306199c88195b44f9cf2986e1d5b")
    assert got is not None and field(got, "item type") == item_type


def test_openai_older_32_hex_form() -> None:
    got = d.decode_openai_item_id("rs_68082c0556348191af675cee0453109b")
    assert got is not None
    assert got.shape == "old32" and got.provider == "openai"
    assert got.strength == "medium" and got.tag == "guess"
    assert (field(got, "minted") or "").startswith("2025-04-22")
    # a uuid4 rendered as 32 hex behind an item prefix is not the old form (marker 4xxx)
    assert d.decode_openai_item_id("msg_3f1c2a9e8b7d4c6e9f0a1b2c3d4e5f60") is None


LM_STUDIO = [
    ("resp_551daeb1a02e4fcaf9ab76ed29f821a6db2df1883e55652c", "2015-04-02", "4fca"),
    ("resp_604f426346767f2cd7f98c793d9cfd27cba9ef834509019c", "2021-03-15", "7f2c"),
    ("resp_83a575a640aadab0a95a3e0649f43693892dc467e666dbd7", "2039-12-28", "dab0"),
    ("resp_930de53bd4b5933673481fa630f3dc5f58027a2c67598a2a", "2048-03-07", "9336"),
    ("resp_cc7bfe18e2f2eca93006515c0fd19cfed16e46a93a60444a", "2078-09-17", "eca9"),
]


@pytest.mark.parametrize(("ident", "day", "marker"), LM_STUDIO)
def test_lm_studio_ids_are_imitations(ident: str, day: str, marker: str) -> None:
    got = d.decode_openai_item_id(ident)
    assert got is not None
    assert got.provider is None and got.strength == "weak"
    assert not got.genuine
    assert "implausible-time" in got.problems and "bad-marker" in got.problems
    assert (field(got, "minted") or "").startswith(day)
    assert day in got.meaning and marker in got.meaning and "imitation" in got.meaning
    assert "LM Studio" in got.meaning
    # the dispatcher reports the imitation too, never as OpenAI evidence
    found = d.decode_string(ident, "id")
    assert [x.provider for x in found] == [None]


def test_lm_studio_meaning_example() -> None:
    got = d.decode_openai_item_id("resp_cc7bfe18e2f2eca93006515c0fd19cfed16e46a93a60444a")
    assert got is not None
    assert got.meaning == (
        "resp_ + 48 hex but time 2078-09-17 is implausible and marker eca9 is not 81xx: imitation (LM Studio style)"
    )


def test_hand_written_sh_id_fails_its_checks() -> None:
    got = d.decode_openai_item_id("sh_0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e50")
    assert got is not None
    assert got.shape == "new50"
    # a new50 marker may be new (markers change); its time and store byte cannot be
    assert set(got.problems) == {"implausible-time", "bad-store-byte"}
    assert got.provider is None and got.strength == "weak"
    assert (field(got, "minted") or "").startswith("2052")
    assert (field(got, "store byte") or "").startswith("8b")
    assert field(got, "marker") == "5c6d (not seen before)"


def test_87d1_marker_is_accepted_as_medium() -> None:
    got = d.decode_openai_item_id("ctc_0c83d0280e8ec08f016a98a20b7a5887d1b7c4a79ed9a79b49")
    assert got is not None and got.genuine and got.provider == "openai"
    assert got.strength == "medium"
    assert "87d1" in (field(got, "marker") or "")


@pytest.mark.parametrize(
    "text",
    [
        "rs_68da74ab2c48819cb435ff526bd1ba1d0fdbc19a0711079",  # 47 hex
        "rs_68da74ab2c48819cb435ff526bd1ba1d0fdbc19a071107990",  # 49 hex
        "RS_68da74ab2c48819cb435ff526bd1ba1d0fdbc19a07110799",  # upper-case prefix
        "rs_68DA74AB2C48819CB435FF526BD1BA1D0FDBC19A07110799",  # upper-case hex
        "xx_68da74ab2c48819cb435ff526bd1ba1d0fdbc19a07110799",  # unknown prefix
        "resp_custom_tool_test_001",
        "",
    ],
)
def test_openai_item_id_rejects(text: str) -> None:
    assert d.decode_openai_item_id(text) is None


def test_store_byte_never_gives_azure() -> None:
    # 00 = store:true; Codex sends it only to Azure, but the decoder must not infer a host
    for ident, *_ in SECTION_4_2:
        got = d.decode_openai_item_id(ident)
        assert got is not None and got.host is None


# ---------------------------------------------------------------------------------------------
# §5 Fernet
# ---------------------------------------------------------------------------------------------

SECTION_5_3 = [
    ("gAAAAABpAWb7", "2025-10-29T00:59:39Z"),
    ("gAAAAABpvHRx", "2026-03-19T22:10:57Z"),
    ("gAAAAABqKCel", "2026-06-09T14:48:05Z"),
    ("gAAAAABpB63I", "2025-11-02T19:15:20Z"),
    ("gAAAAABoIPOH", "2025-05-11T18:59:19Z"),
    ("gAAAAABo2DUX", "2025-09-27T19:03:51Z"),
    ("gAAAAABpPLg7", "2025-12-13T00:50:03Z"),
    ("gAAAAABplLP7", "2026-02-17T18:31:23Z"),
    ("gAAAAABqe6Gj", "2026-08-11T22:26:43Z"),
    ("gAAAAABqVRWu", "2026-07-13T16:43:26Z"),
    ("gAAAAABpqQny", "2026-03-05T04:43:30Z"),
    ("gAAAAABp-FPm", "2026-05-04T08:08:06Z"),
    ("gAAAAABqg4Gq", "2026-08-17T21:48:26Z"),
]


@pytest.mark.parametrize(("prefix", "when"), SECTION_5_3)
def test_fernet_prefixes(prefix: str, when: str) -> None:
    got = d.decode_fernet(prefix)
    assert got is not None
    assert got.detector == "fernet" and got.provider == "openai" and got.strength == "strong"
    assert got.problems == ("truncated",)
    assert got.genuine  # truncated framing still counts
    assert got.time == ts(when)
    assert field(got, "minted") == when
    assert field(got, "version") == "0x80"


def make_fernet(when: int, blocks: int, seed: int = 7, pad: bool = True) -> str:
    """A token with genuine framing (random IV, ciphertext and HMAC bytes)."""
    rnd = bytes((seed * 31 + i * 17) % 256 for i in range(16 + blocks * 16 + 32))
    raw = b"\x80" + when.to_bytes(8, "big") + rnd
    text = base64.urlsafe_b64encode(raw).decode()
    return text if pad else text.rstrip("=")


def test_fernet_synthetic_structure() -> None:
    tok = make_fernet(1_765_587_003, 61)
    got = d.decode_fernet(tok)
    assert got is not None and got.problems == ()
    assert field(got, "bytes") == "1033"
    assert (field(got, "structure") or "").startswith("ok")
    assert field(got, "IV") == base64.urlsafe_b64decode(tok)[9:25].hex()


def test_fernet_bad_structure_and_time() -> None:
    raw = b"\x80" + (1_765_587_003).to_bytes(8, "big") + bytes(range(16)) + bytes(20) + bytes(32)
    tok = base64.urlsafe_b64encode(raw).decode()
    assert tok.endswith("=")  # padded: we know it is whole
    got = d.decode_fernet(tok)
    assert got is not None
    assert got.problems == ("bad-structure",)
    assert got.provider is None and got.strength == "weak" and not got.genuine
    late = make_fernet(2_200_000_000, 3)
    got2 = d.decode_fernet(late)
    assert got2 is not None and "implausible-time" in got2.problems and got2.provider is None


def test_fernet_cut_mid_way_is_truncated_not_bad() -> None:
    tok = make_fernet(1_765_587_003, 61)
    for cut in (60, 100, 1000, 1001, 1002, 1003, len(tok) - 4):
        got = d.decode_fernet(tok[:cut])
        assert got is not None, cut
        assert got.problems == ("truncated",), cut
        assert got.time == 1_765_587_003


def test_fernet_unpadded_whole_token_is_ok() -> None:
    tok = make_fernet(1_765_587_003, 3, pad=False)  # 105 bytes: no padding needed
    got = d.decode_fernet(tok)
    assert got is not None and got.problems == ()


@pytest.mark.parametrize("text", ["gAAAAA", "gAAAAAB", "gAAAAAB$abcdefghijkl", "hAAAAABpAWb7", "gAAAAABp AWb7"])
def test_fernet_rejects(text: str) -> None:
    assert d.decode_fernet(text) is None


@pytest.mark.parametrize(
    ("name", "path", "nbytes", "when"),
    [
        (
            "azure-reasoning-encrypted-content.1.json",
            ("output", 0, "encrypted_content"),
            1033,
            "2025-12-13T00:50:03Z",
        ),
        (
            "openai-reasoning-encrypted-content.1.json",
            ("output", 0, "encrypted_content"),
            1177,
            "2025-12-13T02:03:08Z",
        ),
        ("openai-compaction.1.json", None, 31033, "2026-02-17T18:31:23Z"),
        (
            "programmatic-tool-calling.1.json",
            ("output", 0, "encrypted_content"),
            985,
            "2026-07-22T22:36:34Z",
        ),
        (
            "programmatic-tool-calling.1.json",
            ("output", 1, "fingerprint"),
            505,
            "2026-07-22T22:36:34Z",
        ),
    ],
)
def test_fernet_real_tokens(name: str, path: tuple[Any, ...] | None, nbytes: int, when: str) -> None:
    prefix = (
        "packages__azure__src____fixtures____"
        if name.startswith("azure")
        else ("packages__openai__src__responses____fixtures____")
    )
    doc = vercel(prefix + name)
    if path is None:
        tokens = re.findall(r'"(gAAAAA[A-Za-z0-9_\-=]+)"', json.dumps(doc))
        token = max(tokens, key=len)
    else:
        cur: Any = doc
        for p in path:
            cur = cur[p]
        token = cur
    got = d.decode_fernet(token)
    assert got is not None
    assert got.problems == ()
    assert field(got, "bytes") == str(nbytes)
    assert got.time == ts(when)
    assert (field(got, "structure") or "").startswith("ok")
    assert "OpenAI or Azure" in got.meaning
    assert got.host is None


def test_fernet_real_chunk_tokens() -> None:
    path = real_file(
        "vercel__ai/packages__openai__src__responses____fixtures____openai-reasoning-encrypted-content.1.chunks.txt"
    )
    tokens = set(re.findall(r'"(gAAAAA[A-Za-z0-9_\-=]+)"', path.read_text(encoding="utf-8")))
    assert len(tokens) == 3
    sizes = set()
    for tok in tokens:
        got = d.decode_fernet(tok)
        assert got is not None and got.problems == ()
        assert ts("2025-12-12T15:17:40Z") <= (got.time or 0) <= ts("2025-12-12T15:17:41Z")
        sizes.add(int(field(got, "bytes") or 0))
    assert sizes == {633, 793}


# ---------------------------------------------------------------------------------------------
# §6.1 Anthropic ids
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ident", "uuid", "when", "host"),
    [
        (
            "req_011CSkYzZmrLKTfC5kKrttht",
            "01990d0f-9dfd-7726-a629-49e62d06c877",
            "2025-09-03T00:52:31.357Z",
            None,
        ),
        ("msg_011CdMNhurHSJCxCC2NB7WYc", None, "2026-07-24T18:43:01", None),
        ("msg_vrtx_011CfBLyuqQKtoph9kWhiUt5", None, "2026-09-18T18:03:23.543Z", "vertex"),
        ("req_011CeHys8sQ3WznLUSgvvjj4", None, "2026-08-22T14:56:10.280Z", None),
        ("msg_011CeHys9Y5dktwpHNA7upmE", None, "2026-08-22T14:56:10.436Z", None),
    ],
)
def test_anthropic_uuid7_ids(ident: str, uuid: str | None, when: str, host: str | None) -> None:
    got = d.decode_anthropic_id(ident)
    assert got is not None
    assert got.detector == "anthropic-id" and got.provider == "anthropic" and got.strength == "strong"
    assert got.host == host
    assert (field(got, "minted") or "").startswith(when)
    assert got.time is not None
    if when.endswith("Z"):
        assert got.time == pytest.approx(ts(when), abs=1e-6)
    if uuid:
        assert field(got, "UUID") == uuid
        assert field(got, "minted") == when


@pytest.mark.parametrize(
    ("ident", "kind", "host"),
    [
        ("msg_01XrsJCi8CQoLcnnWdY8RsJz", "message", None),
        ("msg_01GCBaV8gyWAYgMVggRqZbuQ", "message", None),
        ("toolu_019okXfjnUzJkV2VZbndx6ik", "tool use", None),
        ("toolu_01LRmxn9vGM1d2DZSDBowdZ1", "tool use", None),
        ("toolu_01T438wYuKcrD7GNCWFwmscZ", "tool use", None),
        ("msg_bdrk_01TRwJeNivnr3Xs1x84gExCb", "message", "bedrock"),
        ("toolu_bdrk_01AbkxtHRBE6DZyuxjrqa8SJ", "tool use", "bedrock"),
    ],
)
def test_anthropic_random_ids(ident: str, kind: str, host: str | None) -> None:
    got = d.decode_anthropic_id(ident)
    assert got is not None and got.provider == "anthropic"
    assert got.host == host
    assert got.time is None
    assert field(got, "kind") == kind
    assert field(got, "body") == "random 128-bit"


@pytest.mark.parametrize(
    "text",
    [
        "msg_0175yHhPUPFGbabUiDkdjvaD0",  # 0 is not base58
        "msg_02XrsJCi8CQoLcnnWdY8RsJz",  # body must start 01
        "msg_01short",
        "msg_msg_01XrsJCi8CQoLcnnWdY8RsJz",  # relay double prefix is not a genuine id
        "req_01kh52madzem68scv0bcz3vm00",  # Groq ULID: has 0s
        "toolu_abc",
    ],
)
def test_anthropic_id_rejects(text: str) -> None:
    assert d.decode_anthropic_id(text) is None


def test_anthropic_id_over_128_bits_is_flagged() -> None:
    got = d.decode_anthropic_id("msg_01zzzzzzzzzzzzzzzzzzzzzz")
    assert got is not None and got.problems == ("bad-encoding",) and got.provider is None


def test_claude_code_request_ids_are_uuid7_and_precede_their_lines() -> None:
    folder = REAL / "d-kimuson__claude-code-viewer"
    if not folder.is_dir():
        pytest.skip(f"real public captures not available at {folder}")
    reqs: set[str] = set()
    others: set[str] = set()
    lags: list[float] = []
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            rid = rec.get("requestId")
            msg = rec.get("message") or {}
            if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                others.add(msg["id"])
            for block in msg.get("content") or [] if isinstance(msg, dict) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    others.add(block["id"])
            if rid:
                reqs.add(rid)
                got = d.decode_anthropic_id(rid)
                assert got is not None and got.time is not None, rid
                lags.append(ts(rec["timestamp"]) - got.time)
    assert len(reqs) >= 170
    assert min(lags) >= 1.5 and max(lags) <= 32  # §3.4: 1.8–31 s before the line
    for ident in others:
        got = d.decode_anthropic_id(ident)
        assert got is not None and got.time is None, ident


# ---------------------------------------------------------------------------------------------
# §6.3 Anthropic signatures
# ---------------------------------------------------------------------------------------------

# vercel/ai:packages/anthropic/src/__fixtures__/anthropic-clear-thinking.1.json (Apache-2.0)
ER4B = (
    "Er4BCkYICxgCKkCoxqLHLrx4mFL9Ox7/aHKht87WDzXfvZ7qbZKSnHV8imA5b3LXxuVqcXQ9z5sXwDx20JIW/+6DJehOSNK72L83Egx0"
    "T9s7VzB6QUK9g5kaDO9lGaWN5CPEDJU0lyIw4+Ed3q4N9w+16h3cfQ+9stJXHCl+1nYDxjIOLcyJT8Ug/LTmtlp4bbxWmmfNicay"
    "KiasdReHiOnqz1sKEF0pR4kcnF5mQGdLxk8q3A3NY+wGsH8MtUIqxRgB"
)
# vercel/ai:packages/anthropic/src/__fixtures__/anthropic-web-search-tool.1.json (Apache-2.0): a
# complete web-search result encrypted_content, header version 8.
WEB_SEARCH = (
    "Er0DCioICBgCIiRiY2JjZWJjMy1lYTFhLTRmNjktYTUwMy01YzgwNWU1Y2U0NzESDLsZPoZiisCIn9aRfRoMUzVJz86FgMrEYUEkIjBk"
    "bFhYcya8sawn8p3RQeRY1tRhIHqyvFYTCKE3BBKgRGahCSkWeqIOFdG2mDgiTR4qwAIOkz65P4t0tFtisRNBLUOX1YUmI1iBWeJevolZ"
    "2/kElJBUQGGC+8xGx2VncEskIMyslyAwhwggtFFETYDe7bS2KAvgYdIPY4AwHzwOM6Vvjkd0LNtN6B/wrYtOXATCxwQWPEq+DmRuxa0k"
    "tgb3ExTIyccqbo3fPr7ZRwZp59+Hm0v4TMQG1y2n8y4QSMgGXiUtUgHKajDdhF6SsV1gesr3OFQCaV1OJzV90vv/Mlthyy58+CEsxjTe"
    "c/eBNKXh4omjPAMz+m/Vmobj1Z17mH2kZFgqME3/X+v67EbeuBEagwSVk5jE3rW/Nl5lZHLOsI4foQzSPOBc4si/iGMioRbHYBYrl7wg"
    "lFbgJf34cArX1OAq7HePnh7syRX596sQj0VbzqWzismm08l9RUulAxMCnjWaRx5elp61Kx/g60CnQBgD"
)


def test_er4b_signature_v11_no_model() -> None:
    got = d.decode_anthropic_signature(ER4B)
    assert got is not None
    assert got.detector == "anthropic-signature" and got.provider == "anthropic" and got.strength == "strong"
    assert field(got, "version") == "11"
    assert field(got, "model") is None
    assert field(got, "header bytes") == "70"
    assert field(got, "kind") == "thinking signature"
    assert got.problems == ()
    assert "no model field" in got.meaning


def test_cais_signature_names_opus_5() -> None:
    doc = vercel("packages__anthropic__src____fixtures____anthropic-claude-opus-5-reasoning-high.1.json")
    sig = doc["content"][0]["signature"]
    assert sig.startswith("CAIS")
    got = d.decode_anthropic_signature(sig)
    assert got is not None and got.problems == ()
    assert field(got, "version") == "16"
    assert field(got, "model") == "claude-opus-5"
    assert field(got, "header bytes") == "135"
    assert field(got, "f8") == "thinking"
    assert field(got, "f11") == "3b93a5dd-7302-483f-aeae-362075548ae1"
    assert "claude-opus-5" in got.meaning


def test_real_er4b_matches_fixture() -> None:
    doc = vercel("packages__anthropic__src____fixtures____anthropic-clear-thinking.1.json")
    assert doc["content"][0]["signature"] == ER4B


def make_signature(version: int, model: str | None, cipher: int = 200) -> str:
    """A signature laid out as §6.3 describes (random-looking bytes where the content is secret)."""
    header = pb(1, version) + pb(3, 2) + pb(5, bytes(range(64)))
    if model:
        header += pb(6, model.encode()) + pb(7, 0)
    body = pb(1, header) + pb(2, bytes(12)) + pb(3, bytes(12)) + pb(4, bytes(48)) + pb(5, bytes(cipher))
    return base64.b64encode(pb(2, body) + pb(3, 1)).decode()


@pytest.mark.parametrize(
    ("version", "model"),
    [
        (9, None),
        (12, "claude-sonnet-4-6"),
        (13, "claude-haiku-4-5-20251001"),
        (12, "claude-opus-4-7"),
    ],
)
def test_signature_versions_and_models(version: int, model: str | None) -> None:
    sig = make_signature(version, model)
    assert sig[0] == "E" and sig[1] in "opqrstuv"  # the §6.3 prefix rule for >= 128 bytes
    got = d.decode_anthropic_signature(sig)
    assert got is not None and got.problems == ()
    assert field(got, "version") == str(version)
    assert field(got, "model") == model


def test_signature_truncated_reports_what_decodes() -> None:
    sig = make_signature(12, "claude-sonnet-4-6")
    full = d.decode_anthropic_signature(sig)
    assert full is not None
    for cut in range(len(sig) + 1):
        got = d.decode_anthropic_signature(sig[:cut])  # never raises
        if got is None:
            continue
        assert got.provider == "anthropic"
        if cut <= len(sig) - 6:  # the last chars hold the top-level "18 01" after the envelope
            assert "truncated" in got.problems
    got = d.decode_anthropic_signature(sig[:140])  # past the model field
    assert got is not None and field(got, "model") == "claude-sonnet-4-6"
    assert "truncated" in got.problems
    early = d.decode_anthropic_signature(sig[:12])
    assert early is not None and field(early, "version") == "12"


def test_web_search_blob_is_anthropic_not_fernet() -> None:
    got = d.decode_anthropic_signature(WEB_SEARCH)
    assert got is not None
    assert got.detector == "anthropic-web-search" and got.provider == "anthropic"
    assert field(got, "kind") == "web-search encrypted_content"
    assert field(got, "version") == "8"
    assert field(got, "f4") == "bcbcebc3-ea1a-4f69-a503-5c805e5ce471"
    assert d.decode_fernet(WEB_SEARCH) is None
    found = d.decode_string(WEB_SEARCH, "encrypted_content")
    assert [x.detector for x in found] == ["anthropic-web-search"]
    assert all(x.detector != "fernet" for x in found)
    assert d.decode_gemini_thought_signature(WEB_SEARCH) is None


@pytest.mark.parametrize(
    ("prefix", "version"),
    [
        ("EuEPCioIDBgCIh", "12"),
        ("EsgfCioICBgCIiQxMDE0OTI5My1kMTJiLTRlM2E", "8"),
        ("EuAQCioIFBgCIiQ5OGE5NTJi", "20"),
    ],
)
def test_web_search_prefixes_from_public_docs(prefix: str, version: str) -> None:
    got = d.decode_anthropic_signature(prefix)
    assert got is not None and got.detector == "anthropic-web-search"
    assert field(got, "version") == version
    assert "truncated" in got.problems


# ---------------------------------------------------------------------------------------------
# §7 Gemini
# ---------------------------------------------------------------------------------------------

GEMINI_TOOL_SIG = "Eqo+Cqc+Ab4+9vtgONaaz6qwy6WXdp7gCd2w0X+Wz2gaBgY0Gv6A12JKo0y5vQwf9YQFyhMbKr1E9m17VT6HXd7jXzjaGYaE"


def test_gemini_thought_signature_inline() -> None:
    got = d.decode_gemini_thought_signature(GEMINI_TOOL_SIG)
    assert got is not None
    assert got.provider == "google" and got.detector == "gemini-signature"
    assert field(got, "outer length") == "7978" and field(got, "inner length") == "7975"
    assert got.problems == ("truncated",)
    assert d.decode_anthropic_signature(GEMINI_TOOL_SIG) is None


@pytest.mark.parametrize(
    "name",
    [
        "packages__google__src____fixtures____google-reasoning-gemini3.json",
        "packages__google__src____fixtures____google-tool-call-gemini3.json",
    ],
)
def test_gemini_fixture_signatures_are_google_not_anthropic(name: str) -> None:
    doc = vercel(name)
    part = doc["candidates"][0]["content"]["parts"][0]
    sig = part["thoughtSignature"]
    for decoded in (d.decode_signature_value(sig), *d.decode_string(sig, "thoughtSignature")):
        assert decoded is not None
        assert decoded.provider == "google" and decoded.detector == "gemini-signature"
    assert d.decode_anthropic_signature(sig) is None


def test_anthropic_fixture_signatures_are_not_gemini() -> None:
    for name in (
        "packages__anthropic__src____fixtures____anthropic-claude-opus-5-reasoning-high.1.json",
        "packages__anthropic__src____fixtures____anthropic-clear-thinking.1.json",
    ):
        sig = vercel(name)["content"][0]["signature"]
        assert d.decode_gemini_thought_signature(sig) is None
        got = d.decode_signature_value(sig)
        assert got is not None and got.provider == "anthropic"


def test_gemini_short_form_without_outer_field() -> None:
    raw = b"\x0a\x23\x01" + bytes(range(1, 35))  # 0a 23 01 …: the CiMB… shape
    sig = base64.b64encode(raw).decode()
    assert sig.startswith("CiMB")
    got = d.decode_gemini_thought_signature(sig)
    assert got is not None and got.problems == () and "outer length" not in dict(got.fields)


RESPONSE_IDS_0210 = [
    "DniLab2dFPeSxN8PpqXY4Ag",
    "JniLacKqGqH0xs0P0O776As",
    "M3iLaY-AI7zTxN8P3Piw4Qg",
    "QHiLaa6LBrb8vdIPoNztsAg",
    "Un6LacrVMcjUxs0PmJfWoQc",
    "YH6LaZT7ENmPxN8P-r2J8Aw",
    "b36LacjwM668nsEP2tbsgQQ",
    "bH6LaZW8Fp_3nsEPqtaSwQ4",
    "dX6LadKVC7SZ28oPr9yJoQs",
    "m36LaZGyCLz1xs0PtNSB-QU",
]


@pytest.mark.parametrize("rid", RESPONSE_IDS_0210)
def test_gemini_response_ids_capture_day(rid: str) -> None:
    got = d.decode_gemini_response_id(rid)
    assert got is not None
    assert got.provider == "google" and got.strength == "medium" and got.tag == "guess"
    assert (field(got, "minted") or "").startswith("2026-02-10")


@pytest.mark.parametrize(
    ("rid", "when"),
    [
        ("DniLab2dFPeSxN8PpqXY4Ag", "2026-02-10T18:25:18Z"),
        ("JniLacKqGqH0xs0P0O776As", "2026-02-10T18:25:42Z"),
        ("dqHOab6xGLzWodAPkPuViA4", "2026-04-02"),
        ("tjXVaYaxFISTq8YP_MWiyAo", "2026-04-07"),
        ("_vr4aYiWEJnYodAPkujX0QM", "2026-05-04"),
        ("3noMaojQL_2s6tkPiO26qQ4", "2026-05-19"),
    ],
)
def test_gemini_response_id_times(rid: str, when: str) -> None:
    got = d.decode_gemini_response_id(rid)
    assert got is not None
    assert (field(got, "minted") or "").startswith(when)
    if when.endswith("Z"):
        assert got.time == ts(when)


def test_gemini_response_id_rejects_out_of_window_and_scoping() -> None:
    assert d.decode_gemini_response_id("AAAAAAAAAAAAAAAAAAAAAAA") is None  # time 0
    assert d.decode_gemini_response_id("DniLab2dFPeSxN8PpqXY4A") is None  # 22 chars
    assert d.decode_string("DniLab2dFPeSxN8PpqXY4Ag") == []
    assert d.decode_string("DniLab2dFPeSxN8PpqXY4Ag", "id") == []
    found = d.decode_string("DniLab2dFPeSxN8PpqXY4Ag", "responseId")
    assert [x.detector for x in found] == ["gemini-response-id"]


# ---------------------------------------------------------------------------------------------
# §8 tool ids, chatcmpl ids, system_fingerprint, ULID/UUIDv7, model paths
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ident", "provider", "host", "shape", "strength"),
    [
        ("call_5tcmcvPueMOTIeYuTUGW0Ss3", "openai", None, "call_+24", "strong"),
        ("call_YunNGbIwdVJ2i0y0Mybva4Pw", "openai", None, "call_+24", "strong"),
        ("call_00_9V0vrf86Pc9aelHCJMZqnJBo", "deepseek", None, "call_NN_+24", "strong"),
        ("call_0123456789abcdef0123456789abcdef", None, None, "call_+32hex", "medium"),
        ("functions.get_current_weather:0", "moonshot", None, "functions.NAME:N", "strong"),
        ("functions.bash.run-cmd:12", "moonshot", None, "functions.NAME:N", "strong"),
        ("chatcmpl-tool-8f2c3a9e1b7d4c6e", None, None, "chatcmpl-tool-hex", "medium"),
        ("toolu_019okXfjnUzJkV2VZbndx6ik", "anthropic", None, "toolu_01", "strong"),
        ("srvtoolu_01Qxbje4duKBes3Nj42MkZug", "anthropic", None, "srvtoolu_01", "strong"),
        ("toolu_bdrk_01AbkxtHRBE6DZyuxjrqa8SJ", "anthropic", "bedrock", "toolu_bdrk_01", "strong"),
        ("tooluse_AbCdEfGhIjKlMn", None, "bedrock", "tooluse_", "medium"),  # Nova mints them too: no maker
        ("call_93562515", "xai", None, "call_+8digits", "weak"),
        ("gSIMJiOkT", "mistral", None, "9-char mixed case", "weak"),
        ("ax9fskhev", "groq", None, "9-char lowercase", "weak"),
        ("85e4fd267", None, None, "9-char hex", "weak"),  # Cerebras (vercel/ai fixtures): no Groq credit
    ],
)
def test_tool_id_classes(ident: str, provider: str | None, host: str | None, shape: str, strength: str) -> None:
    got = d.classify_tool_id(ident)
    assert got is not None
    assert got.detector == "tool-id"
    assert (got.provider, got.host, got.shape, got.strength) == (provider, host, shape, strength)


@pytest.mark.parametrize("word", ["available", "withdrawn", "completed", "Available", "getStatus", "Withdrawn"])
def test_nine_letter_words_are_no_tool_ids(word: str) -> None:
    """A watsonx model list's lifecycle ``{"id": "available"}`` gave Groq credit (traceloop/openllmetry cassettes)."""
    assert d.classify_tool_id(word) is None
    assert not [x for x in d.decode_string(word, "id") if x.detector == "tool-id"]


def test_tool_id_uuid4hex_meaning() -> None:
    got = d.classify_tool_id("call_0123456789abcdef0123456789abcdef")
    assert got is not None and "self-hosted server or harness" in got.meaning


def test_gemini_cli_tool_id_time() -> None:
    got = d.classify_tool_id("run_shell_command-1754000000000-3f9a2c")
    assert got is not None and got.provider == "google" and got.shape == "name-ms-hex"
    assert got.time == 1_754_000_000.0
    assert field(got, "minted") == "2025-07-31T22:13:20.000Z"
    assert d.classify_tool_id("backup-0000000000001-abcdef") is None  # outside the window


@pytest.mark.parametrize(
    "text",
    [
        "call_abc123",
        "chatcmpl-test-tool",
        "resp_custom_tool_test_001",
        "ABCDEFGHI",
        "123456789",
        "call_1234567",
    ],
)
def test_tool_id_placeholders_do_not_match(text: str) -> None:
    assert d.classify_tool_id(text) is None


@pytest.mark.parametrize(
    ("ident", "provider", "shape"),
    [
        ("chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU", "openai", "chatcmpl-+29"),
        ("chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt", "openai", "chatcmpl-+29"),
        ("chatcmpl-ed8fb9c62e7b4d87a6629594c0bc7215", None, "chatcmpl-+32hex"),
        ("chatcmpl-1fd017fc-60b8-44eb-a736-375b8e1bc3e7", None, "chatcmpl-+uuid4"),
    ],
)
def test_chatcmpl_ids(ident: str, provider: str | None, shape: str) -> None:
    got = d.decode_chatcmpl_id(ident)
    assert got is not None and got.provider == provider and got.shape == shape
    assert got.time is None and got.host is None


@pytest.mark.parametrize("text", ["chatcmpl-tool-8f2c3a9e1b7d4c6e", "chatcmpl-test-tool", "chatcmpl-", "cmpl-x"])
def test_chatcmpl_rejects(text: str) -> None:
    assert d.decode_chatcmpl_id(text) is None


@pytest.mark.parametrize(
    ("fp", "provider", "shape"),
    [
        ("fp_de604bd877", None, "fp_+10hex"),
        ("fp_2a885414fb", None, "fp_+10hex"),
        ("fp_f8b414701e", None, "fp_+10hex"),
        ("fp_eaab8d114b_prod0820_fp8_kvcache", "deepseek", "fp_+10hex_prod"),
        ("fp_a33c042689e969567008", None, "fp_+20hex"),
    ],
)
def test_system_fingerprint(fp: str, provider: str | None, shape: str) -> None:
    got = d.classify_system_fingerprint(fp)
    assert got is not None and got.provider == provider and got.shape == shape
    if provider is None:
        assert got.strength == "weak"


def test_system_fingerprint_scoped_to_its_key() -> None:
    assert d.decode_string("fp_eaab8d114b_prod0820_fp8_kvcache") == []
    found = d.decode_string("fp_eaab8d114b_prod0820_fp8_kvcache", "system_fingerprint")
    assert [x.provider for x in found] == ["deepseek"]


def test_ulid_groq() -> None:
    got = d.decode_ulid("req_01kh52madzem68scv0bcz3vm00")
    assert got is not None
    assert got.detector == "ulid" and got.provider is None and got.strength == "weak"
    assert (field(got, "minted") or "").startswith("2026-02-11T00:46:43")
    assert "Groq" in got.meaning
    upper = d.decode_ulid("01KH52MADZEM68SCV0BCZ3VM00")
    assert upper is not None and upper.time == got.time
    assert d.decode_ulid("01Kh52MADZEM68SCV0BCZ3VM00") is None  # mixed case
    assert d.decode_ulid("81KH52MADZEM68SCV0BCZ3VM00") is None  # > 48-bit time


def test_uuid7() -> None:
    got = d.decode_uuid7("019c8a53-a0dd-7130-bcd7-95445d84846a")
    assert got is not None and got.detector == "uuid7" and got.provider is None
    assert (field(got, "minted") or "").startswith("2026-02-23T11:47:42")
    assert d.decode_uuid7("01a06438-ef47-7d91-a661-d26a0b396c26") is not None
    assert d.decode_uuid7("7a630f5b-b7e6-4878-82f8-d77db164d42b") is None  # uuid4 (DeepSeek id)
    assert d.decode_uuid7("61c0468b-2a98-413e-f654-dbffcdbb62c1") is None  # xAI UUID-like


def test_model_path() -> None:
    got = d.decode_model_path("accounts/fireworks/models/kimi-k2p6")
    assert got is not None and got.host == "fireworks" and got.provider is None
    assert field(got, "model") == "kimi-k2p6"
    assert d.decode_model_path("accounts/fireworks/models/") is None
    assert d.decode_model_path("kimi-k3") is None
    assert [x.host for x in d.decode_string("accounts/fireworks/models/kimi-k3", "model")] == ["fireworks"]


# ---------------------------------------------------------------------------------------------
# Key presence (§12.1 point 4)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "provider", "host", "strength"),
    [
        ("content_filters", None, None, "azure", "strong"),
        ("content_filters", [{"blocked": False}], None, "azure", "strong"),
        ("prompt_filter_results", None, None, "azure", "strong"),
        ("content_filter_results", {"hate": {}}, None, "azure", "strong"),
        ("inference_geo", "global", "anthropic", None, "medium"),
        ("inference_geo", None, None, None, "weak"),
        ("cache_creation", {"ephemeral_5m_input_tokens": 0}, "anthropic", None, "medium"),
        ("cache_creation", None, None, None, "weak"),
        ("service_tier", "standard", "anthropic", None, "weak"),
        ("service_tier", "default", "openai", None, "weak"),
        ("service_tier", "on_demand", "groq", None, "weak"),
        ("service_tier", "auto", None, None, "weak"),
        ("prompt_cache_hit_tokens", 320, "deepseek", None, "strong"),
        ("prompt_cache_miss_tokens", 19, "deepseek", None, "strong"),
        ("x_groq", {"id": "req_01kh52madzem68scv0bcz3vm00"}, "groq", None, "strong"),
        ("cost_in_usd_ticks", 1399000, "xai", None, "medium"),
        ("num_sources_used", 0, "xai", None, "medium"),
        ("raw_output", None, None, "fireworks", "medium"),
        ("reasoning_content", "First, …", None, None, "weak"),
    ],
)
def test_decode_key(key: str, value: object, provider: str | None, host: str | None, strength: str) -> None:
    got = d.decode_key(key, value)
    assert got is not None and got.detector == "key"
    assert (got.provider, got.host, got.strength) == (provider, host, strength)


def test_decode_key_nulls_and_unknown() -> None:
    geo = d.decode_key("inference_geo", None)
    assert geo is not None and "Fireworks" in geo.meaning and geo.provider is None
    assert d.decode_key("service_tier", None) is None
    assert d.decode_key("cache_creation", 5) is None
    assert d.decode_key("model", "gpt-5") is None
    assert d.decode_key("cache_creation_input_tokens", 0) is None


# ---------------------------------------------------------------------------------------------
# Signature values and the dispatcher
# ---------------------------------------------------------------------------------------------


def test_signature_value_empty_and_wrappers() -> None:
    empty = d.decode_signature_value("")
    assert empty is not None
    assert empty.detector == "empty-signature" and empty.provider is None
    assert empty.strength == "medium" and empty.tag == "source"
    assert empty.meaning.startswith("reasoning present but unsigned")
    vertex = d.decode_signature_value("claude#AbCdEf0123")
    assert vertex is not None and vertex.provider == "anthropic" and vertex.host == "vertex"
    assert vertex.tag == "source"
    tok = make_fernet(1_765_587_003, 3)
    wrapped = d.decode_signature_value(f"gpt_responses_v1:{tok}")
    assert wrapped is not None and wrapped.detector == "fernet" and wrapped.provider == "openai"
    assert "gpt_responses_v1" in wrapped.meaning
    er = d.decode_signature_value(ER4B)
    assert er is not None and er.provider == "anthropic"
    assert d.decode_signature_value("not a signature") is None


def test_decode_string_muse_wrapper() -> None:
    tok = make_fernet(1_790_000_001, 5)
    found = d.decode_string(f"gpt_responses_v1:{tok}", "signature")
    assert [x.detector for x in found] == ["muse-gpt-responses-tag", "fernet"]
    tag = found[0]
    assert tag.provider == "openai" and tag.strength == "medium" and tag.tag == "guess"
    assert found[1].time == 1_790_000_001
    # glued straight after the tag, without a separator
    glued = d.decode_string(f"gpt_responses_v1{tok}")
    assert [x.detector for x in glued] == ["muse-gpt-responses-tag", "fernet"]


def test_decode_string_embedded_ids_and_tokens() -> None:
    tok = make_fernet(1_765_587_003, 4)
    text = json.dumps(
        {
            "id": "rs_09d58369f84fca7901693cb838c60c81968c2e61898eec89c7",
            "encrypted_content": tok,
            "req": "see req_011CSkYzZmrLKTfC5kKrttht.",
            "bdrk": "(msg_bdrk_01TRwJeNivnr3Xs1x84gExCb)",
        }
    )
    found = d.decode_string(text, "output")
    kinds = sorted((x.detector, x.host or "") for x in found)
    assert kinds == [
        ("anthropic-id", ""),
        ("anthropic-id", "bedrock"),
        ("fernet", ""),
        ("openai-item-id", ""),
    ]
    prose = "The id rs_68da74ab2c48819cb435ff526bd1ba1d0fdbc19a07110799 was created at 11:59:39."
    assert [x.shape for x in d.decode_string(prose)] == ["legacy48"]


def test_decode_string_embedded_boundaries() -> None:
    hexbody = "68da74ab2c48819cb435ff526bd1ba1d0fdbc19a07110799"
    assert d.decode_string(f"xrs_{hexbody} and more text here") == []
    assert d.decode_string(f"Xrs_{hexbody} and more text here") == []
    assert d.decode_string(f"rs_{hexbody}abc and more text here") == []
    assert d.decode_string(f"url/rs_{hexbody}?q=1 and more") != []
    # a gAAAAA run inside another base64 blob is not a token
    assert d.decode_string("QUJDRA" + make_fernet(1_765_587_003, 2)) == []


def test_decode_string_strong_detectors_ignore_keys() -> None:
    for key in (None, "text", "whatever"):
        assert [x.shape for x in d.decode_string("call_5tcmcvPueMOTIeYuTUGW0Ss3", key)] == ["call_+24"]
        assert [x.detector for x in d.decode_string(ER4B, key)] == ["anthropic-signature"]
        assert [x.detector for x in d.decode_string("req_011CSkYzZmrLKTfC5kKrttht", key)] == ["anthropic-id"]


@pytest.mark.parametrize(
    "text",
    [
        "call_93562515",
        "functions.get_weather:0",
        "ax9fskhev",
        "gSIMJiOkT",
        "chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU",
        "019c8a53-a0dd-7130-bcd7-95445d84846a",
        "req_01kh52madzem68scv0bcz3vm00",
        "run_shell_command-1754000000000-3f9a2c",
    ],
)
def test_weak_detectors_need_an_id_key(text: str) -> None:
    assert d.decode_string(text) == []
    assert d.decode_string(text, "text") == []
    found = d.decode_string(text, "id")
    assert len(found) == 1


@pytest.mark.parametrize("word", ["something", "functions", "Something", "Wednesday", "configure"])
def test_nine_char_words_never_match_outside_id_keys(word: str) -> None:
    assert d.decode_string(word) == []
    assert d.decode_string(word, "text") == []
    assert d.decode_string(word, "name") == []


@pytest.mark.parametrize(
    "text",
    [
        "4f3c2a9e8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e",  # git sha-1
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  # sha-256
        "3f1c2a9e8b7d4c6e9f0a1b2c3d4e5f60",  # uuid4 hex without prefix
        "b3999b8c93e04e11bcbff7bcab829667",  # Mistral's 32-hex id
        "commit 4f3c2a9e8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e and sha e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ],
)
def test_bare_hex_gives_no_openai_evidence(text: str) -> None:
    for key in (None, "id", "sha"):
        assert all(x.provider != "openai" for x in d.decode_string(text, key))


def test_decode_string_ordinary_strings() -> None:
    for text in (
        "",
        "hello",
        "The quick brown fox jumps over the lazy dog",
        "/home/user/my_project/file_name.py",
        "Error: could not open file",
        "ConfigurationManagerFactoryBuilderImplXY",
        "Everything is fine here, nothing to see",
        "call_abc123",
        "resp_custom_tool_test_001",
    ):
        assert d.decode_string(text) == []
        assert d.decode_signature_value(text) is None or text == ""


def test_id_keys() -> None:
    for key in (
        "id",
        "call_id",
        "tool_call_id",
        "tool_use_id",
        "message_id",
        "requestId",
        "responseId",
        "callId",
    ):
        assert key in d.ID_KEYS
    assert "text" not in d.ID_KEYS and "name" not in d.ID_KEYS


# ---------------------------------------------------------------------------------------------
# Whole real files: the evidence points where SOURCES.md says
# ---------------------------------------------------------------------------------------------


def walk(obj: Any, key: str | None = None) -> list[Decoded]:
    """Every Decoded in a parsed JSON document, the way an engine would collect them."""
    out: list[Decoded] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            got = d.decode_key(k, v)
            if got is not None:
                out.append(got)
            out.extend(walk(v, k))
    elif isinstance(obj, list):
        for v in obj:
            out.extend(walk(v, key))
    elif isinstance(obj, str):
        if key in d.SIGNATURE_KEYS:
            sig = d.decode_signature_value(obj)
            if sig is not None:
                out.append(sig)
                return out
        out.extend(d.decode_string(obj, key))
        if obj[:1] in ("{", "["):
            with contextlib.suppress(ValueError):
                out.extend(walk(json.loads(obj), key))
    return out


FILES = [
    (
        "packages__anthropic__src____fixtures____anthropic-claude-opus-5-reasoning-high.1.json",
        "anthropic",
        None,
    ),
    ("packages__anthropic__src____fixtures____anthropic-clear-thinking.1.json", "anthropic", None),
    ("packages__anthropic__src____fixtures____anthropic-tool-no-args.json", "anthropic", None),
    (
        "packages__azure__src____fixtures____azure-reasoning-encrypted-content.1.json",
        "openai",
        "azure",
    ),
    ("packages__azure__src____fixtures____azure-text.1.json", "openai", "azure"),
    ("packages__azure__src____fixtures____azure-tool-call.1.json", "openai", "azure"),
    ("packages__deepseek__src__chat____fixtures____deepseek-tool-call.json", "deepseek", None),
    ("packages__google__src____fixtures____google-reasoning-gemini3.json", "google", None),
    ("packages__google__src____fixtures____google-tool-call-gemini3.json", "google", None),
    ("packages__groq__src____fixtures____groq-tool-call.json", "groq", None),
    ("packages__mistral__src____fixtures____mistral-tool-call.json", "mistral", None),
    (
        "packages__openai__src__chat____fixtures____azure-model-router.1.chunks.txt",
        "openai",
        "azure",
    ),
    ("packages__openai__src__chat____fixtures____openai-text.json", "openai", None),
    ("packages__openai__src__responses____fixtures____openai-compaction.1.json", "openai", None),
    (
        "packages__openai__src__responses____fixtures____openai-local-shell-tool.1.json",
        "openai",
        None,
    ),
    ("packages__openai__src__responses____fixtures____openai-phase.1.json", "openai", None),
    (
        "packages__openai__src__responses____fixtures____openai-reasoning-encrypted-content.1.chunks.txt",
        "openai",
        None,
    ),
    (
        "packages__openai__src__responses____fixtures____openai-reasoning-encrypted-content.1.json",
        "openai",
        None,
    ),
    (
        "packages__openai__src__responses____fixtures____openai-web-search-tool.1.json",
        "openai",
        None,
    ),
    (
        "packages__openai__src__responses____fixtures____programmatic-tool-calling.1.json",
        "openai",
        None,
    ),
    ("packages__xai__src____fixtures____xai-tool-call.json", "xai", None),
]


@pytest.mark.parametrize(("name", "provider", "host"), FILES)
def test_real_files_point_to_their_provider(name: str, provider: str, host: str | None) -> None:
    path = real_file(f"vercel__ai/{name}")
    text = path.read_text(encoding="utf-8")
    docs = (
        [json.loads(line) for line in text.splitlines() if line.strip()]
        if name.endswith(".txt")
        else [json.loads(text)]
    )
    found = [x for doc in docs for x in walk(doc)]
    providers = {x.provider for x in found if x.provider is not None}
    assert provider in providers
    # nothing strong points anywhere else, and nothing is an imitation
    assert {x.provider for x in found if x.strength == "strong" and x.provider} <= {provider}
    assert all(x.genuine for x in found)
    hosts = {x.host for x in found if x.host}
    assert hosts == ({host} if host else set())
    if provider != "openai":
        assert all(x.detector not in ("openai-item-id", "fernet") for x in found)


def test_resp_id_time_equals_created_at() -> None:
    for name, provider, _host in FILES:
        if provider != "openai" or name.endswith(".txt") or "chat" in name:
            continue
        doc = vercel(name)
        got = d.decode_openai_item_id(doc["id"])
        assert got is not None and got.time == doc["created_at"], name


def test_codex_rollouts_only_have_call_ids() -> None:
    folder = REAL / "madshn__localpush"
    if not folder.is_dir():
        pytest.skip(f"real public captures not available at {folder}")
    detectors: set[tuple[str, str]] = set()
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                detectors |= {(x.detector, x.shape) for x in walk(json.loads(line))}
    # §2.4 / SOURCES.md: call_+24 and (time-only) UUIDv7 thread/turn ids, nothing else
    assert detectors == {("tool-id", "call_+24"), ("uuid7", "uuid7")}
