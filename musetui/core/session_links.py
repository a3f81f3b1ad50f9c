"""The session tree: each session under its parent (by session id, or a Muse directory name), orphans and cycles noted."""

from __future__ import annotations

from musetui.core.model import SessionSummary

__all__ = ["link_sessions"]


def link_sessions(sessions: list[SessionSummary]) -> tuple[dict[str, list[SessionSummary]], list[SessionSummary]]:
    """The children of each session (by key) and the sessions at the top, in (root, path) order.

    A session whose parent is not among ``sessions`` gets an ``orphan`` note; every member of
    a parent cycle gets a ``parent cycle`` note, and the cycle is cut (see :func:`_break_cycles`).
    """
    children: dict[str, list[SessionSummary]] = {}
    top: list[SessionSummary] = []
    # Only the ids some session names as its parent are looked up (a tree of 100,000 sessions has few parents).
    wanted = {(s.root, s.parent_session_id) for s in sessions if s.parent_session_id}
    ids: dict[tuple[str, str], SessionSummary] = {}
    if wanted:
        for s in sessions:
            if s.session_id and (s.root, s.session_id) in wanted:
                ids.setdefault((s.root, s.session_id), s)
            alias = s.muse_dir_id
            if alias and (s.root, alias) in wanted:
                ids.setdefault((s.root, alias), s)
    order = sorted(sessions, key=lambda x: (x.root, x.path))
    parent_of: dict[str, SessionSummary | None] = {}  # (sessions with a parent found only)
    for s in order:
        if s.parent_session_id:
            found = ids.get((s.root, s.parent_session_id))
            if found is not None:
                parent_of[s.key] = found
    _break_cycles(order, parent_of)
    for s in order:
        parent = parent_of.get(s.key)
        if parent is not None:
            children.setdefault(parent.key, []).append(s)
        else:
            cycle = any(n.startswith("parent cycle") for n in s.notes)
            if s.parent_session_id and not cycle and not any(n.startswith("orphan") for n in s.notes):
                s.notes.append(f"orphan: parent session {s.parent_session_id} is not under the scanned roots")
            top.append(s)
    return children, top


def _break_cycles(order: list[SessionSummary], parent_of: dict[str, SessionSummary | None]) -> None:
    """Cut every parent cycle at its first member in path order, so each session is reachable.

    Every member of a cycle gets a ``parent cycle`` note; the one cut is shown at the top.
    """
    for s in order:
        seen: set[str] = set()
        cur = parent_of.get(s.key)
        while cur is not None and cur is not s and cur.key not in seen:
            seen.add(cur.key)
            cur = parent_of.get(cur.key)
        if cur is not s:
            continue
        members = [s]
        nxt = parent_of.get(s.key)
        while nxt is not None and nxt is not s:
            members.append(nxt)
            nxt = parent_of.get(nxt.key)
        cut = min(members, key=lambda x: (x.root, x.path))
        parent_of[cut.key] = None
        chain = " -> ".join(str(m.session_id) for m in [*members, s])
        for m in members:
            note = (
                f"parent cycle: the session names itself as its parent ({m.session_id}); shown at the top"
                if len(members) == 1
                else f"parent cycle: {chain}; {cut.session_id} is shown at the top"
            )
            m.notes = [n for n in m.notes if not n.startswith(("parent cycle", "orphan"))] + [note]
