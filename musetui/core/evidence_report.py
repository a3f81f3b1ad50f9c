"""The evidence report of whole trees (``musetui report``): Markdown, or one self-contained HTML file.

In Markdown, every session's evidence is the Markdown of :func:`musetui.core.report.session_markdown`
(what ``musetui show`` prints); in HTML, the same facts are cards and tables
(:mod:`musetui.core.report_html`), every piece of transcript text escaped, so it is never
interpreted as markup. The HTML loads nothing: inline CSS, inline SVG, one
inline script allowed by hash in a Content-Security-Policy that forbids every other source.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from musetui import __version__
from musetui.core.drift import TABLE_HEADER, table_rows
from musetui.core.fingerprints.catalogue import catalogue_digest
from musetui.core.model import Diagnostic, Segment, SessionSummary, iso
from musetui.core.report import session_markdown
from musetui.core.report_tallies import (
    counts,
    declared_model_of,
    declared_vs_attributed,
    host_of,
    provider_of,
    time_span,
)
from musetui.core.report_tallies import (
    flagged_sessions as flagged_sessions,
)
from musetui.core.safetext import escape_name, md_code, md_text
from musetui.core.walk import FileEntry

if TYPE_CHECKING:
    from musetui.core.custody import Custody


@dataclass(slots=True)
class FileRecord:
    """One examined file: where it is, its size and mtime as walked, and the sha256 of those bytes."""

    root: str
    path: str
    abspath: str
    size: int
    mtime_ns: int
    sha256: str
    note: str = ""


@dataclass(slots=True)
class ReportData:
    """Everything a report shows, gathered once and rendered as Markdown or HTML."""

    roots: list[str]
    sessions: list[SessionSummary]
    files: list[FileRecord]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    version: str = __version__
    catalogue: str = ""
    generated_at: float = 0.0
    custody: Custody | None = None  # the chain of custody (examiner, command line, filters …)


def hash_file(path: str, size: int) -> tuple[str, str]:
    """The sha256 of a file's first ``size`` bytes (the size the scan saw), read-only; and a note."""
    from musetui.core.reader import NotRegularFile, sha256_of

    try:
        digest, pos, st = sha256_of(path, size)  # (one hasher: O_NOATIME, regular files only)
    except NotRegularFile:
        return "", "not a regular file"
    except OSError as exc:
        return "", f"unreadable: {exc.strerror or exc}"
    if pos < size:
        return digest, f"shrank to {pos} bytes since the scan"
    if st.st_size != size:
        return digest, f"now {st.st_size} bytes: the hash covers the first {size}, as scanned"
    return digest, ""


def collect(paths: Sequence[str], *, use_cache: bool = True, workers: int | None = None) -> ReportData:
    """Scan ``paths`` (full summaries, with evidence) and hash every examined file."""
    from musetui.core.index import Index

    index = Index(list(paths), workers=workers, use_cache=use_cache).scan()
    return from_index(list(paths), index.sorted_sessions(), index.files, index.diagnostics)


def from_index(
    roots: Sequence[str],
    sessions: Sequence[SessionSummary],
    files: Iterable[FileEntry],
    diagnostics: Sequence[Diagnostic],
) -> ReportData:
    """A report of already-scanned sessions; hashes each file up to the size it was scanned at."""
    records = []
    for f in files:
        digest, note = hash_file(f.abspath, f.size)
        records.append(FileRecord(f.root, f.relpath, f.abspath, f.size, f.mtime_ns, digest, note))
    records.sort(key=lambda r: (r.root, r.path))
    return ReportData(
        roots=list(roots),
        sessions=sorted(sessions, key=lambda s: (s.root, s.path)),
        files=records,
        diagnostics=list(diagnostics),
        catalogue=catalogue_digest(),
        generated_at=time.time(),
    )


def where_of(s: SessionSummary, roots: Sequence[str]) -> str:
    """``root/path`` with the root as given on the command line when it matches."""
    given = _given_roots(tuple(roots)).get(s.root)
    if given is None:
        return f"{s.root}/{s.path}"
    name, is_dir = given
    return f"{name.rstrip('/')}/{s.path}" if is_dir else name


@functools.lru_cache(maxsize=16)
def _given_roots(roots: tuple[str, ...]) -> dict[str, tuple[str, bool]]:
    return {os.path.abspath(r): (r, os.path.isdir(r)) for r in reversed(roots)}


def mtime_text(ns: int) -> str:
    return iso(ns / 1e9) or "?"


# ---------------------------------------------------------------- Markdown


def switched(sessions: Sequence[SessionSummary]) -> list[tuple[SessionSummary, list[Segment]]]:
    """The sessions with more than one segment, each with its segments (as its scan record holds them)."""
    from musetui.core.segment_read import segments_of

    out = []
    for s in sessions:
        segs = segments_of(s)
        if len(segs) > 1:
            out.append((s, segs))
    return out


