"""Turn by turn: each item's own verdict, the segments they form, and the flags segments raise.

One model for every format. An item (a transcript record, or an HTTP capture's exchange) is
judged from its own artifacts in the serving stack's fields, by the same weights as a session
(:mod:`musetui.core.fingerprints.attribution`):

* strong evidence (score >= 0.5) names the item's provider: the item is an *anchor*;
* artifacts that confirm the declaration (weak evidence for the declared provider, or a
  self-hosted server's own shapes) give the declared provider, and anchor it too;
* any other item takes the declared provider at the declaration's confidence (0.5), or is
  ``unknown`` when nothing is declared. It says nothing of who served the session (a user
  message, a tool result, metadata), so it joins the run around it.

Segments are the maximal runs of agreeing anchors, each running until the next anchor that
disagrees (a provider, or two hosts that differ). A change between segments raises
``provider-switch`` when strong evidence backs it on at least one side and neither side holds
strong evidence for the other's provider; a segment whose strong evidence contradicts the
declaration raises ``declared-mismatch`` for its lines. Only evidence the scan already
located is read. (Line times that run backwards are checked over every record as the scan
reads it: :mod:`musetui.core.scan.linetimes`.)
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from musetui.core.fingerprints.attribution import (
    LOOKALIKE_DETECTORS,
    SELF_HOSTED_SHAPES,
    STRENGTH_WEIGHT,
    Located,
)
from musetui.core.fingerprints.types import Decoded
from musetui.core.fingerprints.verdict import SERVING_PROVIDERS, declared_family, declared_of
from musetui.core.model import FLAGS, Attribution, Segment, SessionSummary, parse_time
from musetui.core.reasons import ProviderSwitch, Reason, SegmentMismatch
from musetui.core.segment_read import who

__all__ = [
    "STRONG",
    "ItemVerdict",
    "add_reason",
    "conclude_capture",
    "conclude_lines",
    "describe",
    "item_verdict",
    "judge_item",
    "one_segment",
]

#: An item score from which its evidence names its provider (a session's threshold, per item).
STRONG = 0.5
#: Anchor classes: an item that says nothing, one that confirms the declaration, one with strong evidence.
FILLER, CONFIRMS, STRONG_ANCHOR = 0, 1, 2


class ItemVerdict(NamedTuple):
    """One item's own verdict."""

    provider: str
    host: str | None
    confidence: float
    #: ``evidence`` (its own artifacts), ``weak`` (weak artifacts), ``declared`` or ``none``.
    basis: str
    #: :data:`FILLER`, :data:`CONFIRMS` or :data:`STRONG_ANCHOR`.
    anchor: int


def _genuine(dec: Decoded) -> bool:
    return not dec.problems or all(p == "truncated" for p in dec.problems)


def judge_item(artifacts: Iterable[tuple[Decoded, int]], declared: tuple[str | None, str | None]) -> ItemVerdict:
    """An item's verdict from its artifacts (each with its zone) and the session's declared (provider, host)."""
    d_provider, d_host = declared
    values: dict[tuple[str, str], set[str]] = {}
    weights: dict[tuple[str, str], float] = {}
    imitable: dict[str, bool] = {}
    hosts: dict[str, float] = {}
    self_hosted = False
    for dec, zone in artifacts:
        if zone or not _genuine(dec):
            continue
        w = STRENGTH_WEIGHT.get(dec.strength, 0.2)
        if dec.host:
            hosts[dec.host] = max(hosts.get(dec.host, 0.0), w)
        if dec.provider:
            key = (dec.detector, dec.provider)
            values.setdefault(key, set()).add(dec.value)
            weights[key] = w
            lookalike = dec.detector in LOOKALIKE_DETECTORS and dec.time is None
            imitable[dec.provider] = imitable.get(dec.provider, True) and lookalike
        elif dec.shape in SELF_HOSTED_SHAPES or dec.detector == "empty-signature":
            self_hosted = True
    scores: dict[str, float] = {}
    for (_det, provider), vals in values.items():
        c = weights[(_det, provider)] * (1 - 0.5 ** len(vals))
        scores[provider] = 1.0 - (1.0 - scores.get(provider, 0.0)) * (1.0 - c)
    if imitable.get("openai") and d_provider and d_provider != "openai":
        scores.pop("openai", None)  # look-alike shapes earn OpenAI nothing against another declaration
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best, best_score = ranked[0] if ranked else (None, 0.0)
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    host = max(hosts.items(), key=lambda kv: kv[1])[0] if hosts else None
    if best is not None and best_score >= STRONG:
        conf = best_score * (1.0 - 0.5 * second)
        if d_provider == best:
            conf = 1.0 - (1.0 - conf) * 0.7
        return ItemVerdict(
            best, host or (d_host if d_provider == best else None), round(min(conf, 0.99), 3), "evidence", STRONG_ANCHOR
        )
    if best is not None and d_provider == best:
        return ItemVerdict(best, host or d_host, round(min(0.5, best_score + 0.2), 3), "weak", CONFIRMS)
    if best is not None and d_provider is None and not imitable.get(best):
        return ItemVerdict(best, host, round(min(0.5, best_score), 3), "weak", FILLER)
    if d_provider:
        return ItemVerdict(d_provider, d_host, 0.5, "declared", CONFIRMS if self_hosted else FILLER)
    return ItemVerdict("unknown", None, 0.0, "none", FILLER)


