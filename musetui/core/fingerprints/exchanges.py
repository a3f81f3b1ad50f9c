"""A capture is judged exchange by exchange (docs/fingerprints.md#exchanges).

Each request/response pair of an HTTP capture gets its own verdict, from its own evidence
(endpoint, headers, body) and the model it names. When the exchanges that call a model went
to two providers or more, the capture is flagged ``mixed-providers``: its verdict is the
provider of the majority of those calls, and each exchange that disagrees is listed in the
evidence. Exchanges with an auxiliary model (embeddings, rerankers, moderation, speech) and
exchanges whose own verdict is below 0.5 do not vote.

An exchange is an item: its verdict is the item verdict of :mod:`musetui.core.fingerprints.segments`
(strong when it votes), and the capture's segments are the runs of those verdicts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from musetui.core.fingerprints.attribution import Located, attribute
from musetui.core.fingerprints.segments import STRONG_ANCHOR, ItemVerdict, conclude_capture
from musetui.core.model import Attribution, Evidence, SessionSummary
from musetui.core.sources.http_capture import ExchangeSpan, auxiliary_model

#: The flags in the order the scan record lists them (attribution's own order).
_FLAG_ORDER = (
    "declared-mismatch",
    "time-mismatch",
    "imitation-id",
    "mixed-providers",
    "truncated-blob",
)


def exchange_verdicts(
    summary: SessionSummary, located: Sequence[Located], lookup: Any, spans: Sequence[ExchangeSpan]
) -> list[tuple[int, ExchangeSpan, Attribution]]:
    """The verdict of every exchange that calls a model and names a provider at 0.5 or more."""
    out: list[tuple[int, ExchangeSpan, Attribution]] = []
    for i, span in enumerate(spans):
        if span.model and auxiliary_model(span.model):
            continue
        one = SessionSummary(
            path=summary.path, abspath=summary.abspath, root=summary.root, format=summary.format,
            format_rule=summary.format_rule, declared_model=span.model, models={span.model: 1} if span.model else {},
        )  # fmt: skip
        verdict = attribute(one, span.located, lookup)
        if verdict.provider != "unknown" and verdict.confidence >= 0.5:
            out.append((i, span, verdict))
    return out


def judge_exchanges(
    summary: SessionSummary, located: Sequence[Located], lookup: Any, spans: Sequence[ExchangeSpan]
) -> None:
    """Judge a capture exchange by exchange: its verdict, ``mixed-providers``, then its segments."""
    votes = exchange_verdicts(summary, located, lookup, spans) if len(spans) >= 2 else []
    _majority(summary, votes)
    items = [
        (span.line, ItemVerdict(v.provider, v.host, v.confidence, "evidence", STRONG_ANCHOR)) for _i, span, v in votes
    ]
    conclude_capture(summary, [span.line for span in spans], items)


def _majority(summary: SessionSummary, votes: list[tuple[int, ExchangeSpan, Attribution]]) -> None:
    """Flag a capture whose exchanges went to two providers; its verdict becomes the majority's."""
    counts = Counter(v.provider for _i, _s, v in votes)
    if len(counts) < 2:
        return
    a = summary.attribution
    top_n = max(counts.values())
    tied = [p for p, n in counts.items() if n == top_n]
    top = a.provider if a.provider in tied else next(v.provider for _i, _s, v in votes if v.provider in tied)
    if a.provider != top:  # the whole capture's evidence leaned to a minority: the calls decide
        major = [v for _i, _s, v in votes if v.provider == top]
        hosts = {v.host for v in major}
        vias = {v.via for v in major}
        a.provider = top
        a.host = hosts.pop() if len(hosts) == 1 else None
        a.via = vias.pop() if len(vias) == 1 else None
        a.confidence = round(min(0.99, sum(v.confidence for v in major) / len(major) * top_n / len(votes)), 3)
    flags = set(a.flags) | {"mixed-providers"}
    # Each exchange was judged against the model it names: the whole capture's declared model
    # (its first) says nothing about the other provider's calls.
    if not any("declared-mismatch" in v.flags for _i, _s, v in votes):
        flags.discard("declared-mismatch")
    a.flags = [f for f in _FLAG_ORDER if f in flags] + [f for f in a.flags if f not in _FLAG_ORDER]
    shares = ", ".join(f"{p} ×{n}" for p, n in counts.most_common())
    a.summary = (a.summary + "; " if a.summary else "") + (
        f"exchange by exchange, the model calls went to {shares}: the verdict is the majority's ({top})"
    )
    for i, span, v in votes:
        if v.provider == top:
            continue
        line = span.located[0].line if span.located else span.line
        what = span.model or "no model named"
        detail = f"exchange {i + 1} ({what}) went to {v.provider} ({v.confidence:.2f}), not {top}"
        a.evidence.append(
            Evidence(
                "exchange",
                v.provider,
                v.host,
                0.0,
                line,
                "",
                f"exchange {i + 1}",
                detail,
                tag="source",
            )
        )
