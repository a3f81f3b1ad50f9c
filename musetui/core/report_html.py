"""The HTML of the report's flagged sessions: verdict cards, evidence tables, decoded fields, the raw line.

The same facts as ``musetui show`` (:mod:`musetui.core.report`), each taken from the summary and
rendered as HTML elements. Every piece of transcript text goes through the report's
:func:`esc` below (controls stripped, ``html.escape``), so nothing a transcript holds is ever
interpreted. The report's escapers and provider colours live here, and
:mod:`musetui.core.evidence_report` takes them from this module.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from musetui.core.fingerprints.types import Decoded
from musetui.core.model import Item, SessionSummary, fmt_gap, iso
from musetui.core.palette import PAGE_COLOURS
from musetui.core.reasons import flag_sentences
from musetui.core.report import RAW_LIMIT, verdict_line
from musetui.core.safetext import escape_name, strip_controls
from musetui.core.usage import usage_text

#: Provider colours on a white page (one table with the app's: :mod:`musetui.core.palette`).
REPORT_COLOURS: dict[str, str] = PAGE_COLOURS


def esc(text: object) -> str:
    """HTML-escape text (quotes included) after stripping control and invisible characters."""
    return html.escape(strip_controls(str(text)), quote=True)


def esc_name(text: object) -> str:
    """HTML-escape a name (path, id, model), its invisible characters shown (see :func:`musetui.core.safetext.escape_name`)."""
    return html.escape(escape_name(str(text)), quote=True)


def colour(provider: str) -> str:
    """The report colour of a provider (grey for an unknown name)."""
    return REPORT_COLOURS.get(provider, REPORT_COLOURS["unknown"])


#: Flagged sessions whose strongest line of evidence is shown raw (the rest list it by line number).
RAW_SESSIONS = 200


def swatch(provider: str | None) -> str:
    """A small square of the provider's colour (decorative: its name is always written beside it)."""
    return f'<svg class="sw" width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="{colour(provider or "unknown")}"/></svg>'


def breakable(text: object) -> str:
    """Escaped text that a browser may break after each ``/`` (a path wraps at its separators)."""
    return "/<wbr>".join(esc(escape_name(part)) for part in str(text).split("/"))


def path_code(text: object) -> str:
    """A path in monospace, breakable after each ``/``."""
    return f'<code class="path">{breakable(text)}</code>'


@dataclass(slots=True)
class RawLine:
    """The raw line of a session's strongest located evidence, with what it decodes to."""

    item: Item
    raw: bytes
    decoded: list[Decoded]


def strongest_line(s: SessionSummary) -> int | None:
    """The line of the session's heaviest evidence that names a line (None when none does)."""
    located = [e for e in s.attribution.evidence if e.line and e.detector != "outlier"]
    if not located:
        return None
    return max(located, key=lambda e: (e.weight, -e.line)).line


def raw_line(s: SessionSummary) -> RawLine | None:
    """Read the item at :func:`strongest_line` (read-only, atime kept); None when absent or unreadable."""
    line = strongest_line(s)
    if line is None:
        return None
    from musetui.core.session import open_session

    try:
        opened = open_session(s)
        item = next((it for it in opened.items if it.line <= line < it.line + max(1, it.lines)), None)
        if item is None:
            return None
        return RawLine(item, opened.raw(item), opened.decoded(item))
    except Exception:  # the per-file boundary: the section says the line could not be read
        return None


