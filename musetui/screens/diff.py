"""Session diff in the app: ``m`` marks the session under the cursor, ``M`` compares it with the marked one.

:class:`DiffMarks` belongs to the main screen: it reads the screen's current session and
nothing else of its state. The profiles are built in a worker thread (each session opened and
decoded as ``musetui diff`` does, :mod:`musetui.core.diff`) that only posts :class:`DiffReady`; the
screen hands it back to :meth:`DiffMarks.ready`, which shows :class:`DiffScreen`: the same
text view as ``musetui diff``, fitted to the dialog.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Static

from musetui.core.model import SessionSummary
from musetui.messages import DiffReady
from musetui.widgets.text import clean, short_id

if TYPE_CHECKING:
    from musetui.screens.host import DiffHost

#: The dialog's width in cells (at most), and what its border, padding and scrollbar take.
DIALOG_WIDTH = 100
DIALOG_FRAME = 6


class DiffScreen(ModalScreen[None]):
    """The comparison of two sessions as text (plain: never read as markup)."""

    DEFAULT_CSS = """
    DiffScreen {
        align: center middle;
        background: $background 60%;
    }
    #diff-dialog {
        width: 100;
        max-width: 95%;
        height: 90%;
        border: round $primary;
        border-title-color: $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,M", "close", "Close", id="diff.close", tooltip="Close the diff"),
        Binding(
            "y",
            "copy",
            "Copy",
            id="diff.copy",
            tooltip="Copy the diff as text (what musetui diff prints)",
        ),
        Binding("down,j", "scroll('down')", "Down", show=False, id="diff.down", tooltip="Scroll down"),
        Binding("up,k", "scroll('up')", "Up", show=False, id="diff.up", tooltip="Scroll up"),
    ]

    def __init__(self, text: str, title: str) -> None:
        super().__init__()
        self.text = text
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="diff-dialog") as v:
            v.border_title = f"{self.title_text} · y copies · esc closes"
            with VerticalScroll(id="diff-scroll"):
                yield Static(Text(self.text, no_wrap=True, overflow="crop"), id="diff-body")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        from musetui.clipboard import copy_text

        copy_text(self.app, self.text, "the session diff")

    def action_scroll(self, direction: str) -> None:
        scroll = self.query_one("#diff-scroll", VerticalScroll)
        if direction == "down":
            scroll.scroll_down()
        else:
            scroll.scroll_up()


class DiffMarks:
    """``m`` and ``M`` for one main screen: the marked session, and the diff against it."""

    def __init__(self, screen: DiffHost) -> None:
        self.screen = screen
        self.marked: SessionSummary | None = None
        #: The text of the last diff shown.
        self.last_text = ""

    def mark(self) -> None:
        """m: remember the session under the cursor."""
        s = self.screen.current
        if s is None:
            self.screen.notify("Nothing to mark: move to a session first.", severity="warning", timeout=3)
            return
        self.marked = s
        self.screen.notify(
            escape(f"Marked {short_id(s.session_id)} for diff: move to another session and press M."),
            timeout=4,
        )

    def diff(self) -> None:
        """M: compare the marked session with the one under the cursor (in a worker)."""
        screen = self.screen
        a, b = self.marked, screen.current
        if a is None or b is None:
            missing = "No session marked: press m on one first." if a is None else "Move to a session to compare with."
            screen.notify(missing, severity="warning", timeout=3)
            return
        width = max(40, min(DIALOG_WIDTH, screen.app.size.width * 95 // 100) - DIALOG_FRAME)
        screen.run_worker(
            partial(self._build, a, b, width), name="diff", group="diff", description="session diff",
            exclusive=True, exit_on_error=False, thread=True,
        )  # fmt: skip

    def _build(self, a: SessionSummary, b: SessionSummary, width: int) -> None:
        """Profile both sessions and render their comparison; post :class:`DiffReady`."""
        from musetui.core.diff import compare, session_profile
        from musetui.core.diff_view import render
        from musetui.core.session import open_session

        screen = self.screen
        try:
            pa = session_profile(a, open_session(a), screen.display_path(a))
            pb = session_profile(b, open_session(b), screen.display_path(b))
            text = render(compare(pa, pb), width)
        except Exception as exc:  # reported, never a crash
            screen.post_message(DiffReady("", "", f"{type(exc).__name__}: {exc}"))
            return
        screen.post_message(DiffReady(text, f"Diff: A {short_id(a.session_id)} · B {short_id(b.session_id)}"))

    def ready(self, message: DiffReady) -> None:
        """Show a finished diff (or say why there is none)."""
        if message.error:
            self.screen.notify(escape(f"Could not compare: {clean(message.error, 200)}"), severity="error")
            return
        self.last_text = message.text
        self.screen.app.push_screen(DiffScreen(message.text, message.title))
