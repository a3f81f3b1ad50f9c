"""The side panes as Line-API views: one layout per change, content that fits, no stale verdicts."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip

from musetui.app import MuseApp
from musetui.widgets.panes import Doc, EvidencePane, PaneContext, Rows
from musetui.widgets.text import short_id

from .helpers import OUTLIER_ID, SIZE, current, main, press, settle


class _Counts:
    def __init__(self) -> None:
        self.builds: dict[str, int] = {}
        self.renders = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> _Counts:
    """Counts every pane build and every Doc layout (the real methods still run)."""
    from musetui.widgets import panes

    seen = _Counts()
    render = Doc.render

    def counted_render(self: Doc, console: Any, width: int) -> Any:
        seen.renders += 1
        return render(self, console, width)

    monkeypatch.setattr(Doc, "render", counted_render)
    for cls in panes.PANES:
        build = cls.build

        def counted_build(self: Any, ctx: PaneContext, _build: Any = build, _name: str = cls.__name__) -> Doc:
            seen.builds[_name] = seen.builds.get(_name, 0) + 1
            return _build(self, ctx)  # type: ignore[no-any-return]

        monkeypatch.setattr(cls, "build", counted_build)
    return seen


async def test_a_session_change_builds_and_lays_out_the_shown_pane_once(sample_root: str, counts: _Counts) -> None:
    """Opening and decoding a session leave the session's Evidence as it was: no rebuild, no relayout."""
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "5")
        scr = main(app)
        scr.session_tree.focus()
        await settle(pilot)
        counts.builds.clear()
        counts.renders = 0
        await press(pilot, "k")
        await settle(pilot)
        assert current(app).session_id != OUTLIER_ID
        assert scr.opened is not None and scr.session_decoded is not None, "the session was opened and decoded"
        assert counts.builds == {"EvidencePane": 1}, counts.builds
        assert 1 <= counts.renders <= 2, counts.renders
        assert current(app).session_id in scr.pane("evidence").plain


async def test_the_evidence_pane_is_rebuilt_when_the_fleet_flags_arrive(sample_root: str) -> None:
    """Flags set on a summary in place (fleet outliers) reach a pane that already shows it."""
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "5")
        scr = main(app)
        pane = scr.pane("evidence")
        assert isinstance(pane, EvidencePane)
        s = current(app)
        s.attribution.flags.append("time-mismatch")
        try:
            scr._refresh_panes()
            assert "time-mismatch" not in pane.plain, "the same generation keeps the built Doc"
            scr._pane_generation += 1
            scr._refresh_panes()
            assert "time-mismatch" in pane.plain
        finally:
            s.attribution.flags.remove("time-mismatch")


@pytest.mark.parametrize("size", [(80, 24), (120, 30), (200, 50)])
async def test_pane_lines_fit_beside_the_scrollbar(sample_root: str, size: tuple[int, int]) -> None:
    """A Doc taller than the pane is laid out one column narrower, so the scrollbar cuts nothing."""
    app = MuseApp([sample_root])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "o", "5")
        pane = main(app).pane("evidence")
        await pilot.pause()
        assert pane.virtual_size.height > pane.scrollable_content_region.height, "the Evidence is long"
        assert pane.show_vertical_scrollbar
        width = pane.scrollable_content_region.width
        assert pane._lines and all(line.cell_length <= width for line in pane._lines)
        shown = "".join("".join(line.text for line in pane._lines).split())
        # Every character of the Doc is laid out, in order, but where an id too long for its
        # column is cut in its middle with … (it is never folded onto the next row).
        laid_out = ".*?".join(re.escape(part) for part in shown.split("…"))
        assert re.fullmatch(laid_out, "".join(pane.plain.split())), "every character of the Doc is laid out, in order"


