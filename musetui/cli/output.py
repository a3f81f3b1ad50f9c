"""What ``scan`` prints: the records (``--json``), the table, the diagnostics and the counts."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson

from musetui.cli.common import err, write_text


def records(sessions: Sequence[object], names: dict[str, str] | None = None) -> Iterator[bytes]:
    """The JSON Lines of ``scan --json``, one line at a time, ``root`` as given (see :func:`root_names`)."""
    from musetui.core.diagnostics import record_json
    from musetui.core.model import SessionSummary
    from musetui.core.safetext import json_bytes, json_name

    names = names or {}
    for s in sessions:
        assert isinstance(s, SessionSummary)
        given = names.get(s.root_dir)
        rec = s.stored_record if "outlier" not in s.attribution.flags else None
        if rec is not None:  # a light record, unchanged by the fleet
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


def print_table(sessions: Sequence[object], names: dict[str, str] | None = None) -> None:
    """``scan`` without ``--json``: one line per session fitted to the terminal (see :mod:`musetui.core.scan_table`).

    The root is printed once above its sessions; flagged rows carry a marker, and in a
    terminal a colour too (none under ``NO_COLOR``).
    """
    from musetui.core import scan_table as st
    from musetui.core.model import SessionSummary

    summaries = st.table_order([s for s in sessions if isinstance(s, SessionSummary)], names or {})
    widths = st.layout(st.rows_of(summaries, names or {}), st.terminal_width(sys.stdout))
    lines = st.render(st.rows_of(summaries, names or {}), widths)  # (made again, line by line: never all held)
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
        batch: list[str] = []
        for text, _row in lines:
            batch.append(text)
            if len(batch) >= 4096:
                write_text("\n".join(batch) + "\n")
                batch.clear()
        write_text("".join(text + "\n" for text in batch))
    flagged = sum(1 for s in summaries if s.attribution.flags)
    malformed = sum(s.malformed_lines for s in summaries)
    tail = f", {malformed:,} malformed line{'' if malformed == 1 else 's'}" if malformed else ""
    sys.stderr.write(f"{len(summaries)} session{'' if len(summaries) == 1 else 's'}, {flagged} flagged{tail}\n")


def print_diagnostics(diags: Sequence[object], *, list_unread: bool = False) -> None:
    """Diagnostics on stderr, grouped per file (see :func:`musetui.core.diagnostics.stderr_lines`).

    Files looked at and not read are one count line, or one line each with ``list_unread`` (``--stats``).
    """
    from musetui.core.diagnostics import stderr_lines
    from musetui.core.model import Diagnostic

    for line in stderr_lines([d for d in diags if isinstance(d, Diagnostic)], list_unread=list_unread):
        sys.stderr.write(f"musetui: {line}\n")


def write_diagnostics(target: str | None, diags: Sequence[object], names: dict[str, str]) -> None:
    """``--diagnostics FILE``: every diagnostic as one JSON object per line, ``{root, path, line, message}``."""
    if not target:
        return
    from musetui.core.model import Diagnostic
    from musetui.core.safetext import json_bytes, json_name

    roots = list(names.values())
    lines = []
    for d in diags:
        if not isinstance(d, Diagnostic):
            continue
        rec = {
            "root": json_name(roots[0]) if len(roots) == 1 else None,
            "path": json_name(d.path),
            "line": d.line,
            "message": d.message,
        }
        lines.append(json_bytes(orjson.dumps(rec, option=orjson.OPT_APPEND_NEWLINE)))
    try:
        if target == "-":
            sys.stderr.buffer.write(b"".join(lines))
        else:
            Path(target).write_bytes(b"".join(lines))
    except OSError as exc:
        err(f"musetui: cannot write diagnostics to {target}: {exc.strerror or exc}")


def print_stats(index: object, sessions: int, *, cache: bool) -> None:
    from musetui.core.index import Index

    assert isinstance(index, Index)
    from musetui.core.diagnostics import is_unread

    r = index.result
    unread = sum(1 for d in r.diagnostics if is_unread(d))
    err(
        f"musetui: {len(r.files)} files, {sessions} sessions, {unread} not read; cache {'on' if cache else 'off'}: "
        f"{r.cache_hits} unchanged, {r.resumed} resumed ({r.resumed_bytes} bytes read), {r.scanned_files} scanned"
    )
    print_drift(r.diagnostics)


def print_drift(diags: Sequence[object]) -> None:
    """``--stats``: the format-drift count line (see :func:`musetui.core.drift.stats_line`), when there is drift."""
    from musetui.core.drift import stats_line
    from musetui.core.model import Diagnostic

    line = stats_line(d for d in diags if isinstance(d, Diagnostic))
    if line:
        err(f"musetui: {line}")


def no_transcripts(paths: Sequence[str], diags: Sequence[object] = ()) -> None:
    """One line on stderr when a scan found no session at all, naming the files it looked at and why."""
    from musetui.core.model import Diagnostic
    from musetui.core.safetext import strip_controls

    looked = [d for d in diags if isinstance(d, Diagnostic) and d.line == 0]
    where = f"musetui: no transcripts found under {', '.join(paths)}"
    if not looked:
        err(where)
        return
    shown = "; ".join(strip_controls(d.text()) for d in looked[:10])
    more = f"; and {len(looked) - 10} more" if len(looked) > 10 else ""
    err(f"{where}: looked at {len(looked)} file{'s' if len(looked) != 1 else ''}: {shown}{more}")
