"""HTTP captures: VCR cassettes (YAML) and HAR 1.2 logs, one session per file, one item per interaction.

A cassette (vcrpy, pytest-recording, pydantic-ai) is ``{"interactions": [{"request": {uri,
method, headers, body}, "response": {status, headers, body: {string} | parsed_body}}]}``;
a HAR file is ``{"log": {"entries": [{startedDateTime, request: {url, headers, postData},
response: {status, headers, content: {text, encoding}}}]}}``. Each response body is read as
JSON, SSE, JSON lines or an AWS event stream and handed to the API adapter that matches it.
The request URL and the headers are evidence too: what they point to lives in the catalogue
(``[[endpoint]]``, ``[[header]]`` and ``[[upstream]]`` tables), not here.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import struct
import zlib
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import orjson

from musetui.fingerprints.types import Decoded, Strength, Tag
from musetui.model import Item, SessionSummary, parse_time
from musetui.sources.base import ZONE_MODEL, ZONE_QUOTED, Record, dig, file_stem, new_item, preview

if TYPE_CHECKING:
    from musetui.fingerprints.attribution import Located

FORMAT = "http-capture"

#: Captures larger than this are not parsed (a diagnostic says so).
MAX_CAPTURE_BYTES = 64 * 1024 * 1024
#: A decompressed body larger than this is cut (zip bombs).
MAX_BODY_BYTES = 32 * 1024 * 1024

_YAML_EXTS = (".yaml", ".yml")
#: A cassette's interaction starts on a line ``- request:`` (or ``- response:``). The pattern
#: starts with the newline, a literal, so ``re`` skips to candidates at memchr speed; the first
#: line is matched on its own (``_interaction_starts``).
_INTERACTION_RE = re.compile(rb"\n[ \t]*-[ \t]+(?:request|response):")
_FIRST_INTERACTION_RE = re.compile(rb"[ \t]*-[ \t]+(?:request|response):")
_HAR_ENTRY_RE = re.compile(rb'"startedDateTime"\s*:')
_BEDROCK_MODEL_RE = re.compile(r"/model/([^/]+)/(?:invoke|converse)")
_GOOGLE_MODEL_RE = re.compile(r"/models/([^/:]+):[A-Za-z]+")


#: A cassette whose YAML aliases expand past this many values is refused (an alias bomb).
MAX_NODES = 2_000_000
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


def _expanded_size(doc: Any, cap: int) -> int:
    """How many values ``doc`` holds once its shared (aliased) parts are counted every time (stops past ``cap``)."""
    n = 0
    stack = [doc]
    while stack and n <= cap:
        v = stack.pop()
        n += 1
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return n


class NotACapture(ValueError):
    """A YAML or HAR file that holds no HTTP interactions (skipped quietly, like any non-transcript)."""


class CaptureError(ValueError):
    """A file that claims to be a capture but cannot be read as one."""


def claims(path: str, data: bytes) -> str | None:
    """``"vcr"`` or ``"har"`` when the file is (or must be treated as) a capture; None otherwise.

    Decided by the extension and a look at the first bytes, so JSON Lines files pay one
    ``endswith`` and nothing more.
    """
    low = path.lower()
    if low.endswith(".gz"):  # (read expanded: a LangChain ``*.yaml.gz`` cassette)
        low = low[:-3]
    if low.endswith(_YAML_EXTS):
        return "vcr"
    if low.endswith(".har"):
        return "har"
    return None


def is_har(document: Any) -> bool:
    """True for a parsed HAR log (whatever the file's extension)."""
    log = document.get("log") if isinstance(document, dict) else None
    return isinstance(log, dict) and isinstance(log.get("entries"), list)


def _is_interaction(x: Any) -> bool:
    """A VCR interaction: a request naming its URL, and a response with a status."""
    if not isinstance(x, dict):
        return False
    req, resp = x.get("request"), x.get("response")
    return (isinstance(req, dict) and isinstance(req.get("uri") or req.get("url"), str)
            and isinstance(resp, dict) and ("status" in resp or "status_code" in resp))  # (status_code: httpx/requests names)


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
    return items if all(isinstance(q, dict) and isinstance(r, dict) for q, r in zip(reqs, resps, strict=True)) and _is_interaction(items[0]) else None


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


def _text(value: Any) -> str:
    """A header or body value as text (``!!binary`` bytes are decoded as UTF-8)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return str(value)


def _header_pairs(headers: Any) -> list[tuple[str, str]]:
    """Headers as (lower-case name, value) pairs: a VCR mapping of lists or a HAR list."""
    out: list[tuple[str, str]] = []
    if isinstance(headers, dict):
        for name, values in headers.items():
            for v in values if isinstance(values, list) else [values]:
                out.append((_text(name).lower(), _text(v)))
    elif isinstance(headers, list):
        for h in headers:
            if isinstance(h, dict) and "name" in h:
                out.append((_text(h.get("name")).lower(), _text(h.get("value"))))
    return out


def _gunzip(raw: bytes) -> bytes:
    """Inflate a gzip or zlib body, at most :data:`MAX_BODY_BYTES`; the input when it is neither."""
    if raw[:2] == b"\x1f\x8b" or raw[:1] == b"\x78":
        try:
            d = zlib.decompressobj(wbits=47)
            out = d.decompress(raw, MAX_BODY_BYTES)
            return out
        except zlib.error:
            return raw
    return raw


def _eventstream(raw: bytes) -> list[Any] | None:
    """Decode an AWS event stream (``application/vnd.amazon.eventstream``) into JSON records.

    Each message is a 12-byte prelude (total length, headers length, CRC), typed headers,
    a payload and a CRC. ConverseStream payloads become ``{<:event-type>: payload}``;
    InvokeModelWithResponseStream ``chunk`` payloads hold base64 JSON, which is decoded.
    """
    out: list[Any] = []
    pos = 0
    n = len(raw)
    while pos + 16 <= n:
        total, hlen = struct.unpack_from(">II", raw, pos)
        if total < 16 or pos + total > n or hlen > total - 16:
            return out or None
        headers: dict[str, str] = {}
        h = pos + 12
        hend = h + hlen
        while h < hend:
            nlen = raw[h]
            name = raw[h + 1 : h + 1 + nlen].decode("utf-8", "replace")
            h += 1 + nlen
            if h >= hend:
                break
            vtype = raw[h]
            h += 1
            if vtype in (6, 7):
                (vlen,) = struct.unpack_from(">H", raw, h)
                headers[name] = raw[h + 2 : h + 2 + vlen].decode("utf-8", "replace")
                h += 2 + vlen
            else:
                size = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}.get(vtype)
                if size is None:
                    break
                h += size
        payload = raw[hend : pos + total - 4]
        pos += total
        try:
            obj = orjson.loads(payload) if payload else {}
        except orjson.JSONDecodeError:
            continue
        etype = headers.get(":event-type") or headers.get(":exception-type") or "event"
        if etype == "chunk" and isinstance(obj, dict) and isinstance(obj.get("bytes"), str):
            with contextlib.suppress(binascii.Error, ValueError):
                obj = orjson.loads(base64.b64decode(obj["bytes"]))
            out.append(obj)
        else:
            out.append({etype: obj})
    return out or None


def _body_records(body: Any, content_type: str) -> tuple[str, list[Any], str]:
    """Read a response body into (kind, records, text)."""
    if isinstance(body, dict | list):
        if isinstance(body, list) and body and all(isinstance(x, dict) for x in body):
            return "json", list(body), ""
        return "json", [body], ""
    if body is None or body == "" or body == b"":
        return "empty", [], ""
    if isinstance(body, bytes):
        raw = _gunzip(body)
        if "eventstream" in content_type or (len(raw) >= 16 and raw[:1] == b"\x00" and raw[4:8] != b"\x00\x00\x00\x00"):
            stream = _eventstream(raw)
            if stream is not None:
                return "eventstream", stream, ""
        text = raw.decode("utf-8", "replace")
    else:
        text = str(body)
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            obj = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            obj = None
        if obj is not None:
            return _body_records(obj, content_type)
    lines = stripped.splitlines()
    if stripped.startswith(("data:", "event:", ":")):
        events: list[Any] = []
        for ln in lines:
            ln = ln.strip()
            if ln.startswith("data:"):
                payload = ln[5:].strip()
                if payload and payload != "[DONE]":
                    try:
                        events.append(orjson.loads(payload))
                    except orjson.JSONDecodeError:
                        continue
        return "sse", events, "" if events else text
    if len(lines) > 1:
        recs: list[Any] = []
        for ln in lines:
            try:
                recs.append(orjson.loads(ln))
            except orjson.JSONDecodeError:
                continue
        if recs:
            return "jsonl", recs, ""
    return "text", [], text[:4000]


def _request_body(body: Any) -> Any:
    """A request body as parsed JSON when it is JSON, else its text."""
    if isinstance(body, dict | list) or body is None:
        return body
    text = _text(_gunzip(body) if isinstance(body, bytes) else body).strip()
    if text[:1] in ("{", "["):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return text[:4000]


def _content_type(headers: list[tuple[str, str]]) -> str:
    return next((v.lower() for k, v in headers if k == "content-type"), "")


def _status(value: Any) -> int | None:
    """An HTTP status: ``200``, ``{code: 200, …}`` (vcrpy, Ruby's VCR) or ``"200 OK"`` (go-vcr)."""
    code = value.get("code") if isinstance(value, dict) else value
    if isinstance(code, str) and code[:3].isdigit() and code[3:4] in ("", " "):
        return int(code[:3])
    return code if isinstance(code, int) and not isinstance(code, bool) else None


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
    if len(hits) != count:
        return [(0, len(data))] * count
    ends = [*hits[1:], len(data.rstrip())]
    return [(a, max(0, b - a)) for a, b in zip(hits, ends, strict=True)]


def parse(data: bytes, kind: str, document: Any = None) -> tuple[list[Exchange], list[int]]:
    """Read a capture into exchanges and the file's line starts.

    Raises:
        NotACapture: the file holds no interactions (a YAML config, a HAR without entries).
        CaptureError: the file is too large or does not parse.
    """
    if len(data) > MAX_CAPTURE_BYTES:
        raise CaptureError(f"{len(data):,} bytes: larger than the {MAX_CAPTURE_BYTES // 2**20} MiB capture limit")
    starts = _starts(data)
    if kind == "har":
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
            return [_vcr_exchange(i, x, spans[i], starts) for i, x in enumerate(inter)], starts
        entries = [e for e in doc["log"]["entries"] if isinstance(e, dict)]
        spans = _spans([m.start() for m in _HAR_ENTRY_RE.finditer(data)], data, len(entries))
        return [_har_exchange(i, e, spans[i], starts) for i, e in enumerate(entries)], starts
    head = data[:65536]
    if b"interactions" not in head and b"requests" not in head:
        raise NotACapture("no interactions")
    import yaml  # only captures need it

    from musetui.sources.cassette_yaml import load_yaml

    try:
        doc = load_yaml(data)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise CaptureError(f"not valid YAML{where}") from exc
    except (RecursionError, ValueError, TypeError) as exc:
        raise CaptureError(f"YAML could not be loaded: {type(exc).__name__}") from exc
    if _has_anchor(data) and _expanded_size(doc, MAX_NODES) > MAX_NODES:
        raise CaptureError(f"YAML aliases expand past {MAX_NODES:,} values")
    inter = doc.get("interactions", doc.get("http_interactions")) if isinstance(doc, dict) else None  # (Ruby's VCR)
    if inter is None and isinstance(doc, dict):
        paired = _paired(doc)
        if paired is not None:  # each item is located at its response (the requests are listed first)
            spans = _spans(_response_starts(data), data, len(paired))
            return [_vcr_exchange(i, x, spans[i], starts) for i, x in enumerate(paired)], starts
    if not isinstance(inter, list) or not inter:
        raise NotACapture("no interactions")
    items = [x for x in inter if isinstance(x, dict)]
    spans = _spans(_interaction_starts(data), data, len(items))
    return [_vcr_exchange(i, x, spans[i], starts) for i, x in enumerate(items)], starts


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


def _vcr_exchange(i: int, x: dict[str, Any], span: tuple[int, int], starts: list[int]) -> Exchange:
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
        body = resp["body_b64"]
        with contextlib.suppress(binascii.Error, ValueError):
            body = base64.b64decode(body)
    else:
        body = resp.get("body")
        if isinstance(body, dict) and ("string" in body or "base64_string" in body):  # (else: the JSON body itself)
            body = body.get("string", body.get("base64_string"))
            if isinstance(body, str) and "base64_string" in (resp.get("body") or {}):
                with contextlib.suppress(binascii.Error, ValueError):
                    body = base64.b64decode(body)
    kind, records, text = _body_records(body, _content_type(resp_headers))
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
        req_body=_request_body(req_body),
        body_kind=kind,
        records=records,
        body_text=text,
        time=_date_header(resp_headers),
    )


def _har_exchange(i: int, e: dict[str, Any], span: tuple[int, int], starts: list[int]) -> Exchange:
    req = e.get("request") if isinstance(e.get("request"), dict) else {}
    resp = e.get("response") if isinstance(e.get("response"), dict) else {}
    assert isinstance(req, dict) and isinstance(resp, dict)
    resp_headers = _header_pairs(resp.get("headers"))
    content = resp.get("content") if isinstance(resp.get("content"), dict) else {}
    assert isinstance(content, dict)
    body: Any = content.get("text")
    if isinstance(body, str) and content.get("encoding") == "base64":
        with contextlib.suppress(binascii.Error, ValueError):
            body = base64.b64decode(body)
    ctype = _text(content.get("mimeType")).lower() or _content_type(resp_headers)
    kind, records, text = _body_records(body, ctype)
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
        req_body=_request_body(post.get("text")),
        body_kind=kind,
        records=records,
        body_text=text,
        time=parse_time(e.get("startedDateTime")) or _date_header(resp_headers),
        container="HAR log",
    )


