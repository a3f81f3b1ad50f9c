"""How the main screen's three parts share the terminal's width: pure arithmetic, no Textual.

From :data:`WIDE_MIN` columns the tree, the items and the panes sit side by side; from
:data:`MEDIUM_MIN` the items sit above the panes, right of the tree; below it one part is
shown at a time (the focused one). ``z`` zooms one part to the whole screen at any width.
"""

from __future__ import annotations

WIDE_MIN = 150
MEDIUM_MIN = 100
#: The parts of the main screen, in focus order.
PARTS = ("tree", "items", "panes")
#: Columns added or taken by one press of ] or [.
TREE_STEP = 4
#: Every class the layout sets on the screen (the TCSS styles the parts by them).
LAYOUT_CLASSES = frozenset({"-wide", "-medium", "-narrow", "-single", *(f"-only-{p}" for p in PARTS)})


def layout_mode(width: int) -> str:
    """``wide`` (three columns), ``medium`` (tree | items over panes) or ``narrow`` (one part)."""
    if width >= WIDE_MIN:
        return "wide"
    if width >= MEDIUM_MIN:
        return "medium"
    return "narrow"


def tree_width(width: int, mode: str, delta: int = 0) -> int:
    """The session tree's width in a screen ``width`` columns wide (``delta``: the user's [ and ])."""
    if mode == "wide":
        auto = max(52, min(66, round(width * 0.33)))
    else:
        auto = max(36, min(64, round(width * 0.45)))
    return max(20, min(width - 30, auto + delta))


def stepped_delta(width: int, mode: str, delta: int, step: int) -> int:
    """The user's tree delta after ``step`` presses of ] (negative: [), stopping at the limits."""
    before = tree_width(width, mode, delta)
    after = tree_width(width, mode, delta + step * TREE_STEP)
    return delta + step * TREE_STEP - ((before + step * TREE_STEP) - after)


def single_part(mode: str, zoomed: str | None, shown_part: str) -> str | None:
    """The one part shown alone (zoomed, or the focused one on a narrow screen), else None."""
    return zoomed or (shown_part if mode == "narrow" else None)


def layout_classes(mode: str, single: str | None) -> set[str]:
    """The screen's classes (out of :data:`LAYOUT_CLASSES`) for ``mode`` and the ``single`` part shown."""
    classes = {f"-{m}" for m in ("wide", "medium", "narrow") if m == mode}
    classes |= {"-single"} if single is not None else set()
    classes |= {f"-only-{part}" for part in PARTS if part == single}
    return classes


def panes_hint(mode: str, zoomed: str | None) -> str:
    """What the panes' border says about getting back (empty when there is nothing to say)."""
    if zoomed is not None:
        return " · zoomed: esc or z back"
    if mode == "narrow":
        return " · tab: next part · esc: tree"
    return ""
