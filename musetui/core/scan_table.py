"""The table ``musetui scan`` prints without ``--json``: one line per session, fitted to a width.

Columns, most important first (the order in which they are kept when the width runs short):

1. the flag marker (``⚑`` a fleet outlier, ``!`` any other flag, as in the app's tree);
2. ``path``, relative to the root printed above it: never dropped, it takes the room the other
   columns leave (at least 32 cells, or 40% of the width), cut in the middle at ``/`` with ``…``;
3. ``provider`` (``openai/azure via openrouter``), 4. ``flags``, 5. ``declared model``,
6. ``conf``, 7. ``items``, 8. ``format``, 9. ``malformed``.

When the columns do not fit at their full widths, the text columns are cut with ``…`` (the
least important first, down to their minimum widths); when that is not enough, the least
important columns are left out. A value is cut, never split over two lines. With a width
limit, a ``malformed`` column that is 0 on every row is left out (stderr says how many
malformed lines there were). Without a width (a pipe, no ``COLUMNS``), every column is
shown whole. The ``root:`` line above the rows is never cut: the paths are read under it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO

from rich.cells import cell_len, set_cell_size

from musetui.core.model import SessionSummary

OUTLIER_MARK = "⚑"
FLAG_MARK = "!"
#: The narrowest the path column gets before other columns are left out: this many cells, or
#: :data:`PATH_SHARE` of the width when that is more.
PATH_MIN = 32
PATH_SHARE = 0.4
GAP = "  "


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header, whether numbers align right, and how narrow a cut may make it."""

    name: str
    right: bool = False
    min_width: int = 0  # 0: never cut (a number)


#: Display order. ``PRIORITY`` below says which are kept first.
COLUMNS = (
    Column("format", min_width=11),
    Column("provider", min_width=17),
    Column("conf", right=True),
    Column("items", right=True),
    Column("malformed", right=True),
    Column("flags", min_width=17),
    Column("declared model", min_width=14),
)
PRIORITY = ("provider", "flags", "declared model", "conf", "items", "format", "malformed")


@dataclass(frozen=True, slots=True)
class Row:
    """One session's cells (whole), its root as printed and its marker."""

    root: str
    marker: str
    cells: dict[str, str]
    path: str
    flags: tuple[str, ...]


def terminal_width(stream: IO[str]) -> int | None:
    """The width to fit: the terminal's (``COLUMNS`` first), ``COLUMNS`` in a pipe, else None (no limit)."""
    if stream.isatty():
        return shutil.get_terminal_size().columns
    cols = os.environ.get("COLUMNS", "")
    return int(cols) if cols.isdigit() and int(cols) > 0 else None


def table_order(sessions: Sequence[SessionSummary], names: dict[str, str]) -> list[SessionSummary]:
    """The sessions in the table's order: grouped by root in the order the roots were given, then by path."""
    order = {root: i for i, root in enumerate(names)}
    return sorted(sessions, key=lambda s: (order.get(s.root_dir, len(order)), s.root_dir, s.path))


def rows_of(ordered: Iterable[SessionSummary], names: dict[str, str]) -> Iterator[Row]:
    """The table's rows, one per session of ``ordered`` (see :func:`table_order`), made as they are read.

    A big tree's rows are made twice (once for :func:`layout`, once for :func:`render`)
    rather than held: each is cheap, and 100,000 of them are not.
    """
    from musetui.core.safetext import escape_name

    for s in ordered:
        a = s.attribution
        flags = tuple(a.flags)
        marker = OUTLIER_MARK if "outlier" in flags else (FLAG_MARK if flags else " ")
        cells = {
            "format": s.format,
            "provider": a.provider + (f"/{a.host}" if a.host else "") + (f" via {a.via}" if a.via else ""),
            "conf": f"{a.confidence:.2f}",
            "items": str(s.items),
            "malformed": str(s.malformed_lines),
            "flags": ", ".join(flags) or "-",
            "declared model": escape_name(s.declared_model or "-"),
        }
        root = escape_name(names.get(s.root_dir, s.root_dir))
        yield Row(root, marker, cells, escape_name(s.path), flags)


