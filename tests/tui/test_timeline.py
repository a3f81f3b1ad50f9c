"""T opens the timeline view: coloured bars per bucket, first-seen events; enter opens one at its line."""

from __future__ import annotations

from typing import cast

from rich.cells import cell_len
from rich.text import Text
from textual.command import CommandPalette
from textual.widgets import OptionList, Static

from musetui.app import MuseApp
from musetui.screens.main import MainScreen
from musetui.screens.timeline import At, TimelineScreen
from musetui.theme import provider_style

from .helpers import OUTLIER_ID, SIZE, current, main, press, settle


async def test_T_shows_the_timeline_and_enter_opens_the_first_seen_session(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "T")
        scr = app.screen
        assert isinstance(scr, TimelineScreen)
        chart = scr.query_one("#timeline-body", Static).content
        assert isinstance(chart, Text)
        assert "2026-09-01 22:00  MMMMAAOOZ" in chart.plain and "by hour (chosen from the span" in chart.plain
        z = chart.plain.index("MMMMAAOOZ") + 8
        styles = [s.style for s in chart.spans if s.start <= z < s.end]
        assert styles and styles[-1] == provider_style(app.theme_variables, "openai", scr.background_colors[1])
        events = scr.query_one(OptionList)
        texts = [str(events.get_option_at_index(i).prompt) for i in range(events.option_count)]
        special = next(i for i, t in enumerate(texts) if "openai/azure · muse-special" in t)
        assert texts[special].startswith("2026-09-01 22:01  Z ")
        for _ in range(special):
            await press(pilot, "j")
        await press(pilot, "enter")
        assert isinstance(app.screen, MainScreen)
        await settle(pilot)
        assert current(app).session_id == OUTLIER_ID
        item = main(app).selected_item()
        assert item is not None and item.line == 1
        # an event at a later line (a segment's, once records have them) puts the cursor there
        opened = main(app).opened
        assert opened is not None and len(opened.items) > 3
        later = opened.items[3].line
        await press(pilot, "T")
        again = app.screen
        assert isinstance(again, TimelineScreen)
        cast(TimelineScreen, again).dismiss(At(current(app).key, later))
        await settle(pilot)
        item = main(app).selected_item()
        assert item is not None and item.line == later


async def test_the_palette_opens_the_timeline(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"view: timeline")
        await settle(pilot)
        await press(pilot, "enter")
        assert isinstance(app.screen, TimelineScreen)
        body = app.screen.query_one("#timeline-body", Static)
        chart = body.content
        assert isinstance(chart, Text)  # at 80 columns the bars fit beside the scrollbar: nothing is cut
        assert max(cell_len(line) for line in chart.plain.splitlines()) <= body.content_region.width
        await press(pilot, "escape")
        assert isinstance(app.screen, MainScreen)
