"""The diagnostics view (``D``): every problem the scan met, one line per file and reason."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from musetui.core.diagnostics import Group, group
from musetui.core.model import Diagnostic
from musetui.widgets.text import clean


class DiagnosticsScreen(ModalScreen[str | None]):
    """Returns the session key of the chosen file (when it has a session), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,D", "close", "Close", id="diagnostics.close", tooltip="Close the diagnostics"),
        Binding("j", "cursor('down')", "Down", show=False, id="diagnostics.down", tooltip="Next diagnostic"),
        Binding("k", "cursor('up')", "Up", show=False, id="diagnostics.up", tooltip="Previous diagnostic"),
    ]

    def __init__(
        self, diagnostics: Sequence[Any], roots: Sequence[str], session_key: Callable[[str], str | None]
    ) -> None:
        super().__init__()
        self.groups: list[Group] = []
        self.total = 0
        self._set(diagnostics)
        self.roots = [os.path.abspath(r) for r in roots]
        self._session_key = session_key

    def _set(self, diagnostics: Sequence[Any]) -> None:
        self.groups = group([d for d in diagnostics if isinstance(d, Diagnostic)])
        self.total = len(diagnostics)

    def set_diagnostics(self, diagnostics: Sequence[Any]) -> None:
        """Show these diagnostics instead (live follow met more), keeping the cursor's line."""
        self._set(diagnostics)
        ol = self.query_one(OptionList)
        at = ol.highlighted
        ol.clear_options()
        ol.add_options(self._options())
        if ol.option_count:
            ol.highlighted = min(at or 0, ol.option_count - 1)
        self.query_one("#diagnostics-dialog").border_title = self._title()
        for empty in self.query("#diagnostics-empty"):
            empty.display = not ol.option_count

    def _title(self) -> str:
        drift = sum(1 for g in self.groups if g.kind == "drift")
        what = "kind or key" if drift == 1 else "kinds or keys"
        kinds = f" · format drift: {drift:,} unknown {what}" if drift else ""
        n = len(self.groups)
        lines = f"{n:,} line{'s' if n != 1 else ''}"
        return f"Diagnostics · {self.total:,} in {lines}{kinds} · enter: open the session (▸) · esc"

    def _options(self) -> list[Option]:
        options: list[Option] = []
        for i, g in enumerate(self.groups):
            text = Text(no_wrap=True, overflow="ellipsis", end="")
            has_session = self.key_for(g) is not None
            text.append("▸ " if has_session else "  ", style="bold")
            text.append(clean(g.text(), 400))
            options.append(Option(text, id=str(i)))
        return options

    def key_for(self, group: Group) -> str | None:
        """The key of the session held by the group's file, if it has one."""
        for root in self.roots:
            for candidate in (os.path.join(root, group.path), root):
                key = self._session_key(os.path.normpath(candidate))
                if key is not None:
                    return key
        return None

    def compose(self) -> ComposeResult:
        options = self._options()
        with Vertical(id="diagnostics-dialog") as v:
            v.border_title = self._title()
            yield Static("No diagnostics: every file was read.", id="diagnostics-empty").set_styles(
                "display: block;" if not options else "display: none;"
            )
            yield OptionList(*options, id="diagnostics-list")

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        if ol.option_count:
            ol.highlighted = 0
        ol.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        group = self.groups[int(event.option.id or 0)]
        key = self.key_for(group)
        if key is None:
            self.notify("This file has no session in the tree (nothing in it could be read).", timeout=4)
            return
        self.dismiss(key)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_cursor(self, direction: str) -> None:
        ol = self.query_one(OptionList)
        if direction == "down":
            ol.action_cursor_down()
        else:
            ol.action_cursor_up()
