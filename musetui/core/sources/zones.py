"""Where a string sits decides what it proves: the zones of a format's records.

Every format declares, once and as data, the fields its serving stack writes (ids,
signatures, encrypted content, usage keys, response envelopes) and the fields whose text
the model, the user or a tool wrote (reply text, reasoning summaries, tool-call arguments
and file contents, tool results). An artifact in a stack field is provenance; one anywhere
else is *quoted*: listed as evidence, down-weighted, and never allowed to decide a verdict
or raise a flag on its own (docs/fingerprints.md#zones).

Two readers share one table:

* :meth:`Zones.zone_of` takes a field path (``payload.event.tool_calls[0].args.content``),
  as the full walk of API records and the field resolver spell it;
* :meth:`Zones.zone_at` takes a raw line and the byte offset of a hit, for the raw pass,
  which must not parse the line: it reads the key of the string that holds the hit, whether
  that string is JSON text escaped inside another string, and whether it lies inside one of
  the objects the model writes (tool-call arguments). It sees a path's last key, not the
  whole path: a leaf name of the stack table counts wherever it sits outside those objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from musetui.core.sources.base import ZONE_MODEL, ZONE_QUOTED

#: Zone codes (a byte per line in the scanner, an int per located hit): ZONE_MODEL (0) is a
#: field the serving stack writes, ZONE_QUOTED (1) quoted input (prompts, tool results,
#: instructions, replayed history); the others name what quoted a hit on a model-output line.
ZONE_TEXT = 2  # text the model (or the harness) wrote: reply, reasoning summary, any field the stack does not write
ZONE_TOOL_ARGS = 3  # tool-call arguments and the file contents they carry
ZONE_ESCAPED = 4  # JSON text held inside a string value (a file, a fixture, a pasted response)

ZONE_NAMES = {
    ZONE_MODEL: "serving stack's own field",
    ZONE_QUOTED: "quoted input/tool output",  # (the wording of the detail before the other zones)
    ZONE_TEXT: "text the model or harness wrote (reply, reasoning, or a field the stack does not write)",
    ZONE_TOOL_ARGS: "tool-call arguments or file contents",
    ZONE_ESCAPED: "JSON text quoted inside a string value",
}

_INDEX = re.compile(r"\[\d+\]")
_PARENT = re.compile(r"(?:^|\.)[^.]*\Z")
_SPACE = b" \t"


def _pattern(path: str) -> str:
    """A table path as a regex: ``*`` is any run of characters, ``[]`` any list index."""
    return "(?:" + re.escape(path).replace(r"\*", ".*") + ")"


def _leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1].removesuffix("[]")


@dataclass(frozen=True, slots=True)
class Zones:
    """One format's zone table.

    Attributes:
        stack: field paths the serving stack writes (``[]`` for any list index, ``*`` for any key).
        quoted: ``(path, zone)`` pairs: fields (and everything inside them) that someone else wrote.
        default: the zone of a path neither table names: quoted text for transcripts (only the
            stack's fields are provenance), the stack for raw API bodies (only content is quoted).
        keep: stack fields inside a quoted field (``delta.signature`` of a stream's ``delta``).
    """

    stack: tuple[str, ...]
    quoted: tuple[tuple[str, int], ...] = ()
    default: int = ZONE_TEXT
    keep: tuple[str, ...] = ()
    stack_keys: frozenset[bytes] = field(init=False)
    key_zones: dict[bytes, int] = field(init=False)
    objects: tuple[bytes, ...] = field(init=False)
    _stack_re: re.Pattern[str] = field(init=False)
    _quoted_re: tuple[tuple[re.Pattern[str], int], ...] = field(init=False)
    _keep_re: re.Pattern[str] | None = field(init=False)

    def __post_init__(self) -> None:
        keys = frozenset(_leaf(p).encode() for p in self.stack if "*" not in _leaf(p))
        key_zones = {_leaf(p).encode(): zone for p, zone in self.quoted}
        # The raw check finds the objects the model writes (tool-call arguments) by their key
        # alone: a key that also names a container of stack fields (``content`` in
        # ``message.content[].id``) cannot be told apart there, and is left out.
        containers = {part.removesuffix("[]") for p in self.stack for part in p.split(".")[:-1]}
        names = sorted({_leaf(p) for p, zone in self.quoted if zone == ZONE_TOOL_ARGS and _leaf(p) not in containers})
        objects = tuple(f'"{name}":'.encode() for name in names)
        object.__setattr__(self, "stack_keys", keys)
        object.__setattr__(self, "key_zones", key_zones)
        object.__setattr__(self, "objects", objects)
        object.__setattr__(self, "_stack_re", re.compile("|".join(_pattern(p) for p in self.stack) + r"\Z"))
        # a quoted field holds everything under it: its own path, then any key or index below
        quoted = tuple((re.compile(_pattern(p) + r"(?:[.\[].*)?\Z"), zone) for p, zone in self.quoted)
        object.__setattr__(self, "_quoted_re", quoted)
        keep = re.compile("|".join(_pattern(p) for p in self.keep) + r"\Z") if self.keep else None
        object.__setattr__(self, "_keep_re", keep)

    def zone_of(self, path: str, is_key: bool = False) -> int:
        """The zone of a field path (list indices and a ``#key`` suffix allowed).

        A key whose presence is the evidence (``is_key``, or a ``#key`` path) sits in its parent:
        the stack writes ``reasoning_content`` even though the model writes its value.
        """
        if is_key or path.endswith("#key"):
            path = _PARENT.sub("", path.removesuffix("#key"))
        if "<json>" in path:
            if self.default != ZONE_MODEL:
                return ZONE_ESCAPED
            path = path.replace("<json>", "")  # a raw API body: the parsed string's own fields decide
        norm = _INDEX.sub("[]", path)
        if self._keep_re is not None and self._keep_re.match(norm):
            return ZONE_MODEL
        for rx, zone in self._quoted_re:
            if rx.match(norm):
                return zone
        if self._stack_re.match(norm):
            return ZONE_MODEL
        return self.default

    def zone_at(self, line: bytes, pos: int, is_key: bool = False) -> int:
        """The zone of the hit at byte ``pos`` of a raw JSON ``line`` (the line is model output)."""
        q = line.rfind(b'"', 0, pos)
        if q < 0:
            return ZONE_MODEL  # not inside a JSON string (an SSE field, a bare token): the line decides
        if q and line[q - 1] == 92 and _escaped(line, q):
            return ZONE_ESCAPED
        if not is_key:
            # The common case is compact JSON ("key":"value); else the key is found past spaces.
            key = line[line.rfind(b'"', 0, q - 2) + 1 : q - 2] if line[q - 2 : q] == b'":' else _spaced_key(line, q)
            if key not in self.stack_keys:
                return self.key_zones.get(key, self.default if self.default != ZONE_MODEL else ZONE_TEXT)
        # A stack key's name, or a key hit: unless it sits inside arguments the model wrote
        # (searched backwards from the hit: only the bytes before it are read).
        for name in self.objects:
            a = line.rfind(name, 0, q)
            while a >= 0:
                k = a + len(name)
                while line[k] in _SPACE:
                    k += 1
                if line[k] in b"{[" and _inside(line, k, q):
                    return ZONE_TOOL_ARGS
                a = line.rfind(name, 0, a)
        return ZONE_MODEL


def _spaced_key(line: bytes, q: int) -> bytes:
    """The key of the string value opening at ``q``, spaces allowed around its colon (b"" for none)."""
    j = q - 1
    while j >= 0 and line[j] in _SPACE:
        j -= 1
    if j > 0 and line[j] == 58:  # ':'
        j -= 1
        while j >= 0 and line[j] in _SPACE:
            j -= 1
        if j > 0 and line[j] == 34:
            return line[line.rfind(b'"', 0, j) + 1 : j]
    return b""


def _escaped(line: bytes, q: int) -> bool:
    """True when the quote at ``q`` follows an odd number of backslashes."""
    n = 0
    j = q - 1
    while j >= 0 and line[j] == 92:
        n += 1
        j -= 1
    return n % 2 == 1


def _inside(line: bytes, start: int, end: int) -> bool:
    """True when the object or array opening at ``start`` is still open at ``end``.

    Bytes operations only: escaped quotes and backslashes are dropped, the rest is split at
    quotes, and the brackets outside strings are counted. A net count: an object that closed
    and was followed by a sibling object reads as still open (on the safe side: quoted).
    """
    seg = line[start:end]
    if b"\\" in seg:
        seg = seg.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(seg.split(b'"')[::2])
    return outside.count(b"{") + outside.count(b"[") > outside.count(b"}") + outside.count(b"]")


#: Formats without a table: every field counts as the stack's (the line's own zone still applies).
#: (Each format's own table is its registry entry's: :func:`musetui.core.sources.registry.zone_table`.)
EVERYWHERE = Zones(stack=("*",), default=ZONE_MODEL)
