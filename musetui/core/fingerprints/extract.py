"""Find fingerprints in a session, cheaply, and turn them into located evidence.

Two candidate finders feed the same decoders (``decoders.py`` is the single truth):

* :func:`scan_raw` runs three literal-anchored regexes over the raw bytes of a whole
  file (``_``-anchored ids and keys, ``gAAAAA`` tokens, ``signature`` values). A line
  without a candidate costs nothing beyond those passes; it is never walked.
* :func:`walk` visits every string value (and key) of a parsed record, parsing
  JSON held inside strings too. It is used for small API captures, for items opened in
  the UI, and to name the field path of the evidence the raw pass found.
"""

from __future__ import annotations

import importlib
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from musetui.core import jsonwalk
from musetui.core.fingerprints import decoders as d
from musetui.core.fingerprints import patterns, shapes
from musetui.core.fingerprints.types import Decoded

#: The ``_``-anchored pass: id bodies after a prefix, the Muse wrapper tag, weak tool ids
#: scoped to ``*_id`` keys; then key names whose presence is evidence; Fernet tokens;
#: signature values. Each regex is the alternation of its rows in :mod:`.patterns`.
U_RE = re.compile(patterns.pass_regex("u"))
K_RE = re.compile(patterns.pass_regex("k"))
G_RE = re.compile(patterns.pass_regex("g"))
S_RE = re.compile(patterns.pass_regex("s"))
_PASS_RES = {"u": U_RE, "k": K_RE, "g": G_RE, "s": S_RE}

#: The ``u`` groups that are an id body after a lowercase prefix.
_ID_GROUPS = frozenset({"hex", "b58", "route", "ds", "alnum", "dig8"})
_ID_PREFIX_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyz")
_KEY_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

#: Cap on evidence examples kept per (detector, provider, host, shape) group.
EXAMPLES_PER_GROUP = 3
#: Cap on anomalies (time mismatch, imitation, truncated) listed individually.
MAX_ANOMALIES = 20


@dataclass(slots=True)
class Hit:
    """One decoded artifact at one place."""

    decoded: Decoded
    line_index: int  # 0-based index into the file's line table
    offset: int  # byte offset of the artifact in the file
    key: str | None = None
    field: str | None = None
    zone: int = 0
    value: str | None = None  # set when ``decoded`` is a shared shape decode for another value


_LOWER = bytes(sorted(_ID_PREFIX_CHARS))
_KEYB = bytes(sorted(_KEY_CHARS))


def _token_start(data: bytes, underscore: int) -> int:
    """Walk back from the ``_`` over a lowercase prefix (``rs``, ``call``, ``toolu`` …)."""
    lo = max(0, underscore - 10)
    return lo + len(data[lo:underscore].rstrip(_LOWER))


def _key_start(data: bytes, underscore: int) -> int:
    lo = max(0, underscore - 48)
    return lo + len(data[lo:underscore].rstrip(_KEYB))


#: 2**128 - 1 in base58 (22 digits). The alphabet is in ASCII order, so equal-length
#: bodies compare numerically as strings.
_MAX128_B58 = b"YcVfxkQb6JRzqk5kF2tNLv"


def _random_anthropic(raw: bytes, prefix_len: int) -> bool:
    """True when an Anthropic ``01…`` body is provably a random 128-bit id (not an in-window UUIDv7).

    A first base58 digit other than ``1`` puts the value at or above 58**21 > 2**123,
    so its first byte is at least 0x08: a millisecond time past 2036, outside the window.
    """
    body = raw[prefix_len + 3 :]  # after "_01"
    return len(body) == 22 and body[:1] != b"1" and body <= _MAX128_B58


#: The prefixes :func:`_decode_id` can accept: every other lowercase prefix decodes to None
#: (an OpenAI item id needs one of the item types; ``call`` and the Anthropic prefixes have
#: their own decoders), so the raw pass looks only for ids behind one of these.
ID_PREFIXES: frozenset[str] = frozenset({"call", "msg", "req", "toolu", "srvtoolu", *d.OPENAI_ITEM_TYPES})


