"""``musetui report``, ``fleet`` and ``diff``: the evidence report of trees, machines ranked, two profiles compared."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from musetui.cli.common import (
    Parser,
    UsageError,
    check_output_outside,
    check_paths,
    err,
    resolve,
    write_json,
    write_text,
)


def cmd_report(argv: Sequence[str]) -> int:
    """``musetui report PATH... -o FILE [--format html|md]``: the evidence report of whole trees."""
    p = Parser(prog="musetui report", description="Write the evidence report of whole trees (HTML or Markdown).")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="output file (.html or .md); - is Markdown on stdout"
    )
    p.add_argument("--format", choices=("html", "md"), default=None, help="default: from the output file's extension")
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    from musetui.cli.bundle import add_filter_args, filters_from, report_data

    add_filter_args(p)
    args = p.parse_args(list(argv))
    check_paths(args.paths)
    check_output_outside(args.output, args.paths, "-o")
    filters = filters_from(args, "musetui report")
    from musetui.core import evidence_report as er
    from musetui.core.report_page import render_html

    try:
        fmt = er.format_for(args.output, args.format)
    except ValueError as exc:
        raise UsageError(f"musetui report: {exc}") from exc
    data = report_data(
        args.paths,
        filters,
        argv=["musetui", "report", *argv],
        examiner=args.examiner,
        use_cache=not args.no_cache,
        workers=args.workers,
    )
    text = render_html(data) if fmt == "html" else er.render_markdown(data)
    if args.output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    flagged = len(er.flagged_sessions(data.sessions))
    err(
        f"musetui: wrote {args.output} ({fmt}): {len(data.sessions)} sessions, {flagged} flagged, {len(data.files)} files"
    )
    import hashlib

    err(f"musetui: sha256 of {args.output}: {hashlib.sha256(text.encode('utf-8')).hexdigest()}")
    return 0


def cmd_fleet(argv: Sequence[str]) -> int:
    """``musetui fleet ROOT... [--json] [--explain]``: rank machines by how unusual their attribution is."""
    p = Parser(prog="musetui fleet", description="Rank machines (one ROOT each) by how unusual their attribution is.")
    p.add_argument(
        "roots", nargs="*", metavar="ROOT", help="a transcript tree, saved scan --json output(s), or Parquet"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one object per machine, ranked, most unusual first: "
        "{root, sessions, providers, hosts, flagged, mismatches, score, top_sessions}",
    )
    p.add_argument(
        "--explain", action="store_true", help="print how machines are scored (with ROOTs: each score's parts)"
    )
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    args = p.parse_args(list(argv))
    from musetui.core import fleet
    from musetui.core.parquet import MissingExtra

    if not args.roots:
        if args.explain:
            sys.stdout.write(fleet.EXPLAIN)
            return 0
        raise UsageError("musetui fleet: at least one ROOT is required")
    check_paths(args.roots)
    try:
        machines = fleet.rank(fleet.load_machines(args.roots, use_cache=not args.no_cache, workers=args.workers))
    except (fleet.FleetInputError, MissingExtra) as exc:
        raise UsageError(f"musetui fleet: {exc}") from exc
    if args.json:
        out = sys.stdout.buffer
        for line in fleet.json_lines(machines):
            out.write(line)
        out.flush()
        return 0
    if args.explain:
        sys.stdout.write(fleet.EXPLAIN + "\n")
    sys.stdout.write(fleet.text_report(machines, explain=args.explain))
    return 0


def cmd_diff(argv: Sequence[str]) -> int:
    """``musetui diff A B [--json]``: two sessions or two roots, their fingerprint profiles side by side."""
    p = Parser(
        prog="musetui diff",
        description="Compare the fingerprint profiles of two sessions or two roots: "
        "verdict, segments, id layouts and markers, store bytes, signature headers, tool-id classes, "
        "reasoning kinds, response keys, usage fields, time offsets and declared models; the traits that "
        "differ, those of one side only, and the shared ones, heaviest evidence first.",
        epilog="A and B are each a session file, a directory (a root: every session under it), ROOT:ID "
        "(the session with that id under ROOT) or a bare ID, looked up under --root (default: the roots "
        "the app discovers). An id is a session id, a Muse session directory's name, or the start of "
        "exactly one session id.",
    )
    p.add_argument("a", metavar="A", help="a session (file, ROOT:ID or ID) or a root (directory)")
    p.add_argument("b", metavar="B", help="the same kind of thing as A")
    p.add_argument("--json", action="store_true", help="one JSON object: {a, b, shared, only_a, only_b, differ}")
    p.add_argument("--root", action="append", default=[], metavar="DIR", help="where to look up a bare ID (repeatable)")
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    args = p.parse_args(list(argv))
    check_paths(args.root)
    from musetui.core import diff

    roots = list(args.root)
    if not roots and not all(os.path.lexists(resolve(t)) or ":" in t for t in (args.a, args.b)):
        from musetui.core.config import discovered_roots

        roots = discovered_roots()
    try:
        a, b = diff.load_profiles(args.a, args.b, roots, use_cache=not args.no_cache)
    except diff.TargetError as exc:
        raise UsageError(f"musetui diff: {exc}") from exc
    result = diff.compare(a, b)
    if args.json:
        return write_json(result.record())
    from musetui.core.diff_view import render
    from musetui.core.scan_table import terminal_width

    write_text(render(result, terminal_width(sys.stdout) or 80))
    return 0
