"""The search's entry points: search the sessions a caller indexed, or every session under some paths.

Both parse the query first (a bad query fails before any file is read), choose the files the
session-level filters let through, and hand them to the executor (:mod:`musetui.core.search.executor`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING

from musetui.core.search.evaluate import session_passes
from musetui.core.search.executor import SearchPool, SessionItem, Unit, _execute
from musetui.core.search.files import Info, root_units, tasks_of, walk
from musetui.core.search.query import FieldFilter, Query, parse_query
from musetui.core.search.results import Hit, SearchRun

if TYPE_CHECKING:
    from musetui.core.model import SessionSummary

__all__ = ["run_search", "search_sessions"]


def _session_units(sessions: Sequence[SessionSummary]) -> list[SessionItem]:
    """The sessions' files, sorted by (path, root) as :func:`~musetui.core.search.files.tasks_of` sorts them.

    Sorted on (path, root, position) tuples, compared in C (no key call per session; the
    position keeps equal keys in their order and never compares two summaries).
    """
    order = [(s.path, s.root, i) for i, s in enumerate(sessions)]
    order.sort()
    units: list[SessionItem] = []
    add = units.append
    for _path, _root, i in order:
        s = sessions[i]
        add((s.abspath, s.path, s.read_bytes or None, s))
    return units


def _as_query(query: Query | str) -> Query:
    return query if isinstance(query, Query) else parse_query(query)


def search_sessions(
    sessions: Sequence[SessionSummary],
    query: Query | str,
    limit: int | None = None,
    cancelled: Callable[[], bool] | None = None,
    workers: int | None = None,
    pool: SearchPool | None = None,
) -> SearchRun:
    """Search sessions the caller has already indexed (the TUI), sorted by path then line.

    Session-level filters are decided from the summaries, so a session that fails them is
    never read; nothing is rescanned.

    Args:
        sessions: the summaries to search.
        query: a query string or a parsed :class:`Query`.
        limit: stop after this many hits (None or 0: no limit).
        cancelled: polled between files (or batches of files); True stops the search.
        workers: worker processes for big corpora (default: the idle cores, see
            :func:`usable_workers`; 1: in-process).
        pool: worker processes kept between searches (see :class:`SearchPool`); its size
            then decides the parallelism.

    Returns:
        A :class:`SearchRun`: iterate it for :class:`Hit` objects.

    Raises:
        QueryError: the query is not valid (raised here, before any file is read).
    """
    q = _as_query(query)
    groups = q.session_groups()

    def body(run: SearchRun) -> Generator[Hit, None, None]:
        keep = _session_units(sessions)
        if groups:
            keep = [u for u in keep if session_passes(q, Info.of(u[3]), u[1], groups)]
        nworkers = pool.workers if pool is not None else workers
        yield from _execute(list[Unit](keep), q, run, limit, cancelled, nworkers, pool)

    return SearchRun(q, body)


def run_search(
    paths: Sequence[str],
    query: Query | str,
    limit: int | None = None,
    cancelled: Callable[[], bool] | None = None,
    workers: int | None = None,
    use_cache: bool = False,
) -> SearchRun:
    """Search every session under ``paths``; hits sorted by path, then line.

    Without an attribution filter nothing is attributed: files are walked and searched
    directly (see :mod:`musetui.core.search.executor`). With ``provider:``, ``host:`` or ``flag:`` the roots
    are indexed first and only the sessions that pass are read.

    Args:
        paths: roots (directories or files), as given to ``musetui search``.
        query: a query string or a parsed :class:`Query`.
        limit: stop after this many hits (None or 0: no limit).
        cancelled: polled between files (or batches of files); True stops the search.
        workers: worker processes for big corpora (default: the idle cores, see
            :func:`usable_workers`; 1: in-process).
        use_cache: index through the persistent cache (as ``musetui scan`` does) when an
            attribution filter needs the roots indexed: unchanged files are not read.

    Returns:
        A :class:`SearchRun`: iterate it for :class:`Hit` objects.

    Raises:
        QueryError: the query is not valid (raised here, before any file is read).
    """
    q = _as_query(query)
    roots = [str(p) for p in paths]

    def body(run: SearchRun) -> Generator[Hit, None, None]:
        if q.needs_attribution:
            from musetui.core.index import Index

            index = Index(roots, workers=workers, use_cache=use_cache, light=True).scan(cancelled)
            if cancelled is not None and cancelled():
                return
            keep = [s for s in index.sessions if session_passes(q, Info.of(s), s.path, q.session_only)]
            yield from _execute(list[Unit](tasks_of(keep)), q, run, limit, cancelled, workers)
            return
        paths_only = [
            g for g in q.session_only if all(isinstance(t.atom, FieldFilter) and t.atom.name == "path" for t in g)
        ]
        if len(roots) == 1 and not paths_only:
            yield from _execute(list[Unit](root_units(roots[0], run._stats.notes)), q, run, limit, cancelled, workers)
            return
        tasks = walk(roots, run._stats.notes)
        if paths_only:
            tasks = (t for t in tasks if session_passes(q, None, t.path, paths_only))
        yield from _execute(tasks, q, run, limit, cancelled, workers)

    return SearchRun(q, body)
