"""The session tree's rows: each node as (text, style) runs, then as one strip of the tree's width.

Rows are built as runs, not rich ``Text``, so a screenful renders in a few milliseconds. A
session node keeps its label's runs across repaints (a scroll, a sort, a collapse above
it): they are built again only when something they show changes (see
:meth:`TreeRows.session_label`). What a label counts (a group's sessions, the flagged
sessions inside a collapsed parent, the id prefix siblings need) comes from the
:class:`~musetui.core.session_forest.SessionForest`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from musetui.core.model import SessionSummary
from musetui.core.session_forest import MIN_PREFIX, SessionForest, session_ident
from musetui.core.usage import compact, total
from musetui.theme import provider_style
from musetui.widgets.styling import PartStyles, cursor_colours
from musetui.widgets.text import clean, clean_name, when

if TYPE_CHECKING:
    from rich.text import Text

#: The glyph of a session flagged as a fleet outlier, and of other flags.
OUTLIER_GLYPH = "⚑"
FLAG_GLYPH = "!"
#: The glyph after the count of flagged sessions inside a collapsed parent.
INSIDE_GLYPH = "⚐"
#: The model column's width when the row is short of room (it is shown whole when it fits).
MODEL_WIDTH = 16
#: One line explaining the row glyphs and numbers (under the tree, and in the help).
LEGEND = "⚑ outlier · ! other flag · +n⚐ flagged inside · ✗n malformed lines · via: router"
#: Columns of the tree's box around its rows: the border (2) and the scrollbar (1).
TREE_BOX_CHROME = 3
#: The started column's width without the year (``09-01 22:01``).
STARTED_W = 11
#: The columns after the id, in the order they claim the tree's width (the title takes what is
#: left; tokens only when some session records usage, in what the whole model name leaves). On
#: the row they read: id, provider, items, tokens, started, model, title.
COLUMN_PRIORITY = ("provider", "items", "model", "started")
#: The tokens column's width: input plus output tokens, compact (``12.3k``), under its header.
TOKENS_W = 6
#: The model column's first claim (a longer model is cut to fit, with …, when the width is short).
MODEL_MIN = 10


@dataclass(frozen=True, slots=True)
class Columns:
    """The tree's columns at one width: each one's cells (0: not shown)."""

    name: int
    provider: int
    items: int
    started: int
    model: int
    title: int
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class Group:
    """A tree group: one format found under one root."""

    root: str
    format: str
    title: str


@dataclass(frozen=True, slots=True)
class RootSummary:
    """The fleet row of one root when several are open: its rank and summary (see musetui.core.fleet)."""

    root: str
    text: str


NodeData = Group | SessionSummary | RootSummary
#: A run of a row's text and its style (None: the row's own).
Piece = tuple[str, Style | None]
#: What a session label was built for (see :meth:`TreeRows.session_label`), and its runs.
LabelCache = tuple[tuple[object, ...], list[Piece]]


class RowNode(Protocol):
    """What a row is built from: a tree node (see :class:`musetui.widgets.tree_nodes.Node`)."""

    @property
    def parent(self) -> RowNode | None: ...
    @property
    def data(self) -> NodeData | None: ...
    @property
    def allow_expand(self) -> bool: ...
    @property
    def is_expanded(self) -> bool: ...
    @property
    def is_last(self) -> bool: ...
    @property
    def label(self) -> Text: ...

    label_cache: LabelCache | None


def id_prefix(value: str, length: int) -> str:
    """The first ``length`` characters of an id (``…`` marks a cut one)."""
    value = clean_name(value)
    return value if len(value) <= length else value[:length] + "…"


def provider_label(s: SessionSummary) -> str:
    """``openai/azure``: the attributed provider, with the host when it is known."""
    a = s.attribution
    return f"{a.provider}/{a.host}" if a.host else a.provider


def route_label(s: SessionSummary) -> str:
    """``via openrouter``: the router the responses passed through, or empty."""
    via = s.attribution.via
    return f"via {via}" if via else ""


def flag_glyph(s: SessionSummary) -> str:
    """``⚑`` for a fleet outlier, ``!`` for any other flag, a space otherwise."""
    flags = s.attribution.flags
    if "outlier" in flags:
        return OUTLIER_GLYPH
    return FLAG_GLYPH if flags else " "


def node_depth(node: RowNode) -> int:
    """Levels below the groups (a group is 0, a session under it 1, a subagent 2 …)."""
    depth = 0
    parent = node.parent
    while parent is not None and parent.parent is not None:
        depth += 1
        parent = parent.parent
    return depth


def guides(node: RowNode) -> str:
    """The guide cells before a node's row: ``│ `` or blanks per ancestor level, then ``├ `` or ``└ ``."""
    parent = node.parent
    if parent is None or parent.parent is None:
        return ""
    cells = ["└ " if node.is_last else "├ "]
    while parent is not None and parent.parent is not None and parent.parent.parent is not None:
        cells.append("  " if parent.is_last else "│ ")
        parent = parent.parent
    return "".join(reversed(cells))