def _table(cls: str, header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table of already-escaped cells."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _facts(pairs: Iterable[tuple[str, str]]) -> str:
    """A definition list of ``(label, escaped html)`` pairs."""
    return '<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


def _card(label: str, body: str, cls: str = "") -> str:
    return f'<div class="card {cls}"><div class="card-label">{esc(label)}</div>{body}</div>'


def _who(provider: str | None, host: str | None) -> str:
    name = provider or "no provider"
    return f"{swatch(provider)} {esc(name)}" + (f"/{esc(host)}" if host else "")


def time_span(start: float | None, end: float | None, sep: str = " ") -> str:
    """``2026-09-01T10:00:00Z → 2026-09-01T10:05:00Z (+300 s)``, escaped; ``sep`` (html) before the arrow."""
    text = f"{esc(iso(start) or '?')}{sep}→ {esc(iso(end) or '?')}"
    if start is not None and end is not None:
        text += f" ({esc(fmt_gap(end, start))})"
    return text


def _cards(s: SessionSummary, sha: str | None) -> str:
    a = s.attribution
    verdict = (
        f'<div class="verdict-provider">{_who(a.provider, a.host)}</div>'
        f"<div>confidence {a.confidence:.2f}" + (f" · via {esc(a.via)}" if a.via else "") + "</div>"
    )
    declared = f"<div>{esc(s.declared_provider or '-')}</div><div><code>{esc(escape_name(s.declared_model or '-'))}</code></div>"
    flags = "".join(f'<span class="flag">{esc(f)}</span>' for f in a.flags) or "none"
    size = f"{s.size:,} bytes · {s.items:,} items · {s.malformed_lines:,} malformed"
    return (
        '<div class="cards">'
        + "".join(
            [
                _card("Verdict", verdict, "verdict"),
                _card("Declared", declared),
                _card("Flags", f"<div>{flags}</div>"),
                _card("Recorded", f"<div>{time_span(s.started_at, s.ended_at, '<br>')}</div>"),
                *([_card("Tokens", f"<div>{esc(tokens)}</div>")] if (tokens := usage_text(s.usage)) else []),
                _card(
                    "File",
                    f"<div>{esc(size)}</div>" + (f'<div class="hash"><code>{esc(sha)}</code></div>' if sha else ""),
                ),
            ]
        )
        + "</div>"
    )


def _seg(seg: Any, name: str) -> Any:
    """A field of one segment, whether the record holds objects or dicts."""
    return seg.get(name) if isinstance(seg, dict) else getattr(seg, name, None)


def segments_table(s: SessionSummary) -> str:
    """The session's segments (runs of items whose verdicts agree), as its scan record holds them."""
    from musetui.core.segment_read import segments_of

    segments = segments_of(s)
    if not segments:
        return ""
    rows = []
    for seg in segments:
        first, last = _seg(seg, "first_line"), _seg(seg, "last_line")
        rows.append(
            [
                esc(f"{first}–{last}"),
                esc(_seg(seg, "items") if _seg(seg, "items") is not None else "-"),
                _who(_seg(seg, "provider"), _seg(seg, "host")),
                time_span(_seg(seg, "started_at"), _seg(seg, "ended_at")),
            ]
        )
    return "<h4>Segments</h4>" + _table("segments", ["lines", "items", "provider", "recorded"], rows)


def evidence_table(s: SessionSummary) -> str:
    """One row per piece of evidence (the outlier comparison is stated with its flag)."""
    shown = [e for e in s.attribution.evidence if e.detector != "outlier"]
    if not shown:
        return "<h4>Evidence</h4><p>None.</p>"
    rows = [
        [
            esc(e.detector),
            _who(e.provider, e.host),
            esc(f"{e.weight:.2f}"),
            (esc(f"line {e.line}") + (f"<br><code>{breakable(e.field)}</code>" if e.field else ""))
            if e.line
            else "fleet",
            f'<code class="value">{esc(escape_name(e.value))}</code>',
            esc(e.detail),
        ]
        for e in shown
    ]
    return "<h4>Evidence</h4>" + _table(
        "evidence", ["detector", "points to", "weight", "where", "value", "detail"], rows
    )


def decoded_table(decoded: Sequence[Decoded], line_time: float | None) -> str:
    """The fingerprints decoded from one item: what each is, when it was minted, its fields."""
    if not decoded:
        return "<p>No fingerprint decodes on this line.</p>"
    rows = []
    for d in decoded:
        minted = ""
        if d.time is not None:
            minted = esc(iso(d.time) or "?") + (
                esc(f" ({fmt_gap(d.time, line_time)} from the line)") if line_time is not None else ""
            )
        fields = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in d.fields if k not in ("minted", "time"))
        problems = f'<div class="problems">problems: {esc(", ".join(d.problems))}</div>' if d.problems else ""
        rows.append(
            [
                esc(d.detector),
                f'<code class="value">{esc(escape_name(d.value))}</code>',
                _who(d.provider, d.host) + f'<div class="muted">{esc(d.strength)}, {esc(d.tag)}</div>',
                esc(d.meaning) + (f'<dl class="fields">{fields}</dl>' if fields else "") + problems,
                minted,
            ]
        )
    return _table("decoded", ["detector", "value", "points to", "meaning and fields", "minted"], rows)


