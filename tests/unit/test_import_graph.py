"""No import circle in musetui spans more than two modules (function-local and type-checking imports included)."""

from __future__ import annotations

import grimp

#: The largest strongly connected component of the import graph allowed (a pair that needs each other).
MAX_CIRCLE = 2

#: Circles of more than two modules still to be broken, each in files that another change owns
#: (issue 22), with the way out. This list may only shrink: a new circle, or one of these grown
#: by a module, fails; so does an entry whose circle is gone (delete it then).
NOT_YET_BROKEN: dict[frozenset[str], str] = {
    frozenset({
        "musetui.core.fingerprints.attribution", "musetui.core.sources", "musetui.core.sources.api",
        "musetui.core.sources.bedrock", "musetui.core.sources.claude_code", "musetui.core.sources.codex",
        "musetui.core.sources.generic", "musetui.core.sources.http_capture", "musetui.core.sources.httprr",
        "musetui.core.sources.layouts", "musetui.core.sources.muse", "musetui.core.sources.registry",
        "musetui.core.sources.spec", "musetui.core.sources.zones",
    }): "the format registry imports every format, and http_capture (sniff_first, sources.build_items) "
    "and zones.for_format (filling BY_FORMAT) import the registry back: hand them the registry's "
    "lookups instead of importing it",
    frozenset({"musetui.core.model", "musetui.core.reasons", "musetui.core.diagnostics"}): (
        "model.SessionSummary.record imports diagnostics.json_name, and diagnostics imports model.Diagnostic: "
        "json_name belongs in safetext (a leaf), beside escape_name"
    ),
    frozenset({"musetui.core.custody", "musetui.core.evidence_report", "musetui.core.report_html"}): (
        "custody imports evidence_report.catalogue_digest and report_html imports its esc and colour, while "
        "evidence_report imports both: those three belong in the modules that use them, or a leaf"
    ),
}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_circles_finds_a_cycle_and_ignores_a_chain() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": set(), "f": {"f"}}
    assert circles(edges) == [["a", "b", "c"]]


def test_no_import_circle_spans_more_than_two_modules() -> None:
    graph = grimp.build_graph("musetui", include_external_packages=False, cache_dir=None)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    found = [c for c in circles(edges) if len(c) > MAX_CIRCLE]
    too_big = [c for c in found if frozenset(c) not in NOT_YET_BROKEN]
    assert not too_big, "import circles of more than two modules:\n" + "\n".join(
        f"  {len(c)}: {', '.join(c)}" for c in sorted(too_big, key=len, reverse=True)
    )
    gone = [sorted(k) for k in NOT_YET_BROKEN if sorted(k) not in found]
    assert not gone, f"these circles are broken now: delete them from NOT_YET_BROKEN: {gone}"