def _date_header(headers: list[tuple[str, str]]) -> float | None:
    value = next((v for k, v in headers if k == "date"), None)
    if not value:
        return None
    try:
        from email.utils import parsedate_to_datetime

        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


# ---------------------------------------------------------------------------------------------
# What a scan keeps: summary fields and located evidence
# ---------------------------------------------------------------------------------------------

_CATALOGUE: Any = None


def _catalogue() -> Any:
    """The model catalogue (built-in plus the user's file), loaded once per process."""
    global _CATALOGUE
    if _CATALOGUE is None:
        from musetui.fingerprints.catalogue import load_catalogue

        _CATALOGUE = load_catalogue()
    return _CATALOGUE


def body_format(records: list[Any]) -> str | None:
    """The API format of a response body's records (the first that any adapter recognises)."""
    from musetui import sources

    for rec in records[:8]:
        found = sources.sniff(rec)
        if found is not None:
            return found[0]
    return None


def model_from_uri(uri: str) -> str | None:
    """The model a request URL names (Bedrock ``/model/<id>/…``, Google ``/models/<m>:verb``)."""
    path = urlsplit(uri).path
    m = _BEDROCK_MODEL_RE.search(path) or _GOOGLE_MODEL_RE.search(path)
    return unquote(m.group(1)) if m else None


