"""Scrollable Line-API views: a new content height without laying the whole screen out."""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView


def set_virtual_height(view: ScrollView, rows: int) -> None:
    """Make ``view``'s scrollable height ``rows``; the screen is laid out again only when its scrollbar comes or goes.

    Setting ``virtual_size`` asks the whole screen for a new layout, which measures every
    widget again and repaints each one whose geometry changed: tens of milliseconds for a
    view whose own size stays the same. Here only its scrollbar is updated (``_scroll_update``
    is the pinned Textual's own step for a new virtual size, 8.2.8).
    """
    size = Size(0, rows)
    if size == view.virtual_size:
        return
    height = view.scrollable_content_region.height
    if height and (rows > height) == view.show_vertical_scrollbar:
        view.set_reactive(ScrollView.virtual_size, size)
        view._scroll_update(size)
        view.refresh()
    else:
        view.virtual_size = size
