"""The main screen's Textual-free parts: the layout's arithmetic and the pager's invocation."""

from __future__ import annotations

from musetui.core.pager import pager_invocation
from musetui.screens import layout
from musetui.screens.layout import TREE_STEP, stepped_delta, tree_width


def test_layout_modes_change_at_150_and_100_columns() -> None:
    assert [layout.layout_mode(w) for w in (200, 150, 149, 100, 99, 80)] == [
        "wide",
        "wide",
        "medium",
        "medium",
        "narrow",
        "narrow",
    ]


def test_one_part_alone_when_narrow_or_zoomed() -> None:
    assert layout.single_part("wide", None, "items") is None
    assert layout.single_part("narrow", None, "items") == "items"
    assert layout.single_part("wide", "panes", "tree") == "panes"
    assert layout.layout_classes("narrow", "items") == {"-narrow", "-single", "-only-items"}
    assert layout.layout_classes("wide", None) == {"-wide"}
    assert layout.layout_classes("medium", "panes") <= layout.LAYOUT_CLASSES
    assert layout.panes_hint("wide", None) == ""
    assert "zoomed" in layout.panes_hint("narrow", "tree")
    assert "tab" in layout.panes_hint("narrow", None)


def test_tree_width_stops_at_its_limits_without_storing_presses_past_them() -> None:
    width, mode = 120, "medium"
    delta = 0
    for _ in range(30):  # far past the narrowest tree
        delta = stepped_delta(width, mode, delta, -1)
    assert tree_width(width, mode, delta) == 20
    # One ] widens at once: the presses past the limit were not kept.
    assert tree_width(width, mode, stepped_delta(width, mode, delta, +1)) == 20 + TREE_STEP
    for _ in range(30):
        delta = stepped_delta(width, mode, delta, +1)
    assert tree_width(width, mode, delta) == width - 30
    assert tree_width(width, mode, stepped_delta(width, mode, delta, -1)) == width - 30 - TREE_STEP


def test_the_pager_runs_without_raw_control_characters() -> None:
    command, env = pager_invocation("/x/s.jsonl", 12, {"LESS": "-RiS --raw-control-chars -r", "HOME": "/h"})
    assert command == ["less", "+12g", "/x/s.jsonl"]
    assert env["LESS"] == "-iS" and env["LESSSECURE"] == "1" and env["HOME"] == "/h"
    command, env = pager_invocation("/x/s.jsonl", None, {"PAGER": "vim -R"})
    assert command == ["vim", "-R", "/x/s.jsonl"] and env["LESS"] == ""
    assert pager_invocation("/x/s.jsonl", 3, {"PAGER": "most"})[0] == ["most", "+3", "/x/s.jsonl"]
