"""The Markdown evidence report: what ``musetui show`` prints and what the TUI's ``y`` copies."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

from musetui.core.fingerprints.types import Decoded
from musetui.core.model import Item, SessionSummary, fmt_gap, iso
from musetui.core.reasons import flag_sentences
from musetui.core.safetext import escape_name, md_block, md_code, md_text
from musetui.core.usage import usage_text

#: Raw lines are truncated to this many characters in reports.
RAW_LIMIT = 2000


def human_bytes(n: int) -> str:
    """``1.5 MB``, ``812 kB``, ``34 bytes``: a size in decimal units, for people."""
    if n < 1000:
        return f"{n} byte{'s' if n != 1 else ''}"
    value = float(n)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{n} bytes"


def file_identity(path: str) -> tuple[str, int, float] | None:
    """The sha256 of the whole file, its size and mtime (read-only, atime kept; None when unreadable)."""
    from musetui.core.reader import sha256_of

    try:
        sha, _n, st = sha256_of(path)
    except OSError:
        return None
    return sha, st.st_size, st.st_mtime


def show_context(path: str, root: str | None = None) -> str:
    """What ``show`` indexes with ``path``, so that its flags are the ones ``scan`` gives there.

    ``root`` when given; else the default root (``musetui``'s and ``scan``'s with no PATH) that
    holds the file; else the tree its layout names (:func:`~musetui.core.sources.registry.family_root`);
    else the file alone, never its directory.
    """
    from musetui.core.config import default_roots
    from musetui.core.sources.registry import family_root

    target = os.path.abspath(path)
    if root:
        return os.path.abspath(root)
    for r in default_roots():  # (by the path as given: the index lists the file under the root's path)
        top = os.path.abspath(r)
        if target.startswith(top.rstrip(os.sep) + os.sep):
            return top
    return family_root(target) or target


def show_summary(
    path: str, root: str | None = None, *, use_cache: bool = True
) -> tuple[SessionSummary | None, list[object]]:
    """The session at ``path`` as ``musetui show`` reports it: indexed in :func:`show_context`.

    The TUI's ``y`` reads nothing again: it formats the summary the app scanned, which is what
    ``show PATH --root ROOT`` gives for the app's root.

    Returns:
        The summary (None when the file holds no transcript records), and the index's diagnostics.
    """
    from musetui.core.index import Index

    target = os.path.abspath(path)
    index = Index([show_context(target, root)], workers=1, use_cache=use_cache).scan()
    found = [s for s in index.sessions if os.path.abspath(s.abspath) == target]
    return (found[0] if found else None), list(index.diagnostics)


def _one_line(text: str) -> str:
    """Free text from a transcript (or holding some of it) on one line of Markdown."""
    return md_text(text)


def _name(value: str) -> str:
    """A name (id, model, path, field, evidence value) as a code span, invisible characters shown."""
    return md_code(escape_name(value))


def verdict_line(s: SessionSummary) -> str:
    """``openai (host azure) · confidence 0.97 · flags: outlier``."""
    a = s.attribution
    host = f" (host {a.host})" if a.host else ""
    via = f" via {a.via}" if a.via else ""
    flags = ", ".join(a.flags) if a.flags else "none"
    return f"{a.provider}{host}{via} · confidence {a.confidence:.2f} · flags: {flags}"


def _flag_lines(s: SessionSummary) -> list[str]:
    """``- **Flag outlier:** provider openai differs from …``: each flag with its reason, as every view words it."""
    a = s.attribution
    return [f"- **Flag {flag}:** {_one_line(text)}" for flag, text in flag_sentences(a.flags, a.reasons)]


def session_markdown(s: SessionSummary, extra: Sequence[str] = ()) -> str:
    """The evidence report of one session."""
    a = s.attribution
    out = [
        f"### musetui evidence: session {_name(s.session_id or '?')}",
        "",
        f"- **Verdict:** {verdict_line(s)}",
        f"- **Why:** {_one_line(a.summary)}" if a.summary else "- **Why:** no evidence",
        *_flag_lines(s),
        f"- **Declared:** provider {_name(s.declared_provider or '-')}, model {_name(s.declared_model or '-')}",
        f"- **Format:** {s.format} ({_one_line(s.format_rule)})",
        f"- **File:** {_name(s.abspath)} ({s.size:,} bytes, {_count(s.items, 'item')}, "
        f"{_count(s.malformed_lines, 'malformed line')})",
        _identity_line(s),
        f"- **Recorded:** {iso(s.started_at) or '?'} → {iso(s.ended_at) or '?'}",
        *_segment_lines(s),
    ]
    tokens = usage_text(s.usage)
    if tokens:
        out.append(f"- **Tokens:** {tokens}")
    if s.parent_session_id:
        out.append(f"- **Parent session:** {_name(s.parent_session_id)}")
    for note in s.notes:
        out.append(f"- **Note:** {_one_line(note)}")
    out.append("")
    out.append("#### Evidence")
    shown = [e for e in a.evidence if e.detector != "outlier"]  # (a comparison, stated with its flag above)
    if not shown:
        out.append("- (none)")
    for e in shown:
        where = f"line {e.line}" + (f", {_name(e.field)}" if e.field else "") if e.line else "fleet"
        who = e.provider or "no provider"
        if e.host:
            who += f"/{e.host}"
        out.append(f"- **{e.detector}** → {who} (weight {e.weight:.2f}, {where}): {_name(e.value)}")
        out.append(f"  {_one_line(e.detail)}")
    out.extend(extra)
    return "\n".join(out) + "\n"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _identity_line(s: SessionSummary) -> str:
    """``- **sha256 of the file:** `…` (1,234 bytes = 1.2 kB, modified …)``: the chain of custody."""
    ident = file_identity(s.abspath)
    if ident is None:
        return "- **sha256 of the file:** unreadable now"
    sha, size, mtime = ident
    changed = f"; the scan read {s.size:,} bytes" if size != s.size else ""
    return f"- **sha256 of the file:** `{sha}` ({size:,} bytes = {human_bytes(size)}, modified {iso(mtime)}{changed})"


def decoded_bullets(decoded: Sequence[Decoded], line_time: float | None, line: int) -> list[str]:
    """One bullet per decoded fingerprint, with meaning and time delta."""
    out: list[str] = []
    for dec in decoded:
        who = dec.provider or "no provider"
        if dec.host:
            who += f"/{dec.host}"
        bits = [f"- **{dec.detector}** {_name(_abbrev(dec.value))} → {who} ({dec.strength}, [{dec.tag}])"]
        if dec.meaning:
            bits.append(f"  {_one_line(dec.meaning)}")
        if dec.time is not None:
            delta = ""
            if line_time is not None:
                delta = f", {fmt_gap(dec.time, line_time)} from line {line}"
            bits.append(f"  minted {iso(dec.time)}{delta}")
        fields = "; ".join(f"{k} {v}" for k, v in dec.fields if k not in ("minted", "time"))
        if fields:
            bits.append(f"  {_one_line(fields)}")
        if dec.problems:
            bits.append(f"  problems: {_one_line(', '.join(dec.problems))}")
        out.append("\n".join(bits))
    return out


def _abbrev(value: str, limit: int = 96) -> str:
    return value if len(value) <= limit else value[: limit - 20] + "…" + value[-16:]


def item_markdown(
    s: SessionSummary, item: Item, raw: bytes, decoded: Sequence[Decoded], raw_limit: int = RAW_LIMIT
) -> str:
    """The evidence report of one item: provenance, decoded fingerprints and the raw line."""
    sha = hashlib.sha256(raw).hexdigest()
    text = raw.decode("utf-8", "replace")
    truncated = len(text) > raw_limit
    shown = text[:raw_limit]
    out = [
        f"### musetui evidence: session {_name(s.session_id or '?')}, line {item.line}",
        "",
        *_item_verdict_lines(s, item),
        f"- **Verdict:** {verdict_line(s)}",
        *_flag_lines(s),
        f"- **File:** {_name(s.abspath)}",
        f"- **Line:** {item.line}"
        + (f"–{item.line + item.lines - 1}" if item.lines > 1 else "")
        + f", bytes {item.offset}–{item.offset + item.length} ({item.length:,} bytes)",
        f"- **sha256 of the raw line:** `{sha}`",
        f"- **Recorded:** {iso(item.time) or '?'}",
        f"- **Item:** {item.kind}"
        + (f" / {_one_line(item.subkind)}" if item.subkind else "")
        + (f", role {_one_line(item.role)}" if item.role else "")
        + (f", reasoning {_one_line(item.reasoning)}" if item.reasoning else ""),
        "",
        "#### Decoded fingerprints",
    ]
    bullets = decoded_bullets(decoded, item.time, item.line)
    out.extend(bullets or ["- (none on this item)"])
    out.append("")
    limit_note = f" (truncated to {raw_limit:,} of {len(text):,} characters)" if truncated else ""
    out.append(f"#### Raw line{limit_note}")
    out.extend(md_block(shown, "json"))
    return "\n".join(out) + "\n"


def _item_verdict_lines(s: SessionSummary, item: Item) -> list[str]:
    """The item's own verdict and its segment's, printed before the session's."""
    from musetui.core.fingerprints.segments import describe, item_verdict
    from musetui.core.segment_read import describe_segment, segment_at, segments_of

    out = [f"- **Item verdict:** {describe(item_verdict(s, item.raw))}"]
    segs = segments_of(s)
    g = segment_at(segs, item.line)
    if g is not None:
        out.append(f"- **Segment:** {describe_segment(segs, g)}")
    return out


