"""Evidence scoring: from located artifacts to a verdict (provider, host, confidence, flags).

The scoring is documented in :data:`EXPLAIN` (printed by ``musetui scan --explain``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from musetui.core._pickling import reduce_by_fields
from musetui.core.fingerprints.types import Decoded
from musetui.core.model import HOSTS, PROVIDERS, Attribution, Evidence, SessionSummary, fmt_gap, iso
from musetui.core.reasons import (
    Anomaly,
    DeclaredMismatch,
    MixedProviders,
    Outlier,
    Reason,
    short_value,
)
from musetui.core.safetext import json_name
from musetui.core.sources.zones import ZONE_NAMES

#: Evidence minted this many seconds *after* the line that records it is impossible.
TOL_AFTER_S = 5.0
#: In raw API captures the reference is the response's ``created_at``: items are minted
#: during the response (up to ~45 s later in real captures; long responses take minutes).
TOL_AFTER_CREATED_S = 600.0
#: Evidence minted this long *before* its line (first occurrence, model output) is suspicious.
TOL_BEFORE_S = 600.0

STRENGTH_WEIGHT = {"strong": 1.0, "medium": 0.6, "weak": 0.2}
#: Host evidence that names no other maker raises the verdict's confidence by this share of
#: the host's own confidence: 1 - (1 - c) * (1 - HOST_AGREEMENT * host_confidence).
HOST_AGREEMENT = 0.5
#: Formats that only one cloud serves: the format itself is host evidence.
FORMAT_HOSTS = {
    "bedrock-converse": ("bedrock", "the Converse format (output.message, stopReason, metrics.latencyMs) is Amazon Bedrock's own API"),
}
QUOTED_FACTOR = 0.25
#: Providers that serve other makers' open models: a model name does not contradict them.
SERVING_PROVIDERS = frozenset({"groq"})
#: The family words of Claude's public model names. A signature naming none of them names an
#: internal model (LangChain's Bedrock cassettes: ``claude-saffron`` for ``claude-sonnet-5``).
CLAUDE_FAMILIES = ("opus", "sonnet", "haiku", "instant")
#: Detectors whose shapes point to self-hosted serving (no provider signature).
SELF_HOSTED_SHAPES = frozenset(
    {"call_+32hex", "chatcmpl-tool-hex", "chatcmpl-+digits", "chatcmpl-+32b62", "fp_ollama", "llama.cpp-build", "call_+8lower"}
)
#: OpenAI-credited shapes that OpenAI-compatible servers mint too (Together, Fireworks, vLLM,
#: LiteLLM and others copy ``call_`` + 24 and ``chatcmpl-`` ids; xAI and Groq copy ``fp_``):
#: against a declared non-OpenAI model they earn OpenAI nothing (docs/fingerprints.md#tool-id).
LOOKALIKE_DETECTORS = frozenset({"tool-id", "chatcmpl-id", "system-fingerprint", "key"})

EXPLAIN = f"""\
musetui attribution: how a verdict is scored
============================================

