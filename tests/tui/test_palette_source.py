"""The app's default provider colours come from the one palette table the report also reads."""

from __future__ import annotations

from musetui.core.palette import SCREEN_COLOURS
from musetui.theme import MUSETUI_THEME, PROVIDER_COLOURS, theme_variable_defaults


def test_theme_defaults_are_the_palettes_screen_shades() -> None:
    assert PROVIDER_COLOURS == SCREEN_COLOURS
    assert theme_variable_defaults()["provider-anthropic"] == SCREEN_COLOURS["anthropic"]
    assert MUSETUI_THEME.variables["provider-mistral"] == SCREEN_COLOURS["mistral"]