#: The prefixes of Anthropic ids, as the raw pass reads them, with their rows.
_ANTHROPIC_ROWS = {
    p.encode(): row for p in ("msg", "req", "toolu", "srvtoolu") if (row := d.anthropic_prefix(p)) is not None
}


def _decode_id(token: str) -> Decoded | None:
    """Decode an id-shaped token by its prefix (None unless it is one of :data:`ID_PREFIXES`)."""
    prefix = token.split("_", 1)[0]
    if prefix == "call":
        return d.classify_tool_id(token)
    if prefix in ("msg", "req", "toolu", "srvtoolu"):
        got = d.decode_anthropic_id(token)
        if got is not None:
            return got
        if prefix != "msg":
            return d.classify_tool_id(token)
    return d.decode_openai_item_id(token)


def scan_raw(
    data: bytes,
    line_starts: list[int],
    seen: set[bytes] | None = None,
    finder: Callable[[bytes], Passes] | None = None,
) -> Iterator[Hit]:
    """Yield every artifact the raw passes find in ``data`` (deduplicated by value).

    Args:
        data: the file's bytes (or the appended part of it).
        line_starts: byte offset of each line within ``data``, ascending (to locate hits).
        seen: values already reported for this file (updated in place), so a resumed
            scan does not count an appended replay of an earlier value again.
        finder: the matches of the four passes (default: one Hyperscan scan, each
            candidate confirmed by its pass's regex; :func:`candidates_re` is plain ``re``).
    """
    for decoded, pos, key, raw in raw_hits(data, seen, finder):
        line = bisect_right(line_starts, pos) - 1
        if raw is None:
            yield Hit(decoded, line, pos, key=key)
        else:
            yield Hit(decoded, line, pos, value=raw.decode("ascii", "replace"))


#: The decode shared by every value of one time-less id shape, by (group, prefix, length).
_BY_SHAPE: dict[tuple[str | None, bytes, int], Decoded | None] = {}
_MAX_SHAPES = 4096

#: One raw-pass hit: (decoded, byte offset, key, raw value). ``raw`` is set (and ``key`` is
#: None) when ``decoded`` is a time-less decode shared by every value of its shape.
RawHit = tuple[Decoded, int, "str | None", "bytes | None"]


def raw_hits(
    data: bytes,
    seen: set[bytes] | None = None,
    finder: Callable[[bytes], Passes] | None = None,
    keys: bool = True,
) -> Iterator[RawHit]:
    """The hits of :func:`scan_raw`, in its order, as :data:`RawHit` tuples (not located by line).

    With ``keys`` False, a signature's key is not spelled (its ``key`` is None).
    """
    if seen is None:
        seen = set()
    u, k, g, s = _candidates(data) if finder is None else finder(data)
    if len(_BY_SHAPE) > _MAX_SHAPES:
        _BY_SHAPE.clear()
    here: dict[tuple[str | None, bytes, int], Decoded] = {}  # this file's decode of each shape met
    seen_add = seen.add
    id_groups = _ID_GROUPS
    key_chars = _KEY_CHARS
    lower = _LOWER
    keyb_chars = _KEYB
    for m in chain(u, k):
        group = m.lastgroup
        if group == "kval":  # a key whose presence is evidence: once per key and null-ness
            start = m.start()
            lo = start - 48 if start > 48 else 0
            kstart = lo + len(data[lo:start].rstrip(keyb_chars))  # _key_start
            keyb = data[kstart : m.end("key")]
            tag = keyb + (b"=null" if m.group("kval") == b"null" else b"=set")
            if tag not in seen:
                seen_add(tag)
                decoded = _decode_key(tag)
                if decoded is not None:
                    yield decoded, kstart, keyb.decode("ascii", "replace"), None
            continue
        if group is None or group not in id_groups:
            hit = _key_hit(data, m, group, seen)
            if hit is not None:
                yield hit
            continue
        # an id body after a lowercase prefix (rs_…, call_…, toolu_01…), once per value
        start = m.start()
        lo = start - 10 if start > 10 else 0
        tstart = lo + len(data[lo:start].rstrip(lower))  # _token_start
        if tstart == start or (tstart > 0 and data[tstart - 1] in key_chars):
            continue
        raw = data[tstart : m.end(group)]
        if raw in seen:
            continue
        seen_add(raw)
        prefix = data[tstart:start]
        if group == "b58" and _random_anthropic(raw, start - tstart):
            # Not a UUIDv7 and within 128 bits: decodes like every other random id of this shape.
            hit = _shared_shape((group, prefix, len(raw)), raw, tstart, here, cache_none=False)
        elif prefix == b"call":
            # an id without upper case is its own class (a compatible server's look-alike)
            skey = (group if raw.lower() != raw else "lower", prefix, len(raw))
            hit = _shared_shape(skey, raw, tstart, here, cache_none=True)
        else:
            token = raw.decode("ascii", "replace")
            row = _ANTHROPIC_ROWS.get(prefix) if group == "b58" else None
            # an Anthropic id as its regex matched it: past decode_anthropic_id's checks (the same ones)
            decoded = d.decode_anthropic_body(token, row, token[len(prefix) + 1 :]) if row is not None else None
            if decoded is None:
                decoded = _decode_id(token)
            hit = None if decoded is None else (decoded, tstart, None, None)
        if hit is not None:
            yield hit
    yield from _fernet_hits(g, seen)
    yield from _signature_hits(data, s, seen, keys)


