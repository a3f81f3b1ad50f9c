"""Evidence scoring: from located artifacts to a verdict (provider, host, confidence, flags).

The scoring is documented in :data:`EXPLAIN` (printed by ``musetui scan --explain``; its text is
:mod:`musetui.core.fingerprints.explain`). The steps after the evidence is weighed live in
:mod:`musetui.core.fingerprints.verdict`, the host step in :mod:`musetui.core.fingerprints.host`;
the fleet step, :func:`mark_outliers`, lives in :mod:`musetui.core.fingerprints.outliers` and stays
importable from here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from musetui.core._pickling import reduce_by_fields
from musetui.core.fingerprints import calibration
from musetui.core.fingerprints.explain import explain_text
from musetui.core.fingerprints.host import (
    FORMAT_HOSTS,
    HOST_AGREEMENT,
    HOST_ONLY_BESIDE,
    add_format_host,
    pick_host,
)
from musetui.core.fingerprints.outliers import mark_outliers as mark_outliers
from musetui.core.fingerprints.types import Decoded
from musetui.core.fingerprints.verdict import CLAUDE_FAMILIES as CLAUDE_FAMILIES
from musetui.core.fingerprints.verdict import (
    MEMO_MAX,
    check_signature_models,
    check_store_bytes,
    declared_of,
    flag_mixed_and_anomalies,
    note_artifacts,
    pick_provider,
    without_lookalikes,
)
from musetui.core.fingerprints.verdict import SERVING_PROVIDERS as SERVING_PROVIDERS
from musetui.core.fingerprints.verdict import declared_family as declared_family
from musetui.core.model import Attribution, Evidence, SessionSummary, fmt_gap, iso
from musetui.core.reasons import Reason
from musetui.core.sources.zones import ZONE_NAMES

#: Evidence minted this many seconds *after* the line that records it is impossible.
TOL_AFTER_S = 5.0
#: In raw API captures the reference is the response's ``created_at``: items are minted
#: during the response (up to ~45 s later in real captures; long responses take minutes).
TOL_AFTER_CREATED_S = 600.0
#: Evidence minted this long *before* its line (first occurrence, model output) is suspicious.
TOL_BEFORE_S = 600.0

STRENGTH_WEIGHT = {"strong": 1.0, "medium": 0.6, "weak": 0.2}
QUOTED_FACTOR = 0.25
#: Detectors whose shapes point to self-hosted serving (no provider signature).
SELF_HOSTED_SHAPES = frozenset(
    {
        "call_+32hex",
        "chatcmpl-tool-hex",
        "chatcmpl-+digits",
        "chatcmpl-+32b62",
        "fp_ollama",
        "llama.cpp-build",
        "call_+8lower",
    }
)
#: OpenAI-credited shapes that OpenAI-compatible servers mint too (Together, Fireworks, vLLM,
#: LiteLLM and others copy ``call_`` + 24 and ``chatcmpl-`` ids; xAI and Groq copy ``fp_``):
#: against a declared non-OpenAI model they earn OpenAI nothing (docs/fingerprints.md#tool-id).
LOOKALIKE_DETECTORS = frozenset({"tool-id", "chatcmpl-id", "system-fingerprint", "key"})

#: How a verdict is scored, with these numbers: printed by ``musetui scan --explain``.
EXPLAIN = explain_text(
    strength_weight=STRENGTH_WEIGHT,
    quoted_factor=QUOTED_FACTOR,
    host_agreement=HOST_AGREEMENT,
    tol_after_s=TOL_AFTER_S,
    tol_after_created_s=TOL_AFTER_CREATED_S,
    tol_before_s=TOL_BEFORE_S,
)


@dataclass(slots=True)
class Located:
    """A decoded artifact with its place and the recorded time of its line."""

    __reduce__ = reduce_by_fields

    decoded: Decoded
    line: int  # 1-based physical line
    field: str
    zone: int
    line_time: float | None
    count: int = 1
    after_tol: float = TOL_AFTER_S


#: Details of time-less artifacts, by everything they are made of (most repeat across sessions).
_DETAILS: dict[tuple[Any, ...], str] = {}
_MAX_DETAILS = 4096


def _detail(dec: Decoded, loc: Located, delta: float | None) -> str:
    if dec.time is not None:
        return _make_detail(dec, loc, delta)
    key = (dec.meaning, dec.detector, dec.fields, dec.problems, dec.tag, loc.zone)
    got = _DETAILS.get(key)
    if got is None:
        got = _make_detail(dec, loc, delta)
        if len(_DETAILS) < _MAX_DETAILS:
            _DETAILS[key] = got
    return got


def _make_detail(dec: Decoded, loc: Located, delta: float | None) -> str:
    parts = [dec.meaning or dec.detector]
    if dec.time is not None:
        when = iso(dec.time) or "?"
        if when[:19] not in parts[0]:
            parts.append(f"minted {when}")
        if delta is not None and loc.line_time is not None:
            parts.append(f"{fmt_gap(dec.time, loc.line_time)} from line {loc.line}")
    shown = [f"{k} {v}" for k, v in dec.fields if k not in ("minted", "time") and v not in parts[0]]
    if shown:
        parts.append("; ".join(shown[:6]))
    if dec.problems:
        parts.append("problems: " + ", ".join(dec.problems))
    if loc.zone:
        where = ZONE_NAMES.get(loc.zone, "quoted text")
        parts.append(
            f"inside {where} (down-weighted)"
            if loc.zone == 1
            else f"quoted: inside {where} (down-weighted, never decides)"
        )
    parts.append(f"[{dec.tag}] (docs/fingerprints.md#{dec.detector})")
    return "; ".join(parts)


_by_line = attrgetter("line")


def _all_truncated(problems: tuple[str, ...]) -> bool:
    return all(p == "truncated" for p in problems)


#: A group of artifacts of one kind (identical values count once): detector, provider, host,
#: shape, and whether it is genuine.
_Kind = tuple[str, str | None, str | None, str, bool]


class _Tally:
    """What one session's groups add up to, before their noisy-ors: the scoring inputs."""

    __slots__ = (
        "anomalies", "contributions", "first_party", "host_beside", "host_makers", "host_parts", "hosts",
        "lookalike_only", "quoted", "self_hosted", "sig_models", "store_bytes", "vias",
    )  # fmt: skip

    def __init__(self) -> None:
        # (plain dicts, filled by get-or-insert: a defaultdict per session costs more than the few keys it gets)
        self.contributions: dict[str, list[float]] = {}
        self.quoted: dict[str, list[float]] = {}  # from quoted zones only: listed, never decisive
        self.hosts: dict[str, float] = {}
        self.host_parts: dict[str, list[float]] = {}  # host-only evidence, per group (a noisy-or, as for providers)
        self.host_makers: dict[str, set[str]] = {}  # the makers the host evidence itself names
        # per host: the makers beside whose stack all its evidence counts (None: some counts anywhere)
        self.host_beside: dict[str, frozenset[str] | None] = {}
        self.vias: dict[str, float] = {}
        self.lookalike_only: dict[str, bool] = {}
        self.first_party: list[str] = []
        self.self_hosted: list[str] = []
        self.anomalies: dict[str, list[Evidence]] = defaultdict(list)  # (_list_groups counts into it by key)
        self.store_bytes: dict[str, int] = {}  # (plain dicts: a Counter per session costs more than its counts)
        self.sig_models: dict[str, int] = {}

    def facts(self) -> dict[str, Any]:
        """The scoring facts :func:`attribute` reads: per-provider and per-host noisy-ors, and the rest as counted.

        The tally's own maps are handed on (a tally is read once, by the session that made it).
        """
        scores = {p: _noisy_or(cs) for p, cs in self.contributions.items()} if self.contributions else {}
        quoted = self.quoted
        host_beside = self.host_beside
        return {
            "scores": scores,
            "quoted": {p: _noisy_or(cs) for p, cs in quoted.items() if p not in scores} if quoted else {},
            "hosts": self.hosts,
            "host_scores": {h: _noisy_or(cs) for h, cs in self.host_parts.items()} if self.host_parts else {},
            "host_makers": self.host_makers,
            "host_only_beside": {h: m for h, m in host_beside.items() if m is not None} if host_beside else {},
            "vias": self.vias,
            "lookalike_only": self.lookalike_only,
            "first_party": self.first_party,
            "self_hosted": self.self_hosted,
            "anomalies": self.anomalies,
            "store_bytes": self.store_bytes,
            "sig_models": self.sig_models,
        }


