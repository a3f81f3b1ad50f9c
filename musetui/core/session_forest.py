"""The session forest: every indexed session, grouped by root and format, then parent → subagents.

The headless model behind the session tree (it imports no Textual): sessions by key, the
parent links, the tops of each (root, format) group, the provider and flagged-only filters,
the sibling order, and what is derived from them (the display order, the flagged sessions
in it, each group's counts, the id prefix that tells siblings apart). Every derived value
is cached, per filter state where it depends on the filters, and dropped when what it was
derived from changes: the mutators below are the only way in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping

from musetui.core.model import SessionSummary
from musetui.core.sources.registry import NAMES

#: Id prefixes are at least this long (longer when siblings share more).
MIN_PREFIX = 6
MAX_PREFIX = 20
#: Tree orders: the walk (path) order, newest first, by provider, biggest first.
SORTS = ("path", "time", "provider", "size")

#: A group's key: the root it was found under and its format.
GroupKey = tuple[str, str]
#: A filter state: the provider filter and the flagged-only switch.
FilterState = tuple[str | None, bool]


def session_sort_key(s: SessionSummary) -> tuple[str, str]:
    """The order of sessions within a group (the walk order)."""
    return (s.root, s.path)


def sort_sessions(sessions: Iterable[SessionSummary], order: str) -> list[SessionSummary]:
    """Siblings in the tree's order: ``path`` (as found), ``time`` (newest first), ``provider``, ``size``."""
    items = list(sessions)
    if order == "time":
        items.sort(key=lambda s: -(s.started_at or 0.0))
    elif order == "provider":
        items.sort(key=lambda s: (s.attribution.provider, s.attribution.host or "", -(s.started_at or 0.0)))
    elif order == "size":
        items.sort(key=lambda s: -s.size)
    return items


def unique_prefix_length(ids: Iterable[str], minimum: int = MIN_PREFIX, maximum: int = MAX_PREFIX) -> int:
    """The shortest prefix length (at least ``minimum``, at most ``maximum``) that tells every id apart.

    Prefixes of a length that tells the ids apart tell them apart at every greater length,
    so the length is found by bisection, each step one set of slices: a group of thousands
    of siblings costs a few milliseconds.
    """
    distinct = set(ids)
    n = len(distinct)
    lo, hi = minimum, maximum
    if n < 2 or lo >= hi or len({i[:lo] for i in distinct}) == n:
        return min(lo, hi)
    while hi - lo > 1:  # prefixes of lo collide; those of hi tell apart (or hi is the cap)
        mid = (lo + hi) // 2
        if len({i[:mid] for i in distinct}) == n:
            hi = mid
        else:
            lo = mid
    return hi


def format_rank(fmt: str) -> int:
    """Groups of one root are shown in the order of the format registry (:data:`musetui.core.sources.registry.NAMES`)."""
    try:
        return NAMES.index(fmt)
    except ValueError:
        return len(NAMES)


def session_ident(s: SessionSummary) -> str:
    """The name a session is told apart by: its id, or its file's name when it has none."""
    return s.session_id or os.path.basename(s.path)