#: The decode of a presence key by its raw-pass tag (``key=null`` / ``key=set``): decode_key
#: reads nothing else of a raw key (its value is None or a placeholder), so once per process.
_KEY_DECODES: dict[bytes, Decoded | None] = {}


def _decode_key(tag: bytes) -> Decoded | None:
    """:func:`decoders.decode_key` of the key a raw-pass tag names, None for ``=null`` and a placeholder for ``=set``."""
    if tag in _KEY_DECODES:
        return _KEY_DECODES[tag]
    if len(_KEY_DECODES) >= _MAX_SHAPES:
        _KEY_DECODES.clear()
    name, _eq, state = tag.rpartition(b"=")
    got = _KEY_DECODES[tag] = d.decode_key(name.decode("ascii", "replace"), None if state == b"null" else "…")
    return got


def _shared_shape(
    skey: tuple[str | None, bytes, int],
    raw: bytes,
    pos: int,
    here: dict[tuple[str | None, bytes, int], Decoded],
    cache_none: bool,
) -> RawHit | None:
    """A time-less id shape decodes the same way for every value: decode once per process, reuse.

    For another value of a shape this file already met, the shared decode is carried with the
    raw value; the file's first value of a shape gets its own decode, as decoding would give.
    ``cache_none`` remembers a shape that decodes to nothing too.
    """
    base = here.get(skey)
    if base is not None:
        return base, pos, None, raw
    if skey in _BY_SHAPE:
        base = _BY_SHAPE[skey]
        if base is None:
            return None
        here[skey] = base = base.with_value(raw.decode("ascii", "replace"))
        return base, pos, None, None
    decoded = _decode_id(raw.decode("ascii", "replace"))
    if decoded is None:
        if cache_none:
            _BY_SHAPE[skey] = None
        return None
    if decoded.time is None and not decoded.problems:
        _BY_SHAPE[skey] = here[skey] = decoded
    return decoded, pos, None, None


def _key_hit(data: bytes, m: re.Match[bytes], group: str | None, seen: set[bytes]) -> RawHit | None:
    """The Muse wrapper tag, or a weak tool id under an ``*_id`` key."""
    start = m.start()
    key: str | None = None
    if group == "tag":
        if b"gpt_responses_v1" in seen:
            return None
        seen.add(b"gpt_responses_v1")
        found = [x for x in d.decode_string("gpt_responses_v1") if x.detector == "muse-gpt-responses-tag"]
        decoded = found[0] if found else None
        pos = _token_start(data, start)
    elif group == "idv":
        raw = m.group("idv")
        if raw in seen:
            return None
        seen.add(raw)
        key = data[_key_start(data, start) : start + 3].decode("ascii", "replace")
        decoded = d.classify_tool_id(raw.decode("ascii", "replace"))
        pos = m.start("idv")
    else:
        return None
    return None if decoded is None else (decoded, pos, key, None)