def build_evidence(
    located: Sequence[Located], resolve: Callable[[Located], str] | None = None
) -> tuple[list[Evidence], dict[str, Any]]:
    """Group located artifacts into evidence records and scoring inputs.

    Returns the evidence list (examples per group, plus every anomaly) and a dict of
    scoring facts: per-provider scores, hosts, self-hosted signs, anomalies.
    """
    groups: dict[_Kind, list[Located]] = {}  # the artifacts of each kind, in the order kinds first appear
    for loc in located:
        dec = loc.decoded
        problems = dec.problems  # dec.genuine, inline (a property call per artifact)
        gkey = (dec.detector, dec.provider, dec.host, dec.shape, not problems or _all_truncated(problems))
        group = groups.get(gkey)
        if group is None:
            groups[gkey] = [loc]
        else:
            group.append(loc)
    tally = _Tally()
    totals = _weigh_groups(tally, groups)
    evidence = _list_groups(tally, groups, totals, resolve)
    facts = tally.facts()
    evidence.sort(key=_by_weight_line)
    return evidence, facts


def _by_weight_line(e: Evidence) -> tuple[float, int]:
    """The order evidence is listed in: heaviest first, then by line."""
    return -e.weight, e.line


def _weigh_groups(tally: _Tally, groups: dict[_Kind, list[Located]]) -> list[int]:
    """Add each group's weight to the provider, host, router and self-hosted tallies.

    Sorts each group by line; returns each group's count of distinct values, in order.
    Only the stack's own fields decide: quoted hits (text, tool arguments, file contents,
    tool output) are kept apart, for a note and for a verdict-less listing.
    """
    contributions, quoted, lookalike_only = tally.contributions, tally.quoted, tally.lookalike_only
    hosts, host_makers, host_parts, vias = tally.hosts, tally.host_makers, tally.host_parts, tally.vias
    totals: list[int] = []
    for key, locs in groups.items():
        detector, provider, host, shape, genuine = key
        if len(locs) > 1:
            locs.sort(key=_by_line)
        n_model = n_quoted = 0
        for x in locs:
            if x.zone:
                n_quoted += x.count
            else:
                n_model += x.count
        totals.append(n_model + n_quoted)
        dec0 = locs[0].decoded
        w_model = STRENGTH_WEIGHT.get(dec0.strength, 0.2) if genuine else 0.0  # the group's weight from model output
        if provider and w_model > 0 and n_model:
            _add(contributions, provider, w_model * (1 - 0.5**n_model))
            imitable = detector in LOOKALIKE_DETECTORS and dec0.time is None
            lookalike_only[provider] = lookalike_only.get(provider, True) and imitable
        elif provider and w_model > 0:
            _add(quoted, provider, w_model * QUOTED_FACTOR * (1 - 0.5**n_quoted))
        if not (genuine and n_model):
            continue
        if detector == "http-endpoint" and provider and not host:
            tally.first_party.append(dec0.value.split("/", 1)[0])
        if host:
            hosts[host] = max(hosts.get(host, 0.0), STRENGTH_WEIGHT.get(dec0.strength, 0.2))
            only = HOST_ONLY_BESIDE.get(shape)
            tally.host_beside[host] = only if tally.host_beside.get(host, only) is not None else None
            if provider:
                makers = host_makers.get(host)
                if makers is None:
                    host_makers[host] = {provider}
                else:
                    makers.add(provider)
            else:  # host-only evidence (an endpoint, a header, a cloud's own id): independent of the maker's
                _add(host_parts, host, STRENGTH_WEIGHT.get(dec0.strength, 0.2) * (1 - 0.5**n_model))
        if dec0.via:
            vias[dec0.via] = max(vias.get(dec0.via, 0.0), STRENGTH_WEIGHT.get(dec0.strength, 0.2))
        if provider is None and (shape in SELF_HOSTED_SHAPES or detector == "empty-signature"):
            tally.self_hosted.append(f"{shape or detector} ×{n_model}")
    return totals


