"""Every way JSON may spell a literal: what a word or phrase is searched as in raw lines."""

from __future__ import annotations

import re

__all__ = ["encodings"]

# JSON encodings of one character, beyond the character itself (UTF-8): what a JSON writer may
# emit for it, plain and escaped once more (JSON held inside a JSON string).
_SIMPLE_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "/": "\\/",
}
_SPECIAL = frozenset("\"\\<>&'") | frozenset(chr(c) for c in range(32)) | {"\x7f"}


def _u_escapes(c: str) -> list[str]:
    """``\\uXXXX`` spellings of ``c`` (a surrogate pair for astral characters)."""
    cp = ord(c)
    if cp > 0xFFFF:
        v = cp - 0x10000
        return [f"\\u{0xD800 + (v >> 10):04x}\\u{0xDC00 + (v & 0x3FF):04x}"]
    return [f"\\u{cp:04x}"]


def _char_variants(c: str) -> list[str]:
    """Every way ``c`` may be spelled in raw JSON (the first is the plain character)."""
    once: list[str] = []
    if c in _SIMPLE_ESCAPES:
        once.append(_SIMPLE_ESCAPES[c])
    if c in _SPECIAL or ord(c) > 0x7E:
        once.extend(_u_escapes(c))
    # Escaped once more: a JSON string inside a JSON string doubles every backslash.
    twice = [v.replace("\\", "\\\\") for v in once if "\\" in v]
    if c == '"':
        twice.append('\\\\\\"')
    out = [c, *once, *twice]
    seen: list[str] = []
    for v in out:
        if v not in seen:
            seen.append(v)
    return seen


def encodings(value: str, case_sensitive: bool) -> tuple[bytes | None, bytes, str]:
    """The raw forms of a literal.

    Returns:
        (plain, bytes pattern, str pattern): ``plain`` is the UTF-8 literal when every
        character is printable ASCII with no JSON escape (compared with a line by ``in``), else
        None; the patterns match any JSON spelling of the literal (bytes: over raw lines; str:
        over decoded raw text, for highlighting).
    """
    if all(32 <= ord(c) < 127 and c not in _SPECIAL for c in value):
        esc = re.escape(value)
        return value.encode("ascii"), esc.encode("ascii"), esc
    bparts: list[bytes] = []
    sparts: list[str] = []
    for c in value:
        forms = {c}
        if not case_sensitive and ord(c) > 0x7E:
            forms |= {f for f in (c.lower(), c.upper()) if len(f) == 1}
        variants: list[str] = []
        for f in sorted(forms):
            for v in _char_variants(f):
                if v not in variants:
                    variants.append(v)
        if len(variants) == 1:
            bparts.append(re.escape(variants[0].encode("utf-8", "surrogatepass")))
            sparts.append(re.escape(variants[0]))
            continue
        # Longest first, so that a longer escape is preferred to its prefix.
        variants.sort(key=len, reverse=True)
        balts = [_bytes_variant(v) for v in variants]
        bparts.append(b"(?:" + b"|".join(balts) + b")")
        sparts.append("(?:" + "|".join(_str_variant(v) for v in variants) + ")")
    return None, b"".join(bparts), "".join(sparts)


def _bytes_variant(v: str) -> bytes:
    """A regex for one spelling; the hex digits of ``\\u`` escapes match in either case."""
    if "\\u" not in v:
        return re.escape(v.encode("utf-8", "surrogatepass"))
    return re.sub(
        rb"[0-9a-f]",
        lambda m: b"[" + m.group() + m.group().upper() + b"]" if m.group().isalpha() else m.group(),
        re.escape(v.encode("ascii")),
    )


def _str_variant(v: str) -> str:
    if "\\u" not in v:
        return re.escape(v)
    return re.sub(
        r"[0-9a-f]",
        lambda m: "[" + m.group() + m.group().upper() + "]" if m.group().isalpha() else m.group(),
        re.escape(v),
    )


# ---------------------------------------------------------------------------------------------
# Regex terms: compile, refuse explosive shapes, find a prefilter literal
# ---------------------------------------------------------------------------------------------
