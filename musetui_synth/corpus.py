"""Write a benchmark corpus of any size: ``python -m musetui_synth.corpus OUT_DIR --size-mb N``.

The tree mixes the three layouts of the sample (Muse VM sessions with workers, Codex rollouts
with sub-agents, Claude Code projects with sub-agents). Most Muse sessions are on Avocado; a
few percent of Muse workers were routed to ``azure/muse-special`` and carry OpenAI
Responses-stack items: they are the ground-truth outliers listed in ``MANIFEST.json``.
Session sizes follow a log-normal spread (many small, a few of several MB). Output is
deterministic for a given seed and size.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from . import mint
from .corpus_text import NAMES, TextPool
from .formats import (
    CODEX_LOCAL_OFFSET_HOURS,
    JSON,
    anthropic_usage,
    codex_rate_limits,
    codex_usage,
)
from .times import iso_ms, local_date_dirs, local_stamp, micros, unix

MB = 1024 * 1024
DEFAULT_SESSIONS_PER_MB = 38.0  # about 19,000 sessions per 500 MB
MIN_SESSION = 1_500
MAX_SESSION = 4 * MB
SIGMA = 1.25
#: start value of the size correction: sessions overshoot their drawn size (fixed head and
#: tail lines, and the last turn finishes past the target), so draws start smaller.
SIZE_CORRECTION_START = 0.55
#: per-session gain of the feedback that keeps the mean session size at 1 MiB / sessions_per_mb.
SIZE_GAIN = 0.02
#: longest text in one field (characters); keeps lines at or under about 20 KB.
MAX_TEXT = 9_000
CORPUS_START = unix(2026, 6, 1, 8, 0, 0)
CORPUS_SPAN = 120 * 86_400.0

AVOCADO_MODELS = ("avocado-1.3", "avocado-1.3", "avocado-1.3-mini", "avocado-1.2", "avocado-1.1")
CLAUDE_MODELS = ("claude-sonnet-4-6", "claude-sonnet-4-6", "claude-opus-4-7", "claude-opus-4-6")
CLAUDE_SUB_MODELS = ("claude-haiku-4-5-20251001", "claude-haiku-4-5-20251001", "claude-sonnet-4-6")
CODEX_MODELS = ("gpt-5.3-codex", "gpt-5.3-codex", "gpt-5.5-codex")
OUTLIER_RATE = 0.04
MANIFEST = "MANIFEST.json"
OWNED_ENTRIES = frozenset({"muse-vm", "codex", "claude", MANIFEST})

_dumps = orjson.dumps


class Sink:
    """The serialised lines of one file and their running size."""

    __slots__ = ("parts", "size")

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, obj: JSON) -> None:
        """Serialise and append one line."""
        b = _dumps(obj)
        self.parts.append(b)
        self.size += len(b) + 1

    def data(self) -> bytes:
        """The file content (JSON Lines, newline-terminated)."""
        self.parts.append(b"")
        return b"\n".join(self.parts)


@dataclass
class Totals:
    """Running totals, and the manifest's ground truth."""

    files: int = 0
    sessions: int = 0
    bytes: int = 0
    lines: int = 0
    by_format: dict[str, int] = field(default_factory=dict)
    by_provider: dict[str, int] = field(default_factory=dict)
    outliers: list[str] = field(default_factory=list)


@dataclass
class Spawn:
    """A child session requested by a parent: its id, start time and task."""

    child_id: str
    start: float
    task: str
    tool_use_id: str = ""