async def test_scrolling_keeps_its_place_while_the_content_stays(sample_root: str) -> None:
    """Moving the focus between parts re-renders nothing, so a scrolled pane stays where it was."""
    app = MuseApp([sample_root])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "o", "5")
        scr = main(app)
        pane = scr.pane("evidence")
        pane.focus()
        await settle(pilot)
        await press(pilot, "j", "j", "j")
        assert pane.scroll_y == 3
        scr.session_tree.focus()
        await settle(pilot)
        pane.focus()
        await settle(pilot)
        assert pane.scroll_y == 3


def _cells(strip: Strip) -> list[tuple[str, Style | None]]:
    """Each visible character of a line with its style (spaces carry no visible style here)."""
    out: list[tuple[str, Style | None]] = []
    for seg in strip:
        for ch in seg.text:
            out.append((ch, None if ch == " " else seg.style))
    return out


_label = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=30)
_value = st.one_of(
    st.text(st.sampled_from("ab cd-_/:.éü漢字😀 "), max_size=300),
    st.builds(
        lambda t, bold: Text(t, style="bold" if bold else ""),
        st.text(st.sampled_from("xyz 0123 →·"), max_size=200),
        st.booleans(),
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(_label, _value), min_size=1, max_size=6),
    indent=st.sampled_from([0, 1, 2, 4]),
    width=st.integers(min_value=1, max_value=140),
)
def test_rows_are_laid_out_as_the_rich_grid_lays_them_out(
    rows: list[tuple[str, str | Text]], indent: int, width: int
) -> None:
    """The rows' own layout equals rich's Table.grid, character for character and style for style."""
    console = Console(width=200, color_system="truecolor", legacy_windows=False)
    doc = Doc().rows(rows, indent=indent)
    block = doc.parts[0]
    assert isinstance(block, Rows)
    fast = block.lines(console, width)
    options = console.options.update(width=width, min_width=width, max_width=width, height=None)
    grid = [Strip(line, width) for line in console.render_lines(block.table(), options, pad=True, new_lines=False)]
    if fast is None:
        assert width - max(1, indent) - 1 - max(block.label_min, *(k.cell_len for k, _ in block.rows)) < Rows.MIN_VALUE
        return
    assert [s.text for s in fast] == [s.text for s in grid]
    assert [_cells(s) for s in fast] == [_cells(s) for s in grid]


async def test_a_new_height_updates_the_scroll_range_without_a_layout(sample_root: str) -> None:
    """Item to item, a long Raw pane keeps a scroll range and scrollbar that match its new lines."""
    app = MuseApp([sample_root])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "o", "enter", "1")
        scr = main(app)
        scr.items.focus()
        pane = scr.pane("raw")
        heights = set()
        for _ in range(6):
            await press(pilot, "j")
            pane.render_now()
            await settle(pilot)
            lines = len(pane._lines)
            heights.add(lines)
            assert pane.virtual_size.height == lines
            view = pane.scrollable_content_region.height
            assert pane.max_scroll_y == max(0, lines - view)
            if pane.show_vertical_scrollbar:
                assert pane.vertical_scrollbar.window_virtual_size == lines
            pane.scroll_end(animate=False, immediate=True)
            await settle(pilot)
            assert pane.scroll_y == max(0, lines - view)
        assert len(heights) > 2, "the items' raw lines should differ in height"


