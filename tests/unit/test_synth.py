"""Tests for musetui_synth: minted ids decode, the sample is deterministic, the corpus is sized.

The decoders here are deliberately minimal and independent of musetui.core.fingerprints: they follow
FINGERPRINTS.md §4.1 (OpenAI ids), §5.1 (Fernet), §6.1 (Anthropic ids) and §6.3 (signatures),
and are first checked against real values quoted there.
"""

from __future__ import annotations

import base64
import hashlib
import random
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from musetui_synth import corpus, mint, sample

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
REPO = Path(__file__).resolve().parents[2]
T = 1_788_300_061.25  # 2026-09-01T22:01:01.25Z

# ---------------------------------------------------------------------------
# Independent mini-decoders


def dec_openai(s: str) -> dict[str, Any]:
    m = re.fullmatch(r"([a-z]+)_([0-9a-f]{48}|[0-9a-f]{50})", s)
    assert m, s
    prefix, h = m.groups()
    if len(h) == 50:
        return {
            "prefix": prefix,
            "layout": "new50",
            "key": h[0:16],
            "store": h[16:18],
            "t": int(h[18:26], 16),
            "marker": h[30:34],
        }
    return {
        "prefix": prefix,
        "layout": "legacy48",
        "t": int(h[0:8], 16),
        "marker": h[12:16],
        "suffix": h[32:48],
    }


def dec_fernet(s: str) -> dict[str, Any]:
    assert s.startswith("gAAAAA")
    raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    return {
        "version": raw[0],
        "t": int.from_bytes(raw[1:9], "big"),
        "len": len(raw),
        "ok": len(raw) > 57 and (len(raw) - 57) % 16 == 0,
    }


def dec_anthropic(s: str) -> dict[str, Any]:
    m = re.fullmatch(r"(msg|req|toolu)_01([1-9A-HJ-NP-Za-km-z]{22})", s)
    assert m, s
    n = 0
    for c in m.group(2):
        n = n * 58 + B58.index(c)
    assert n.bit_length() <= 128
    b = n.to_bytes(16, "big")
    ms = int.from_bytes(b[0:6], "big")
    is_v7 = (b[6] >> 4) == 7 and (b[8] >> 6) == 0b10 and 1_577_836_800_000 <= ms <= 2_082_758_400_000
    return {"v7": is_v7, "ms": ms, "uuid": str(uuid.UUID(bytes=b))}


def _varint(b: bytes, i: int) -> tuple[int, int]:
    r = shift = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return r, i


def _fields(b: bytes) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    i = 0
    while i < len(b):
        tag, i = _varint(b, i)
        if tag & 7 == 0:
            v, i = _varint(b, i)
            out.append((tag >> 3, v))
        elif tag & 7 == 2:
            n, i = _varint(b, i)
            out.append((tag >> 3, b[i : i + n]))
            i += n
        else:
            raise AssertionError(f"wire type {tag & 7}")
    assert i == len(b)
    return out