def _segment_lines(s: SessionSummary) -> list[str]:
    """``- **Segment:** segment 1 of 2: lines 1–18 (18 items), anthropic``, for a session that switches."""
    from musetui.core.segment_read import describe_segment, segments_of

    segs = segments_of(s)
    return [f"- **Segment:** {describe_segment(segs, g)}" for g in segs] if len(segs) > 1 else []


def session_json(s: SessionSummary, root: str | None = None) -> dict[str, object]:
    """``show --json`` of a session: its scan record, plus the file's identity, format rule and notes.

    Args:
        s: the session, as :func:`show_summary` indexed it.
        root: the ``root`` to report (the directory as the user gave it); default the indexed one.

    Returns:
        The scan record's fields (DESIGN.md) then ``file`` (``abspath``, ``sha256``, ``size``,
        ``modified``; null values when unreadable now), ``format_rule``, ``notes`` and
        ``item`` (null: see :func:`item_json`).
    """
    from musetui.core.safetext import json_name

    record = s.record()
    if root is not None:
        record["root"] = json_name(root)
    ident = file_identity(s.abspath)
    sha, size, mtime = ident if ident is not None else (None, None, None)
    record["file"] = {
        "abspath": json_name(s.abspath),
        "sha256": sha,
        "size": size,
        "modified": iso(mtime) if mtime is not None else None,
    }
    record["format_rule"] = s.format_rule
    record["notes"] = list(s.notes)
    record["item"] = None
    return record