class SessionForest:
    """Sessions grouped by (root, format), linked parent → children, under filters and a sibling order.

    Args:
        root_labels: the roots' display labels, in rank order (the order of their groups).
    """

    def __init__(self, root_labels: Mapping[str, str] | None = None) -> None:
        self._root_labels: dict[str, str] = dict(root_labels or {})
        self._provider_filter: str | None = None
        self._flagged_only = False
        self._order = "path"
        self._sessions: list[SessionSummary] = []
        self._by_key: dict[str, SessionSummary] = {}
        self._ids: dict[tuple[str, str], SessionSummary] = {}
        self._kids: dict[str, list[SessionSummary]] = {}
        self._parent_of: dict[str, str] = {}
        self._top: dict[GroupKey, list[SessionSummary]] = {}
        #: Each session's place among its siblings as found (its index in its top or children list).
        self._place: dict[str, int] = {}
        self._prefix_cache: dict[str | GroupKey, int] = {}
        #: Per filter state, kept until the sessions change, so a filter toggled back finds
        #: them: the keys shown (each match and its ancestors), each group's (shown, flagged)
        #: counts, and each parent's flagged descendants.
        self._shown_keys: dict[FilterState, set[str]] = {}
        self._count_cache: dict[FilterState, dict[GroupKey, tuple[int, int]]] = {}
        self._flagged_cache: dict[FilterState, dict[str, int]] = {}
        self._order_cache: list[SessionSummary] | None = None
        self._flagged_order: list[SessionSummary] | None = None

    # ------------------------------------------------------------------ reading

    @property
    def sessions(self) -> list[SessionSummary]:
        """Every session added so far, in arrival (walk) order."""
        return self._sessions

    @property
    def root_labels(self) -> Mapping[str, str]:
        """The roots' display labels, in rank order (set it to change them)."""
        return self._root_labels

    @root_labels.setter
    def root_labels(self, labels: Mapping[str, str]) -> None:
        self._root_labels = dict(labels)
        self._order_changed()

    def root_label(self, root: str) -> str | None:
        """The display label of ``root``, if it has one."""
        return self._root_labels.get(root)

    @property
    def root_count(self) -> int:
        """How many roots have a label."""
        return len(self._root_labels)

    @property
    def provider_filter(self) -> str | None:
        """The provider shown alone (with the ancestors of its sessions), or None."""
        return self._provider_filter

    @property
    def flagged_only(self) -> bool:
        """True when only flagged sessions (and their ancestors) are shown."""
        return self._flagged_only

    @property
    def order(self) -> str:
        """The sibling order, one of :data:`SORTS`."""
        return self._order

    @property
    def filtered(self) -> bool:
        """True when a provider or flagged-only filter hides sessions."""
        return self._provider_filter is not None or self._flagged_only

    @property
    def children(self) -> Mapping[str, list[SessionSummary]]:
        """The children of each parent session, by the parent's key, in found order (do not change them)."""
        return self._kids

    def summary(self, key: str) -> SessionSummary | None:
        """The session with this key, if added."""
        return self._by_key.get(key)

    def parent_of(self, s: SessionSummary) -> SessionSummary | None:
        """The parent session of ``s``, if any."""
        pk = self._parent_of.get(s.key)
        return self._by_key.get(pk) if pk else None

    def children_of(self, s: SessionSummary) -> list[SessionSummary]:
        """The subagent sessions of ``s``, in found order."""
        return self._kids.get(s.key, [])

    def tops(self, group: GroupKey) -> list[SessionSummary]:
        """The sessions without a parent in ``group``, in found order."""
        return self._top.get(group, [])

    def place(self, s: SessionSummary) -> int:
        """The index of ``s`` among its siblings as found (its top list or its parent's children)."""
        return self._place[s.key]

    def links(self) -> tuple[list[SessionSummary], dict[str, list[SessionSummary]]]:
        """The tops (group by group, each in found order) and the children by parent key, as :meth:`adopt` takes them."""
        return [s for tops in self._top.values() for s in tops], {k: list(v) for k, v in self._kids.items()}

    def ancestors(self, s: SessionSummary) -> Iterator[SessionSummary]:
        """The parent, grandparent … of ``s``."""
        seen: set[str] = set()
        key = self._parent_of.get(s.key)
        while key and key not in seen:
            seen.add(key)
            parent = self._by_key.get(key)
            if parent is None:
                return
            yield parent
            key = self._parent_of.get(key)

    def group_order(self) -> list[GroupKey]:
        """The groups there are, by root rank, then format (see :func:`format_rank`)."""
        roots = list(self._root_labels)
        return sorted(
            self._top,
            key=lambda g: (
                roots.index(g[0]) if g[0] in roots else len(roots),
                format_rank(g[1]),
                g[1],
            ),
        )

    # ------------------------------------------------------------------ filters

    def matches(self, s: SessionSummary) -> bool:
        """True when ``s`` itself passes the filters."""
        if self._flagged_only and not s.attribution.flags:
            return False
        return self._provider_filter is None or s.attribution.provider == self._provider_filter

    def is_shown(self, s: SessionSummary) -> bool:
        """Shown under the filters: it matches, or one of its descendants does."""
        return not self.filtered or s.key in self._shown()

    def shown_keys(self) -> set[str] | None:
        """The keys shown under the filters (each match and its ancestors), or None when nothing is filtered."""
        return self._shown() if self.filtered else None

    def _state(self) -> FilterState:
        return (self._provider_filter, self._flagged_only)

    def _shown(self) -> set[str]:
        """The keys shown under the filters (one pass, cached until a change)."""
        state = self._state()
        shown = self._shown_keys.get(state)
        if shown is None:
            shown = set()
            parent_of = self._parent_of
            for s in self._sessions:
                if self.matches(s):
                    key: str | None = s.key
                    while key is not None and key not in shown:
                        shown.add(key)
                        key = parent_of.get(key)
            self._shown_keys[state] = shown
        return shown

    def set_filter(self, provider: str | None) -> bool:
        """Show only sessions attributed to ``provider`` (None: all); returns True when that changed."""
        if provider == self._provider_filter:
            return False
        self._provider_filter = provider
        self._order_changed()
        return True

    def set_flagged_only(self, on: bool) -> bool:
        """Show only flagged sessions, or all; returns True when that changed."""
        if on == self._flagged_only:
            return False
        self._flagged_only = on
        self._order_changed()
        return True

    def clear_filters(self) -> bool:
        """Drop both filters; returns True when one was set."""
        if not self.filtered:
            return False
        self._provider_filter = None
        self._flagged_only = False
        self._order_changed()
        return True

    def set_order(self, order: str) -> bool:
        """Order siblings by one of :data:`SORTS`; returns True when the order changed."""
        if order not in SORTS or order == self._order:
            return False
        self._order = order
        self._order_changed()
        return True

    # ------------------------------------------------------------------ derived

    def ordered(self) -> list[SessionSummary]:
        """Every shown session in display order (groups, parents, then their subagents)."""
        if self._order_cache is None:
            out: list[SessionSummary] = []
            kids = self._kids
            order = self._order

            def walk(items: list[SessionSummary]) -> None:
                for s in sort_sessions(items, order) if len(items) > 1 else items:
                    if not self.is_shown(s):
                        continue
                    out.append(s)
                    below = kids.get(s.key)
                    if below:
                        walk(below)

            for gkey in self.group_order():
                walk(self._top.get(gkey, []))
            self._order_cache = out
        return self._order_cache

    def flagged_sessions(self) -> list[SessionSummary]:
        """The flagged sessions of :meth:`ordered`, in that order, without walking every session.

        Only the subtrees holding a flagged session are visited: their tops and the subagents
        below are put in order by :func:`sort_sessions` from their found order (a stable sort
        of a subset keeps the subset's order in the whole). So ``o`` costs the flagged
        sessions, not the tree. Cached until the sessions, filters or order change.
        """
        if self._flagged_order is None:
            marked: set[str] = set()
            tops: dict[GroupKey, list[SessionSummary]] = {}
            parent_of = self._parent_of
            for s in self._sessions:
                if not s.attribution.flags:
                    continue
                key = s.key
                while key not in marked:
                    marked.add(key)
                    up = parent_of.get(key)
                    if up is None:  # a top: it joins its group's list
                        top = self._by_key[key]
                        tops.setdefault((top.root, top.format), []).append(top)
                        break
                    key = up
            out: list[SessionSummary] = []
            kids = self._kids
            place = self._place
            order = self._order
            stack: list[Iterator[SessionSummary]] = []
            for gkey in reversed(self.group_order()):
                found = tops.get(gkey)
                if found:
                    found.sort(key=lambda s: place[s.key])
                    stack.append(iter(sort_sessions(found, order)))
            while stack:
                for s in stack[-1]:
                    if not self.is_shown(s):
                        continue
                    if s.attribution.flags:
                        out.append(s)
                    below = [c for c in kids.get(s.key, ()) if c.key in marked]
                    if below:
                        stack.append(iter(sort_sessions(below, order)))
                        break
                else:
                    stack.pop()
            self._flagged_order = out
        return self._flagged_order

    def group_stats(self, group: GroupKey) -> tuple[int, int]:
        """Sessions shown under ``group`` (tops and their descendants) and how many are flagged.

        One pass over the group, cached per filter state until the sessions change.
        """
        cache = self._count_cache.setdefault(self._state(), {})
        stats = cache.get(group)
        if stats is None:
            kids = self._kids
            shown = self.shown_keys()
            count = flagged = 0
            stack = list(self._top.get(group, []))
            while stack:
                s = stack.pop()
                key = s.key
                if shown is not None and key not in shown:
                    continue
                count += 1
                if s.attribution.flags:
                    flagged += 1
                below = kids.get(key)
                if below:
                    stack.extend(below)
            stats = cache[group] = (count, flagged)
        return stats

    def flagged_inside(self, s: SessionSummary) -> int:
        """How many shown descendants of ``s`` are flagged (cached per filter state)."""
        cache = self._flagged_cache.setdefault(self._state(), {})
        n = cache.get(s.key)
        if n is None:
            n = cache[s.key] = sum(1 for d in self._descendants(s) if d.attribution.flags)
        return n

    def _descendants(self, s: SessionSummary) -> Iterator[SessionSummary]:
        for c in self._kids.get(s.key, []):
            if self.is_shown(c):
                yield c
                yield from self._descendants(c)

    def prefix_length(self, under: str | GroupKey) -> int:
        """The id prefix length that tells apart the children of the session keyed ``under``, or the tops of group ``under``.

        See :func:`unique_prefix_length`; cached until those siblings change.
        """
        n = self._prefix_cache.get(under)
        if n is None:
            siblings = self._top.get(under, []) if isinstance(under, tuple) else self._kids.get(under, [])
            n = self._prefix_cache[under] = unique_prefix_length(session_ident(s) for s in siblings)
        return n

    # ------------------------------------------------------------------ changing

    def add(self, batch: Iterable[SessionSummary]) -> list[SessionSummary]:
        """Add newly indexed sessions, each linked to a parent already added; returns those that were new.

        A session names its parent by session id (or a Muse session's directory name) under
        the same root. Only the sibling sets the batch joined lose their prefix lengths.
        """
        added: list[SessionSummary] = []
        for s in batch:
            key = s.key
            if key in self._by_key:
                continue
            added.append(s)
            self._sessions.append(s)
            self._by_key[key] = s
            if s.session_id:
                self._ids.setdefault((s.root, s.session_id), s)
            alias = s.muse_dir_id
            if alias:
                self._ids.setdefault((s.root, alias), s)
            parent = self._ids.get((s.root, s.parent_session_id)) if s.parent_session_id else None
            if parent is not None and parent is not s:
                siblings = self._kids.setdefault(parent.key, [])
                self._parent_of[key] = parent.key
                self._prefix_cache.pop(parent.key, None)
            else:
                gkey = (s.root, s.format)
                siblings = self._top.setdefault(gkey, [])
                self._prefix_cache.pop(gkey, None)
            self._place[key] = len(siblings)
            siblings.append(s)
        if added:
            self._data_changed()
        return added

    def remove(self, batch: Iterable[SessionSummary]) -> bool:
        """Forget sessions (their files are gone); returns True when one was there."""
        gone = {s.key for s in batch if s.key in self._by_key}
        if not gone:
            return False
        self._sessions = [s for s in self._sessions if s.key not in gone]
        for key in gone:
            del self._by_key[key]
        self._ids = {k: v for k, v in self._ids.items() if v.key not in gone}
        self._kids = {p: [c for c in cs if c.key not in gone] for p, cs in self._kids.items() if p not in gone}
        self._parent_of = {c: p for c, p in self._parent_of.items() if c not in gone and p not in gone}
        self._top = {g: kept for g, tops in self._top.items() if (kept := [s for s in tops if s.key not in gone])}
        self._relinked()
        return True

    def adopt(self, top: list[SessionSummary], children: dict[str, list[SessionSummary]]) -> bool:
        """Take the index's final parent links; returns True when they differ from ours.

        Every derived value is dropped either way: the verdicts and flags on the summaries
        may have been set in place.
        """
        parent_of = {c.key: p for p, cs in children.items() for c in cs}
        changed = parent_of != self._parent_of or {s.key for s in top} != {
            s.key for lst in self._top.values() for s in lst
        }
        if changed:
            self._kids = {k: list(v) for k, v in children.items()}
            self._parent_of = parent_of
            self._top = {}
            for s in top:
                self._top.setdefault((s.root, s.format), []).append(s)
            self._relinked()
        else:
            self._data_changed()
            self._prefix_cache.clear()
        return changed

    def flags_changed(self) -> None:
        """The summaries' verdicts or flags were set in place: drop what was derived from them."""
        self._data_changed()

    def _relinked(self) -> None:
        """The sibling lists were made anew: every place and derived value is stale."""
        place = self._place
        place.clear()
        for siblings in (*self._top.values(), *self._kids.values()):
            for i, s in enumerate(siblings):
                place[s.key] = i
        self._prefix_cache.clear()
        self._data_changed()

    def _data_changed(self) -> None:
        """The sessions, their links or their flags changed: every derived cache is stale."""
        self._order_changed()
        self._count_cache.clear()
        self._shown_keys.clear()
        self._flagged_cache.clear()

    def _order_changed(self) -> None:
        """The display order or the filters changed: the display orders are stale."""
        self._order_cache = None
        self._flagged_order = None
