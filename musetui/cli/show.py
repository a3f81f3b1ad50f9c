"""``musetui show PATH[:LINE] [--line N] [--json]``: the evidence report of a session or one item."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from musetui.cli.common import Parser, UsageError, check_paths, err, resolve, write_json, write_text


def cmd_show(argv: Sequence[str]) -> int:
    """``musetui show PATH[:LINE] [--line N] [--json]``: the evidence report, Markdown or JSON."""
    p = Parser(
        prog="musetui show",
        description="Print the evidence report of a session or one item.",
        epilog="PATH:LINE (as search prints it) is PATH --line LINE. --json: one object, "
        "the session's scan record plus file, format_rule, notes and item (docs/cli.md: show --json).",
    )
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
    check_paths([args.path] + ([args.root] if args.root else []))
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
                err(f"musetui: {d.text()}")
        raise UsageError(f"musetui show: {args.path} holds no transcript records")
    if args.line is None:
        if args.json:
            return write_json(session_json(summary, _given_root(args.path, args.root, summary.path)))
        write_text(session_markdown(summary))
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
            return write_json(report)
        text = item_markdown(summary, item, opened.raw(item), opened.decoded(item))
    except Exception as exc:  # the per-file boundary: one line, no traceback
        from musetui.core.diagnostics import internal_error

        err(f"musetui: {internal_error(summary.path, exc, item.line).text()}")
        return 1
    write_text(text)
    return 0


def _path_and_line(given: str, line: int | None) -> tuple[str, int | None]:
    """``show``'s PATH, and its line: ``FILE:LINE`` (as ``search`` prints it, a colon after it too) is FILE, LINE."""
    path = resolve(given)
    m = re.fullmatch(r"(.+):([0-9]+):?", given)
    if os.path.lexists(path) or m is None:
        return path, line
    file, at = resolve(m.group(1)), int(m.group(2))
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
