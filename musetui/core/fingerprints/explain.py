"""The text of ``musetui scan --explain``: how a verdict is scored, with the scoring's own numbers.

The numbers are :mod:`musetui.core.fingerprints.attribution`'s, handed in by it (its ``EXPLAIN``),
so that the scoring and the text that explains it cannot disagree. The text is a table of
sections (:data:`SECTIONS`): fixed text, or a small renderer of the numbers a section names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Numbers:
    """The scoring's numbers that the explanation names."""

    strength_weight: dict[str, float]
    quoted_factor: float
    host_agreement: float
    tol_after_s: float
    tol_after_created_s: float
    tol_before_s: float


#: The heading.
_TITLE = """\
musetui attribution: how a verdict is scored
============================================"""

#: Where every detector is described.
_DOCS = """\
Every detector, its evidence class and the real captures it was checked on are
described in docs/fingerprints.md (shipped with musetui's source)."""

#: 0: the formats read.
_FORMATS = """\
0. Formats. muse, codex (rollouts and `codex exec --json` streams), claude-code
   (projects, and `claude -p --output-format stream-json` runs as lines or as
   one JSON array), openai-responses, openai-chat, anthropic-messages, gemini,
   bedrock-converse (Converse and ConverseStream bodies), http-capture (VCR
   cassettes and HAR files: one session per file, one item per interaction) and
   generic."""

#: 1: what counts as evidence, and where it is found.
_EVIDENCE = """\
1. Evidence. Every string of every record goes through the decoders (OpenAI
   item ids, Fernet tokens, tool-call id shapes, Anthropic ids and signatures,
   Gemini signatures, Azure/Anthropic/DeepSeek/Groq/xAI/Vertex keys, OpenRouter
   ids). In HTTP captures the request URL's host and the response headers are
   evidence too (the catalogue's [[endpoint]] and [[header]] tables), and each
   response body is read by the adapter of its own format. Each hit is located
   (file, line, field) and carries its detector, provider, host, router,
   strength and evidence class ([verified], [source] or [guess]).
   Identical values count once (replayed history does not add weight)."""


def _weights(n: Numbers) -> str:
    """2: the weights of evidence strengths, and quoted zones."""
    w = n.strength_weight
    return f"""\
2. Weights. strong = {w["strong"]}, medium = {w["medium"]}, weak = {w["weak"]}.
   Zones: each format declares the fields its serving stack writes (ids,
   signatures, encrypted content, usage keys, the response envelope). Hits
   anywhere else are quoted: user prompts, tool results, base instructions,
   compaction history, request bodies of captures, and also the model's own
   reply and reasoning text, tool-call arguments and file contents, and JSON
   text escaped inside a string. Quoted hits are listed (weight x {n.quoted_factor}, the
   zone named in the detail) but never scored: no provider, host or router
   credit, no flag. Artifacts that fail their own checks (implausible time,
   wrong marker or store byte) give no provider weight: they raise
   `imitation-id`. Account and request-id headers count only with the value
   shape the service sends (not a placeholder such as test_... or xxx), and
   no provider or host header counts when the request went to a loopback or
   private-network address."""


#: 3: how a provider's groups add up.
_NOISY_OR = """\
3. Per provider, each detector group contributes w * (1 - 0.5^n) for n distinct
   values; groups combine as a noisy-or: score = 1 - prod(1 - contribution)."""

#: 4: the provider, from scores and declarations.
_VERDICT = """\
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
   (tool-id, chatcmpl-id, system-fingerprint, key) name no provider: `unknown`."""


def _host(n: Numbers) -> str:
    """5: the host, and how its evidence raises the verdict's confidence."""
    return f"""\
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
   the verdict's: c -> 1 - (1 - c) * (1 - {n.host_agreement} * host confidence)."""


#: 5a: the router.
_VIA = """\
5a. Via (openrouter, litellm, portkey, helicone, huggingface, snowflake, or null): the router the
   response passed through, from its endpoint, its headers or its ids
   (OpenRouter's gen-<seconds>-<random>). A router is never the provider."""


