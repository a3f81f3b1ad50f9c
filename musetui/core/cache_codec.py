"""What the persistent cache stores: plain data, compressed, validated field by field on load.

Nothing read from the cache is unpickled, unmarshalled or evaluated. Every stored value is
JSON (orjson; the standard library's ``json`` when a string holds a lone surrogate, as a
file name that is not UTF-8 does), compressed with zlib. A dataclass is stored as the list
of its field values, in field order, and read back through a decoder built from its type
hints: each value must have exactly the type its field declares, or the whole blob is
:class:`Invalid` (a cache miss: the file is read again). Only the classes named in those
hints are ever built, and only with values that passed their checks.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import operator
import types
import typing
import zlib
from collections.abc import Callable
from typing import Any

import orjson

__all__ = [
    "SEAL_BYTES",
    "Invalid",
    "Raw",
    "Unstorable",
    "codec",
    "deflate",
    "dump",
    "from_text",
    "inflate",
    "kind_of",
    "load",
    "pack",
    "plain_value",
    "seal",
    "to_text",
    "unpack",
    "unseal",
]

Enc = Callable[[Any], Any]
Dec = Callable[[Any], Any]

#: First byte of a stored blob: how the compressed text is to be parsed.
_ORJSON = b"o"
_JSON = b"j"
#: A blob expands to at most this many times its stored size (plus 1 MiB); past it, it is :class:`Invalid`.
MAX_EXPANSION = 200


#: Every stored blob starts with the CRC-32 of the rest (little-endian): a blob whose bytes
#: changed on disk is discarded and its file read again, never replayed.
SEAL_BYTES = 4


class Invalid(ValueError):
    """A stored value does not have the shape its type requires (the row is a cache miss)."""


class Unstorable(ValueError):
    """A value the cache cannot hold as plain data (it is then not stored)."""


def pack(plain: Any) -> bytes:
    """Plain data (see :func:`codec`) as a stored blob: its JSON, compressed."""
    text = to_text(plain)
    return text[:1] + deflate(text[1:])


def to_text(plain: Any) -> bytes:
    """Plain data as its JSON text, after the byte that says how to parse it (a blob before compression).

    A :class:`Raw` in it stands for the value its text holds, written as it is (texts are also
    joined as they are: see :func:`musetui.core.cache_snapshot.joined`).
    """
    try:
        return _ORJSON + orjson.dumps(plain, default=_raw_orjson)
    except orjson.JSONEncodeError:  # a lone surrogate (a non-UTF-8 file name), or an int past 64 bits
        try:
            return _JSON + json.dumps(
                plain, ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=_raw_json
            ).encode("ascii")
        except (TypeError, ValueError) as exc:
            raise Unstorable(str(exc)) from exc


class Raw:
    """A value already written by :func:`to_text` (its ``text``): :func:`to_text` writes it as it is where it stands."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text


def _raw_orjson(v: Any) -> Any:
    if type(v) is Raw and v.text[:1] == _ORJSON:
        return orjson.Fragment(v.text[1:])
    raise TypeError(f"not plain data: {type(v).__name__}")  # (a text orjson cannot read: the standard JSON writes it)


def _raw_json(v: Any) -> Any:
    if type(v) is Raw:
        return from_text(v.text)
    raise TypeError(f"not plain data: {type(v).__name__}")


def from_text(text: bytes) -> Any:
    """The plain data of a :func:`to_text` text; :class:`Invalid` when it cannot be read."""
    return _parse(text[:1], memoryview(text)[1:])


def _parse(kind: bytes, body: bytes | memoryview) -> Any:
    if kind not in (_ORJSON, _JSON):
        raise Invalid("unknown blob format")
    try:
        return orjson.loads(body) if kind == _ORJSON else json.loads(bytes(body))
    except (ValueError, RecursionError) as exc:  # (orjson.JSONDecodeError is a ValueError)
        raise Invalid(f"not JSON: {exc}") from exc


def kind_of(texts: list[bytes]) -> bytes:
    """The parse byte of a text that joins these :func:`to_text` texts: the standard library's JSON when any needs it."""
    return _JSON if any(t[:1] == _JSON for t in texts) else _ORJSON


def deflate(data: bytes | memoryview) -> bytes:
    """``data`` compressed (zlib)."""
    return zlib.compress(data, 3)


def inflate(blob: bytes) -> bytes:
    """What :func:`deflate` made of it; :class:`Invalid` when it is not that, or expands past :data:`MAX_EXPANSION`."""
    d = zlib.decompressobj()
    try:
        data = d.decompress(blob, MAX_EXPANSION * len(blob) + 2**20)
    except zlib.error as exc:
        raise Invalid(f"not zlib data: {exc}") from exc
    if d.unconsumed_tail or not d.eof or d.unused_data:
        raise Invalid("blob expands too far, is cut, or has bytes after its end")
    return data


