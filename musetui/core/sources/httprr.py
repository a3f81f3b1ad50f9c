"""Go ``httprr`` traces (``rsc.io/httprr``, langchaingo's and Oscar's recorder): raw HTTP exchanges.

The file is the line ``httprr trace v1``, then one record per round trip: a line ``N M`` with
two decimal sizes, then N bytes of the request and M bytes of the response, each exactly as Go's
``Request.Write`` and ``Response.Write`` put them on the wire (request line or status line,
headers, a blank line, the body; chunked bodies stay chunked). The request line holds only the
path, so the URL is rebuilt from the ``Host`` header as a network-path reference (``//host/path``):
the scheme is not recorded.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from musetui.core.budget import Budget
from musetui.core.sources.capture_read import (
    CaptureError,
    Exchange,
    NotACapture,
    _body_records,
    _content_type,
    _date_header,
    _request_body,
    _starts,
    check_size,
)
from musetui.core.sources.spec import CaptureLayout

MAGIC = b"httprr trace v1\n"
#: One message's header block is at most this long (Go's default is 1 MiB).
MAX_HEADER_BYTES = 1 << 20


def parse(data: bytes, document: Any = None, budget: Budget | None = None) -> tuple[list[Exchange], list[int]]:
    """Read an ``httprr`` trace into exchanges and the file's line starts.

    Raises:
        NotACapture: the file does not start with the ``httprr trace v1`` line, or records nothing.
        CaptureError: a record's size line is not two sizes, or its sizes run past the file's end.
    """
    check_size(data)
    budget = budget or Budget()
    if not data.startswith(MAGIC):
        raise NotACapture("no 'httprr trace v1' line")
    starts = _starts(data)
    exchanges: list[Exchange] = []
    pos = len(MAGIC)
    while pos < len(data):
        nl = data.find(b"\n", pos)
        sizes = data[pos : nl if nl >= 0 else len(data)].split()
        if nl < 0 or len(sizes) != 2 or not all(s.isdigit() for s in sizes):
            raise CaptureError(f"{_where(exchanges, starts, pos)}: expected the sizes 'N M'")
        n, m = int(sizes[0]), int(sizes[1])
        body = nl + 1
        if body + n + m > len(data):
            raise CaptureError(
                f"{_where(exchanges, starts, pos)}: its sizes ({n} + {m} bytes) run past the end of the file"
            )
        exchanges.append(
            _exchange(
                len(exchanges),
                data[body : body + n],
                data[body + n : body + n + m],
                (pos, body + n + m - pos),
                starts,
                budget,
            )
        )
        pos = body + n + m
    if not exchanges:
        raise NotACapture("an httprr trace with no round trips")
    return exchanges, starts


def _where(exchanges: list[Exchange], starts: list[int], pos: int) -> str:
    return f"record {len(exchanges) + 1} at line {bisect_right(starts, pos)}"


def _message(raw: bytes) -> tuple[str, list[tuple[str, str]], bytes]:
    """A raw HTTP/1.x message: its first line, its headers (lower-case names) and its body."""
    head_end = raw.find(b"\r\n\r\n", 0, MAX_HEADER_BYTES)
    head, body = (raw[:head_end], raw[head_end + 4 :]) if head_end >= 0 else (raw, b"")
    first, _, rest = head.partition(b"\r\n")
    headers: list[tuple[str, str]] = []
    for h in rest.split(b"\r\n"):
        name, sep, value = h.partition(b":")
        if sep:
            headers.append((name.strip().decode("latin-1").lower(), value.strip().decode("utf-8", "replace")))
    if any(k == "transfer-encoding" and "chunked" in v.lower() for k, v in headers):
        body = _dechunk(body)
    return first.decode("utf-8", "replace"), headers, body


def _dechunk(body: bytes) -> bytes:
    """The payload of a chunked body (what was read of it, when it is cut short)."""
    out: list[bytes] = []
    pos = 0
    while pos < len(body):
        nl = body.find(b"\r\n", pos)
        if nl < 0:
            break
        try:
            size = int(body[pos:nl].split(b";", 1)[0].strip() or b"0", 16)
        except ValueError:
            break
        if size == 0:
            break
        out.append(body[nl + 2 : nl + 2 + size])
        pos = nl + 2 + size + 2
    return b"".join(out)


def _exchange(i: int, req: bytes, resp: bytes, span: tuple[int, int], starts: list[int], budget: Budget) -> Exchange:
    request_line, req_headers, req_body = _message(req)
    status_line, resp_headers, resp_body = _message(resp)
    method, _, target = request_line.partition(" ")
    target = target.rsplit(" ", 1)[0] if target.endswith(("HTTP/1.1", "HTTP/1.0")) else target
    host = next((v for k, v in req_headers if k == "host"), "")
    uri = target if "://" in target else (f"//{host}{target}" if host else target)
    code = status_line.split(" ", 2)[1] if status_line.count(" ") >= 1 else ""
    kind, records, text = _body_records(resp_body, _content_type(resp_headers), budget)
    return Exchange.at(
        i,
        span,
        starts,
        method=method or "?",
        uri=uri,
        status=int(code) if code.isdigit() else None,
        req_headers=req_headers,
        resp_headers=resp_headers,
        req_body=_request_body(req_body or None, budget),
        body_kind=kind,
        records=records,
        body_text=text,
        time=_date_header(resp_headers),
        container="httprr trace",
    )


LAYOUT = CaptureLayout("httprr", (".httprr",), parse, magic=MAGIC)
