"""The one-line header (roots, session count, provider legend) and the status line."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from musetui.core.model import PROVIDERS
from musetui.theme import provider_style
from musetui.widgets.styling import component_style
from musetui.widgets.text import clean_name


def progress_bar(done: int, total: int, width: int = 8) -> str:
    """``▰▰▰▰▱▱▱▱``: a coarse bar that reads without colour."""
    if total <= 0:
        return "▱" * width
    filled = max(0, min(width, round(width * done / total)))
    return "▰" * filled + "▱" * (width - filled)


class MuseHeader(Widget):
    """``musetui  <roots>  412 sessions · 3 roots   meta 398  openai 11 …``."""

    DEFAULT_CSS = """
    MuseHeader {
        height: 1;
        background: $panel;
        color: $foreground;
        & > .header--title { background: $primary; color: $background; text-style: bold; }
        & > .header--dim { color: $text-muted; }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"header--title", "header--dim"}

    counts: reactive[dict[str, int]] = reactive(dict, always_update=True)
    sessions: reactive[int] = reactive(0)
    progress: reactive[str] = reactive("")

    def __init__(self, roots: list[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.roots = roots

    def set_counts(self, counts: Counter[str], sessions: int) -> None:
        """Show the per-provider counts of the indexed sessions."""
        self.sessions = sessions
        self.counts = dict(counts)

    def render(self) -> Text:
        title = component_style(self, "header--title") or Style(bold=True)
        dim = component_style(self, "header--dim")
        width = self.content_region.width or self.size.width or 200
        tail = f"  {self.progress} " if self.progress else ""
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(" musetui ", style=title)
        text.append(" ")
        roots = "  ".join(clean_name(r, 40) for r in self.roots[:3])
        if len(self.roots) > 3:
            roots += f"  +{len(self.roots) - 3}"
        text.append(roots)
        n_roots = len(self.roots)
        count = f"   {self.sessions:,} session{'s' if self.sessions != 1 else ''}"
        text.append(
            count + (f" · {n_roots} root{'s' if n_roots != 1 else ''}" if n_roots > 1 else "") + "   ", style=dim
        )
        order = sorted(
            self.counts.items(),
            key=lambda kv: (-kv[1], PROVIDERS.index(kv[0]) if kv[0] in PROVIDERS else 99),
        )
        room = width - len(tail)
        for i, (provider, n) in enumerate(order):
            gap = "  " if i else ""
            chunk = f"{gap}■ {provider} {n:,}"
            more = f"  +{len(order) - i - 1} more" if i < len(order) - 1 else ""
            if text.cell_len + len(chunk) + len(more) > room:
                text.append(f"{gap}+{len(order) - i} more", style=dim)  # a provider is shown whole or not at all
                break
            style = provider_style(self.app.theme_variables, provider, self.background_colors[1])
            text.append(gap + "■ ", style=style)
            text.append(provider, style=style + Style(bold=True))
            text.append(f" {n:,}")
        if tail:
            pad = width - text.cell_len - len(tail)
            text.append(" " * max(1, pad))
            text.append(tail, style=title)
        return text


class StatusLine(Widget):
    """Indexing progress (``Indexed 1,234/5,000 files · Esc to stop``), filter and search state."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
        color: $text-muted;
        padding: 0 1;
    }
    """

    index_text: reactive[str] = reactive("")
    filter_text: reactive[str] = reactive("")
    search_text: reactive[str] = reactive("")
    where_text: reactive[str] = reactive("")

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(self.index_text, style="bold")
        for part in (self.filter_text, self.search_text, self.where_text):
            if part:
                text.append("  │  ", style="dim")
                text.append(part)
        width = self.content_region.width or self.size.width
        if width and text.cell_len > width:
            text.truncate(width, overflow="ellipsis")
        return text
