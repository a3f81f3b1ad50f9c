"""A session that switches provider mid-way, in the app: o stops at it, w reaches the switch, rows and pane 5 show it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from tests_switched import CLAUDE, claude_switched

from musetui.app import MuseApp
from musetui.widgets.item_list import SEGMENT_LABEL_MIN

from .helpers import current, item_rows, main, press, settle

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts"


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_a_switch_is_visible_and_one_key_away(tmp_path: Path, size: tuple[int, int]) -> None:
    root = tmp_path / "vm"
    shutil.copytree(SAMPLE / "claude", root / "claude")
    claude_switched(SAMPLE, tmp_path / "x")
    shutil.copy(tmp_path / "x" / CLAUDE, root / CLAUDE)
    app = MuseApp([str(root)])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "o")
        s = current(app)
        assert s.path == CLAUDE.removeprefix("claude/") or s.path.endswith(Path(CLAUDE).name)
        assert "provider-switch" in s.attribution.flags
        scr = main(app)
        assert "segment 2 of 2: lines 19–22 (4 items), openai" in scr.pane("evidence").plain
        for _ in range(100):  # (the session opens in a worker; w is offered once its items are listed)
            if scr.items.segments:
                break
            await pilot.pause(0.05)
        await press(pilot, "w")
        item = scr.items.current
        assert item is not None and item.line == 19  # the first item of the openai segment
        assert scr.focused is scr.items and scr.items.region.width > 0  # shown, on a narrow screen too
        rows = [r for r in item_rows(app) if r.strip()]
        # the provider by name in a coloured gutter (never colour alone), from the first line to the switch
        if len(rows[0]) >= SEGMENT_LABEL_MIN:  # (the list's width, as laid out at this size)
            a, o = "▌anthropic", "▌openai"
        else:
            a, o = "A", "O"
        assert re.match(rf"{a} +1 ", rows[0]), rows[0]
        assert any(re.match(rf"{a} +18 ", r) for r in rows) and any(re.match(rf"{o} +19 ", r) for r in rows)
        scr.items.styles.width = 40  # (a narrow list: the provider's initial)
        await settle(pilot)
        assert any(re.match(r"O +19 ", r) for r in item_rows(app))
        await press(pilot, "w")
        assert scr.items.current is not None and scr.items.current.line == 19  # (one switch: w comes back to it)
        await press(pilot, "y")  # the item's own verdict and segment, then the session's
        copied = app.clipboard.splitlines()
        assert copied[2].startswith("- **Item verdict:** openai") and copied[3].endswith(
            "lines 19–22 (4 items), openai"
        )
        assert copied[4].startswith("- **Verdict:** anthropic")


async def test_a_session_that_never_switches_has_no_gutter() -> None:
    app = MuseApp([str(SAMPLE / "claude")])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        scr = main(app)
        await press(pilot, "tab")
        await settle(pilot)
        assert not scr.items.segments
        await press(pilot, "w")
        assert scr.items.current is None or scr.items.current.line == scr.items.items[0].line


def test_w_is_in_the_help_and_the_footer() -> None:
    from musetui.screens.main import MainScreen
    from musetui.widgets.help import binding_rows

    rows = dict(binding_rows(MainScreen.BINDINGS))
    assert "w" in rows and "switch" in rows["w"]
    (b,) = [b for b in MainScreen.BINDINGS if getattr(b, "key", None) == "w"]
    assert getattr(b, "show", False)
