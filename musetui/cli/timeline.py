"""``musetui timeline PATH ... [--by hour|day|week] [--json]``: sessions over time, and first-seen events.

The numbers are :mod:`musetui.core.timeline`'s; this module reads the sessions (through the
cache, as ``scan --json`` does) and draws the text chart, which fits 80 columns and does
not depend on colour: each (provider, host) has a letter, named in the legend.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from musetui.cli.common import Parser, check_paths, err, resolve, root_names
from musetui.core.timeline import (
    BYS,
    Bucket,
    By,
    Row,
    Timeline,
    bar_cells,
    bucket_label,
    build,
    glyphs,
    key_label,
    minute_label,
    span_text,
    unit_for,
)

#: The chart's width (narrower when the terminal is).
WIDTH = 80
_HEADS = {"hour": "UTC hour", "day": "UTC day", "week": "week from (UTC)"}


def _label_width(by: By) -> int:
    return max(len(_HEADS[by]), 16 if by == "hour" else 10, len("undated"))


def _legend(t: Timeline, marks: dict[tuple[str, str | None], str], width: int) -> list[str]:
    """``M meta  Z openai/azure …`` wrapped to ``width``, with each key's totals."""
    from musetui.core.safetext import escape_name

    totals: dict[tuple[str, str | None], list[int]] = {}
    for b in t.buckets:
        for k, c in b.counts.items():
            tot = totals.setdefault(k, [0, 0])
            tot[0] += c[0]
            tot[1] += c[1]
    entries = [f"{marks[k]} {escape_name(key_label(k))} ({totals[k][0]}/{totals[k][1]})" for k in t.keys]
    lines: list[str] = []
    cur = "legend (sessions/items):"
    for e in entries:
        if len(cur) + 2 + len(e) > width:
            lines.append(cur)
            cur = "  " + e
        else:
            cur += "  " + e
    lines.append(cur)
    return lines


def _gap(prev: Bucket, cur: Bucket, by: By, label_w: int) -> str | None:
    """``… 3 empty hours`` between two buckets that are not neighbours."""
    from musetui.core.timeline import SECONDS

    if prev.start is None or cur.start is None:
        return None
    missing = round((cur.start - prev.start) / SECONDS[by]) - 1
    if missing <= 0:
        return None
    return f"{'…':<{label_w}}  {missing:,} empty {by}{'' if missing == 1 else 's'}"


def _chart(t: Timeline, marks: dict[tuple[str, str | None], str], width: int) -> list[str]:
    """One line per bucket: its label, a bar of glyphs per (provider, host), sessions and items."""
    label_w = _label_width(t.by)
    sw = max(len("sessions"), len(f"{max((b.sessions for b in t.buckets), default=0):,}"))
    iw = max(len("items"), len(f"{max((b.items for b in t.buckets), default=0):,}"))
    room = max(8, width - label_w - 2 - 2 - sw - 2 - iw)
    unit = unit_for(t, room)
    per = f"one glyph = {unit:,} session{'s' if unit > 1 else ''}, counted where it starts"
    lines = [per, f"{_HEADS[t.by]:<{label_w}}  {'sessions by provider':<{room}}  {'sessions':>{sw}}  {'items':>{iw}}"]
    prev: Bucket | None = None
    for b in t.buckets:
        gap = _gap(prev, b, t.by, label_w) if prev is not None else None
        if gap:
            lines.append(gap)
        bar = "".join(marks[k] * n for k, n in bar_cells([(k, n) for k, n, _ in b.ordered()], unit, room))
        lines.append(f"{bucket_label(b.start, t.by):<{label_w}}  {bar:<{room}}  {b.sessions:>{sw},}  {b.items:>{iw},}")
        prev = b
    return lines


def _events(t: Timeline, marks: dict[tuple[str, str | None], str], width: int, one_root: bool) -> list[str]:
    """One line per first-seen event: minute, glyph, provider/host · declared model, path:line."""
    from rich.cells import cell_len

    from musetui.cli.common import shown_path
    from musetui.core.safetext import escape_name
    from musetui.core.scan_table import cut_end, cut_path

    lines = []
    for e in t.first_seen:
        r = e.row
        who = escape_name(f"{key_label((r.provider, r.host))} · {r.declared_model or 'no declared model'}")
        who = cut_end(who, 34)
        where = escape_name(r.path) if one_root else shown_path(r.root, r.path)
        head = f"{minute_label(r.time):<16}  {marks[(r.provider, r.host)]} {who}"
        place = f"{where}:{r.line}"
        if cell_len(head) + 2 + cell_len(place) <= width:
            lines.append(f"{head}  {place}")
        else:
            lines.append(head)
            lines.append(f"{'':<4}{cut_path(where, width - 4 - len(f':{r.line}'))}:{r.line}")
    return lines


