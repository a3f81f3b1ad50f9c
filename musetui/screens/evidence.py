"""What leaves the app from the main screen: evidence reports, raw lines, paths, the pager, the HTML report.

:class:`EvidenceExport` belongs to the main screen. It reads the screen's selection
(``current``, ``opened``, ``selected_item()``, the item list's cursor) and nothing else of
its state; reports are built in worker threads that only post :class:`ReportReady` (the
screen hands it back to :meth:`EvidenceExport.report_ready`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.markup import escape

from musetui.clipboard import copy_text
from musetui.core.model import Item, SessionSummary
from musetui.core.pager import pager_invocation
from musetui.messages import ReportReady
from musetui.widgets.text import clean, short_id

if TYPE_CHECKING:
    from musetui.core.session import OpenedSession
    from musetui.screens.host import ExportHost


class EvidenceExport:
    """``y`` and ``Y``, the palette's copy path, pager and HTML report, for one main screen."""

    def __init__(self, screen: ExportHost) -> None:
        self.screen = screen
        #: The text last put on the clipboard by ``y`` or ``Y``.
        self.last_copied = ""
        #: The command the pager was last run with.
        self.last_pager_command: list[str] = []

    def _current(self, missing: str) -> SessionSummary | None:
        """The current session, or None after telling the user ``missing``."""
        s = self.screen.current
        if s is None:
            self.screen.notify(missing, severity="warning", timeout=3)
        return s

    def _run_in_thread(self, work: Callable[[], None], name: str, description: str) -> None:
        """Run ``work`` in the screen's ``report`` worker group (a newer one replaces an older one)."""
        self.screen.run_worker(
            work, name=name, group="report", description=description, exclusive=True, exit_on_error=False, thread=True
        )

    def _item_or_cursor(self) -> Item | None:
        """The selected item, else the one under the item list's cursor (once a session is open)."""
        screen = self.screen
        return screen.selected_item() or (screen.items.current if screen.opened is not None else None)

    def copy_evidence(self) -> None:
        """y: the item's report when an item is selected, else the session's (``musetui show``)."""
        s = self._current("Nothing selected: move to a session first.")
        if s is None:
            return
        item = self.screen.selected_item()
        opened = self.screen.opened
        work = partial(self._build_report, s, item if opened is not None else None, opened)
        self._run_in_thread(work, "build_report", "evidence report")

    def _build_report(self, s: SessionSummary, item: Item | None, opened: OpenedSession | None) -> None:
        """The report of the session on screen, as the app scanned it: what the evidence pane shows.

        It is the text ``musetui show PATH [--line N] --root ROOT`` prints for the app's root (the
        same fleet, so the same flags and reasons), never a second scan in another context.
        """
        from musetui.core.report import item_markdown, session_markdown

        summary = s
        try:
            if item is not None and opened is not None:
                text = item_markdown(summary, item, opened.raw(item), opened.decoded(item))
                what = f"evidence for {short_id(s.session_id)} line {item.line}"
            else:
                text = session_markdown(summary)
                what = f"evidence for {short_id(s.session_id)}"
        except Exception as exc:  # reported, never a crash
            self.screen.post_message(ReportReady("", "", f"{type(exc).__name__}: {exc}"))
            return
        self.screen.post_message(ReportReady(text, what))

    def report_ready(self, message: ReportReady) -> None:
        """Put a finished report on the clipboard (or say why there is none)."""
        if message.error:
            self.screen.notify(escape(f"Could not build the report: {clean(message.error, 200)}"), severity="error")
            return
        self.last_copied = message.text
        copy_text(self.screen.app, message.text, message.what)

    def copy_raw(self) -> None:
        """Y: the raw line of the selected item (or of the item under the list cursor)."""
        screen = self.screen
        s = screen.current
        item = self._item_or_cursor()
        if s is None or item is None or screen.opened is None:
            screen.notify(
                "No item: open a session (enter) and pick an item first.",
                severity="warning",
                timeout=3,
            )
            return
        text = screen.opened.raw(item).decode("utf-8", "replace")
        self.last_copied = text
        copy_text(screen.app, text, f"raw line {item.line} of {short_id(s.session_id)}")

    def copy_path(self) -> None:
        """Copy the current session's absolute file path."""
        s = self._current("No session selected.")
        if s is None:
            return
        copy_text(self.screen.app, s.abspath, f"path of {short_id(s.session_id)}")

    def open_in_pager(self) -> None:
        """Open the current session's file in ``$PAGER`` (default ``less``), read-only."""
        import subprocess

        from textual.app import SuspendNotSupported

        screen = self.screen
        s = self._current("No session selected.")
        if s is None:
            return
        item = self._item_or_cursor()
        command, env = pager_invocation(s.abspath, item.line if item is not None else None, os.environ)
        self.last_pager_command = command
        try:
            with screen.app.suspend():
                subprocess.call(command, env=env)
        except SuspendNotSupported:
            screen.notify("Cannot suspend in this environment.", severity="warning", timeout=3)
        except OSError as exc:
            screen.notify(escape(f"Could not run the pager: {exc}"), severity="error", timeout=5)
        screen.refresh()

    def write_report(self) -> None:
        """Palette: write the evidence report (HTML) of the open roots, outside every scanned tree."""
        index = self.screen.indexer.index
        if index is None:
            self.screen.notify("The report is written once indexing has finished.", severity="warning")
            return
        work = partial(self._write_report, list(index.sessions), list(index.files), list(index.diagnostics))
        self._run_in_thread(work, "_write_report", "write report")

    def _write_report(self, sessions: list[SessionSummary], files: list[Any], diagnostics: list[Any]) -> None:
        from musetui.core import evidence_report as er
        from musetui.core.report_page import render_html

        screen = self.screen
        try:
            path = er.default_output(screen.roots)
            data = er.from_index(screen.roots, sessions, files, diagnostics)
            with open(path, "w", encoding="utf-8") as f:
                f.write(render_html(data))
        except OSError as exc:
            screen.app.call_from_thread(
                screen.notify, escape(clean(f"Report not written: {exc}", 300)), severity="error"
            )
            return
        flagged = len(er.flagged_sessions(data.sessions))
        screen.app.call_from_thread(
            screen.notify,
            escape(clean(f"Report written: {path} ({len(data.sessions)} sessions, {flagged} flagged)", 300)),
        )