def unpack(blob: bytes) -> Any:
    """The plain data of a stored blob; :class:`Invalid` when it cannot be read."""
    blob = bytes(blob)
    kind = blob[:1]
    if kind not in (_ORJSON, _JSON):
        raise Invalid("unknown blob format")
    return _parse(kind, inflate(blob[1:]))


def dump(tp: Any, value: Any) -> bytes:
    """``value`` (of type ``tp``) as a stored blob."""
    return pack(codec(tp)[0](value))


def load(tp: Any, blob: bytes) -> Any:
    """The value of type ``tp`` a stored blob holds; :class:`Invalid` when it holds anything else."""
    return codec(tp)[1](unpack(blob))


_CODECS: dict[Any, tuple[Enc, Dec]] = {}
#: Fields stored otherwise than their type hint says: (class, field name) -> codec.
OVERRIDES: dict[tuple[type, str], tuple[Enc, Dec]] = {}
#: Names that type hints use but their module imports only for type checking (``Reason``).
HINT_NAMES: dict[str, Any] = {}


def codec(tp: Any) -> tuple[Enc, Dec]:
    """The (encode, decode) pair for a type: to plain JSON data and back, checking every value."""
    got = _CODECS.get(tp)
    if got is None:
        got = _CODECS[tp] = _compile(tp)
    return got


def _same(v: Any) -> Any:
    return v


#: Decoders that only check a value's type (and return it as it is), with the types they accept.
_PLAIN: dict[Dec, frozenset[type]] = {}


def _scalar(*kinds: type) -> tuple[Enc, Dec]:
    def dec(v: Any) -> Any:
        if type(v) not in kinds:
            raise Invalid(f"expected {'/'.join(k.__name__ for k in kinds)}, got {type(v).__name__}")
        return v

    _PLAIN[dec] = frozenset(kinds)
    return _same, dec


def _fields(decs: list[Dec], make: Callable[..., Any], what: str) -> Dec:
    """A decoder of a fixed list of fields into ``make(*fields)``.

    The fields whose decoder only checks a type are checked together, in C loops; the
    others go through their decoders. Anything unexpected takes the field-by-field path,
    which says what is wrong.
    """
    n = len(decs)
    plain = [i for i, d in enumerate(decs) if d in _PLAIN]
    kinds = [_PLAIN[decs[i]] for i in plain]
    take = operator.itemgetter(*plain) if len(plain) > 1 else None
    rest = [(i, d) for i, d in enumerate(decs) if d not in _PLAIN]

    def dec(v: Any) -> Any:
        if type(v) is not list or len(v) != n:
            raise Invalid(f"expected the {n} fields of {what}")
        if take is not None and all(map(frozenset.__contains__, kinds, map(type, take(v)))):
            if not rest:
                return make(*v)
            out = list(v)
            for i, d in rest:
                out[i] = d(out[i])
            return make(*out)
        return make(*[d(x) for d, x in zip(decs, v, strict=True)])

    return dec


def _enc_float(v: Any) -> Any:
    if type(v) is float and v - v != 0.0:  # inf or nan: JSON has no literal for them
        return [repr(v)]
    return v


def _dec_float(v: Any) -> Any:
    t = type(v)
    if t is float or t is int:  # an int stays an int (the record prints what the scan computed)
        return v
    if t is list and len(v) == 1 and v[0] in ("inf", "-inf", "nan"):
        return float(v[0])
    raise Invalid(f"expected a number, got {t.__name__}")


_PLAIN[_dec_float] = frozenset({int, float})  # (inf and nan take the slow path)


def _enc_bytes(v: Any) -> Any:
    """Printable ASCII as text (it compresses with the same text elsewhere in the blob), else ``[base64]``."""
    if v.isascii():
        text = v.decode("ascii")
        if text.isprintable():
            return text
    return [base64.b64encode(v).decode("ascii")]


def _dec_bytes(v: Any) -> Any:
    if type(v) is str:
        try:
            return v.encode("ascii")
        except UnicodeEncodeError as exc:
            raise Invalid("bytes stored as text must be ASCII") from exc
    if type(v) is not list or len(v) != 1 or type(v[0]) is not str:
        raise Invalid("expected bytes")
    try:
        return base64.b64decode(v[0], validate=True)
    except ValueError as exc:
        raise Invalid(f"bad base64: {exc}") from exc


def _optional(inner: tuple[Enc, Dec]) -> tuple[Enc, Dec]:
    ienc, idec = inner

    def enc(v: Any) -> Any:
        return None if v is None else ienc(v)

    def dec(v: Any) -> Any:
        return None if v is None else idec(v)

    if idec in _PLAIN:
        _PLAIN[dec] = _PLAIN[idec] | {type(None)}
    return (_same if ienc is _same else enc), dec