@dataclass(slots=True)
class _Run:
    line: int  # the line of its first anchor
    provider: str
    host: str | None
    strong: set[str] = field(default_factory=set)  # providers its strong anchors name


def _runs(anchors: Iterable[tuple[int, ItemVerdict]]) -> list[_Run]:
    """The maximal runs of agreeing anchors, in line order."""
    runs: list[_Run] = []
    for line, v in anchors:
        if v.anchor == FILLER:
            continue
        if runs:
            r = runs[-1]
            if v.provider == r.provider and (not v.host or not r.host or v.host == r.host):
                r.host = r.host or v.host
                if v.anchor == STRONG_ANCHOR:
                    r.strong.add(v.provider)
                continue
        runs.append(_Run(line, v.provider, v.host, {v.provider} if v.anchor == STRONG_ANCHOR else set()))
    return runs


def add_reason(a: Attribution, reason: Reason) -> None:
    """Add a reason, and its flag in the scan record's order."""
    a.reasons.append(reason)
    if reason.flag not in a.flags:
        flags = set(a.flags) | {reason.flag}
        a.flags = [f for f in FLAGS if f in flags] + [f for f in a.flags if f not in FLAGS]


def _build(
    summary: SessionSummary,
    runs: list[_Run],
    item_lines: Sequence[int],
    prior: tuple[int, int],
    span_times: Callable[[int, int], tuple[float | None, float | None]],
    last_line: int = 0,
    merged: Sequence[int] = (),
) -> list[Segment]:
    """Segments from the runs; ``item_lines`` (sorted) are the records' lines, ``prior`` the (records, lines) before them.

    ``merged`` (sorted): the lines of records that are not items of their own (they continue an
    earlier record's item), left out of each segment's count as of the session's.
    """
    a = summary.attribution
    prior_items, prior_lines = prior
    first = 1 if prior_items else (item_lines[0] if item_lines else 1)
    last = item_lines[-1] if item_lines else max(last_line, first)
    if len(runs) < 2:
        return [Segment(first, last, summary.items, a.provider, a.host, summary.started_at, summary.ended_at)]
    out: list[Segment] = []
    for k, r in enumerate(runs):
        lo = first if k == 0 else r.line
        nxt = runs[k + 1].line if k + 1 < len(runs) else None
        if nxt is None:
            hi = last
        else:
            j = bisect_left(item_lines, nxt)
            hi = item_lines[j - 1] if j > 0 and item_lines[j - 1] >= lo else max(lo, nxt - 1)
        n = bisect_right(item_lines, hi) - bisect_left(item_lines, lo)
        if lo <= prior_lines:  # (items of earlier slices are counted, not listed: they go to this segment)
            n += prior_items if hi >= prior_lines else 0
        n -= bisect_right(merged, hi) - bisect_left(merged, lo)
        if lo <= prior_lines:
            n = max(n, 1)
        host = r.host or (a.host if r.provider == a.provider else None)
        t0, t1 = span_times(lo, hi)
        if k == 0 and summary.started_at is not None:
            t0 = summary.started_at
        if nxt is None and summary.ended_at is not None:
            t1 = summary.ended_at
        out.append(Segment(lo, hi, n, r.provider, host, t0, t1))
    return out