def item_json(item: Item, raw: bytes, decoded: Sequence[Decoded], raw_limit: int = RAW_LIMIT) -> dict[str, object]:
    """``show --json``'s ``item``: where the item lies, what it is, its decoded fingerprints and raw line.

    The same facts as :func:`item_markdown`, named as in the scan record (``line``,
    ``last_line``, ``provider``, ``host``, ``detector``, ``value``); times are ISO-8601 UTC.
    """
    text = raw.decode("utf-8", "replace")
    return {
        "line": item.line,
        "last_line": item.line + max(1, item.lines) - 1,
        "offset": item.offset,
        "length": item.length,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "time": iso(item.time),
        "kind": item.kind,
        "subkind": item.subkind,
        "role": item.role,
        "reasoning": item.reasoning,
        "decoded": [
            {
                "detector": d.detector,
                "provider": d.provider,
                "host": d.host,
                "value": d.value,
                "strength": d.strength,
                "tag": d.tag,
                "meaning": d.meaning,
                "minted_at": iso(d.time) if d.time is not None else None,
                "offset_s": round(d.time - item.time, 3) if d.time is not None and item.time is not None else None,
                "fields": dict(d.fields),
                "problems": list(d.problems),
            }
            for d in decoded
        ],
        "raw": text[:raw_limit],
        "raw_truncated": len(text) > raw_limit,
    }