def _sequence(inner: tuple[Enc, Dec], make: Callable[[Any], Any]) -> tuple[Enc, Dec]:
    ienc, idec = inner

    def enc(v: Any) -> Any:
        return [ienc(x) for x in v]

    def dec(v: Any) -> Any:
        if type(v) is not list:
            raise Invalid(f"expected a list, got {type(v).__name__}")
        return make([idec(x) for x in v])

    if ienc is _same:  # (JSON writes lists and tuples of plain values as they are)
        return (list if make is set else _same), dec
    return enc, dec


def _fixed_tuple(parts: list[tuple[Enc, Dec]]) -> tuple[Enc, Dec]:
    encs = [p[0] for p in parts]
    decs = [p[1] for p in parts]
    n = len(parts)

    def enc(v: Any) -> Any:
        if len(v) != n:
            raise Unstorable(f"expected a tuple of {n}")
        return [e(x) for e, x in zip(encs, v, strict=True)]

    return (_same if all(e is _same for e in encs) else enc), _fields(decs, _tuple_of, f"a tuple of {n}")


def _tuple_of(*values: Any) -> tuple[Any, ...]:
    return values


def _mapping(key: Any, value: tuple[Enc, Dec]) -> tuple[Enc, Dec]:
    venc, vdec = value
    if key is str:

        def enc(v: Any) -> Any:
            return {k: venc(x) for k, x in v.items()}

        def dec(v: Any) -> Any:
            if type(v) is not dict:
                raise Invalid("expected an object")
            return {k: vdec(x) for k, x in v.items()}

        return (_same if venc is _same else enc), dec
    kenc, kdec = codec(key)

    def enc_pairs(v: Any) -> Any:
        return [[kenc(k), venc(x)] for k, x in v.items()]

    def dec_pairs(v: Any) -> Any:
        if type(v) is not list or not all(type(p) is list and len(p) == 2 for p in v):
            raise Invalid("expected a list of pairs")
        return {kdec(k): vdec(x) for k, x in v}

    return enc_pairs, dec_pairs


def _literal(values: tuple[Any, ...]) -> tuple[Enc, Dec]:
    allowed = frozenset(values)

    def dec(v: Any) -> Any:
        if type(v) is not str or v not in allowed:
            raise Invalid(f"not one of {sorted(allowed)}")
        return v

    return _same, dec


def _tagged(classes: list[type]) -> tuple[Enc, Dec]:
    """One of several dataclasses, stored as ``[class name, fields…]``; only those classes are ever built."""
    by_name = {c.__name__: (c, codec(c)) for c in classes}

    def enc(v: Any) -> Any:
        got = by_name.get(type(v).__name__)
        if got is None or got[0] is not type(v):
            raise Unstorable(f"not one of {sorted(by_name)}")
        return [type(v).__name__, got[1][0](v)]

    def dec(v: Any) -> Any:
        if type(v) is not list or len(v) != 2 or type(v[0]) is not str or v[0] not in by_name:
            raise Invalid(f"expected one of {sorted(by_name)}")
        return by_name[v[0]][1][1](v[1])

    return enc, dec


def _dataclass(cls: type) -> tuple[Enc, Dec]:
    hints = typing.get_type_hints(cls, localns=HINT_NAMES)
    names = [f.name for f in dataclasses.fields(cls)]
    parts = [OVERRIDES.get((cls, n)) or codec(hints[n]) for n in names]
    decs = [p[1] for p in parts]
    n = len(names)
    getter = operator.attrgetter(*names)
    work = [(i, p[0]) for i, p in enumerate(parts) if p[0] is not _same]  # the fields that need encoding

    def enc(v: Any) -> Any:
        values = list(getter(v)) if n > 1 else [getter(v)]
        for i, e in work:
            values[i] = e(values[i])
        return values

    return enc, _fields(decs, cls, cls.__name__)


def _compile(tp: Any) -> tuple[Enc, Dec]:
    if tp is str or tp is int or tp is bool:
        return _scalar(tp)
    if tp is float:
        return _enc_float, _dec_float
    if tp is bytes:
        return _enc_bytes, _dec_bytes
    if tp is Any:
        return plain_value, _dec_plain
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return _optional(codec(rest[0]))
        if len(rest) == len(args) and all(dataclasses.is_dataclass(a) and isinstance(a, type) for a in rest):
            return _tagged(rest)
    elif origin is typing.Literal:
        return _literal(args)
    elif origin is list:
        return _sequence(codec(args[0]), list)
    elif origin is set:
        return _sequence(codec(args[0]), set)
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _sequence(codec(args[0]), tuple)
    elif origin is tuple:
        return _fixed_tuple([codec(a) for a in args])
    elif origin is dict:
        return _mapping(args[0], codec(args[1]))
    raise TypeError(f"the cache cannot store {tp!r}")


