"""Reading HTTP captures into exchanges: every recorder's layout, the bodies, the headers, the spans.

The layouts read: vcrpy's YAML and JSON (pytest-recording and pydantic-ai write them, aiohttp
recordings with Python tags included), Ruby's VCR gem (``http_interactions``, Psych's ``!binary``
bodies), go-vcr (``url``, ``status: 200 OK``), LangChain's (``requests`` and ``responses`` listed
apart, gzip-compressed on disk), one interaction per JSON file (the Datadog test agent), a lone
recorded response ``{status, headers, body}``, pydantic-ai's gRPC recordings of the xai-sdk, and
HAR 1.2 logs. What the exchanges prove is :mod:`musetui.core.sources.http_capture`'s business.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import orjson

from musetui.core.budget import Budget
from musetui.core.model import parse_time

# Re-exported: the httprr reader reads its bodies with these too.
from musetui.core.sources.capture_bodies import MAX_BODY_BYTES as MAX_BODY_BYTES
from musetui.core.sources.capture_bodies import _b64decode, _header_pairs, _status, _text
from musetui.core.sources.capture_bodies import _body_records as _body_records
from musetui.core.sources.capture_bodies import _content_type as _content_type
from musetui.core.sources.capture_bodies import _date_header as _date_header
from musetui.core.sources.capture_bodies import _request_body as _request_body

#: Captures larger than this are not parsed (a diagnostic says so).
MAX_CAPTURE_BYTES = 64 * 1024 * 1024

#: A cassette's interaction starts on a line ``- request:`` (or ``- response:``). The pattern
#: starts with the newline, a literal, so ``re`` skips to candidates at memchr speed; the first
#: line is matched on its own (``_interaction_starts``).
_INTERACTION_RE = re.compile(rb"\n[ \t]*-[ \t]+(?:request|response):")
_FIRST_INTERACTION_RE = re.compile(rb"[ \t]*-[ \t]+(?:request|response):")
_HAR_ENTRY_RE = re.compile(rb'"startedDateTime"\s*:')


#: A YAML anchor: ``&name`` at the start or after whitespace or an indicator. The pattern starts
#: with the ``&`` so that ``re`` skips to it at memchr speed; the byte before is checked in Python.
_ANCHOR_RE = re.compile(rb"&[^\s,\[\]{}]")
_ANCHOR_LEAD = frozenset(b" \t\r\n\x0b\x0c[{,:-")


def _has_anchor(data: bytes) -> bool:
    """Whether ``data`` may define a YAML anchor (so aliases may expand)."""
    for m in _ANCHOR_RE.finditer(data):
        i = m.start()
        if i == 0 or data[i - 1] in _ANCHOR_LEAD:
            return True
    return False


class _Expansion:
    """What a YAML document's values add up to, aliased parts counted at each alias (against a budget)."""

    __slots__ = ("budget", "own_bytes", "string_bytes", "values")

    def __init__(self, budget: Budget, own_bytes: int) -> None:
        self.budget = budget
        self.own_bytes = own_bytes  # the file's size: strings past it were repeated by aliases
        self.values = 0
        self.string_bytes = 0

    def fits(self, doc: Any) -> bool:
        """Count ``doc``'s values; False (the budget tripped) when a limit is passed."""
        b = self.budget
        stack: list[tuple[Any, int]] = [(doc, 1)]
        while stack:
            v, depth = stack.pop()
            self.values += 1
            if isinstance(v, dict):
                items: Any = v.values()
            elif isinstance(v, list):
                items = v
            else:
                if isinstance(v, str | bytes):
                    self.string_bytes += len(v)
                continue
            if depth > b.max_depth:
                b.trip(f"YAML values nested deeper than {b.max_depth}")
                return False
            stack.extend((x, depth + 1) for x in items)
            if self.values > b.max_values:
                break
        if self.values > b.max_values:
            b.trip(f"YAML aliases expand past {b.max_values:,} values")
            return False
        if self.string_bytes - self.own_bytes > b.max_alias_bytes:
            b.trip(f"YAML aliases expand past {b.max_alias_bytes // 2**20} MiB of strings")
            return False
        return True


