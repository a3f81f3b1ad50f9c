"""Pick a provider to filter the session tree by (``p``)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from musetui.core.model import PROVIDERS
from musetui.screens.summary import Tally
from musetui.theme import provider_style

ALL = "*"


def _sessions(n: int) -> str:
    return f"{n:>4,} session{'s' if n != 1 else ' '}"


class ProviderFilterScreen(ModalScreen[str | None]):
    """Returns a provider, ``"*"`` for all, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "cancel", "Cancel", id="filter.cancel", tooltip="Keep the current filter"),
        Binding("j", "cursor('down')", "Down", show=False, id="filter.down", tooltip="Next provider"),
        Binding("k", "cursor('up')", "Up", show=False, id="filter.up", tooltip="Previous provider"),
    ]

    def __init__(self, counts: dict[str, int], current: str | None, tallies: dict[str, Tally] | None = None) -> None:
        super().__init__()
        self.counts = counts
        #: Each provider's items and dates, shown beside its count.
        self.tallies = tallies or {}
        self.current = current

    def compose(self) -> ComposeResult:
        options: list[Option] = []
        total = sum(self.counts.values())
        # Only the providers some session has (and the one filtered on, even if it has none now).
        shown = [p for p in PROVIDERS if self.counts.get(p, 0) or p == self.current]
        name_w = max([len("all providers") - 2, *(len(p) for p in shown)])
        mark = "● " if self.current is None else "  "
        everything = Text(f"{mark}{'all providers':<{name_w + 2}}  {_sessions(total)}")
        totals = [t for p, t in self.tallies.items() if p in self.counts]
        if totals:
            items = sum(t.items for t in totals)
            everything.append(f" · {items:,} item{'s' if items != 1 else ''}", style="dim")
        options.append(Option(everything, id=ALL))
        for p in sorted(shown, key=lambda p: (-self.counts.get(p, 0), PROVIDERS.index(p))):
            n = self.counts.get(p, 0)
            text = Text("● " if self.current == p else "  ")
            text.append("■ ", style=provider_style(self.app.theme_variables, p, self.background_colors[1]))
            text.append(f"{p:<{name_w}}", style="bold" if n else "dim")
            text.append(f"  {_sessions(n)}", style="" if n else "dim")
            t = self.tallies.get(p)
            if t is not None:
                text.append(f" · {t.items:,} item{'s' if t.items != 1 else ''}", style="dim")
                if t.span():
                    text.append(f" · {t.span()}", style="dim")
            options.append(Option(text, id=p, disabled=n == 0))
        with Vertical(id="filter-dialog") as v:
            v.border_title = "Filter by provider"
            yield OptionList(*options, id="filter-options")

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        target = self.current or ALL
        for i in range(ol.option_count):
            if ol.get_option_at_index(i).id == target:
                ol.highlighted = i
                break
        ol.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_cursor(self, direction: str) -> None:
        ol = self.query_one(OptionList)
        if direction == "down":
            ol.action_cursor_down()
        else:
            ol.action_cursor_up()
