"""``musetui search PATH ... QUERY [--json] [--limit N]``: one line (or object) per hit."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import orjson

from musetui.cli.common import Parser, UsageError, check_paths, err, resolve, root_names, shown_path


def cmd_search(argv: Sequence[str]) -> int:
    """``musetui search PATH... QUERY [--json] [--limit N]``.

    Options may stand anywhere; every other argument is positional, so a query such as
    ``-foo`` (a negated term) needs no quoting tricks. ``--`` ends the options.
    """
    p = Parser(
        prog="musetui search",
        usage="musetui search PATH [PATH ...] QUERY [--json] [--limit N] [--no-cache] [--help-query]",
        description="Search every session. The last argument is the query; the others are paths. "
        "One line per hit: ROOT/PATH:LINE: [field] snippet (musetui show takes ROOT/PATH:LINE).",
        epilog="Query language: musetui search --help-query. Exit status 1 when nothing matched (said on stderr).",
    )
    p.add_argument(
        "--json", action="store_true", help="one JSON object per hit: {root, path, session_id, line, field, snippet}"
    )
    p.add_argument("--limit", type=int, default=0, metavar="N", help="stop after this many hits (0: no limit)")
    p.add_argument("--help-query", action="store_true", help="print the query language and exit")
    p.add_argument("--no-cache", action="store_true", help="index without the persistent cache (attribution filters)")
    options, positional = _split_options(argv)
    ns = p.parse_args(options)
    if ns.help_query:
        from musetui.core.search import QUERY_HELP

        sys.stdout.write(QUERY_HELP.rstrip() + "\n")
        return 0
    if len(positional) < 2:
        raise UsageError("musetui search: need at least one PATH and a QUERY")
    paths, query = [resolve(p) for p in positional[:-1]], positional[-1]
    check_paths(paths)
    from musetui.core.safetext import escape_name, json_bytes, one_line
    from musetui.core.search import QueryError, run_search

    try:
        hits = run_search(paths, query, limit=ns.limit or None, use_cache=not ns.no_cache)
    except QueryError as exc:
        raise UsageError(f"musetui search: {exc}") from exc
    n = 0
    out = sys.stdout.buffer
    names = root_names(paths)
    from musetui.core.safetext import json_name

    for hit in hits:
        n += 1
        rec = hit.record()
        given = names.get(os.path.dirname(hit.root) if hit.root == hit.abspath else hit.root)
        if given is not None:
            rec["root"] = json_name(given)
        if ns.json:
            out.write(json_bytes(orjson.dumps(rec) + b"\n"))
        else:
            where = shown_path(given if given is not None else rec["root"], hit.path)
            out.write(
                f"{where}:{hit.line}: [{escape_name(hit.field)}] {one_line(hit.snippet)}".encode(
                    "utf-8", "backslashreplace"
                )
                + b"\n"
            )
    out.flush()
    for note in getattr(hits, "notes", []):
        err(f"musetui: {note}")
    if not n:
        err(f"musetui search: no hits for {query!r} in {', '.join(paths)}")
    return 0 if n else 1


def _split_options(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``search``'s options (wherever they stand) and its positional arguments; ``--`` ends the options."""
    options: list[str] = []
    positional: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            positional.extend(args[i + 1 :])
            break
        if a in ("--json", "--help-query", "--no-cache", "-h", "--help"):
            options.append(a)
        elif a == "--limit" and i + 1 < len(args):
            options.extend(args[i : i + 2])
            i += 1
        elif a.startswith("--limit="):
            options.append(a)
        else:
            positional.append(a)
        i += 1
    return options, positional