def raw_block(raw: RawLine) -> str:
    """The decoded fields and the raw line (truncated to ``RAW_LIMIT`` characters) of one item."""
    it = raw.item
    text = raw.raw.decode("utf-8", "replace")
    lines = f"line {it.line}" + (f"–{it.line + it.lines - 1}" if it.lines > 1 else "")
    cut = f" (the first {RAW_LIMIT:,} of {len(text):,} characters)" if len(text) > RAW_LIMIT else ""
    return (
        f"<h4>Strongest evidence: {esc(lines)}</h4>"
        + f'<p class="muted">{esc(it.kind)}'
        + (f" / {esc(it.subkind)}" if it.subkind else "")
        + (f", role {esc(it.role)}" if it.role else "")
        + f", recorded {esc(iso(it.time) or '?')}, "
        + f"bytes {it.offset:,}–{it.offset + it.length:,}</p>"
        + decoded_table(raw.decoded, it.time)
        + f"<h4>Raw {esc(lines)}{esc(cut)}</h4>"
        + f'<pre class="raw">{esc(text[:RAW_LIMIT])}</pre>'
    )


def session_section(index: int, s: SessionSummary, where: str, sha: str | None, raw: RawLine | None) -> str:
    """One flagged session: its title, cards, reasons, details, segments, evidence and raw line."""
    a = s.attribution
    title = s.title or "(no title or first prompt recorded)"
    reasons = _table(
        "reasons",
        ["flag", "why"],
        ([f'<span class="flag">{esc(f)}</span>', esc(t)] for f, t in flag_sentences(a.flags, a.reasons)),
    )
    details = [
        ("Session id", f"<code>{esc(s.session_id or '?')}</code>"),
    ]
    if s.parent_session_id:
        details.append(("Parent session", f"<code>{esc(s.parent_session_id)}</code>"))
    details.append(("Format", f"{esc(s.format)} ({esc(s.format_rule)})"))
    details.append(("Verdict", esc(verdict_line(s))))
    details.append(("Why", esc(a.summary or "no evidence")))
    details += [("Note", esc(n)) for n in s.notes]
    parts = [
        f'<section class="session" id="flagged-{index}">',
        f'<h3><span class="num">{index}.</span> <span class="title">{esc(title)}</span></h3>',
        f'<p class="where">{path_code(where)}</p>',
        _cards(s, sha),
        reasons,
        _facts(details),
        segments_table(s),
        evidence_table(s),
    ]
    if raw is not None:
        parts.append(raw_block(raw))
    elif strongest_line(s) is not None:
        parts.append(
            f'<p class="muted">The raw line {esc(strongest_line(s))} is not shown: '
            f"only the first {RAW_SESSIONS} flagged sessions' lines are read, or it could not be read.</p>"
        )
    parts.append("</section>")
    return "".join(parts)


