"""Sessions from the index going into the main screen's tree, and their counts into the header.

:class:`TreeFeed` belongs to the main screen; its handlers of the index's messages hand it
the sessions. It keeps the sessions found but not yet in the tree (added a slice per turn
of the event loop, so keys pressed meanwhile are answered between slices) and the sessions
per provider that the header shows.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from musetui.core.model import SessionSummary
from musetui.messages import IndexRefreshed
from musetui.screens.summary import Tally, tally
from musetui.widgets.header import MuseHeader

if TYPE_CHECKING:
    from musetui.screens.host import FeedHost

#: Sessions added to the tree per turn of the event loop (keys pressed meanwhile go between).
ADD_SLICE = 500
#: The totals under the tree are counted again at most this often (seconds) while sessions come.
SUMMARY_S = 0.25


def freeze_long_lived() -> None:
    """Move every object alive now out of the cycle collector's reach (``gc.freeze``).

    Called as the app starts, as each slice of sessions joins the tree, and when indexing
    ends: what exists then (modules, widgets, the summaries and tree nodes) lives as long as
    the app. A full collection walks every object it tracks; on the bench corpus 6-7 of
    them ran while indexing (0.12-0.27 s each, the UI frozen meanwhile) and they stalled a
    search by 0.14-0.4 s. Frozen objects are still freed by reference counting when
    dropped; only cycles among them wait (the app unfreezes them as it exits).
    """
    gc.freeze()


class TreeFeed:
    """Fills one main screen's session tree from the index, and keeps the header's counts."""

    def __init__(self, screen: FeedHost) -> None:
        self.screen = screen
        self._pending: list[SessionSummary] = []
        self._provider_counts: Counter[str] = Counter()
        self._summary_due = False
        self._summary_timer = False

    def add(self, sessions: Iterable[SessionSummary], everything: bool = False) -> None:
        """Queue newly found sessions and add the first slice of them (``everything``: all now)."""
        self._pending.extend(sessions)
        self.add_pending(everything)

    def add_pending(self, everything: bool = False) -> None:
        """Add found sessions to the tree, a slice at a time so keys pressed meanwhile go first.

        The rest of a big batch is added by a callback queued behind the messages that
        arrived while this slice was added (key presses among them).
        """
        pending = self._pending
        if not pending:
            return
        n = len(pending) if everything else ADD_SLICE
        chunk, self._pending = pending[:n], pending[n:]
        tree = self.screen.session_tree
        tree.add_sessions(chunk)
        freeze_long_lived()
        self._provider_counts.update(s.attribution.provider for s in chunk)
        self.keep_cursor_on_top()
        self.update_header()
        self.screen.navigator.sessions_changed()
        if self._pending and not everything:
            self.screen.call_later(self.add_pending)

    def keep_cursor_on_top(self) -> None:
        """Until a session is chosen, the cursor stays on the first group as groups arrive."""
        tree = self.screen.session_tree
        if not tree.root.children or self.screen.current is not None:
            return
        node = tree.cursor_node
        first = tree.root.children[0]
        if node is None or (node is not first and not isinstance(node.data, SessionSummary)):
            _ = tree.last_line
            tree.move_cursor(first)

    def replace(self, removed: Sequence[SessionSummary], added: Sequence[SessionSummary]) -> None:
        """Swap sessions read ahead whose files changed or went before the index reached them."""
        self.add_pending(everything=True)
        tree = self.screen.session_tree
        tree.remove_sessions(removed)
        tree.add_sessions(added)
        self._provider_counts = Counter(s.attribution.provider for s in tree.sessions)
        self.update_header()

    def finish(self, top: list[SessionSummary], children: dict[str, list[SessionSummary]]) -> None:
        """Indexing ended: the tree takes its final shape (parents, fleet rows)."""
        self.screen.session_tree.finalize(top, children)
        self.rank_roots()
        self.keep_cursor_on_top()

    def refresh(self, message: IndexRefreshed) -> None:
        """A live poll found sessions that came, changed or went."""
        self.add_pending(everything=True)
        tree = self.screen.session_tree
        if message.removed:
            tree.remove_sessions(message.removed)
        if message.added:
            tree.add_sessions(message.added)
        tree.finalize(message.top, message.children)
        self.rank_roots()
        self.update_header(recount=True)

    def rank_roots(self) -> None:
        """With several roots open, rank them as ``musetui fleet`` does and show one summary row each."""
        roots = self.screen.roots
        if len(roots) < 2:
            return
        from musetui.core import fleet

        tree = self.screen.session_tree
        ranked = fleet.rank(fleet.machines_from_sessions(roots, tree.sessions))
        tree.set_fleet([(m.root, fleet.summary_line(i, m)) for i, m in enumerate(ranked, 1)])

    def update_header(self, recount: bool = False) -> None:
        """Show the sessions per provider in the header (``recount``: count the tree's anew)."""
        tree = self.screen.session_tree
        if recount:
            self._provider_counts = Counter(s.attribution.provider for s in tree.sessions)
        self.screen.query_one(MuseHeader).set_counts(self._provider_counts, len(tree.sessions))
        self._summary_due = True
        if not self._summary_timer:
            # The border's totals: once per batch of batches (one pass over the sessions).
            self._summary_timer = True
            self.screen.set_timer(SUMMARY_S, self.update_summary)

    def update_summary(self) -> None:
        """Show the sessions' totals (sessions, items, dates) under the tree."""
        self._summary_timer = False
        if not self._summary_due:
            return
        self._summary_due = False
        total, _ = tally(self.screen.session_tree.sessions)
        left = self.screen.query_one("#left")
        if str(left.border_subtitle or "") != total.text():
            left.border_subtitle = Text(total.text())

    def tallies(self) -> dict[str, Tally]:
        """Each provider's sessions, items and dates (all sessions, ignoring the filter)."""
        return tally(self.screen.session_tree.sessions)[1]

    def provider_counts(self) -> dict[str, int]:
        """Sessions per attributed provider (all sessions, ignoring the filter)."""
        return dict(self._provider_counts)