class Corpus:
    """Generates the corpus tree under ``out``."""

    def __init__(self, out: Path, size_mb: float, seed: int, sessions_per_mb: float) -> None:
        self.out = out
        self.rng = random.Random(seed)
        self.pool = TextPool(random.Random(seed * 7919 + 1))
        self.target = int(size_mb * MB)
        self.mean = MB / sessions_per_mb
        self.mu = math.log(self.mean) - SIGMA * SIGMA / 2
        self.correction = SIZE_CORRECTION_START
        self.max_session = min(MAX_SESSION, max(64 * 1024, self.target // 20))
        expected = max(1.0, size_mb * sessions_per_mb)
        self.gap = CORPUS_SPAN / expected * 2.2
        self.t = CORPUS_START
        self.totals = Totals()
        self.made_dirs: set[Path] = set()

    # -- plumbing ------------------------------------------------------------

    def session_size(self) -> int:
        """Draw a session's target size, clamped to the corpus and the remaining budget."""
        tot = self.totals
        if tot.sessions:
            # Deterministic integral feedback on the running mean session size.
            ratio = self.mean * tot.sessions / max(1, tot.bytes)
            self.correction = min(4.0, max(0.05, self.correction * ratio**SIZE_GAIN))
        size = int(self.rng.lognormvariate(self.mu, SIGMA) * self.correction)
        remaining = self.target - self.totals.bytes
        return max(MIN_SESSION, min(size, self.max_session, remaining))

    def next_time(self) -> float:
        """Start time of the next session group."""
        self.t += self.rng.expovariate(1.0 / self.gap)
        return self.t

    def write(self, rel: str, data: bytes, lines: int, fmt: str | None, provider: str | None) -> None:
        """Write one file and count it (as a session when ``fmt`` is given)."""
        path = self.out / rel
        parent = path.parent
        if parent not in self.made_dirs:
            parent.mkdir(parents=True, exist_ok=True)
            self.made_dirs.add(parent)
        with open(path, "wb") as fh:
            fh.write(data)
        tot = self.totals
        tot.files += 1
        tot.bytes += len(data)
        tot.lines += lines
        if fmt is not None and provider is not None:
            tot.sessions += 1
            tot.by_format[fmt] = tot.by_format.get(fmt, 0) + 1
            tot.by_provider[provider] = tot.by_provider.get(provider, 0) + 1

    def text_len(self, median: float, sigma: float = 1.0, cap: int = MAX_TEXT) -> int:
        """Draw a text length (characters), log-normal around ``median``, capped at ``cap``."""
        return min(cap, max(20, int(self.rng.lognormvariate(math.log(median), sigma))))

    def run(self) -> Totals:
        """Generate session groups until the size target is reached."""
        rng = self.rng
        while self.totals.bytes < self.target:
            r = rng.random()
            if r < 0.55:
                self.muse_group()
            elif r < 0.75:
                self.codex_group()
            else:
                self.claude_group()
        return self.totals

    # -- Muse ----------------------------------------------------------------

    def muse_group(self) -> None:
        """A Muse parent session and its workers."""
        rng = self.rng
        t0 = self.next_time()
        pid = mint.uuid7(rng, t0)
        n_workers = rng.choices((0, 1, 2, 3, 4, 5), (45, 15, 15, 12, 8, 5))[0]
        model = rng.choice(AVOCADO_MODELS)
        sink, spawns = self.muse_session(pid, t0, "meta", model, self.session_size(), n_workers)
        base = f"muse-vm/sessions/{pid}"
        self.write(f"{base}/session.jsonl", sink.data(), len(sink.parts) - 1, "muse", "meta")
        for sp in spawns:
            if rng.random() < OUTLIER_RATE:
                w = self.muse_session(sp.child_id, sp.start, "azure", "muse-special", self.session_size(), 0, sp.task)[
                    0
                ]
                rel = f"{base}/subagents/{sp.child_id}/session.jsonl"
                self.write(rel, w.data(), len(w.parts) - 1, "muse", "openai")
                self.totals.outliers.append(rel)
            else:
                wm = rng.choice(("avocado-1.3", "avocado-1.3-mini", model))
                w = self.muse_session(sp.child_id, sp.start, "meta", wm, self.session_size(), 0, sp.task)[0]
                rel = f"{base}/subagents/{sp.child_id}/session.jsonl"
                self.write(rel, w.data(), len(w.parts) - 1, "muse", "meta")

    def muse_session(
        self,
        sid: str,
        t0: float,
        provider: str,
        model: str,
        target: int,
        n_spawn: int,
        prompt: str | None = None,
    ) -> tuple[Sink, list[Spawn]]:
        """One Muse ``session.jsonl``; ``provider == "azure"`` writes OpenAI-stack items."""
        rng = self.rng
        pool = self.pool
        special = provider == "azure"
        route = f"{provider}/{model}"
        conv = mint.new_openai_conversation(rng, store=True) if special else None
        stream = {"kind": "session", "id": sid}
        sink = Sink()
        t = t0

        def line(payload: JSON) -> None:
            sink.add({"stream": stream, "recorded_at": micros(t), "payload": payload})

        def ev(event: JSON) -> None:
            line({"kind": "run", "event": event})

        def msg_id(prefix: str) -> str:
            if conv is not None:
                return conv.item_id(rng, prefix, t)
            return ("msg-" if rng.random() < 0.5 else "") + mint.uuid4(rng)

        def call_id() -> str:
            return mint.openai_call_id(rng) if special else mint.uuid_call_id(rng)

        def completed() -> None:
            inp = rng.randint(2_000, 120_000)
            ev(
                {
                    "kind": "model_completed",
                    "model": route,
                    "usage": {
                        "input_tokens": inp,
                        "output_tokens": rng.randint(40, 4_000),
                        "cached_tokens": inp * rng.randint(0, 9) // 10,
                        "reasoning_tokens": rng.randint(0, 2_000),
                    },
                }
            )

        record = {
            "workspace_root": "/home/dev/app",
            "cwd": "/home/dev/app",
            "provider_id": provider,
            "model_id": model,
        }
        line({"kind": "metadata", "record": record})
        t += 0.0004
        line(
            {
                "kind": "route_facts",
                "record": {"provider_id": provider, "model_id": model, "route": route},
            }
        )
        t += rng.uniform(0.2, 1.5)
        ev({"kind": "started", "prompt": prompt or pool.prompt(rng)})
        spawns: list[Spawn] = []
        turn = 0
        while sink.size < target or turn == 0:
            turn += 1
            t += rng.uniform(1.5, 12)
            if special:
                fernet_t = int(t) + rng.choice((0, 0, 1))
                ev(
                    {
                        "kind": "reasoning_committed",
                        "message_id": msg_id("rs"),
                        "text": pool.summary(rng),
                        "signature": mint.muse_gpt_responses_signature(rng, fernet_t, rng.randint(900, 2_400)),
                    }
                )
            else:
                ev(
                    {
                        "kind": "reasoning_committed",
                        "message_id": msg_id("msg"),
                        "text": pool.prose(rng, self.text_len(500, 0.9)),
                        "signature": "",
                    }
                )
            t += rng.uniform(0.5, 20)
            if turn == 1 and n_spawn:
                calls = []
                for _ in range(n_spawn):
                    task = pool.prompt(rng)
                    t_child = t + rng.uniform(0.2, 1.2)
                    spawns.append(Spawn(mint.uuid7(rng, t_child), t_child, task))
                    calls.append({"call_id": call_id(), "name": "spawn_worker", "args": {"task": task}})
                ev(
                    {
                        "kind": "assistant_tool_calls_committed",
                        "message_id": msg_id("fc"),
                        "tool_calls": calls,
                    }
                )
                t += rng.uniform(0.05, 0.3)
                completed()
                t = max(t, max(s.start for s in spawns)) + rng.uniform(0.1, 0.4)
                results: list[JSON] = [
                    {
                        "tool_call_id": c["call_id"],
                        "output": f'{{"worker_id": "{s.child_id}", "status": "running"}}',
                    }
                    for c, s in zip(calls, spawns, strict=True)
                ]
                ev({"kind": "tool_result_batch_committed", "results": results})
                continue
            calls = []
            outputs: list[str] = []
            n_calls = rng.choices((1, 2, 3), (70, 20, 10))[0]
            cap = MAX_TEXT // n_calls
            for _ in range(n_calls):
                kind = rng.random()
                if kind < 0.35:
                    path = f"src/{rng.choice(NAMES)}.py"
                    calls.append({"call_id": call_id(), "name": "read_file", "args": {"path": path}})
                    outputs.append(pool.code_slice(rng, self.text_len(1_500, cap=cap)))
                elif kind < 0.6:
                    content = pool.code_slice(rng, self.text_len(1_200, cap=cap))
                    path = f"site/{rng.choice(NAMES)}.html"
                    calls.append(
                        {
                            "call_id": call_id(),
                            "name": "write_file",
                            "args": {"path": path, "content": content},
                        }
                    )
                    outputs.append(f"Wrote {len(content.encode('utf-8')):,} bytes to {path}")
                else:
                    cmd = rng.choice(
                        (
                            "npm run build",
                            "python -m pytest -q",
                            "git status --short",
                            "ls -la src",
                            "npx tsc --noEmit",
                        )
                    )
                    calls.append(
                        {
                            "call_id": call_id(),
                            "name": "run_shell",
                            "args": {"cmd": cmd, "timeout_s": 120},
                        }
                    )
                    outputs.append(pool.code_slice(rng, self.text_len(900, cap=cap)))
            ev(
                {
                    "kind": "assistant_tool_calls_committed",
                    "message_id": msg_id("fc"),
                    "tool_calls": calls,
                }
            )
            t += rng.uniform(0.05, 0.3)
            completed()
            t += rng.uniform(0.2, 30)
            key = "text" if rng.random() < 0.2 else "output"
            ev(
                {
                    "kind": "tool_result_batch_committed",
                    "results": [{"tool_call_id": c["call_id"], key: o} for c, o in zip(calls, outputs, strict=True)],
                }
            )
            if rng.random() < 0.2:
                t += rng.uniform(1, 8)
                ev(
                    {
                        "kind": "assistant_message_committed",
                        "message_id": msg_id("msg"),
                        "text": pool.prose(rng, self.text_len(300)),
                    }
                )
                t += rng.uniform(0.05, 0.2)
                completed()
            if rng.random() < 0.05:
                t += rng.uniform(20, 600)
                ev({"kind": "started", "prompt": pool.prompt(rng)})
        t += rng.uniform(2, 10)
        ev(
            {
                "kind": "assistant_message_committed",
                "message_id": msg_id("msg"),
                "text": pool.prose(rng, self.text_len(400)),
            }
        )
        t += rng.uniform(0.05, 0.2)
        completed()
        return sink, spawns

    # -- Codex ---------------------------------------------------------------

    def codex_group(self) -> None:
        """A Codex parent rollout and its sub-agent rollouts."""
        rng = self.rng
        t0 = self.next_time()
        new_style = rng.random() < 0.6
        cli = rng.choice(("0.139.0", "0.141.0", "0.142.1")) if new_style else rng.choice(("0.104.0", "0.110.0"))
        tid = mint.uuid7(rng, t0)
        n_sub = rng.choices((0, 1, 2), (80, 14, 6))[0]
        spawns = self.codex_rollout(tid, t0, self.session_size(), "cli", None, new_style, cli, n_sub)
        for i, sp in enumerate(spawns):
            source = {"subagent": {"thread_spawn": {"parent_thread_id": tid, "depth": 1}}}
            nick = ("Hypatia", "Euclid", "Noether", "Lovelace")[i % 4]
            self.codex_rollout(sp.child_id, sp.start, self.session_size(), source, nick, new_style, cli, 0, sp.task)

    def codex_rollout(
        self,
        tid: str,
        t0: float,
        target: int,
        source: Any,
        nickname: str | None,
        new_style: bool,
        cli: str,
        n_spawn: int,
        prompt: str | None = None,
    ) -> list[Spawn]:
        """Write one rollout file; return the sub-agents it spawned."""
        rng = self.rng
        pool = self.pool
        model = rng.choice(CODEX_MODELS)
        conv = mint.new_openai_conversation(rng, store=False) if new_style else None
        sink = Sink()
        t = t0 + rng.uniform(0.2, 0.8)
        cwd = f"/home/dev/{rng.choice(NAMES)}-service"
        resets = int(t0) + 9_000
        used = float(rng.randint(1, 60))
        total = codex_usage(0, 0, 0, 0)

        def add(kind: str, payload: JSON) -> None:
            sink.add({"timestamp": iso_ms(t), "type": kind, "payload": payload})

        def item(payload: JSON, prefix: str | None) -> None:
            if conv is not None and prefix is not None:
                payload = {
                    "type": payload["type"],
                    "id": conv.item_id(rng, prefix, t - 0.05),
                    **payload,
                }
            add("response_item", payload)

        meta: JSON = {
            "id": tid,
            "timestamp": iso_ms(t0),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": cli,
            "source": source,
        }
        if nickname is not None:
            meta["agent_nickname"] = nickname
            meta["agent_role"] = "worker"
        meta["model_provider"] = "openai"
        meta["base_instructions"] = {
            "text": "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace and collaborate to achieve the user's goals."
        }
        add("session_meta", meta)

        def turn_context(turn_id: str) -> None:
            add(
                "turn_context",
                {
                    "turn_id": turn_id,
                    "cwd": cwd,
                    "approval_policy": "on-request",
                    "sandbox_policy": {
                        "type": "workspace-write",
                        "writable_roots": [cwd],
                        "network_access": False,
                    },
                    "model": model,
                    "personality": "pragmatic",
                    "collaboration_mode": {
                        "mode": "default",
                        "settings": {
                            "model": model,
                            "reasoning_effort": "high",
                            "developer_instructions": None,
                        },
                    },
                    "effort": "high",
                    "summary": "auto",
                },
            )

        def start_turn(text: str) -> str:
            nonlocal t
            t += 0.002
            turn_id = mint.uuid7(rng, t)
            add(
                "event_msg",
                {
                    "type": "task_started",
                    "turn_id": turn_id,
                    "model_context_window": 258400,
                    "collaboration_mode_kind": "default",
                },
            )
            add(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            )
            add(
                "event_msg",
                {
                    "type": "user_message",
                    "message": text,
                    "images": [],
                    "local_images": [],
                    "text_elements": [],
                },
            )
            t += 0.004
            turn_context(turn_id)
            return turn_id

        def token_count() -> None:
            nonlocal t, used, total
            inp = rng.randint(8_000, 200_000)
            last = codex_usage(inp, inp * rng.randint(0, 9) // 10, rng.randint(50, 3_000), rng.randint(0, 1_500))
            total = {k: total[k] + last[k] for k in last}
            used = min(100.0, used + 1.0)
            t += 0.02
            add(
                "event_msg",
                {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": dict(total),
                        "last_token_usage": last,
                        "model_context_window": 258400,
                    },
                    "rate_limits": codex_rate_limits(used, 3.0, resets),
                },
            )

        t += 0.002
        add(
            "response_item",
            {
                "type": "message",
                "role": "developer",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<permissions instructions>\nsandbox_mode is workspace-write; network access is restricted.\n</permissions instructions>",
                    }
                ],
            },
        )
        turn_id = start_turn(prompt or pool.prompt(rng))
        t += rng.uniform(0.2, 0.6)
        add(
            "event_msg",
            {
                "type": "token_count",
                "info": None,
                "rate_limits": codex_rate_limits(used, 3.0, resets),
            },
        )
        spawns: list[Spawn] = []
        step = 0
        while sink.size < target or step == 0:
            step += 1
            t += rng.uniform(2, 15)
            summary = pool.summary(rng)
            add(
                "event_msg",
                {"type": "agent_reasoning", "text": summary.split("\n\n", 1)[0].strip("*")},
            )
            enc = mint.fernet_token_chars(rng, int(t - rng.uniform(0, 1)), rng.randint(600, 4_000))
            item(
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": summary}],
                    "content": None,
                    "encrypted_content": enc,
                },
                "rs",
            )
            if rng.random() < 0.3:
                t += rng.uniform(0.2, 2)
                text = pool.prose(rng, self.text_len(200, 0.7))
                add("event_msg", {"type": "agent_message", "message": text, "phase": "commentary"})
                item(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                        "phase": "commentary",
                    },
                    "msg",
                )
            t += rng.uniform(0.3, 3)
            call = mint.openai_call_id(rng)
            if step == 1 and n_spawn:
                for _ in range(n_spawn):
                    task = pool.prompt(rng)
                    call = mint.openai_call_id(rng)
                    item(
                        {
                            "type": "function_call",
                            "name": "spawn_agent",
                            "arguments": _dumps({"message": task, "agent_type": "worker"}).decode(),
                            "call_id": call,
                        },
                        "fc",
                    )
                    child_t = t + rng.uniform(0.2, 0.6)
                    child = mint.uuid7(rng, child_t)
                    spawns.append(Spawn(child, child_t, task))
                    t = child_t + 0.05
                    add(
                        "response_item",
                        {
                            "type": "function_call_output",
                            "call_id": call,
                            "output": f'{{"agent_id":"{child}","nickname":null}}',
                        },
                    )
            elif rng.random() < 0.25:
                patch = (
                    "*** Begin Patch\n*** Update File: src/"
                    + rng.choice(NAMES)
                    + ".py\n@@\n"
                    + "".join("+" + ln + "\n" for ln in pool.code_slice(rng, self.text_len(1_500)).splitlines())
                    + "*** End Patch\n"
                )
                item(
                    {
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call,
                        "name": "apply_patch",
                        "input": patch,
                    },
                    "ctc",
                )
                t += rng.uniform(0.05, 0.5)
                add(
                    "response_item",
                    {
                        "type": "custom_tool_call_output",
                        "call_id": call,
                        "output": '{"output":"Success. Updated the following files:\\nM src/app.py\\n","metadata":{"exit_code":0,"duration_seconds":0.0}}',
                    },
                )
            else:
                cmd = rng.choice(
                    (
                        "rg -n 'def ' src",
                        "python -m pytest -q",
                        "sed -n '1,200p' src/app.py",
                        "npm test -- --run",
                        "git diff --stat",
                    )
                )
                item(
                    {
                        "type": "function_call",
                        "name": "exec_command",
                        "arguments": _dumps({"cmd": cmd, "workdir": cwd, "yield_time_ms": 10000}).decode(),
                        "call_id": call,
                    },
                    "fc",
                )
                t += rng.uniform(0.05, 4)
                body = pool.code_slice(rng, self.text_len(1_800))
                out = f"Chunk ID: {mint.rand_hex(rng, 6)}\nWall time: {rng.uniform(0.01, 9):.4f} seconds\nProcess exited with code {rng.choice((0, 0, 0, 1))}\nOriginal token count: {len(body) // 4}\nOutput:\n{body}"
                add(
                    "response_item",
                    {"type": "function_call_output", "call_id": call, "output": out},
                )
            token_count()
            if step > 6 and rng.random() < 0.02:
                t += rng.uniform(1, 5)
                add(
                    "compacted",
                    {
                        "message": pool.prose(rng, 600),
                        "replacement_history": [
                            {
                                "type": "message",
                                "role": "user",
                                "content": [{"type": "input_text", "text": pool.prompt(rng)}],
                            },
                            {
                                "type": "compaction",
                                "encrypted_content": mint.fernet_token_chars(
                                    rng, int(t) - 1, rng.randint(2_000, 8_000)
                                ),
                            },
                        ],
                    },
                )
                t += 0.01
                turn_context(turn_id)
            if rng.random() < 0.04:
                t += rng.uniform(1, 4)
                add(
                    "event_msg",
                    {
                        "type": "task_complete",
                        "turn_id": turn_id,
                        "last_agent_message": pool.prose(rng, 200),
                    },
                )
                t += rng.uniform(30, 900)
                turn_id = start_turn(pool.prompt(rng))
        t += rng.uniform(2, 8)
        final = pool.prose(rng, self.text_len(400, 0.6))
        add("event_msg", {"type": "agent_message", "message": final, "phase": "final_answer"})
        item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": final}],
                "phase": "final_answer",
            },
            "msg",
        )
        token_count()
        t += 0.02
        add("event_msg", {"type": "task_complete", "turn_id": turn_id, "last_agent_message": final})
        y, m, d = local_date_dirs(t0, CODEX_LOCAL_OFFSET_HOURS)
        rel = f"codex/sessions/{y}/{m}/{d}/rollout-{local_stamp(t0, CODEX_LOCAL_OFFSET_HOURS)}-{tid}.jsonl"
        self.write(rel, sink.data(), len(sink.parts) - 1, "codex", "openai")
        return spawns

    # -- Claude Code -----------------------------------------------------------

    def claude_group(self) -> None:
        """A Claude Code main session and its sub-agent transcripts."""
        rng = self.rng
        t0 = self.next_time()
        sid = mint.uuid4(rng)
        project = f"-home-dev-{rng.choice(NAMES)}-{rng.choice(('app', 'site', 'service', 'api'))}"
        n_sub = rng.choices((0, 1, 2, 3), (70, 18, 8, 4))[0]
        model = rng.choice(CLAUDE_MODELS)
        spawns = self.claude_session(project, sid, t0, model, self.session_size(), None, n_sub)
        for sp in spawns:
            sub_model = rng.choice(CLAUDE_SUB_MODELS)
            self.claude_session(project, sid, sp.start, sub_model, self.session_size(), sp, 0)

    def claude_session(
        self,
        project: str,
        sid: str,
        t0: float,
        model: str,
        target: int,
        agent: Spawn | None,
        n_spawn: int,
    ) -> list[Spawn]:
        """Write one Claude Code transcript (main session, or a sub-agent when ``agent``)."""
        rng = self.rng
        pool = self.pool
        cwd = "/" + project[1:].replace("-", "/", 2)
        slug = (
            "-".join(
                rng.choice(
                    (
                        "quiet",
                        "amber",
                        "rising",
                        "gentle",
                        "brave",
                        "swift",
                        "lucky",
                        "sunny",
                        "misty",
                    )
                )
                for _ in range(2)
            )
            + "-"
            + rng.choice(("otter", "loaf", "heron", "maple", "comet", "fox"))
        )
        sink = Sink()
        t = t0
        last_uuid: str | None = None
        agent_id = agent.child_id if agent is not None else None
        version = ("2.1.59", "2.1.63", "2.1.72")[int(sid[:2], 16) % 3]  # shared with sub-agents

        def base(kind: str) -> JSON:
            d: JSON = {
                "parentUuid": last_uuid,
                "isSidechain": agent_id is not None,
                "userType": "external",
                "cwd": cwd,
                "sessionId": sid,
                "version": version,
                "gitBranch": "main",
            }
            if agent_id is not None:
                d["agentId"] = agent_id
            d["slug"] = slug
            d["type"] = kind
            d["uuid"] = mint.uuid4(rng)
            d["timestamp"] = iso_ms(t)
            return d

        def push(d: JSON) -> JSON:
            nonlocal last_uuid
            sink.add(d)
            last_uuid = str(d["uuid"])
            return d

        def user(content: Any, **extra: Any) -> JSON:
            d = base("user")
            d["message"] = {"role": "user", "content": content}
            d.update(extra)
            return push(d)

        def assistant(blocks: list[JSON], stop: str) -> str:
            nonlocal t
            t_req = t + rng.uniform(0.05, 0.4)
            req = mint.anthropic_uuid7_id(rng, "req", t_req)
            mid = mint.anthropic_uuid7_id(rng, "msg", t_req + rng.uniform(0.1, 0.3))
            t = t_req + rng.uniform(2.0, 4.0)
            usage = anthropic_usage(
                rng.randint(1, 30),
                rng.randint(20, 3_000),
                rng.randint(0, 30_000),
                rng.randint(0, 150_000),
            )
            uid = ""
            for i, block in enumerate(blocks):
                d = base("assistant")
                d["message"] = {
                    "model": model,
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "content": [block],
                    "stop_reason": stop if i == len(blocks) - 1 else None,
                    "stop_sequence": None,
                    "usage": usage,
                }
                d["requestId"] = req
                uid = str(push(d)["uuid"])
                t += rng.uniform(0.05, 0.4)
            return uid

        def thinking(n: int) -> JSON:
            text = pool.prose(rng, n)
            sig = mint.anthropic_signature(rng, model, ciphertext_len=max(64, min(6_000, len(text))))
            return {"type": "thinking", "thinking": text, "signature": sig}

        if agent is None:
            if rng.random() < 0.2:
                sink.add(
                    {
                        "type": "summary",
                        "summary": pool.prompt(rng)[:80],
                        "leafUuid": mint.uuid4(rng),
                    }
                )
            first = user(pool.prompt(rng), permissionMode="default")
            sink.add(
                {
                    "type": "file-history-snapshot",
                    "messageId": first["uuid"],
                    "snapshot": {
                        "messageId": first["uuid"],
                        "trackedFileBackups": {},
                        "timestamp": first["timestamp"],
                    },
                    "isSnapshotUpdate": False,
                }
            )
        else:
            user(agent.task)
        spawns: list[Spawn] = []
        step = 0
        while sink.size < target or step == 0:
            step += 1
            blocks: list[JSON] = []
            if rng.random() < 0.6:
                blocks.append(thinking(self.text_len(400, 0.9)))
            if rng.random() < 0.5:
                blocks.append({"type": "text", "text": pool.prose(rng, self.text_len(180, 0.6))})
            if step == 1 and n_spawn:
                for _ in range(n_spawn):
                    task = pool.prompt(rng)
                    tu = {
                        "type": "tool_use",
                        "id": mint.toolu_id(rng),
                        "name": "Task",
                        "input": {
                            "description": "Explore the codebase",
                            "prompt": task,
                            "subagent_type": "Explore",
                        },
                    }
                    blocks.append(tu)
                uid = assistant(blocks, "tool_use")
                for b in blocks:
                    if b["type"] != "tool_use":
                        continue
                    aid = "a" + mint.rand_hex(rng, 6)
                    sp = Spawn(aid, t + rng.uniform(0.2, 0.8), str(b["input"]["prompt"]), str(b["id"]))
                    spawns.append(sp)
                    push(
                        {
                            **base("progress"),
                            "data": {"type": "agent_progress", "agentId": aid, "prompt": sp.task},
                            "toolUseID": b["id"],
                            "parentToolUseID": b["id"],
                        }
                    )
                    t += rng.uniform(20, 240)
                    summary = pool.prose(rng, self.text_len(500, 0.6))
                    user(
                        [
                            {
                                "tool_use_id": b["id"],
                                "type": "tool_result",
                                "content": [
                                    {"type": "text", "text": summary},
                                    {
                                        "type": "text",
                                        "text": f"agentId: {aid} (for resuming to continue this agent's work if needed)",
                                    },
                                ],
                            }
                        ],
                        toolUseResult={
                            "status": "completed",
                            "agentId": aid,
                            "totalDurationMs": rng.randint(20_000, 240_000),
                            "totalToolUseCount": rng.randint(1, 30),
                        },
                        sourceToolAssistantUUID=uid,
                    )
                continue
            kind = rng.random()
            if kind < 0.35:
                name, inp = "Read", {"file_path": f"{cwd}/src/{rng.choice(NAMES)}.py"}
            elif kind < 0.55:
                name, inp = (
                    "Edit",
                    {
                        "file_path": f"{cwd}/src/{rng.choice(NAMES)}.ts",
                        "old_string": pool.code_slice(rng, 120),
                        "new_string": pool.code_slice(rng, 140),
                    },
                )
            elif kind < 0.65:
                name, inp = (
                    "Grep",
                    {"pattern": rng.choice(NAMES), "path": cwd, "output_mode": "content"},
                )
            else:
                name, inp = (
                    "Bash",
                    {
                        "command": rng.choice(("npm test", "pytest -q", "git status", "ls -la", "npm run build")),
                        "description": "Run a command",
                    },
                )
            tu = {"type": "tool_use", "id": mint.toolu_id(rng), "name": name, "input": inp}
            blocks.append(tu)
            uid = assistant(blocks, "tool_use")
            out = pool.code_slice(rng, self.text_len(1_500))
            if name == "Bash":
                for k in range(rng.randint(0, 3)):
                    t += rng.uniform(1, 5)
                    push(
                        {
                            **base("progress"),
                            "data": {
                                "type": "bash_progress",
                                "output": out[:120],
                                "fullOutput": out[: 200 * (k + 1)],
                                "elapsedTimeSeconds": k + 1,
                                "totalLines": out.count("\n"),
                            },
                            "toolUseID": f"bash-progress-{k}",
                            "parentToolUseID": tu["id"],
                        }
                    )
                result_meta: JSON = {
                    "stdout": out,
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                }
            elif name == "Read":
                result_meta = {
                    "type": "text",
                    "file": {
                        "filePath": inp["file_path"],
                        "numLines": out.count("\n") + 1,
                        "startLine": 1,
                        "totalLines": out.count("\n") + 1,
                    },
                }
            else:
                result_meta = {
                    "filePath": inp.get("file_path", cwd),
                    "numLines": out.count("\n") + 1,
                }
            t += rng.uniform(0.1, 8)
            user(
                [{"tool_use_id": tu["id"], "type": "tool_result", "content": out}],
                toolUseResult=result_meta,
                sourceToolAssistantUUID=uid,
            )
            r = rng.random()
            if r < 0.01:
                t += rng.uniform(1, 3)
                push(
                    {
                        **base("system"),
                        "subtype": "api_error",
                        "level": "error",
                        "error": {"cause": {"code": "overloaded_error"}},
                        "retryInMs": round(rng.uniform(400, 9_000), 1),
                        "retryAttempt": 1,
                        "maxRetries": 10,
                    }
                )
            elif r < 0.015:
                t += rng.uniform(1, 3)
                syn = base("assistant")
                syn["message"] = {
                    "id": mint.uuid4(rng),
                    "model": "<synthetic>",
                    "role": "assistant",
                    "stop_reason": "stop_sequence",
                    "stop_sequence": "",
                    "type": "message",
                    "usage": {
                        "input_tokens": 0,
                        "output_tokens": 0,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "service_tier": None,
                    },
                    "content": [{"type": "text", "text": "No response requested."}],
                }
                push(syn)
        t += rng.uniform(0.5, 3)
        assistant([{"type": "text", "text": pool.prose(rng, self.text_len(350, 0.7))}], "end_turn")
        if agent is None:
            t += 0.02
            push(
                {
                    **base("system"),
                    "subtype": "turn_duration",
                    "durationMs": round((t - t0) * 1000),
                    "isMeta": False,
                }
            )
            rel = f"claude/projects/{project}/{sid}.jsonl"
        else:
            rel = f"claude/projects/{project}/{sid}/subagents/agent-{agent.child_id}.jsonl"
        self.write(rel, sink.data(), len(sink.parts) - 1, "claude-code", "anthropic")
        if agent is not None:
            meta_rel = f"claude/projects/{project}/{sid}/subagents/agent-{agent.child_id}.meta.json"
            meta = {"toolUseId": agent.tool_use_id, "spawnDepth": 1, "model": model}
            self.write(meta_rel, _dumps(meta) + b"\n", 0, None, None)
        return spawns


