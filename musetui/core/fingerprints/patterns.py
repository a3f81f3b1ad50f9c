"""The candidate patterns of the raw fingerprint passes, as one table (a new detector is one row).

Each row names a pass (``u``: ``_``-anchored ids, ``k``: evidence keys and the Muse tag,
``g``: Fernet tokens, ``s``: signature values), the ``re`` alternative that confirms a
candidate and decides its group (the pass's regex is the alternation of its rows, in table
order), and the Hyperscan *head*: a pattern every match of the row begins with, as tight as
the id layout allows. ``prefixed`` rows need the lowercase prefix before their ``_`` (``rs``,
``call``, ``toolu`` … after a non-key byte), which the head checks too. The decoders decide
what a candidate is; this table only says where candidates can be.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANCHORS", "HS_PASSES", "PASSES", "ROWS", "Row", "pass_regex"]

_B58 = rb"[1-9A-HJ-NP-Za-km-z]"
#: The head shared by the id bodies that start with 8 alphanumerics (hex, base58, 24
#: alphanumerics, 8 digits): one head per ``_``, so each candidate is reported once.
_ALNUM8 = rb"_[0-9A-Za-z]{8}"


@dataclass(frozen=True, slots=True)
class Row:
    """One candidate pattern.

    Attributes:
        pass_: ``u``, ``k``, ``g`` or ``s``.
        confirm: the ``re`` alternative (bytes), with its named group.
        head: the Hyperscan pattern every match of ``confirm`` starts with (its anchor first).
        prefixed: the anchor ``_`` must follow 1-10 lowercase letters after a non-key byte.
        lead: for a head of varying width, a literal that starts every match of the head and occurs
            nowhere else in one: Hyperscan then reports only where the head ends, and it starts at the
            last ``lead`` before that. (Tracking a start costs Hyperscan more than finding the head:
            callgrind, bar150[::40] in-process, the ``_id`` head's start tracked: +3.8 M instructions.)
    """

    pass_: str
    confirm: bytes
    head: bytes
    prefixed: bool = False
    lead: bytes = b""


ROWS: tuple[Row, ...] = (
    # OpenAI item ids (rs_, msg_, fc_ … + 32/48/50 hex), and other hex bodies.
    Row(
        "u",
        rb"(?P<hex>[0-9a-f]{32}(?:[0-9a-f]{16}(?:[0-9a-f]{2})?)?)(?![0-9A-Za-z])",
        _ALNUM8,
        True,
    ),
    # Anthropic ids: msg_01 / toolu_01 / req_01 + base58.
    Row("u", rb"(?P<b58>01" + _B58 + rb"{20,24})(?![0-9A-Za-z])", _ALNUM8, True),
    # Bedrock and Vertex routed Anthropic ids: msg_bdrk_01… / msg_vrtx_01…, and the newer
    # Bedrock msg_bdrk_ + 32 lowercase alphanumerics.
    Row(
        "u",
        rb"(?P<route>(?:bdrk|vrtx)_01" + _B58 + rb"{20,24}|bdrk_[a-z0-9]{32})(?![0-9A-Za-z])",
        rb"_(?:bdrk|vrtx)_[0-9A-Za-z]{22}",  # fixed width: both bodies start with 22 alphanumerics
        True,
    ),
    # DeepSeek-style tool ids: call_00_ + 24 alphanumerics.
    Row("u", rb"(?P<ds>\d\d_[A-Za-z0-9]{24})(?![A-Za-z0-9])", rb"_\d\d_[A-Za-z0-9]{24}", True),
    # OpenAI tool ids: call_ + 24 alphanumerics.
    Row("u", rb"(?P<alnum>[A-Za-z0-9]{24})(?![A-Za-z0-9])", _ALNUM8, True),
    # Numeric tool ids: call_ + 8 digits.
    Row("u", rb"(?P<dig8>\d{8})(?![A-Za-z0-9])", _ALNUM8, True),
    # Weak tool ids scoped to *_id keys: Kimi functions.name:N, vLLM chatcmpl-tool-, 9 alnum.
    Row(
        "u",
        rb"id\"\s*:\s*\"(?P<idv>functions\.[A-Za-z0-9_\-.]+:\d+|chatcmpl-tool-[0-9a-f]{16,32}|[A-Za-z0-9]{9})\"",
        rb"_id\"\s*:\s*\"(?:functions\.|chatcmpl-tool-[0-9a-f]{16}|[A-Za-z0-9]{9}\")",
        lead=b'_id"',  # (after it: spaces, a colon, a quote, then no "_")
    ),
    # Key names whose presence is evidence (Azure filters, Anthropic geo/tier/creation, …).
    Row(
        "k",
        rb"(?P<key>filters|filter_results|geo|tier|creation|groq|usd_ticks|hit_tokens|miss_tokens"
        rb"|output|content|sources_used)\"\s*:\s*(?P<kval>null|\"[^\"\\]{0,64}\"|[\[{0-9tf])",
        rb"_(?:filters|filter_results|geo|tier|creation|groq|usd_ticks|hit_tokens|miss_tokens"
        rb"|output|content|sources_used)\"",
    ),
    # The Muse wrapper tag gpt_responses_v1.
    Row("k", rb"(?P<tag>responses_v1)", rb"_responses_v1"),
    # Fernet tokens (version byte 0x80, then a time whose top bytes are zero).
    Row("g", rb"gAAAAA[A-Za-z0-9_\-]*=*", rb"gAAAAA"),
    # Signature values (Anthropic thinking signatures, Gemini thoughtSignature, wrappers).
    Row("s", rb"ignature\"\s*:\s*\"(?P<sig>[^\"\\]*)\"", rb"ignature\""),
)

#: The passes, in the order their hits are reported.
PASSES: tuple[str, ...] = ("u", "k", "g", "s")

#: The passes whose heads Hyperscan finds (the others run their regex over the data). The
#: prefixed ``u`` heads are led by the decoders' id prefixes (``rs_``, ``call_`` …, see
#: ``extract.ID_PREFIXES``), not by a lone ``_``: on the 40 MB sample finding every candidate
#: took 0.19 s this way against 0.28 s with the ``u`` pass in ``re``.
HS_PASSES: tuple[str, ...] = ("u", "k", "g", "s")

#: Every regex of a pass starts at this anchor (the ``_`` of ``u`` and ``k``).
ANCHORS: dict[str, bytes] = {"u": b"_", "k": b"_", "g": b"", "s": b""}


def pass_regex(pass_: str) -> bytes:
    """The confirming regex of a pass: its anchor, then the alternation of its rows in order."""
    alts = [r.confirm for r in ROWS if r.pass_ == pass_]
    if len(alts) == 1 and not ANCHORS[pass_]:
        return alts[0]
    return ANCHORS[pass_] + b"(?:" + b"|".join(alts) + b")"
