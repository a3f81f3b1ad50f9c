"""Component styles that stay legible under every theme."""

from __future__ import annotations

from rich.style import Style
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
