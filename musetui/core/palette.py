"""Provider colours: one table, read by the app's theme (a dark screen) and the report (a white page).

Each provider has two shades of its one colour: ``screen`` is the app's default on a dark
background (a theme can override it), ``page`` the report's on white paper. The page shades
have at least 3:1 contrast against white and stay apart under deuteranopia and protanopia
(``tests/unit/test_palette.py`` measures it); every chart labels its bars in text as well.
"""

from __future__ import annotations

from typing import NamedTuple


class Shades(NamedTuple):
    """One provider's colour on a dark screen and on a white page (``#rrggbb``)."""

    screen: str
    page: str


PALETTE: dict[str, Shades] = {
    "openai": Shades("#2fbf8f", "#4b9669"),
    "anthropic": Shades("#f0904f", "#a54b3c"),
    "meta": Shades("#5c9dff", "#0f69d2"),
    "google": Shades("#e8e05a", "#b4874b"),
    "moonshot": Shades("#c58cff", "#692da5"),
    "deepseek": Shades("#4fd8e8", "#2d96a5"),
    "xai": Shades("#f0f0f0", "#2d5a69"),
    "groq": Shades("#ff4f6f", "#960f3c"),
    "mistral": Shades("#ff70d0", "#d26900"),
    "alibaba": Shades("#a0a060", "#b478d2"),
    "zhipu": Shades("#50b030", "#4b5a96"),
    "amazon": Shades("#10f030", "#785a00"),
    "unknown": Shades("#8f959e", "#767676"),
}

#: The app's default colour of every provider (theme variables ``provider-*``).
SCREEN_COLOURS: dict[str, str] = {p: s.screen for p, s in PALETTE.items()}
#: The report's colour of every provider, on a white page.
PAGE_COLOURS: dict[str, str] = {p: s.page for p, s in PALETTE.items()}
