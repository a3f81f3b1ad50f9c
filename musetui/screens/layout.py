"""How the main screen's three parts share the terminal: pure arithmetic, no Textual.

From :data:`MEDIUM_MIN` columns the session tree sits above the items in a side column
and the panes take the rest of the width, the whole height: the evidence gets the room.
The side column is as wide as the tree's rows need, between :func:`tree_width`'s bounds;
the tree is as tall as its rows, up to :data:`TREE_SHARE` of the height, and the items
take what is left. Below :data:`MEDIUM_MIN` one part is shown at a time (the focused one);
``tab`` and ``shift+tab`` go from part to part at every width. ``z`` zooms one part to the
whole screen at any width.
"""

from __future__ import annotations

WIDE_MIN = 150
MEDIUM_MIN = 100
#: The parts of the main screen, in focus order.
PARTS = ("tree", "items", "panes")
#: Columns added or taken by one press of ] or [.
TREE_STEP = 4
#: The side column's widest share of the screen (the panes keep the rest) …
SIDE_SHARE = 0.40
#: … and on wide screens at most this many columns plus SIDE_GROWTH of the width.
SIDE_BASE, SIDE_GROWTH = 56, 0.05
#: The narrowest side column the content may ask for.
SIDE_MIN = 34
#: The tallest share of the side column the tree takes (the items keep the rest).
TREE_SHARE = 0.5
#: Rows of the tree's box around its rows: the border (2), the column header and the legend.
TREE_CHROME = 4
#: Every class the layout sets on the screen (the TCSS styles the parts by them).
LAYOUT_CLASSES = frozenset({"-wide", "-medium", "-narrow", "-single", *(f"-only-{p}" for p in PARTS)})


def layout_mode(width: int) -> str:
    """``wide`` or ``medium`` (tree over items, beside the panes) or ``narrow`` (one part)."""
    if width >= WIDE_MIN:
        return "wide"
    if width >= MEDIUM_MIN:
        return "medium"
    return "narrow"


def tree_width(width: int, mode: str, delta: int = 0, content: int | None = None) -> int:
    """The side column's width in a screen ``width`` columns wide.

    Args:
        width: the screen's width.
        mode: the layout mode (see :func:`layout_mode`).
        delta: the user's [ and ] (columns).
        content: the columns the tree's rows need (border included), when known.
    """
    hi = max(SIDE_MIN, min(round(width * SIDE_SHARE), SIDE_BASE + round(width * SIDE_GROWTH)))
    auto = hi if content is None else max(min(SIDE_MIN, hi), min(hi, content))
    return max(20, min(width - 30, auto + delta))


def tree_height(height: int, rows: int) -> int:
    """The tree box's height in a side column ``height`` rows tall, for ``rows`` rows of tree."""
    top = max(6, round(height * TREE_SHARE))
    return max(6, min(top, rows + TREE_CHROME))


def stepped_delta(width: int, mode: str, delta: int, step: int, content: int | None = None) -> int:
    """The user's tree delta after ``step`` presses of ] (negative: [), stopping at the limits."""
    before = tree_width(width, mode, delta, content)
    after = tree_width(width, mode, delta + step * TREE_STEP, content)
    return delta + step * TREE_STEP - ((before + step * TREE_STEP) - after)


def next_part(part: str, step: int) -> str:
    """The part ``tab`` (``step`` 1) or ``shift+tab`` (-1) goes to from ``part``."""
    i = PARTS.index(part) if part in PARTS else 0
    return PARTS[(i + step) % len(PARTS)]


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