def _cell(text: object) -> str:
    """A Markdown table cell: one line of text, nothing in it live (see :func:`musetui.core.safetext.md_text`)."""
    return md_text(str(text), inline=True)


def _code(text: object) -> str:
    """A name as a Markdown code span in a table cell, invisible characters shown (see :mod:`musetui.core.safetext`)."""
    return md_code(escape_name(str(text)), table=True)


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out.extend("| " + " | ".join(r) + " |" for r in rows)
    return out


def render_markdown(data: ReportData) -> str:
    """The whole report as Markdown: what was examined, the attribution, the flagged sessions, the appendices."""
    flagged = flagged_sessions(data.sessions)
    out = [
        "# musetui evidence report",
        "",
        *_md_examined(data, flagged),
        *_md_attribution(data.sessions),
        *_md_flagged(data, flagged),
        *_md_switched(data),
        *_md_appendices(data),
    ]
    head = "\n".join(out) + "\n"
    return sealed(head, "", lambda h: f"\n- **sha256 of this report:** `{h}` ({SEAL_NOTE}: `{seal_check(h)}`)\n")


def _md_examined(data: ReportData, flagged: Sequence[SessionSummary]) -> list[str]:
    """What was examined: roots, files, sessions, time span, versions, diagnostics."""
    sessions = data.sessions
    start, end = time_span(sessions)
    total_bytes = sum(f.size for f in data.files)
    return [
        "## What was examined",
        "",
        "- **Roots:** " + ", ".join(_code(r) for r in data.roots),
        f"- **Files:** {len(data.files):,} ({total_bytes:,} bytes); **sessions:** {len(sessions):,}; "
        f"**flagged:** {len(flagged):,}; **malformed lines:** {sum(s.malformed_lines for s in sessions):,}",
        f"- **Time span:** {iso(start) or '?'} → {iso(end) or '?'}",
        f"- **musetui:** {data.version}; **model catalogue:** {data.catalogue}",
        f"- **Generated:** {iso(data.generated_at) or '?'}",
        f"- **Diagnostics:** {len(data.diagnostics):,} (listed in appendix C)",
        "",
    ]


def _md_attribution(sessions: Sequence[SessionSummary]) -> list[str]:
    """The attribution tallies: by provider, by host, by declared model, declared versus attributed."""
    return [
        "## Attribution",
        "",
        "### By attributed provider",
        "",
        *_md_table(["provider", "sessions"], ((_cell(p), str(n)) for p, n in counts(sessions, provider_of))),
        "",
        "### By host",
        "",
        *_md_table(["host", "sessions"], ((_cell(h), str(n)) for h, n in counts(sessions, host_of))),
        "",
        "### By declared model",
        "",
        *_md_table(
            ["declared model", "sessions"],
            ((_code(m), str(n)) for m, n in counts(sessions, declared_model_of)),
        ),
        "",
        "### Declared versus attributed",
        "",
        *_md_table(
            ["declared provider", "declared model", "attributed provider", "host", "sessions", "declared-mismatch"],
            (
                (_code(dp), _code(dm), _cell(p), _cell(h), str(n), str(m))
                for dp, dm, p, h, n, m in declared_vs_attributed(sessions)
            ),
        ),
        "",
    ]


def _md_flagged(data: ReportData, flagged: Sequence[SessionSummary]) -> list[str]:
    """Every flagged session, outliers first: its place, flags, file hash, title and evidence."""
    out = [f"## Flagged sessions ({len(flagged)}, outliers first)", ""]
    if not flagged:
        out.append("No session is flagged.")
        out.append("")
    hashes = {f.abspath: f.sha256 for f in data.files}
    for i, s in enumerate(flagged, 1):
        sha = hashes.get(s.abspath)
        out.append(
            f"**{i}. {_code(where_of(s, data.roots))}** — flags: {', '.join(s.attribution.flags)}"
            + (f"; file sha256 `{sha}`" if sha else "")
        )
        out.append("")
        out.append(f"Title or first prompt: {_code(s.title) if s.title else '(none recorded)'}")
        out.append("")
        out.append(session_markdown(s).rstrip("\n"))
        out.append("")
    return out


def _md_switched(data: ReportData) -> list[str]:
    """Every session whose provider or host changes: a row per segment."""
    rows = switched(data.sessions)
    if not rows:
        return []
    out = [
        f"## Sessions that change provider or host ({len(rows)})",
        "",
        *_md_table(
            ["session", "declared model", "segment", "lines", "items", "provider", "started", "ended"],
            (
                [
                    _code(where_of(s, data.roots)),
                    _code(s.declared_model or "-"),
                    f"{k} of {len(segs)}",
                    f"{g.first_line}–{g.last_line}",
                    str(g.items),
                    _cell(g.provider + (f"/{g.host}" if g.host else "")),
                    iso(g.started_at) or "-",
                    iso(g.ended_at) or "-",
                ]
                for s, segs in rows
                for k, g in enumerate(segs, 1)
            ),
        ),
    ]
    return [*out, ""]


