"""The main screen's parts and their layout: header, session tree, items, panes, status line, footer.

:class:`PartsScreen` composes the parts and fits them to the terminal (the tree over the
items beside the panes, or one part at a time on a narrow screen), zooms the focused part
and moves the focus between parts. :class:`~musetui.screens.main.MainScreen` builds on it
with what the parts show: the sessions, the selection, the keys' actions. The arithmetic is
:mod:`~musetui.screens.layout`'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Container, Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from musetui.core.model import SessionSummary
from musetui.screens.layout import (
    LAYOUT_CLASSES,
    layout_classes,
    layout_mode,
    next_part,
    panes_hint,
    single_part,
    stepped_delta,
    tree_height,
    tree_width,
)
from musetui.widgets.header import MuseHeader, StatusLine
from musetui.widgets.item_list import ItemList
from musetui.widgets.panes import PANES, DetailPane
from musetui.widgets.session_tree import SessionTree
from musetui.widgets.text import display_root
from musetui.widgets.tree_header import TreeHeader
from musetui.widgets.tree_rows import LEGEND

#: Pane ids in key order (1–5).
PANE_IDS = ("raw", "ids", "signature", "reasoning", "evidence")
#: How the header names the bundled sample when musetui opened it itself (no PATH, no transcripts found).
SAMPLE_LABEL = "bundled sample (no transcripts found)"


def header_root(root: str) -> str:
    """A root as the header names it: as the user wrote it, or :data:`SAMPLE_LABEL` for the bundled sample."""
    from musetui.core.config import sample_dir

    if os.path.isabs(root) and os.path.realpath(root) == os.path.realpath(sample_dir()):
        return SAMPLE_LABEL
    return display_root(root)


class PartsScreen(Screen[None]):
    """Tree · items · panes with the header, a status line and the footer, fitted to the terminal."""

    def __init__(self, roots: Sequence[str]) -> None:
        super().__init__()
        self.roots = [str(r) for r in roots]
        self.root_labels = {os.path.abspath(r): display_root(r) for r in self.roots}
        #: ``wide``, ``medium`` or ``narrow`` (see :func:`~musetui.screens.layout.layout_mode`).
        self.mode = "wide"
        #: The part shown on a narrow screen, the part zoomed (z), and the tree's width step ([ and ]).
        self.shown_part = "tree"
        self.zoomed: str | None = None
        self.tree_delta = 0

    def compose(self) -> ComposeResult:
        self._layout_classes(self.app.size.width)  # before the parts mount: they are styled once
        yield MuseHeader([header_root(r) for r in self.roots], id="header")
        with Horizontal(id="main"):
            with Vertical(id="side"):
                with Vertical(id="left"):
                    tree = SessionTree(self.root_labels, id="tree")
                    yield TreeHeader(tree, id="tree-header")
                    yield tree
                    yield Static(LEGEND, id="legend", markup=False)
                with Vertical(id="middle"):
                    yield ItemList(id="items")
            with Container(id="right"), TabbedContent(id="panes", initial="ids"):
                for pane_id, cls in zip(PANE_IDS, PANES, strict=True):
                    with TabPane(f"{PANE_IDS.index(pane_id) + 1} {cls.title}", id=pane_id):
                        yield cls(id=f"pane-{pane_id}")
        yield StatusLine(id="status")
        yield Footer()

    @property
    def session_tree(self) -> SessionTree:
        return self.query_one(SessionTree)

    @property
    def items(self) -> ItemList:
        return self.query_one(ItemList)

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one(TabbedContent)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    def pane(self, pane_id: str) -> DetailPane:
        """The pane widget of ``raw`` / ``ids`` / ``signature`` / ``reasoning`` / ``evidence``."""
        return self.query_one(f"#pane-{pane_id}", DetailPane)

    def display_path(self, s: SessionSummary) -> str:
        """The session's file as the user named its root (relative stays relative)."""
        label = self.root_labels.get(s.root)
        if label is None:
            return s.abspath
        if s.abspath == s.root:
            return label
        return f"{label.rstrip('/')}/{s.path}"

    # ------------------------------------------------------------------ fitting the terminal

    def on_resize(self, event: events.Resize) -> None:
        self.apply_layout()

    def part_of(self, widget: Any) -> str | None:
        """``tree``, ``items`` or ``panes``: the part of the screen holding ``widget``."""
        for node in getattr(widget, "ancestors_with_self", ()):
            if isinstance(node, SessionTree) or getattr(node, "id", None) == "left":
                return "tree"
            if isinstance(node, ItemList) or getattr(node, "id", None) == "middle":
                return "items"
            if isinstance(node, TabbedContent):
                return "panes"
        return None

    def apply_layout(self) -> None:
        """Fit the parts to the screen: the tree over the items beside the panes, or one part."""
        width = self.size.width or self.app.size.width
        height = self.size.height or self.app.size.height
        mode, single = self._layout_classes(width)
        side, left = self.query_one("#side"), self.query_one("#left")
        if single is not None:
            side.styles.width = "1fr"
            left.styles.height = "1fr"
        else:
            side.styles.width = tree_width(width, mode, self.tree_delta, self.session_tree.content_width())
            left.styles.height = tree_height(max(0, height - 3), self.session_tree.row_count)
        hint = panes_hint(mode, self.zoomed)
        self.query_one("#panes").border_title = Text("Panes" + hint) if hint else None

    def _layout_classes(self, width: int) -> tuple[str, str | None]:
        """Set the screen's layout classes for ``width``; return the mode and the single part shown."""
        mode = layout_mode(width)
        self.mode = mode
        single = single_part(mode, self.zoomed, self.shown_part)
        classes = layout_classes(mode, single)
        if {c for c in self.classes if c in LAYOUT_CLASSES} != classes:
            self.set_classes((set(self.classes) - LAYOUT_CLASSES) | classes)
        return mode, single

    def show_part(self, part: str) -> None:
        """On a narrow screen, show ``part`` (the others are a tab away)."""
        if part != self.shown_part:
            self.shown_part = part
            if self.mode == "narrow" and self.zoomed is None:
                self.apply_layout()

    def action_zoom(self) -> None:
        """z: the focused part fills the screen; z or esc again comes back."""
        if self.zoomed is not None:
            self.zoomed = None
        else:
            self.zoomed = self.part_of(self.focused) or "tree"
        self.apply_layout()

    def action_tree_width(self, step: int) -> None:
        """[ and ]: narrower or wider session tree."""
        width = self.size.width or self.app.size.width
        content = self.session_tree.content_width()
        self.tree_delta = stepped_delta(width, self.mode, self.tree_delta, step, content)
        self.apply_layout()

    def action_next_part(self, step: int) -> None:
        """tab and shift+tab: the next (or previous) part takes the focus, and is shown on a narrow screen."""
        part = next_part(self.part_of(self.focused) or self.shown_part, step)
        if self.zoomed is not None:
            self.zoomed = part
        self.show_part(part)
        self.apply_layout()
        self.focus_part(part)

    def focus_part(self, part: str) -> None:
        """Focus the widget of ``part``: the tree, the item list or the pane shown."""
        if part == "tree":
            self.session_tree.focus()
        elif part == "items":
            self.items.focus()
        else:
            self.pane(self.tabs.active or "evidence").focus()

    @on(SessionTree.RowsChanged)
    def _tree_rows_changed(self, event: SessionTree.RowsChanged) -> None:
        self.apply_layout()

    def action_pane(self, pane_id: str) -> None:
        """Show pane ``pane_id`` (1–5)."""
        if pane_id in PANE_IDS:
            in_panes = self.part_of(self.focused) == "panes"
            self.tabs.active = pane_id
            if in_panes:  # the pane that had the focus is hidden now: the shown one takes it
                self.pane(pane_id).focus()
            self.pane(pane_id).render_now()
            if (self.mode == "narrow" or self.zoomed not in (None, "panes")) and self.part_of(self.focused) != "panes":
                if self.zoomed is not None:
                    self.zoomed = "panes"
                self.pane(pane_id).focus()
                self.show_part("panes")
                self.apply_layout()