def fit(pieces: list[Piece], room: int) -> list[Piece]:
    """The runs cut to ``room`` cells, the last one kept ending in ``…`` (as ``Text.truncate`` does)."""
    if sum(cell_len(t) for t, _ in pieces) <= room:
        return pieces
    out: list[Piece] = []
    left = room - 1
    for text, style in pieces:
        n = cell_len(text)
        if n <= left:
            out.append((text, style))
            left -= n
            continue
        if left > 0:
            out.append((set_cell_size(text, left), style))
        out.append(("…", style))
        break
    return out


def to_strip(pieces: list[Piece], width: int, line_style: Style) -> Strip:
    """The runs as one strip of exactly ``width`` cells, runs of one style joined, padded in ``line_style``.

    (Built in one go: Textual's ``adjust_cell_length`` and ``simplify`` would each make a new
    strip, and a full tree repaints every row.)
    """
    segments: list[Segment] = []
    used = 0
    run_text = ""
    run_style = line_style
    for text, style in pieces:
        if not text or used >= width:
            continue
        n = cell_len(text)
        if used + n > width:
            text = set_cell_size(text, width - used)
            n = width - used
        used += n
        full = line_style + style if style else line_style
        if full == run_style:
            run_text += text
        else:
            if run_text:
                segments.append(Segment(run_text, run_style))
            run_text, run_style = text, full
    if used < width:
        if run_style == line_style:
            run_text += " " * (width - used)
        else:
            if run_text:
                segments.append(Segment(run_text, run_style))
            run_text, run_style = " " * (width - used), line_style
    if run_text:
        segments.append(Segment(run_text, run_style))
    return Strip(segments, width)


