"""A transcript tree whose names and text hold every character no output may show raw, and Markdown payloads.

Shared by the unit tests of every text output (``test_output_safety.py``) and the app's
(``tui/test_output_safety.py``). The bundled sample's outlier session is copied with its
session id, declared provider and model, texts and directory name replaced, so that it is
still flagged and every report shows it in full.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import unicodedata
from pathlib import Path

from markdown_it import MarkdownIt

SAMPLE = Path(__file__).resolve().parents[1] / "sample_transcripts"
OUTLIER = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"
PARENT = "01a05efc-7bb7-7cd1-8155-66af75f0734c"

#: Other_Default_Ignorable_Code_Point (PropList.txt, Unicode 14.0).
OTHER_DEFAULT_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x2065, 0x2065),
    (0x3164, 0x3164),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0000),
    (0xE0002, 0xE001F),
    (0xE0080, 0xE00FF),
    (0xE01F0, 0xE0FFF),
)
#: Variation_Selector (PropList.txt).
VARIATION_SELECTOR = ((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
#: Prepended_Concatenation_Mark (PropList.txt): format characters that are shown.
PREPENDED_CONCATENATION_MARK = (
    (0x0600, 0x0605),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
)


def _expand(ranges: tuple[tuple[int, int], ...]) -> set[int]:
    return {c for a, b in ranges for c in range(a, b + 1)}


def derived_default_ignorable() -> frozenset[int]:
    """Default_Ignorable_Code_Point as UAX #44 derives it, with this Python's ``unicodedata`` for Cf and White_Space.

    Other_Default_Ignorable_Code_Point + Cf + Variation_Selector - White_Space - FFF9..FFFB
    - 13430..1343F - Prepended_Concatenation_Mark.
    """
    cf = {c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}
    white = {c for c in cf if chr(c).isspace()}
    out = _expand(OTHER_DEFAULT_IGNORABLE) | cf | _expand(VARIATION_SELECTOR)
    out -= white | _expand(((0xFFF9, 0xFFFB), (0x13430, 0x1343F))) | _expand(PREPENDED_CONCATENATION_MARK)
    return frozenset(out)


#: Every Bidi_Control character.
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
#: Every default-ignorable code point (assigned or not).
IGNORABLE = "".join(chr(c) for c in sorted(derived_default_ignorable()))
#: Every C0 and C1 control, and DEL.
CONTROLS = "".join(chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)))
#: What no text output may show raw (newline and tab are layout, and allowed).
FORBIDDEN = frozenset(BIDI + IGNORABLE + CONTROLS + "\u2028\u2029\ufff9\ufffa\ufffb") - {"\n", "\t"}
#: The issue's own list, named so that a failure says which one leaked.
NAMED = "\u061c\u2066\u2067\u2068\u2069\u2060"
#: A few characters of every kind, short enough for a file name (no NUL, no slash).
NAME_SWEEP = (
    NAMED
    + BIDI
    + "".join(c for c in IGNORABLE if not ("\ufe01" <= c <= "\ufe0e" or c >= "\U000e0002"))
    + "\U000e0041\U000e0fff\ufff9\u2028"
    + "".join(chr(c) for c in (*range(1, 0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) != "/"),
)[0]

#: Markdown and HTML that must stay text: a backtick run, HTML, a link, an autolink, bare URLs.
MD_PAYLOAD = (
    "` <img src=x onerror=alert(1)> <script>alert(1)</script> [a](http://127.0.0.1/) <http://127.0.0.1/> "
    "http://127.0.0.1/bare www.example.com mail@example.com &lt;b&gt; *em* _em_ ``` x"
)
SESSION_ID = f"id{NAMED}{MD_PAYLOAD}{CONTROLS}"
PROVIDER = f"azure{NAMED}<b>x</b>"
MODEL = f"muse{NAMED}-special {MD_PAYLOAD} {IGNORABLE} {CONTROLS}"
TEXT = f"needle {NAMED} {MD_PAYLOAD} {IGNORABLE} {BIDI} {CONTROLS} end"


def _swap(value: object) -> object:
    if isinstance(value, dict):
        out = {k: _swap(v) for k, v in value.items()}
        for key in ("prompt", "text"):
            if isinstance(out.get(key), str):
                out[key] = TEXT + " " + out[key]
        return out
    if isinstance(value, list):
        return [_swap(v) for v in value]
    return (
        {OUTLIER: SESSION_ID, "muse-special": MODEL, "azure": PROVIDER}.get(value, value)
        if isinstance(value, str)
        else value
    )


def hostile_tree(root: Path) -> Path:
    """The sample's Muse tree under ``root``, its outlier made hostile; returns the outlier's file."""
    tree = root / "muse-vm"
    shutil.copytree(SAMPLE / "muse-vm", tree)
    subagents = tree / "sessions" / PARENT / "subagents"
    old = subagents / OUTLIER / "session.jsonl"
    lines = [json.dumps(_swap(json.loads(raw)), ensure_ascii=False) for raw in old.read_text("utf-8").splitlines()]
    shutil.rmtree(subagents / OUTLIER)
    half = len(NAME_SWEEP) // 2
    target = subagents / f"d{NAME_SWEEP[:half]}" / f"s{NAME_SWEEP[half:]}.jsonl"
    target.parent.mkdir()
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def leaks(text: str) -> list[str]:
    """The forbidden characters in ``text``, as code points (empty when it is safe)."""
    return sorted({f"U+{ord(c):04X}" for c in text if c in FORBIDDEN})


#: The elements our Markdown templates make (headings, lists, bold labels, code, tables).
TEMPLATE_TAGS = frozenset(
    {
        "h1",
        "h2",
        "h3",
        "h4",
        "p",
        "ul",
        "li",
        "strong",
        "code",
        "pre",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
    }
)


def _renderers() -> list[tuple[str, MarkdownIt]]:
    gfm = MarkdownIt("gfm-like")  # tables, strike-through and GitHub's linkify (no bare domains)
    gfm.linkify.set({"fuzzy_link": False})
    return [("commonmark", MarkdownIt("commonmark")), ("gfm", gfm)]


def assert_inert(markdown: str) -> None:
    """Rendered by CommonMark and by a GFM-like renderer, ``markdown`` makes no element but the template's."""
    for name, md in _renderers():
        html = md.render(markdown)
        tags = set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", html))
        assert tags <= TEMPLATE_TAGS, (name, tags - TEMPLATE_TAGS)
        assert "<a" not in html and "<img" not in html and "<script" not in html, name
        assert "href" not in html, name
