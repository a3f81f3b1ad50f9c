"""``musetui scan PATH ... [--json]``: one scan record (or table row) per session."""

from __future__ import annotations

import argparse
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
    root_names,
    shown_path,
    write_text,
)
from musetui.cli.output import (
    no_transcripts,
    print_diagnostics,
    print_drift,
    print_stats,
    print_table,
    records,
    write_diagnostics,
)


def _scan_parser() -> Parser:
    p = Parser(
        prog="musetui scan",
        description="Index transcripts and print one line per session: a table fitted "
        "to the terminal (the root once, flagged rows marked), or with --json one scan record per line.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="transcript trees or files (default: the Muse, Codex and Claude Code directories found here)",
    )
    p.add_argument("--json", action="store_true", help="JSON Lines, one scan record per session, sorted by path")
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    p.add_argument(
        "--explain",
        action="store_true",
        help="without PATH: print how attribution is scored; with PATHs: each session's verdict, why, and the reason of each flag",
    )
    p.add_argument("--workers", type=int, default=None, metavar="N", help="worker processes (default: CPU count)")
    p.add_argument(
        "-q", "--quiet", action="store_true", help="do not print diagnostics (nor the roots found) on stderr"
    )
    p.add_argument("--stats", action="store_true", help="print cache and scan counts on stderr")
    p.add_argument("--follow-symlinks", action="store_true", help="follow symlinks that leave a PATH (never loops)")
    p.add_argument("--diagnostics", metavar="FILE", default=None, help="write every diagnostic to FILE as JSON Lines")
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="scan on this Dask scheduler (tcp://host:8786; needs musetui[fleet])",
    )
    p.add_argument(
        "--dask-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="with --dask: exit 1 when the scheduler does not answer, or has no worker, for S seconds (default 60)",
    )
    p.add_argument(
        "--parquet", metavar="FILE", default=None, help="also write the records as Parquet (needs musetui[fleet])"
    )
    return p


def cmd_scan(argv: Sequence[str]) -> int:
    """``musetui scan PATH... [--json]``."""
    args = _scan_parser().parse_args(list(argv))
    if args.explain and not args.paths:
        from musetui.core.fingerprints.attribution import EXPLAIN

        sys.stdout.write(EXPLAIN)
        return 0
    if args.explain and (args.json or args.dask or args.parquet):
        raise UsageError("musetui scan: --explain prints text: leave out --json, --dask and --parquet")
    args.paths = [resolve(p) for p in args.paths] or _discovered_roots(quiet=args.quiet)
    check_paths(args.paths)
    check_output_outside(args.parquet, args.paths, "--parquet")
    check_output_outside(args.diagnostics, args.paths, "--diagnostics")
    if args.dask or args.parquet:
        return _scan_fleet_options(args)
    if args.json and not args.no_cache and not args.follow_symlinks:
        return _scan_json_cached(args)
    from musetui.core.index import Index

    index = Index(
        list(args.paths),
        workers=args.workers,
        use_cache=not args.no_cache,
        light=not args.explain,  # (the table and the records need no evidence objects; --explain does)
        follow_symlinks=args.follow_symlinks,
    ).scan()
    for notice in index.notices:
        err(f"musetui: {notice}")
    sessions = index.sorted_sessions()
    names = root_names(args.paths)
    if args.json:
        out = sys.stdout.buffer
        for record in records(sessions, names):
            out.write(record)
        out.flush()
    elif args.explain:
        _print_explanations(sessions, names)
    else:
        print_table(sessions, names)
    if not sessions:
        no_transcripts(args.paths, index.diagnostics)
    write_diagnostics(args.diagnostics, index.diagnostics, names)
    if not args.quiet:
        print_diagnostics(index.diagnostics, list_unread=args.stats)
    if args.stats:
        print_stats(index, len(sessions), cache=not args.no_cache)
    return 0


def _discovered_roots(*, quiet: bool) -> list[str]:
    """``scan`` with no PATH: the transcript directories the app opens, named on stderr; none is a usage error.

    The app falls back to the bundled sample; ``scan`` does not, so a script never takes the
    sample's records for local ones.
    """
    from musetui.core.config import candidate_roots, discovered_roots

    found = discovered_roots()
    if not found:
        places = ", ".join(_home_relative(str(p)) for p in candidate_roots())
        raise UsageError(f"musetui scan: no PATH given and no transcripts in {places}; give a PATH")
    if not quiet:
        err(f"musetui: scanning {', '.join(_home_relative(p) for p in found)}")
    return found


def _home_relative(path: str) -> str:
    """``~/.codex/sessions`` for a path under the home directory."""
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home + os.sep) else path


def _print_explanations(sessions: Sequence[object], names: dict[str, str]) -> None:
    """``scan PATH --explain``: per session, its verdict, why, and each flag's reason, in ``show``'s words."""
    from musetui.core.model import SessionSummary
    from musetui.core.reasons import flag_sentences
    from musetui.core.report import verdict_line
    from musetui.core.safetext import strip_controls
    from musetui.core.segment_read import describe_segment, segments_of

    out: list[str] = []
    for s in sessions:
        assert isinstance(s, SessionSummary)
        a = s.attribution
        out.append(shown_path(names.get(s.root_dir, s.root_dir), s.path))
        out.append(f"  verdict: {verdict_line(s)}")
        out.append(f"  why: {a.summary or 'no evidence'}")
        out.extend(f"  {flag}: {text}" for flag, text in flag_sentences(a.flags, a.reasons))
        segs = segments_of(s)
        out.extend(f"  segment: {describe_segment(segs, g)}" for g in segs if len(segs) > 1)
    write_text("".join(strip_controls(line).replace("\n", " ") + "\n" for line in out))