def _add(parts: dict[str, list[float]], key: str, value: float) -> None:
    """Append ``value`` to ``parts[key]`` (a new list for a new key)."""
    got = parts.get(key)
    if got is None:
        parts[key] = [value]
    else:
        got.append(value)


def _list_groups(
    tally: _Tally, groups: dict[_Kind, list[Located]], totals: list[int], resolve: Callable[[Located], str] | None
) -> list[Evidence]:
    """Each group's first examples and its anomalies, as evidence; counts store bytes and signature models."""
    anomalies, store_bytes, sig_models = tally.anomalies, tally.store_bytes, tally.sig_models
    evidence: list[Evidence] = []
    for (key, locs), n_total in zip(
        groups.items(), totals, strict=False
    ):  # (one total per group; strict costs per group)
        detector, provider, host, _shape, genuine = key
        item_ids = detector == "openai-item-id" and genuine
        signatures = detector == "anthropic-signature"
        for i, loc in enumerate(locs):
            dec = loc.decoded
            delta = None
            if dec.time is not None and loc.line_time is not None:
                delta = dec.time - loc.line_time
            if item_ids and not loc.zone:
                body = dec.value.split("_", 1)[-1]
                if len(body) == 50:
                    sb_key = body[16:18]
                    store_bytes[sb_key] = store_bytes.get(sb_key, 0) + 1
            if signatures and not loc.zone:
                for k, v in dec.fields:
                    if k == "model" and v:
                        sig_models[v] = sig_models.get(v, 0) + 1
            anomaly = _anomaly(dec, loc, delta) if dec.problems or delta is not None else None
            if i >= EXAMPLES and (anomaly is None or len(anomalies[anomaly]) >= MAX_LISTED_ANOMALIES):
                if anomaly:
                    anomalies[anomaly].append(_placeholder)
                continue
            if not loc.field and resolve is not None:
                loc.field = resolve(loc)
            # the weight of this zone, with the group's genuine (part of its key)
            weight = STRENGTH_WEIGHT.get(dec.strength, 0.2) if genuine else 0.0
            value = dec.value
            ev = Evidence(  # detector, provider, host, weight, line, field, value, detail, count, time, delta_s, tag
                detector, provider, host, weight * QUOTED_FACTOR if loc.zone else weight, loc.line, loc.field,
                value if len(value) <= 120 else value[:60] + "…" + value[-16:], _detail(dec, loc, delta),
                n_total, dec.time, delta, dec.tag,
            )  # fmt: skip
            if anomaly:
                anomalies[anomaly].append(ev)
            if i == 0 and n_total > 1:
                ev.detail += f"; {n_total} distinct values of this kind in the session"
            evidence.append(ev)
    return evidence