def _signal(detector: str, value: str, entry: Any, meaning: str, fields: tuple[tuple[str, str], ...]) -> Decoded:
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
        meaning=meaning + (f" ({entry.note})" if entry.note else ""),
        shape=str(getattr(entry, "match", None) or getattr(entry, "name", "")),
        via=entry.via,
    )


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
        "router-upstream", name, entry, f"{router} names its upstream {name!r}: {where}", (("router", router), ("upstream", name))
    )


def walk_body(obj: Any, via_hint: str | None = None) -> list[tuple[Decoded, str | None, str]]:
    """Every artifact of one response record, plus the router's upstream when it names one."""
    from musetui.fingerprints import extract

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


def scan(data: bytes, summary: SessionSummary, kind: str, document: Any = None) -> tuple[list[Located], list[int]]:
    """Fill ``summary`` from a capture and return its located evidence and the exchanges' offsets.

    Raises:
        NotACapture, CaptureError: see :func:`parse`.
    """
    from musetui.fingerprints import extract
    from musetui.fingerprints.attribution import TOL_AFTER_CREATED_S, Located

    exchanges, starts = parse(data, kind, document)
    cat = _catalogue()
    loc = _Locator(data, starts)
    located: list[Located] = []
    seen: set[str] = set()
    for ex in exchanges:
        parts = urlsplit(ex.uri)
        hostname = (parts.hostname or "").lower()
        via_hint: str | None = None
        endpoint = cat.endpoint(hostname) if hostname else None
        if endpoint is not None:
            via_hint = endpoint.via
            tag = "endpoint:" + hostname
            if tag not in seen:
                seen.add(tag)
                dec = _signal(
                    "http-endpoint",
                    hostname + parts.path,
                    endpoint,
                    f"request sent to {hostname}",
                    (("host", hostname), ("path", parts.path)),
                )
                located.append(Located(dec, loc.line(ex, ex.uri), "request.uri", ZONE_MODEL, None))
        for zone_name, headers in (("response", ex.resp_headers), ("request", ex.req_headers)):
            for name, value in headers:
                entry = cat.header(name, value)
                if entry is not None and (zone_name == "response" or entry.via):
                    tag = f"header:{name}"
                    if tag not in seen:
                        seen.add(tag)
                        shown = value if len(value) <= 80 else value[:77] + "…"
                        dec = _signal("http-header", f"{name}: {shown}", entry, f"{zone_name} header {name}", (("header", name), ("value", shown)))
                        field_name = name if zone_name == "response" else f"request.{name}"
                        located.append(Located(dec, loc.line(ex, name), field_name, ZONE_MODEL, None))
                if zone_name == "response" and len(value) >= 9:
                    for dec in _decode_value(value, name):
                        if dec.value not in seen:
                            seen.add(dec.value)
                            located.append(Located(dec, loc.line(ex, dec.value), name, ZONE_MODEL, None))
        t_line = _exchange_time(ex)
        for rec in ex.records:
            for dec, _key, path in walk_body(rec, via_hint):
                if dec.value and dec.value in seen:
                    continue
                seen.add(dec.value or f"{dec.detector}:{path}")
                located.append(
                    Located(dec, loc.line(ex, dec.value or path.rsplit(".", 1)[-1]), "response.body." + path,
                            ZONE_MODEL, t_line, after_tol=TOL_AFTER_CREATED_S)
                )
        if isinstance(ex.req_body, dict | list):
            for dec, _key, path in extract.walk_record(ex.req_body):
                if dec.value and dec.value in seen:
                    continue
                seen.add(dec.value or f"{dec.detector}:request:{path}")
                located.append(Located(dec, loc.line(ex, dec.value or path), "request.body." + path, ZONE_QUOTED, None))
    summarize(exchanges, summary)
    return located, [ex.offset for ex in exchanges]


