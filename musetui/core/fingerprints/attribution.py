"""Evidence scoring: from located artifacts to a verdict (provider, host, confidence, flags).

The scoring is documented in :data:`EXPLAIN` (printed by ``musetui scan --explain``; its text is
:mod:`musetui.core.fingerprints.explain`). The host step lives in :mod:`musetui.core.fingerprints.host`;
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
from musetui.core.model import HOSTS, PROVIDERS, Attribution, Evidence, SessionSummary, fmt_gap, iso
from musetui.core.reasons import (
    Anomaly,
    DeclaredMismatch,
    MixedProviders,
    Reason,
    short_value,
)
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
#: Providers that serve other makers' open models: a model name does not contradict them.
SERVING_PROVIDERS = frozenset({"groq"})
#: The family words of Claude's public model names. A signature naming none of them names an
#: internal model (LangChain's Bedrock cassettes: ``claude-saffron`` for ``claude-sonnet-5``).
CLAUDE_FAMILIES = ("opus", "sonnet", "haiku", "instant")
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
        self.contributions: dict[str, list[float]] = defaultdict(list)
        self.quoted: dict[str, list[float]] = defaultdict(list)  # from quoted zones only: listed, never decisive
        self.hosts: dict[str, float] = defaultdict(float)
        self.host_parts: dict[str, list[float]] = defaultdict(
            list
        )  # host-only evidence, per group (a noisy-or, as for providers)
        self.host_makers: dict[str, set[str]] = defaultdict(set)  # the makers the host evidence itself names
        # per host: the makers beside whose stack all its evidence counts (None: some counts anywhere)
        self.host_beside: dict[str, frozenset[str] | None] = {}
        self.vias: dict[str, float] = defaultdict(float)
        self.lookalike_only: dict[str, bool] = {}
        self.first_party: list[str] = []
        self.self_hosted: list[str] = []
        self.anomalies: dict[str, list[Evidence]] = defaultdict(list)
        self.store_bytes: dict[str, int] = {}  # (plain dicts: a Counter per session costs more than its counts)
        self.sig_models: dict[str, int] = {}

    def facts(self) -> dict[str, Any]:
        """The scoring facts :func:`attribute` reads: per-provider and per-host noisy-ors, and the rest as counted."""
        scores = {p: 1.0 - _prod(1.0 - c for c in cs) for p, cs in self.contributions.items()}
        return {
            "scores": scores,
            "quoted": {p: 1.0 - _prod(1.0 - c for c in cs) for p, cs in self.quoted.items() if p not in scores},
            "hosts": dict(self.hosts),
            "host_scores": {h: 1.0 - _prod(1.0 - c for c in cs) for h, cs in self.host_parts.items()},
            "host_makers": dict(self.host_makers),
            "host_only_beside": {h: m for h, m in self.host_beside.items() if m is not None},
            "vias": dict(self.vias),
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
    evidence.sort(key=lambda e: (-e.weight, e.line))
    return evidence, facts


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
            contributions[provider].append(w_model * (1 - 0.5**n_model))
            imitable = detector in LOOKALIKE_DETECTORS and dec0.time is None
            lookalike_only[provider] = lookalike_only.get(provider, True) and imitable
        elif provider and w_model > 0:
            quoted[provider].append(w_model * QUOTED_FACTOR * (1 - 0.5**n_quoted))
        if not (genuine and n_model):
            continue
        if detector == "http-endpoint" and provider and not host:
            tally.first_party.append(dec0.value.split("/", 1)[0])
        if host:
            hosts[host] = max(hosts[host], STRENGTH_WEIGHT.get(dec0.strength, 0.2))
            only = HOST_ONLY_BESIDE.get(shape)
            tally.host_beside[host] = only if tally.host_beside.get(host, only) is not None else None
            if provider:
                host_makers[host].add(provider)
            else:  # host-only evidence (an endpoint, a header, a cloud's own id): independent of the maker's
                host_parts[host].append(STRENGTH_WEIGHT.get(dec0.strength, 0.2) * (1 - 0.5**n_model))
        if dec0.via:
            vias[dec0.via] = max(vias[dec0.via], STRENGTH_WEIGHT.get(dec0.strength, 0.2))
        if provider is None and (shape in SELF_HOSTED_SHAPES or detector == "empty-signature"):
            tally.self_hosted.append(f"{shape or detector} ×{n_model}")
    return totals


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


def _prod(values: Iterable[float]) -> float:
    out = 1.0
    for v in values:
        out *= v
    return out


def _evidence_counts(evidence: Sequence[Evidence]) -> str:
    """``openai: openai-item-id ×6, fernet ×6; self-hosted: tool-id ×11``."""
    per: dict[str, dict[str, int]] = defaultdict(dict)
    for e in evidence:
        if e.detector == "outlier":
            continue
        who = e.provider or (e.host and f"host {e.host}") or "no provider"
        label = e.detector
        per[who][label] = max(per[who].get(label, 0), e.count)
    return "; ".join(
        f"{who}: " + ", ".join(f"{d} ×{n}" for d, n in sorted(ds.items())) for who, ds in sorted(per.items())
    )


def declared_family(summary: SessionSummary, lookup: Any) -> tuple[str | None, str | None, str]:
    """The provider and host a session declares, via the model catalogue; and a description."""
    dp = (summary.declared_provider or "").lower() or None
    model = summary.declared_model
    provider: str | None = None
    host: str | None = None
    if dp in HOSTS:
        host = dp
    elif dp in PROVIDERS and dp != "unknown":
        provider = dp
    if model:
        entry = lookup(model if not (host and "/" not in model) else f"{host}/{model}")
        if entry is None and "/" in model:
            entry = lookup(model.split("/", 1)[1])
        if entry is not None:
            if provider is None and entry.provider != "unknown":
                provider = entry.provider
            host = host or entry.host
    desc = " ".join(x for x in (summary.declared_provider, model) if x) or "nothing"
    return provider, host, desc


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
    """
    evidence, facts = build_evidence(located, resolve)
    if summary.format in FORMAT_HOSTS:
        add_format_host(summary.format, evidence, facts)
    d_provider, d_host, d_desc = declared_family(summary, lookup)
    flags: list[str] = []
    notes: list[str] = []
    reasons: list[Reason] = []
    scores: dict[str, float] = facts["scores"]
    if "openai" in scores and facts["lookalike_only"].get("openai"):
        scores = _without_lookalikes(scores, facts, d_provider, d_desc, notes)
    _note_artifacts(evidence, facts, notes)
    provider, conf = _pick_provider(scores, facts, d_provider, d_desc, notes, flags, reasons)
    decided = provider in scores and scores[provider] >= 0.5  # artifacts, not the declaration, decided it
    host, host_note, conf = pick_host(facts, provider, conf, d_host, notes)
    if summary.format == "codex" and provider == "openai":
        host = _check_store_bytes(summary, facts, host, d_desc, flags, reasons)
    if facts["sig_models"] and summary.models:
        _check_signature_models(summary, facts["sig_models"], notes, flags, reasons)
    _flag_mixed_and_anomalies(scores, facts, flags, reasons)
    if host_note:
        notes.append(host_note)
    ev_vias: dict[str, float] = facts["vias"]
    via = max(ev_vias.items(), key=lambda kv: kv[1])[0] if ev_vias else None
    if via:
        notes.append(f"routed via {via}")
    ordered: list[str] = [
        f
        for f in ("declared-mismatch", "time-mismatch", "imitation-id", "mixed-providers", "truncated-blob")
        if f in flags
    ]
    if decided and not flags:
        conf, why = calibration.calibrate(conf)
        if why:
            notes.append(why)
    return Attribution(
        provider=provider,
        host=host,
        via=via,
        confidence=round(min(max(conf, 0.0), 0.99), 3),
        flags=ordered,
        evidence=evidence,
        summary="; ".join(notes),
        reasons=reasons,
    )


