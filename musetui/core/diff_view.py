"""The text view of a profile comparison (``musetui diff`` and the app's diff screen).

A header names each side; then the traits whose values differ, those of one side only, and
the shared ones, heaviest first, in a table fitted to a width (80 columns by default). Every
value was cleaned of controls when its profile was built (:meth:`musetui.core.diff.Profile.add`);
paths are escaped as every text output escapes them.
"""

from __future__ import annotations

import re
from itertools import zip_longest

from rich.cells import cell_len, chop_cells

from musetui.core.diff import Comparison, Entry, Profile

GAP = "  "
#: A cell lists at most this many values, then ``+N more`` (``--json`` lists all).
MAX_VALUES = 8
#: A shared trait's values take at most this many lines.
SHARED_LINES = 2
#: The narrowest width the table is laid out for.
MIN_WIDTH = 40
COUNTS_NOTE = "×N: artifacts or items in a session, sessions in a root. --json lists every value and count."


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken after a space, ``/``, ``.``, ``,``, ``:`` or ``_`` when it can.

    A space at a break is dropped; a word wider than ``width`` is cut at ``width`` cells.
    """
    width = max(1, width)
    lines: list[str] = []
    line = ""
    for token in re.split(r"(?<=[ /.,:_])", text):
        if not token:
            continue
        if cell_len((line + token).rstrip(" ")) <= width:
            line += token
            continue
        if line.strip(" "):
            lines.append(line.rstrip(" "))
        word = token.strip(" ")
        pieces = chop_cells(word, width) if cell_len(word) > width else [word]
        lines.extend(pieces[:-1])
        line = pieces[-1] + (" " if token.endswith(" ") else "")
    if line.strip(" ") or not lines:
        lines.append(line.rstrip(" "))
    return lines


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cell_len(text))


def _value(value: str, count: int) -> str:
    return f"{value} ×{count}" if count > 1 else value


def _cell(counts: dict[str, int] | None, keep: set[str] | None = None, shared: int = 0) -> list[str]:
    """A side's values, one per entry (``keep``: only these), then ``+N in both``."""
    if counts is None:
        return ["-"]
    shown = [_value(v, n) for v, n in counts.items() if keep is None or v in keep]
    out = shown[:MAX_VALUES]
    if len(shown) > MAX_VALUES:
        out.append(f"+{len(shown) - MAX_VALUES} more")
    if shared:
        out.append(f"(+{shared} in both)")
    return out or ["-"]


def _widths(width: int) -> tuple[int, int, int]:
    """The widths of the trait, A and B columns (with two gaps, they fill ``width``)."""
    width = max(MIN_WIDTH, width)
    name = min(40, max(14, width // 3))
    a = (width - name - 2 * len(GAP)) // 2
    return name, a, width - name - 2 * len(GAP) - a


def _row(cells: list[list[str]], widths: tuple[int, ...]) -> list[str]:
    """One table row: each cell's items wrapped to its column, side by side."""
    columns = [[line for item in cell for line in wrap(item, w)] for cell, w in zip(cells, widths, strict=True)]
    out = []
    for parts in zip_longest(*columns, fillvalue=""):
        padded = [_pad(p, w) for p, w in zip(parts, widths, strict=True)]
        out.append(GAP.join(padded).rstrip())
    return out


def _entry_rows(entry: Entry, widths: tuple[int, int, int]) -> list[str]:
    name = f"{entry.kind}: {entry.name}"
    if entry.a is not None and entry.b is not None:
        both = set(entry.a) & set(entry.b)
        cells = [
            [name],
            _cell(entry.a, set(entry.a) - both, len(both)),
            _cell(entry.b, set(entry.b) - both, len(both)),
        ]
    else:
        cells = [[name], _cell(entry.a), _cell(entry.b)]
    return _row(cells, widths)


def _shared_rows(entry: Entry, widths: tuple[int, int, int]) -> list[str]:
    """A shared trait: its values on at most :data:`SHARED_LINES` lines, then ``+N more``."""
    values = list(entry.a or {})
    span = widths[1] + len(GAP) + widths[2]
    shown = len(values)
    text = ", ".join(values)
    while shown > 1 and len(wrap(text, span)) > SHARED_LINES:
        shown -= 1
        text = ", ".join(values[:shown]) + f", +{len(values) - shown} more"
    return _row([[f"{entry.kind}: {entry.name}"], [text]], (widths[0], span))


def _side(label: str, profile: Profile, width: int) -> list[str]:
    """The lines naming one side: what it is, then the target as given."""
    from musetui.core.diagnostics import escape_name

    about = profile.about
    if profile.scope == "root":
        providers = ", ".join(f"{p} {n}" for p, n in (about.get("providers") or {}).items())
        what = f"root · {profile.sessions} session{'s' if profile.sessions != 1 else ''}" + (
            f": {providers}" if providers else ""
        )
    else:
        verdict = str(about.get("provider") or "unknown") + (f"/{about['host']}" if about.get("host") else "")
        flags = ", ".join(about.get("flags") or []) or "no flags"
        what = f"session {about.get('session_id') or '?'} · {about.get('format')} · {verdict} {about.get('confidence')} · {flags}"
    lines = [f"{label}  {line}" if i == 0 else f"   {line}" for i, line in enumerate(wrap(what, width - 3))]
    lines.extend(f"   {line}" for line in wrap(escape_name(profile.target), width - 3))
    return lines


def render(cmp: Comparison, width: int = 80) -> str:
    """The comparison as text lines of at most ``width`` cells (at least :data:`MIN_WIDTH`)."""
    width = max(MIN_WIDTH, width)
    widths = _widths(width)
    counts = f"{len(cmp.differ)} differ · {len(cmp.only_a)} only in A · {len(cmp.only_b)} only in B · {len(cmp.shared)} shared"
    out = [*wrap(f"musetui diff: {counts}", width), ""]
    out += _side("A", cmp.a, width) + _side("B", cmp.b, width)
    notes = list(dict.fromkeys([*cmp.a.notes, *cmp.b.notes]))
    for note in notes[:6]:
        out.extend(wrap(f"note: {note}", width))
    if len(notes) > 6:
        out.append(f"note: +{len(notes) - 6} more (--json lists them)")
    head = _row([["trait"], ["A"], ["B"]], widths)
    for title, entries in (
        ("Differ: the same trait, other values", cmp.differ),
        ("Only in A", cmp.only_a),
        ("Only in B", cmp.only_b),
    ):
        out += ["", *wrap(f"{title} ({len(entries)})", width)]
        if not entries:
            out.append("  (none)")
            continue
        out += head
        for entry in entries:
            out += _entry_rows(entry, widths)
    out += ["", f"Shared ({len(cmp.shared)})"]
    for entry in cmp.shared:
        out += _shared_rows(entry, widths)
    if not cmp.shared:
        out.append("  (none)")
    out += ["", *wrap(COUNTS_NOTE, width)]
    return "\n".join(out) + "\n"
