"""The session tree's rows: each node as (text, style) runs, then as one strip of the tree's width.

Rows are built as runs, not rich ``Text``, so a screenful renders in a few milliseconds. A
session node keeps its label's runs across repaints (a scroll, a sort, a collapse above
it): they are built again only when something they show changes (see
:meth:`TreeRows.session_label`). What a label counts (a group's sessions, the flagged
sessions inside a collapsed parent, the id prefix siblings need) comes from the
:class:`~musetui.session_forest.SessionForest`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from musetui.model import SessionSummary
from musetui.session_forest import MIN_PREFIX, SessionForest, session_ident
from musetui.theme import provider_style
from musetui.widgets.styling import PartStyles, cursor_colours
from musetui.widgets.text import clean, clean_name, when

if TYPE_CHECKING:
    from rich.text import Text

#: The glyph of a session flagged as a fleet outlier, and of other flags.
OUTLIER_GLYPH = "⚑"
FLAG_GLYPH = "!"
#: The model column's width when the row is short of room (it is shown whole when it fits).
MODEL_WIDTH = 16
#: One line explaining the row glyphs and numbers (under the tree, and in the help).
LEGEND = "⚑ outlier · ! other flag · ✗n malformed lines · n = items · ▸ +n⚑ flagged inside · via: router"


@dataclass(frozen=True, slots=True)
class Group:
    """A tree group: one format found under one root."""

    root: str
    format: str
    title: str


@dataclass(frozen=True, slots=True)
class RootSummary:
    """The fleet row of one root when several are open: its rank and summary (see musetui.fleet)."""

    root: str
    text: str


NodeData = Group | SessionSummary | RootSummary
#: A run of a row's text and its style (None: the row's own).
Piece = tuple[str, Style | None]
#: What a session label was built for (see :meth:`TreeRows.session_label`), and its runs.
LabelCache = tuple[tuple[object, ...], list[Piece]]


class RowNode(Protocol):
    """What a row is built from: a tree node (see :class:`musetui.widgets.session_tree.Node`)."""

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

    def __init__(self, widget: Widget, forest: SessionForest, styles: PartStyles, guide_depth: int) -> None:
        self._widget = widget
        self._forest = forest
        self._styles = styles
        self._guide_depth = guide_depth
        self._width_cache: tuple[int, int, int] | None = None
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
            lambda: provider_style(widget.app.theme_variables, provider, widget.background_colors[1]) + Style(bold=True),
        )

    def group_label(self, group: Group) -> list[Piece]:
        """``claude  (12) 2⚑``: a group's title, its shown sessions and how many are flagged."""
        count, flagged = self._forest.group_stats((group.root, group.format))
        part = self._styles.part
        style = part("session-tree--group")  # (under the count and flags too: bold)
        label: list[Piece] = [
            (clean(group.title), style),
            (f"  ({count})", style + part("session-tree--dim")),
        ]
        if flagged:
            label.append((f" {flagged}⚑", style + part("session-tree--flag")))
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
        """``⚑ 01a05efe-0 09-01 22:01 openai/azure   14 muse-special  Audit site/ for…``, as runs.

        A node keeps its label across repaints: it is built again only when something it
        shows changes, each part of its key: the room, the id prefix its siblings need, the
        ``+n⚑`` badge, the column widths, the styles, and the summaries themselves
        (:meth:`labels_changed`).
        """
        prefix = self._prefix_length(node) if node is not None else MIN_PREFIX
        inside = self._forest.flagged_inside(s) if node is not None and node.allow_expand and not node.is_expanded else 0
        widths = self.widths()
        key = (self._label_epoch, self._styles.epoch, room, prefix, inside, widths)
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
        ident = id_prefix(session_ident(s), prefix)
        provider = provider_label(s)
        model_full = clean_name(s.declared_model or s.label or "-", 60)
        wp, wi, wm = widths
        # Columns: glyph, id, [time], provider, items, model, [title]. The model is cut only
        # when the row has no room for it; the time and then the title come when it has.
        base = 2 + len(ident) + 1 + wp + 1 + wi + 1
        show_time = room - base - min(wm, 20) >= 12  # one decision for the rows of a depth
        if show_time:
            base += 12
        route = route_label(s)
        if route:  # (it takes the model's room, not the time's: the columns stay aligned)
            base += len(route) + 1
        model = clean(model_full, max(4, room - base)) if len(model_full) > room - base else model_full
        pstyle = self._provider_style(s.attribution.provider)
        out: list[Piece] = [(glyph + " ", glyph_style), (ident + " ", None)]
        if show_time:
            out.append((when(s.started_at), dim))
            out.append((" ", None))
        out.append((provider.ljust(wp), pstyle))
        out.append((" ", None))
        out.append((str(s.items).rjust(wi), dim))
        out.append((" ", None))
        if route:  # the route before the model: it is part of the verdict, the model is what was declared
            out.append((route + " ", pstyle))
        out.append((model, None))
        if s.malformed_lines:
            out.append((f" ✗{s.malformed_lines}", part("session-tree--flag")))
        if inside:
            out.append((f" +{inside}⚑", part("session-tree--flag")))
        used = sum(cell_len(t) for t, _ in out)
        if s.title and room - used >= 12:
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
