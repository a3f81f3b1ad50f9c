"""The go-to-line prompt (``:``): a line number of the open session's file."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class GotoLineScreen(ModalScreen[int | None]):
    """Returns the line number typed, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="goto.cancel", tooltip="Close without moving"),
    ]

    def __init__(self, last_line: int) -> None:
        super().__init__()
        self.last_line = last_line

    def compose(self) -> ComposeResult:
        with Vertical(id="goto-dialog") as v:
            v.border_title = "Go to line"
            yield Input(placeholder=f"1–{self.last_line:,}", type="integer", id="goto-input")
            yield Static(f"A line of the session's file (1–{self.last_line:,}) · enter: go · esc", id="goto-hint")

    def on_mount(self) -> None:
        self.set_focus(self.query_one(Input), scroll_visible=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        self.dismiss(int(text) if text.isdigit() else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