def _within_budget(outside: Any, inter: list[Any], budget: Budget, own_bytes: int) -> list[Any]:
    """The interactions that fit the budget, aliases expanded (all of them, mostly).

    What is ``outside`` the interactions is counted first; then each interaction in turn, and
    the first that passes a limit ends the list (what was read before it is kept).
    """
    count = _Expansion(budget, own_bytes)
    if not count.fits(outside):
        return []
    for i, x in enumerate(inter):
        if not count.fits(x):
            return inter[:i]
    return inter


class NotACapture(ValueError):
    """A YAML or HAR file that holds no HTTP interactions (skipped quietly, like any non-transcript)."""


class CaptureError(ValueError):
    """A file that claims to be a capture but cannot be read as one."""


def is_har(document: Any) -> bool:
    """True for a parsed HAR log (whatever the file's extension)."""
    log = document.get("log") if isinstance(document, dict) else None
    return isinstance(log, dict) and isinstance(log.get("entries"), list)


def _is_interaction(x: Any) -> bool:
    """A VCR interaction: a request naming its URL, and a response with a status."""
    if not isinstance(x, dict):
        return False
    req, resp = x.get("request"), x.get("response")
    return (
        isinstance(req, dict)
        and isinstance(req.get("uri") or req.get("url"), str)
        and isinstance(resp, dict)
        and ("status" in resp or "status_code" in resp)
    )  # (status_code: httpx/requests names)


def _is_lone_response(x: dict[str, Any]) -> bool:
    """A recorded response without its request: an HTTP status, headers and a body (and nothing else of note)."""
    status = x.get("status")
    return (
        type(status) is int
        and 100 <= status <= 599
        and isinstance(x.get("headers"), dict | list)
        and "body" in x
        and "request" not in x
        and "response" not in x
    )


