"""Repainting only what changed: a view's new content height, a container's new border title.

Both reach into the pinned Textual (8.2.8): its public setters repaint or lay out more than
the change needs, and on a full screen that is most of a keypress's time.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.widget import Widget


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


def set_border_title(widget: Widget, title: Text) -> None:
    """Give ``widget`` a new border title, repainting its top border row only.

    Textual's ``border_title`` setter repaints the whole widget: for a container, every row
    of its region (its border and its background behind the children), several milliseconds
    at each session change. The title is stored as the setter stores it.
    """
    new = widget.render_str(Content.from_rich_text(title)).expand_tabs(4).split()[0]
    old = widget._border_title
    if old is not None and old.plain == new.plain and old.spans == new.spans:
        return
    widget._border_title = new
    if not widget.is_mounted or not widget.styles.border_top[0]:
        widget.refresh()
        return
    offset = widget.content_offset
    widget.refresh(Region(-offset.x, -offset.y, widget.outer_size.width, 1))