def plain_value(v: Any) -> Any:
    """A JSON value (None, bool, int, float, str, list, str-keyed dict) as itself; anything else is :class:`Unstorable`."""
    t = type(v)
    if v is None or t is str or t is int or t is bool:
        return v
    if t is float:
        return _enc_float(v)
    if t is list:
        return [plain_value(x) for x in v]
    if t is dict and all(type(k) is str for k in v):
        return {k: plain_value(x) for k, x in v.items()}
    raise Unstorable(f"not a JSON value: {t.__name__}")


def _dec_plain(v: Any) -> Any:
    """A JSON value read back (numbers that were inf or nan restored)."""
    t = type(v)
    if t is list:
        if len(v) == 1 and v[0] in ("inf", "-inf", "nan"):
            return float(v[0])
        return [_dec_plain(x) for x in v]
    if t is dict:
        return {k: _dec_plain(x) for k, x in v.items()}
    return v


def attrs_plain(obj: Any, skip: str | tuple[str, ...]) -> list[Any]:
    """An object's attributes (but those named in ``skip``) as ``[name, kind, value]`` triples of plain data.

    Sets, tuples and dicts with keys other than strings keep their kind; their members must
    be JSON values (or tuples of them, in a set or as a key).
    """
    out: list[Any] = []
    skipped = (skip,) if isinstance(skip, str) else skip
    for name, v in vars(obj).items():
        if name in skipped:
            continue
        t = type(v)
        if t is set or t is frozenset:
            out.append([name, "set", [_hashable_plain(x) for x in v]])
        elif t is tuple:
            out.append([name, "tuple", [plain_value(x) for x in v]])
        elif t is dict and not all(type(k) is str for k in v):
            out.append([name, "pairs", [[_hashable_plain(k), plain_value(x)] for k, x in v.items()]])
        else:
            out.append([name, "value", plain_value(v)])
    return out


def _hashable_plain(v: Any) -> Any:
    if type(v) is tuple:
        return [_hashable_plain(x) for x in v]
    if type(v) is bytes:
        raise Unstorable("bytes in a set")
    return plain_value(v)


def _hashable(v: Any) -> Any:
    if type(v) is list:
        return tuple(_hashable(x) for x in v)
    if type(v) is dict:
        raise Invalid("a mapping cannot be a set member or a key")
    return _dec_plain(v)


def attrs_set(obj: Any, stored: Any, skip: str | tuple[str, ...]) -> None:
    """Set ``obj``'s attributes from :func:`attrs_plain`'s triples, checking them against the fresh ``obj``.

    The stored names must be exactly the object's own (but ``skip``), and each value must have
    the type of the fresh value (or either is None).
    """
    skipped = (skip,) if isinstance(skip, str) else skip
    fresh = {k: v for k, v in vars(obj).items() if k not in skipped}
    if type(stored) is not list or not all(type(t) is list and len(t) == 3 for t in stored):
        raise Invalid("expected attribute triples")
    if sorted(t[0] for t in stored if type(t[0]) is str) != sorted(fresh):
        raise Invalid("attribute names differ")
    for name, kind, v in stored:
        if kind == "set":
            value: Any = set(_hashable(x) for x in _as_list(v))
        elif kind == "tuple":
            value = tuple(_dec_plain(x) for x in _as_list(v))
        elif kind == "pairs":
            pairs = [_as_list(p) for p in _as_list(v)]
            if not all(len(p) == 2 for p in pairs):
                raise Invalid("expected key-value pairs")
            value = {_hashable(k): _dec_plain(x) for k, x in pairs}
        elif kind == "value":
            value = _dec_plain(v)
        else:
            raise Invalid(f"unknown attribute kind {kind!r}")
        before = fresh[name]
        if value is not None and before is not None and type(value) is not type(before):
            if not (type(before) is frozenset and type(value) is set):
                raise Invalid(f"attribute {name}: {type(value).__name__} where {type(before).__name__} is expected")
            value = frozenset(value)
        setattr(obj, name, value)


def _as_list(v: Any) -> list[Any]:
    if type(v) is not list:
        raise Invalid("expected a list")
    return v


def seal(blob: bytes) -> bytes:
    """``blob`` with its CRC-32 in front, as stored."""
    return zlib.crc32(blob).to_bytes(SEAL_BYTES, "little") + blob


def unseal(blob: bytes) -> bytes | None:
    """The payload of a sealed blob, or None when its checksum does not match (it was damaged)."""
    blob = bytes(blob)
    if len(blob) < SEAL_BYTES:
        return None
    payload = blob[SEAL_BYTES:]
    return payload if zlib.crc32(payload).to_bytes(SEAL_BYTES, "little") == blob[:SEAL_BYTES] else None