EXAMPLES = 2
MAX_LISTED_ANOMALIES = 20
_placeholder = Evidence("", None, None, 0.0, 0, "", "", "")


_TRUNCATED = frozenset({"truncated", "bad-structure"})
_IMITATION = frozenset({"implausible-time", "bad-marker", "bad-store-byte", "not-uuid7"})


def _anomaly(dec: Decoded, loc: Located, delta: float | None) -> str | None:
    if loc.zone:
        return None  # quoted text proves nothing about this session's stack, not even a broken copy
    if dec.problems:
        if not _TRUNCATED.isdisjoint(dec.problems) and dec.detector in (
            "fernet",
            "anthropic-signature",
            "gemini-signature",
        ):
            return "truncated-blob"
        if not _IMITATION.isdisjoint(dec.problems) and dec.detector in ("openai-item-id", "anthropic-id", "fernet"):
            return "imitation-id"
    if (
        delta is not None
        and dec.genuine
        and dec.tag != "guess"  # a time read by a guessed layout is shown, never held against the line
        and not loc.zone
        and (delta > loc.after_tol or delta < -TOL_BEFORE_S)
    ):
        return "time-mismatch"
    return None


def _noisy_or(parts: Iterable[float]) -> float:
    """``1 - prod(1 - p)``: the chance that at least one part holds, the parts independent."""
    out = 1.0
    for p in parts:
        out *= 1.0 - p
    return 1.0 - out