Every detector, its evidence class and the real captures it was checked on are
described in docs/fingerprints.md (shipped with musetui's source).

0. Formats. muse, codex (rollouts and `codex exec --json` streams), claude-code
   (projects, and `claude -p --output-format stream-json` runs as lines or as
   one JSON array), openai-responses, openai-chat, anthropic-messages, gemini,
   bedrock-converse (Converse and ConverseStream bodies), http-capture (VCR
   cassettes and HAR files: one session per file, one item per interaction) and
   generic.

1. Evidence. Every string of every record goes through the decoders (OpenAI
   item ids, Fernet tokens, tool-call id shapes, Anthropic ids and signatures,
   Gemini signatures, Azure/Anthropic/DeepSeek/Groq/xAI/Vertex keys, OpenRouter
   ids). In HTTP captures the request URL's host and the response headers are
   evidence too (the catalogue's [[endpoint]] and [[header]] tables), and each
   response body is read by the adapter of its own format. Each hit is located
   (file, line, field) and carries its detector, provider, host, router,
   strength and evidence class ([verified], [source] or [guess]).
   Identical values count once (replayed history does not add weight).

2. Weights. strong = {STRENGTH_WEIGHT['strong']}, medium = {STRENGTH_WEIGHT['medium']}, weak = {STRENGTH_WEIGHT['weak']}.
   Zones: each format declares the fields its serving stack writes (ids,
   signatures, encrypted content, usage keys, the response envelope). Hits
   anywhere else are quoted: user prompts, tool results, base instructions,
   compaction history, request bodies of captures, and also the model's own
   reply and reasoning text, tool-call arguments and file contents, and JSON
   text escaped inside a string. Quoted hits are listed (weight x {QUOTED_FACTOR}, the
   zone named in the detail) but never scored: no provider, host or router
   credit, no flag. Artifacts that fail their own checks (implausible time,
   wrong marker or store byte) give no provider weight: they raise
   `imitation-id`. Account and request-id headers count only with the value
   shape the service sends (not a placeholder such as test_... or xxx), and
   no provider or host header counts when the request went to a loopback or
   private-network address.

3. Per provider, each detector group contributes w * (1 - 0.5^n) for n distinct
   values; groups combine as a noisy-or: score = 1 - prod(1 - contribution).

4. Verdict. `provider` is the model's maker and serving stack: openai, anthropic,
   meta, moonshot, google, deepseek, xai, groq, mistral, alibaba, zhipu, amazon
   or unknown. The provider with the highest score wins when its score is >= 0.5
   (strong artifacts). Declared fields (Muse provider_id/model_id, Codex
   model_provider, turn_context.model, Claude message.model, API `model`, the
   model in a capture's request URL) map through the model catalogue to a
   provider; they add agreement (confidence = 1 - (1 - score) * 0.7) but never
   outweigh strong artifacts. With no artifacts, a declaration gives its
   provider at 0.5 (medium at most; 0.6 when self-hosted shapes such as
   call_+32hex, unsigned reasoning, Ollama's chatcmpl-<n> and fp_ollama or
   llama.cpp's ids agree with a self-hosted model). With neither, or with
   quoted hits only, the verdict is `unknown` at 0.0.
   Look-alikes: shapes that OpenAI-compatible servers mint too (call_ + 24,
   chatcmpl- ids, system_fingerprint, service_tier) earn OpenAI nothing against a
   declared non-OpenAI model, and a call_ id without one upper-case letter is
   never OpenAI's. Below 0.5 and with no declaration, such imitable shapes alone
   (tool-id, chatcmpl-id, system-fingerprint, key) name no provider: `unknown`.

5. Host (azure, bedrock, vertex, fireworks, or null). Only host evidence decides
   a host: the endpoint of a capture, Azure-only keys and headers
   (content_filters, prompt_filter_results, apim-request-id), Bedrock/Vertex id
   prefixes and headers (x-amzn-bedrock-*), Vertex-only Gemini keys (trafficType,
   createTime), the Bedrock variant of Anthropic signatures, a router's named
   upstream, Fireworks model paths or raw_output. A request sent to a maker's
   own API (api.openai.com, api.deepseek.com …) has no cloud host, whatever its
   body's keys look like. A declared route (Muse azure/…, Codex model_provider
   azure, a Bedrock model id) gives the host marked "declared". Ids and Fernet
   blobs never decide OpenAI vs Azure; the new50 store byte is host evidence
   only for Codex, whose client policy is known (store:true only for Azure).
   Bedrock: tooluse_ ids, msg_bdrk_/toolu_bdrk_ ids and the Converse format
   itself (only Bedrock serves it); tooluse_ names no maker (Nova mints them
   too). The host has its own confidence (noisy-or of its host-only evidence,
   shown in the summary); when that evidence names no other maker, it raises
   the verdict's: c -> 1 - (1 - c) * (1 - {HOST_AGREEMENT} * host confidence).

5a. Via (openrouter, litellm, portkey, helicone, huggingface, snowflake, or null): the router the
   response passed through, from its endpoint, its headers or its ids
   (OpenRouter's gen-<seconds>-<random>). A router is never the provider.

6. Time cross-checks. Each decoded time (id, Fernet, UUIDv7) is compared with
   the time recorded on its line. Tolerance: minted more than {TOL_AFTER_S:.0f} s AFTER
   its line is impossible (in raw API captures the reference is the response's
   created_at, and items may be minted up to {TOL_AFTER_CREATED_S:.0f} s after it); more
   than {TOL_BEFORE_S:.0f} s BEFORE its line (first
   occurrence, outside quoted material) is suspicious. Either raises
   `time-mismatch`, with the delta in the evidence (shown between the two
   times cut to the whole second, as every clock on screen shows them). Anthropic request ids are
   normally 2-31 s before the line; long responses take minutes. A time read by
   a [guess] layout (Gemini responseIds) is shown but never raises it.
   Recorded line times that run backwards (a line recorded more than {TOL_BEFORE_S:.0f} s
   before the latest line above it) raise `time-mismatch` too, naming both lines.
   The times compared are those the scan reads anyway: of the records its format
   observes, and of every line that holds an artifact.

7. Flags. declared-mismatch (declared provider/model family differs from a
   >= 0.5 evidence verdict, or a signature names another public model; an internal name such as
   claude-saffron is noted, never flagged); time-mismatch;
   imitation-id; mixed-providers (two providers each >= 0.6 from model output;
   or, in an HTTP capture judged exchange by exchange, model calls that went
   to two providers: the verdict is then the majority's, the others listed);
   truncated-blob (a Fernet token or signature whose structure is cut or broken);
   provider-switch (see 9); outlier (see 8). Each flag keeps its reason (what was compared, the counts,
   the first line): the app, `y`, `show`, the report and `scan PATH --explain`
   print the same sentence, and an outlier record's JSON detail is that sentence.

8. Outliers. A session is an outlier when its provider (known, not `unknown`)
   differs from the provider shared by a strict majority of its siblings
   (same parent, at least 2 others), or from the provider of at least 60% of
   the sessions of the same format under the same root (at least 3 sessions).
   A session that agrees with such a fleet majority is never an outlier, even
   when its own siblings are mostly outliers themselves.

9. Items and segments. Each item (a record; an HTTP capture's exchange) gets a
   verdict from its own artifacts in the stack's fields, by the weights of 2-4:
   a score >= 0.5 names its provider (host from its own host evidence); weak
   artifacts of the declared provider, or a self-hosted server's shapes, confirm
   the declaration; any other item takes the declared provider at 0.5, or is
   `unknown` with no declaration. `show --line` and `y` print the item's verdict,
   then its segment's and the session's. Segments (the record's `segments`:
   first_line, last_line, items, provider, host, started_at, ended_at) are the
   maximal runs of agreeing items (`items` counts the records of the run; in a
   file read in slices or resumed after an append, the records read before are
   counted in the segment that holds them): an item with strong artifacts, or one that
   confirms the declaration, starts a new segment when its provider (or a host
   both show) differs; every other item, `unknown` ones included, joins the run
   around it. A session that never switches has one segment, with the
   session's verdict. `provider-switch`: two segments differ, strong evidence
   backs the change on at least one side and neither side holds strong evidence
   for the other's provider; the reason names the line. A segment whose strong
   artifacts contradict the declared model raises `declared-mismatch`, naming
   its lines. A capture's exchanges are judged as above (each against the model
   it names) and form its segments the same way.
"""


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
        parts.append(f"inside {where} (down-weighted)" if loc.zone == 1 else f"quoted: inside {where} (down-weighted, never decides)")
    parts.append(f"[{dec.tag}] (docs/fingerprints.md#{dec.detector})")
    return "; ".join(parts)


_by_line = attrgetter("line")


def _all_truncated(problems: tuple[str, ...]) -> bool:
    return all(p == "truncated" for p in problems)


def build_evidence(
    located: Sequence[Located], resolve: Callable[[Located], str] | None = None
) -> tuple[list[Evidence], dict[str, Any]]:
    """Group located artifacts into evidence records and scoring inputs.

    Returns the evidence list (examples per group, plus every anomaly) and a dict of
    scoring facts: per-provider scores, hosts, self-hosted signs, anomalies.
    """
    groups: dict[tuple[str, str | None, str | None, str, bool], list[Located]] = {}
    for loc in located:
        dec = loc.decoded
        problems = dec.problems  # dec.genuine, inline (a property call per artifact)
        gkey = (dec.detector, dec.provider, dec.host, dec.shape, not problems or _all_truncated(problems))
        group = groups.get(gkey)
        if group is None:
            groups[gkey] = [loc]
        else:
            group.append(loc)
    evidence: list[Evidence] = []
    contributions: dict[str, list[float]] = defaultdict(list)
    quoted: dict[str, list[float]] = defaultdict(list)  # from quoted zones only: listed, never decisive
    hosts: dict[str, float] = defaultdict(float)
    host_parts: dict[str, list[float]] = defaultdict(list)  # host-only evidence, per group (a noisy-or, as for providers)
    host_makers: dict[str, set[str]] = defaultdict(set)  # the makers the host evidence itself names
    vias: dict[str, float] = defaultdict(float)
    lookalike_only: dict[str, bool] = {}
    first_party: list[str] = []
    self_hosted: list[str] = []
    anomalies: dict[str, list[Evidence]] = defaultdict(list)
    store_bytes: dict[str, int] = {}  # (plain dicts: a Counter per session costs more than its counts)
    sig_models: dict[str, int] = {}
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
        n_total = n_model + n_quoted
        dec0 = locs[0].decoded
        w_model = STRENGTH_WEIGHT.get(dec0.strength, 0.2) if genuine else 0.0  # the group's weight from model output
        # Only the stack's own fields decide: quoted hits (text, tool arguments, file contents,
        # tool output) are kept apart, for a note and for a verdict-less listing.
        if provider and w_model > 0 and n_model:
            contributions[provider].append(w_model * (1 - 0.5**n_model))
            imitable = detector in LOOKALIKE_DETECTORS and dec0.time is None
            lookalike_only[provider] = lookalike_only.get(provider, True) and imitable
        elif provider and w_model > 0:
            quoted[provider].append(w_model * QUOTED_FACTOR * (1 - 0.5**n_quoted))
        if detector == "http-endpoint" and provider and not host and genuine and n_model:
            first_party.append(dec0.value.split("/", 1)[0])
        if host and genuine and n_model:
            hosts[host] = max(hosts[host], STRENGTH_WEIGHT.get(dec0.strength, 0.2))
            if provider:
                host_makers[host].add(provider)
            else:  # host-only evidence (an endpoint, a header, a cloud's own id): independent of the maker's
                host_parts[host].append(STRENGTH_WEIGHT.get(dec0.strength, 0.2) * (1 - 0.5**n_model))
        if dec0.via and genuine and n_model:
            vias[dec0.via] = max(vias[dec0.via], STRENGTH_WEIGHT.get(dec0.strength, 0.2))
        if provider is None and genuine and n_model and (shape in SELF_HOSTED_SHAPES or detector == "empty-signature"):
            self_hosted.append(f"{shape or detector} ×{n_model}")
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
    scores = {p: 1.0 - _prod(1.0 - c for c in cs) for p, cs in contributions.items()}
    facts: dict[str, Any] = {
        "scores": scores,
        "quoted": {p: 1.0 - _prod(1.0 - c for c in cs) for p, cs in quoted.items() if p not in scores},
        "hosts": dict(hosts),
        "host_scores": {h: 1.0 - _prod(1.0 - c for c in cs) for h, cs in host_parts.items()},
        "host_makers": dict(host_makers),
        "vias": dict(vias),
        "lookalike_only": lookalike_only,
        "first_party": first_party,
        "self_hosted": self_hosted,
        "anomalies": anomalies,
        "store_bytes": store_bytes,
        "sig_models": sig_models,
    }
    evidence.sort(key=lambda e: (-e.weight, e.line))
    return evidence, facts


EXAMPLES = 2
MAX_LISTED_ANOMALIES = 20
_placeholder = Evidence("", None, None, 0.0, 0, "", "", "")


_TRUNCATED = frozenset({"truncated", "bad-structure"})
_IMITATION = frozenset({"implausible-time", "bad-marker", "bad-store-byte", "not-uuid7"})


def _anomaly(dec: Decoded, loc: Located, delta: float | None) -> str | None:
    if loc.zone:
        return None  # quoted text proves nothing about this session's stack, not even a broken copy
    if dec.problems:
        if not _TRUNCATED.isdisjoint(dec.problems) and dec.detector in ("fernet", "anthropic-signature", "gemini-signature"):
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
    return "; ".join(f"{who}: " + ", ".join(f"{d} ×{n}" for d, n in sorted(ds.items())) for who, ds in sorted(per.items()))


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
    """Score one session's evidence and produce its verdict."""
    evidence, facts = build_evidence(located, resolve)
    format_host = FORMAT_HOSTS.get(summary.format)
    if format_host is not None:  # a format only one cloud serves is host evidence by itself
        host_name, why = format_host
        facts["hosts"][host_name] = max(facts["hosts"].get(host_name, 0.0), 1.0)
        facts["host_scores"][host_name] = 1.0 - (1.0 - facts["host_scores"].get(host_name, 0.0)) * 0.5
        evidence.append(Evidence("format", None, host_name, 1.0, 1, "", summary.format, why, tag="source"))
        evidence.sort(key=lambda e: (-e.weight, e.line))
    scores: dict[str, float] = facts["scores"]
    d_provider, d_host, d_desc = declared_family(summary, lookup)
    flags: list[str] = []
    notes: list[str] = []
    reasons: list[Reason] = []
    if "openai" in scores and facts["lookalike_only"].get("openai"):
        if d_provider and d_provider != "openai":
            notes.append(
                f"OpenAI-shaped ids only (shapes compatible servers mint too): no OpenAI credit against the declared {d_desc}"
            )
            scores = {p: v for p, v in scores.items() if p != "openai"}
        elif facts["self_hosted"] and d_provider is None:
            notes.append(
                "OpenAI-shaped ids only, beside a self-hosted server's own signs ("
                + ", ".join(facts["self_hosted"]) + "): a look-alike, no OpenAI credit"
            )
            scores = {p: v for p, v in scores.items() if p != "openai"}
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best, best_score = ranked[0] if ranked else (None, 0.0)
    second_score = ranked[1][1] if len(ranked) > 1 else 0.0
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
    # Host: evidence first, then the declaration, then Codex's known store policy.
    host: str | None = None
    host_note = ""
    ev_hosts: dict[str, float] = facts["hosts"]
    if ev_hosts and facts["first_party"]:
        notes.append(
            f"the request went to {', '.join(sorted(set(facts['first_party'])))}, a maker's own API: "
            f"body keys shaped like a cloud's ({', '.join(sorted(ev_hosts))}) do not make it one"
        )
        ev_hosts = {}
    if ev_hosts:
        host = max(ev_hosts.items(), key=lambda kv: kv[1])[0]
        host_conf = facts["host_scores"].get(host, 0.0)  # from evidence that shows the host and no maker
        host_note = f"host {host} ({max(host_conf, ev_hosts[host]):.2f}) from host-only evidence"
        makers: set[str] = facts["host_makers"].get(host, set())
        if provider != "unknown" and not makers - {provider} and host_conf > 0:
            # The host's own evidence names no other maker: it confirms where the provider's model ran.
            raised = 1.0 - (1.0 - conf) * (1.0 - HOST_AGREEMENT * host_conf)
            host_note += f", which agrees with {provider}: confidence {conf:.2f} -> {min(raised, 0.99):.2f}"
            conf = raised
    elif d_host and provider != "unknown":
        host = d_host
        host_note = f"host {host} (declared)"
    if summary.format == "codex" and provider == "openai":
        sb: dict[str, int] = facts["store_bytes"]
        declared_azure = (summary.declared_provider or "").lower() == "azure"
        if sb.get("00") and not declared_azure:
            _raise(flags, reasons, DeclaredMismatch("store-byte-00", d_desc, count=sb["00"]))
            host = host or "azure"
        elif sb.get("01") and declared_azure:
            _raise(flags, reasons, DeclaredMismatch("store-byte-01", d_desc, count=sb["01"]))
    sig_models: dict[str, int] = facts["sig_models"]
    if sig_models and summary.models:
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
    strong_model = [p for p, s in scores.items() if s >= 0.6]
    if len(strong_model) >= 2:
        _raise(flags, reasons, MixedProviders(tuple(sorted(strong_model))))
    anomalies: dict[str, list[Evidence]] = facts["anomalies"]
    for flag in ("time-mismatch", "imitation-id", "truncated-blob"):
        if anomalies.get(flag):
            ex = anomalies[flag][0]
            recorded = round(ex.time - ex.delta_s, 6) if ex.time is not None and ex.delta_s is not None else None
            _raise(flags, reasons, Anomaly(flag, len(anomalies[flag]), ex.line, ex.detector, short_value(ex.value), ex.time, recorded))
    if host_note:
        notes.append(host_note)
    ev_vias: dict[str, float] = facts["vias"]
    via = max(ev_vias.items(), key=lambda kv: kv[1])[0] if ev_vias else None
    if via:
        notes.append(f"routed via {via}")
    ordered: list[str] = [f for f in ("declared-mismatch", "time-mismatch", "imitation-id", "mixed-providers", "truncated-blob") if f in flags]
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


def _raise(flags: list[str], reasons: list[Reason], reason: Reason) -> None:
    """Raise ``reason.flag`` (once) and keep the reason: the one explanation every view prints."""
    reasons.append(reason)
    if reason.flag not in flags:
        flags.append(reason.flag)


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
