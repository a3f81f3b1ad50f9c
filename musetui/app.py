"""The Textual app (thin): registers the theme and commands, and shows the main screen."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from musetui.commands import MuseCommands
from musetui.core.config import cache_wanted
from musetui.core.settings import current
from musetui.screens.main import MainScreen
from musetui.theme import MUSETUI_THEME, theme_variable_defaults

if TYPE_CHECKING:
    from musetui.core.early import HeadStart
    from musetui.core.search import SearchPool


def prepare_worker_processes() -> None:
    """Start multiprocessing's resource tracker while stderr is still the real one.

    Textual replaces ``sys.stderr`` with a capture whose ``fileno()`` is -1; a tracker
    started later (by the first process pool of a big scan or search) then fails with
    "bad value(s) in fds_to_keep".
    """
    try:
        sys.stderr.fileno()
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    except Exception:
        pass


class MuseApp(App[None]):
    """musetui: browse agent transcripts and the proof of which provider served them."""

    CSS_PATH = str(Path(__file__).with_name("musetui.tcss"))
    TITLE = "musetui"
    COMMANDS = App.COMMANDS | {MuseCommands}
    COMMAND_PALETTE_DISPLAY = "^p"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit", id="app.quit", tooltip="Quit musetui"),
        Binding(
            "ctrl+p",
            "command_palette",
            "palette",
            show=False,
            priority=True,
            id="app.palette",
            tooltip="Open the command palette: copy, filter, jump to a session",
        ),
        Binding(
            "ctrl+q",
            "quit",
            "quit",
            show=False,
            priority=True,
            id="app.quit_ctrl",
            tooltip="Quit musetui",
        ),
    ]

    def __init__(
        self,
        roots: Sequence[str],
        *,
        workers: int | None = None,
        use_cache: bool | None = None,
        head: HeadStart | None = None,
    ) -> None:
        super().__init__()
        self.head = head
        prepare_worker_processes()
        self.roots = [str(r) for r in roots]
        self.index_workers = workers
        self.use_cache = cache_wanted() if use_cache is None else use_cache
        self._search_pool: SearchPool | None = None
        self.register_theme(MUSETUI_THEME)
        wanted = current().theme
        self.theme = wanted if wanted in self.available_themes else "musetui"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **theme_variable_defaults()}

    def get_default_screen(self) -> Screen[None]:
        return MainScreen(self.roots, workers=self.index_workers, use_cache=self.use_cache, head=self.head)

    def search_pool(self) -> SearchPool:
        """Worker processes kept for searches while the app runs (started on first use)."""
        if self._search_pool is None:
            from musetui.core.search import SearchPool

            self._search_pool = SearchPool(self.index_workers)
        return self._search_pool

    def on_unmount(self) -> None:
        if self._search_pool is not None:
            self._search_pool.close()
        # The main screen froze the index for the cycle collector (see tree_feed.freeze_long_lived);
        # hand it back, for an app run inside a longer-lived process (tests, a notebook).
        gc.unfreeze()

    @property
    def main_screen(self) -> MainScreen:
        """The main screen (always at the bottom of the stack)."""
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        raise LookupError("the main screen is not mounted")