#: The report's stylesheet: a screen layout up to 1200 px, and a print layout for A4 portrait.
CSS = """
:root { --fg: #1b1b1b; --muted: #555; --rule: #d0d0d0; --band: #f4f4f4; --flag: #9b1c1c; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: #fff; margin: 0 auto; max-width: 1200px; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 8px; } h2 { font-size: 19px; border-bottom: 2px solid var(--rule);
  padding-bottom: 4px; margin-top: 32px; } h3 { font-size: 16px; margin: 4px 0 4px; }
h4 { font-size: 13px; margin: 12px 0 4px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.9em; }
code.path, code.value, .hash code { overflow-wrap: anywhere; }
svg { max-width: 100%; height: auto; } svg.sw { vertical-align: -1px; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 16px; margin: 8px 0; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; overflow-wrap: anywhere; min-width: 0; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
th, td { border: 1px solid var(--rule); padding: 3px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: var(--band); } td.num, th.num { text-align: right; white-space: nowrap; overflow-wrap: normal; }
table.sortable th { cursor: pointer; } table.sortable th[aria-sort="ascending"]::after { content: " ▲"; }
table.sortable th[aria-sort="descending"]::after { content: " ▼"; }
table.wide { table-layout: fixed; font-size: 12px; }
table.sessions col.c-path { width: 21%; } table.sessions col.c-id { width: 11%; } table.sessions col.c-fmt { width: 7%; }
table.sessions col.c-model { width: 9%; } table.sessions col.c-prov { width: 9%; } table.sessions col.c-host { width: 5%; }
table.sessions col.c-conf { width: 6%; } table.sessions col.c-flags { width: 7%; } table.sessions col.c-items { width: 5%; }
table.sessions col.c-bad { width: 6%; } table.sessions col.c-time { width: 7%; }
table.wide th { white-space: normal; overflow-wrap: anywhere; hyphens: auto; }
table.files col.c-path { width: 46%; } table.files col.c-size { width: 9%; } table.files col.c-mtime { width: 15%; }
table.files col.c-sha { width: 30%; }
table.evidence, table.decoded, table.segments, table.reasons { table-layout: fixed; }
table.reasons th:nth-child(1) { width: 16%; }
table.evidence th:nth-child(1) { width: 13%; } table.evidence th:nth-child(2) { width: 12%; }
table.evidence th:nth-child(3) { width: 7%; } table.evidence th:nth-child(4) { width: 16%; }
table.evidence th:nth-child(5) { width: 20%; }
table.decoded th:nth-child(1) { width: 13%; } table.decoded th:nth-child(2) { width: 24%; }
table.decoded th:nth-child(3) { width: 13%; } table.decoded th:nth-child(5) { width: 16%; }
.flag { display: inline-block; border: 1px solid var(--flag); color: var(--flag); border-radius: 3px;
  padding: 0 4px; margin: 0 4px 2px 0; font-size: 0.85em; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; } figure { margin: 0; } figcaption { color: var(--muted); }
section.session { border: 1px solid var(--rule); border-left: 4px solid var(--flag); padding: 10px 14px; margin: 16px 0; }
section.session .num { color: var(--muted); } p.where { margin: 0 0 8px; color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 8px; margin: 8px 0; }
.card { border: 1px solid var(--rule); border-radius: 4px; padding: 6px 8px; min-width: 0; overflow-wrap: anywhere; }
.card.verdict { border-width: 2px; border-color: var(--fg); } .verdict-provider { font-size: 16px; font-weight: 700; }
.card-label { font-size: 11px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); }
dl.fields { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0 8px; margin: 4px 0 0; font-size: 0.9em; }
dl.fields dt { color: var(--muted); } dl.fields dd { margin: 0; overflow-wrap: anywhere; }
.problems { color: var(--flag); }
pre.raw { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--band); border: 1px solid var(--rule);
  padding: 8px; margin: 4px 0 0; font-size: 0.85em; }
.muted { color: var(--muted); }
svg text { font: 11px system-ui, sans-serif; fill: #1b1b1b; }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 10.5px; }
  h2 { break-after: avoid; } h2#flagged, h2#sessions, h2#custody { break-before: page; }
  h3, h4 { break-after: avoid; } table { font-size: 9px; } tr, .card, dl.facts, pre.raw { break-inside: avoid; }
  table.wide { font-size: 8px; } th, td { padding: 2px 3px; }
  section.session + section.session { break-before: page; }
  section.session { border: none; border-top: 3px solid var(--flag); padding: 6px 0; margin: 0; }
  .cards { grid-template-columns: repeat(5, minmax(0, 1fr)); } .verdict-provider { font-size: 12px; }
  table.wide th { font-size: 7px; }
  table.sortable th::after { content: "" !important; } pre.raw { background: none; font-size: 8px; }
  .charts { break-inside: avoid; }
}
"""