def _without_lookalikes(
    scores: dict[str, float], facts: dict[str, Any], d_provider: str | None, d_desc: str, notes: list[str]
) -> dict[str, float]:
    """OpenAI's score earned only by shapes that compatible servers mint too: dropped against a
    declared non-OpenAI model, or beside a self-hosted server's own signs."""
    if d_provider and d_provider != "openai":
        notes.append(
            f"OpenAI-shaped ids only (shapes compatible servers mint too): no OpenAI credit against the declared {d_desc}"
        )
        scores = {p: v for p, v in scores.items() if p != "openai"}
    elif facts["self_hosted"] and d_provider is None:
        notes.append(
            "OpenAI-shaped ids only, beside a self-hosted server's own signs ("
            + ", ".join(facts["self_hosted"])
            + "): a look-alike, no OpenAI credit"
        )
        scores = {p: v for p, v in scores.items() if p != "openai"}
    return scores


def _note_artifacts(evidence: Sequence[Evidence], facts: dict[str, Any], notes: list[str]) -> None:
    """Note the artifacts counted, and those only quoted (listed, never counted)."""
    summary_counts = _evidence_counts(evidence)
    if summary_counts:
        notes.append("artifacts: " + summary_counts)
    quoted_only: dict[str, float] = facts["quoted"]
    if quoted_only:
        notes.append(
            "quoted artifacts (in text, tool-call arguments, files or tool output, not in the stack's own fields) point to "
            + ", ".join(f"{p} ({v:.2f})" for p, v in sorted(quoted_only.items(), key=lambda kv: -kv[1]))
            + ": listed, not counted"
        )


