"""A recorded HTTP exchange's parts: header pairs, status, request and response bodies.

A response body becomes records whatever way it was stored: JSON, JSON lines, server-sent
events, an AWS event stream, gzip- or zlib-compressed, base64 (Ruby VCR's ``!binary``). Every
inflated or decoded byte is charged to the file's :class:`~musetui.core.budget.Budget`.
:mod:`.capture_read` reads each recorder's layout with these.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import orjson

from musetui.core.budget import Budget

#: A decompressed body larger than this is cut (zip bombs).
MAX_BODY_BYTES = 32 * 1024 * 1024


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


def _gunzip(raw: bytes, budget: Budget) -> bytes:
    """Inflate a gzip or zlib body, at most :data:`MAX_BODY_BYTES` and the budget's room; the input when it is neither."""
    if raw[:2] == b"\x1f\x8b" or raw[:1] == b"\x78":
        room = budget.room()
        try:
            d = zlib.decompressobj(wbits=47)
            out = d.decompress(raw, min(MAX_BODY_BYTES, room) or 1)
        except zlib.error:
            return raw
        if len(out) >= room and (d.unconsumed_tail or not d.eof):
            budget.bytes_tripped("gzip bodies")
            out = out[:room]
        budget.charge(len(out))
        return out
    return raw


def _b64decode(text: str, budget: Budget) -> bytes | str:
    """A base64 body decoded (charged to the budget); the text itself when it is not base64 or past the budget."""
    if len(text) // 4 * 3 > budget.room():
        budget.bytes_tripped("base64 bodies")
        return text
    try:
        out = base64.b64decode(text)
    except (binascii.Error, ValueError):
        return text
    budget.charge(len(out))
    return out


def _text_lines(text: str) -> Iterator[str]:
    """``text.splitlines()``, made a slice at a time (the same lines, never a list of them all)."""
    pos = 0
    n = len(text)
    while pos < n:
        cut = text.find("\n", pos + _LINES_SLICE)
        end = n if cut < 0 else cut + 1
        yield from text[pos:end].splitlines()
        pos = end


#: Characters of a body split into lines at a time (``splitlines`` on each slice, cut after a ``\n``).
_LINES_SLICE = 1 << 20


def _eventstream(raw: bytes, budget: Budget) -> list[Any] | None:
    """Decode an AWS event stream (``application/vnd.amazon.eventstream``) into JSON records.

    Each message is a 12-byte prelude (total length, headers length, CRC), typed headers,
    a payload and a CRC. ConverseStream payloads become ``{<:event-type>: payload}``;
    InvokeModelWithResponseStream ``chunk`` payloads hold base64 JSON, which is decoded.
    """
    out: list[Any] = []
    pos = 0
    n = len(raw)
    while pos + 16 <= n:
        if not budget.take_item():
            break
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


def _body_records(body: Any, content_type: str, budget: Budget) -> tuple[str, list[Any], str]:
    """Read a response body into (kind, records, text), within the file's budget."""
    if isinstance(body, dict | list):
        if isinstance(body, list) and body and all(isinstance(x, dict) for x in body):
            return "json", list(body), ""
        return "json", [body], ""
    if body is None or body == "" or body == b"":
        return "empty", [], ""
    if isinstance(body, bytes):
        raw = _gunzip(body, budget)
        if "eventstream" in content_type or (len(raw) >= 16 and raw[:1] == b"\x00" and raw[4:8] != b"\x00\x00\x00\x00"):
            stream = _eventstream(raw, budget)
            if stream is not None:
                return "eventstream", stream, ""
        text = raw.decode("utf-8", "replace")
        del raw
    else:
        text = str(body)
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            obj = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            obj = None
        if obj is not None:
            return _body_records(obj, content_type, budget)
    if stripped.startswith(("data:", "event:", ":")):
        events: list[Any] = []
        for ln in _text_lines(stripped):
            ln = ln.strip()
            if ln.startswith("data:"):
                payload = ln[5:].strip()
                if payload and payload != "[DONE]":
                    try:
                        rec = orjson.loads(payload)
                    except orjson.JSONDecodeError:
                        continue
                    if not budget.take_item():
                        break
                    events.append(rec)
        return "sse", events, "" if events else text
    if "\n" in stripped or any(c in stripped for c in _OTHER_LINE_ENDS):
        recs: list[Any] = []
        n_lines = 0
        for ln in _text_lines(stripped):
            n_lines += 1
            try:
                rec = orjson.loads(ln)
            except orjson.JSONDecodeError:
                continue
            if not budget.take_item():
                break
            recs.append(rec)
        if recs and n_lines > 1:
            return "jsonl", recs, ""
    return "text", [], text[:4000]


#: The line ends ``str.splitlines`` knows besides ``\n``.
_OTHER_LINE_ENDS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _request_body(body: Any, budget: Budget) -> Any:
    """A request body as parsed JSON when it is JSON, else its text."""
    if isinstance(body, dict | list) or body is None:
        return body
    text = _text(_gunzip(body, budget) if isinstance(body, bytes) else body).strip()
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


def _date_header(headers: list[tuple[str, str]]) -> float | None:
    value = next((v for k, v in headers if k == "date"), None)
    if not value:
        return None
    try:
        from email.utils import parsedate_to_datetime

        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
