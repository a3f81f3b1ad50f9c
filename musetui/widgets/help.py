"""The help view: every key binding (from the bindings themselves) and the query language."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.keys import key_to_character

#: Shown when musetui.core.search is not importable (it always is in a release).
FALLBACK_QUERY_HELP = 'Search: bare words (all must match), "phrases", /regex/, field:value filters.'

#: What the session tree's columns hold, and which give way first when the tree is narrow.
COLUMNS_HELP = (
    "glyph · session (id prefix, unique among siblings) · provider · items · started (UTC; the year when the"
    " sessions span years) · model · title. A narrow tree drops the title, then the started time, the model, the"
    " items; [ and ] make it narrower or wider."
)

#: The reference documents (under ``docs/``, installed with the package) the help names, with what each holds.
DOC_FILES = (
    ("keys.md", "every key and the screen"),
    ("query.md", "the query language"),
    ("cli.md", "the command line"),
    ("formats.md", "each format and the scan record"),
    ("settings.md", "every setting"),
    ("fingerprints.md", "every detector"),
    ("safety.md", "safety"),
)

KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "escape": "esc",
    "enter": "enter",
    "backspace": "backspace",
    "space": "space",
    "pagedown": "pgdn",
    "pageup": "pgup",
    "up": "↑",
    "down": "↓",
    "left": "←",
    "right": "→",
    "tab": "tab",
    "shift+tab": "shift+tab",
}


def key_display(key: str) -> str:
    """``down,j`` → ``↓ / j``; ``right_square_bracket`` → ``]`` (Textual's own key names)."""
    return " / ".join(KEY_NAMES.get(k.strip()) or _one_key(k.strip()) for k in key.split(","))


def _one_key(key: str) -> str:
    """A key as typed: ``]`` for ``right_square_bracket``, ``ctrl+g`` stays as it is."""
    return key_to_character(key) or key if len(key) > 1 and "+" not in key else key


def binding_rows(bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    """(keys, what it does) for every Binding with an id, in declaration order."""
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for b in bindings:
        if not isinstance(b, Binding):
            continue
        ident = b.id or b.key
        if ident in seen:
            continue
        seen.add(ident)
        keys = key_display(b.key) if not b.key_display or "," in b.key else b.key_display
        rows.append((keys, b.tooltip or b.description))
    return rows


def query_help() -> str:
    """The search query help of musetui.core.search (or a short fallback)."""
    try:
        from musetui.core.search import QUERY_HELP
    except ImportError:
        return FALLBACK_QUERY_HELP
    return str(QUERY_HELP)


def docs_text() -> Text:
    """Where the reference documents are, one per line (relative to the working directory when under it)."""
    from musetui.core.config import docs_dir

    where = docs_dir()
    if where.is_relative_to(Path.cwd()):
        where = where.relative_to(Path.cwd())
    return Text("\n".join(f"{where / name}  {what}" for name, what in DOC_FILES))


def help_renderable(sections: Sequence[tuple[str, Iterable[BindingType]]], legend: str = "") -> RenderableType:
    """Key tables per section, then the query language (the tree's legend first, when given)."""
    parts: list[RenderableType] = [
        Text(
            "musetui: which provider actually served each agent session, and the proof",
            style="bold",
        ),
        Text(""),
    ]
    if legend:
        parts.append(Text("Session rows", style="bold underline"))
        parts.append(Text(COLUMNS_HELP))
        parts.append(Text(legend))
        parts.append(Text(""))
    for title, bindings in sections:
        table = Table(
            title=title,
            title_justify="left",
            title_style="bold underline",
            box=None,
            show_header=False,
            pad_edge=False,
            expand=False,
        )
        table.add_column("key", style="bold", min_width=16, no_wrap=True)
        table.add_column("action")
        for keys, what in binding_rows(bindings):
            table.add_row(Text(keys), Text(what))
        parts.append(table)
        parts.append(Text(""))
    parts.append(Text("Search query language (/)", style="bold underline"))
    parts.append(Text(query_help()))
    parts.append(Text(""))
    parts.append(Text("Documentation", style="bold underline"))
    parts.append(docs_text())
    return Group(*parts)
