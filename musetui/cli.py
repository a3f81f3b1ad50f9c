"""Command line: the TUI by default; ``scan``, ``search``, ``show`` and ``cache`` for scripts.

Exit codes: 0 on success (malformed lines are reported, not fatal); 1 when ``search``
matched nothing; 2 on usage errors or a missing path, with one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import orjson

from musetui.core.errors import SettingsError

SUBCOMMANDS = ("scan", "search", "show", "cache", "report", "fleet", "bundle", "verify", "diff", "timeline")


class UsageError(Exception):
    """A usage problem: reported on one line, exit status 2."""


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped at spaces only: a path or a name is never cut at a hyphen."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False, break_long_words=False)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _check_paths(paths: Sequence[str]) -> None:
    for p in paths:
        if not os.path.lexists(p):
            raise UsageError(f"musetui: no such file or directory: {p}")


def _check_output_outside(output: str | None, roots: Sequence[str], option: str) -> None:
    """Refuse an output file that lies inside a scanned tree: musetui never writes under a tree it reads."""
    if not output or output == "-":
        return
    target = os.path.realpath(os.path.abspath(output))
    for root in roots:
        real = os.path.realpath(root)
        if target == real or (os.path.isdir(real) and target.startswith(real.rstrip(os.sep) + os.sep)):
            raise UsageError(f"musetui: {option} {output} lies inside the scanned tree {root}: write it elsewhere")


def _err(text: str) -> None:
    from musetui.core.safetext import strip_controls

    sys.stderr.write(strip_controls(text) + "\n")


def _scan_parser() -> _Parser:
    p = _Parser(prog="musetui scan", description="Index transcripts and print one line per session: a table fitted "
                "to the terminal (the root once, flagged rows marked), or with --json one scan record per line.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="transcript trees or files (default: the Muse, Codex and Claude Code directories found here)")
    p.add_argument("--json", action="store_true", help="JSON Lines, one scan record per session, sorted by path")
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    p.add_argument(
        "--explain",
        action="store_true",
        help="without PATH: print how attribution is scored; with PATHs: each session's verdict, why, and the reason of each flag",
    )
    p.add_argument("--workers", type=int, default=None, metavar="N", help="worker processes (default: CPU count)")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print diagnostics (nor the roots found) on stderr")
    p.add_argument("--stats", action="store_true", help="print cache and scan counts on stderr")
    p.add_argument("--follow-symlinks", action="store_true", help="follow symlinks that leave a PATH (never loops)")
    p.add_argument("--diagnostics", metavar="FILE", default=None, help="write every diagnostic to FILE as JSON Lines")
    p.add_argument("--dask", metavar="ADDRESS", default=None, help="scan on this Dask scheduler (tcp://host:8786; needs musetui[fleet])")
    p.add_argument(
        "--dask-timeout", type=float, default=60.0, metavar="S",
        help="with --dask: exit 1 when the scheduler does not answer, or has no worker, for S seconds (default 60)",
    )
    p.add_argument("--parquet", metavar="FILE", default=None, help="also write the records as Parquet (needs musetui[fleet])")
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
    args.paths = [_resolve(p) for p in args.paths] or _discovered_roots(quiet=args.quiet)
    _check_paths(args.paths)
    _check_output_outside(args.parquet, args.paths, "--parquet")
    _check_output_outside(args.diagnostics, args.paths, "--diagnostics")
    if args.dask or args.parquet:
        return _scan_fleet_options(args)
    if args.json and not args.no_cache and not args.follow_symlinks:
        return _scan_json_cached(args)
    from musetui.core.index import Index

    index = Index(
        list(args.paths), workers=args.workers, use_cache=not args.no_cache, light=args.json,
        follow_symlinks=args.follow_symlinks,
    ).scan()
    for notice in index.notices:
        _err(f"musetui: {notice}")
    sessions = index.sorted_sessions()
    names = _root_names(args.paths)
    if args.json:
        out = sys.stdout.buffer
        for record in _records(sessions, names):
            out.write(record)
        out.flush()
    elif args.explain:
        _print_explanations(sessions, names)
    else:
        _print_table(sessions, names)
    if not sessions:
        _no_transcripts(args.paths, index.diagnostics)
    _write_diagnostics(args.diagnostics, index.diagnostics, names)
    if not args.quiet:
        _print_diagnostics(index.diagnostics, list_unread=args.stats)
    if args.stats:
        _print_stats(index, len(sessions), cache=not args.no_cache)
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
        _err(f"musetui: scanning {', '.join(_home_relative(p) for p in found)}")
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

    out: list[str] = []
    for s in sessions:
        assert isinstance(s, SessionSummary)
        a = s.attribution
        out.append(shown_path(names.get(s.root_dir, s.root_dir), s.path))
        out.append(f"  verdict: {verdict_line(s)}")
        out.append(f"  why: {a.summary or 'no evidence'}")
        out.extend(f"  {flag}: {text}" for flag, text in flag_sentences(a.flags, a.reasons))
    _write_text("".join(strip_controls(line).replace("\n", " ") + "\n" for line in out))


def _no_transcripts(paths: Sequence[str], diags: Sequence[object] = ()) -> None:
    """One line on stderr when a scan found no session at all, naming the files it looked at and why."""
    from musetui.core.model import Diagnostic
    from musetui.core.safetext import strip_controls

    looked = [d for d in diags if isinstance(d, Diagnostic) and d.line == 0]
    where = f"musetui: no transcripts found under {', '.join(paths)}"
    if not looked:
        _err(where)
        return
    shown = "; ".join(strip_controls(d.text()) for d in looked[:10])
    more = f"; and {len(looked) - 10} more" if len(looked) > 10 else ""
    _err(f"{where}: looked at {len(looked)} file{'s' if len(looked) != 1 else ''}: {shown}{more}")


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
            paths, workers=args.workers, use_cache=not args.no_cache, light=args.json, address=args.dask, timeout=args.dask_timeout
        )
        try:
            index.scan()
        except DaskScanError as exc:
            _err(f"musetui scan: {exc}")
            return 1
    else:
        index = Index(paths, workers=args.workers, use_cache=not args.no_cache, light=args.json).scan()
    for notice in index.notices:
        _err(f"musetui: {notice}")
    sessions = index.sorted_sessions()
    names = _root_names(paths)
    output = b"".join(_records(sessions, names))
    if args.parquet:
        from musetui.core.parquet import write_jsonl

        write_jsonl(output, args.parquet)
    if args.json:
        sys.stdout.buffer.write(output)
        sys.stdout.buffer.flush()
    else:
        _print_table(sessions, names)
    _write_diagnostics(args.diagnostics, index.diagnostics, names)
    if not args.quiet:
        _print_diagnostics(index.diagnostics, list_unread=args.stats)
    if args.stats:
        _print_stats(index, len(sessions), cache=not args.no_cache)
    return 0


def _records(sessions: Sequence[object], names: dict[str, str] | None = None) -> Iterator[bytes]:
    """The JSON Lines of ``scan --json``, one line at a time, ``root`` as given (see :func:`_root_names`)."""
    from musetui.core.diagnostics import json_name, record_json
    from musetui.core.model import SessionSummary
    from musetui.core.safetext import json_bytes

    names = names or {}
    for s in sessions:
        assert isinstance(s, SessionSummary)
        given = names.get(s.root_dir)
        if s.stored_record is not None and "outlier" not in s.attribution.flags:
            rec = s.stored_record  # a cached record, unchanged by the fleet
            if given is not None:
                old = b'{"root":' + json_bytes(orjson.dumps(json_name(s.root_dir)))
                if rec.startswith(old):
                    rec = b'{"root":' + json_bytes(orjson.dumps(json_name(given))) + rec[len(old) :]
            yield rec + b"\n"  # (made by record_json: already escaped)
        else:
            record = s.record()
            if given is not None:
                record["root"] = json_name(given)
            yield record_json(record)


def _root_names(paths: Sequence[str]) -> dict[str, str]:
    """Absolute root directory -> the PATH argument as given (a file's directory, for a file)."""
    out: dict[str, str] = {}
    for p in paths:
        a = os.path.abspath(p)
        if os.path.isdir(a):
            out.setdefault(a, p)
        else:
            out.setdefault(os.path.dirname(a), os.path.dirname(p) or ".")
    return out


def shown_path(root: str, path: str) -> str:
    """``root/path`` for text outputs, escaped (see :func:`musetui.core.diagnostics.escape_name`); ``show`` accepts it."""
    from musetui.core.diagnostics import escape_name

    joined = root + path if not root or root.endswith("/") else f"{root}/{path}"
    return escape_name(joined)


def _print_stats(index: object, sessions: int, *, cache: bool) -> None:
    from musetui.core.index import Index

    assert isinstance(index, Index)
    from musetui.core.diagnostics import is_unread

    unread = sum(1 for d in index.diagnostics if is_unread(d))
    _err(
        f"musetui: {len(index.files)} files, {sessions} sessions, {unread} not read; cache {'on' if cache else 'off'}: "
        f"{index.cache_hits} unchanged, {index.resumed} resumed ({index.resumed_bytes} bytes read), "
        f"{index.scanned_files} scanned"
    )
    _print_drift(index.diagnostics)


def _print_drift(diags: Sequence[object]) -> None:
    """``--stats``: the format-drift count line (see :func:`musetui.core.drift.stats_line`), when there is drift."""
    from musetui.core.drift import stats_line
    from musetui.core.model import Diagnostic

    line = stats_line(d for d in diags if isinstance(d, Diagnostic))
    if line:
        _err(f"musetui: {line}")


def _scan_json_cached(args: argparse.Namespace) -> int:
    """``scan --json`` with the cache: reuse the stored output when nothing under the roots changed.

    The walk always runs (it is how a change is seen); when every file's identity and the
    walk's notes match the digest stored with the last output, that output is the answer
    and no file is opened. Otherwise the index is brought up to date as usual (only
    changed files are read) and its output is stored for next time.
    """
    from musetui.core.cache import IndexCache
    from musetui.core.model import Diagnostic
    from musetui.core.walk import tree_digest, walk_roots

    paths = [str(p) for p in args.paths]
    names = _root_names(paths)
    walk_diags: list[Diagnostic] = []
    files = walk_roots(paths, walk_diags)
    digest = tree_digest(paths, files, walk_diags)
    key = "scan --json " + repr([(os.path.abspath(p), p) for p in paths])
    out = sys.stdout.buffer
    notices: list[str] = []
    if files:
        store = IndexCache(files[0].root, roots=paths)
        hit = store.result(key, digest)
        store.close()
        notices.extend(store.notices)
        if hit is not None:
            for notice in notices:
                _err(f"musetui: {notice}")
            output, diags = hit
            out.write(output)
            out.flush()
            stored = [Diagnostic(p, ln, m) for p, ln, m in diags]
            _write_diagnostics(args.diagnostics, stored, names)
            if not args.quiet:
                _print_diagnostics(stored, list_unread=args.stats)
            if args.stats:
                n_sessions = output.count(b"\n")
                _err(
                    f"musetui: {len(files)} files, {n_sessions} sessions; cache on: "
                    f"{len(files)} unchanged, 0 resumed (0 bytes read), 0 scanned (stored output reused)"
                )
                _print_drift(stored)
            return 0
    from musetui.core.index import Index

    index = Index(paths, workers=args.workers, use_cache=True, light=True, files=files, diagnostics=walk_diags, walked=True)
    index.scan()
    for notice in notices + [n for n in index.notices if n not in notices]:
        _err(f"musetui: {notice}")
    sessions = index.sorted_sessions()
    output = b"".join(_records(sessions, names))
    out.write(output)
    out.flush()
    if not sessions:
        _no_transcripts(paths, index.diagnostics)
    if files:
        store = IndexCache(files[0].root, roots=paths)
        store.put_result(key, digest, output, [(d.path, d.line, d.message) for d in index.diagnostics])
        store.close()
    _write_diagnostics(args.diagnostics, index.diagnostics, names)
    if not args.quiet:
        _print_diagnostics(index.diagnostics, list_unread=args.stats)
    if args.stats:
        _print_stats(index, len(sessions), cache=True)
    return 0


def _print_diagnostics(diags: Sequence[object], *, list_unread: bool = False) -> None:
    """Diagnostics on stderr, grouped per file (see :func:`musetui.core.diagnostics.stderr_lines`).

    Files looked at and not read are one count line, or one line each with ``list_unread`` (``--stats``).
    """
    from musetui.core.diagnostics import stderr_lines
    from musetui.core.model import Diagnostic

    for line in stderr_lines([d for d in diags if isinstance(d, Diagnostic)], list_unread=list_unread):
        sys.stderr.write(f"musetui: {line}\n")


def _write_diagnostics(target: str | None, diags: Sequence[object], names: dict[str, str]) -> None:
    """``--diagnostics FILE``: every diagnostic as one JSON object per line, ``{root, path, line, message}``."""
    if not target:
        return
    from musetui.core.diagnostics import json_name
    from musetui.core.model import Diagnostic
    from musetui.core.safetext import json_bytes

    roots = list(names.values())
    lines = []
    for d in diags:
        if not isinstance(d, Diagnostic):
            continue
        rec = {"root": json_name(roots[0]) if len(roots) == 1 else None, "path": json_name(d.path), "line": d.line, "message": d.message}
        lines.append(json_bytes(orjson.dumps(rec, option=orjson.OPT_APPEND_NEWLINE)))
    try:
        if target == "-":
            sys.stderr.buffer.write(b"".join(lines))
        else:
            Path(target).write_bytes(b"".join(lines))
    except OSError as exc:
        _err(f"musetui: cannot write diagnostics to {target}: {exc.strerror or exc}")


def _resolve(path: str) -> str:
    """A PATH as printed by musetui (escaped, see :func:`musetui.core.diagnostics.escape_name`) or as it is."""
    from musetui.core.diagnostics import resolve_cli_path

    return resolve_cli_path(path)


def _print_table(sessions: Sequence[object], names: dict[str, str] | None = None) -> None:
    """``scan`` without ``--json``: one line per session fitted to the terminal (see :mod:`musetui.core.scan_table`).

    The root is printed once above its sessions; flagged rows carry a marker, and in a
    terminal a colour too (none under ``NO_COLOR``).
    """
    from musetui.core import scan_table as st
    from musetui.core.model import SessionSummary

    summaries = [s for s in sessions if isinstance(s, SessionSummary)]
    rows = st.rows_of(summaries, names or {})
    lines = st.render(rows, st.layout(rows, st.terminal_width(sys.stdout)))
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.text import Text

        console = Console(highlight=False, soft_wrap=True)
        for text, row in lines:
            style = "bold" if row is None and text and not text.startswith("root: ") else ""
            if row is not None and row.flags:
                style = "bold red" if "outlier" in row.flags else "yellow"
            console.print(Text(text, style=style), soft_wrap=True)
    else:
        _write_text("".join(text + "\n" for text, _row in lines))
    flagged = sum(1 for s in summaries if s.attribution.flags)
    malformed = sum(s.malformed_lines for s in summaries)
    tail = f", {malformed:,} malformed line{'' if malformed == 1 else 's'}" if malformed else ""
    sys.stderr.write(f"{len(summaries)} session{'' if len(summaries) == 1 else 's'}, {flagged} flagged{tail}\n")


def cmd_show(argv: Sequence[str]) -> int:
    """``musetui show PATH[:LINE] [--line N] [--json]``: the evidence report, Markdown or JSON."""
    p = _Parser(prog="musetui show", description="Print the evidence report of a session or one item.",
                epilog="PATH:LINE (as search prints it) is PATH --line LINE. --json: one object, "
                "the session's scan record plus file, format_rule, notes and item (README: show --json).")
    p.add_argument("path", metavar="PATH[:LINE]")
    p.add_argument("--line", type=int, default=None, help="report on the item recorded at this line")
    p.add_argument("--json", action="store_true", help="one JSON object instead of Markdown")
    p.add_argument(
        "--root",
        default=None,
        help="directory giving the fleet context for outlier flags, as `scan DIR` flags it (default: the "
        "default root holding the file, else the tree its layout names: Muse sessions/, Codex sessions/, "
        "Claude projects/; else the file alone)",
    )
    args = p.parse_args(list(argv))
    args.path, args.line = _path_and_line(args.path, args.line)
    _check_paths([args.path] + ([args.root] if args.root else []))
    if os.path.isdir(args.path):
        raise UsageError(f"musetui show: {args.path} is a directory; give a session file")
    from musetui.core.report import (
        item_json,
        item_markdown,
        session_json,
        session_markdown,
        show_summary,
    )
    from musetui.core.scanner import Diagnostic
    from musetui.core.session import open_near

    target = os.path.abspath(args.path)
    summary, diagnostics = show_summary(target, args.root)
    if summary is None:
        for d in diagnostics:
            if isinstance(d, Diagnostic) and d.path and target.endswith(d.path):
                _err(f"musetui: {d.text()}")
        raise UsageError(f"musetui show: {args.path} holds no transcript records")
    if args.line is None:
        if args.json:
            return _write_json(session_json(summary, _given_root(args.path, args.root, summary.path)))
        _write_text(session_markdown(summary))
        return 0
    opened = open_near(summary, args.line)
    match = [it for it in opened.items if it.line <= args.line < it.line + max(1, it.lines)]
    if not match:
        match = [it for it in opened.items if it.line == args.line]
    if not match:
        bad = next((m for m in summary.malformed if m.line == args.line), None)
        if bad is not None:
            raise UsageError(f"musetui show: line {args.line} of {args.path} is malformed: {bad.reason}")
        raise UsageError(f"musetui show: no item at line {args.line} of {args.path}")
    item = match[0]
    try:
        if args.json:
            report = session_json(summary, _given_root(args.path, args.root, summary.path))
            report["item"] = item_json(item, opened.raw(item), opened.decoded(item))
            return _write_json(report)
        text = item_markdown(summary, item, opened.raw(item), opened.decoded(item))
    except Exception as exc:  # the per-file boundary: one line, no traceback
        from musetui.core.diagnostics import internal_error

        _err(f"musetui: {internal_error(summary.path, exc, item.line).text()}")
        return 1
    _write_text(text)
    return 0


def _path_and_line(given: str, line: int | None) -> tuple[str, int | None]:
    """``show``'s PATH, and its line: ``FILE:LINE`` (as ``search`` prints it, a colon after it too) is FILE, LINE."""
    path = _resolve(given)
    m = re.fullmatch(r"(.+):([0-9]+):?", given)
    if os.path.lexists(path) or m is None:
        return path, line
    file, at = _resolve(m.group(1)), int(m.group(2))
    if not os.path.lexists(file):
        return path, line
    if line is not None and line != at:
        raise UsageError(f"musetui show: {given} names line {at}, --line {line}: give one")
    return file, at


def _given_root(path: str, root: str | None, rel: str) -> str | None:
    """The ``root`` of ``show --json`` as the user would write it: ``--root``, else PATH without its ``path``."""
    if root is not None:
        return root
    tail = os.sep + rel.replace("/", os.sep)
    return (path[: -len(tail)] or os.sep) if path.endswith(tail) else None


def _write_json(report: dict[str, object]) -> int:
    """One JSON object on stdout (``show --json``)."""
    from musetui.core.diagnostics import record_json

    sys.stdout.flush()
    sys.stdout.buffer.write(record_json(report))
    sys.stdout.buffer.flush()
    return 0


def _write_text(text: str) -> None:
    """Write report text to stdout; a name that is not UTF-8 shows its bytes as ``\\udcNN`` escapes."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()


def cmd_search(argv: Sequence[str]) -> int:
    """``musetui search PATH... QUERY [--json] [--limit N]``.

    Options may stand anywhere; every other argument is positional, so a query such as
    ``-foo`` (a negated term) needs no quoting tricks. ``--`` ends the options.
    """
    p = _Parser(
        prog="musetui search",
        usage="musetui search PATH [PATH ...] QUERY [--json] [--limit N] [--no-cache] [--help-query]",
        description="Search every session. The last argument is the query; the others are paths. "
        "One line per hit: ROOT/PATH:LINE: [field] snippet (musetui show takes ROOT/PATH:LINE).",
        epilog="Query language: musetui search --help-query. Exit status 1 when nothing matched (said on stderr).",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per hit: {root, path, session_id, line, field, snippet}")
    p.add_argument("--limit", type=int, default=0, metavar="N", help="stop after this many hits (0: no limit)")
    p.add_argument("--help-query", action="store_true", help="print the query language and exit")
    p.add_argument("--no-cache", action="store_true", help="index without the persistent cache (attribution filters)")
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
    ns = p.parse_args(options)
    if ns.help_query:
        from musetui.core.search import QUERY_HELP

        sys.stdout.write(QUERY_HELP.rstrip() + "\n")
        return 0
    if len(positional) < 2:
        raise UsageError("musetui search: need at least one PATH and a QUERY")
    paths, query = [_resolve(p) for p in positional[:-1]], positional[-1]
    _check_paths(paths)
    from musetui.core.safetext import escape_name, json_bytes, one_line
    from musetui.core.search import QueryError, run_search

    try:
        hits = run_search(paths, query, limit=ns.limit or None, use_cache=not ns.no_cache)
    except QueryError as exc:
        raise UsageError(f"musetui search: {exc}") from exc
    n = 0
    out = sys.stdout.buffer
    names = _root_names(paths)
    from musetui.core.diagnostics import json_name

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
            out.write(f"{where}:{hit.line}: [{escape_name(hit.field)}] {one_line(hit.snippet)}".encode("utf-8", "backslashreplace") + b"\n")
    out.flush()
    for note in getattr(hits, "notes", []):
        _err(f"musetui: {note}")
    if not n:
        _err(f"musetui search: no hits for {query!r} in {', '.join(paths)}")
    return 0 if n else 1


def cmd_cache(argv: Sequence[str]) -> int:
    """``musetui cache info|clear [PATH ...]``."""
    p = _Parser(prog="musetui cache", description="Inspect or clear the persistent cache.")
    p.add_argument("action", choices=("info", "clear"))
    p.add_argument("paths", nargs="*", metavar="PATH", help="only the databases of these roots")
    ns = p.parse_args(list(argv))
    from musetui.core.cache import cache_files, db_path
    from musetui.core.config import cache_dir

    d = cache_dir()
    files = cache_files()
    if ns.paths:  # a root's database and its -wal/-shm companions
        names = {db_path(str(x)).name for x in ns.paths}
        files = [f for f in files if any(f.name == n or f.name.startswith(n + "-") for n in names)]
    if ns.action == "info":
        size = sum(f.stat().st_size for f in files if f.is_file())
        dbs = [f for f in files if f.suffix == ".sqlite3"]
        from musetui.core.report import human_bytes

        sys.stdout.write(f"cache directory: {d}\ndatabases: {len(dbs)}\nsize: {human_bytes(size)} ({size:,} bytes)\n")
        for f in dbs:
            sys.stdout.write(f"  {f.name}\n")
            for line in _db_info(f):
                sys.stdout.write(f"    {line}\n")
        return 0
    for f in files:
        f.unlink(missing_ok=True)
    sys.stdout.write(f"removed {len(files)} cache files from {d}\n")
    return 0


def _db_info(path: Path) -> list[str]:
    """What one cache database holds, read without writing to it."""
    import sqlite3

    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error as exc:
        return [f"unreadable: {exc}"]
    from musetui.core.cache import SCHEMA_VERSION
    from musetui.core.safetext import escape_name

    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        root = f"root: {escape_name(meta.get('root', '?'))}"
        schema = meta.get("schema", "?")
        if schema != str(SCHEMA_VERSION):
            return [root, f"schema {schema}, this musetui uses {SCHEMA_VERSION}: rebuilt on next use"]
        files, states = conn.execute("SELECT count(*), count(state) FROM files").fetchone()
        outputs = conn.execute("SELECT count(*) FROM results").fetchone()[0]
    except sqlite3.Error as exc:
        return [f"unreadable (rebuilt on next use): {exc}"]
    finally:
        conn.close()
    return [root, f"schema {schema}; {files} files, {states} resumable; {outputs} stored scan output(s)"]


def cmd_report(argv: Sequence[str]) -> int:
    """``musetui report PATH... -o FILE [--format html|md]``: the evidence report of whole trees."""
    p = _Parser(prog="musetui report", description="Write the evidence report of whole trees (HTML or Markdown).")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="output file (.html or .md); - is Markdown on stdout")
    p.add_argument("--format", choices=("html", "md"), default=None, help="default: from the output file's extension")
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    from musetui.cli_bundle import add_filter_args, filters_from, report_data

    add_filter_args(p)
    args = p.parse_args(list(argv))
    _check_paths(args.paths)
    _check_output_outside(args.output, args.paths, "-o")
    filters = filters_from(args, "musetui report")
    from musetui.core import evidence_report as er

    try:
        fmt = er.format_for(args.output, args.format)
    except ValueError as exc:
        raise UsageError(f"musetui report: {exc}") from exc
    data = report_data(
        args.paths, filters, argv=["musetui", "report", *argv], examiner=args.examiner,
        use_cache=not args.no_cache, workers=args.workers,
    )
    text = er.render_html(data) if fmt == "html" else er.render_markdown(data)
    if args.output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    flagged = len(er.flagged_sessions(data.sessions))
    _err(f"musetui: wrote {args.output} ({fmt}): {len(data.sessions)} sessions, {flagged} flagged, {len(data.files)} files")
    import hashlib

    _err(f"musetui: sha256 of {args.output}: {hashlib.sha256(text.encode('utf-8')).hexdigest()}")
    return 0


def cmd_fleet(argv: Sequence[str]) -> int:
    """``musetui fleet ROOT... [--json] [--explain]``: rank machines by how unusual their attribution is."""
    p = _Parser(prog="musetui fleet", description="Rank machines (one ROOT each) by how unusual their attribution is.")
    p.add_argument("roots", nargs="*", metavar="ROOT", help="a transcript tree, saved scan --json output(s), or Parquet")
    p.add_argument("--json", action="store_true", help="one object per machine, ranked, most unusual first: "
                   "{root, sessions, providers, hosts, flagged, mismatches, score, top_sessions}")
    p.add_argument("--explain", action="store_true", help="print how machines are scored (with ROOTs: each score's parts)")
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
    _check_paths(args.roots)
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
    p = _Parser(prog="musetui diff", description="Compare the fingerprint profiles of two sessions or two roots: "
                "verdict, segments, id layouts and markers, store bytes, signature headers, tool-id classes, "
                "reasoning kinds, response keys, usage fields, time offsets and declared models; the traits that "
                "differ, those of one side only, and the shared ones, heaviest evidence first.",
                epilog="A and B are each a session file, a directory (a root: every session under it), ROOT:ID "
                "(the session with that id under ROOT) or a bare ID, looked up under --root (default: the roots "
                "the app discovers). An id is a session id, a Muse session directory's name, or the start of "
                "exactly one session id.")
    p.add_argument("a", metavar="A", help="a session (file, ROOT:ID or ID) or a root (directory)")
    p.add_argument("b", metavar="B", help="the same kind of thing as A")
    p.add_argument("--json", action="store_true", help="one JSON object: {a, b, shared, only_a, only_b, differ}")
    p.add_argument("--root", action="append", default=[], metavar="DIR", help="where to look up a bare ID (repeatable)")
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    args = p.parse_args(list(argv))
    _check_paths(args.root)
    from musetui.core import diff

    roots = list(args.root)
    if not roots and not all(os.path.lexists(_resolve(t)) or ":" in t for t in (args.a, args.b)):
        from musetui.core.config import discovered_roots

        roots = discovered_roots()
    try:
        a, b = diff.load_profiles(args.a, args.b, roots, use_cache=not args.no_cache)
    except diff.TargetError as exc:
        raise UsageError(f"musetui diff: {exc}") from exc
    result = diff.compare(a, b)
    if args.json:
        return _write_json(result.record())
    from musetui.core.diff_view import render
    from musetui.core.scan_table import terminal_width

    _write_text(render(result, terminal_width(sys.stdout) or 80))
    return 0


def cmd_tui(argv: Sequence[str]) -> int:
    """``musetui [PATH ...]``: open the browser."""
    p = _Parser(prog="musetui", description="Forensic browser for AI-agent transcripts.",
                epilog="Subcommands: scan, search, show, cache, report, fleet, bundle, verify, diff, timeline "
                "(musetui <cmd> --help).")
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--version", action="store_true")
    from musetui.core.config import docs_dir

    p.epilog = (f"{p.epilog} Documentation: {docs_dir() / 'fingerprints.md'} explains every fingerprint "
                "(each evidence detail's docs/fingerprints.md#… names its section).")
    ns = p.parse_args(list(argv))
    if ns.version:
        from importlib.metadata import version

        sys.stdout.write(f"musetui {version('musetui')}\n")
        return 0
    _check_paths(ns.paths)
    from musetui.core.config import cache_wanted, default_roots
    from musetui.core.early import HeadStart

    roots = [str(Path(x)) for x in ns.paths] or default_roots()
    use_cache = cache_wanted()
    # Before Textual is imported: the first files are read in a child while the app starts.
    head = HeadStart.start(roots, use_cache=use_cache)
    try:
        from musetui.app import MuseApp

        app = MuseApp(roots, use_cache=use_cache, head=head)
        app.run()
    finally:
        if head is not None:
            head.close()
    return app.return_code or 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``musetui`` console script.

    The last boundary: an unexpected error is one line on stderr (``MUSETUI_DEBUG=1`` shows
    the traceback), never a traceback by default.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(args)
    except Exception as exc:
        if _debug():
            raise
        from musetui.core.diagnostics import internal_error

        _err(f"musetui: {internal_error('', exc).message}")
        return 1


def _debug() -> bool:
    """The ``debug`` setting (off when the settings themselves cannot be read)."""
    from musetui.core.settings import current

    try:
        return current().debug
    except SettingsError:
        return False


def _main(args: list[str]) -> int:
    try:
        if args and args[0] in SUBCOMMANDS:
            cmd = args[0]
            rest = args[1:]
            if cmd == "scan":
                return cmd_scan(rest)
            if cmd == "search":
                return cmd_search(rest)
            if cmd == "show":
                return cmd_show(rest)
            if cmd == "report":
                return cmd_report(rest)
            if cmd == "fleet":
                return cmd_fleet(rest)
            if cmd in ("bundle", "verify"):
                from musetui import cli_bundle

                return cli_bundle.cmd_bundle(rest) if cmd == "bundle" else cli_bundle.cmd_verify(rest)
            if cmd == "diff":
                return cmd_diff(rest)
            if cmd == "timeline":
                from musetui.cli_timeline import cmd_timeline

                return cmd_timeline(rest)
            return cmd_cache(rest)
        return cmd_tui(args)
    except UsageError as exc:
        _err(str(exc).splitlines()[0] if str(exc) else "musetui: usage error")
        return 2
    except SettingsError as exc:
        _err(f"musetui: {exc}")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Downstream closed early (`| head`): silence the flush at exit.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def run() -> NoReturn:
    """Run :func:`main` and exit with its status."""
    sys.exit(main())
