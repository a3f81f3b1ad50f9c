"""The labeller of bench/eval_attribution.py: what an HTTP capture's envelope proves, and nothing else.

It reads capture files with its own small reader (vcrpy, go-vcr, langchain's split YAML, Ruby
VCR, HAR, JSON cassettes and Go ``httprr`` traces, gzipped or not) and labels each exchange from
its request alone: the URL's host and path and the model the request names, through the tables
``[label]`` of ``bench/eval_sources.toml``. Those tables were written from the services' public
API documentation. Nothing here imports musetui: a detector's mistake must not come back as a
label.
"""

from __future__ import annotations

import base64
import fnmatch
import gzip
import json
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

SOURCES = Path(__file__).resolve().parent / "eval_sources.toml"
ANY_HOST = "?"  # a label's host when the envelope cannot show it (a router chose the upstream)
LOOPBACK = re.compile(r"^(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[?::1\]?|host\.docker\.internal)$")
REGION = re.compile(r"^(us|eu|apac|global|us-gov|jp|au|ca)\.")


# ---------------------------------------------------------------- reading captures (our own reader)
@dataclass
class Exchange:
    """One request and its response, as recorded."""

    index: int
    method: str
    url: str
    req_headers: dict[str, str]
    req_body: bytes
    status: int | None
    resp_headers: dict[str, str]
    resp_body: bytes


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """A safe loader that builds ``!!python/…`` and ``!ruby/…`` tagged nodes as their plain data."""


def _untag(loader: Any, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        seq = loader.construct_sequence(node, deep=True)
        return seq[0] if len(seq) == 1 and isinstance(seq[0], str) else seq
    return loader.construct_mapping(node, deep=True)


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", _untag)
_Loader.add_multi_constructor("!ruby/", _untag)
_Loader.add_constructor("!binary", lambda loader, node: base64.b64decode(loader.construct_scalar(node)))


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value).encode()
    return str(value).encode("utf-8", "surrogatepass")


