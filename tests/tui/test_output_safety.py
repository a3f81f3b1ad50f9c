"""The app shows no control, bidi or invisible character of a transcript: every rendered screen line is read.

The hostile tree (``tests/hostile.py``) holds every Bidi_Control and Default_Ignorable_Code_Point
character and every C0/C1 control in a session id, a model, a file name and the texts.
"""

from __future__ import annotations

from pathlib import Path

from hostile import assert_inert, hostile_tree, leaks
from textual.app import App

from musetui.app import MuseApp
from musetui.widgets.item_list import ItemList

from .helpers import main, press, settle


def screen_lines(app: App[object]) -> list[str]:
    """The text of every line the screen shows, as the terminal would get it."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def test_every_screen_line_and_the_copy_are_clean(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    app = MuseApp([str(tmp_path)])
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        scr = main(app)
        seen = "\n".join(screen_lines(app))
        await press(pilot, "o")  # the flagged session: the hostile one
        s = scr.current
        assert s is not None and s.session_id is not None and s.session_id.startswith("id\u061c")
        shown = "\n".join(screen_lines(app))
        assert "id\\u061c" in shown  # its id is shown escaped, not dropped
        seen += shown
        await press(pilot, "enter")
        assert isinstance(app.focused, ItemList)
        for y in range(len(scr.items.items)):
            scr.items.cursor = y
            await settle(pilot)
            for pane_id in ("raw", "ids", "signature", "reasoning", "evidence"):
                scr.action_pane(pane_id)
                await pilot.pause()
                seen += "\n".join(screen_lines(app))
        await press(pilot, "y")
        copied = app.clipboard
        assert "needle" in seen and copied
        assert_inert(copied)
        await press(pilot, "backspace", "y")
        assert_inert(app.clipboard)
        copied += app.clipboard
    assert leaks(seen) == []
    assert leaks(copied) == []
