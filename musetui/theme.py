"""Provider colours as theme variables, and the built-in ``musetui`` theme."""

from __future__ import annotations

from rich.style import Style
from textual.color import Color
from textual.theme import Theme

from musetui.model import PROVIDERS

#: Default colour of every provider, used when the active theme does not set one.
PROVIDER_COLOURS: dict[str, str] = {
    "openai": "#2fbf8f",
    "anthropic": "#e08a5b",
    "meta": "#5b8def",
    "google": "#e5c07b",
    "moonshot": "#c678dd",
    "deepseek": "#56b6c2",
    "xai": "#d0d0d0",
    "groq": "#f25c54",
    "mistral": "#ff9e3d",
    "alibaba": "#ff7f50",
    "zhipu": "#7aa2f7",
    "amazon": "#f0a830",
    "unknown": "#8a8f98",
}


def provider_variable(provider: str | None) -> str:
    """The theme variable name of a provider's colour (``provider-openai`` …)."""
    name = provider if provider in PROVIDERS else "unknown"
    return f"provider-{name}"


def theme_variable_defaults() -> dict[str, str]:
    """Every ``provider-*`` variable with its default colour."""
    return {provider_variable(p): PROVIDER_COLOURS[p] for p in PROVIDERS}


def provider_style(variables: dict[str, str], provider: str | None) -> Style:
    """The rich Style of a provider's colour, read from the active theme's variables."""
    value = variables.get(provider_variable(provider)) or PROVIDER_COLOURS["unknown"]
    try:
        return Style(color=Color.parse(value).rich_color)
    except Exception:
        return Style()


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