def _md_appendices(data: ReportData) -> list[str]:
    """Appendix A (every session), B (every file, hashed), C (diagnostics), then the chain of custody."""
    out = ["## Appendix A: every session", ""]
    out += _md_table(
        [
            "path",
            "session id",
            "format",
            "declared model",
            "provider",
            "host",
            "confidence",
            "flags",
            "items",
            "malformed",
            "started",
            "ended",
        ],
        (
            (
                _code(where_of(s, data.roots)),
                _code(s.session_id or "-"),
                _cell(s.format),
                _code(s.declared_model or "-"),
                _cell(s.attribution.provider),
                _cell(host_of(s)),
                f"{s.attribution.confidence:.2f}",
                _cell(", ".join(s.attribution.flags) or "-"),
                str(s.items),
                str(s.malformed_lines),
                iso(s.started_at) or "-",
                iso(s.ended_at) or "-",
            )
            for s in data.sessions
        ),
    )
    out += ["", "## Appendix B: every file", ""]
    out += _md_table(
        ["path", "size", "mtime", "sha256"],
        (
            (
                _code(f.abspath),
                f"{f.size:,}",
                mtime_text(f.mtime_ns),
                (f"`{f.sha256}`" if f.sha256 else "-") + (f" ({_cell(f.note)})" if f.note else ""),
            )
            for f in data.files
        ),
    )
    out += ["", "## Appendix C: diagnostics", ""]
    if not data.diagnostics:
        out.append("None.")
    if drift_rows := table_rows(data.diagnostics):  # format drift, per harness version (musetui.core.drift)
        out += [
            "Format drift: record kinds and top-level keys the formats do not know.",
            "",
            *_md_table(
                list(TABLE_HEADER),
                ((_cell(a), _code(b), _cell(c), _code(d), e, f, _code(g)) for a, b, c, d, e, f, g in drift_rows),
            ),
            "",
        ]
    out += [f"- {md_code(d.text(), table=True)}" for d in data.diagnostics]
    if data.custody is not None:
        from musetui.core.custody import markdown

        out += ["", *markdown(data.custody)]
    return out


#: What the report's own hash covers, and how a reader checks it.
SEAL_NOTE = (
    "of the whole file with this value written as 64 zeros; it shows an accidental change, while the sha256 "
    "'musetui report' printed when it wrote the file, kept apart, shows any; check with"
)
SEAL_ZEROS = "0" * 64


def seal_check(digest: str) -> str:
    """The shell command that prints ``digest`` again for an unchanged report file."""
    return f"sed 's/{digest}/{SEAL_ZEROS}/g' FILE | sha256sum"


def sealed(head: str, tail: str, line: Callable[[str], str]) -> str:
    """``head + line(h) + tail``, where ``h`` is the sha256 of the same text with ``h`` written as 64 zeros."""
    digest = hashlib.sha256((head + line(SEAL_ZEROS) + tail).encode("utf-8")).hexdigest()
    return head + line(digest) + tail


def default_output(roots: Sequence[str], now: float | None = None) -> str:
    """Where the app writes a report: the working directory, else documents, home or the temp dir.

    The first of those that does not lie inside a scanned root: nothing is ever written
    under a scanned tree.
    """
    import tempfile

    from platformdirs import user_documents_dir

    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    real_roots = [os.path.realpath(r) for r in roots]

    def inside(d: str) -> bool:
        d = os.path.realpath(d)
        return any(d == r or d.startswith(r.rstrip(os.sep) + os.sep) for r in real_roots)

    for d in (os.getcwd(), user_documents_dir(), os.path.expanduser("~"), tempfile.gettempdir()):
        if d and os.path.isdir(d) and not inside(d):
            return os.path.join(d, f"musetui-report-{stamp}.html")
    raise OSError("every candidate directory lies inside a scanned root: use musetui report -o FILE")


def format_for(path: str, explicit: str | None) -> str:
    """``html`` or ``md``: the explicit choice, else from the output file's extension (``-`` is Markdown)."""
    if explicit:
        return explicit
    if path == "-":
        return "md"
    ext = os.path.splitext(path)[1].lower()
    if ext in (".html", ".htm"):
        return "html"
    if ext in (".md", ".markdown"):
        return "md"
    raise ValueError(f"cannot tell the format from {path!r}: use .html or .md, or --format html|md")