def _exchange_time(ex: Exchange) -> float | None:
    """The response's own creation time, else the HAR start or the ``date`` header."""
    for rec in ex.records:
        t = _record_time(rec)
        if t is not None:
            return t
    return ex.time


def summarize(exchanges: list[Exchange], summary: SessionSummary) -> None:
    """Fill the summary fields of a capture: format, session id, declared models, times, items."""
    formats: dict[str, int] = {}
    times: list[float] = []
    for ex in exchanges:
        fmt = body_format(ex.records)
        formats[fmt or ex.body_kind] = formats.get(fmt or ex.body_kind, 0) + 1
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
    summary.format = FORMAT
    what = exchanges[0].container if exchanges else "VCR cassette"
    summary.format_rule = f"http-capture: {what} with {len(exchanges)} interaction(s)"
    if summary.session_id is None:
        summary.session_id = file_stem(summary.path)
    summary.items = len(exchanges)
    if times:
        summary.started_at, summary.ended_at = min(times), max(times)
    bodies = ", ".join(f"{k} ×{n}" for k, n in sorted(formats.items()))
    summary.notes.append(f"{what}: {len(exchanges)} interaction(s); response bodies: {bodies}")


def _decode_value(value: str, name: str) -> list[Decoded]:
    from musetui.fingerprints.decoders import decode_string

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