def _flag_segments(
    summary: SessionSummary, segs: list[Segment], runs: list[_Run], declared: tuple[str | None, str]
) -> None:
    """``provider-switch`` at each backed change, ``declared-mismatch`` for each contradicting segment."""
    if len(segs) < 2:
        return
    a = summary.attribution
    d_provider, d_desc = declared
    for k in range(1, len(segs)):
        before, after = runs[k - 1], runs[k]
        backed = bool(before.strong or after.strong)
        clean = after.provider not in before.strong - {before.provider} and before.provider not in after.strong - {
            after.provider
        }
        if backed and clean:
            b, g = segs[k - 1], segs[k]
            add_reason(
                a,
                ProviderSwitch(
                    g.first_line, who(b.provider, b.host), who(g.provider, g.host), b.first_line, b.last_line
                ),
            )
    if d_provider is None:
        return
    for r, g in zip(runs, segs, strict=True):
        if r.strong and g.provider != d_provider and g.provider not in SERVING_PROVIDERS and g.provider != "unknown":
            add_reason(a, SegmentMismatch(g.first_line, g.last_line, d_desc, d_provider, g.provider))


def conclude_lines(
    summary: SessionSummary,
    located: Sequence[Located],
    lookup: Any,
    records: Sequence[int],
    base_line: int,
    times: Sequence[Any],
    raw_time: Callable[[int], Any] | None,
    before: tuple[int, int] = (0, 0),
    merged: Sequence[int] = (),
) -> None:
    """Set ``summary.segments`` (and the segment and line-time flags) of a session read line by line.

    Args:
        summary: the attributed session.
        located: its located artifacts.
        lookup: the model catalogue's lookup.
        records: the indices of its records in this part of the file (line ``base_line + i + 1``).
        base_line: the lines read in earlier slices of the file.
        times: the recorded time of each line of this part, as observed (None where unobserved).
        raw_time: the time of an unobserved line by index, read from its bytes (None: observed lines only).
        before: the records of earlier slices (counted, their lines not listed), and the line of the
            last record of the whole read (this part's, or an earlier slice's when this part has none).
        merged: the lines of records that continue an earlier record's item (the observer's
            ``merged_lines``): a segment counts items as the session does.
    """
    d_provider, d_host, d_desc = declared_of(summary, lookup)
    runs = _line_runs(located, d_provider, d_host)
    prior_items, last_line = before
    if len(runs) < 2:  # one segment, the session's: no time is read, no flag raised
        ends = [base_line + records[0] + 1, base_line + records[-1] + 1] if records else []
        summary.segments = _build(summary, runs, ends, (prior_items, base_line), _no_times, last_line)
        return
    item_lines = [base_line + i + 1 for i in records]
    span_times = _span_times(located, records, item_lines, times, raw_time)
    segs = _build(summary, runs, item_lines, (prior_items, base_line), span_times, last_line, sorted(merged))
    summary.segments = segs
    _flag_segments(summary, segs, runs, (d_provider, d_desc))


def _no_times(_lo: int, _hi: int) -> tuple[float | None, float | None]:
    return None, None


