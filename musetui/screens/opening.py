"""Opening a session for the main screen: read its items, then decode it for the panes.

Both run in the screen's ``open`` worker thread and touch no widget. The session modules
are imported on the first open (or by the screen's warm-up once indexing ends), not at
start-up, so the first frame does not wait for them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from musetui.core.fingerprints.types import Decoded
from musetui.core.model import Item, SessionSummary
from musetui.widgets.text import clean

if TYPE_CHECKING:
    from musetui.core.session import OpenedSession

#: Whole-session decoding stops after this many items (the IDs pane says so).
DECODE_ITEM_LIMIT = 20_000
DECODE_SECONDS = 3.0
REASONING_LIMIT = 2_000
#: Decoding waits this long after the items are posted, so the UI paints them first.
DECODE_DELAY_S = 0.15

#: What decoding a session gives the panes: the distinct decoded values (with the index of
#: the item holding each first), whether it stopped early, and the reasoning rows
#: ``(index, line, kind, preview)``.
SessionDecoding = tuple[list[tuple[int, Decoded]], bool, list[tuple[int, int, str, str]]]


def session_reader() -> Callable[[SessionSummary], OpenedSession]:
    """The function that reads a session's items: lazily (an index of line offsets) when it is huge.

    The session modules are imported here, before the caller starts timing the read.
    """
    from musetui.core.session import open_session
    from musetui.widgets.lazy_session import can_open_lazily, open_lazily

    def read(summary: SessionSummary) -> OpenedSession:
        return open_lazily(summary) if can_open_lazily(summary) else open_session(summary)

    return read


def decode_session(opened: OpenedSession, cancelled: Callable[[], bool]) -> SessionDecoding | None:
    """Decode every item of ``opened`` for the IDs and Reasoning panes (None: cancelled meanwhile).

    It stops at :data:`DECODE_ITEM_LIMIT` items or :data:`DECODE_SECONDS`, and hands the GIL
    back to the UI thread as it goes.
    """
    from musetui.widgets.lazy_session import LazyItems, sibling

    items: Sequence[Item] = opened.items
    if isinstance(items, LazyItems):
        items = sibling(items)
    decoded: list[tuple[int, Decoded]] = []
    reasoning: list[tuple[int, int, str, str]] = []
    seen: set[str] = set()
    capped = False
    time.sleep(DECODE_DELAY_S)  # let the UI paint the items first
    t0 = time.monotonic()
    for n in range(len(items)):
        if cancelled():
            return None
        if n % 32 == 31:
            time.sleep(0.001)  # hand the GIL back to the UI thread
        if n >= DECODE_ITEM_LIMIT or (n % 256 == 0 and time.monotonic() - t0 > DECODE_SECONDS):
            capped = True
            break
        item = items[n]
        if (item.reasoning or item.kind == "reasoning") and len(reasoning) < REASONING_LIMIT:
            reasoning.append((item.index, item.line, item.reasoning or "visible", clean(item.text, 160)))
        try:
            found = opened.decoded(item)
        except Exception:
            continue
        for dec in found:
            if dec.value in seen:
                continue
            seen.add(dec.value)
            decoded.append((item.index, dec))
    return decoded, capped, reasoning


def warm_imports() -> None:
    """Import what opening a session needs while the app is idle, so the first open is quicker.

    (The first frame must not wait for them; here they cost the user nothing, where the
    first ``o`` or ``enter`` paid about 0.16 s for them.)
    """
    import musetui.core.session
    import musetui.widgets.lazy_session  # noqa: F401
    from musetui.widgets.panes import warm_syntax

    warm_syntax()