class TreeRows:
    """Builds the tree's rows as runs, in the widget's part styles, from the forest's counts.

    Args:
        widget: the tree (its component classes ``session-tree--*`` and theme give the styles).
        forest: the sessions the rows show.
        styles: the widget's memoised styles (cleared by the widget on a style or focus change).
        guide_depth: cells of indentation per level below the groups.
    """

    def __init__(
        self,
        widget: Widget,
        forest: SessionForest,
        styles: PartStyles,
        guide_depth: int,
        rows: Callable[[], Sequence[RowNode]] = tuple,
    ) -> None:
        self._widget = widget
        self._rows = rows
        self._columns_key: tuple[object, ...] | None = None
        self._forest = forest
        self._styles = styles
        self._guide_depth = guide_depth
        self._width_cache: tuple[int, int, int] | None = None
        self._years: tuple[int, bool] | None = None
        self._usage: tuple[int, bool] | None = None
        self._name_cache: tuple[Sequence[RowNode], int, int] | None = None
        self._paint_width = 200
        self._label_columns = Columns(12, 0, 0, 0, 0, 0)
        #: Bumped when the summaries' labels may read differently (their verdicts and flags
        #: set in place): part of each node's cached label key.
        self._label_epoch = 0

    # ------------------------------------------------------------------ what changed

    def labels_changed(self) -> None:
        """The summaries' verdicts or flags may read differently: every kept label is stale."""
        self._label_epoch += 1

    def sessions_added(self, added: list[SessionSummary]) -> None:
        """Widen the columns for new sessions (they never narrow while sessions only arrive)."""
        if self._width_cache is not None and added:
            wp, wi, wm = self._width_cache
            self._width_cache = (
                min(16, max(wp, *(len(provider_label(s)) for s in added))),
                max(wi, *(len(str(s.items)) for s in added)),
                min(32, max(wm, *(len(s.declared_model or s.label or "-") for s in added))),
            )

    def sessions_removed(self) -> None:
        """Sessions went: the columns are measured again on next use."""
        self._width_cache = None

    # ------------------------------------------------------------------ rows

    def pieces(self, node: RowNode, cursor: bool, width: int) -> list[Piece]:
        """The row of ``node`` as runs: guides, the ▸/▾ icon, the label cut to the room left.

        On the cursor row every cell of the label takes the cursor's readable colours: part
        colours (provider, dim) on the cursor background fell to about 1:1.
        """
        data = node.data
        part = self._styles.part
        self._set_paint(width)
        room = max(8, width - node_depth(node) * self._guide_depth - 2)
        label: list[Piece]
        if isinstance(data, Group):
            label = self.group_label(data)
        elif isinstance(data, SessionSummary):
            label = self.session_label(data, node, room)
        elif isinstance(data, RootSummary):
            label = [(clean(data.text), part("session-tree--dim"))]
        else:
            label = [(clean(node.label.plain), None)]
        if cursor:
            label = [("".join(t for t, _ in label), self.cursor_style())]
        pieces: list[Piece] = []
        cells = guides(node)
        if cells:
            pieces.append((cells, part("session-tree--guides")))
        if node.allow_expand:
            pieces.append(("▾ " if node.is_expanded else "▸ ", None))
        elif isinstance(data, SessionSummary):
            pieces.append(("  ", None))
        pieces += fit(label, room)
        return pieces

    def line_hover(self) -> Style:
        """The background of the row under the pointer."""
        style = self._styles.get("hover", lambda: self._widget.get_component_rich_style("session-tree--highlight-line"))
        return Style(bgcolor=style.bgcolor)

    def cursor_style(self) -> Style:
        """The cursor row's style: its background, and a foreground readable on it (>= 4.5:1)."""

        def make() -> Style:
            raw, fg, bg = cursor_colours(self._widget, self._styles.base(), "session-tree--cursor")
            return Style(color=fg.rich_color, bgcolor=bg.rich_color, bold=True, reverse=raw.reverse or None)

        return self._styles.get("cursor", make)

    def _provider_style(self, provider: str) -> Style:
        widget = self._widget
        return self._styles.get(
            "provider:" + provider,
            lambda: (
                provider_style(widget.app.theme_variables, provider, widget.background_colors[1]) + Style(bold=True)
            ),
        )

    def group_label(self, group: Group) -> list[Piece]:
        """``claude  (12) 2 flagged``: a group's title, its shown sessions and how many are flagged."""
        count, flagged = self._forest.group_stats((group.root, group.format))
        part = self._styles.part
        style = part("session-tree--group")  # (under the count and flags too: bold)
        label: list[Piece] = [
            (clean(group.title), style),
            (f"  ({count})", style + part("session-tree--dim")),
        ]
        if flagged:
            label.append((f" {flagged} flagged", style + part("session-tree--flag")))
        return label

    def _prefix_length(self, node: RowNode) -> int:
        parent = node.parent
        data = parent.data if parent is not None else None
        if isinstance(data, SessionSummary):
            return self._forest.prefix_length(data.key)
        if isinstance(data, Group):
            return self._forest.prefix_length((data.root, data.format))
        return MIN_PREFIX

    def session_label(self, s: SessionSummary, node: RowNode | None = None, room: int = 200) -> list[Piece]:
        """``⚑ 01a05efe-0 openai/azure   14 09-01 22:01 muse-special  Audit site/ for…``, as runs.

        A node keeps its label across repaints: it is built again only when something it
        shows changes, each part of its key: the room, the id prefix its siblings need, the
        ``+n⚐`` badge, the column widths, the styles, and the summaries themselves
        (:meth:`labels_changed`).
        """
        prefix = self._prefix_length(node) if node is not None else MIN_PREFIX
        inside = (
            self._forest.flagged_inside(s) if node is not None and node.allow_expand and not node.is_expanded else 0
        )
        widths = self.widths()
        key = (
            self._label_epoch,
            self._styles.epoch,
            room,
            prefix,
            inside,
            widths,
            self._label_columns,
            self._paint_width,
        )
        if node is not None:
            cached = node.label_cache
            if cached is not None and cached[0] == key and node.data is s:
                return cached[1]
        out = self._build_session_label(s, room, prefix, inside, widths)
        if node is not None:
            node.label_cache = (key, out)
        return out

    def _build_session_label(
        self, s: SessionSummary, room: int, prefix: int, inside: int, widths: tuple[int, int, int]
    ) -> list[Piece]:
        part = self._styles.part
        dim = part("session-tree--dim")
        glyph = flag_glyph(s)
        glyph_style: Style | None = None
        if glyph == OUTLIER_GLYPH:
            glyph_style = part("session-tree--outlier")
        elif glyph == FLAG_GLYPH:
            glyph_style = part("session-tree--flag")
        cols = self._label_columns
        ident = id_prefix(session_ident(s), prefix)
        # The id column ends at the same cell on every row, whatever the row's depth.
        name_w = max(len(ident) + 2, cols.name - (self._paint_width - room))
        out: list[Piece] = [(glyph + " ", glyph_style), (ident.ljust(name_w - 2), None)]
        if cols.provider:
            out.append((" ", None))
            out.append(
                (
                    clean(provider_label(s), cols.provider).ljust(cols.provider),
                    self._provider_style(s.attribution.provider),
                )
            )
        if cols.items:
            out.append((" " + str(s.items).rjust(cols.items), dim))
        if cols.tokens:
            out.append((" " + compact(total(s.usage)).rjust(cols.tokens), dim))
        if cols.started:
            out.append((" " + started_label(s.started_at, cols.started > STARTED_W), dim))
        badges: list[Piece] = []
        if s.malformed_lines:
            badges.append((f" ✗{s.malformed_lines}", part("session-tree--flag")))
        if inside:
            badges.append((f" +{inside}{INSIDE_GLYPH}", part("session-tree--flag")))
        if cols.model:
            # The badges sit in the model column, after the model (cut for them when it must be).
            room_w = max(0, cols.model - sum(cell_len(t) for t, _ in badges))
            route = route_label(s)
            model = clean_name(s.declared_model or s.label or "-", 60)
            if route:  # the route is part of the verdict, the model is what was declared
                route = clean(route, max(1, room_w))
                out.append((" " + route, self._provider_style(s.attribution.provider)))
                room_w -= len(route) + 1
            model = clean(model, room_w) if room_w >= 2 else ""
            out.append((" " + model, None))
            out += badges
            pad = (
                cols.model
                + 1
                - (sum(cell_len(t) for t, _ in badges) + len(model) + 1 + (len(route) + 1 if route else 0))
            )
            out.append((" " * max(0, pad), None))
        else:
            out += badges
        used = sum(cell_len(t) for t, _ in out)
        if s.title and cols.title and room - used >= 12:
            out.append(("  ", None))
            out.append((clean(s.title, max(0, room - used - 2)), dim))
        return out

    def widths(self) -> tuple[int, int, int]:
        """Column widths (provider, items, model) that fit every session in the tree."""
        if self._width_cache is None:
            sessions = self._forest.sessions
            wp = max((len(provider_label(s)) for s in sessions), default=6)
            wi = max((len(str(s.items)) for s in sessions), default=1)
            wm = max((len(s.declared_model or s.label or "-") for s in sessions), default=1)
            self._width_cache = (min(wp, 16), wi, min(wm, 32))
        return self._width_cache

    # ------------------------------------------------------------------ columns

    def spans_years(self) -> bool:
        """True when the sessions started in more than one year (the started column shows the year)."""
        key = len(self._forest.sessions)
        if self._years is None or self._years[0] != key:
            years = {_year(s.started_at) for s in self._forest.sessions if s.started_at is not None}
            self._years = (key, len(years - {None}) > 1)
        return self._years[1]

    def name_width(self, rows: Sequence[RowNode]) -> int:
        """Cells from a row's start to the end of its id, the widest of the session ``rows`` (cached per layout)."""
        cached = self._name_cache
        if cached is not None and cached[0] is rows and cached[1] == len(rows):
            return cached[2]
        best = 0
        last: RowNode | None = None
        for node in rows:
            # Siblings share their depth and id prefix: one sum per parent (a cut id is prefix + …).
            parent = node.parent
            if parent is last or not isinstance(node.data, SessionSummary):
                continue
            last = parent
            best = max(best, node_depth(node) * self._guide_depth + 4 + self._prefix_length(node) + 1)
        self._name_cache = (rows, len(rows), best)
        return best

    def columns(self, width: int, rows: Sequence[RowNode]) -> Columns:
        """Which columns show in a tree ``width`` cells wide, and how wide: see :data:`COLUMN_PRIORITY`.

        The model first claims :data:`MODEL_MIN` cells (a longer one is cut with …); what the
        columns leave then widens it up to its longest value; the tokens column shows only in
        what is left after that, and the title takes the rest.
        """
        wp, wi, wm = self.widths()
        name = self.name_width(rows) or 12
        started = STARTED_W + (5 if self.spans_years() else 0)
        want = {"provider": max(wp, 8), "items": max(wi, 5), "model": min(max(wm, 5), MODEL_MIN), "started": started}
        left = width - name
        got: dict[str, int] = {}
        for col in COLUMN_PRIORITY:
            if col in want and left >= want[col] + 1:
                got[col] = want[col]
                left -= want[col] + 1
        if "model" in got:
            grow = min(left, max(wm, 5) - got["model"])
            got["model"] += grow
            left -= grow
        if self.has_usage() and left >= TOKENS_W + 1:  # tokens: last, from what the whole model name leaves
            got["tokens"] = TOKENS_W
            left -= TOKENS_W + 1
        return Columns(
            name,
            got.get("provider", 0),
            got.get("items", 0),
            got.get("started", 0),
            got.get("model", 0),
            max(0, left - 2),
            got.get("tokens", 0),
        )

    def has_usage(self) -> bool:
        """Whether any session in the tree records token usage (else the tokens column never shows)."""
        key = len(self._forest.sessions)
        if self._usage is None or self._usage[0] != key:
            self._usage = (key, any(total(s.usage) is not None for s in self._forest.sessions))
        return self._usage[1]

    def natural_width(self, rows: Sequence[RowNode]) -> int | None:
        """The cells a tree needs to show every column but the title whole (None: no session row yet)."""
        name = self.name_width(rows)
        if not name:
            return None
        wp, wi, wm = self.widths()
        started = STARTED_W + (5 if self.spans_years() else 0)
        tokens = TOKENS_W + 1 if self.has_usage() else 0
        return name + max(wp, 8) + max(wi, 5) + max(wm, 5) + started + tokens + 4 + TREE_BOX_CHROME

    def _set_paint(self, width: int) -> None:
        """Lay the columns out for rows built ``width`` cells wide (they line up across rows)."""
        rows = self._rows()
        key = (width, id(rows), len(rows), self.widths(), self.spans_years(), self.has_usage())
        if key != self._columns_key:
            self._columns_key = key
            self._paint_width = width
            self._label_columns = self.columns(width, rows)

    def header_pieces(self, width: int) -> list[Piece]:
        """The column headers over the tree's rows, each above its column."""
        self._set_paint(width)
        cols = self._label_columns
        dim = self._styles.part("session-tree--dim")
        out: list[Piece] = [("session".ljust(cols.name), dim)]
        for name, w, right in (
            ("provider", cols.provider, False),
            ("items", cols.items, True),
            ("tokens", cols.tokens, True),
            ("started", cols.started, False),
            ("model", cols.model, False),
        ):
            if w:
                out.append((" " + (name.rjust(w) if right else name.ljust(w)), dim))
        if cols.title >= 12:
            out.append(("  title", dim))
        return fit(out, width)


def _year(ts: float | None) -> int | None:
    try:
        return datetime.fromtimestamp(ts, tz=UTC).year if ts is not None else None
    except (OverflowError, OSError, ValueError):
        return None


def started_label(ts: float | None, year: bool) -> str:
    """``09-01 22:01``, or ``2026-09-01 22:01`` with ``year`` (UTC); blanks when there is no time."""
    if not year:
        return when(ts)
    if ts is None:
        return "-".ljust(STARTED_W + 5)
    try:
        return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "????-??-?? ??:??"
