"""The session forest, the tree's headless model: links, filters, orders and what is derived from them.

The sessions are indexed from a generated corpus by the real index; no widget is involved.
"""

from __future__ import annotations

import collections

import pytest

from musetui.core.index import Index
from musetui.core.model import SessionSummary
from musetui.core.session_forest import (
    MAX_PREFIX,
    SORTS,
    SessionForest,
    session_ident,
    sort_sessions,
)
from musetui_synth.corpus import generate


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """A generated tree of about 2 MiB (every format, subagents, flagged sessions), indexed."""
    root = tmp_path_factory.mktemp("forest") / "gen"
    generate(root, 2.0, 3)
    return Index([str(root)], workers=1).scan()


def forest_of(index: Index) -> SessionForest:
    forest = SessionForest()
    forest.add(index.sessions)
    forest.adopt(index.top, index.children)
    return forest


def test_added_sessions_link_to_parents_by_id_and_the_links_round_trip(index: Index) -> None:
    forest = SessionForest()
    assert forest.add(index.sessions) == index.sessions
    assert forest.add(index.sessions[:5]) == []  # a session is added once
    linked = [s for s in forest.sessions if forest.parent_of(s) is not None]
    assert linked, "the corpus has subagents"
    for s in linked:
        parent = forest.parent_of(s)
        assert parent is not None and s.parent_session_id in (parent.session_id, parent.muse_dir_id)
        assert s in forest.children_of(parent)
        assert next(forest.ancestors(s)) is parent
    forest.adopt(index.top, index.children)
    assert not forest.adopt(*forest.links())  # its own links are no change
    tops, children = forest.links()
    assert {s.key for s in tops} == {s.key for s in index.top}
    assert {k: [c.key for c in v] for k, v in children.items()} == {
        k: [c.key for c in v] for k, v in index.children.items()
    }
    for siblings in [*children.values(), *(forest.tops(g) for g in forest.group_order())]:
        assert [forest.place(s) for s in siblings] == list(range(len(siblings)))


def _walk(forest: SessionForest) -> list[SessionSummary]:
    """The display order by its definition: groups in order, each parent before its sorted, shown children."""
    out: list[SessionSummary] = []

    def visit(items: list[SessionSummary]) -> None:
        for s in sort_sessions(items, forest.order):
            if forest.is_shown(s):
                out.append(s)
                visit(forest.children_of(s))

    for g in forest.group_order():
        visit(forest.tops(g))
    return out


@pytest.mark.parametrize("order", SORTS)
def test_every_filter_and_order_gives_consistent_orders_and_counts(index: Index, order: str) -> None:
    forest = forest_of(index)
    providers = collections.Counter(s.attribution.provider for s in forest.sessions)
    assert forest.set_order(order) == (order != "path")
    for provider, flagged in [
        (None, False),
        (None, True),
        (providers.most_common()[-1][0], False),
        (providers.most_common(1)[0][0], True),
    ]:
        forest.clear_filters()
        forest.set_filter(provider)
        forest.set_flagged_only(flagged)
        shown = forest.ordered()
        assert shown == _walk(forest), (provider, flagged)
        matches = [s for s in forest.sessions if forest.matches(s)]
        assert {s.key for s in shown} == {k for s in matches for k in [s.key, *(a.key for a in forest.ancestors(s))]}
        assert forest.flagged_sessions() == [s for s in shown if s.attribution.flags]
        stats = [forest.group_stats(g) for g in forest.group_order()]
        assert sum(n for n, _ in stats) == len(shown)
        assert sum(f for _, f in stats) == len(forest.flagged_sessions())
        for s in shown:
            below = [d for d in shown if s in forest.ancestors(d)]
            assert forest.flagged_inside(s) == sum(1 for d in below if d.attribution.flags)


def test_the_prefix_length_tells_siblings_apart_and_follows_new_siblings(index: Index) -> None:
    forest = forest_of(index)
    groups = forest.group_order()
    for under, siblings in [*((g, forest.tops(g)) for g in groups), *forest.children.items()]:
        n = forest.prefix_length(under)
        idents = {session_ident(s) for s in siblings}
        assert n == MAX_PREFIX or len({i[:n] for i in idents}) == len(idents), under
    # A sibling sharing all but the last character of another's id needs a longer prefix.
    group = next(g for g in groups if any(s.session_id and len(s.session_id) > 12 for s in forest.tops(g)))
    twin = next(s for s in forest.tops(group) if s.session_id and len(s.session_id) > 12)
    before = forest.prefix_length(group)
    assert twin.session_id is not None
    clone = SessionSummary(
        path=twin.path + ".copy",
        abspath=twin.abspath + ".copy",
        root=twin.root,
        format=twin.format,
        format_rule=twin.format_rule,
        session_id=twin.session_id[:-1] + ("x" if twin.session_id[-1] != "x" else "y"),
    )
    forest.add([clone])
    assert forest.prefix_length(group) == max(before, min(len(twin.session_id), MAX_PREFIX))
    assert forest.place(clone) == len(forest.tops(group)) - 1


def test_removing_sessions_drops_them_from_every_view(index: Index) -> None:
    forest = forest_of(index)
    parent = next(s for s in forest.sessions if len(forest.children_of(s)) >= 2)
    child = forest.children_of(parent)[0]
    assert forest.remove([child]) and not forest.remove([child])
    assert child not in forest.children_of(parent) and forest.summary(child.key) is None
    assert child not in forest.ordered()
    assert [forest.place(c) for c in forest.children_of(parent)] == list(range(len(forest.children_of(parent))))
    forest.remove([parent])
    assert parent not in forest.ordered() and all(s.key != parent.key for s in forest.sessions)