#: The verdict of a session with no located artifact, per (format, declared provider and model, catalogue).
_BARE: dict[tuple[Any, ...], tuple[str, str | None, float, str | None, str]] = {}


def attribute(
    summary: SessionSummary,
    located: Sequence[Located],
    lookup: Any,
    resolve: Callable[[Located], str] | None = None,
) -> Attribution:
    """Score one session's evidence and produce its verdict.

    The steps, in order: weigh the evidence (:func:`build_evidence`), drop look-alike credit,
    pick the provider and its confidence, pick the host (which may raise the confidence), then
    the flags. Notes and reasons keep the order the steps give them.

    Without located artifacts, what the steps read of the session is its format and its
    declared provider and model (its declared ``models`` only beside signature models): that
    verdict is remembered per those and the catalogue, when it lists no evidence, flag or reason.
    """
    if located:
        return _attribute(summary, located, lookup, resolve)
    key = (summary.format, summary.declared_provider, summary.declared_model, lookup)
    try:
        got = _BARE.get(key)
    except TypeError:  # (a lookup that cannot be a key)
        return _attribute(summary, located, lookup, resolve)
    if got is not None:
        provider, host, conf, via, text = got
        return Attribution(provider, host, conf, via, [], [], text, [])
    verdict = _attribute(summary, located, lookup, resolve)
    if not (verdict.evidence or verdict.flags or verdict.reasons) and len(_BARE) < MEMO_MAX:
        _BARE[key] = (verdict.provider, verdict.host, verdict.confidence, verdict.via, verdict.summary)
    return verdict


def _attribute(
    summary: SessionSummary,
    located: Sequence[Located],
    lookup: Any,
    resolve: Callable[[Located], str] | None,
) -> Attribution:
    """:func:`attribute`, every step taken."""
    evidence, facts = build_evidence(located, resolve)
    if summary.format in FORMAT_HOSTS:
        add_format_host(summary.format, evidence, facts)
    d_provider, d_host, d_desc = declared_of(summary, lookup)
    flags: list[str] = []
    notes: list[str] = []
    reasons: list[Reason] = []
    scores: dict[str, float] = facts["scores"]
    if "openai" in scores and facts["lookalike_only"].get("openai"):
        scores = without_lookalikes(scores, facts, d_provider, d_desc, notes)
    note_artifacts(evidence, facts, notes)
    provider, conf = pick_provider(scores, facts, d_provider, d_desc, notes, flags, reasons)
    decided = provider in scores and scores[provider] >= 0.5  # artifacts, not the declaration, decided it
    host, host_note, conf = pick_host(facts, provider, conf, d_host, notes)
    if summary.format == "codex" and provider == "openai":
        host = check_store_bytes(summary, facts, host, d_desc, flags, reasons)
    if facts["sig_models"] and summary.models:
        check_signature_models(summary, facts["sig_models"], notes, flags, reasons)
    flag_mixed_and_anomalies(scores, facts, flags, reasons)
    if host_note:
        notes.append(host_note)
    ev_vias: dict[str, float] = facts["vias"]
    via = max(ev_vias.items(), key=lambda kv: kv[1])[0] if ev_vias else None
    if via:
        notes.append(f"routed via {via}")
    ordered: list[str] = [f for f in _FLAG_ORDER if f in flags] if flags else []
    if decided and not flags:
        conf, why = calibration.calibrate(conf)
        if why:
            notes.append(why)
    # (positional, in field order: provider, host, confidence, via, flags, evidence, summary, reasons)
    return Attribution(
        provider, host, round(min(max(conf, 0.0), 0.99), 3), via, ordered, evidence, "; ".join(notes), reasons
    )


#: The order of a session verdict's flags.
_FLAG_ORDER = ("declared-mismatch", "time-mismatch", "imitation-id", "mixed-providers", "truncated-blob")
