"""Go ``httprr`` traces read as ``http-capture``: one item per round trip, URL and header evidence.

The traces are built here the way Go writes them (``Request.Write``/``Response.Write``: CRLF
headers, chunked bodies, the full URL in langchaingo's request lines), modelled on langchaingo's
recordings, which are not committed.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from musetui.core.index import Index
from musetui.core.session import open_session
from musetui.core.sources import httprr

_CHAT_RESPONSE = {
    "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
    "object": "chat.completion",
    "created": 1741569952,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"}, "finish_reason": "stop"}],
    "system_fingerprint": "fp_06737a9306",
}
_MESSAGE = {
    "id": "msg_01BKwPujdDiyGMQ1L32XLHoJ",
    "type": "message",
    "role": "assistant",
    "model": "claude-3-opus-20240229",
    "content": [{"type": "text", "text": "Hello!"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 13, "output_tokens": 35},
}


def _round_trip(
    url_line: str, host: str, req: dict[str, Any], resp: dict[str, Any], headers: str, chunked: bool
) -> bytes:
    body = json.dumps(req)
    request = (
        f"POST {url_line} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: Go-http-client/1.1\r\n"
        f"Content-Length: {len(body)}\r\nContent-Type: application/json\r\n\r\n{body}"
    ).encode()
    payload = json.dumps(resp)
    if chunked:
        framing = "Transfer-Encoding: chunked\r\n"
        payload = f"{len(payload):x}\r\n{payload}\r\n0\r\n\r\n"
    else:
        framing = f"Content-Length: {len(payload)}\r\n"
    response = f"HTTP/1.1 200 OK\r\n{framing}Content-Type: application/json\r\n{headers}\r\n{payload}".encode()
    return f"{len(request)} {len(response)}\n".encode() + request + response


def _trace(*round_trips: bytes) -> bytes:
    return httprr.MAGIC + b"".join(round_trips)


def _openai_trip(chunked: bool = True) -> bytes:
    return _round_trip(
        "https://api.openai.com/v1/chat/completions",
        "api.openai.com",
        {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
        _CHAT_RESPONSE,
        "Date: Mon, 10 Mar 2025 01:25:52 GMT\r\nOpenai-Processing-Ms: 300\r\n",
        chunked,
    )


def _anthropic_trip() -> bytes:
    return _round_trip(
        "/v1/messages",  # a request line with the path alone: the URL comes from Host
        "api.anthropic.com",
        {"model": "claude-3-opus-20240229", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 100},
        _MESSAGE,
        "Date: Sun, 01 Jun 2025 04:30:58 GMT\r\nRequest-Id: req_011CPgscYRuiLxQPJUjKu5w4\r\n",
        False,
    )


def _scan(root: Path) -> tuple[list[dict[str, Any]], str]:
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", str(root)],
        capture_output=True,
        check=True,
        text=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines()], out.stderr


def test_an_httprr_trace_reads_as_http_capture_with_url_and_header_evidence(tmp_path: Path) -> None:
    (tmp_path / "TestChat.httprr").write_bytes(_trace(_openai_trip()))
    (tmp_path / "TestMessage.httprr.gz").write_bytes(gzip.compress(_trace(_anthropic_trip())))
    records, _err = _scan(tmp_path)
    by_name = {r["path"]: r for r in records}
    chat = by_name["TestChat.httprr"]
    assert (chat["format"], chat["provider"], chat["items"]) == ("http-capture", "openai", 1)
    assert chat["declared_model"] == "gpt-4o-mini-2024-07-18"
    detectors = {(e["detector"], e["field"]) for e in chat["evidence"]}
    assert ("http-endpoint", "request.uri") in detectors
    assert ("http-header", "openai-processing-ms") in detectors
    assert ("chatcmpl-id", "response.body.id") in detectors
    assert chat["started_at"] == "2025-03-10T01:25:52.000Z"
    message = by_name["TestMessage.httprr.gz"]
    assert (message["format"], message["provider"]) == ("http-capture", "anthropic")
    assert any(e["detector"] == "http-endpoint" and "api.anthropic.com" in e["value"] for e in message["evidence"])


def test_each_round_trip_is_an_item_at_its_size_line(tmp_path: Path) -> None:
    data = _trace(_openai_trip(chunked=False), _anthropic_trip())
    path = tmp_path / "two.httprr"
    path.write_bytes(data)
    exchanges, _starts = httprr.parse(data)
    assert [e.uri for e in exchanges] == [
        "https://api.openai.com/v1/chat/completions",
        "//api.anthropic.com/v1/messages",
    ]
    assert [e.status for e in exchanges] == [200, 200]
    assert exchanges[1].records == [_MESSAGE]
    second = len(httprr.MAGIC) + len(_openai_trip(chunked=False))  # the second size line
    assert exchanges[1].offset == second
    index = Index([str(tmp_path)], use_cache=False)
    index.scan()
    summary = index.sessions[0]
    opened = open_session(summary)
    assert [it.line for it in opened.items] == [2, data.count(b"\n", 0, second) + 1]


def test_a_cut_trace_is_a_diagnostic_with_its_line_and_an_empty_one_is_no_session(tmp_path: Path) -> None:
    whole = _trace(_openai_trip(), _openai_trip())
    (tmp_path / "cut.httprr").write_bytes(whole[:-40])
    (tmp_path / "empty.httprr").write_bytes(httprr.MAGIC)
    (tmp_path / "ok.httprr").write_bytes(_trace(_openai_trip()))
    records, err = _scan(tmp_path)
    assert [r["path"] for r in records] == ["ok.httprr"]
    assert "cut.httprr" in err and "record 2 at line" in err and "run past the end of the file" in err


def test_search_finds_text_in_an_httprr_body(tmp_path: Path) -> None:
    (tmp_path / "t.httprr").write_bytes(_trace(_openai_trip(chunked=False)))
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "search", str(tmp_path), "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "--json"],
        capture_output=True,
        check=True,
        text=True,
    )
    hits = [json.loads(line) for line in out.stdout.splitlines()]
    assert hits and all(h["path"].endswith("t.httprr") for h in hits)


def test_files_that_look_like_captures_and_are_not_read_are_named(tmp_path: Path) -> None:
    """No silent skips: a folder of unread capture-like files names each one and why."""
    (tmp_path / "config.yaml").write_text("name: ci\nsteps: [build, test]\n")
    (tmp_path / "empty.har").write_text('{"log": {"version": "1.2", "entries": []}}')
    (tmp_path / "empty.httprr").write_bytes(httprr.MAGIC)
    run = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "no transcripts found under" in run.stderr and "looked at 3 files" in run.stderr
    for name in ("config.yaml", "empty.har", "empty.httprr"):
        assert f"{name}: not read: not a recognised format" in run.stderr, run.stderr
    (tmp_path / "ok.httprr").write_bytes(_trace(_openai_trip()))
    quiet = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "3 files not read: not a recognised format (--stats lists them)" in quiet.stderr
    assert "config.yaml" not in quiet.stderr
    stats = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", "--no-cache", "--json", "--stats", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "1 sessions, 3 not read" in stats.stderr or "1 session, 3 not read" in stats.stderr, stats.stderr
    assert "config.yaml: not read: not a recognised format (no interactions)" in stats.stderr
