"""Contrast of the rendered rows: cursor rows (focused or not) and provider labels, per theme.

The colours are read from the segments the widgets render, and the WCAG 2 ratio is
computed here (not with the app's own helper), so a wrong helper cannot pass itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from rich.color import Color as RichColor
from rich.segment import Segment
from textual.color import Color
from textual.strip import Strip
from textual.widget import Widget

from musetui.app import MuseApp
from musetui.core.model import PROVIDERS
from musetui.theme import PROVIDER_COLOURS

from .helpers import SIZE, main, press, settle

THEMES = ("musetui", "textual-dark", "textual-light")


def _lum(rgb: tuple[int, int, int]) -> float:
    def ch(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b)


def wcag(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    hi, lo = sorted((_lum(a), _lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _rgb(colour: RichColor | None, default: Color) -> tuple[int, int, int]:
    if colour is None or colour.is_default:
        return default.rgb
    t = colour.get_truecolor()
    return (t.red, t.green, t.blue)


def low_contrast(widget: Widget, strip: Strip, only: set[str] | None = None) -> list[str]:
    """Every visible cell run of ``strip`` below 4.5:1, as ``'text' ratio`` strings."""
    base_bg = widget.background_colors[1]
    base_fg = widget.styles.color if widget.styles.color.a else base_bg.get_contrast_text()
    bad: list[str] = []
    for seg in strip:
        assert isinstance(seg, Segment)
        text = seg.text
        if not text.strip() or seg.style is None:
            continue
        if only is not None and not any(w in text for w in only):
            continue
        style = seg.style
        fg = _rgb(style.color, base_bg + base_fg)
        bg = _rgb(style.bgcolor, base_bg)
        if style.reverse:
            fg, bg = bg, fg
        ratio = wcag(fg, bg)
        if ratio < 4.5 or style.dim:
            bad.append(f"{text.strip()!r} {ratio:.2f}{' dim' if style.dim else ''}")
    return bad


def _row(widget: Any, line: int) -> Strip:
    return widget.render_line(line - round(widget.scroll_y))  # type: ignore[no-any-return]


@pytest.mark.parametrize("theme", THEMES)
async def test_cursor_rows_and_provider_labels_are_readable(sample_root: str, theme: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await settle(pilot)
        await press(pilot, "o")
        scr = main(app)
        tree, items = scr.session_tree, scr.items
        assert tree.has_focus
        problems: dict[str, list[str]] = {}
        problems["tree cursor, focused"] = low_contrast(tree, _row(tree, tree.cursor_line))
        cursor_text = _row(tree, tree.cursor_line).text
        assert "openai/azure" in cursor_text and "⚑" in cursor_text
        # Every provider label on the other rows.
        names = set(PROVIDERS)
        for y in range(tree.last_line + 1):
            if y != tree.cursor_line:
                problems[f"tree row {y}"] = low_contrast(tree, _row(tree, y), names)
        await press(pilot, "enter")  # into the items: the tree cursor is now unfocused
        assert items.has_focus
        problems["tree cursor, unfocused"] = low_contrast(tree, _row(tree, tree.cursor_line))
        problems["items cursor, focused"] = low_contrast(items, _row(items, items.cursor))
        await press(pilot, "l")  # into the panes: the item cursor is unfocused
        problems["items cursor, unfocused"] = low_contrast(items, _row(items, items.cursor))
        header = scr.query_one("#header")
        problems["header"] = low_contrast(header, header.render_line(0), names)
        failing = {k: v for k, v in problems.items() if v}
        assert not failing, f"{theme}: {failing}"


def _lab(hex_colour: str) -> tuple[float, float, float]:
    c = Color.parse(hex_colour)

    def lin(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4

    r, g, b = lin(c.r), lin(c.g), lin(c.b)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_provider_colours_are_distinct() -> None:
    """No two providers share a colour: CIE76 ΔE of at least 30 between every pair."""
    labs = {p: _lab(PROVIDER_COLOURS[p]) for p in PROVIDERS}
    close = [
        (a, b, round(sum((x - y) ** 2 for x, y in zip(labs[a], labs[b], strict=True)) ** 0.5, 1))
        for i, a in enumerate(PROVIDERS)
        for b in PROVIDERS[i + 1 :]
        if sum((x - y) ** 2 for x, y in zip(labs[a], labs[b], strict=True)) ** 0.5 < 30
    ]
    assert not close, close