#: 5b: the calibration map.
_CALIBRATION = """\
5b. Calibration. A verdict that artifacts decided (part 4) and that raised no flag
   rises to the floor its raw confidence earned in the self-labelled evaluation
   of real captures (musetui/core/fingerprints/calibration.toml, written by
   bench/eval_calibration.py: per raw-confidence bin, the lower 95% Wilson bound
   of the fraction right on the fit repositories; the held-out ones check it).
   Nothing is lowered, and a declaration alone is never raised. The verdict's
   summary says "calibrated a -> b" when it applies."""


def _times(n: Numbers) -> str:
    """6: the time cross-checks and their tolerances."""
    return f"""\
6. Time cross-checks. Each decoded time (id, Fernet, UUIDv7) is compared with
   the time recorded on its line. Tolerance: minted more than {n.tol_after_s:.0f} s AFTER
   its line is impossible (in raw API captures the reference is the response's
   created_at, and items may be minted up to {n.tol_after_created_s:.0f} s after it); more
   than {n.tol_before_s:.0f} s BEFORE its line (first
   occurrence, outside quoted material) is suspicious. Either raises
   `time-mismatch`, with the delta in the evidence (shown between the two
   times cut to the whole second, as every clock on screen shows them). Anthropic request ids are
   normally 2-31 s before the line; long responses take minutes. A time read by
   a [guess] layout (Gemini responseIds) is shown but never raises it.
   Recorded line times that run backwards (a line recorded more than {n.tol_before_s:.0f} s
   before the latest line above it) raise `time-mismatch` too, naming both lines.
   Every record's recorded time counts: what its format's reader took from it,
   or else the value after the format's time key in its bytes."""


#: 7: the flags, each with its reason.
_FLAGS = """\
7. Flags. declared-mismatch (declared provider/model family differs from a
   >= 0.5 evidence verdict, or a signature names another public model; an internal name such as
   claude-saffron is noted, never flagged); time-mismatch;
   imitation-id; mixed-providers (two providers each >= 0.6 from model output;
   or, in an HTTP capture judged exchange by exchange, model calls that went
   to two providers: the verdict is then the majority's, the others listed);
   truncated-blob (a Fernet token or signature whose structure is cut or broken);
   provider-switch (see 9); outlier (see 8). Each flag keeps its reason (what was compared, the counts,
   the first line): the app, `y`, `show`, the report and `scan PATH --explain`
   print the same sentence, and an outlier record's JSON detail is that sentence."""

#: 8: the fleet step.
_OUTLIERS = """\
8. Outliers. A session is an outlier when its provider (known, not `unknown`)
   differs from the provider shared by a strict majority of its siblings
   (same parent, at least 2 others), or from the provider of at least 60% of
   the sessions of the same format under the same root (at least 3 sessions).
   A session that agrees with such a fleet majority is never an outlier, even
   when its own siblings are mostly outliers themselves."""

#: 9: items and segments.
_SEGMENTS = """\
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
   it names) and form its segments the same way."""

#: The explanation's sections, in order, each fixed text or a renderer of the numbers it names.
SECTIONS: tuple[str | Callable[[Numbers], str], ...] = (
    _TITLE,
    _DOCS,
    _FORMATS,
    _EVIDENCE,
    _weights,
    _NOISY_OR,
    _VERDICT,
    _host,
    _VIA,
    _CALIBRATION,
    _times,
    _FLAGS,
    _OUTLIERS,
    _SEGMENTS,
)


def explain_text(
    *,
    strength_weight: dict[str, float],
    quoted_factor: float,
    host_agreement: float,
    tol_after_s: float,
    tol_after_created_s: float,
    tol_before_s: float,
) -> str:
    """The explanation, with the weights and tolerances it names: its sections, a blank line apart."""
    n = Numbers(strength_weight, quoted_factor, host_agreement, tol_after_s, tol_after_created_s, tol_before_s)
    return "\n\n".join(s if isinstance(s, str) else s(n) for s in SECTIONS) + "\n"