def dec_signature(s: str) -> dict[str, Any]:
    raw = base64.b64decode(s[: len(s) // 4 * 4])
    top = _fields(raw)
    if top[0] == (1, 2):
        top = top[1:]
    assert top[0][0] == 2 and top[-1] == (3, 1), top[-1]
    body = _fields(top[0][1])
    assert [f for f, _ in body] == [1, 2, 3, 4, 5]
    assert [len(v) for _, v in body[1:4]] == [12, 12, 48]
    header = dict(_fields(body[0][1]))
    return {
        "version": header[1],
        "f3": header[3],
        "f5_len": len(header[5]),
        "model": header[6].decode() if 6 in header else None,
        "ciphertext": len(body[4][1]),
    }


def iso(s: str) -> float:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def test_mini_decoders_on_real_values() -> None:
    d = dec_openai("rs_09d58369f84fca7901693cb838c60c81968c2e61898eec89c7")
    assert (d["layout"], d["store"], d["marker"]) == ("new50", "01", "8196")
    assert d["t"] == iso("2025-12-13T00:50:00Z")
    d = dec_openai("resp_68da74aaae58819ca776fbd20244e8df0fdbc19a07110799")
    assert (d["layout"], d["marker"], d["suffix"]) == ("legacy48", "819c", "0fdbc19a07110799")
    r = dec_anthropic("req_011CSkYzZmrLKTfC5kKrttht")
    assert r["v7"] and r["uuid"] == "01990d0f-9dfd-7726-a629-49e62d06c877"
    assert not dec_anthropic("msg_01XrsJCi8CQoLcnnWdY8RsJz")["v7"]
    sig = dec_signature(
        "Er4BCkYICxgCKkCoxqLHLrx4mFL9Ox7/aHKht87WDzXfvZ7qbZKSnHV8imA5b3LXxuVqcXQ9z5sXwDx20JIW/+6DJehOSNK72L83Egx0T9s7VzB6QUK9g5kaDO9lGaWN5CPEDJU0lyIw4+Ed3q4N9w+16h3cfQ+9stJXHCl+1nYDxjIOLcyJT8Ug/LTmtlp4bbxWmmfNicayKiasdReHiOnqz1sKEF0pR4kcnF5mQGdLxk8q3A3NY+wGsH8MtUIqxRgB"
    )
    assert (sig["version"], sig["f3"], sig["f5_len"], sig["model"]) == (11, 2, 64, None)


# ---------------------------------------------------------------------------
# Minting


def test_new50_ids() -> None:
    rng = random.Random(1)
    for store, byte in ((True, "00"), (False, "01")):
        conv = mint.new_openai_conversation(rng, store=store, marker="8196")
        ids = [conv.item_id(rng, p, T + i) for i, p in enumerate(("resp", "rs", "fc", "msg"))]
        decoded = [dec_openai(x) for x in ids]
        assert {d["key"] for d in decoded} == {conv.key}
        assert conv.key[0] == "0"
        assert all(d["layout"] == "new50" and d["store"] == byte for d in decoded)
        assert all(d["marker"] == "8196" for d in decoded)
        assert [d["t"] for d in decoded] == [int(T) + i for i in range(4)]
        assert [d["prefix"] for d in decoded] == ["resp", "rs", "fc", "msg"]
    conv = mint.new_openai_conversation(rng, store=False)
    assert re.fullmatch(r"81[0-9a-f]{2}", conv.marker)


def test_legacy48_ids_for_older_dates() -> None:
    rng = random.Random(2)
    conv = mint.new_openai_conversation(rng, store=True, marker="819c")
    t_old = iso("2025-09-29T11:59:38Z")
    a = dec_openai(conv.item_id(rng, "resp", t_old))
    b = dec_openai(conv.item_id(rng, "rs", t_old + 1))
    assert a["layout"] == b["layout"] == "legacy48"
    assert (a["t"], b["t"]) == (int(t_old), int(t_old) + 1)
    assert a["marker"] == "819c" and a["suffix"] == b["suffix"]


def test_fernet_tokens() -> None:
    rng = random.Random(3)
    for blocks in (1, 7, 70):
        tok = mint.fernet_token(rng, int(T), blocks)
        d = dec_fernet(tok)
        assert (d["version"], d["t"], d["ok"]) == (0x80, int(T), True)
        assert d["len"] == 57 + 16 * blocks
        assert re.fullmatch(r"[A-Za-z0-9_-]+=*", tok) and len(tok) % 4 == 0
        assert tok.startswith("gAAAAABq")  # 2026-05 … 2026-11
    tok = mint.fernet_token_chars(rng, int(T), 1300)
    assert 1200 <= len(tok) <= 1400 and dec_fernet(tok)["ok"]
    wrapped = mint.muse_gpt_responses_signature(rng, int(T))
    assert wrapped.startswith("gpt_responses_v1:gAAAAA")
    assert dec_fernet(wrapped.split(":", 1)[1])["t"] == int(T)


def test_call_ids() -> None:
    rng = random.Random(4)
    ids = [mint.openai_call_id(rng) for _ in range(50)]
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", x) for x in ids)
    assert any(re.search(r"[A-Z]", x[5:]) and re.search(r"[a-z]", x[5:]) for x in ids)
    hexes = [mint.uuid_call_id(rng) for _ in range(50)]
    assert all(re.fullmatch(r"call_[0-9a-f]{32}", x) for x in hexes)
    assert all(uuid.UUID(x[5:]).version == 4 for x in hexes)


def test_anthropic_ids() -> None:
    rng = random.Random(5)
    rand = [mint.toolu_id(rng) for _ in range(200)] + [mint.anthropic_random_id(rng, "msg") for _ in range(200)]
    decoded = [dec_anthropic(x) for x in rand]
    assert all(x.startswith(("toolu_01", "msg_01")) for x in rand)
    assert sum(d["v7"] for d in decoded) < 20  # random 128-bit: version/variant match 1 in 64
    for dt in (0.0, 0.5, 1234.567):
        req = mint.anthropic_uuid7_id(rng, "req", T + dt)
        assert req.startswith("req_011C")
        d = dec_anthropic(req)
        assert d["v7"] and d["ms"] == round((T + dt) * 1_000_000) // 1000
    msg = mint.anthropic_uuid7_id(rng, "msg", T)
    assert msg.startswith("msg_011C") and dec_anthropic(msg)["v7"]


def test_uuids() -> None:
    rng = random.Random(6)
    u7 = uuid.UUID(mint.uuid7(rng, T))
    assert u7.version == 7 and u7.variant == uuid.RFC_4122
    assert u7.int >> 80 == int(T * 1000)
    u4 = uuid.UUID(mint.uuid4(rng))
    assert u4.version == 4 and u4.variant == uuid.RFC_4122
    a, b = random.Random(9), random.Random(9)
    assert mint.uuid7(a, T) == mint.uuid7(b, T)


@pytest.mark.parametrize(
    ("model", "version", "first"),
    [
        ("claude-sonnet-4-6", 12, "E"),
        ("claude-opus-4-7", 12, "E"),
        ("claude-haiku-4-5-20251001", 13, "E"),
        ("claude-opus-5", 16, "CAIS"),
    ],
)
def test_signatures(model: str, version: int, first: str) -> None:
    rng = random.Random(7)
    for n in (40, 300, 5000):
        sig = mint.anthropic_signature(rng, model, ciphertext_len=n)
        assert sig.startswith(first)
        assert re.fullmatch(r"[A-Za-z0-9+/]+=*", sig)
        d = dec_signature(sig)
        assert (d["version"], d["f3"], d["f5_len"], d["model"], d["ciphertext"]) == (
            version,
            2,
            64,
            model,
            n,
        )
    assert mint.anthropic_signature(rng, "claude-sonnet-4-6")[1] in "opqrstuv"


# ---------------------------------------------------------------------------
# Sample tree


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _jsonl(data: bytes) -> list[dict[str, Any]]:
    assert data.endswith(b"\n")
    return [orjson.loads(line) for line in data.splitlines()]


def _check_json_files(files: dict[str, bytes]) -> int:
    lines = 0
    for name, data in files.items():
        if name.endswith(".jsonl"):
            lines += len(_jsonl(data))
        elif name.endswith(".json"):
            orjson.loads(data)
    return lines


@pytest.fixture(scope="module")
def sample_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("sample") / "s"
    info = sample.generate(out)
    return out, info


def test_sample_deterministic(sample_tree: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    out, _ = sample_tree
    again = tmp_path / "again"
    sample.generate(again)
    assert _tree(out) == _tree(again)
    sample.generate(again)  # rewriting an existing sample tree is allowed
    assert _tree(out) == _tree(again)


def test_sample_matches_committed_tree(sample_tree: tuple[Path, dict[str, Any]]) -> None:
    committed = REPO / "sample_transcripts"
    assert (committed / "README.md").exists(), "the committed sample tree is missing"
    assert _tree(committed) == _tree(sample_tree[0]), "run: python -m musetui_synth.sample"


def test_sample_refuses_foreign_dir(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(SystemExit):
        sample.generate(tmp_path)
    assert (tmp_path / "notes.txt").exists()


def test_sample_files(sample_tree: tuple[Path, dict[str, Any]]) -> None:
    out, info = sample_tree
    files = _tree(out)
    p, w = info["muse_parent"], info["muse_workers"]
    cs, agent = info["claude_session"], info["claude_agent"]
    expected = {
        "README.md",
        f"muse-vm/sessions/{p}/session.jsonl",
        *(f"muse-vm/sessions/{p}/subagents/{c}/session.jsonl" for c in w.values()),
        f"codex/sessions/2026/09/01/{info['codex_parent_file']}",
        f"codex/sessions/2026/09/01/{info['codex_child_file']}",
        f"claude/projects/-home-dev-site/{cs}.jsonl",
        f"claude/projects/-home-dev-site/{cs}/subagents/agent-{agent}.jsonl",
        f"claude/projects/-home-dev-site/{cs}/subagents/agent-{agent}.meta.json",
        "api/openai-responses-reasoning.json",
        "api/anthropic-messages-thinking.json",
    }
    assert set(files) == expected
    assert sum(len(b) for b in files.values()) < 400_000
    assert _check_json_files(files) > 100
    readme = files["README.md"].decode()
    assert w["a11y_audit_outlier"] in readme and "muse-special" in readme


def _muse(out: Path, info: dict[str, Any], sid: str) -> list[dict[str, Any]]:
    root = out / "muse-vm" / "sessions" / info["muse_parent"]
    path = root / "session.jsonl" if sid == info["muse_parent"] else root / "subagents" / sid / "session.jsonl"
    return _jsonl(path.read_bytes())


def test_sample_muse(sample_tree: tuple[Path, dict[str, Any]]) -> None:
    out, info = sample_tree
    parent = _muse(out, info, info["muse_parent"])
    p_start = parent[0]["recorded_at"] / 1e6
    p_end = parent[-1]["recorded_at"] / 1e6
    assert 20 <= len(parent) <= 32
    kinds = [ln["payload"]["event"]["kind"] for ln in parent if ln["payload"]["kind"] == "run"]
    assert "checkpoint_saved" in kinds
    for sid in (info["muse_parent"], *info["muse_workers"].values()):
        lines = _muse(out, info, sid)
        u = uuid.UUID(sid)
        assert u.version == 7 and u.int >> 80 == lines[0]["recorded_at"] // 1000
        times = [ln["recorded_at"] for ln in lines]
        assert all(isinstance(x, int) for x in times) and times == sorted(times)
        assert p_start <= times[0] / 1e6 and times[-1] / 1e6 <= p_end
        assert all(set(ln) == {"stream", "recorded_at", "payload"} for ln in lines)
        assert all(ln["stream"] == {"kind": "session", "id": sid} for ln in lines)
        assert [ln["payload"]["kind"] for ln in lines[:2]] == ["metadata", "route_facts"]
        rec = lines[0]["payload"]["record"]
        assert set(rec) == {"workspace_root", "cwd", "provider_id", "model_id"}
        events = [ln["payload"]["event"] for ln in lines if ln["payload"]["kind"] == "run"]
        calls = [c for e in events if e["kind"] == "assistant_tool_calls_committed" for c in e["tool_calls"]]
        results = [r for e in events if e["kind"] == "tool_result_batch_committed" for r in e["results"]]
        assert {r["tool_call_id"] for r in results} == {c["call_id"] for c in calls}
        assert all(isinstance(c["args"], dict) for c in calls)
        if sid == info["muse_workers"]["a11y_audit_outlier"]:
            assert (rec["provider_id"], rec["model_id"]) == ("azure", "muse-special")
            assert lines[1]["payload"]["record"]["route"] == "azure/muse-special"
            keys = set()
            for ln in lines:
                ev = ln["payload"].get("event", {})
                sec = ln["recorded_at"] // 1_000_000
                if ev.get("kind") == "reasoning_committed":
                    d = dec_openai(ev["message_id"])
                    assert (d["prefix"], d["store"], d["marker"], d["t"]) == (
                        "rs",
                        "00",
                        "8196",
                        sec,
                    )
                    keys.add(d["key"])
                    tag, tok = ev["signature"].split(":", 1)
                    f = dec_fernet(tok)
                    assert tag == "gpt_responses_v1" and f["ok"] and f["t"] - sec in (0, 1)
                    assert 1000 <= len(tok) <= 1600 and len(ev["text"]) < 300
                    assert ev["text"].startswith("**")
                if ev.get("kind") in (
                    "assistant_tool_calls_committed",
                    "assistant_message_committed",
                ):
                    d = dec_openai(ev["message_id"])
                    assert d["prefix"] in ("fc", "msg") and d["t"] == sec and d["marker"] == "8196"
                    keys.add(d["key"])
                if ev.get("kind") == "model_completed":
                    assert ev["model"] == "azure/muse-special"
            assert len(keys) == 1
            assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", c["call_id"]) for c in calls)
        else:
            assert rec["provider_id"] == "meta" and rec["model_id"].startswith("avocado-1.3")
            assert all(re.fullmatch(r"call_[0-9a-f]{32}", c["call_id"]) for c in calls)
            for e in events:
                if e["kind"] == "reasoning_committed":
                    assert e["signature"] == "" and len(e["text"]) > 50
                if "message_id" in e:
                    assert not re.match(r"(rs|fc|msg)_", e["message_id"])
                    uuid.UUID(e["message_id"].removeprefix("msg-"))
    workers = [_muse(out, info, s) for s in info["muse_workers"].values()]
    assert all(6 <= len(w) <= 16 for w in workers)


def test_sample_codex(sample_tree: tuple[Path, dict[str, Any]]) -> None:
    out, info = sample_tree
    day = out / "codex" / "sessions" / "2026" / "09" / "01"
    parent = _jsonl((day / info["codex_parent_file"]).read_bytes())
    child = _jsonl((day / info["codex_child_file"]).read_bytes())
    assert info["codex_parent_file"].startswith("rollout-2026-09-01T23-05-10-")
    for name, lines, tid in (
        (info["codex_parent_file"], parent, info["codex_parent"]),
        (info["codex_child_file"], child, info["codex_child"]),
    ):
        meta = lines[0]["payload"]
        assert lines[0]["type"] == "session_meta" and meta["id"] == tid
        assert meta["model_provider"] == "openai" and "text" in meta["base_instructions"]
        started = iso(meta["timestamp"])
        assert uuid.UUID(tid).int >> 80 == round(started * 1000)
        local = datetime.fromtimestamp(int(started) + 3600, UTC).strftime("%Y-%m-%dT%H-%M-%S")
        assert name == f"rollout-{local}-{tid}.jsonl"
        times = [iso(ln["timestamp"]) for ln in lines]
        assert times == sorted(times)
        raw = (day / name).read_bytes()
        assert b"encrypted_content" not in raw and b"gAAAAA" not in raw
        keys = set()
        for ln in lines:
            p = ln["payload"]
            t_line = iso(ln["timestamp"])
            if ln["type"] == "turn_context":
                assert p["model"] == "gpt-4.1" and "effort" not in p
            if ln["type"] == "event_msg" and p["type"] == "token_count" and p["info"]:
                assert p["rate_limits"]["limit_id"] == "codex"
            if ln["type"] != "response_item":
                continue
            if "id" in p:
                d = dec_openai(p["id"])
                assert d["store"] == "01" and re.fullmatch(r"81[0-9a-f]{2}", d["marker"])
                assert 0 <= t_line - d["t"] < 3
                keys.add(d["key"])
            assert p["type"] != "reasoning"  # gpt-4.1 does not reason
            if p["type"] == "function_call":
                assert isinstance(orjson.loads(p["arguments"]), dict)
                assert re.fullmatch(r"call_[A-Za-z0-9]{24}", p["call_id"])
        assert len(keys) == 1
    src = child[0]["payload"]["source"]
    assert src == {"subagent": {"thread_spawn": {"parent_thread_id": info["codex_parent"], "depth": 1}}}
    assert child[0]["payload"]["agent_nickname"] and child[0]["payload"]["agent_role"]
    types = {(ln["type"], ln["payload"].get("type")) for ln in parent}
    for needed in [
        ("compacted", None),
        ("response_item", "custom_tool_call"),
        ("response_item", "function_call_output"),
        ("event_msg", "task_started"),
        ("event_msg", "user_message"),
        ("event_msg", "agent_message"),
        ("event_msg", "task_complete"),
    ]:
        assert needed in types
    assert any(p["payload"].get("name") == "apply_patch" for p in parent)


def test_sample_claude(sample_tree: tuple[Path, dict[str, Any]]) -> None:
    out, info = sample_tree
    proj = out / "claude" / "projects" / "-home-dev-site"
    cs, agent = info["claude_session"], info["claude_agent"]
    main = _jsonl((proj / f"{cs}.jsonl").read_bytes())
    sub = _jsonl((proj / cs / "subagents" / f"agent-{agent}.jsonl").read_bytes())
    meta = orjson.loads((proj / cs / "subagents" / f"agent-{agent}.meta.json").read_bytes())
    assert main[0]["type"] == "summary"
    types = {ln["type"] for ln in main}
    assert {"user", "assistant", "system", "progress"} <= types
    assert any(ln.get("message", {}).get("model") == "<synthetic>" for ln in main)
    by_msg: dict[str, list[dict[str, Any]]] = {}
    for lines, model in ((main, "claude-sonnet-4-6"), (sub, "claude-haiku-4-5-20251001")):
        for ln in lines:
            if ln["type"] != "assistant" or ln["message"]["model"] == "<synthetic>":
                continue
            m = ln["message"]
            assert m["model"] == model
            assert len(m["content"]) == 1
            by_msg.setdefault(m["id"], []).append(ln)
            req = dec_anthropic(ln["requestId"])
            assert ln["requestId"].startswith("req_011C") and req["v7"]
            assert 2.0 <= iso(ln["timestamp"]) - req["ms"] / 1000 <= 5.0
            assert dec_anthropic(m["id"])["v7"]
            u = m["usage"]
            assert {"service_tier", "cache_creation", "inference_geo"} <= set(u)
            for block in m["content"]:
                if block["type"] == "thinking":
                    sig = dec_signature(block["signature"])
                    assert sig["model"] == model
                    assert sig["version"] == (12 if model == "claude-sonnet-4-6" else 13)
                if block["type"] == "tool_use":
                    assert re.fullmatch(r"toolu_01[1-9A-HJ-NP-Za-km-z]{22}", block["id"])
    split = [v for v in by_msg.values() if len(v) == 3]
    assert split and [b["message"]["content"][0]["type"] for b in split[0]] == [
        "thinking",
        "text",
        "tool_use",
    ]
    assert len({b["requestId"] for b in split[0]}) == 1
    for ln in sub:
        assert ln["isSidechain"] is True and ln["agentId"] == agent and ln["sessionId"] == cs
    assert all(ln.get("sessionId", cs) == cs for ln in main)
    task_ids = [
        b["id"]
        for ln in main
        if ln["type"] == "assistant"
        for b in ln["message"]["content"]
        if b["type"] == "tool_use" and b["name"] == "Task"
    ]
    assert meta == {"toolUseId": task_ids[0], "spawnDepth": 1, "model": "claude-haiku-4-5-20251001"}


def test_sample_api(sample_tree: tuple[Path, dict[str, Any]]) -> None:
    out, _ = sample_tree
    r = orjson.loads((out / "api" / "openai-responses-reasoning.json").read_bytes())
    # store:true without include: a reasoning summary, and no encrypted reasoning anywhere.
    assert "content_filters" not in r and r["store"] is True
    assert b"encrypted_content" not in orjson.dumps(r) and b"gAAAAA" not in orjson.dumps(r)
    d = dec_openai(r["id"])
    assert d["prefix"] == "resp" and d["t"] == r["created_at"] and d["store"] == "00"
    for it in r["output"]:
        di = dec_openai(it["id"])
        assert di["key"] == d["key"] and di["marker"] == d["marker"] and 0 <= di["t"] - r["created_at"] < 45
    summary = next(it["summary"] for it in r["output"] if it["type"] == "reasoning")
    assert summary[0]["type"] == "summary_text" and summary[0]["text"]
    assert {it["id"].split("_")[0] for it in r["output"]} == {"rs", "msg", "fc"}
    a = orjson.loads((out / "api" / "anthropic-messages-thinking.json").read_bytes())
    assert a["id"].startswith("msg_011C") and dec_anthropic(a["id"])["v7"]
    sig = dec_signature(a["content"][0]["signature"])
    assert (sig["version"], sig["model"]) == (12, "claude-opus-4-7") == (sig["version"], a["model"])
    assert re.fullmatch(r"toolu_01[1-9A-HJ-NP-Za-km-z]{22}", a["content"][2]["id"])
    assert {"inference_geo", "service_tier", "cache_creation"} <= set(a["usage"])


# ---------------------------------------------------------------------------
# Corpus


@pytest.fixture(scope="module")
def corpus_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("corpus") / "c"
    return out, corpus.generate(out, 5, seed=11)


def test_corpus_size_and_totals(corpus_tree: tuple[Path, dict[str, Any]]) -> None:
    out, m = corpus_tree
    target = 5 * 1024 * 1024
    assert abs(m["bytes"] - target) <= target * 0.10
    files = {k: v for k, v in _tree(out).items() if k != "MANIFEST.json"}
    assert m["files"] == len(files)
    assert m["bytes"] == sum(len(v) for v in files.values())
    assert m["lines"] == _check_json_files(files)
    assert m["sessions"] == sum(k.endswith(".jsonl") for k in files)
    assert orjson.loads((out / "MANIFEST.json").read_bytes()) == m
    assert set(m["sessions_by_format"]) == {"muse", "codex", "claude-code"}
    assert m["sessions_by_format"]["muse"] > m["sessions"] / 2
    assert 100 <= m["sessions"] <= 400  # ~38 per MiB
    assert any("/subagents/" in k and k.startswith("muse-vm/") for k in files)
    assert any("/subagents/agent-" in k and k.endswith(".meta.json") for k in files)
    codex = [orjson.loads(v.split(b"\n", 1)[0]) for k, v in files.items() if k.startswith("codex/")]
    assert any(isinstance(c["payload"]["source"], dict) for c in codex)


def test_corpus_outliers_are_ground_truth(corpus_tree: tuple[Path, dict[str, Any]]) -> None:
    out, m = corpus_tree
    muse_workers = [p for p in out.glob("muse-vm/sessions/*/subagents/*/session.jsonl")]
    truth = set()
    for path in muse_workers:
        lines = _jsonl(path.read_bytes())
        rec = lines[0]["payload"]["record"]
        if rec["provider_id"] != "azure":
            assert all(
                re.fullmatch(r"call_[0-9a-f]{32}", c["call_id"])
                for ln in lines
                for c in ln["payload"].get("event", {}).get("tool_calls", [])
            )
            continue
        truth.add(path.relative_to(out).as_posix())
        for ln in lines:
            ev = ln["payload"].get("event", {})
            if ev.get("kind") == "reasoning_committed":
                d = dec_openai(ev["message_id"])
                assert d["t"] == ln["recorded_at"] // 1_000_000 and d["store"] == "00"
                assert dec_fernet(ev["signature"].removeprefix("gpt_responses_v1:"))["ok"]
    assert truth == set(m["outliers"])


def test_corpus_deterministic(corpus_tree: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    out, m = corpus_tree
    again = tmp_path / "again"
    m2 = corpus.generate(again, 5, seed=11)
    assert m2 == m

    def digest(root: Path) -> dict[str, str]:
        return {k: hashlib.sha256(v).hexdigest() for k, v in _tree(root).items()}

    assert digest(again) == digest(out)
    other = corpus.generate(tmp_path / "other", 5, seed=12)
    assert other["outliers"] != m["outliers"] or other["lines"] != m["lines"]


def test_corpus_refuses_foreign_dir(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(SystemExit):
        corpus.generate(tmp_path, 1, seed=1)
    assert (tmp_path / "keep.txt").exists()