def render(t: Timeline, width: int = WIDTH, roots: Sequence[str] = ()) -> str:
    """The text chart: a summary, the legend, one bar per bucket, then the first-seen events."""
    from musetui.core.safetext import escape_name

    if not t.buckets:
        return "timeline: no sessions\n"
    marks = glyphs(t.keys)
    when = "no recorded times"
    if t.first is not None and t.span is not None:
        first, last = minute_label(t.first), minute_label(t.first + t.span)
        when = f"{first} to {last[11:] if last[:10] == first[:10] else last} UTC"
    how = f"chosen from the span, {span_text(t.span)}; --by to change" if t.chosen else "as asked"
    out = [
        f"timeline: {t.sessions:,} sessions, {t.items:,} items, {when}",
        f"by {t.by} ({how})",
        *_legend(t, marks, width),
        "",
        *_chart(t, marks, width),
        "",
    ]
    one_root = len(roots) == 1
    head = "first seen (provider/host · declared model), first sessions"
    if one_root:
        from musetui.core.scan_table import cut_path

        head += f" under {cut_path(escape_name(roots[0]), max(8, width - len(head) - 8))}"
    out.append(head + ":")
    out.extend(_events(t, marks, width, one_root))
    return "\n".join(out) + "\n"


def load_rows(paths: Sequence[str], *, use_cache: bool = True, workers: int | None = None) -> list[Row]:
    """One row per session under ``paths``, read as ``scan --json`` reads them.

    With the cache, the rows are kept under the digest of the walk
    (:func:`musetui.core.derived.stored_or_built`): when nothing under the roots changed, they are
    the answer and no session is decoded.
    """
    from musetui.core.timeline import rows_blob, rows_from_blob, rows_from_sessions

    names = root_names(paths)
    if not use_cache:
        from musetui.core.index import Index

        index = Index(list(paths), workers=workers, use_cache=False, light=True).scan()
        return rows_from_sessions(index.sessions, names)
    from musetui.core.derived import stored_or_built

    rows, notices = stored_or_built(
        paths, "timeline rows", lambda index: rows_from_sessions(index.sessions, names), rows_blob, rows_from_blob,
        workers=workers,
    )  # fmt: skip
    for notice in notices:
        err(f"musetui: {notice}")
    return rows


def cmd_timeline(argv: Sequence[str]) -> int:
    """``musetui timeline PATH ... [--by hour|day|week] [--json]``."""
    p = Parser(
        prog="musetui timeline",
        description="Sessions and items per attributed provider and host in each "
        "UTC time bucket, as a chart that fits 80 columns, then the first-seen events: the first session "
        "of each provider, host and declared-model combination, with its path, line and time.",
        epilog='--json writes one {"bucket": {start, end, by, sessions, items, providers}} per bucket '
        'holding sessions (oldest first, the undated last), then one {"first_seen": {provider, host, '
        "declared_model, time, bucket, root, path, line}} per event (docs/cli.md: A timeline).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="transcript trees or files")
    p.add_argument(
        "--by",
        choices=BYS,
        default=None,
        help="bucket length (default: hour for a span under 2 days, day under 90 days, else week)",
    )
    p.add_argument("--json", action="store_true", help="JSON Lines: bucket objects, then first_seen objects")
    p.add_argument("--no-cache", action="store_true", help="bypass the persistent cache entirely")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    args = p.parse_args(list(argv))
    paths = list(dict.fromkeys(resolve(x) for x in args.paths))
    check_paths(paths)
    t = build(load_rows(paths, use_cache=not args.no_cache, workers=args.workers), args.by)
    if args.json:
        from musetui.core.timeline import json_lines

        out = sys.stdout.buffer
        for line in json_lines(t):
            out.write(line)
        out.flush()
        return 0
    from musetui.core.scan_table import terminal_width

    width = min(WIDTH, max(60, terminal_width(sys.stdout) or WIDTH))
    sys.stdout.flush()
    sys.stdout.buffer.write(render(t, width, roots=paths).encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()
    return 0
