"""The HTML page of the evidence report (``musetui report --format html``): one self-contained file.

The same facts as the Markdown report (:mod:`musetui.core.evidence_report`, which collects them),
as cards and tables (:mod:`musetui.core.report_html`), every piece of transcript text escaped.
The page loads nothing: inline CSS, inline SVG, one inline script allowed by hash in a
Content-Security-Policy that forbids every other source.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Sequence

from musetui.core.drift import TABLE_HEADER, table_rows
from musetui.core.evidence_report import SEAL_NOTE, ReportData, mtime_text, seal_check, sealed, switched, where_of
from musetui.core.model import SessionSummary, iso
from musetui.core.report_charts import mix_chart
from musetui.core.report_charts import timeline_chart as _timeline_chart
from musetui.core.report_html import CSS, RAW_SESSIONS, colour, esc, esc_name, path_code, raw_line, session_section
from musetui.core.report_tallies import (
    counts,
    declared_model_of,
    declared_vs_attributed,
    flagged_sessions,
    host_of,
    provider_of,
    time_span,
)

# ---------------------------------------------------------------- HTML


#: Click a header to sort its table; numbers sort as numbers (cells may carry data-v).
SCRIPT = """
(function () {
  function key(td) { var v = td.getAttribute('data-v'); return v === null ? td.textContent : v; }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, col) {
      th.addEventListener('click', function () {
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        table.querySelectorAll('th').forEach(function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]), nx = parseFloat(x), ny = parseFloat(y);
          var c = (!isNaN(nx) && !isNaN(ny) && String(nx) === x.trim() && String(ny) === y.trim())
            ? nx - ny : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.documentElement.setAttribute('data-sortable', 'ready');
})();
"""


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _html_table(
    header: Sequence[tuple[str, bool]],
    rows: Iterable[Sequence[tuple[str, str | None]]],
    cls: str = "sortable",
    cols: Sequence[str] = (),
) -> str:
    """A table; header cells are ``(label, numeric)``; body cells are ``(escaped html, sort value)``; ``cols``: column classes."""
    colgroup = "<colgroup>" + "".join(f'<col class="{c}">' for c in cols) + "</colgroup>" if cols else ""
    head = "".join(f'<th{" class=num" if num else ""} scope="col">{esc(h)}</th>' for h, num in header)
    body = []
    for r in rows:
        cells = []
        for (cell, sortv), (_h, num) in zip(r, header, strict=True):
            attrs = ' class="num"' if num else ""
            if sortv is not None:
                attrs += f' data-v="{esc(sortv)}"'
            cells.append(f"<td{attrs}>{cell}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="{cls}">{colgroup}<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _provider_cell(provider: str) -> tuple[str, str | None]:
    swatch = (
        f'<svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="{colour(provider)}"/></svg>'
    )
    return f"{swatch} {esc(provider)}", provider


def _flags_html(flags: Sequence[str]) -> str:
    return "".join(f'<span class="flag">{esc(f)}</span>' for f in flags) or '<span class="muted">-</span>'


def render_html(data: ReportData) -> str:
    """The whole report as one self-contained HTML document."""
    flagged = flagged_sessions(data.sessions)
    csp = f"default-src 'none'; style-src {_csp_hash(CSS)}; script-src {_csp_hash(SCRIPT)}; img-src 'none'; base-uri 'none'; form-action 'none'"
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        "<title>musetui evidence report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>musetui evidence report</h1>",
        '<h2 id="examined">What was examined</h2>',
        _html_examined(data, flagged),
        *_html_attribution(data.sessions),
        *_html_flagged(data, flagged),
        *_html_switched(data),
        '<h2 id="sessions">Appendix A: every session</h2>',
        _html_sessions(data),
        '<h2 id="files">Appendix B: every file</h2>',
        _html_files(data),
        *_html_diagnostics(data),
    ]
    head = "\n".join(out) + "\n"
    tail = f"<script>{SCRIPT}</script>\n</body></html>\n"
    return sealed(
        head,
        tail,
        lambda h: (
            f'<p id="report-hash"><strong>sha256 of this report:</strong> <code>{h}</code> ({esc(SEAL_NOTE)}: '
            f"<code>{esc(seal_check(h))}</code>)</p>\n"
        ),
    )


def _html_examined(data: ReportData, flagged: Sequence[SessionSummary]) -> str:
    """What was examined, as a definition list."""
    sessions = data.sessions
    start, end = time_span(sessions)
    total_bytes = sum(f.size for f in data.files)
    facts = [
        ("Roots", ", ".join(path_code(r) for r in data.roots)),
        ("Files", f"{len(data.files):,} ({total_bytes:,} bytes)"),
        (
            "Sessions",
            f"{len(sessions):,}, of which {len(flagged):,} flagged; {sum(s.malformed_lines for s in sessions):,} malformed lines",
        ),
        ("Time span", f"{esc(iso(start) or '?')} → {esc(iso(end) or '?')}"),
        ("musetui", esc(data.version)),
        ("Model catalogue", f"<code>{esc(data.catalogue)}</code>"),
        ("Generated", esc(iso(data.generated_at) or "?")),
        ("Diagnostics", f'{len(data.diagnostics):,} (<a href="#diagnostics">appendix C</a>)'),
    ]
    return '<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"


def _html_attribution(sessions: Sequence[SessionSummary]) -> list[str]:
    """The charts, then the attribution tallies: by provider, by host, by declared model, declared versus attributed."""
    by_provider = counts(sessions, provider_of)
    return [
        '<h2 id="attribution">Attribution</h2>',
        '<div class="charts">',
        f"<figure>{_timeline_chart(sessions)}<figcaption>Sessions over time, by attributed provider</figcaption></figure>",
        f"<figure>{mix_chart(by_provider, len(sessions))}<figcaption>Provider mix ({len(sessions):,} sessions)</figcaption></figure>",
        "</div>",
        "<h3>By attributed provider</h3>",
        _html_table(
            [("provider", False), ("sessions", True)],
            ([_provider_cell(p), (str(n), str(n))] for p, n in by_provider),
        ),
        "<h3>By host</h3>",
        _html_table(
            [("host", False), ("sessions", True)],
            ([(esc(h), h), (str(n), str(n))] for h, n in counts(sessions, host_of)),
        ),
        "<h3>By declared model</h3>",
        _html_table(
            [("declared model", False), ("sessions", True)],
            ([(f"<code>{esc_name(m)}</code>", m), (str(n), str(n))] for m, n in counts(sessions, declared_model_of)),
        ),
        "<h3>Declared versus attributed</h3>",
        _html_table(
            [
                ("declared provider", False),
                ("declared model", False),
                ("attributed provider", False),
                ("host", False),
                ("sessions", True),
                ("declared-mismatch", True),
            ],
            (
                [
                    (f"<code>{esc_name(dp)}</code>", dp),
                    (f"<code>{esc_name(dm)}</code>", dm),
                    _provider_cell(p),
                    (esc(h), h),
                    (str(n), str(n)),
                    (str(m), str(m)),
                ]
                for dp, dm, p, h, n, m in declared_vs_attributed(sessions)
            ),
        ),
    ]


def _html_flagged(data: ReportData, flagged: Sequence[SessionSummary]) -> list[str]:
    """Every flagged session as a section, outliers first; the first ones with their raw line."""
    out = [f'<h2 id="flagged">Flagged sessions ({len(flagged)}, outliers first)</h2>']
    if not flagged:
        out.append("<p>No session is flagged.</p>")
    hashes = {f.abspath: f.sha256 for f in data.files}
    for i, s in enumerate(flagged, 1):
        raw = raw_line(s) if i <= RAW_SESSIONS else None
        out.append(session_section(i, s, where_of(s, data.roots), hashes.get(s.abspath), raw))
    return out


def _html_switched(data: ReportData) -> list[str]:
    """Every session whose provider or host changes: a row per segment."""
    rows = switched(data.sessions)
    if not rows:
        return []
    table = _html_table(
        [("session", False), ("declared model", False), ("segment", False), ("lines", False), ("items", True),
         ("provider", False), ("host", False), ("started", False), ("ended", False)],
        (
            [
                (path_code(where_of(s, data.roots)), where_of(s, data.roots)),
                (f"<code>{esc_name(s.declared_model or '-')}</code>", s.declared_model or "-"),
                (f"{k} of {len(segs)}", None),
                (f"{g.first_line}–{g.last_line}", str(g.first_line)),
                (str(g.items), str(g.items)),
                _provider_cell(g.provider),
                (esc(g.host or "-"), g.host or ""),
                (esc(iso(g.started_at) or "-"), iso(g.started_at) or ""),
                (esc(iso(g.ended_at) or "-"), iso(g.ended_at) or ""),
            ]
            for s, segs in rows
            for k, g in enumerate(segs, 1)
        ),
        cls="sortable wide switched",
    )  # fmt: skip
    return [f'<h2 id="switched">Sessions that change provider or host ({len(rows)})</h2>', table]


def _html_sessions(data: ReportData) -> str:
    """Appendix A: every session, one sortable row each."""
    return _html_table(
        [
            ("path", False),
            ("session id", False),
            ("format", False),
            ("declared model", False),
            ("provider", False),
            ("host", False),
            ("confidence", True),
            ("flags", False),
            ("items", True),
            ("malformed", True),
            ("started", False),
            ("ended", False),
        ],
        (
            [
                (path_code(where_of(s, data.roots)), where_of(s, data.roots)),
                (f"<code>{esc_name(s.session_id or '-')}</code>", s.session_id or "-"),
                (esc(s.format), s.format),
                (f"<code>{esc_name(s.declared_model or '-')}</code>", s.declared_model or "-"),
                _provider_cell(s.attribution.provider),
                (esc(host_of(s)), host_of(s)),
                (f"{s.attribution.confidence:.2f}", f"{s.attribution.confidence:.2f}"),
                (_flags_html(s.attribution.flags), ",".join(s.attribution.flags)),
                (str(s.items), str(s.items)),
                (str(s.malformed_lines), str(s.malformed_lines)),
                (esc(iso(s.started_at) or "-"), iso(s.started_at) or ""),
                (esc(iso(s.ended_at) or "-"), iso(s.ended_at) or ""),
            ]
            for s in data.sessions
        ),
        cls="sortable wide sessions",
        cols=(
            "c-path",
            "c-id",
            "c-fmt",
            "c-model",
            "c-prov",
            "c-host",
            "c-conf",
            "c-flags",
            "c-items",
            "c-bad",
            "c-time",
            "c-time",
        ),
    )


def _html_files(data: ReportData) -> str:
    """Appendix B: every file, with its size, mtime and sha256 as scanned."""
    return _html_table(
        [("path", False), ("size", True), ("mtime", False), ("sha256", False)],
        (
            [
                (path_code(f.abspath), f.abspath),
                (f"{f.size:,}", str(f.size)),
                (esc(mtime_text(f.mtime_ns)), str(f.mtime_ns)),
                (
                    (f"<code>{esc(f.sha256)}</code>" if f.sha256 else "-")
                    + (f' <span class="muted">{esc(f.note)}</span>' if f.note else ""),
                    f.sha256,
                ),
            ]
            for f in data.files
        ),
        cls="sortable wide files",
        cols=("c-path", "c-size", "c-mtime", "c-sha"),
    )


def _html_diagnostics(data: ReportData) -> list[str]:
    """Appendix C: the diagnostics; then the chain of custody."""
    out = ['<h2 id="diagnostics">Appendix C: diagnostics</h2>']
    if not data.diagnostics:
        out.append("<p>None.</p>")
    else:
        if drift_rows := table_rows(data.diagnostics):  # format drift, per harness version (musetui.core.drift)
            out.append('<p id="drift">Format drift: record kinds and top-level keys the formats do not know.</p>')
            out.append(
                _html_table(
                    [(h, h in ("records", "files")) for h in TABLE_HEADER],
                    ([(esc(c), c) for c in row] for row in drift_rows),
                    cls="sortable drift",
                )
            )
        out.append("<ul>" + "".join(f"<li><code>{esc(d.text())}</code></li>" for d in data.diagnostics) + "</ul>")
    if data.custody is not None:
        from musetui.core.custody import html_block

        out.append(html_block(data.custody))
    return out