def _scan_fleet_options(args: argparse.Namespace) -> int:
    """``scan --dask ADDRESS`` and/or ``--parquet FILE``: the same records, scanned on Dask or also written as Parquet."""
    from musetui.core.parquet import MissingExtra

    try:
        if args.parquet:
            from musetui.core.parquet import _pa

            _pa()
        if args.dask:
            from musetui.core.distributed import DaskIndex, DaskScanError, require

            require()
    except MissingExtra as exc:
        raise UsageError(f"musetui scan: {exc}") from exc
    from musetui.core.index import Index

    paths = list(args.paths)
    index: Index
    if args.dask:
        if not 0 < args.dask_timeout < float("inf"):
            raise UsageError("musetui scan: --dask-timeout needs a number of seconds above 0")
        index = DaskIndex(
            paths,
            workers=args.workers,
            use_cache=not args.no_cache,
            light=args.json,
            address=args.dask,
            timeout=args.dask_timeout,
        )
        try:
            index.scan()
        except DaskScanError as exc:
            err(f"musetui scan: {exc}")
            return 1
    else:
        index = Index(paths, workers=args.workers, use_cache=not args.no_cache, light=args.json).scan()
    for notice in index.notices:
        err(f"musetui: {notice}")
    sessions = index.sorted_sessions()
    names = root_names(paths)
    output = b"".join(records(sessions, names))
    if args.parquet:
        from musetui.core.parquet import write_jsonl

        write_jsonl(output, args.parquet)
    if args.json:
        sys.stdout.buffer.write(output)
        sys.stdout.buffer.flush()
    else:
        print_table(sessions, names)
    write_diagnostics(args.diagnostics, index.diagnostics, names)
    if not args.quiet:
        print_diagnostics(index.diagnostics, list_unread=args.stats)
    if args.stats:
        print_stats(index, len(sessions), cache=not args.no_cache)
    return 0


def _scan_json_cached(args: argparse.Namespace) -> int:
    """``scan --json`` with the cache: reuse the stored output when nothing under the roots changed.

    The walk always runs (it is how a change is seen); when every file's identity and the
    walk's notes match the digest stored with the last output, that output is the answer
    and no file is opened. Otherwise the index is brought up to date as usual (only
    changed files are read) and its output is stored for next time.
    """
    from musetui.core.cache import IndexCache
    from musetui.core.cache_results import Recorder
    from musetui.core.model import Diagnostic
    from musetui.core.walk import tree_digest, walk_roots

    paths = [str(p) for p in args.paths]
    names = root_names(paths)
    walk_diags: list[Diagnostic] = []
    files = walk_roots(paths, walk_diags)
    digest = tree_digest(paths, files, walk_diags)
    key = "scan --json " + repr([(os.path.abspath(p), p) for p in paths])
    out = sys.stdout.buffer
    notices: list[str] = []
    if files:
        store = IndexCache(files[0].root, roots=paths)
        hit = store.stored_output(key, digest)
        store.close()
        notices.extend(store.notices)
        if hit is not None:
            for notice in notices:
                err(f"musetui: {notice}")
            checked, diags = hit
            checked.replay(out)
            stored = [Diagnostic(p, ln, m) for p, ln, m in diags]
            write_diagnostics(args.diagnostics, stored, names)
            if not args.quiet:
                print_diagnostics(stored, list_unread=args.stats)
            if args.stats:
                n_sessions = checked.lines
                err(
                    f"musetui: {len(files)} files, {n_sessions} sessions; cache on: "
                    f"{len(files)} unchanged, 0 resumed (0 bytes read), 0 scanned (stored output reused)"
                )
                print_drift(stored)
            return 0
    from musetui.core.index import Index

    index = Index(paths, workers=args.workers, use_cache=True, light=True, prewalked=(files, walk_diags))
    index.scan()
    for notice in notices + [n for n in index.notices if n not in notices]:
        err(f"musetui: {notice}")
    sessions = index.sorted_sessions()
    recorder = Recorder(out)  # (written as made, and compressed for the cache on the way: never held whole)
    for record in records(sessions, names):
        recorder.write(record)
    compressed = recorder.blob()
    if not sessions:
        no_transcripts(paths, index.diagnostics)
    if files:
        store = IndexCache(files[0].root, roots=paths)
        store.put_stored_output(key, digest, compressed, [(d.path, d.line, d.message) for d in index.diagnostics])
        store.close()
    write_diagnostics(args.diagnostics, index.diagnostics, names)
    if not args.quiet:
        print_diagnostics(index.diagnostics, list_unread=args.stats)
    if args.stats:
        print_stats(index, len(sessions), cache=True)
    return 0