def _headers(raw: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    if isinstance(raw, dict):
        for k, v in raw.items():
            out[str(k).lower()] = str(v[0] if isinstance(v, list) and v else v)
    elif isinstance(raw, list):
        for h in raw:
            if isinstance(h, dict) and "name" in h:
                out[str(h["name"]).lower()] = str(h.get("value", ""))
    return out


def _decoded(body: bytes, headers: dict[str, str]) -> bytes:
    """The body without its transfer compression (gzip, deflate); brotli stays as it is."""
    if body[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(body)
        except (OSError, EOFError, zlib.error):
            return body
    if headers.get("content-encoding", "").lower() == "deflate":
        try:
            return zlib.decompress(body)
        except zlib.error:
            return body
    return body


def _vcr_body(body: Any) -> bytes:
    if isinstance(body, dict):
        if "base64_string" in body:
            return base64.b64decode(str(body["base64_string"]), validate=False)
        if "string" in body:
            return _bytes(body["string"])
        return _bytes(body)
    return _bytes(body)


def _vcr(doc: Any) -> Iterator[Exchange]:
    inter = doc.get("interactions") or doc.get("http_interactions") or []
    if not inter and isinstance(doc.get("requests"), list) and isinstance(doc.get("responses"), list):
        inter = [{"request": q, "response": r} for q, r in zip(doc["requests"], doc["responses"], strict=False)]
    for i, x in enumerate(inter if isinstance(inter, list) else []):
        req, resp = x.get("request") or {}, x.get("response") or {}
        status = resp.get("status")
        code = resp.get("code", status.get("code") if isinstance(status, dict) else status)
        rh = _headers(resp.get("headers"))
        body = resp["parsed_body"] if "parsed_body" in resp else resp.get("body")
        qh = _headers(req.get("headers"))
        url = str(req.get("uri") or req.get("url") or "")
        if url.startswith("/") and "host" in qh:
            url = "https://" + qh["host"] + url
        yield Exchange(
            i,
            str(req.get("method", "")),
            url,
            qh,
            _vcr_body(req["parsed_body"] if "parsed_body" in req else req.get("body")),
            _int(code),
            rh,
            _decoded(_vcr_body(body), rh),
        )


def _int(value: Any) -> int | None:
    return int(value) if str(value).isdigit() else None


def _har(doc: Any) -> Iterator[Exchange]:
    for i, e in enumerate(doc.get("log", {}).get("entries", [])):
        req, resp = e.get("request", {}), e.get("response", {})
        content = resp.get("content", {}) or {}
        text = content.get("text") or ""
        body = base64.b64decode(text) if content.get("encoding") == "base64" else _bytes(text)
        rh = _headers(resp.get("headers"))
        yield Exchange(
            i,
            str(req.get("method", "")),
            str(req.get("url", "")),
            _headers(req.get("headers")),
            _bytes((req.get("postData") or {}).get("text")),
            _int(resp.get("status")),
            rh,
            _decoded(body, rh),
        )


def _http_message(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _sep, body = raw.partition(b"\r\n\r\n")
    if not _sep:
        head, _sep, body = raw.partition(b"\n\n")
    lines = head.decode("latin-1").splitlines()
    headers = {}
    for line in lines[1:]:
        k, _c, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out, rest = b"", body
        while rest:
            size_line, _n, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2 :]
        body = out
    return (lines[0] if lines else ""), headers, _decoded(body, headers)


def _httprr(data: bytes) -> Iterator[Exchange]:
    pos, i = data.index(b"\n") + 1, 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            return
        sizes = data[pos:nl].split()
        if len(sizes) != 2:
            return
        n1, n2 = int(sizes[0]), int(sizes[1])
        req, resp = data[nl + 1 : nl + 1 + n1], data[nl + 1 + n1 : nl + 1 + n1 + n2]
        pos = nl + 1 + n1 + n2
        first, qh, qb = _http_message(req)
        status_line, rh, rb = _http_message(resp)
        parts, code = first.split(" "), status_line.split(" ")
        url = parts[1] if len(parts) > 1 else ""
        if url.startswith("/") and "host" in qh:
            url = "https://" + qh["host"] + url
        yield Exchange(
            i,
            parts[0],
            url,
            qh,
            qb,
            int(code[1]) if len(code) > 1 and code[1].isdigit() else None,
            rh,
            rb,
        )
        i += 1


def capture_kind(head: bytes) -> str | None:
    """What kind of HTTP recording a file's first bytes show, or None when it is none.

    Args:
        head: the file's first few kilobytes.

    Returns:
        ``vcr-yaml``, ``vcr-split``, ``ruby-vcr``, ``har``, ``json-cassette``, ``httprr`` or None.
    """
    if head.startswith(b"httprr trace v1"):
        return "httprr"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith((b"{", b"[")):
        if b'"log"' in head and b'"entries"' in head:
            return "har"
        if b'"interactions"' in head and b'"request"' in head:
            return "json-cassette"
        return None
    if b"http_interactions:" in head:
        return "ruby-vcr"
    if text.startswith(b"requests:") and b"uri:" in head:
        return "vcr-split"  # langchain's serializer: all requests, then all responses
    if b"interactions:" in head and b"request:" in head:
        return "vcr-yaml"
    return None


def unpacked(data: bytes) -> bytes:
    """A capture file's bytes, gunzipped when the file is gzip (``.yaml.gz`` cassettes)."""
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return data
    return data


def sniff(data: bytes) -> str | None:
    """:func:`capture_kind` of a whole file, gzipped or not."""
    return capture_kind(unpacked(data)[:8192])


def read_capture(data: bytes) -> list[Exchange]:
    """Every exchange of a capture file (vcrpy, go-vcr, Ruby VCR, HAR, JSON cassette, httprr; gzipped too)."""
    data = unpacked(data)
    if data.startswith(b"httprr trace v1"):
        return list(_httprr(data))
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    doc = json.loads(text) if text[:1] in (b"{", b"[") else yaml.load(data, Loader=_Loader)
    if not isinstance(doc, dict):
        return []
    return list(_har(doc) if "log" in doc else _vcr(doc))


# ---------------------------------------------------------------- the labeller (envelope only)
@dataclass(frozen=True)
class Label:
    """What an exchange's envelope proves: the provider, host and via it must get, and why."""

    provider: str
    host: str | None
    via: str | None
    basis: str


class Labeller:
    """Labels exchanges from their URL and request alone, with the tables of eval_sources.toml."""

    def __init__(self, tables: dict[str, Any]) -> None:
        self.hosts: dict[str, dict[str, str]] = tables["hosts"]
        self.paths: list[str] = tables["model_paths"]
        self.makers: dict[str, str] = tables["makers"]
        self.orgs: dict[str, str] = tables["orgs"]

    def _service(self, host: str) -> dict[str, str] | None:
        if host in self.hosts:
            return self.hosts[host]
        for pattern, spec in self.hosts.items():
            if "*" in pattern and fnmatch.fnmatch(host, pattern):
                return spec
        return None

    def maker(self, model: str | None) -> str | None:
        """The maker of a model name, or None when the tables do not know it."""
        if not model:
            return None
        m = unquote(model).strip().lower()
        m = m.rsplit("/models/", 1)[-1] if "/models/" in m else m
        m = m.rsplit("/", 1)[-1] if m.startswith("arn:") else m
        if "/" in m:
            org, _s, rest = m.partition("/")
            if org in self.orgs:
                return self.orgs[org]
            m = rest
        m = REGION.sub("", m)
        for org in ("openai.", "moonshotai.", "qwen.", "deepseek.", "mistral.", "google."):
            if m.startswith(org):
                return self.orgs.get(org[:-1], None)
        for prefix, who in self.makers.items():
            if m.startswith(prefix):
                return who
        return None

    @staticmethod
    def request_json(ex: Exchange) -> Any:
        """The request body as JSON, or None."""
        try:
            return json.loads(ex.req_body) if ex.req_body[:1] == b"{" else None
        except ValueError:
            return None

    @classmethod
    def request_model(cls, ex: Exchange) -> str | None:
        """The model the request names: in its JSON body, else in its URL path."""
        body = cls.request_json(ex)
        if isinstance(body, dict) and isinstance(body.get("model"), str) and body["model"]:
            return str(body["model"])
        path = unquote(urlsplit(ex.url).path)
        for pat in (
            r"/publishers/([^/]+)/models/([^/:]+)",
            r"/models/([^/:]+)",
            r"/model/([^/]+)/",
            r"/deployments/([^/]+)/",
        ):
            hit = re.search(pat, path)
            if hit:
                return "/".join(hit.groups())
        return None

    def label(self, ex: Exchange) -> Label | None:
        """The exchange's label, or None when its envelope does not decide one."""
        if ex.status is None or not 200 <= ex.status < 300:
            return None
        parts = urlsplit(ex.url)
        host, path = (parts.hostname or "").lower(), parts.path
        if not any(
            fnmatch.fnmatch(path + (":" if ":" not in path else ""), p) or fnmatch.fnmatch(path, p) for p in self.paths
        ):
            return None
        model = self.request_model(ex)
        if LOOPBACK.match(host) or parts.port == 11434:
            if re.search(r"/(groq|openai|anthropic|bedrock|google|gemini|proxy|gateway)(/|$)", path):
                return None
            who = self.maker(model)
            return Label(who, None, None, f"loopback server, model {model}") if who else None
        spec = self._service(host)
        if spec is None:
            return None
        who = spec["provider"]
        if who == "model":
            found = self.maker(model)
            if found is None:
                return None
            who, why = found, f"{host}, model {model}"
        else:
            why = host
        via = spec.get("via") or None
        body = self.request_json(ex)
        if via and isinstance(body, dict) and body.get("models"):
            return None  # the request let the router fall back to other models: the envelope decides no maker
        # Behind a router the envelope does not show which cloud served the call: any host is right.
        return Label(who, ANY_HOST if via else spec.get("host") or None, via, why)


@dataclass
class Capture:
    """One capture file and its labelled exchanges."""

    repo: str
    split: str
    path: str
    file: Path
    kind: str
    exchanges: list[Exchange]
    labels: dict[int, Label]
    embedding: dict[int, bool]

    @classmethod
    def labelled(
        cls,
        repo: str,
        split: str,
        path: str,
        file: Path,
        kind: str,
        exchanges: list[Exchange],
        labeller: Labeller,
    ) -> Capture:
        """A capture with every exchange labelled by ``labeller``."""
        labels = {ex.index: lb for ex in exchanges if (lb := labeller.label(ex)) is not None}
        embedding = {ex.index: bool(re.search(r"embed", urlsplit(ex.url).path, re.I)) for ex in exchanges}
        return cls(repo, split, path, file, kind, exchanges, labels, embedding)

    def file_labels(self) -> tuple[list[Label], bool]:
        """The label of the majority of labelled model calls (all tied ones, first-seen first), and
        whether the calls name two providers. Embedding calls vote only in a capture of nothing else:
        their vectors carry no provider evidence, so they cannot outvote the calls that generated text."""
        calls = [lb for i, lb in sorted(self.labels.items()) if not self.embedding[i]]
        calls = calls or [lb for _i, lb in sorted(self.labels.items())]
        if not calls:
            return [], False
        votes = Counter((lb.provider, lb.host, lb.via) for lb in calls)
        top = max(votes.values())
        tied = list(
            dict.fromkeys(
                (lb.provider, lb.host, lb.via) for lb in calls if votes[(lb.provider, lb.host, lb.via)] == top
            )
        )
        labels = [next(lb for lb in calls if (lb.provider, lb.host, lb.via) == key) for key in tied]
        return labels, len({lb.provider for lb in self.labels.values()}) > 1
