"""The timeline view (``T``): sessions per provider in each time bucket, and the first-seen events.

The numbers are :mod:`musetui.core.timeline`'s, from the sessions the app has indexed (no
re-scan); the bars are the letters of ``musetui timeline``, coloured by provider through
the theme's ``provider-*`` variables. Enter on a first-seen event opens that session with
the item cursor on the event's line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from musetui.core.timeline import (
    Timeline,
    bar_cells,
    bucket_label,
    glyphs,
    key_label,
    minute_label,
    span_text,
    unit_for,
)
from musetui.theme import provider_style
from musetui.widgets.text import clean_name

#: The dialog's width in cells (at most), and what its border, padding and scrollbar take.
DIALOG_WIDTH = 100
DIALOG_FRAME = 6


@dataclass(frozen=True, slots=True)
class At:
    """Where to open: a session (its key, the abspath) and a line (what the navigator's jumps take)."""

    abspath: str
    line: int


class TimelineScreen(ModalScreen[At | None]):
    """The chart above, the first-seen events below; returns the chosen event's place."""

    DEFAULT_CSS = """
    TimelineScreen {
        align: center middle;
        background: $background 60%;
    }
    #timeline-dialog {
        width: 100;
        max-width: 95%;
        height: 90%;
        border: round $primary;
        border-title-color: $primary;
        background: $surface;
        padding: 0 1;
    }
    #timeline-chart { height: 1fr; }
    #timeline-events { height: 1fr; border-top: solid $primary; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,T", "close", "Close", id="timeline.close", tooltip="Close the timeline"),
        Binding("j", "cursor('down')", "Down", show=False, id="timeline.down", tooltip="Next first-seen event"),
        Binding("k", "cursor('up')", "Up", show=False, id="timeline.up", tooltip="Previous first-seen event"),
    ]

    def __init__(self, timeline: Timeline) -> None:
        super().__init__()
        self.timeline = timeline
        self.marks = glyphs(timeline.keys)

    def _style(self, provider: str) -> Style:
        return provider_style(self.app.theme_variables, provider, self.background_colors[1])

    def _mark(self, key: tuple[str, str | None], count: int = 1) -> Text:
        return Text(self.marks[key] * count, style=self._style(key[0]))

    def chart(self, width: int) -> Text:
        """The legend and one line per bucket, ``width`` cells wide at most."""
        t = self.timeline
        how = f"chosen from the span, {span_text(t.span)}" if t.chosen else "as asked"
        out = Text(f"{t.sessions:,} sessions, {t.items:,} items · by {t.by} ({how}) · UTC\n", end="")
        for k in t.keys:
            out.append_text(self._mark(k))
            out.append(f" {clean_name(key_label(k))}  ")
        label_w = 16 if t.by == "hour" else 10
        sw = max(5, len(f"{max((b.sessions for b in t.buckets), default=0):,}"))
        room = max(8, width - label_w - 2 - 2 - sw)
        unit = unit_for(t, room)
        out.append(f"\none glyph = {unit:,} session{'s' if unit > 1 else ''}, counted where it starts\n")
        for b in t.buckets:
            out.append(f"{bucket_label(b.start, t.by):<{label_w}}  ")
            cells = bar_cells([(k, n) for k, n, _ in b.ordered()], unit, room)
            for k, n in cells:
                out.append_text(self._mark(k, n))
            out.append(" " * (room - sum(n for _, n in cells)) + f"  {b.sessions:>{sw},}\n")
        return out

    def compose(self) -> ComposeResult:
        width = min(DIALOG_WIDTH, int(self.app.size.width * 0.95)) - DIALOG_FRAME
        options = []
        for i, e in enumerate(self.timeline.first_seen):
            r = e.row
            text = Text(no_wrap=True, overflow="ellipsis", end="")
            text.append(f"{minute_label(r.time):<16}  ")
            text.append_text(self._mark((r.provider, r.host)))
            text.append(
                f" {clean_name(key_label((r.provider, r.host)))} · {clean_name(r.declared_model or 'no declared model', 40)}"
            )
            text.append(f"  {clean_name(r.path)}:{r.line}", style="dim")
            options.append(Option(text, id=str(i)))
        with Vertical(id="timeline-dialog") as v:
            v.border_title = "Timeline · first seen: enter opens the session at its line · esc closes"
            with VerticalScroll(id="timeline-chart"):
                yield Static(self.chart(width), id="timeline-body")
            yield OptionList(*options, id="timeline-events")

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        if ol.option_count:
            ol.highlighted = 0
        ol.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        row = self.timeline.first_seen[int(event.option.id or 0)].row
        self.dismiss(At(row.key, row.line))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_cursor(self, direction: str) -> None:
        ol = self.query_one(OptionList)
        if direction == "down":
            ol.action_cursor_down()
        else:
            ol.action_cursor_up()
