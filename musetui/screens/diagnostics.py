"""The diagnostics view (``D``): every problem the scan met, one line per file and reason."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from musetui.widgets.text import clean

#: How many line numbers a grouped entry lists before "…".
LINES_SHOWN = 8


@dataclass
class DiagnosticGroup:
    """Diagnostics of one file with one reason: ``path: binary data: 494 lines (1, 2, 3 …)``."""

    path: str
    reason: str
    lines: list[int] = field(default_factory=list)
    count: int = 0

    def text(self) -> str:
        """One line: the file, the reason, and how many lines (which ones) it concerns."""
        if self.count <= 1:
            where = f":{self.lines[0]}" if self.lines and self.lines[0] else ""
            return f"{self.path}{where}: {self.reason}"
        shown = ", ".join(str(n) for n in self.lines[:LINES_SHOWN])
        more = " …" if len(self.lines) > LINES_SHOWN else ""
        return f"{self.path}: {self.reason}: {self.count:,} lines ({shown}{more})"


_MALFORMED = re.compile(r"^malformed: ")


def group_diagnostics(diags: Sequence[Any]) -> list[DiagnosticGroup]:
    """Group diagnostics by file and reason, in the order first met (malformed lines of one kind join)."""
    groups: dict[tuple[str, str], DiagnosticGroup] = {}
    for d in diags:
        path = str(getattr(d, "path", "") or "")
        line = int(getattr(d, "line", 0) or 0)
        reason = _MALFORMED.sub("", str(getattr(d, "message", "") or ""))
        g = groups.get((path, reason))
        if g is None:
            g = groups[(path, reason)] = DiagnosticGroup(path, reason)
        g.count += 1
        if line:
            g.lines.append(line)
    return list(groups.values())


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
        self.groups = group_diagnostics(diagnostics)
        self.total = len(diagnostics)
        self.roots = [os.path.abspath(r) for r in roots]
        self._session_key = session_key

    def key_for(self, group: DiagnosticGroup) -> str | None:
        """The key of the session held by the group's file, if it has one."""
        for root in self.roots:
            for candidate in (os.path.join(root, group.path), root):
                key = self._session_key(os.path.normpath(candidate))
                if key is not None:
                    return key
        return None

    def compose(self) -> ComposeResult:
        options: list[Option] = []
        for i, g in enumerate(self.groups):
            text = Text(no_wrap=True, overflow="ellipsis", end="")
            has_session = self.key_for(g) is not None
            text.append("▸ " if has_session else "  ", style="bold")
            text.append(clean(g.text(), 400))
            options.append(Option(text, id=str(i)))
        with Vertical(id="diagnostics-dialog") as v:
            v.border_title = f"Diagnostics · {self.total:,} in {len(self.groups):,} lines · enter: open the session (▸) · esc"
            if not options:
                yield Static("No diagnostics: every file was read.", id="diagnostics-empty")
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