def _fernet_hits(g: Iterable[re.Match[bytes]], seen: set[bytes]) -> Iterator[RawHit]:
    """The ``gAAAAA…`` tokens of the Fernet pass, once per value."""
    for m in g:
        raw = m.group()
        if raw in seen:
            continue
        seen.add(raw)
        decoded = d.decode_fernet(raw.decode("ascii"))
        if decoded is not None:
            yield decoded, m.start(), None, None


def _signature_hits(data: bytes, s: Iterable[Span], seen: set[bytes], keys: bool) -> Iterator[RawHit]:
    """The ``signature`` values; every empty one counts (unsigned reasoning) and decodes alike."""
    empty: Decoded | None = None
    for mstart, sstart, send in s:
        raw = data[sstart:send]
        if raw:
            sig_tag = b"sig:" + raw[:200]
            if sig_tag in seen:
                continue
            seen.add(sig_tag)
            decoded = d.decode_signature_value(raw.decode("utf-8", "replace"))
            if decoded is not None and decoded.value.encode("utf-8", "replace") in seen:
                continue  # the token inside the wrapper was already found by the Fernet pass
        else:
            seen.add(b"sig:")
            if empty is None:
                empty = d.decode_signature_value("")
            decoded = empty
        if decoded is not None:
            key = None
            if keys:
                key_head = data[_key_start(data, mstart) : mstart]
                key = key_head.decode("ascii", "replace") + "ignature" if key_head else "signature"
            yield decoded, sstart, key, None


#: A signature pass match as (its start, the start and end of its value).
Span = tuple[int, int, int]
#: The finders' passes: the matches of the ``u``, ``k`` and ``g`` passes, the spans of the ``s`` pass.
Passes = tuple[Iterable[re.Match[bytes]], Iterable[re.Match[bytes]], Iterable[re.Match[bytes]], Iterable[Span]]


def _spans(matches: Iterable[re.Match[bytes]]) -> Iterator[Span]:
    return ((m.start(), m.start("sig"), m.end("sig")) for m in matches)


def candidates_re(data: bytes) -> Passes:
    """The matches of the four passes, by ``re`` alone (four passes over ``data``)."""
    return U_RE.finditer(data), K_RE.finditer(data), G_RE.finditer(data), _spans(S_RE.finditer(data))


#: Before a prefixed row's ``_``: one of the id prefixes, after a non-key byte (or the start).
#: A match behind another prefix is never reported (its id decodes to None), and skipping it
#: hides no other match: its span holds no non-key byte, so no prefixed head starts inside it.
_PREFIX = rb"(?:^|[^A-Za-z0-9_])(?:" + "|".join(sorted(ID_PREFIXES, key=len, reverse=True)).encode() + rb")"
_DB: Any = None
_META: list[tuple[int, int, bytes]] = []


def _database() -> tuple[Any, list[tuple[int, int, bytes]]]:
    """One Hyperscan database of every row's head, compiled once per process.

    Returns the database and, per expression, (pass index, width of the head from its
    anchor; -1 when the width varies and Hyperscan reports the start itself; -2 when it
    varies and the start is the last of the row's ``lead`` before the end, and that lead).
    """
    global _DB, _META
    if _DB is None:
        from musetui.core import patternset as ps

        sre: Any = importlib.import_module("re._parser")
        exprs: list[bytes] = []
        flags: list[int] = []
        meta: list[tuple[int, int, bytes]] = []
        for row in patterns.ROWS:
            expr = (_PREFIX + row.head) if row.prefixed else row.head
            if row.pass_ not in patterns.HS_PASSES or expr in exprs:
                continue  # rows sharing a head (and so a pass) share its expression
            lo, hi = sre.parse(row.head).getwidth()
            fixed = lo == hi
            exprs.append(expr)
            flags.append(0 if fixed or row.lead else ps.SOM_LEFTMOST)
            width = lo if fixed else -2 if row.lead else -1
            meta.append((patterns.PASSES.index(row.pass_), width, row.lead))
        _DB, _META = ps.compile_set(exprs, flags), meta
    return _DB, _META


