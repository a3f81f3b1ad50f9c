"""A pane's document: paragraphs, label rows and JSON, laid out to lines of a given width.

An id or a hash is never split across two lines: a word wider than the pane is cut in its
middle with ``…`` (:func:`cut_long_tokens`), and wrapping breaks lines only between words.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.strip import Strip

from musetui.widgets.text import clean

if TYPE_CHECKING:
    from rich.syntax import Syntax

#: The widest label column of a pane's rows.
LABEL_W = 12


class Doc:
    """A pane's content: renderables for the screen, and the same content as plain text."""

    def __init__(self) -> None:
        self.parts: list[RenderableType | Rows] = []
        self.lines: list[str] = []
        self.highlighted = 0
        #: A stand-in while the content is still being read ("decoding the session…").
        self.interim = False

    def waiting(self, text: str) -> Doc:
        """Mark the Doc as a stand-in for content still being read, with a note saying so."""
        self.interim = True
        return self.note(text)

    def add(self, text: Text) -> Doc:
        """A paragraph of rich Text (built from data, never markup)."""
        self.parts.append(text)
        self.lines.append(text.plain)
        return self

    def heading(self, text: str) -> Doc:
        return self.add(Text(text, style="bold underline"))

    def note(self, text: str) -> Doc:
        return self.add(Text(text, style="dim italic"))

    def blank(self) -> Doc:
        return self.add(Text(""))

    def rows(self, rows: Sequence[tuple[str, str | Text]], indent: int = 2) -> Doc:
        """Aligned ``label  value`` rows; wrapped values keep their column."""
        if not rows:
            return self
        block = Rows(indent, min(LABEL_W, max(len(k) for k, _ in rows)))
        for k, v in rows:
            value = v if isinstance(v, Text) else Text(clean(v))
            block.rows.append((Text(clean(k, 24)), value))
            self.lines.append(f"{k} {value.plain}")
        self.parts.append(block)
        return self

    def syntax(self, code: str, highlights: Sequence[str] = ()) -> Doc:
        """Pretty JSON, with every occurrence of ``highlights`` (a search's matches) marked."""
        syntax = _syntax(code)
        if highlights:
            lowered = code.lower()
            starts = [0]
            for i, ch in enumerate(code):
                if ch == "\n":
                    starts.append(i + 1)
            for term in highlights:
                t = term.lower()
                pos = lowered.find(t) if t else -1
                while pos >= 0:
                    line = bisect.bisect_right(starts, pos) - 1
                    syntax.stylize_range(
                        "reverse bold", (line + 1, pos - starts[line]), (line + 1, pos - starts[line] + len(t))
                    )
                    self.highlighted += 1
                    pos = lowered.find(t, pos + len(t))
        self.parts.append(syntax)
        self.lines.append(code)
        return self

    def extend(self, other: Doc) -> Doc:
        self.parts.extend(other.parts)
        self.lines.extend(other.lines)
        return self

    @property
    def plain(self) -> str:
        return "\n".join(self.lines)

    def render(self, console: Console, width: int) -> list[Strip]:
        """The Doc as lines of ``width`` cells (styles of the parts only; the pane adds its base)."""
        options = console.options.update(width=width, min_width=width, max_width=width, height=None)
        out: list[Strip] = []
        run: list[RenderableType] = []

        def flush() -> None:
            if run:
                lines = console.render_lines(Group(*run), options, pad=True, new_lines=False)
                out.extend(Strip(line, width) for line in lines)
                run.clear()

        for part in self.parts:
            if isinstance(part, Text):
                part = cut_long_tokens(part, width)
            if isinstance(part, Rows):
                laid = part.lines(console, width)
                if laid is not None:
                    flush()
                    out.extend(laid)
                    continue
                part = part.table()
            run.append(part)
        flush()
        return out


@dataclass
class Rows:
    """Label and value rows, laid out as the grid ``table()`` draws, without building one."""

    indent: int
    label_min: int
    rows: list[tuple[Text, Text]] = field(default_factory=list)

    #: The narrowest value column laid out here; narrower panes get the rich Table.
    MIN_VALUE: ClassVar[int] = 8

    def table(self) -> Table:
        """The rows as a rich grid (its layout is the reference for ``lines``)."""
        grid = Table.grid(padding=(0, 1), pad_edge=False)
        grid.add_column(width=max(0, self.indent - 1) or None, no_wrap=True)
        grid.add_column(style="dim", no_wrap=True, min_width=self.label_min)
        grid.add_column(ratio=1, overflow="fold")
        for label, value in self.rows:
            grid.add_row("", label, value)
        return grid

    def lines(self, console: Console, width: int) -> list[Strip] | None:
        """The grid's lines at ``width``, or None where only the Table lays them out exactly."""
        label_at = max(1, self.indent)
        label_w = max(self.label_min, *(label.cell_len for label, _ in self.rows))
        value_at = label_at + label_w + 1
        value_w = width - value_at
        if value_w < self.MIN_VALUE:
            return None
        dim = Style(dim=True)
        lead = Segment(" " * label_at)
        gap = Segment(" " * (label_w + 1))
        out: list[Strip] = []
        for label, value in self.rows:
            head = [lead, *Segment.apply_style(_segments(console, label), dim)]
            head.append(Segment(" " * (value_at - label_at - label.cell_len)))
            wrapped = (
                cut_long_tokens(value, value_w).wrap(console, value_w, overflow="fold") if value.plain else [Text("")]
            )
            for n, line in enumerate(wrapped):
                segments = [*(head if n == 0 else (lead, gap)), *_segments(console, line)]
                out.append(Strip(segments).extend_cell_length(width).crop(0, width))
        return out


_TOKEN = re.compile(r"\S+")


def cut_long_tokens(text: Text, width: int) -> Text:
    """``text`` with every word wider than ``width`` cut in its middle with ``…`` (styles kept).

    Wrapping then breaks lines only between words: an id or a hash is shown whole on one
    line, or as its head and tail around ``…``, never split across two lines.
    """
    plain = text.plain
    if width < 3 or len(plain) <= width:
        return text
    longs = [m.span() for m in _TOKEN.finditer(plain) if cell_len(m.group()) > width]
    if not longs:
        return text
    out = Text(style=text.style, justify=text.justify, overflow=text.overflow, no_wrap=text.no_wrap, end=text.end)
    at = 0
    keep = width - 1
    for start, end in longs:
        head = start + keep - keep // 2
        out.append_text(text[at:head])
        out.append("…", style="dim")
        out.append_text(text[end - keep // 2 : end])
        at = end
    out.append_text(text[at:])
    return out


def _segments(console: Console, text: Text) -> list[Segment]:
    """One line of Text as segments, its own style under its spans (as rich draws it)."""
    segments = list(text.render(console, end=""))
    if text.style and not text.spans:  # (render() applies the base style only with spans)
        return list(Segment.apply_style(segments, console.get_style(text.style)))
    return segments


def _syntax(code: str) -> Syntax:
    from rich.syntax import Syntax  # (pygments: imported when the Raw pane first shows JSON)

    return Syntax(code, "json", theme="ansi_dark", word_wrap=True, background_color="default")


def warm_syntax() -> None:
    """Load pygments' JSON lexer and style (the Raw pane's first JSON costs that otherwise)."""
    from rich.console import Console

    console = Console(width=40, color_system="truecolor")  # (render_lines writes nothing)
    console.render_lines(_syntax('{"a": [1, "b", true, null]}'), console.options)