def cut_end(text: str, room: int) -> str:
    """``text`` in at most ``room`` cells, its end replaced by ``…`` when cut."""
    if cell_len(text) <= room:
        return text
    return set_cell_size(text, max(0, room - 1)) + "…" if room > 0 else ""


def cut_path(path: str, room: int) -> str:
    """``path`` in at most ``room`` cells, its end kept: middle directories replaced by ``…`` (``a/…/c/d``).

    The file name and its directory are kept whole when they fit (``…/c/d``); else the path's
    last ``room - 1`` cells follow the ``…``.
    """
    if cell_len(path) <= room:
        return path
    parts = path.split("/")
    for k in range(len(parts) - 1, 1, -1):
        for head in (parts[0] + "/…/", "…/"):
            cand = head + "/".join(parts[-k:])
            if cell_len(cand) <= room:
                return cand
    tail = path[-room:] if room > 1 else ""
    while tail and cell_len(tail) > room - 1:
        tail = tail[1:]
    return "…" + tail if room > 0 else ""


def cut_flags(flags: tuple[str, ...], room: int) -> str:
    """The flag names that fit in ``room`` cells, then ``+N`` for the others."""
    text = ", ".join(flags) or "-"
    if cell_len(text) <= room:
        return text
    for k in range(len(flags) - 1, 0, -1):
        cand = ", ".join(flags[:k]) + f" +{len(flags) - k}"
        if cell_len(cand) <= room:
            return cand
    return cut_end(f"{flags[0]} +{len(flags) - 1}" if len(flags) > 1 else flags[0], room)


def layout(rows: Iterable[Row], width: int | None) -> dict[str, int]:
    """The shown columns and their widths (``path`` included), fitted to ``width`` by :data:`PRIORITY`.

    ``rows`` are read once.
    """
    natural = {c.name: cell_len(c.name) for c in COLUMNS}
    path_natural = cell_len("path")
    malformed = False
    for r in rows:
        for name, text in r.cells.items():
            natural[name] = max(natural[name], cell_len(text))
        path_natural = max(path_natural, cell_len(r.path))
        malformed = malformed or r.cells["malformed"] != "0"
    if width is None:
        return {**natural, "path": path_natural}
    shown = [c for c in PRIORITY if c != "malformed" or malformed]
    mins = {c.name: (min(c.min_width, natural[c.name]) if c.min_width else natural[c.name]) for c in COLUMNS}
    path_min = min(max(PATH_MIN, int(width * PATH_SHARE)), path_natural)

    def used(widths: dict[str, int]) -> int:  # the marker and a space, then each column and its gap
        return 2 + sum(widths[c] + len(GAP) for c in shown)

    while shown and used(mins) + path_min > width:
        shown.pop()  # the least important column goes
    widths = {c: natural[c] for c in shown}
    for c in reversed(shown):  # cut the least important first, down to its minimum
        over = used(widths) + path_min - width
        if over <= 0:
            break
        widths[c] = max(mins[c], widths[c] - over)
    widths["path"] = max(1, min(path_natural, width - used(widths)))
    return widths


def render(rows: Iterable[Row], widths: dict[str, int]) -> Iterator[tuple[str, Row | None]]:
    """The lines of the table: ``root:`` lines, the header, one line per row (with its row, for colour), as made."""
    shown = [c for c in COLUMNS if c.name in widths]

    def line(marker: str, cells: dict[str, str], path: str) -> str:
        out = []
        for c in shown:
            text = cut_end(cells[c.name], widths[c.name])
            pad = widths[c.name] - cell_len(text)
            out.append(" " * pad + text if c.right else text + " " * pad)
        return marker + " " + GAP.join([*out, path])

    root: str | None = None
    for r in rows:
        if r.root != root:
            if root is not None:
                yield "", None
            yield f"root: {r.root}".rstrip(), None
            if root is None:
                yield line(" ", {c.name: c.name for c in shown}, "path").rstrip(), None
            root = r.root
        cells = {
            c.name: cut_flags(r.flags, widths[c.name])
            if c.name == "flags" and r.flags
            else cut_end(r.cells[c.name], widths[c.name])
            for c in shown
        }
        yield line(r.marker, cells, cut_path(r.path, widths["path"])).rstrip(), r