def prepare() -> None:
    """Compile the candidate database and read the id-shape table now (once per process; forked workers inherit both)."""
    _database()
    shapes.table()


def _candidates(data: bytes) -> Passes:
    """The matches of the four passes: one Hyperscan scan for the heads, ``re`` at each head.

    The hits :func:`raw_hits` makes of them are those of :func:`candidates_re`: every match of
    a pass starts where one of its heads does, and trying the pass's regex at each head start
    in order, after the end of the previous match, is what ``finditer`` does at those
    positions. A key's repeat (:func:`_confirm`) is skipped: it adds no hit. Passes outside
    :data:`~musetui.core.fingerprints.patterns.HS_PASSES` run their regex over ``data``.
    """
    db, meta = _database()
    starts: list[list[int]] = [[], [], [], []]

    def on(eid: int, frm: int, to: int, _flags: int, _ctx: object) -> None:
        p, w, lead = meta[eid]
        starts[p].append(to - w if w >= 0 else frm if w == -1 else data.rfind(lead, 0, to))

    db.scan(data, match_event_handler=on)
    out: list[Any] = []
    for p, name in enumerate(patterns.PASSES):
        rx = _PASS_RES[name]
        if name not in patterns.HS_PASSES:
            out.append(rx.finditer(data) if name != "s" else _spans(rx.finditer(data)))
            continue
        got = starts[p]
        if len(got) > 1:
            got = sorted(set(got))
        out.append(_confirm(rx, data, got, name) if name != "s" else _confirm_signatures(data, got))
    u, k, g, s = out
    return u, k, g, s


#: The signature pass's regex is its opening (the key, a colon, a quote), then a value that holds no
#: quote and no backslash, then a quote: after the opening, the first quote or backslash decides.
_SIG_OPEN_END = rb"(?P<sig>[^\"\\]*)\""
if not S_RE.pattern.endswith(_SIG_OPEN_END) or S_RE.pattern.count(b"(") != 1:
    raise ValueError("the signature pass changed: update _confirm_signatures")
_SIG_OPEN = re.compile(S_RE.pattern[: -len(_SIG_OPEN_END)])


def _confirm_signatures(data: bytes, heads: list[int]) -> list[Span]:
    """:func:`_confirm` for the signature pass, as spans: the value is read by two byte searches, not by ``re``.

    The regex's value is a run of bytes other than a quote or backslash, closed by a quote (its
    opening cannot end anywhere else: its spaces are followed by a colon and a quote). So it
    matches where its opening does and the first quote after it comes before any backslash; a
    value runs for thousands of bytes, which ``re`` reads a byte at a time.
    """
    found: list[Span] = []
    end = 0
    for pos in heads:
        if pos < end:
            continue
        m = _SIG_OPEN.match(data, pos)
        if m is None:
            continue
        a = m.end()
        e = data.find(b'"', a)
        if e < 0 or data.find(b"\\", a, e) >= 0:
            continue
        found.append((pos, a, e))
        end = e + 1
    return found


