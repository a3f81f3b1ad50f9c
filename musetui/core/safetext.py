"""The one text cleaner: what every output (CLI, ``show``, report, app, clipboard) does to transcript data.

Data from a transcript never drives a terminal, a Markdown renderer or a browser, and two
different names never look the same. Four ways to show a value:

- **Text** (message bodies, reasoning, raw lines, snippets, explanations): :func:`strip_controls`
  keeps newlines and tabs and drops every other C0/C1 control, DEL and every invisible
  character (below); :func:`one_line` also turns newlines and tabs into spaces.
- **Names** (file names and paths, roots, session and parent ids, declared providers and
  models, evidence values and their field paths): :func:`escape_name` shows the same
  characters *visibly and reversibly* (``\\u3164``, ``\\x1b``, ``\\\\``), so two rows never look
  identical; ``show`` accepts a path written that way (:func:`unescape_name`).
- **JSON** (``--json`` outputs, a data contract): :func:`json_bytes` writes DEL, C1 and the
  invisible characters as JSON ``\\uXXXX`` escapes. A parser reads exactly the same value;
  only a raw character, which a terminal or an editor would obey or hide, is gone.
- **Markdown** (``show``, ``report --format md``, the app's ``y``): :func:`md_code` (a code
  span no backtick can close) and :func:`md_text` (free text with every construct that could
  make HTML, a link or a block escaped).

"Invisible" is Unicode's Default_Ignorable_Code_Point (it contains every Bidi_Control),
plus the interlinear annotation characters U+FFF9..U+FFFB and the line and paragraph
separators U+2028/U+2029. Python's ``unicodedata`` has no such property, so the ranges are
kept here as data; ``tests/unit/test_safetext.py`` checks them against the property's
published derivation.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "BIDI_CONTROL",
    "DEFAULT_IGNORABLE",
    "drop_invisible",
    "escape_name",
    "json_bytes",
    "json_name",
    "md_block",
    "md_code",
    "md_text",
    "one_line",
    "strip_controls",
    "unescape_name",
]

#: Default_Ignorable_Code_Point, from Unicode 14.0's DerivedCoreProperties.txt (the version of
#: this Python's ``unicodedata``). UAX #44 derives the property as
#: Other_Default_Ignorable_Code_Point + Cf + Variation_Selector - White_Space - U+FFF9..U+FFFB
#: - U+13430..U+1343F - Prepended_Concatenation_Mark (PropList.txt); the test derives it again
#: from the running Python's ``unicodedata``, so a Unicode version that adds to it fails there.
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),  # Cf  SOFT HYPHEN
    (0x034F, 0x034F),  # Mn  COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),  # Cf  ARABIC LETTER MARK (a bidi control)
    (0x115F, 0x1160),  # Lo  HANGUL CHOSEONG FILLER, HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # Mn  KHMER VOWEL INHERENT AQ, AA
    (0x180B, 0x180F),  # Mn/Cf MONGOLIAN FREE VARIATION SELECTORS, VOWEL SEPARATOR
    (0x200B, 0x200F),  # Cf  ZERO WIDTH SPACE .. RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),  # Cf  LEFT-TO-RIGHT EMBEDDING .. RIGHT-TO-LEFT OVERRIDE
    (0x2060, 0x206F),  # Cf/Cn WORD JOINER .. NOMINAL DIGIT SHAPES (isolates U+2066..U+2069)
    (0x3164, 0x3164),  # Lo  HANGUL FILLER
    (0xFE00, 0xFE0F),  # Mn  VARIATION SELECTOR-1..16
    (0xFEFF, 0xFEFF),  # Cf  ZERO WIDTH NO-BREAK SPACE (BOM)
    (0xFFA0, 0xFFA0),  # Lo  HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # Cn  reserved
    (0x1BCA0, 0x1BCA3),  # Cf  SHORTHAND FORMAT LETTER OVERLAP .. UP STEP
    (0x1D173, 0x1D17A),  # Cf  MUSICAL SYMBOL BEGIN BEAM .. END PHRASE
    (
        0xE0000,
        0xE0FFF,
    ),  # Cf/Mn/Cn tags U+E0001, U+E0020..U+E007F; VARIATION SELECTOR-17..256; reserved
)

#: Bidi_Control (PropList.txt): every one is also default-ignorable.
BIDI_CONTROL: tuple[tuple[int, int], ...] = (
    (0x061C, 0x061C),
    (0x200E, 0x200F),
    (0x202A, 0x202E),
    (0x2066, 0x2069),
)

#: Invisible or layout-changing characters that are not default-ignorable.
_EXTRA_INVISIBLE: tuple[tuple[int, int], ...] = (
    (0x2028, 0x2029),  # Zl/Zp LINE SEPARATOR, PARAGRAPH SEPARATOR
    (0xFFF9, 0xFFFB),  # Cf  INTERLINEAR ANNOTATION ANCHOR, SEPARATOR, TERMINATOR
)

#: Every C0 and C1 control, and DEL.
_CONTROLS: tuple[tuple[int, int], ...] = ((0x00, 0x1F), (0x7F, 0x9F))


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    """A regex character class body for code point ranges."""
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


_INVISIBLE = (*DEFAULT_IGNORABLE, *_EXTRA_INVISIBLE)
#: Controls dropped from ASCII text (a smaller class is twice as fast).
_ASCII_DROP_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f]")

# The classes with characters beyond Latin-1 are compiled on first use: each costs a few
# million instructions to compile, which a run that prints only ASCII never pays.


@functools.cache
def _drop_re() -> re.Pattern[str]:
    """Everything that text outputs drop: controls (TAB and LF kept) and invisible characters."""
    return re.compile(f"[{_class(((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), *DEFAULT_IGNORABLE, (0xFFF9, 0xFFFB)))}]")


@functools.cache
def _invisible_re() -> re.Pattern[str]:
    """Invisible characters only (controls kept)."""
    return re.compile(f"[{_class((*DEFAULT_IGNORABLE, (0xFFF9, 0xFFFB)))}]")


def _drop(text: str) -> str:
    if text.isascii():
        return text if text.isprintable() else _ASCII_DROP_RE.sub("", text)
    return _drop_re().sub("", text)


def strip_controls(text: str) -> str:
    """``text`` as a safe block: newlines and tabs kept, every other control and invisible character dropped.

    A line or paragraph separator (U+2028/U+2029) becomes a newline.
    """
    out = _drop(text)
    if "\u2028" in out or "\u2029" in out:
        out = out.replace("\u2028", "\n").replace("\u2029", "\n")
    return out


def one_line(text: str) -> str:
    """``text`` on one line: as :func:`strip_controls`, with newlines and tabs as spaces."""
    out = _drop(text)
    if "\n" in out:
        out = out.replace("\n", " ")
    if "\t" in out:
        out = out.replace("\t", " ")
    if "\u2028" in out or "\u2029" in out:
        out = out.replace("\u2028", " ").replace("\u2029", " ")
    return out


def drop_invisible(text: str) -> str:
    """``text`` without its invisible characters (default-ignorable and interlinear annotation); controls are kept."""
    return text if text.isascii() else _invisible_re().sub("", text)


# ---------------------------------------------------------------- names


@functools.cache
def _name_re() -> re.Pattern[str]:
    """What names escape: the backslash, controls, invisible characters, and lone surrogates (bytes that were not UTF-8)."""
    return re.compile(f"[\\\\{_class((*_CONTROLS, *_INVISIBLE))}\ud800-\udfff]")


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    short = _SHORT.get(c)
    if short is not None:
        return short
    o = ord(c)
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not valid UTF-8
        return f"\\x{o - 0xDC00:02x}"
    if o < 0x80:  # (``\\xNN`` above 0x7f stands for a byte that was not UTF-8)
        return f"\\x{o:02x}"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def escape_name(text: str) -> str:
    """``text`` (a name) safe for one line of output, shown visibly, and reversible by :func:`unescape_name`.

    Newlines, tabs and other controls become ``\\n``/``\\t``/``\\xNN``; bidi, zero-width and
    every other invisible character become ``\\uNNNN`` (``\\UNNNNNNNN`` above the BMP), so they
    are shown, not obeyed or hidden; bytes that are not UTF-8 become ``\\xNN``; a backslash
    becomes ``\\\\``. Other text is unchanged.
    """
    if text.isascii() and text.isprintable() and "\\" not in text:
        return text
    return _name_re().sub(_escape_char, text)


_UNESCAPE_RE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[nrt\\])")


def unescape_name(text: str) -> str:
    """Undo :func:`escape_name`: ``\\xNN`` above 0x7f stands for a raw byte (as ``os.fsdecode`` gives it)."""

    def one(m: re.Match[str]) -> str:
        s = m.group()
        c = s[1]
        if c == "x":
            v = int(s[2:], 16)
            return chr(0xDC00 + v) if v >= 0x80 else chr(v)
        if c in "uU":
            v = int(s[2:], 16)
            return chr(v) if v <= 0x10FFFF else s
        return {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}[c]

    return _UNESCAPE_RE.sub(one, text)


# ---------------------------------------------------------------- JSON


def _utf8_alternatives(ranges: tuple[tuple[int, int], ...]) -> list[bytes]:
    """Byte patterns matching the UTF-8 form of every code point in ``ranges``: a prefix and a class of last bytes."""
    groups: dict[bytes, list[int]] = {}
    for a, b in ranges:
        for cp in range(a, b + 1):
            enc = chr(cp).encode("utf-8")
            groups.setdefault(enc[:-1], []).append(enc[-1])
    out = []
    for prefix, lasts in groups.items():
        runs = _class(tuple(_runs(sorted(set(lasts))))).encode("latin-1")
        out.append(re.escape(prefix) + b"[" + runs + b"]")
    return out


def _runs(values: list[int]) -> list[tuple[int, int]]:
    """Sorted integers as ``(first, last)`` runs."""
    out: list[tuple[int, int]] = []
    for v in values:
        if out and out[-1][1] == v - 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out


@functools.cache
def _json_re() -> re.Pattern[bytes]:
    return re.compile(b"|".join(_utf8_alternatives(((0x7F, 0x9F), *_INVISIBLE))))


def _json_escape(m: re.Match[bytes]) -> bytes:
    o = ord(m.group().decode("utf-8"))
    if o < 0x10000:
        return b"\\u%04x" % o
    o -= 0x10000
    return b"\\u%04x\\u%04x" % (0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF))


@functools.cache
def _json_leads() -> tuple[tuple[int, re.Pattern[bytes]], ...]:
    """Per first byte, a pattern for the escaped characters (beyond DEL) whose UTF-8 form starts with it.

    A pattern that starts with one literal byte is searched for at memchr speed; the whole
    alternation, which starts with a class, costs about thirty instructions per byte searched.
    """
    groups: dict[int, list[bytes]] = {}
    for alt in _utf8_alternatives(((0x80, 0x9F), *_INVISIBLE)):
        groups.setdefault(alt[0], []).append(alt[1:])  # (a lead byte is above 0x7f: never escaped)
    return tuple((lead, re.compile(bytes([lead]) + b"(?:" + b"|".join(rest) + b")")) for lead, rest in groups.items())


def json_bytes(data: bytes) -> bytes:
    """JSON text (UTF-8) with DEL, C1 controls and invisible characters written as ``\\uXXXX`` escapes.

    Outside its strings JSON is ASCII, so every such character is inside a string, where the
    escape means the same character: a parser reads the same values, byte for byte otherwise.
    """
    if data.find(b"\x7f") < 0:  # (find: ``in`` first tries the needle as an int, and raises)
        if data.isascii():
            return data
        for lead, pat in _json_leads():
            if lead in data and pat.search(data):
                break
        else:
            return data
    return _json_re().sub(_json_escape, data)


# ---------------------------------------------------------------- Markdown


def md_code(text: str, *, table: bool = False) -> str:
    """``text`` as one Markdown code span that nothing inside can close or turn into HTML or a link.

    The span's fence is one backtick longer than the longest run of backticks inside
    (CommonMark 6.1), padded with a space when the text starts or ends with a backtick or a
    space. Inside a code span no HTML, entity, link or autolink is recognised, by any
    CommonMark renderer or GFM linkifier. ``table``: also escape ``|`` (GFM tables split
    cells before they read code spans).
    """
    t = one_line(text)
    if not t:
        return "` `"
    longest = max((len(r) for r in re.findall("`+", t)), default=0) if "`" in t else 0
    fence = "`" * (longest + 1)
    pad = " " if (t[0] in "` " or t[-1] in "` ") and t.strip(" ") else ""  # (spaces alone are kept as they are)
    if table:
        t = t.replace("|", "\\|")
    return f"{fence}{pad}{t}{pad}{fence}"


#: Escaped in free text: the backslash, backticks (code), ``*`` and an ``_`` that could open
#: emphasis, ``<`` (HTML, autolinks), ``&`` (entities), ``|`` (GFM tables), ``~`` (GFM
#: strike-through), and a ``]`` that would close a link's text (``](``, ``][``, ``]:``).
#: An underscore inside or at the end of a word (``store_true``, ``call_``) opens nothing.
_MD_PUNCT_RE = re.compile(r"[\\`*<&|~]|(?<![^\W_])_(?=\S)|\](?=[(\[:])")
#: What a linkifier (GFM's autolink extension, markdown-it's linkify) would turn into a link:
#: the colon of ``scheme://`` and ``mailto:``, the dot of ``www.``, and the ``@`` of an address.
_MD_LINKISH_RE = re.compile(r"(?i)(?<=[a-z0-9+.-]):(?=//)|(?<=\bmailto):|(?<=\bwww)\.|@")
#: A first character that would begin a block (heading, quote, list, rule, setext underline).
_MD_BLOCK_START_RE = re.compile(r"^\s*(?:[#>+=\-]|\d{1,9}(?=[.)](?:\s|$)))")


def md_text(text: str, *, inline: bool = False) -> str:
    """Free text for one line of Markdown: shown as it reads, never as HTML, a link, code or a block.

    Whatever could start HTML, an entity, a link, an image, code or emphasis is
    backslash-escaped, and so is what a linkifier would take for a URL or an address, and a
    first character that would begin a block. Controls and invisible characters are dropped.
    Bare domain names (``example.com``) stay as they are: CommonMark and GFM never link them.
    ``inline``: the text never starts a line (a table cell, after a label), so its first
    character is left alone.
    """
    t = _MD_LINKISH_RE.sub(r"\\\g<0>", _MD_PUNCT_RE.sub(r"\\\g<0>", one_line(text)))
    m = None if inline else _MD_BLOCK_START_RE.match(t)
    if m:
        i = m.end() if t[m.end() - 1].isdigit() else m.end() - 1  # ``1.`` -> ``1\.``, ``#`` -> ``\#``
        t = t[:i] + "\\" + t[i:]
    return t


def md_block(text: str, info: str = "") -> list[str]:
    """``text`` as the lines of a fenced code block that no line inside can close (CommonMark 4.5).

    Newlines and tabs are kept; every other control and invisible character is dropped.
    """
    body = strip_controls(text)
    longest = max((len(r) for r in re.findall("`+", body)), default=0) if "`" in body else 0
    fence = "`" * max(3, longest + 1)
    return [fence + info, body, fence]


def json_name(text: str) -> str:
    """A path as JSON can carry it: bytes that are not UTF-8 become the four characters ``\\xNN``.

    Everything else is kept as it is (JSON escapes controls itself); such a name is the only
    case where the JSON ``path`` differs from the file name, and ``show`` accepts it as printed.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(
            f"\\x{ord(c) - 0xDC00:02x}"
            if 0xDC80 <= ord(c) <= 0xDCFF
            else (c if not 0xD800 <= ord(c) <= 0xDFFF else f"\\u{ord(c):04x}")
            for c in text
        )
    return text
