"""No import circle in musetui spans more than two modules (function-local and type-checking imports included)."""

from __future__ import annotations

import grimp

#: The largest strongly connected component of the import graph allowed (a pair that needs each other).
MAX_CIRCLE = 2

#: Circles of more than two modules still to be broken, each in files that another change owns
#: (issue 22), with the way out. This list may only shrink: a new circle, or one of these grown
#: by a module, fails; so does an entry whose circle is gone (delete it then).
NOT_YET_BROKEN: dict[frozenset[str], str] = {}


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import circles of more than one module: each module's strongly connected component.

    A module's circle is itself plus every module that is both upstream and downstream of it
    (grimp's own chain queries; function-local and ``TYPE_CHECKING`` imports are in its graph).
    """
    found: list[list[str]] = []
    seen: set[str] = set()
    for module in sorted(graph.modules):
        if module in seen:
            continue
        circle = {module} | (graph.find_upstream_modules(module) & graph.find_downstream_modules(module))
        seen |= circle
        if len(circle) > 1:
            found.append(sorted(circle))
    return found


def test_circles_finds_a_cycle_and_ignores_a_chain() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in (("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")):
        graph.add_import(importer=importer, imported=imported)
    assert circles(graph) == [["a", "b", "c"]]


def test_no_import_circle_spans_more_than_two_modules() -> None:
    graph = grimp.build_graph("musetui", include_external_packages=False, cache_dir=None)
    found = [c for c in circles(graph) if len(c) > MAX_CIRCLE]
    too_big = [c for c in found if frozenset(c) not in NOT_YET_BROKEN]
    assert not too_big, "import circles of more than two modules:\n" + "\n".join(
        f"  {len(c)}: {', '.join(c)}" for c in sorted(too_big, key=len, reverse=True)
    )
    gone = [sorted(k) for k in NOT_YET_BROKEN if sorted(k) not in found]
    assert not gone, f"these circles are broken now: delete them from NOT_YET_BROKEN: {gone}"


def test_no_format_module_reaches_the_registry() -> None:
    """The registry knows every format; a format (or a table it declares) never imports the registry back.

    A format that needs the registry's answers (a capture's response bodies) is handed them
    (:class:`musetui.core.sources.spec.Lookup`): adding a format stays one module and one entry.
    """
    graph = grimp.build_graph("musetui", include_external_packages=False, cache_dir=None)
    registry = "musetui.core.sources.registry"
    sources = sorted(m for m in graph.find_children("musetui.core.sources") if m != registry)
    assert "musetui.core.sources.http_capture" in sources and "musetui.core.sources.zones" in sources
    reach = {m: graph.find_shortest_chain(importer=m, imported=registry) for m in sources}
    assert not {m: c for m, c in reach.items() if c}, "format modules that import the registry"