def _confirm(rx: re.Pattern[bytes], data: bytes, heads: list[int], name: str) -> list[re.Match[bytes]]:
    """The matches of ``rx`` at ``heads`` (ascending), each after the previous one's end, less a key's repeats.

    A repeat is a presence key's match whose bytes, with the key's letters before its ``_``
    (all :func:`raw_hits` reads of it), are those of an earlier match: it adds no hit (its key
    and null-ness are already seen). It is told before matching, from the bytes alone: such a
    match reads no byte past its end. (Most of a transcript's keys repeat: the usage block of
    every response. Ids repeat less, and telling theirs costs more than it saves: callgrind,
    bar150/claude every 10th file, 596.0 M instructions with keys only, 602.5 M with ids too.)
    """
    found: list[re.Match[bytes]] = []
    end = 0
    keys = name == "k"
    # the bytes at a key's "_" -> (the length of its letters before the "_", what its match read, its length past "_")
    earlier: dict[bytes, list[tuple[int, bytes, int]]] = {}
    key_chars = _KEY_CHARS
    for pos in heads:
        if pos < end:
            continue
        lo = -1
        if keys:
            lo = pos - 48 if pos > 48 else 0
            for n_letters, read, n in earlier.get(data[pos : pos + _AT_KEY], ()):
                # a repeat: the same bytes from a key's first letter, which is where raw_hits finds it
                # (48 back at most, else past a byte that no key holds)
                lead = pos - n_letters
                if lead >= lo and data.startswith(read, lead) and (lead == lo or data[lead - 1] not in key_chars):
                    end = pos + n
                    break
            if end > pos:
                continue
        m = rx.match(data, pos)
        if m is None:
            continue
        found.append(m)
        end = m.end()
        if keys and m.lastgroup == "kval":
            lead = lo + len(data[lo:pos].rstrip(_KEYB))  # the key's first letter (as raw_hits finds it)
            earlier.setdefault(data[pos : pos + _AT_KEY], []).append((pos - lead, data[lead:end], end - pos))
    return found


#: The bytes from a presence key's ``_`` that file its earlier matches (any length would do: a
#: match is a repeat by its whole bytes; the shortest key head, ``_geo"``, has five).
_AT_KEY = 5


_KEY_SIGNALS = d.PRESENCE_KEYS


def walk_record(obj: Any) -> list[tuple[Decoded, str | None, str]]:
    """Every artifact in one parsed record, as (decoded, key, field path); deduplicated by value."""
    out: list[tuple[Decoded, str | None, str]] = []
    seen: set[str] = set()

    if not isinstance(obj, dict | list):
        return out
    path_of = jsonwalk.path_of
    for base, member, key, value, is_key, _depth in jsonwalk.entries(obj, scalars=False):
        if is_key:
            if key in _KEY_SIGNALS and key not in seen:
                seen.add(key)
                path = path_of(base, member)
                got = d.decode_key(key, _lookup(obj, path))
                if got is not None:
                    out.append((got, key, path))
        elif not value:
            if key in ("signature", "thoughtSignature") and "sig:" not in seen:
                seen.add("sig:")
                got = d.decode_signature_value("")
                if got is not None:
                    out.append((got, key, path_of(base, member)))
        else:
            _visit_value(value, key, base, member, seen, out)
    return out


def _visit_value(
    value: str,
    key: str | None,
    base: str,
    member: str | int | None,
    seen: set[str],
    out: list[tuple[Decoded, str | None, str]],
) -> None:
    """The artifacts of one non-empty string value at ``base``/``member`` (see :func:`walk_record`)."""
    if key in ("signature", "thoughtSignature") and value not in seen:
        seen.add(value)
        got = d.decode_signature_value(value)
        if got is not None:
            out.append((got, key, jsonwalk.path_of(base, member)))
            return
    for got in d.decode_string(value, key):
        if got.value in seen:
            continue
        seen.add(got.value)
        out.append((got, key, jsonwalk.path_of(base, member)))
    if key == "model" and value.startswith("accounts/"):
        got2 = d.decode_model_path(value)
        if got2 is not None and value not in seen:
            seen.add(value)
            out.append((got2, key, jsonwalk.path_of(base, member)))


def _lookup(obj: Any, path: str) -> Any:
    """Value at a dotted path produced by :func:`walk` (best effort, for key-presence values)."""
    cur = obj
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            idx = int(part[1:-1])
            if isinstance(cur, list) and idx < len(cur):
                cur = cur[idx]
            else:
                return None
        elif isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return None
    return cur


def field_path(obj: Any, needle: str, key: str | None = None) -> str | None:
    """The path of the first string (or key, if ``key`` is given) in ``obj`` that contains ``needle``.

    A targeted search (:func:`musetui.core.jsonwalk.find_path`): the walk stops at the first
    find, and a string holding JSON is parsed only when it contains the needle.
    """
    return jsonwalk.find_path(obj, needle, key)


@dataclass(slots=True)
class FileHits:
    """All hits of one file, with what is needed to locate and time them."""

    hits: list[Hit] = field(default_factory=list)
