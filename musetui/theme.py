"""Provider colours as theme variables, and the built-in ``musetui`` theme."""

from __future__ import annotations

from rich.style import Style
from textual.color import Color
from textual.theme import Theme

from musetui.core.model import PROVIDERS
from musetui.core.palette import SCREEN_COLOURS

#: Default colour of every provider, used when the active theme does not set one.
PROVIDER_COLOURS: dict[str, str] = SCREEN_COLOURS
#: The least contrast (WCAG 2) any text gets against its background.
MIN_CONTRAST = 4.5


def provider_variable(provider: str | None) -> str:
    """The theme variable name of a provider's colour (``provider-openai`` …)."""
    name = provider if provider in PROVIDERS else "unknown"
    return f"provider-{name}"


def theme_variable_defaults() -> dict[str, str]:
    """Every ``provider-*`` variable with its default colour."""
    return {provider_variable(p): PROVIDER_COLOURS[p] for p in PROVIDERS}


def provider_colour(variables: dict[str, str], provider: str | None) -> Color:
    """A provider's colour from the active theme's variables (the default when unset or bad)."""
    name = provider if provider in PROVIDERS else "unknown"
    value = variables.get(provider_variable(provider)) or PROVIDER_COLOURS[name]
    try:
        return Color.parse(value)
    except Exception:
        return Color.parse(PROVIDER_COLOURS[name])


def luminance(colour: Color) -> float:
    """WCAG 2 relative luminance of an opaque colour."""

    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)


def contrast_ratio(a: Color, b: Color) -> float:
    """WCAG 2 contrast ratio of two opaque colours (1 to 21)."""
    la, lb = luminance(a), luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def readable(colour: Color, background: Color, minimum: float = MIN_CONTRAST) -> Color:
    """``colour`` moved towards black or white just enough to reach ``minimum`` on ``background``.

    The hue is kept as far as it can be, so a provider still reads as its colour on a light
    theme (darker) and on a dark one (lighter).
    """
    colour = background + colour if colour.a < 1 else colour
    if contrast_ratio(colour, background) >= minimum:
        return colour
    white, black = Color(255, 255, 255), Color(0, 0, 0)
    target = white if contrast_ratio(white, background) >= contrast_ratio(black, background) else black
    for step in range(1, 21):
        moved = colour.blend(target, step / 20)
        if contrast_ratio(moved, background) >= minimum:
            return moved
    return target


def provider_style(variables: dict[str, str], provider: str | None, background: Color | None = None) -> Style:
    """The rich Style of a provider's colour, readable on ``background`` when one is given."""
    colour = provider_colour(variables, provider)
    if background is not None:
        colour = readable(colour, background)
    return Style(color=colour.rich_color)


MUSETUI_THEME = Theme(
    name="musetui",
    primary="#5fafd7",
    secondary="#8787d7",
    accent="#d7af5f",
    warning="#e5c07b",
    error="#e06c75",
    success="#98c379",
    foreground="#d8dee9",
    background="#161a21",
    surface="#1e232c",
    panel="#262c37",
    dark=True,
    variables={
        **theme_variable_defaults(),
        "footer-key-foreground": "#d7af5f",
        "block-cursor-text-style": "bold",
    },
)
