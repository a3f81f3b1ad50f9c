"""The steps of a verdict after its evidence is weighed: look-alike credit, the provider, the flags.

:func:`musetui.core.fingerprints.attribution.attribute` takes them in order; the host step is
:mod:`musetui.core.fingerprints.host`. Each step reads the scoring facts the evidence added up
to and the session's declaration, and adds its notes, flags and reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from musetui.core.model import HOSTS, PROVIDERS, Evidence, SessionSummary
from musetui.core.reasons import (
    Anomaly,
    DeclaredMismatch,
    MixedProviders,
    Reason,
    short_value,
)

#: Providers that serve other makers' open models: a model name does not contradict them.
SERVING_PROVIDERS = frozenset({"groq"})
#: The family words of Claude's public model names. A signature naming none of them names an
#: internal model (LangChain's Bedrock cassettes: ``claude-saffron`` for ``claude-sonnet-5``).
CLAUDE_FAMILIES = ("opus", "sonnet", "haiku", "instant")


def evidence_counts(evidence: Sequence[Evidence]) -> str:
    """``openai: openai-item-id ×6, fernet ×6; self-hosted: tool-id ×11``."""
    per: dict[str, dict[str, int]] = {}
    for e in evidence:
        label = e.detector
        if label == "outlier":
            continue
        who = e.provider or (e.host and f"host {e.host}") or "no provider"
        ds = per.get(who)
        if ds is None:
            ds = per[who] = {}
        ds[label] = max(ds.get(label, 0), e.count)
    return "; ".join(
        [f"{who}: " + ", ".join([f"{d} ×{n}" for d, n in sorted(per[who].items())]) for who in sorted(per)]
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


#: :func:`declared_family` per (declared provider, declared model, catalogue): a handful of distinct ones per corpus.
_DECLARED: dict[tuple[Any, ...], tuple[str | None, str | None, str]] = {}
#: :func:`declared_of` (and :func:`~musetui.core.fingerprints.attribution.attribute`) remember at most this many
#: values each (past it, each is computed again).
MEMO_MAX = 4096


def declared_of(summary: SessionSummary, lookup: Any) -> tuple[str | None, str | None, str]:
    """:func:`declared_family`, remembered: it reads the session's declared provider and model only."""
    key = (summary.declared_provider, summary.declared_model, lookup)
    try:
        got = _DECLARED.get(key)
    except TypeError:  # (a lookup that cannot be a key)
        return declared_family(summary, lookup)
    if got is None:
        got = declared_family(summary, lookup)
        if len(_DECLARED) < MEMO_MAX:
            _DECLARED[key] = got
    return got


def without_lookalikes(
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


def note_artifacts(evidence: Sequence[Evidence], facts: dict[str, Any], notes: list[str]) -> None:
    """Note the artifacts counted, and those only quoted (listed, never counted)."""
    summary_counts = evidence_counts(evidence) if evidence else ""
    if summary_counts:
        notes.append("artifacts: " + summary_counts)
    quoted_only: dict[str, float] = facts["quoted"]
    if quoted_only:
        notes.append(
            "quoted artifacts (in text, tool-call arguments, files or tool output, not in the stack's own fields) point to "
            + ", ".join(f"{p} ({v:.2f})" for p, v in sorted(quoted_only.items(), key=lambda kv: -kv[1]))
            + ": listed, not counted"
        )


def _by_score_desc(kv: tuple[str, float]) -> float:
    return -kv[1]


def pick_provider(
    scores: dict[str, float],
    facts: dict[str, Any],
    d_provider: str | None,
    d_desc: str,
    notes: list[str],
    flags: list[str],
    reasons: list[Reason],
) -> tuple[str, float]:
    """The provider and its confidence: strong artifacts, else weak ones, else the declaration."""
    ranked = sorted(scores.items(), key=_by_score_desc) if scores else []
    best, best_score = ranked[0] if ranked else (None, 0.0)
    second_score = ranked[1][1] if len(ranked) > 1 else 0.0
    if best is not None and best_score >= 0.5:
        provider = best
        conf = best_score * (1.0 - 0.5 * second_score)
        if d_provider == provider:
            conf = 1.0 - (1.0 - conf) * 0.7
            notes.append(f"declared {d_desc} agrees")
        elif d_provider and d_provider != provider and provider not in SERVING_PROVIDERS:
            raise_flag(flags, reasons, DeclaredMismatch("artifacts", d_desc, d_provider, provider))
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


def check_store_bytes(
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
        raise_flag(flags, reasons, DeclaredMismatch("store-byte-00", d_desc, count=sb["00"]))
        host = host or "azure"
    elif sb.get("01") and declared_azure:
        raise_flag(flags, reasons, DeclaredMismatch("store-byte-01", d_desc, count=sb["01"]))
    return host


def check_signature_models(
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
            raise_flag(flags, reasons, DeclaredMismatch("signature-model", declared, found=m))


def flag_mixed_and_anomalies(
    scores: dict[str, float], facts: dict[str, Any], flags: list[str], reasons: list[Reason]
) -> None:
    """``mixed-providers`` (two providers each >= 0.6), then one flag per kind of anomaly, with its first example."""
    if len(scores) >= 2:
        strong_model = [p for p, s in scores.items() if s >= 0.6]
        if len(strong_model) >= 2:
            raise_flag(flags, reasons, MixedProviders(tuple(sorted(strong_model))))
    anomalies: dict[str, list[Evidence]] = facts["anomalies"]
    if not anomalies:
        return
    for flag in ("time-mismatch", "imitation-id", "truncated-blob"):
        if anomalies.get(flag):
            ex = anomalies[flag][0]
            recorded = round(ex.time - ex.delta_s, 6) if ex.time is not None and ex.delta_s is not None else None
            raise_flag(
                flags,
                reasons,
                Anomaly(flag, len(anomalies[flag]), ex.line, ex.detector, short_value(ex.value), ex.time, recorded),
            )


def raise_flag(flags: list[str], reasons: list[Reason], reason: Reason) -> None:
    """Raise ``reason.flag`` (once) and keep the reason: the one explanation every view prints."""
    reasons.append(reason)
    if reason.flag not in flags:
        flags.append(reason.flag)