def records(data: bytes, path: str) -> list[Record]:
    """One record per exchange (its normalised request/response), for opening the session."""
    return [Record(ex.line, ex.offset, ex.length, ex.normalized(body_format(ex.records))) for ex in _exchanges(data, path)]


def _exchanges(data: bytes, path: str) -> list[Exchange]:
    kind = claims(path, data) or "har"
    try:
        exchanges, _starts = parse(data, kind)
    except (NotACapture, CaptureError):
        return []
    return exchanges


def identify(data: bytes, summary: SessionSummary) -> bool:
    """Fill ``summary`` from a capture's bytes without reading evidence (for search); False: not one."""
    exchanges = _exchanges(data, summary.path)
    if not exchanges:
        return False
    summarize(exchanges, summary)
    return True


def items(recs: list[Record]) -> list[Item]:
    """One item per exchange; the body's own adapter names what the response holds."""
    from musetui import sources

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
            inner = sources.build_items(str(fmt), [Record(rec.line, rec.offset, rec.length, b) for b in body_recs])
        head = f"{req.get('method')} {req.get('uri')} → {resp.get('status')}"
        kinds = [i.kind for i in inner if i.kind not in ("event", "meta", "usage", "unknown")]
        text = "\n".join([head, *(i.text for i in inner if i.text)]) if inner else f"{head}\n{preview(str(body or ''), 2000)}"
        ids: list[str] = []
        for i in inner:
            ids.extend(x for x in i.ids if x not in ids)
        states = [i.reasoning for i in inner if i.reasoning]
        reasoning = "encrypted" if "encrypted" in states else (states[0] if states else None)
        item = new_item(rec, len(out), kinds[0] if kinds else "event", role="assistant" if kinds else None,
                        time=next((i.time for i in inner if i.time), None), name=str(fmt or obj.get("body_kind")),
                        subkind="interaction", ids=ids[:32], text=text[:20000], reasoning=reasoning)
        out.append(item)
    return out