def _span_times(
    located: Sequence[Located],
    records: Sequence[int],
    item_lines: list[int],
    times: Sequence[Any],
    raw_time: Callable[[int], Any] | None,
) -> Callable[[int, int], tuple[float | None, float | None]]:
    """The first and last recorded time of the items on lines ``lo`` to ``hi`` (see :func:`conclude_lines`)."""

    def at(j: int) -> float | None:
        i = records[j]
        raw = times[i]
        if raw is None and raw_time is not None:
            raw = raw_time(i)
        return parse_time(raw)

    def span_times(lo: int, hi: int) -> tuple[float | None, float | None]:
        i0, i1 = bisect_left(item_lines, lo), bisect_right(item_lines, hi)
        t0 = next((t for j in range(i0, min(i1, i0 + 64)) if (t := at(j)) is not None), None)
        t1 = next((t for j in range(i1 - 1, max(i0, i1 - 64) - 1, -1) if (t := at(j)) is not None), None)
        if t0 is None or t1 is None:  # (lines of earlier slices: the times of their located artifacts)
            known = [loc.line_time for loc in located if lo <= loc.line <= hi and loc.line_time is not None]
            t0 = t0 if t0 is not None else min(known, default=None)
            t1 = t1 if t1 is not None else max(known, default=None)
        return t0, t1

    return span_times


def _line_runs(located: Sequence[Located], d_provider: str | None, d_host: str | None) -> list[_Run]:
    """The runs of a session's items, from its located artifacts (none to judge when they name one provider at most)."""
    providers: set[str] = set()
    hosts: set[str] = set()
    for loc in located:
        if not loc.zone:
            dec = loc.decoded
            if dec.provider is not None:
                providers.add(dec.provider)
            if dec.host is not None:
                hosts.add(dec.host)
    if len(hosts) < 2 and (not providers or (len(providers) == 1 and d_provider in (None, *providers))):
        return []  # every item agrees (or says nothing): one segment, the session's
    per_line: dict[int, list[tuple[Decoded, int]]] = {}
    for loc in located:
        if loc.zone:
            continue
        got = per_line.get(loc.line)
        if got is None:
            per_line[loc.line] = [(loc.decoded, 0)]
        else:
            got.append((loc.decoded, 0))
    return _runs((line, judge_item(arts, (d_provider, d_host))) for line, arts in sorted(per_line.items()))


def one_segment(summary: SessionSummary, first_line: int, last_line: int) -> None:
    """The single segment of a session whose items are not told apart by line (a whole-file document)."""
    a = summary.attribution
    summary.segments = [
        Segment(first_line, last_line, summary.items, a.provider, a.host, summary.started_at, summary.ended_at)
    ]


def conclude_capture(summary: SessionSummary, lines: Sequence[int], votes: Sequence[tuple[int, ItemVerdict]]) -> None:
    """Set a capture's segments from its exchanges' verdicts.

    Args:
        summary: the attributed capture.
        lines: every exchange's line, in order.
        votes: (line, verdict) of the exchanges that name a provider, in order.
    """
    runs = _runs(votes)
    item_lines = sorted(lines)
    segs = _build(summary, runs, item_lines, (0, 0), _no_times)
    summary.segments = segs
    if len(segs) < 2:
        return
    _flag_segments(summary, segs, runs, (None, ""))  # (each exchange was judged against the model it names)


def item_verdict(summary: SessionSummary, raw: Any, lookup: Any | None = None) -> ItemVerdict:
    """The own verdict of an item of ``summary`` whose parsed record(s) are ``raw``: what ``show --line`` prints first."""
    from musetui.core.fingerprints import extract
    from musetui.core.sources.registry import zone_table

    if lookup is None:
        from musetui.core.fingerprints.catalogue_lookup import scan_lookup

        lookup = scan_lookup()
    d_provider, d_host, _desc = declared_family(summary, lookup)
    zone_of = zone_table(summary.format).zone_of
    arts: list[tuple[Decoded, int]] = []
    for obj in raw if isinstance(raw, list) else [raw]:
        arts.extend(
            (dec, zone_of(path, dec.detector.startswith("key"))) for dec, _key, path in extract.walk_record(obj)
        )
    return judge_item(arts, (d_provider, d_host))


def describe(v: ItemVerdict) -> str:
    """``openai (host azure) · confidence 0.99 · from this item's own artifacts``: an item verdict in words."""
    host = f" (host {v.host})" if v.host else ""
    why = {
        "evidence": "from this item's own artifacts",
        "weak": "weak artifacts on this item",
        "declared": "declared; no artifact on this item confirms or contradicts it",
        "none": "no declaration and no artifact on this item",
    }[v.basis]
    return f"{v.provider}{host} · confidence {v.confidence:.2f} · {why}"
