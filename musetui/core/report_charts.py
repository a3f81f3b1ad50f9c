"""The evidence report's two charts, as inline SVG: the provider mix and the sessions over time.

Every label is escaped (:func:`musetui.core.report_html.esc`); the page loads nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from musetui.core.model import SessionSummary, iso
from musetui.core.report_html import colour, esc


def mix_chart(rows: Sequence[tuple[str, int]], total: int) -> str:
    """Horizontal bars: sessions per attributed provider, each labelled with its name and count.

    ``rows``: ``(provider, sessions)``, most frequent first; ``total``: every session.
    """
    if not rows:
        return ""
    top = max(n for _, n in rows)
    bar_h, gap, label_w, width = 18, 6, 110, 420
    height = len(rows) * (bar_h + gap) + gap
    parts = [
        f'<svg role="img" aria-label="provider mix" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
    ]
    for i, (p, n) in enumerate(rows):
        y = gap + i * (bar_h + gap)
        w = max(2.0, (width - label_w - 70) * n / top)
        parts.append(f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{esc(p)}</text>')
        parts.append(
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{colour(p)}"><title>{esc(p)}: {n}</title></rect>'
        )
        pct = 100.0 * n / total
        parts.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 13}">{n} ({pct:.0f}%)</text>')
    parts.append("</svg>")
    return "".join(parts)


def timeline_chart(sessions: Sequence[SessionSummary]) -> str:
    """Stacked bars: sessions started per UTC hour, day or week (as ``musetui timeline`` buckets them), by provider."""
    from musetui.core.timeline import SECONDS, build, rows_from_sessions

    t = build(rows_from_sessions(sessions))
    dated = t.dated()
    if not dated:
        return '<p class="muted">No session records a start time.</p>'
    step = SECONDS[t.by]
    base = dated[0].start or 0.0
    n_buckets = round(((dated[-1].start or 0.0) - base) / step) + 1
    stacks: list[Counter[str]] = [Counter() for _ in range(n_buckets)]
    for b in dated:
        for (provider, _host), (n, _items) in b.counts.items():
            stacks[round(((b.start or 0.0) - base) / step)][provider] += n
    order = list(dict.fromkeys(k[0] for k in t.keys))
    top = max(sum(c.values()) for c in stacks)
    left, bottom, plot_h = 36, 34, 160
    bar_w = max(2.0, min(40.0, (640 - left - 10) / n_buckets - 2))
    width = max(640, int(left + 10 + n_buckets * (bar_w + 2)))
    height = plot_h + bottom + 10
    parts = [
        f'<svg role="img" aria-label="sessions over time" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
    ]
    parts.append(f'<line x1="{left}" y1="{10 + plot_h}" x2="{width - 4}" y2="{10 + plot_h}" stroke="#888"/>')
    parts.append(f'<text x="{left - 4}" y="{14}" text-anchor="end">{top}</text>')
    parts.append(f'<text x="{left - 4}" y="{10 + plot_h}" text-anchor="end">0</text>')
    for i, c in enumerate(stacks):
        x = left + 4 + i * (bar_w + 2)
        y = 10.0 + plot_h
        when = iso(base + i * step) or "?"
        for p in order:
            n = c.get(p, 0)
            if not n:
                continue
            h = plot_h * n / top
            y -= h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}" fill="{colour(p)}" stroke="#fff" stroke-width="0.5">'
                f"<title>{esc(when)}: {n} {esc(p)}</title></rect>"
            )
    undated = sum(b.sessions for b in t.buckets if b.start is None)
    note = f"one bar per {t.by} (UTC)" + (f"; {undated:,} without a start time not shown" if undated else "")
    parts.append(f'<text x="{left}" y="{height - 16}">{esc(iso(base) or "?")}</text>')
    parts.append(
        f'<text x="{width - 4}" y="{height - 16}" text-anchor="end">{esc(iso(base + n_buckets * step) or "?")}</text>'
    )
    parts.append(f'<text x="{(left + width) / 2:.0f}" y="{height - 2}" text-anchor="middle">{esc(note)}</text>')
    parts.append("</svg>")
    legend = " ".join(
        f'<span class="mono"><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="{colour(p)}"/></svg> {esc(p)}</span>'
        for p in order
    )
    return "".join(parts) + f"<div>{legend}</div>"
