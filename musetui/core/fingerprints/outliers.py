"""Outliers: sessions whose provider differs from their siblings' or their fleet's majority.

A comparison between the sessions of one scan, after each has its own verdict
(:func:`musetui.core.fingerprints.attribution.attribute`); step 8 of the scoring's explanation.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from musetui.core.model import Evidence, SessionSummary
from musetui.core.reasons import Outlier
from musetui.core.safetext import json_name


def mark_outliers(
    sessions: Sequence[SessionSummary], context: Iterable[tuple[str, str, str | None, str, int]] = ()
) -> None:
    """Flag sessions whose provider differs from their siblings' or their fleet's majority.

    Linear in the number of sessions: provider counts are taken once per sibling group
    and once per (root, format) fleet. ``context`` counts sessions that are not in the list
    but belong to its fleets, as ``(root, format, parent session id, provider, sessions)``
    (a bundle's sessions left out, see :mod:`musetui.core.bundle`).
    """
    by_parent: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    by_fleet: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for root, fmt, parent, provider, n in context:
        if parent:
            by_parent[(root, parent)][provider] += n
        by_fleet[(root, fmt)][provider] += n
    for s in sessions:  # outliers are relative to this fleet: recompute from scratch
        if "outlier" in s.attribution.flags:
            s.attribution.flags.remove("outlier")
            s.attribution.evidence = [e for e in s.attribution.evidence if e.detector != "outlier"]
            s.attribution.reasons = [r for r in s.attribution.reasons if r.flag != "outlier"]
    for s in sessions:
        p = s.attribution.provider
        if p == "unknown":
            continue
        if s.parent_session_id:
            by_parent[(s.root, s.parent_session_id)][p] += 1
        by_fleet[(s.root, s.format)][p] += 1
    majority = {k: (sum(c.values()), *c.most_common(1)[0]) for k, c in by_fleet.items() if c}
    for s in sessions:
        a = s.attribution
        if a.provider == "unknown" or "outlier" in a.flags:
            continue
        reason: Outlier | None = None
        fleet_total, fleet_common, fleet_n = majority.get((s.root, s.format), (0, None, 0))
        if fleet_total >= 3 and fleet_n >= 0.6 * fleet_total and fleet_common == a.provider:
            continue  # agrees with a clear fleet majority: never an outlier, whatever its siblings
        if s.parent_session_id:
            others = by_parent[(s.root, s.parent_session_id)].copy()
            others[a.provider] -= 1
            total = sum(others.values())
            if total >= 2:
                common, n = others.most_common(1)[0]
                if n * 2 > total and common != a.provider:
                    reason = Outlier(a.provider, common, n, total, "siblings", s.parent_session_id, s.root)
        if reason is None and fleet_total >= 3 and fleet_n >= 0.6 * fleet_total and fleet_common != a.provider:
            reason = Outlier(a.provider, fleet_common or "", fleet_n, fleet_total, "fleet", s.format, s.root)
        if reason:
            a.flags.append("outlier")
            a.reasons.append(reason)
            a.evidence.insert(
                0,
                Evidence(
                    detector="outlier",
                    provider=a.provider,
                    host=a.host,
                    weight=0.0,
                    line=0,
                    field="",
                    value=json_name(s.session_id or s.path),  # a path may hold bytes that are not UTF-8
                    detail=reason.text,
                    tag="fleet",  # a comparison with other sessions, not a FINGERPRINTS.md fingerprint
                ),
            )