def _clear(out: Path) -> None:
    """Delete ``out`` if it is empty or a previous corpus; refuse to touch anything else."""
    if not out.exists():
        return
    if not out.is_dir():
        raise SystemExit(f"refusing to overwrite {out}: not a directory")
    entries = {p.name for p in out.iterdir()}
    if not entries:
        return
    if MANIFEST not in entries or entries - OWNED_ENTRIES:
        raise SystemExit(f"refusing to delete {out}: it is not empty and holds no corpus {MANIFEST}")
    shutil.rmtree(out)


def generate(
    out_dir: Path,
    size_mb: float,
    seed: int,
    sessions_per_mb: float = DEFAULT_SESSIONS_PER_MB,
) -> dict[str, Any]:
    """Write a corpus of about ``size_mb`` MiB under ``out_dir`` and return its manifest.

    Args:
        out_dir: the corpus root; it must be absent, empty, or a previous corpus (then replaced).
        size_mb: the target total size in MiB (2**20 bytes) of the transcript files.
        seed: the random seed; the same seed and size give byte-identical trees.
        sessions_per_mb: the average session density (sets the mean session size).

    Returns:
        The manifest: totals (files, sessions, bytes, lines), per-format and per-provider session
        counts, and the relative paths of the outlier sessions (ground truth).
    """
    if size_mb <= 0 or sessions_per_mb <= 0:
        raise ValueError("size_mb and sessions_per_mb must be positive")
    out_dir = Path(out_dir)
    _clear(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(out_dir, size_mb, seed, sessions_per_mb)
    tot = corpus.run()
    manifest: dict[str, Any] = {
        "generator": "musetui_synth.corpus",
        "seed": seed,
        "size_mb": size_mb,
        "sessions_per_mb": sessions_per_mb,
        "target_bytes": corpus.target,
        "files": tot.files,
        "sessions": tot.sessions,
        "bytes": tot.bytes,
        "lines": tot.lines,
        "sessions_by_format": dict(sorted(tot.by_format.items())),
        "sessions_by_provider": dict(sorted(tot.by_provider.items())),
        "outliers": sorted(tot.outliers),
    }
    (out_dir / MANIFEST).write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m musetui_synth.corpus OUT_DIR --size-mb N --seed S``."""
    ap = argparse.ArgumentParser(
        prog="python -m musetui_synth.corpus",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--size-mb", type=float, required=True, help="target size in MiB")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--sessions-per-mb",
        type=float,
        default=DEFAULT_SESSIONS_PER_MB,
        help="average sessions per MiB (default 38: ~19,000 per 500 MiB)",
    )
    args = ap.parse_args(argv)
    started = time.perf_counter()
    m = generate(args.out_dir, args.size_mb, args.seed, args.sessions_per_mb)
    secs = time.perf_counter() - started
    mb = m["bytes"] / MB
    print(
        f"files {m['files']:,}  sessions {m['sessions']:,}  bytes {m['bytes']:,} ({mb:.1f} MiB)  "
        f"lines {m['lines']:,}  outliers {len(m['outliers'])}  "
        f"in {secs:.1f} s ({mb / secs if secs else 0.0:.1f} MiB/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
