"""Component styles that stay legible under every theme."""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from textual.color import Color
from textual.widget import Widget

from musetui.theme import readable


def component_style(widget: Widget, name: str) -> Style:
    """The partial Rich style of a component class, with ``auto`` colours resolved.

    Textual's partial component styles turn an ``auto`` colour (``$text`` is ``auto 87%``,
    ``$text-muted`` is ``auto 60%``) into plain white, which vanishes on a light theme.
    Here it becomes the contrasting text colour for the widget's own background, blended
    at the rule's alpha, as Textual does for the widget's own text. A translucent colour
    is blended over that background too (a Rich style has no alpha).
    """
    style = widget.get_component_rich_style(name, partial=True)
    styles = widget.get_component_styles(name)
    if not styles.has_rule("color"):
        return style
    color = styles.color
    background = widget.background_colors[1]
    if styles.auto_color:
        color = background.get_contrast_text(color.a)
    if styles.has_rule("background") and styles.background.a > 0:
        background = background + styles.background
    # Every part stays readable (>= 4.5:1) on the background it is drawn on, whatever the theme.
    return style + Style(color=readable(background + color, background).rich_color)


def cursor_colours(widget: Widget, base: Style, component: str) -> tuple[Style, Color, Color]:
    """A cursor row's resolved style, and the foreground and background it is drawn in.

    The foreground is made readable (>= 4.5:1) on the cursor's background: part colours
    (provider, dim) on the cursor background fell to about 1:1.
    """
    raw = base + widget.get_component_rich_style(component)
    bg = Color.from_rich_color(raw.bgcolor) if raw.bgcolor is not None else widget.background_colors[1]
    fg = Color.from_rich_color(raw.color) if raw.color is not None else bg.get_contrast_text(1.0)
    return raw, readable(fg, bg), bg


class PartStyles:
    """A widget's memoised Rich styles: its base style, its component parts, and derived ones.

    Resolving a style walks the widget's ancestors and their CSS: a row rendered part by
    part would pay that for every run. ``clear`` (on a style, theme or focus change) drops
    them all and bumps ``epoch``, which caches built from these styles keep in their key.
    """

    __slots__ = ("_memo", "_widget", "epoch")

    def __init__(self, widget: Widget) -> None:
        self._widget = widget
        self._memo: dict[str, Style] = {}
        self.epoch = 0

    def base(self) -> Style:
        """The widget's own style (its colours over its ancestors' backgrounds)."""
        style = self._memo.get("")
        if style is None:
            style = self._memo[""] = self._widget.rich_style
        return style

    def part(self, name: str) -> Style:
        """The partial style of component class ``name`` (see :func:`component_style`)."""
        style = self._memo.get(name)
        if style is None:
            style = self._memo[name] = component_style(self._widget, name)
        return style

    def get(self, key: str, make: Callable[[], Style]) -> Style:
        """The style memoised under ``key`` (``make`` builds it the first time)."""
        style = self._memo.get(key)
        if style is None:
            style = self._memo[key] = make()
        return style

    def clear(self) -> None:
        """Forget every style (they are resolved again on next use)."""
        self._memo.clear()
        self.epoch += 1
