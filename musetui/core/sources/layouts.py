"""The capture recorders' file layouts, and which one a file claims (one entry per layout).

A layout turns a recorder's file into exchanges; :mod:`musetui.core.sources.http_capture` then reads
what each exchange proves. Adding a recorder means one module with its parser and one entry
in :data:`CAPTURE_LAYOUTS`.
"""

from __future__ import annotations

from typing import Any

from musetui.core.budget import Budget
from musetui.core.sources import capture_read, httprr
from musetui.core.sources.capture_read import Exchange
from musetui.core.sources.spec import CaptureLayout

#: Every layout, in the order a file name is matched against them.
CAPTURE_LAYOUTS: tuple[CaptureLayout, ...] = (
    CaptureLayout("vcr", (".yaml", ".yml"), capture_read.parse_yaml),
    CaptureLayout("har", (".har",), capture_read.parse_json),
    httprr.LAYOUT,
)

#: A JSON document whose content (not its name) shows a capture is read as this layout.
JSON_LAYOUT = "har"

_BY_NAME = {layout.name: layout for layout in CAPTURE_LAYOUTS}

#: The file names that may hold a capture (a JSON capture may be named anything ``.json``).
CAPTURE_SUFFIXES: tuple[str, ...] = (*dict.fromkeys(s for layout in CAPTURE_LAYOUTS for s in layout.suffixes), ".json")


#: Every layout's suffixes and magic bytes at once: most files claim none (one test each).
_NAMED = tuple(s for layout in CAPTURE_LAYOUTS for s in layout.suffixes)
_MAGICS = tuple(layout.magic for layout in CAPTURE_LAYOUTS if layout.magic)


def may_hold_capture(path: str) -> bool:
    """Whether a file's name allows a capture (``.json`` too: a JSON capture is known by its content)."""
    return path.endswith(CAPTURE_SUFFIXES) or (path.endswith(".gz") and path[:-3].endswith(CAPTURE_SUFFIXES))


def claims(path: str, data: bytes) -> str | None:
    """The layout a file must be read as, from its name (and magic bytes); None: not by its name.

    JSON Lines files pay one ``endswith`` per layout and nothing more.
    """
    low = path.lower()
    if low.endswith(".gz"):  # (read expanded: a LangChain ``*.yaml.gz`` cassette)
        low = low[:-3]
    if not low.endswith(_NAMED) and not data.startswith(_MAGICS):
        return None
    for layout in CAPTURE_LAYOUTS:
        if low.endswith(layout.suffixes) or (layout.magic and data.startswith(layout.magic)):
            return layout.name
    return None


def parse(
    data: bytes, kind: str, document: Any = None, budget: Budget | None = None
) -> tuple[list[Exchange], list[int]]:
    """Read a capture of layout ``kind`` into exchanges and the file's line starts.

    Raises:
        NotACapture: the file holds no interactions.
        CaptureError: the file is too large or does not parse.
    """
    return _BY_NAME[kind].parse(data, document, budget)