def _pick_provider(
    scores: dict[str, float],
    facts: dict[str, Any],
    d_provider: str | None,
    d_desc: str,
    notes: list[str],
    flags: list[str],
    reasons: list[Reason],
) -> tuple[str, float]:
    """The provider and its confidence: strong artifacts, else weak ones, else the declaration."""
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best, best_score = ranked[0] if ranked else (None, 0.0)
    second_score = ranked[1][1] if len(ranked) > 1 else 0.0
    if best is not None and best_score >= 0.5:
        provider = best
        conf = best_score * (1.0 - 0.5 * second_score)
        if d_provider == provider:
            conf = 1.0 - (1.0 - conf) * 0.7
            notes.append(f"declared {d_desc} agrees")
        elif d_provider and d_provider != provider and provider not in SERVING_PROVIDERS:
            _raise(flags, reasons, DeclaredMismatch("artifacts", d_desc, d_provider, provider))
    elif best is not None and best_score > 0 and d_provider is None and facts["lookalike_only"].get(best):
        provider = "unknown"
        conf = 0.0
        notes.append(
            f"only weak shapes that compatible servers mint too point to {best} ({best_score:.2f}): "
            "not enough for a verdict without a declaration"
        )
    elif best is not None and best_score > 0 and (d_provider is None or d_provider == best):
        provider = best
        conf = min(0.5, best_score + (0.2 if d_provider == best else 0.0))
        notes.append("weak artifacts only")
    elif d_provider:
        provider = d_provider
        conf = 0.5
        if facts["self_hosted"] and provider not in ("openai", "anthropic", "google"):
            conf = 0.6
            notes.append("self-hosted shapes (" + ", ".join(facts["self_hosted"]) + ") fit the declaration")
        elif best is not None and best_score > 0:
            notes.append(f"weak artifacts point to {best} ({best_score:.2f}), not enough to overrule")
        notes.append(f"declared {d_desc}; no artifact confirms or contradicts it")
    else:
        provider = "unknown"
        conf = 0.0
        if facts["self_hosted"]:
            notes.append("self-hosted shapes only (" + ", ".join(facts["self_hosted"]) + "): no provider signature")
        else:
            notes.append("no declaration and no provider artifacts")
    return provider, conf


def _check_store_bytes(
    summary: SessionSummary,
    facts: dict[str, Any],
    host: str | None,
    d_desc: str,
    flags: list[str],
    reasons: list[Reason],
) -> str | None:
    """Codex's known store policy (store:true only for Azure) against its item ids' store byte; the host it implies."""
    sb: dict[str, int] = facts["store_bytes"]
    declared_azure = (summary.declared_provider or "").lower() == "azure"
    if sb.get("00") and not declared_azure:
        _raise(flags, reasons, DeclaredMismatch("store-byte-00", d_desc, count=sb["00"]))
        host = host or "azure"
    elif sb.get("01") and declared_azure:
        _raise(flags, reasons, DeclaredMismatch("store-byte-01", d_desc, count=sb["01"]))
    return host


def _check_signature_models(
    summary: SessionSummary, sig_models: dict[str, int], notes: list[str], flags: list[str], reasons: list[Reason]
) -> None:
    """A thinking signature that names another public model than the declared ones: ``declared-mismatch``."""
    declared_models = {m.lower() for m in summary.models}
    for m in sig_models:
        if not any(m.lower() in dm or dm in m.lower() for dm in declared_models):
            if not any(family in m.lower() for family in CLAUDE_FAMILIES):
                notes.append(  # an internal name: nothing to compare it with
                    f"thinking signature names {m}, not a public model name: not compared with the declared "
                    + ", ".join(sorted(summary.models))
                )
                continue
            declared = ", ".join(sorted(summary.models))
            _raise(flags, reasons, DeclaredMismatch("signature-model", declared, found=m))


def _flag_mixed_and_anomalies(
    scores: dict[str, float], facts: dict[str, Any], flags: list[str], reasons: list[Reason]
) -> None:
    """``mixed-providers`` (two providers each >= 0.6), then one flag per kind of anomaly, with its first example."""
    strong_model = [p for p, s in scores.items() if s >= 0.6]
    if len(strong_model) >= 2:
        _raise(flags, reasons, MixedProviders(tuple(sorted(strong_model))))
    anomalies: dict[str, list[Evidence]] = facts["anomalies"]
    for flag in ("time-mismatch", "imitation-id", "truncated-blob"):
        if anomalies.get(flag):
            ex = anomalies[flag][0]
            recorded = round(ex.time - ex.delta_s, 6) if ex.time is not None and ex.delta_s is not None else None
            _raise(
                flags,
                reasons,
                Anomaly(flag, len(anomalies[flag]), ex.line, ex.detector, short_value(ex.value), ex.time, recorded),
            )


def _raise(flags: list[str], reasons: list[Reason], reason: Reason) -> None:
    """Raise ``reason.flag`` (once) and keep the reason: the one explanation every view prints."""
    reasons.append(reason)
    if reason.flag not in flags:
        flags.append(reason.flag)
