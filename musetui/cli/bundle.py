"""Command line of the hand-over: ``bundle``, ``verify``, and the session filters ``report`` shares.

``musetui bundle PATH ... -o FILE.zip [filters]`` and ``musetui verify FILE.zip``; see
:mod:`musetui.core.bundle` and :mod:`musetui.core.verify`. Exit codes as everywhere: 0 on success,
1 when ``verify`` finds a difference (or ``bundle`` had to leave a file out), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from musetui.cli.common import Parser, UsageError, check_output_outside, check_paths, err, resolve
from musetui.core.selection import FilterError, Filters

if TYPE_CHECKING:
    from musetui.core.evidence_report import ReportData


def add_filter_args(p: argparse.ArgumentParser) -> None:
    """The session filters of ``report`` and ``bundle``, and ``--examiner``."""
    g = p.add_argument_group("session filters (repeat one to allow several values; different filters must all hold)")
    g.add_argument("--flagged", action="store_true", help="only sessions with a flag")
    g.add_argument(
        "--provider", action="append", default=[], metavar="P", help="only sessions attributed to P (openai, meta, …)"
    )
    g.add_argument(
        "--since",
        metavar="T",
        default=None,
        help="only sessions active at or after T (UTC: 2026-09-01, 2026-09-01T22:01Z)",
    )
    g.add_argument(
        "--until",
        metavar="T",
        default=None,
        help="only sessions started by the end of T (--until 2026-09-01 keeps that day)",
    )
    g.add_argument(
        "--session",
        action="append",
        default=[],
        metavar="ID",
        help="only this session: its id, an id prefix (4+ characters) or its file",
    )
    p.add_argument("--examiner", default=None, help="who examines, for the chain of custody (default: the user name)")


def filters_from(args: argparse.Namespace, prog: str) -> Filters:
    """The filters given on the command line.

    Raises:
        UsageError: when a time cannot be read.
    """
    try:
        return Filters.parse(
            flagged=args.flagged, providers=args.provider, since=args.since, until=args.until, sessions=args.session
        )
    except FilterError as exc:
        raise UsageError(f"{prog}: {exc}") from exc


def cmd_bundle(argv: Sequence[str]) -> int:
    """``musetui bundle PATH... -o FILE.zip [filters]``: a sealed evidence bundle."""
    p = Parser(
        prog="musetui bundle",
        description="Write a sealed evidence bundle: raw files, reports, scan records and MANIFEST.json.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument(
        "-o", "--output", required=True, metavar="FILE.zip", help="the bundle to write (outside the scanned trees)"
    )
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    add_filter_args(p)
    args = p.parse_args(list(argv))
    args.paths = list(dict.fromkeys(resolve(x) for x in args.paths))
    check_paths(args.paths)
    if args.output == "-":
        raise UsageError("musetui bundle: -o needs a file name (a zip is not written to stdout)")
    check_output_outside(args.output, args.paths, "-o")
    filters = filters_from(args, "musetui bundle")
    from musetui.core.bundle import BundleError, write_bundle

    try:
        result = write_bundle(
            args.paths,
            args.output,
            filters,
            argv=["musetui", "bundle", *argv],
            examiner=args.examiner,
            use_cache=not args.no_cache,
            workers=args.workers,
        )
    except BundleError as exc:
        err(f"musetui bundle: {exc}")
        return 1
    from musetui.core.diagnostics import escape_name

    for path, why in result.omitted:
        err(f"musetui bundle: left out {escape_name(path)}: {why}")
    sys.stdout.write(f"MANIFEST.json sha256 {result.manifest_sha256}\n")
    sys.stdout.flush()
    err(f"musetui: wrote {result.output}: {result.sessions} sessions, {result.members} members")
    if not result.sessions:
        err("musetui bundle: no session matched: the bundle holds no raw file")
    return 1 if result.omitted else 0


def cmd_verify(argv: Sequence[str]) -> int:
    """``musetui verify FILE.zip``: ``verified`` (exit 0), or every difference (exit 1)."""
    p = Parser(
        prog="musetui verify",
        description="Re-hash and re-scan an evidence bundle; print 'verified' or every difference.",
    )
    p.add_argument("bundle", metavar="FILE.zip")
    p.add_argument("--workers", type=int, default=None, help="worker processes for the re-scan (default: CPU count)")
    p.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        metavar="N",
        help="refuse a bundle whose members declare more than N bytes (default 16 GiB)",
    )
    args = p.parse_args(list(argv))
    check_paths([args.bundle])
    if not os.path.isfile(args.bundle):
        raise UsageError(f"musetui verify: {args.bundle} is not a regular file")
    from musetui.core.safetext import strip_controls
    from musetui.core.verify import Limits, verify

    limits = Limits() if args.max_bytes is None else Limits(max_total=args.max_bytes)
    outcome = verify(args.bundle, limits=limits, workers=args.workers)
    out = sys.stdout
    if outcome.verified:
        out.write("verified\n")
        out.flush()
        err(
            f"musetui: {outcome.members} members re-hashed, {outcome.sessions} sessions re-scanned; MANIFEST.json sha256 {outcome.manifest_sha256}"
        )
        return 0
    for d in outcome.differences:
        out.write(strip_controls(d) + "\n")
    out.write(f"not verified: {len(outcome.differences)} difference{'s' if len(outcome.differences) != 1 else ''}\n")
    out.flush()
    if outcome.manifest_sha256:
        err(f"musetui: MANIFEST.json sha256 {outcome.manifest_sha256}")
    return 1


REPORT_VERIFICATION = (
    "Re-run the command line above on the same files: each input file's sha256 is in appendix B, and "
    "'musetui report' printed this report's own sha256 when it wrote it (compare with sha256sum FILE)."
)


def report_data(
    paths: Sequence[str],
    filters: Filters,
    *,
    argv: Sequence[str],
    examiner: str | None,
    use_cache: bool,
    workers: int | None,
) -> ReportData:
    """The :class:`~musetui.core.evidence_report.ReportData` of ``musetui report``: the filtered sessions, with the custody block."""
    from musetui.core import custody
    from musetui.core import evidence_report as er
    from musetui.core.index import Index

    index = Index(list(paths), workers=workers, use_cache=use_cache).scan()
    sessions = filters.select(index.sorted_sessions())
    kept = {s.abspath for s in sessions}
    files = [f for f in index.files if f.abspath in kept] if filters.active else index.files
    data = er.from_index(list(paths), sessions, files, index.diagnostics)
    given = {r["abspath"]: r["given"] for r in _roots(paths)}
    inputs = [
        custody.InputFile(given.get(f.root, f.root), f.path, f.size, f.mtime_ns, f.sha256, f.note) for f in data.files
    ]
    data.custody = custody.build(
        argv,
        examiner=examiner,
        filters=filters.describe(),
        verification=REPORT_VERIFICATION,
        inputs=inputs,
        now=data.generated_at,
    )
    data.custody.inputs_note = f"{len(inputs):,}, each with its sha256 in appendix B"
    return data


def _roots(paths: Sequence[str]) -> list[dict[str, str]]:
    from musetui.core.bundle import root_labels

    return root_labels(paths)
