"""m marks a session, M compares it with the one under the cursor: the diff view under Pilot."""

from __future__ import annotations

from rich.cells import cell_len
from textual.command import CommandPalette

from musetui.app import MuseApp
from musetui.screens.diff import DiffScreen
from musetui.screens.main import MainScreen

from .helpers import OUTLIER_ID, SIZE, current, main, press, settle


async def test_m_marks_and_M_shows_the_diff(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "M")  # nothing marked yet: said, no dialog
        assert isinstance(app.screen, MainScreen)
        assert main(app).diffs.last_text == ""
        await press(pilot, "o")
        assert current(app).session_id == OUTLIER_ID
        await press(pilot, "m")
        scr = main(app)
        assert scr.diffs.marked is not None and scr.diffs.marked.session_id == OUTLIER_ID
        sibling = next(
            s for s in scr.session_tree.sessions
            if s.parent_session_id == current(app).parent_session_id and s.declared_model == "avocado-1.3"
        )  # fmt: skip
        scr.navigator.jump_to_session(sibling.key)
        await settle(pilot)
        assert current(app).key == sibling.key
        await press(pilot, "M")
        assert isinstance(app.screen, DiffScreen)
        text = scr.diffs.last_text
        differ = text[text.index("Differ") : text.index("Only in A")]
        assert "tool-id class: tool-id" in differ and "call_+24" in differ and "call_+32hex" in differ
        assert "reasoning kind: reasoning" in differ and "empty-signature" in differ
        assert "id layout: openai-item-id" in text[text.index("Only in A") :]
        body = app.screen.query_one("#diff-body")  # the text fits beside the scrollbar: nothing is cut
        assert max(cell_len(line) for line in text.splitlines()) <= body.content_region.width
        await press(pilot, "y")
        assert app.clipboard == text
        await press(pilot, "escape")
        assert isinstance(app.screen, MainScreen)


async def test_the_palette_offers_mark_and_diff(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "o")
        await press(pilot, "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"mark for diff")
        await settle(pilot)
        await press(pilot, "enter")
        assert main(app).diffs.marked is not None and main(app).diffs.marked.session_id == OUTLIER_ID
        # back to the same session: a diff of a session with itself shares everything
        await press(pilot, "O")
        await press(pilot, "M")
        assert isinstance(app.screen, DiffScreen)
        text = main(app).diffs.last_text
        assert "0 differ · 0 only in A · 0 only in B" in text
        assert (
            max(cell_len(line) for line in text.splitlines()) <= app.screen.query_one("#diff-body").content_region.width
        )