def _paired(document: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The interactions of a cassette that lists ``requests`` and ``responses`` apart, paired in order.

    LangChain's VCR serializer writes this layout (its ``*.yaml.gz`` cassettes).
    """
    reqs, resps = document.get("requests"), document.get("responses")
    if not isinstance(reqs, list) or not isinstance(resps, list) or not reqs or len(reqs) != len(resps):
        return None
    items = [{"request": q, "response": r} for q, r in zip(reqs, resps, strict=True)]
    return (
        items
        if all(isinstance(q, dict) and isinstance(r, dict) for q, r in zip(reqs, resps, strict=True))
        and _is_interaction(items[0])
        else None
    )


def json_interactions(document: Any) -> list[dict[str, Any]] | None:
    """The interactions of a VCR cassette written as JSON, or None for any other document.

    Three layouts are read: vcrpy's JSON serializer (``{"interactions": [...]}``), one
    interaction per file (``{"request": {...}, "response": {...}}``, as the Datadog test agent
    records them), and one response without its request (``{"status": 200, "headers": {...},
    "body": ...}``, as mock-server fixtures store them: no URL, so only the body and headers speak).
    """
    if not isinstance(document, dict):
        return None
    inter = document.get("interactions", document.get("http_interactions"))  # (vcrpy's; Ruby's and R's VCR)
    if isinstance(inter, list):
        items = [x for x in inter if isinstance(x, dict)]
        return items if items and _is_interaction(items[0]) else None
    paired = _paired(document)
    if paired is not None:
        return paired
    if _is_interaction(document):
        return [document]
    if _is_lone_response(document):
        return [{"request": {"uri": ""}, "response": document}]
    return None


def is_capture_document(document: Any) -> bool:
    """True for a parsed JSON document that is an HTTP capture: a HAR log or a JSON cassette."""
    return is_har(document) or json_interactions(document) is not None


@dataclass(slots=True)
class Exchange:
    """One request/response pair of a capture, located in the file."""

    index: int
    line: int
    offset: int
    length: int
    method: str
    uri: str
    status: int | None
    req_headers: list[tuple[str, str]]
    resp_headers: list[tuple[str, str]]
    req_body: Any
    body_kind: str  # json | sse | jsonl | eventstream | text | empty
    records: list[Any] = field(default_factory=list)
    body_text: str = ""
    time: float | None = None
    container: str = "VCR cassette"  # or "HAR log"

    @classmethod
    def at(cls, i: int, span: tuple[int, int], starts: list[int], **fields: Any) -> Exchange:
        """Exchange ``i``, whose bytes are ``span`` (offset, length) of a file with these line starts."""
        offset, length = span
        return cls(index=i, line=bisect_right(starts, offset), offset=offset, length=length, **fields)

    def normalized(self, body_format: str | None) -> dict[str, Any]:
        """The exchange as one plain record (what an opened item's raw view shows)."""
        body: Any = self.records[0] if len(self.records) == 1 else (self.records or self.body_text)
        return {
            "request": {
                "method": self.method,
                "uri": self.uri,
                "headers": dict(self.req_headers),
                "body": self.req_body,
            },
            "response": {"status": self.status, "headers": dict(self.resp_headers), "body": body},
            "body_kind": self.body_kind,
            "body_format": body_format,
        }


# ---------------------------------------------------------------------------------------------
# Reading the file
# ---------------------------------------------------------------------------------------------


def _starts(data: bytes) -> list[int]:
    starts = [0]
    pos = data.find(b"\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = data.find(b"\n", pos + 1)
    return starts


def _interaction_starts(data: bytes) -> list[int]:
    """Byte offsets of the lines that start a cassette's interactions."""
    first = [0] if _FIRST_INTERACTION_RE.match(data) else []
    return first + [m.start() + 1 for m in _INTERACTION_RE.finditer(data)]


def _response_starts(data: bytes) -> list[int]:
    """Byte offsets of the entries of a top-level ``responses:`` list (the paired layout), else none."""
    at = data.find(b"\nresponses:")
    if at < 0:
        return []
    return [m.start() + 1 for m in _TOP_ITEM_RE.finditer(data, at + 1)]


_TOP_ITEM_RE = re.compile(rb"\n- ")


def _spans(hits: list[int], data: bytes, count: int) -> list[tuple[int, int]]:
    """Byte spans of ``count`` consecutive records that start at ``hits``."""
    if not count:
        return []
    if len(hits) != count:
        return [(0, len(data))] * count
    ends = [*hits[1:], len(data.rstrip())]
    return [(a, max(0, b - a)) for a, b in zip(hits, ends, strict=True)]


def check_size(data: bytes) -> None:
    """Refuse a capture past :data:`MAX_CAPTURE_BYTES` (raises :class:`CaptureError`)."""
    if len(data) > MAX_CAPTURE_BYTES:
        raise CaptureError(f"{len(data):,} bytes: larger than the {MAX_CAPTURE_BYTES // 2**20} MiB capture limit")


def parse_json(data: bytes, document: Any = None, budget: Budget | None = None) -> tuple[list[Exchange], list[int]]:
    """A HAR log, or a JSON cassette (VCR's JSON serializer, a lone recorded response).

    Raises:
        NotACapture: the file holds no interactions (a HAR without entries).
        CaptureError: the file is too large or does not parse.
    """
    check_size(data)
    budget = budget or Budget()
    starts = _starts(data)
    doc = document
    if doc is None:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise CaptureError(f"not valid JSON: {exc}") from exc
    if not is_har(doc):
        inter = json_interactions(doc)
        if inter is None:
            raise NotACapture("no log.entries")
        spans = [(0, len(data))] * len(inter)  # JSON has no line structure to split it by
        return [_vcr_exchange(i, x, spans[i], starts, budget) for i, x in enumerate(inter)], starts
    entries = [e for e in doc["log"]["entries"] if isinstance(e, dict)]
    if not entries:
        raise NotACapture("a HAR log with no entries")
    spans = _spans([m.start() for m in _HAR_ENTRY_RE.finditer(data)], data, len(entries))
    return [_har_exchange(i, e, spans[i], starts, budget) for i, e in enumerate(entries)], starts


def parse_yaml(data: bytes, document: Any = None, budget: Budget | None = None) -> tuple[list[Exchange], list[int]]:
    """A YAML cassette (vcrpy, Ruby's VCR gem, go-vcr, LangChain's paired layout).

    Raises:
        NotACapture: the file holds no interactions (a YAML config).
        CaptureError: the file is too large or does not parse.
    """
    check_size(data)
    starts = _starts(data)
    head = data[:65536]
    if b"interactions" not in head and b"requests" not in head:
        raise NotACapture("no interactions")
    import yaml  # only captures need it

    from musetui.core.sources.cassette_yaml import load_yaml

    try:
        doc = load_yaml(data)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise CaptureError(f"not valid YAML{where}") from exc
    except (RecursionError, ValueError, TypeError) as exc:
        raise CaptureError(f"YAML could not be loaded: {type(exc).__name__}") from exc
    budget = budget or Budget()
    inter = doc.get("interactions", doc.get("http_interactions")) if isinstance(doc, dict) else None  # (Ruby's VCR)
    if inter is None and isinstance(doc, dict):
        paired = _paired(doc)
        if paired is not None:  # each item is located at its response (the requests are listed first)
            paired = _aliases_within(data, doc, ("requests", "responses"), paired, budget)
            spans = _spans(_response_starts(data), data, len(paired))
            return [_vcr_exchange(i, x, spans[i], starts, budget) for i, x in enumerate(paired)], starts
    if not isinstance(inter, list) or not inter:
        raise NotACapture("no interactions")
    items = _aliases_within(
        data, doc, ("interactions", "http_interactions"), [x for x in inter if isinstance(x, dict)], budget
    )
    if not items:  # (a list of lists, 150 deep: once an internal error in _spans)
        raise CaptureError(f"interactions hold no request/response mapping ({_list_depth(inter)})")
    hits = _interaction_starts(data)
    spans = _spans(hits[: len(items)] if len(items) < len(inter) else hits, data, len(items))
    return [_vcr_exchange(i, x, spans[i], starts, budget) for i, x in enumerate(items)], starts


def _aliases_within(
    data: bytes, doc: dict[str, Any], keys: tuple[str, str], inter: list[Any], budget: Budget
) -> list[Any]:
    """The interactions that fit the budget once YAML aliases are expanded (checked only where anchors are).

    Raises:
        CaptureError: not even the first interaction fits (the budget named).
    """
    if not _has_anchor(data):
        return inter
    outside = {k: v for k, v in doc.items() if k not in keys}
    kept = _within_budget(outside, inter, budget, len(data))
    if not kept and inter:
        raise CaptureError(budget.diagnostic() or "YAML aliases past the read budget")
    return kept


def _list_depth(value: list[Any]) -> str:
    """``lists nested 150 deep``: how deep the first items of ``value`` nest lists (what it holds instead)."""
    depth = 0
    while isinstance(value, list) and value:
        depth += 1
        value = value[0]
    return f"lists nested {depth} deep" if depth > 1 else f"a list of {type(value).__name__} values"


def _grpc_exchange(i: int, x: dict[str, Any], span: tuple[int, int], starts: list[int]) -> Exchange | None:
    """A recorded gRPC call (pydantic-ai's cassettes of the xai-sdk), or None for anything else.

    Each interaction holds ``request_sample`` and ``response_sample`` (a unary call) or
    ``request_stream`` and ``response_stream`` (a streamed one), each with the message as
    protobuf JSON under ``json`` (``chunks_json``: one message per chunk) beside its raw bytes.
    The recording names no host, so only the bodies speak.
    """
    req = x.get("request_sample", x.get("request_stream"))
    resp = x.get("response_sample", x.get("response_stream"))
    if not isinstance(req, dict) or not isinstance(resp, dict):
        return None
    messages = resp.get("chunks_json") if "chunks_json" in resp else [resp.get("json")]
    records = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    return Exchange.at(
        i,
        span,
        starts,
        method="gRPC",
        uri="",
        status=None,
        req_headers=[],
        resp_headers=[],
        req_body=req.get("json"),
        body_kind="grpc",
        records=records,
    )


def _vcr_exchange(i: int, x: dict[str, Any], span: tuple[int, int], starts: list[int], budget: Budget) -> Exchange:
    if "request" not in x:
        grpc = _grpc_exchange(i, x, span, starts)
        if grpc is not None:
            return grpc
    req = x.get("request") if isinstance(x.get("request"), dict) else {}
    resp = x.get("response") if isinstance(x.get("response"), dict) else {}
    assert isinstance(req, dict) and isinstance(resp, dict)
    req_headers = _header_pairs(req.get("headers"))
    resp_headers = _header_pairs(resp.get("headers"))
    if "parsed_body" in resp:
        body: Any = resp.get("parsed_body")
    elif isinstance(resp.get("body_b64"), str):  # (home-made recorders on httpx: base64 of the raw body)
        body = _b64decode(resp["body_b64"], budget)
    else:
        body = resp.get("body")
        if isinstance(body, dict) and ("string" in body or "base64_string" in body):  # (else: the JSON body itself)
            body = body.get("string", body.get("base64_string"))
            if isinstance(body, str) and "base64_string" in (resp.get("body") or {}):
                body = _b64decode(body, budget)
    kind, records, text = _body_records(body, _content_type(resp_headers), budget)
    req_body = req.get("parsed_body") if "parsed_body" in req else req.get("body")
    if isinstance(req_body, dict) and "string" in req_body:
        req_body = req_body.get("string")
    return Exchange.at(
        i,
        span,
        starts,
        method=_text(req.get("method")) or "?",
        uri=_text(req.get("uri") or req.get("url")),
        status=_status(resp.get("status", resp.get("status_code"))),
        req_headers=req_headers,
        resp_headers=resp_headers,
        req_body=_request_body(req_body, budget),
        body_kind=kind,
        records=records,
        body_text=text,
        time=_date_header(resp_headers),
    )


def _har_exchange(i: int, e: dict[str, Any], span: tuple[int, int], starts: list[int], budget: Budget) -> Exchange:
    req = e.get("request") if isinstance(e.get("request"), dict) else {}
    resp = e.get("response") if isinstance(e.get("response"), dict) else {}
    assert isinstance(req, dict) and isinstance(resp, dict)
    resp_headers = _header_pairs(resp.get("headers"))
    content = resp.get("content") if isinstance(resp.get("content"), dict) else {}
    assert isinstance(content, dict)
    body: Any = content.get("text")
    if isinstance(body, str) and content.get("encoding") == "base64":
        body = _b64decode(body, budget)
    ctype = _text(content.get("mimeType")).lower() or _content_type(resp_headers)
    kind, records, text = _body_records(body, ctype, budget)
    post = req.get("postData") if isinstance(req.get("postData"), dict) else {}
    assert isinstance(post, dict)
    return Exchange.at(
        i,
        span,
        starts,
        method=_text(req.get("method")) or "?",
        uri=_text(req.get("url")),
        status=_status(resp.get("status")),
        req_headers=_header_pairs(req.get("headers")),
        resp_headers=resp_headers,
        req_body=_request_body(post.get("text"), budget),
        body_kind=kind,
        records=records,
        body_text=text,
        time=parse_time(e.get("startedDateTime")) or _date_header(resp_headers),
        container="HAR log",
    )
