"""The self-labelled evaluation of bench/eval_attribution.py, small: on the real-world corpus.

The corpus is the one test_real_world.py scores (``$MUSETUI_REAL_WORLD_DIR``, or
``<user cache dir>/musetui/real_world``, written by ``scripts/fetch_real_world.py``); every test
skips, saying so, when it is not there. The full evaluation runs over thousands of captures
fetched by ``scripts/fetch_eval_corpora.py``; this is the part that runs on every submission.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import platformdirs
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))  # bench/ is part of the repository, not of the installed package

from eval_attribution import (  # noqa: E402
    ANY_HOST,
    SOURCES,
    Capture,
    Case,
    Labeller,
    evaluate,
    read_capture,
)

HERE = Path(__file__).resolve().parent
FILES: list[dict[str, Any]] = tomllib.loads((HERE / "SOURCES.toml").read_text(encoding="utf-8"))["file"]
CACHE = Path(os.environ.get("MUSETUI_REAL_WORLD_DIR") or Path(platformdirs.user_cache_dir("musetui")) / "real_world")


def _local(f: dict[str, Any]) -> Path:
    return CACHE / (f["repo"].replace("/", "__") + "/" + f["path"].replace("/", "__"))


def _need_corpus() -> None:
    if not any(_local(f).is_file() for f in FILES):
        pytest.skip(f"no real-world corpus in {CACHE}: run scripts/fetch_real_world.py SNAPSHOTS_DIR")


@pytest.fixture(scope="module")
def cases() -> dict[str, list[Case]]:
    _need_corpus()
    result, scored = evaluate(CACHE)
    assert result["corpus"]["labelled"] > 0, "the labeller labelled nothing: the corpus or the tables are wrong"
    return scored


def _labeller() -> Labeller:
    return Labeller(tomllib.loads(SOURCES.read_text(encoding="utf-8"))["label"])


def _describe(c: Case) -> str:
    g = c.got
    return (
        f"{c.repo}:{c.path} exchange {c.exchange}: label {c.label.provider}/{c.label.host} ({c.label.basis}), "
        f"musetui {g['provider']}/{g['host']} {g['confidence']} {g['flags']}"
    )


#: (repo, path) of the files whose confident-and-wrong verdict is known, with why (SOURCES.toml).
KNOWN = {(f["repo"], f["path"]): f["known_eval_miss"] for f in FILES if f.get("known_eval_miss")}


@pytest.mark.parametrize("mode", ["capture", "body"])
def test_never_confident_and_wrong(cases: dict[str, list[Case]], mode: str) -> None:
    """No verdict at confidence >= 0.8 names a provider or host that the envelope contradicts."""
    bad = [_describe(c) for c in cases[mode] if c.confident_wrong and (c.repo, c.path) not in KNOWN]
    assert not bad, "\n".join(bad)


def test_known_misses_still_miss(cases: dict[str, list[Case]]) -> None:
    """Each ``known_eval_miss`` is still confidently wrong: once fixed, its mark must go (strict)."""
    present = {(c.repo, c.path) for mode in cases.values() for c in mode}
    still = {(c.repo, c.path) for mode in cases.values() for c in mode if c.confident_wrong}
    fixed = [f"{repo}:{path} ({why})" for (repo, path), why in KNOWN.items() if (repo, path) in present - still]
    assert not fixed, "no longer confident and wrong, remove known_eval_miss: " + "; ".join(fixed)


def test_both_modes_score_most_of_the_corpus(cases: dict[str, list[Case]]) -> None:
    """The evaluation really ran: captures and bodies were labelled and most verdicts are right."""
    for mode in ("capture", "body"):
        scored = cases[mode]
        assert len(scored) >= 20, (mode, len(scored))
        assert sum(c.right for c in scored) / len(scored) >= 0.8, mode


def _expected(f: dict[str, Any]) -> tuple[str, str | None, str | None]:
    return f["provider"], f["host"] or None, f["via"] or None


def test_labeller_agrees_with_sources() -> None:
    """Where the envelope decides a label, it is the expectation that SOURCES.toml wrote by hand.

    Captures whose envelope decides nothing are counted, not guessed; files listed but not in
    this corpus copy are test_real_world's concern (it names them).
    """
    _need_corpus()
    checked, undecided, disagree = 0, 0, []
    for f in FILES:
        path = _local(f)
        if f["format"] != "http-capture" or not path.is_file():
            continue
        cap = Capture.labelled(f["repo"], "fit", f["path"], path, "", read_capture(path.read_bytes()), _labeller())
        found, _mixed = cap.file_labels()
        if not found:
            undecided += 1
            continue
        checked += 1
        want = _expected(f)
        if not any((lb.provider, lb.via) == (want[0], want[2]) and lb.host in (want[1], ANY_HOST) for lb in found):
            disagree.append((f["path"], want, found))
    assert checked >= 20, (checked, undecided)
    assert not disagree, disagree


def test_labeller_abstains_without_an_envelope() -> None:
    """A request to a host the tables do not know, or a model they do not know, gets no label."""
    from eval_attribution import Exchange

    labeller = _labeller()

    def ex(url: str, body: bytes) -> Exchange:
        return Exchange(0, "POST", url, {}, body, 200, {}, b"{}")

    assert labeller.label(ex("https://llm.example.com/v1/chat/completions", b'{"model": "gpt-4o"}')) is None
    assert labeller.label(ex("https://openrouter.ai/api/v1/chat/completions", b'{"model": "mystery-7b"}')) is None
    assert labeller.label(ex("https://api.openai.com/v1/models", b"")) is None
    got = labeller.label(
        ex(
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse",
            b"{}",
        )
    )
    assert got is not None and (got.provider, got.host, got.via) == ("amazon", "bedrock", None)
    got = labeller.label(
        ex(
            "https://openrouter.ai/api/v1/chat/completions",
            b'{"model": "anthropic/claude-haiku-4.5"}',
        )
    )
    assert got is not None and (got.provider, got.host, got.via) == (
        "anthropic",
        ANY_HOST,
        "openrouter",
    )


def test_reader_reads_every_capture_kind() -> None:
    """The evaluation's own reader gets URL, status and body from each recording format (made here)."""
    import base64
    import gzip
    import json

    from eval_attribution import sniff

    body = b'{"id": "x", "model": "gpt-4o"}'
    req = b'{"model": "gpt-4o"}'
    url = "https://api.openai.com/v1/chat/completions"
    vcrpy = (
        f"interactions:\n- request:\n    body: '{req.decode()}'\n    method: POST\n    uri: {url}\n"
        f"  response:\n    body:\n      string: '{body.decode()}'\n    status:\n      code: 200\nversion: 1\n"
    ).encode()
    ruby = (
        f"---\nhttp_interactions:\n- request:\n    method: post\n    uri: {url}\n    body:\n      encoding: UTF-8\n"
        f"      string: '{req.decode()}'\n  response:\n    status:\n      code: 200\n    body:\n      encoding: ASCII-8BIT\n"
        f"      string: !binary |-\n        {base64.b64encode(body).decode()}\n"
    ).encode()
    har = json.dumps(
        {
            "log": {
                "entries": [
                    {
                        "request": {
                            "method": "POST",
                            "url": url,
                            "headers": [],
                            "postData": {"text": req.decode()},
                        },
                        "response": {
                            "status": 200,
                            "headers": [],
                            "content": {"text": body.decode()},
                        },
                    }
                ]
            }
        }
    ).encode()
    request = f"POST {url} HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: {len(req)}\r\n\r\n".encode() + req
    response = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    httprr = b"httprr trace v1\n" + f"{len(request)} {len(response)}\n".encode() + request + response
    split = (
        f"requests:\n- body: '{req.decode()}'\n  method: POST\n  uri: {url}\nresponses:\n- body:\n"
        f"    string: '{body.decode()}'\n  status:\n    code: 200\n"
    ).encode()
    labeller = _labeller()
    for kind, data in [
        ("vcr-yaml", vcrpy),
        ("ruby-vcr", ruby),
        ("har", har),
        ("httprr", httprr),
        ("vcr-split", split),
        ("vcr-yaml", gzip.compress(vcrpy)),
    ]:
        assert sniff(data) == kind
        (ex,) = read_capture(data)
        assert (ex.url, ex.status, ex.resp_body, ex.req_body) == (url, 200, body, req), kind
        got = labeller.label(ex)
        assert got is not None and (got.provider, got.host, got.via) == ("openai", None, None), kind