def test_what_a_session_open_imports_is_loaded_once_indexing_ends(sample_root: str) -> None:
    """The first o or enter does not pay for importing the session reader and pygments' JSON lexer."""
    import subprocess
    import sys

    code = (
        "import asyncio, sys\n"
        "from musetui.app import MuseApp\n"
        "async def main():\n"
        f"    app = MuseApp([{sample_root!r}], use_cache=False)\n"
        "    async with app.run_test(size=(120, 30)) as pilot:\n"
        "        scr = app.main_screen\n"
        "        while not scr.finished:\n"
        "            await asyncio.sleep(0.05)\n"
        "        await app.workers.wait_for_complete([w for w in app.workers if w.group == 'warm'])\n"
        "        assert scr.opened is None, 'a session was opened: the check would prove nothing'\n"
        "        mods = ('musetui.core.session', 'musetui.widgets.lazy_session', 'pygments.lexers.data')\n"
        "        print([m for m in mods if m not in sys.modules])\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


async def test_a_session_change_leaves_the_items_and_panes_scroll_ranges_true(sample_root: str) -> None:
    """Long to short to long: the item list's and the shown pane's scroll range and scrollbar follow the new content.

    (While the next session opens, the list keeps the scrollbar it had, so no screen layout
    is asked for then; the range must still come out right once the items are in.)
    """
    app = MuseApp([sample_root])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        scr = main(app)
        sessions = sorted(scr.session_tree.sessions, key=lambda s: s.items)
        short, long = sessions[0], sessions[-1]
        scrollbars = []
        for s in (long, short, long, short):
            had = scr.items.show_vertical_scrollbar
            scr.session_tree.reveal(s)
            scr.select_session(s, immediate=True)
            assert not scr.items.items and scr.items.show_vertical_scrollbar == had  # (opening…)
            await settle(pilot)
            items = scr.items
            view = items.scrollable_content_region.height
            assert scr.opened is not None and scr.opened.summary.key == s.key
            assert items.items is scr.opened.items
            assert items.virtual_size.height == len(items.items)
            assert items.show_vertical_scrollbar == (len(items.items) > view), s.path
            assert items.max_scroll_y == max(0, len(items.items) - view)
            scrollbars.append(items.show_vertical_scrollbar)
            pane = scr.pane(scr.tabs.active or "ids")
            pane.render_now()
            await pilot.pause()
            lines = len(pane._lines)
            assert pane.virtual_size.height == lines
            assert pane.show_vertical_scrollbar == (lines > pane.scrollable_content_region.height)
        assert scrollbars == [True, False, True, False]


async def test_a_new_border_title_is_painted_on_its_border_row(sample_root: str) -> None:
    """The items' title follows the session (and the tree's the sort): its border row is painted again, not kept."""
    app = MuseApp([sample_root])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        scr = main(app)
        middle, left = scr.query_one("#middle"), scr.query_one("#left")

        def top_row(widget: Any) -> str:
            return str(widget.render_lines(Region(0, 0, widget.outer_size.width, 1))[0].text)

        a, b = scr.session_tree.sessions[0], scr.session_tree.sessions[-1]
        for s in (a, b, a):
            scr.session_tree.reveal(s)
            scr.select_session(s, immediate=True)
            await settle(pilot)
            want = f"Items: {short_id(s.session_id or os.path.basename(s.path))}"
            assert want in top_row(middle), (want, top_row(middle))
        scr.session_tree.focus()
        await press(pilot, "s")
        assert "Sessions · by newest first" in top_row(left)
        await press(pilot, "s", "s", "s")
        assert "Sessions ─" in top_row(left) or top_row(left).rstrip("─╮┐ ").endswith("Sessions")


async def test_a_session_opens_after_its_selection_is_painted_and_only_the_last_one_chosen(sample_root: str) -> None:
    """The open worker starts after the frame showing the selection; a selection changed meanwhile opens only the last one."""
    app = MuseApp([sample_root])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        scr = main(app)
        started: list[str] = []
        open_session = scr.open_session

        def spy(summary: Any) -> Any:
            started.append(summary.key)
            return open_session(summary)

        scr.open_session = spy  # type: ignore[method-assign]
        a, b = scr.session_tree.sessions[0], scr.session_tree.sessions[-1]
        scr.select_session(a, immediate=True)
        assert started == [] and scr.current is a  # (not yet: the frame first)
        scr.select_session(b, immediate=True)
        await settle(pilot)
        assert started == [b.key]
        assert scr.opened is not None and scr.opened.summary.key == b.key
        assert scr.items.items is scr.opened.items and len(scr.items.items) > 0
        scr.select_session(a, immediate=True)
        await settle(pilot)
        assert started == [b.key, a.key]
        assert scr.opened is not None and scr.opened.summary.key == a.key
