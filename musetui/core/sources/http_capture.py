"""HTTP captures: VCR cassettes and HAR 1.2 logs, one session per file, one item per interaction.

:mod:`musetui.core.sources.capture_read` reads every recorder's layout into exchanges. Here, each
response body is handed to the API adapter that matches it, and the request URL and the headers
are evidence too: what they point to lives in the catalogue (``[[endpoint]]``, ``[[header]]``
and ``[[upstream]]`` tables), not here.

Which adapter matches a body, its zone table and its items are the registry's answers: the
readers here take them as a :class:`~musetui.core.sources.spec.Lookup` (the registry's own
:data:`~musetui.core.sources.registry.LOOKUP`), so that this module never imports the registry.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from bisect import bisect_right
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urlsplit

from musetui.core.budget import Budget
from musetui.core.fingerprints.types import Decoded, Strength, Tag
from musetui.core.model import Item, SessionSummary, parse_time
from musetui.core.sources.base import (
    ZONE_MODEL,
    ZONE_QUOTED,
    Record,
    dig,
    file_stem,
    new_item,
    preview,
)

# (CaptureError, NotACapture, claims, is_capture_document: re-exported, as the scanner and search call them)
from musetui.core.sources.capture_read import CaptureError as CaptureError
from musetui.core.sources.capture_read import Exchange
from musetui.core.sources.capture_read import NotACapture as NotACapture
from musetui.core.sources.capture_read import is_capture_document as is_capture_document
from musetui.core.sources.generic import GenericObserver
from musetui.core.sources.layouts import JSON_LAYOUT, parse
from musetui.core.sources.layouts import claims as claims
from musetui.core.sources.spec import Format, Lookup

if TYPE_CHECKING:
    from musetui.core.fingerprints.attribution import Located

FORMAT = "http-capture"
_BEDROCK_MODEL_RE = re.compile(r"/model/([^/]+)/(?:invoke|converse)")
_GOOGLE_MODEL_RE = re.compile(r"/models/([^/:]+):[A-Za-z]+")

# ---------------------------------------------------------------------------------------------
# What a scan keeps: summary fields and located evidence
# ---------------------------------------------------------------------------------------------

_CATALOGUE: Any = None


def _catalogue() -> Any:
    """The model catalogue (built-in plus the user's file), loaded once per process."""
    global _CATALOGUE
    if _CATALOGUE is None:
        from musetui.core.fingerprints.catalogue import load_catalogue

        _CATALOGUE = load_catalogue()
    return _CATALOGUE


def body_format(records: list[Any], formats: Lookup) -> str | None:
    """The API format of a response body's records (the first that any adapter recognises)."""
    found = formats.sniff_first(records)
    return found[0] if found is not None else None


def model_from_uri(uri: str) -> str | None:
    """The model a request URL names (Bedrock ``/model/<id>/…``, Google ``/models/<m>:verb``)."""
    path = urlsplit(uri).path
    m = _BEDROCK_MODEL_RE.search(path) or _GOOGLE_MODEL_RE.search(path)
    return unquote(m.group(1)) if m else None


CONVERSE = "bedrock-converse"
#: A Converse response body: only Amazon Bedrock serves that API (docs/fingerprints.md#bedrock).
CONVERSE_HOST = Decoded(
    detector="format",
    value=CONVERSE,
    provider=None,
    host="bedrock",
    strength="strong",
    tag="source",
    meaning="a Converse response body (output.message, stopReason, metrics): Amazon Bedrock's own API",
    shape="bedrock-converse",
)


def _signal(
    detector: str, value: str, entry: Any, meaning: str, fields: tuple[tuple[str, str], ...], problem: str = ""
) -> Decoded:
    strength: Strength = entry.strength
    tag: Tag = entry.tag
    return Decoded(
        detector=detector,
        value=value,
        provider=entry.provider,
        host=entry.host,
        strength=strength,
        tag=tag,
        fields=fields,
        meaning=meaning
        + (f" ({entry.note})" if entry.note else "")
        + (f": {_NO_CREDIT[problem]}, no credit" if problem else ""),
        problems=(problem,) if problem else (),
        shape=str(getattr(entry, "match", None) or getattr(entry, "name", "")),
        via=entry.via,
    )


#: Header values that a recorder or a scrubber wrote, not the service: empty, one repeated
#: non-digit character, or a word that marks a stand-in (docs/fingerprints.md#header-shape).
PLACEHOLDER = re.compile(
    r"\s*|([^0-9])\1*|.*(?:redact|scrub|sanitiz|placeholder|changeme|xxx|\*\*\*|<[^>]*>).*"
    r"|(?:.*[^a-z])?(?:test|tst|fake|dummy|mock|example|sample|none|null|n/a)(?:[^a-z].*)?",
    re.IGNORECASE | re.DOTALL,
)
_NO_CREDIT = {
    "placeholder-value": "the value is a placeholder (a recorder's or scrubber's, not the service's)",
    "unexpected-shape": "the value does not have the shape the service sends",
    "private-endpoint": "the request went to a loopback or private address, which is no maker's public API",
}


def header_problem(entry: Any, value: str, private: bool) -> str:
    """Why a provider or host header earns nothing here ("" when it earns its credit)."""
    if not (entry.provider or entry.host):
        return ""  # a router's header: a gateway on this machine is still that gateway
    if private:
        return "private-endpoint"
    if PLACEHOLDER.fullmatch(value.strip()):
        return "placeholder-value"
    shape = getattr(entry, "shape", None)
    if shape and not re.fullmatch(shape, value.strip()):
        return "unexpected-shape"
    return ""


def private_host(hostname: str) -> bool:
    """True for a loopback, private-network or link-local address, or a local name."""
    name = hostname.strip("[]").lower()
    if name == "localhost" or name.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return False
    return ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_unspecified


def upstream_evidence(obj: Any, via_hint: str | None) -> Decoded | None:
    """The upstream a router's response names in its own top-level ``provider`` field.

    Only for a body that shows the router (an OpenRouter ``gen-`` id, or the request's
    endpoint as ``via_hint``); the name maps to a host through the catalogue's ``[[upstream]]``.
    """
    name = dig(obj, "provider")
    if not isinstance(name, str) or not name or len(name) > 64:
        return None
    rid = dig(obj, "id")
    router = via_hint or ("openrouter" if isinstance(rid, str) and rid.startswith("gen-") else None)
    if router is None:
        return None
    entry = _catalogue().upstream(router, name)
    if entry is None:
        return Decoded(
            detector="router-upstream",
            value=name,
            provider=None,
            host=None,
            strength="weak",
            tag="source",
            fields=(("router", router), ("upstream", name)),
            meaning=f"{router} names its upstream {name!r}, which the catalogue does not map to a host",
            shape="provider",
            via=router,
        )
    where = f"host {entry.host}" if entry.host else "no cloud host (the maker's own API)"
    return _signal(
        "router-upstream",
        name,
        entry,
        f"{router} names its upstream {name!r}: {where}",
        (("router", router), ("upstream", name)),
    )


def walk_body(obj: Any, via_hint: str | None = None) -> list[tuple[Decoded, str | None, str]]:
    """Every artifact of one response record, plus the router's upstream when it names one."""
    from musetui.core.fingerprints import extract

    out = extract.walk_record(obj)
    if dig(obj, "type") == "content_block_start":
        # a stream opens every thinking block with "thinking": "", "signature": "": not unsigned reasoning
        out = [x for x in out if x[0].detector != "empty-signature"]
    up = upstream_evidence(obj, via_hint)
    if up is not None:
        out.append((up, "provider", "provider"))
    return out


def _record_time(obj: Any) -> float | None:
    for holder in (obj, dig(obj, "response"), dig(obj, "message")):
        for key in ("created_at", "created", "createTime"):
            v = dig(holder, key)
            if v not in (None, 0, ""):
                t = parse_time(v)
                if t is not None:
                    return t
    return None


def _first_text(obj: Any, *paths: tuple[str, ...]) -> str | None:
    """The first non-empty string found at one of ``paths`` in ``obj``."""
    for path in paths:
        v = dig(obj, *path)
        if isinstance(v, str) and v:
            return v
    return None


def _record_id(obj: Any) -> str | None:
    return _first_text(obj, ("id",), ("responseId",), ("response", "id"), ("message", "id"))


def _record_model(obj: Any) -> str | None:
    return _first_text(obj, ("model",), ("modelVersion",), ("response", "model"), ("message", "model"))


class _Locator:
    """Finds the line of a value inside an exchange's bytes (falling back to its first line)."""

    def __init__(self, data: bytes, starts: list[int]) -> None:
        self.data = data
        self.starts = starts

    def line(self, ex: Exchange, value: str) -> int:
        needle = value[:48].encode("utf-8", "replace")
        if needle:
            pos = self.data.find(needle, ex.offset, ex.offset + ex.length)
            if pos < 0:
                pos = self.data.find(needle)
            if pos >= 0:
                return bisect_right(self.starts, pos)
        return ex.line


def scan(
    data: bytes,
    summary: SessionSummary,
    kind: str,
    formats: Lookup,
    document: Any = None,
    spans: list[ExchangeSpan] | None = None,
    budget: Budget | None = None,
) -> tuple[list[Located], list[int]]:
    """Fill ``summary`` from a capture and return its located evidence and the exchanges' offsets (within ``budget``).

    With ``spans``, each exchange's slice of the evidence and the model it names are appended
    to it, for judging the capture exchange by exchange. ``formats``: the registry's answers
    (the response bodies' formats and zones).

    Raises:
        NotACapture, CaptureError: see :func:`parse`.
    """
    exchanges, starts = parse(data, kind, document, budget)
    cat = _catalogue()
    loc = _Locator(data, starts)
    got = _Collected()
    for ex in exchanges:
        got.mine, got.mine_seen = [], set()
        parts = urlsplit(ex.uri)
        hostname = (parts.hostname or "").lower()
        via_hint = _endpoint_evidence(ex, hostname, parts.path, cat, loc, got) if hostname else None
        _header_evidence(ex, private_host(hostname), cat, loc, got)
        _body_evidence(ex, via_hint, loc, got, formats)
        if isinstance(ex.req_body, dict | list):
            _request_evidence(ex, loc, got)
        if spans is not None:
            spans.append(ExchangeSpan(got.mine, exchange_model(ex), ex.line))
    located = got.located
    summarize(exchanges, summary, formats)
    return located, [ex.offset for ex in exchanges]


def _endpoint_evidence(ex: Exchange, hostname: str, path: str, cat: Any, loc: _Locator, got: _Collected) -> str | None:
    """The catalogue's word on the host the request went to; returns the router it names, if any."""
    from musetui.core.fingerprints.attribution import Located

    endpoint = cat.endpoint(hostname)
    if endpoint is None:
        return None
    fields = (("host", hostname), ("path", path))
    dec = _signal("http-endpoint", hostname + path, endpoint, f"request sent to {hostname}", fields)
    got.add("endpoint:" + hostname, Located(dec, loc.line(ex, ex.uri), "request.uri", ZONE_MODEL, None))
    via: str | None = endpoint.via
    return via


def _header_evidence(ex: Exchange, private: bool, cat: Any, loc: _Locator, got: _Collected) -> None:
    """The catalogue's headers (a request's only when they name a router) and decodable response header values."""
    from musetui.core.fingerprints.attribution import Located

    for zone_name, headers in (("response", ex.resp_headers), ("request", ex.req_headers)):
        for name, value in headers:
            entry = cat.header(name, value)
            if entry is not None and (zone_name == "response" or entry.via) and got.new(f"header:{name}"):
                shown = value if len(value) <= 80 else value[:77] + "…"
                dec = _signal(
                    "http-header",
                    f"{name}: {shown}",
                    entry,
                    f"{zone_name} header {name}",
                    (("header", name), ("value", shown)),
                    header_problem(entry, value, private),
                )
                field_name = name if zone_name == "response" else f"request.{name}"
                got.add(f"header:{name}", Located(dec, loc.line(ex, name), field_name, ZONE_MODEL, None))
            if zone_name == "response" and len(value) >= 9:
                for dec in _decode_value(value, name):
                    if got.new(dec.value):
                        got.add(dec.value, Located(dec, loc.line(ex, dec.value), name, ZONE_MODEL, None))


def _body_evidence(ex: Exchange, via_hint: str | None, loc: _Locator, got: _Collected, formats: Lookup) -> None:
    """The response body's artifacts, each in the zone its format puts its path in."""
    from musetui.core.fingerprints.attribution import TOL_AFTER_CREATED_S, Located

    t_line = _exchange_time(ex)
    fmt = body_format(ex.records, formats)
    if fmt == CONVERSE and got.new("format:converse"):
        got.add("format:converse", Located(CONVERSE_HOST, loc.line(ex, "output"), "response.body", ZONE_MODEL, None))
    body_zone = formats.zone_table(fmt).zone_of
    for rec in ex.records:
        for dec, _key, path in walk_body(rec, via_hint):
            tag = dec.value or f"{dec.detector}:{path}"
            if dec.value and not got.new(tag):
                continue
            got.add(tag, Located(dec, loc.line(ex, dec.value or path.rsplit(".", 1)[-1]), "response.body." + path,
                                 body_zone(path, dec.detector.startswith("key")), t_line, after_tol=TOL_AFTER_CREATED_S),
                    always=not dec.value)  # fmt: skip


def _request_evidence(ex: Exchange, loc: _Locator, got: _Collected) -> None:
    """The request body's artifacts: quoted text (what the client sent), never the provider's own."""
    from musetui.core.fingerprints import extract
    from musetui.core.fingerprints.attribution import Located

    for dec, _key, path in extract.walk_record(ex.req_body):
        tag = dec.value or f"{dec.detector}:request:{path}"
        if dec.value and not got.new(tag):
            continue
        got.add(tag, Located(dec, loc.line(ex, dec.value or path), "request.body." + path, ZONE_QUOTED, None),
                always=not dec.value)  # fmt: skip


def _exchange_time(ex: Exchange) -> float | None:
    """The response's own creation time, else the HAR start or the ``date`` header."""
    for rec in ex.records:
        t = _record_time(rec)
        if t is not None:
            return t
    return ex.time


class ExchangeSpan(NamedTuple):
    """One exchange of a capture: its own evidence (not deduplicated against the others), the model it names, its line."""

    located: list[Located]
    model: str | None
    line: int


class _Collected:
    """The capture's evidence, deduplicated by value across exchanges, and the current exchange's own."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.located: list[Located] = []
        self.mine: list[Located] = []
        self.mine_seen: set[str] = set()

    def new(self, tag: str) -> bool:
        """Whether a finding with this tag is new to the capture or to the current exchange."""
        return tag not in self.mine_seen or tag not in self.seen

    def add(self, tag: str, found: Located, always: bool = False) -> None:
        """Keep one finding unless its ``tag`` was met before (``always``: keep it anyway)."""
        if always or tag not in self.seen:
            self.seen.add(tag)
            self.located.append(found)
        if always or tag not in self.mine_seen:
            self.mine_seen.add(tag)
            self.mine.append(found)


def exchange_model(ex: Exchange) -> str | None:
    """The model one exchange names: its request's, its URL's, else its response's."""
    req_model = dig(ex.req_body, "model")
    if isinstance(req_model, str) and req_model:
        return req_model
    return model_from_uri(ex.uri) or next((m for m in map(_record_model, ex.records) if m), None)


def summarize(exchanges: list[Exchange], summary: SessionSummary, formats: Lookup) -> None:
    """Fill the summary fields of a capture: format, session id, declared models, times, items."""
    counts: dict[str, int] = {}
    times: list[float] = []
    for ex in exchanges:
        fmt = body_format(ex.records, formats)
        counts[fmt or ex.body_kind] = counts.get(fmt or ex.body_kind, 0) + 1
        for rec in ex.records:
            if summary.session_id is None:
                summary.session_id = _record_id(rec)
            _declare(summary, _record_model(rec))
        req_model = dig(ex.req_body, "model")
        _declare(summary, req_model if isinstance(req_model, str) else None)
        _declare(summary, model_from_uri(ex.uri))
        t = _exchange_time(ex)
        if t is not None:
            times.append(t)
    _prefer_generating_model(summary)
    summary.format = FORMAT
    what = exchanges[0].container if exchanges else "VCR cassette"
    summary.format_rule = f"http-capture: {what} with {len(exchanges)} interaction(s)"
    if summary.session_id is None:
        summary.session_id = file_stem(summary.path)
    summary.items = len(exchanges)
    if times:
        summary.started_at, summary.ended_at = min(times), max(times)
    bodies = ", ".join(f"{k} ×{n}" for k, n in sorted(counts.items()))
    summary.notes.append(f"{what}: {len(exchanges)} interaction(s); response bodies: {bodies}")


#: Words of the names of models that generate no reply (embeddings, rerankers, moderation, speech).
_AUXILIARY_WORDS = ("embed", "rerank", "moderation", "whisper", "tts", "transcribe")


def auxiliary_model(model: str) -> bool:
    """True for a model that writes no reply (embeddings, rerankers, moderation, speech)."""
    low = model.lower()
    return any(w in low for w in _AUXILIARY_WORDS)


def _prefer_generating_model(summary: SessionSummary) -> None:
    """Declare the first model that writes replies when the capture also calls one that does not.

    An agent's memory embeds with one provider and chats with another (crewAI's cassettes: Vertex
    embeddings, then OpenAI chat): the session is the chat's, not the embedding model's.
    """
    declared = summary.declared_model
    if declared is not None and auxiliary_model(declared):
        summary.declared_model = next((m for m in summary.models if not auxiliary_model(m)), declared)


def _decode_value(value: str, name: str) -> list[Decoded]:
    from musetui.core.fingerprints.decoders import decode_string

    return decode_string(value, name)


def _declare(summary: SessionSummary, model: str | None) -> None:
    if not model or model == "<synthetic>":
        return
    summary.models[model] = summary.models.get(model, 0) + 1
    if summary.declared_model is None:
        summary.declared_model = model


# ---------------------------------------------------------------------------------------------
# Opening a session
# ---------------------------------------------------------------------------------------------


def records(data: bytes, path: str, formats: Lookup) -> list[Record]:
    """One record per exchange (its normalised request/response), for opening the session."""
    return [
        Record(ex.line, ex.offset, ex.length, ex.normalized(body_format(ex.records, formats)))
        for ex in _exchanges(data, path)
    ]


def _exchanges(data: bytes, path: str) -> list[Exchange]:
    kind = claims(path, data) or JSON_LAYOUT
    try:
        exchanges, _starts = parse(data, kind)
    except (NotACapture, CaptureError):
        return []
    return exchanges


def identify(data: bytes, summary: SessionSummary, formats: Lookup) -> bool:
    """Fill ``summary`` from a capture's bytes without reading evidence (for search); False: not one."""
    exchanges = _exchanges(data, summary.path)
    if not exchanges:
        return False
    summarize(exchanges, summary, formats)
    return True


def items(formats: Lookup, recs: list[Record]) -> list[Item]:
    """One item per exchange; the body's own adapter names what the response holds."""
    out: list[Item] = []
    for rec in recs:
        obj = rec.obj if isinstance(rec.obj, dict) else {}
        req = obj.get("request") or {}
        resp = obj.get("response") or {}
        fmt = obj.get("body_format")
        body = resp.get("body")
        body_recs = body if isinstance(body, list) else ([body] if isinstance(body, dict) else [])
        inner: list[Item] = []
        if fmt and body_recs:
            inner = formats.build_items(str(fmt), [Record(rec.line, rec.offset, rec.length, b) for b in body_recs])
        head = f"{req.get('method')} {req.get('uri')} → {resp.get('status')}"
        kinds = [i.kind for i in inner if i.kind not in ("event", "meta", "usage", "unknown")]
        text = (
            "\n".join([head, *(i.text for i in inner if i.text)])
            if inner
            else f"{head}\n{preview(str(body or ''), 2000)}"
        )
        ids: list[str] = []
        for i in inner:
            ids.extend(x for x in i.ids if x not in ids)
        states = [i.reasoning for i in inner if i.reasoning]
        reasoning = "encrypted" if "encrypted" in states else (states[0] if states else None)
        item = new_item(
            rec,
            len(out),
            kinds[0] if kinds else "event",
            role="assistant" if kinds else None,
            time=next((i.time for i in inner if i.time), None),
            name=str(fmt or obj.get("body_kind")),
            subkind="interaction",
            ids=ids[:32],
            text=text[:20000],
            reasoning=reasoning,
        )
        out.append(item)
    return out


def spec(formats: Lookup) -> Format:
    """The registry's entry for captures, given the registry's answers for the bodies they hold."""
    return Format(FORMAT, "capture", None, GenericObserver, functools.partial(items, formats))
