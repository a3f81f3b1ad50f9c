"""Write the bundled sample tree: ``python -m musetui_synth.sample [OUT_DIR]``.

The tree tells one evening's story (2026-09-01, from 22:00Z): a Muse VM builds a bakery's
website with four workers, one of which was routed to ``azure/muse-special`` and carries
OpenAI Responses-stack artifacts; a Codex CLI rollout with a sub-agent adds the order
endpoint; a Claude Code session with a sub-agent sets up deployment; and two raw API captures.
Output is byte-for-byte deterministic.
"""

from __future__ import annotations

import random
import shutil
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from . import mint
from . import sample_text as tx
from .formats import (
    CODEX_LOCAL_OFFSET_HOURS,
    JSON,
    anthropic_usage,
    codex_line,
    codex_rate_limits,
    codex_usage,
    muse_event,
    muse_line,
    muse_record,
)
from .times import iso_ms, local_stamp, unix

SEED = 20260901
BASE_TIME = unix(2026, 9, 1, 22, 0, 0)
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "sample_transcripts"
#: top-level entries the generator owns; any other content makes it refuse to delete OUT_DIR.
OWNED_ENTRIES = frozenset({"muse-vm", "codex", "claude", "api", "README.md"})

#: A model without reasoning: Codex asks OpenAI for encrypted reasoning (``store:false``), so
#: a reasoning model would put OpenAI ``encrypted_content`` in every turn. This pair shows the
#: Codex layout and OpenAI ids; the sample's only encrypted OpenAI reasoning is the Muse
#: outlier's (``provider:openai has:encrypted`` finds exactly its items).
CODEX_MODEL = "gpt-4.1"
#: What Codex reports as the context window of ``gpt-4.1`` (95% of 1,047,576 tokens).
CODEX_CONTEXT_WINDOW = 995197
CODEX_CLI = "0.141.0"
CLAUDE_VERSION = "2.1.72"
CLAUDE_MAIN_MODEL = "claude-sonnet-4-6"
CLAUDE_SUB_MODEL = "claude-haiku-4-5-20251001"


class Clock:
    """A monotonic clock that advances by seeded random steps (microsecond resolution)."""

    def __init__(self, rng: random.Random, t: float) -> None:
        self.rng = rng
        self.t = t

    def tick(self, lo: float, hi: float) -> float:
        """Advance by a random step in ``[lo, hi]`` seconds and return the new time."""
        self.t = round(self.t + self.rng.uniform(lo, hi), 6)
        return self.t


def dump_jsonl(lines: list[JSON]) -> bytes:
    """Serialise lines as JSON Lines (``\\n`` after each)."""
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def dump_json(obj: Any) -> bytes:
    """Serialise one object as indented JSON, like the vercel/ai captures."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n"


# ---------------------------------------------------------------------------
# Muse


@dataclass
class MuseSession:
    """A Muse session being written: its id, lines, and a few facts for the README."""

    session_id: str
    provider_id: str
    model_id: str
    lines: list[JSON] = field(default_factory=list)

    def add(self, t: float, payload: JSON) -> None:
        """Append one line recorded at ``t``."""
        self.lines.append(muse_line(self.session_id, t, payload))

    def head(self, t: float, route: str | None = None) -> None:
        """Write the ``metadata`` and ``route_facts`` lines."""
        self.add(
            t,
            muse_record(
                "metadata",
                {
                    "workspace_root": tx.WORKSPACE,
                    "cwd": tx.WORKSPACE,
                    "provider_id": self.provider_id,
                    "model_id": self.model_id,
                },
            ),
        )
        facts: JSON = {"provider_id": self.provider_id, "model_id": self.model_id}
        facts["route"] = route or f"{self.provider_id}/{self.model_id}"
        self.add(round(t + 0.000412, 6), muse_record("route_facts", facts))

    @property
    def start(self) -> float:
        """The first ``recorded_at``, in unix seconds."""
        return int(self.lines[0]["recorded_at"]) / 1_000_000

    @property
    def end(self) -> float:
        """The last ``recorded_at``, in unix seconds."""
        return int(self.lines[-1]["recorded_at"]) / 1_000_000


def avocado_message_id(rng: random.Random) -> str:
    """Avocado message ids: ``msg-<uuid4>`` or a bare uuid4, never OpenAI-shaped."""
    return ("msg-" if rng.random() < 0.6 else "") + mint.uuid4(rng)


def avocado_usage(rng: random.Random, inp: int, out: int, reasoning: int) -> JSON:
    """Return a Muse ``model_completed.usage`` object."""
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cached_tokens": int(inp * rng.uniform(0.4, 0.8)) // 64 * 64,
        "reasoning_tokens": reasoning,
    }


def wrote(path: str, content: str) -> str:
    """Tool output of Muse's ``write_file``."""
    return f"Wrote {len(content.encode('utf-8')):,} bytes to {path}"


def avocado_worker(
    rng: random.Random,
    start: float,
    model: str,
    prompt: str,
    reasoning: str,
    calls: list[tuple[str, JSON, str]],
    final: str,
) -> MuseSession:
    """Build an Avocado worker: one tool round, then a final message."""
    s = MuseSession(mint.uuid7(rng, start), "meta", model)
    clock = Clock(rng, start)
    s.head(start)
    s.add(clock.tick(0.2, 0.5), muse_event({"kind": "started", "prompt": prompt}))
    s.add(
        clock.tick(4, 12),
        muse_event(
            {
                "kind": "reasoning_committed",
                "message_id": avocado_message_id(rng),
                "text": reasoning,
                "signature": "",
            }
        ),
    )
    tool_calls = [{"call_id": mint.uuid_call_id(rng), "name": name, "args": args} for name, args, _ in calls]
    s.add(
        clock.tick(15, 50),
        muse_event(
            {
                "kind": "assistant_tool_calls_committed",
                "message_id": avocado_message_id(rng),
                "tool_calls": tool_calls,
            }
        ),
    )
    s.add(
        clock.tick(0.05, 0.3),
        muse_event(
            {
                "kind": "model_completed",
                "model": f"meta/{model}",
                "usage": avocado_usage(rng, rng.randint(3000, 6000), rng.randint(600, 2400), 180),
            }
        ),
    )
    results: list[JSON] = []
    for i, (tc, (_, _, output)) in enumerate(zip(tool_calls, calls, strict=True)):
        key = "text" if i % 2 else "output"
        results.append({"tool_call_id": tc["call_id"], key: output})
    s.add(
        clock.tick(0.5, 25),
        muse_event({"kind": "tool_result_batch_committed", "results": results}),
    )
    s.add(
        clock.tick(2, 6),
        muse_event(
            {
                "kind": "assistant_message_committed",
                "message_id": avocado_message_id(rng),
                "text": final,
            }
        ),
    )
    s.add(
        clock.tick(0.05, 0.2),
        muse_event(
            {
                "kind": "model_completed",
                "model": f"meta/{model}",
                "usage": avocado_usage(rng, rng.randint(6000, 9000), rng.randint(80, 300), 40),
            }
        ),
    )
    return s


def muse_special_worker(rng: random.Random, start: float) -> MuseSession:
    """Build the outlier: declared ``azure/muse-special``, items shaped like OpenAI Responses."""
    s = MuseSession(mint.uuid7(rng, start), "azure", "muse-special")
    conv = mint.new_openai_conversation(rng, store=True, marker="8196")
    clock = Clock(rng, start)
    s.head(start, route="azure/muse-special")
    s.add(clock.tick(0.2, 0.4), muse_event({"kind": "started", "prompt": tx.AUDIT_TASK}))

    def reasoning(summary: str) -> None:
        t = clock.tick(2, 6)
        fernet_t = int(t) + rng.choice((0, 1))
        s.add(
            t,
            muse_event(
                {
                    "kind": "reasoning_committed",
                    "message_id": conv.item_id(rng, "rs", t),
                    "text": summary,
                    "signature": mint.muse_gpt_responses_signature(rng, fernet_t, rng.randint(1000, 1500)),
                }
            ),
        )

    def tool_round(calls: list[tuple[str, JSON, str]], usage: tuple[int, int, int]) -> None:
        t = clock.tick(0.4, 2.5)
        tool_calls = [{"call_id": mint.openai_call_id(rng), "name": name, "args": args} for name, args, _ in calls]
        s.add(
            t,
            muse_event(
                {
                    "kind": "assistant_tool_calls_committed",
                    "message_id": conv.item_id(rng, "fc", t),
                    "tool_calls": tool_calls,
                }
            ),
        )
        completed(usage)
        results = [
            {"tool_call_id": tc["call_id"], "output": out} for tc, (_, _, out) in zip(tool_calls, calls, strict=True)
        ]
        s.add(
            clock.tick(1, 12),
            muse_event({"kind": "tool_result_batch_committed", "results": results}),
        )

    def completed(usage: tuple[int, int, int]) -> None:
        inp, out, rsn = usage
        s.add(
            clock.tick(0.05, 0.2),
            muse_event(
                {
                    "kind": "model_completed",
                    "model": "azure/muse-special",
                    "usage": {
                        "input_tokens": inp,
                        "output_tokens": out,
                        "cached_tokens": inp // 2 // 128 * 128,
                        "reasoning_tokens": rsn,
                    },
                }
            ),
        )

    reasoning(tx.AUDIT_SUMMARIES[0])
    tool_round(
        [
            ("read_file", {"path": "site/visit.html"}, tx.VISIT_HTML),
            (
                "run_shell",
                {
                    "cmd": "npx --yes @axe-core/cli@4.10 http://localhost:8080/index.html "
                    "http://localhost:8080/menu.html http://localhost:8080/visit.html",
                    "timeout_s": 120,
                },
                tx.AXE_OUTPUT,
            ),
        ],
        (5210, 412, 256),
    )
    reasoning(tx.AUDIT_SUMMARIES[1])
    tool_round(
        [("run_shell", {"cmd": tx.CONTRAST_CMD, "timeout_s": 30}, tx.CONTRAST_OUTPUT)],
        (7034, 233, 128),
    )
    reasoning(tx.AUDIT_SUMMARIES[2])
    t = clock.tick(3, 9)
    s.add(
        t,
        muse_event(
            {
                "kind": "assistant_message_committed",
                "message_id": conv.item_id(rng, "msg", t),
                "text": tx.AUDIT_REPORT,
            }
        ),
    )
    completed((7390, 691, 320))
    return s


def build_muse(rng: random.Random, out: Path) -> tuple[MuseSession, list[MuseSession]]:
    """Write the Muse VM tree; return the parent and its workers (outlier last)."""
    t0 = BASE_TIME + 0.183_127
    parent = MuseSession(mint.uuid7(rng, t0), "meta", "avocado-1.3")
    clock = Clock(rng, t0)
    parent.head(t0)
    model = "meta/avocado-1.3"

    def ev(lo: float, hi: float, event: JSON) -> float:
        t = clock.tick(lo, hi)
        parent.add(t, muse_event(event))
        return t

    def calls(*specs: tuple[str, JSON]) -> list[JSON]:
        return [{"call_id": mint.uuid_call_id(rng), "name": n, "args": a} for n, a in specs]

    def completed(inp: int, out_tokens: int, rsn: int) -> None:
        ev(
            0.05,
            0.25,
            {
                "kind": "model_completed",
                "model": model,
                "usage": avocado_usage(rng, inp, out_tokens, rsn),
            },
        )

    def reasoning(text: str, lo: float = 2, hi: float = 7) -> None:
        ev(
            lo,
            hi,
            {
                "kind": "reasoning_committed",
                "message_id": avocado_message_id(rng),
                "text": text,
                "signature": "",
            },
        )

    def tool_calls(tcs: list[JSON], lo: float = 1, hi: float = 4) -> float:
        return ev(
            lo,
            hi,
            {
                "kind": "assistant_tool_calls_committed",
                "message_id": avocado_message_id(rng),
                "tool_calls": tcs,
            },
        )

    def results(pairs: list[tuple[str, str]], key: str = "output", lo: float = 0.2, hi: float = 2) -> None:
        ev(
            lo,
            hi,
            {
                "kind": "tool_result_batch_committed",
                "results": [{"tool_call_id": c, key: o} for c, o in pairs],
            },
        )

    ev(0.8, 1.5, {"kind": "started", "prompt": tx.PARENT_PROMPT})
    reasoning(tx.PARENT_REASONING_1)
    look = calls(("list_dir", {"path": ".", "depth": 3}), ("read_file", {"path": "brief.md"}))
    tool_calls(look)
    completed(2841, 96, 61)
    results([(look[0]["call_id"], tx.LIST_DIR_OUTPUT), (look[1]["call_id"], tx.BRIEF_MD)])

    reasoning(tx.PARENT_REASONING_2, 6, 14)
    ev(
        1,
        3,
        {
            "kind": "assistant_message_committed",
            "message_id": avocado_message_id(rng),
            "text": tx.PARENT_PLAN_MESSAGE,
        },
    )
    spawn = calls(
        ("spawn_worker", {"task": tx.CSS_TASK, "model": "avocado-1.3-mini", "name": "styles"}),
        ("spawn_worker", {"task": tx.HTML_TASK, "model": "avocado-1.3", "name": "pages"}),
        ("spawn_worker", {"task": tx.IMG_TASK, "model": "avocado-1.3-mini", "name": "images"}),
    )
    t_spawn = tool_calls(spawn, 2, 5)
    completed(4377, 1290, 512)

    css = avocado_worker(
        rng,
        t_spawn + 0.31,
        "avocado-1.3-mini",
        tx.CSS_TASK,
        "A single stylesheet, mobile-first. Custom properties for the four palette colours, a "
        "serif for headings against a system sans body, a grid for the menu. The diet tags get "
        "small coloured pills; I'll use a light text colour on the green and brown backgrounds.",
        [
            (
                "write_file",
                {"path": "site/css/styles.css", "content": tx.STYLES_CSS},
                wrote("site/css/styles.css", tx.STYLES_CSS),
            )
        ],
        "Wrote site/css/styles.css (palette variables, header, hero, menu grid, tags, order form, "
        "footer; one breakpoint at 48rem).",
    )
    html = avocado_worker(
        rng,
        t_spawn + 0.47,
        "avocado-1.3",
        tx.HTML_TASK,
        "Three pages sharing a header with nav and a footer with the address. Home: hero image "
        "with srcset, pitch, order button, hours. Menu: a grid of items with prices in pounds and "
        "VG/GF tags. Visit: shopfront photo, map link, and the order-request form posting to "
        "/api/order. One h1 per page; hero image is decorative so alt is empty.",
        [
            (
                "write_file",
                {"path": "site/index.html", "content": tx.INDEX_HTML},
                wrote("site/index.html", tx.INDEX_HTML),
            ),
            (
                "write_file",
                {"path": "site/menu.html", "content": tx.MENU_HTML},
                wrote("site/menu.html", tx.MENU_HTML),
            ),
            (
                "write_file",
                {"path": "site/visit.html", "content": tx.VISIT_HTML},
                wrote("site/visit.html", tx.VISIT_HTML),
            ),
        ],
        "Wrote index.html, menu.html and visit.html. All three link css/styles.css and use the "
        "agreed class names; images reference img/<name>-960.webp with 480/1600 srcset entries.",
    )
    img = avocado_worker(
        rng,
        t_spawn + 0.66,
        "avocado-1.3-mini",
        tx.IMG_TASK,
        "cwebp can resize and strip metadata in one pass. Loop over the five JPEGs and three "
        "widths, then compare totals with du.",
        [("run_shell", {"cmd": tx.IMG_SHELL_CMD, "timeout_s": 300}, tx.IMG_SHELL_OUTPUT)],
        "Converted 5 photos × 3 widths = 15 WebP files in site/img/. Total size went from 24 MB to 1.9 MB.",
    )
    spawn_out = [
        (c["call_id"], orjson.dumps({"worker_id": w.session_id, "status": "running"}).decode())
        for c, w in zip(spawn, (css, html, img), strict=True)
    ]
    clock.t = max(clock.t, img.start)
    results(spawn_out, lo=0.1, hi=0.3)
    ev(
        0.1,
        0.3,
        {
            "kind": "checkpoint_saved",
            "checkpoint_id": "ckpt-0003",
            "files_tracked": 9,
            "workspace_bytes": 25_346_118,
        },
    )
    reasoning(
        "Three workers are running. Nothing else to do until they report, so I'll wait on all "
        "of them together and then review what they wrote.",
        1,
        3,
    )
    wait = calls(
        (
            "wait_workers",
            {"worker_ids": [css.session_id, html.session_id, img.session_id], "timeout_s": 900},
        )
    )
    tool_calls(wait, 1, 2)
    completed(4920, 88, 40)
    clock.t = max(clock.t, css.end, html.end, img.end)
    summaries = "\n\n".join(
        f"[{name}] {w.lines[-2]['payload']['event']['text']}"
        for name, w in (("styles", css), ("pages", html), ("images", img))
    )
    results([(wait[0]["call_id"], summaries)], key="text", lo=0.3, hi=0.9)

    reasoning(
        "All three pieces are in. The brief says it must pass an accessibility check because a "
        "family member uses a screen reader, so before calling this done I want an independent "
        "audit. I'll spawn an auditor worker that reports without editing, then apply its fixes "
        "myself.",
        3,
        8,
    )
    audit_call = calls(("spawn_worker", {"task": tx.AUDIT_TASK, "name": "a11y-audit"}))
    t_audit = tool_calls(audit_call, 1, 3)
    completed(6113, 154, 96)
    audit = muse_special_worker(rng, t_audit + 0.43)
    clock.t = max(clock.t, audit.start)
    results(
        [
            (
                audit_call[0]["call_id"],
                orjson.dumps({"worker_id": audit.session_id, "status": "running"}).decode(),
            )
        ],
        lo=0.1,
        hi=0.3,
    )
    wait2 = calls(("wait_workers", {"worker_ids": [audit.session_id], "timeout_s": 900}))
    tool_calls(wait2, 1, 2)
    completed(6310, 71, 0)
    clock.t = max(clock.t, audit.end)
    results([(wait2[0]["call_id"], tx.AUDIT_REPORT)], key="text", lo=0.3, hi=0.9)

    reasoning(
        "Four concrete findings, all cheap to fix: white text on the tags, real labels on the "
        "order form, a skip link, and a focus-visible outline. Edit styles.css and visit.html, "
        "and add the skip link to all three pages.",
        4,
        9,
    )
    fixes = calls(
        (
            "edit_file",
            {
                "path": "site/css/styles.css",
                "find": "color: #c9b8a6; }",
                "replace": "color: #ffffff; }\n:focus-visible { outline: 3px solid #ffd28a; outline-offset: 2px; }\n"
                ".skip-link { position: absolute; left: -999px; }\n.skip-link:focus { left: 1rem; top: 1rem; }",
            },
        ),
        (
            "edit_file",
            {
                "path": "site/visit.html",
                "find": '<input name="name" placeholder="Your name">',
                "replace": '<label for="name">Your name</label>\n      <input id="name" name="name" autocomplete="name">',
            },
        ),
        (
            "run_shell",
            {
                "cmd": 'sed -i \'s|<body>|<body>\\n  <a class="skip-link" href="#main">Skip to content</a>|; '
                's|<main>|<main id="main">|\' site/*.html && grep -c skip-link site/*.html',
            },
        ),
    )
    tool_calls(fixes, 6, 15)
    completed(8845, 1022, 210)
    results(
        [
            (fixes[0]["call_id"], "Edited site/css/styles.css: 1 replacement"),
            (fixes[1]["call_id"], "Edited site/visit.html: 1 replacement"),
            (fixes[2]["call_id"], "site/index.html:1\nsite/menu.html:1\nsite/visit.html:1\n"),
        ]
    )
    ev(
        3,
        8,
        {
            "kind": "assistant_message_committed",
            "message_id": avocado_message_id(rng),
            "text": tx.PARENT_FINAL,
        },
    )
    completed(9530, 310, 0)

    workers = [css, html, img, audit]
    root = out / "muse-vm" / "sessions" / parent.session_id
    write(root / "session.jsonl", dump_jsonl(parent.lines))
    for w in workers:
        write(root / "subagents" / w.session_id / "session.jsonl", dump_jsonl(w.lines))
    return parent, workers


# ---------------------------------------------------------------------------
# Codex


@dataclass
class CodexRollout:
    """A Codex rollout being written."""

    thread_id: str
    started: float
    lines: list[JSON] = field(default_factory=list)

    def add(self, t: float, kind: str, payload: JSON) -> None:
        """Append one rollout line stamped ``t``."""
        self.lines.append(codex_line(t, kind, payload))

    def filename(self) -> str:
        """The rollout file name; its time is local (UTC+1), not UTC."""
        return f"rollout-{local_stamp(self.started, CODEX_LOCAL_OFFSET_HOURS)}-{self.thread_id}.jsonl"


class CodexTurn:
    """Helpers for writing one Codex turn on the OpenAI Responses stack (store:false)."""

    def __init__(self, rng: random.Random, r: CodexRollout, clock: Clock) -> None:
        self.rng = rng
        self.r = r
        self.clock = clock
        self.conv = mint.new_openai_conversation(rng, store=False, marker="8197")
        self.total = codex_usage(0, 0, 0, 0)
        self.resets_at = int(BASE_TIME) + 4 * 3600 + 1234
        self.used = 12.0

    def message(self, text: str, phase: str) -> None:
        """An assistant message (event mirror plus ``message`` item)."""
        t = self.clock.tick(0.3, 2)
        self.r.add(t, "event_msg", {"type": "agent_message", "message": text, "phase": phase})
        self.r.add(
            t,
            "response_item",
            {
                "type": "message",
                "id": self.conv.item_id(self.rng, "msg", t - 0.2),
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
                "phase": phase,
            },
        )

    def call(self, name: str, args: JSON) -> tuple[str, float]:
        """A ``function_call`` item (arguments as a JSON string); returns its call id and time."""
        t = self.clock.tick(0.5, 3)
        call_id = mint.openai_call_id(self.rng)
        self.r.add(
            t,
            "response_item",
            {
                "type": "function_call",
                "id": self.conv.item_id(self.rng, "fc", t - 0.1),
                "name": name,
                "arguments": orjson.dumps(args).decode(),
                "call_id": call_id,
            },
        )
        return call_id, t

    def output(self, call_id: str, text: str, t: float) -> None:
        """A ``function_call_output`` item stamped ``t``."""
        self.clock.t = max(self.clock.t, t)
        self.r.add(
            self.clock.t,
            "response_item",
            {"type": "function_call_output", "call_id": call_id, "output": text},
        )

    def function_call(self, name: str, args: JSON, output: str, run: tuple[float, float]) -> str:
        """A ``function_call`` and its output ``run`` seconds later."""
        call_id, t = self.call(name, args)
        self.output(call_id, output, t + self.rng.uniform(*run))
        return call_id

    def apply_patch(self, patch: str, files: list[str]) -> None:
        """A ``custom_tool_call`` to ``apply_patch`` and its output."""
        t = self.clock.tick(8, 30)
        call_id = mint.openai_call_id(self.rng)
        self.r.add(
            t,
            "response_item",
            {
                "type": "custom_tool_call",
                "id": self.conv.item_id(self.rng, "ctc", t - 0.3),
                "status": "completed",
                "call_id": call_id,
                "name": "apply_patch",
                "input": patch,
            },
        )
        summary = "Success. Updated the following files:\n" + "".join(f"A {f}\n" for f in files)
        self.r.add(
            self.clock.tick(0.1, 0.4),
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": call_id,
                "output": orjson.dumps(
                    {"output": summary, "metadata": {"exit_code": 0, "duration_seconds": 0.0}}
                ).decode(),
            },
        )

    def token_count(self, inp: int, cached: int, out: int, rsn: int) -> None:
        """A ``token_count`` event with cumulative and last usage and Codex rate limits."""
        last = codex_usage(inp, cached, out, rsn)
        self.total = {k: self.total[k] + last[k] for k in last}
        self.used += 1.0
        self.r.add(
            self.clock.tick(0.01, 0.05),
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": dict(self.total),
                    "last_token_usage": last,
                    "model_context_window": CODEX_CONTEXT_WINDOW,
                },
                "rate_limits": codex_rate_limits(self.used, 4.0, self.resets_at),
            },
        )


def exec_output(rng: random.Random, text: str, code: int = 0) -> str:
    """The text Codex's ``exec_command`` tool returns."""
    return (
        f"Chunk ID: {mint.rand_hex(rng, 6)}\nWall time: {rng.uniform(0.01, 2.5):.4f} seconds\n"
        f"Process exited with code {code}\nOriginal token count: {max(1, len(text) // 4)}\n"
        f"Output:\n{text}"
    )


def codex_session_meta(r: CodexRollout, t_line: float, source: Any, extra: JSON) -> None:
    """Write the ``session_meta`` line."""
    payload: JSON = {
        "id": r.thread_id,
        "timestamp": iso_ms(r.started),
        "cwd": tx.WORKSPACE,
        "originator": "codex_cli_rs",
        "cli_version": CODEX_CLI,
        "source": source,
        **extra,
        "model_provider": "openai",
        "base_instructions": {"text": tx.CODEX_BASE_INSTRUCTIONS},
    }
    if not extra:
        payload["git"] = {
            "commit_hash": "3f9c2e71d0a84b6f5e2c1d9a8b7f6e5d4c3b2a19",
            "branch": "main",
            "repository_url": "git@github.com:juniper-and-rye/site.git",
        }
    r.add(t_line, "session_meta", payload)


def codex_turn_start(rng: random.Random, r: CodexRollout, clock: Clock, prompt: str) -> str:
    """Write developer/user context, ``task_started``, ``turn_context`` and the prompt."""
    t = clock.tick(0.001, 0.003)
    r.add(
        t,
        "response_item",
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": tx.CODEX_PERMISSIONS}],
        },
    )
    r.add(
        t,
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": tx.CODEX_ENV_CONTEXT}],
        },
    )
    turn_id = mint.uuid7(rng, t)
    t = clock.tick(0.001, 0.003)
    r.add(
        t,
        "event_msg",
        {
            "type": "task_started",
            "turn_id": turn_id,
            "model_context_window": CODEX_CONTEXT_WINDOW,
            "collaboration_mode_kind": "default",
        },
    )
    r.add(
        t,
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
    )
    r.add(
        t,
        "event_msg",
        {
            "type": "user_message",
            "message": prompt,
            "images": [],
            "local_images": [],
            "text_elements": [],
        },
    )
    codex_turn_context(r, clock.tick(0.002, 0.006), turn_id)
    return turn_id


def codex_turn_context(r: CodexRollout, t: float, turn_id: str) -> None:
    """Write a ``turn_context`` line."""
    r.add(
        t,
        "turn_context",
        {
            "turn_id": turn_id,
            "cwd": tx.WORKSPACE,
            "current_date": "2026-09-01",
            "timezone": "Europe/London",
            "approval_policy": "on-request",
            "sandbox_policy": {
                "type": "workspace-write",
                "writable_roots": [tx.WORKSPACE],
                "network_access": False,
                "exclude_tmpdir_env_var": False,
                "exclude_slash_tmp": False,
            },
            "model": CODEX_MODEL,
            "personality": "pragmatic",
            "collaboration_mode": {
                "mode": "default",
                "settings": {
                    "model": CODEX_MODEL,
                    "reasoning_effort": None,
                    "developer_instructions": None,
                },
            },
            "summary": "auto",
            "truncation_policy": {"mode": "tokens", "limit": 10000},
        },
    )


def build_codex_child(rng: random.Random, start: float, parent_id: str, task: str) -> CodexRollout:
    """The test-writing sub-agent rollout."""
    r = CodexRollout(mint.uuid7(rng, start), start)
    clock = Clock(rng, start + 0.004)
    codex_session_meta(
        r,
        clock.t,
        {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1}}},
        {"agent_nickname": "Hypatia", "agent_role": "worker"},
    )
    turn_id = codex_turn_start(rng, r, clock, task)
    turn = CodexTurn(rng, r, clock)
    r.add(
        clock.tick(0.3, 0.5),
        "event_msg",
        {
            "type": "token_count",
            "info": None,
            "rate_limits": codex_rate_limits(13.0, 4.0, turn.resets_at),
        },
    )
    turn.message("I'll read api/order.py first to see what `handle` returns.", "commentary")
    turn.function_call(
        "exec_command",
        {"cmd": "sed -n '1,80p' api/order.py", "workdir": tx.WORKSPACE, "yield_time_ms": 10000},
        exec_output(rng, tx.ORDER_PY),
        (0.05, 0.2),
    )
    turn.token_count(14210, 11904, 196, 0)
    turn.message(
        "Three cases: a valid order is appended, missing fields are reported, and the name is HTML-escaped.",
        "commentary",
    )
    turn.apply_patch(
        "*** Begin Patch\n*** Add File: tests/test_order.py\n"
        + "".join("+" + line + "\n" for line in tx.TEST_ORDER_PY.splitlines())
        + "*** End Patch\n",
        ["tests/test_order.py"],
    )
    turn.function_call(
        "exec_command",
        {
            "cmd": "python -m pytest -q tests/test_order.py",
            "workdir": tx.WORKSPACE,
            "yield_time_ms": 30000,
        },
        exec_output(
            rng,
            "...                                                                      [100%]\n3 passed in 0.04s\n",
        ),
        (0.6, 1.8),
    )
    turn.token_count(15920, 14080, 382, 0)
    final = "Added tests/test_order.py with 3 tests (valid order appended, missing fields → 400 with three errors, name escaped). `pytest -q tests/test_order.py`: 3 passed."
    turn.message(final, "final_answer")
    r.add(
        clock.tick(0.01, 0.05),
        "event_msg",
        {"type": "task_complete", "turn_id": turn_id, "last_agent_message": final},
    )
    return r


def build_codex(rng: random.Random, out: Path) -> tuple[CodexRollout, CodexRollout]:
    """Write the Codex parent rollout and its sub-agent rollout."""
    started = BASE_TIME + 5 * 60 + 10.429
    parent = CodexRollout(mint.uuid7(rng, started), started)
    clock = Clock(rng, started + 0.512)
    codex_session_meta(parent, clock.t, "cli", {})
    turn_id = codex_turn_start(rng, parent, clock, tx.CODEX_PROMPT)
    turn = CodexTurn(rng, parent, clock)
    parent.add(
        clock.tick(0.3, 0.5),
        "event_msg",
        {
            "type": "token_count",
            "info": None,
            "rate_limits": codex_rate_limits(12.0, 4.0, turn.resets_at),
        },
    )
    turn.message("I'll look at the form fields first, then add a stdlib handler under api/.", "commentary")
    turn.function_call(
        "exec_command",
        {
            "cmd": "grep -n 'name=' site/visit.html; ls -la api 2>&1 | head",
            "workdir": tx.WORKSPACE,
            "yield_time_ms": 10000,
        },
        exec_output(
            rng,
            '14:      <input id="name" name="name" autocomplete="name">\n'
            '15:      <input name="phone" type="tel" placeholder="Phone">\n'
            '16:      <textarea name="items" placeholder="What would you like?"></textarea>\n'
            "ls: cannot access 'api': No such file or directory\n",
        ),
        (0.05, 0.3),
    )
    turn.token_count(12877, 3456, 211, 0)
    turn.message(
        "The form posts name, phone and items, and there is no api/ yet. I'm adding api/order.py: "
        "parse the form, validate the three fields, append JSON Lines, escape the output.",
        "commentary",
    )
    turn.apply_patch(
        "*** Begin Patch\n*** Add File: api/__init__.py\n+\n*** Add File: api/order.py\n"
        + "".join("+" + line + "\n" for line in tx.ORDER_PY.splitlines())
        + "*** End Patch\n",
        ["api/__init__.py", "api/order.py"],
    )
    task = (
        "Write pytest tests for api/order.py in tests/test_order.py: a valid order is appended to "
        "orders.jsonl (patch ORDERS to tmp_path), missing fields give 400 with one <li> per "
        "problem, and the name is HTML-escaped. Run them and report."
    )
    spawn_id, t_spawn = turn.call("spawn_agent", {"message": task, "agent_type": "worker"})
    child = build_codex_child(rng, t_spawn + 0.35, parent.thread_id, task)
    turn.output(
        spawn_id,
        orjson.dumps({"agent_id": child.thread_id, "nickname": "Hypatia"}).decode(),
        t_spawn + 0.41,
    )
    turn.token_count(16034, 12672, 1226, 0)
    wait_id, _ = turn.call("wait", {"ids": [child.thread_id], "timeout_ms": 600000})
    last_child = child.lines[-1]["payload"]["last_agent_message"]
    turn.output(
        wait_id,
        orjson.dumps({"status": {child.thread_id: {"completed": last_child}}, "timed_out": False}).decode(),
        _codex_end(child) + 0.4,
    )
    t_compact = clock.tick(1, 3)
    parent.add(
        t_compact,
        "compacted",
        {
            "message": "Context compacted. The order endpoint api/order.py validates name/phone/items, "
            "appends to orders.jsonl and returns an escaped thank-you page; sub-agent Hypatia wrote "
            "tests/test_order.py (3 passing).",
            "replacement_history": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": tx.CODEX_PROMPT}],
                },
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": tx.CODEX_COMPACT_SUMMARY}],
                },
            ],
        },
    )
    codex_turn_context(parent, clock.tick(0.005, 0.02), turn_id)
    turn.message("I'll run the whole suite once more after the sub-agent's changes.", "commentary")
    turn.function_call(
        "exec_command",
        {"cmd": "python -m pytest -q", "workdir": tx.WORKSPACE, "yield_time_ms": 30000},
        exec_output(
            rng,
            "...                                                                      [100%]\n3 passed in 0.05s\n",
        ),
        (0.7, 1.9),
    )
    turn.token_count(9120, 4096, 164, 0)
    final = (
        "Added `api/order.py`: it validates name, phone and items, appends each request to "
        "`orders.jsonl`, and returns an HTML-escaped thank-you page (400 with a list of problems "
        "otherwise). A sub-agent wrote `tests/test_order.py`; all 3 tests pass."
    )
    turn.message(final, "final_answer")
    turn.token_count(9480, 8960, 171, 0)
    parent.add(
        clock.tick(0.01, 0.05),
        "event_msg",
        {"type": "task_complete", "turn_id": turn_id, "last_agent_message": final},
    )

    day = out / "codex" / "sessions" / "2026" / "09" / "01"
    for r in (parent, child):
        write(day / r.filename(), dump_jsonl(r.lines))
    return parent, child


def _codex_end(r: CodexRollout) -> float:
    """The timestamp of the last line, in unix seconds."""
    return datetime.fromisoformat(str(r.lines[-1]["timestamp"]).replace("Z", "+00:00")).timestamp()


# ---------------------------------------------------------------------------
# Claude Code


@dataclass
class ClaudeSession:
    """A Claude Code transcript being written (main session or sub-agent)."""

    rng: random.Random
    session_id: str
    cwd: str
    slug: str
    agent_id: str | None = None
    lines: list[JSON] = field(default_factory=list)
    last_uuid: str | None = None

    def base(self, kind: str, t: float) -> JSON:
        """The common fields of a user/assistant/system/progress line, chained by parentUuid."""
        line: JSON = {
            "parentUuid": self.last_uuid,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": CLAUDE_VERSION,
            "gitBranch": "main",
        }
        if self.agent_id is not None:
            line["agentId"] = self.agent_id
        line["slug"] = self.slug
        line["type"] = kind
        line["uuid"] = mint.uuid4(self.rng)
        line["timestamp"] = iso_ms(t)
        return line

    def push(self, line: JSON) -> JSON:
        """Append a line and make it the parent of the next."""
        self.lines.append(line)
        self.last_uuid = str(line["uuid"])
        return line

    def user(self, t: float, content: Any, **extra: Any) -> JSON:
        """A ``user`` line."""
        line = self.base("user", t)
        line["message"] = {"role": "user", "content": content}
        line.update(extra)
        return self.push(line)

    def assistant_message(
        self,
        clock: Clock,
        model: str,
        blocks: list[JSON],
        usage: JSON,
        stop_reason: str,
    ) -> list[JSON]:
        """One API message split over one line per content block (same id and requestId)."""
        t_req = clock.t + self.rng.uniform(0.05, 0.3)
        request_id = mint.anthropic_uuid7_id(self.rng, "req", t_req)
        message_id = mint.anthropic_uuid7_id(self.rng, "msg", t_req + self.rng.uniform(0.1, 0.3))
        clock.t = t_req + self.rng.uniform(2.0, 2.8)
        out: list[JSON] = []
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            line = self.base("assistant", clock.t)
            line["message"] = {
                "model": model,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop_reason if last else None,
                "stop_sequence": None,
                "usage": usage,
            }
            line["requestId"] = request_id
            out.append(self.push(line))
            clock.tick(0.2, 0.9)
        return out


def thinking(rng: random.Random, model: str, text: str) -> JSON:
    """A thinking block whose signature names ``model``."""
    n = max(64, int(len(text.encode("utf-8")) * rng.uniform(0.85, 1.05)))
    return {
        "type": "thinking",
        "thinking": text,
        "signature": mint.anthropic_signature(rng, model, ciphertext_len=n),
    }


def tool_use(rng: random.Random, name: str, inp: JSON) -> JSON:
    """A ``tool_use`` block with a ``toolu_01…`` id."""
    return {
        "type": "tool_use",
        "id": mint.toolu_id(rng),
        "name": name,
        "input": inp,
        "caller": {"type": "direct"},
    }


def tool_result(tool_use_id: str, content: Any) -> list[JSON]:
    """The content of a user line carrying one tool result."""
    return [{"tool_use_id": tool_use_id, "type": "tool_result", "content": content}]


def build_claude(rng: random.Random, out: Path) -> tuple[ClaudeSession, ClaudeSession]:
    """Write the Claude Code session, its sub-agent transcript and the sub-agent's meta.json."""
    start = BASE_TIME + 40 * 60 + 2.318
    cwd = tx.WORKSPACE
    s = ClaudeSession(rng, mint.uuid4(rng), cwd, "gentle-rising-loaf")
    clock = Clock(rng, start)
    agent_id = "a" + mint.rand_hex(rng, 6)
    sub = ClaudeSession(rng, s.session_id, cwd, s.slug, agent_id=agent_id)

    prompt_line = s.user(clock.t, tx.CLAUDE_PROMPT, permissionMode="default")
    snapshot: JSON = {
        "type": "file-history-snapshot",
        "messageId": prompt_line["uuid"],
        "snapshot": {
            "messageId": prompt_line["uuid"],
            "trackedFileBackups": {},
            "timestamp": prompt_line["timestamp"],
        },
        "isSnapshotUpdate": False,
    }
    task_prompt = (
        "List every image path referenced from site/*.html (src and srcset) and check each one "
        "exists under site/. Report missing files and any images without an alt attribute. "
        "Be brief."
    )
    task = tool_use(
        rng,
        "Task",
        {
            "description": "Check image references",
            "prompt": task_prompt,
            "subagent_type": "Explore",
            "model": "haiku",
        },
    )
    msg1 = s.assistant_message(
        clock,
        CLAUDE_MAIN_MODEL,
        [
            thinking(
                rng,
                CLAUDE_MAIN_MODEL,
                "Two jobs: a GitHub Pages workflow for site/, and a Lighthouse CI gate on "
                "accessibility ≥ 0.95. The user wants the image references verified first — that "
                "is a read-only search across three HTML files and the img folder, a good fit for "
                "a quick Explore sub-agent while I draft the workflow.",
            ),
            {
                "type": "text",
                "text": "I'll have a sub-agent verify the image references while I set up the workflow.",
            },
            task,
        ],
        anthropic_usage(3, 412, 18_204, 0),
        "tool_use",
    )

    # The sub-agent runs while the main session waits on the Task tool.
    sub_start = clock.t + 0.6
    sclock = Clock(rng, sub_start)
    sub.user(sclock.t, task_prompt)
    s.push(
        {
            **s.base("progress", sclock.t + 0.05),
            "data": {"type": "agent_progress", "agentId": agent_id, "prompt": task_prompt},
            "toolUseID": task["id"],
            "parentToolUseID": task["id"],
        }
    )
    grep = tool_use(
        rng,
        "Grep",
        {"pattern": '(src|srcset)="[^"]+"', "path": "site", "output_mode": "content", "-n": True},
    )
    sub.assistant_message(
        sclock,
        CLAUDE_SUB_MODEL,
        [
            thinking(
                rng,
                CLAUDE_SUB_MODEL,
                "Grep the three pages for src and srcset attributes, then list site/img to compare.",
            ),
            grep,
        ],
        anthropic_usage(8, 151, 9_733, 0),
        "tool_use",
    )
    grep_out = (
        'site/index.html:14:      <img src="img/bread-wall-960.webp" srcset="img/bread-wall-480.webp 480w, img/bread-wall-960.webp 960w, img/bread-wall-1600.webp 1600w" sizes="100vw" alt="" width="960" height="640">\n'
        'site/menu.html:21:    <img src="img/cinnamon-knots-960.webp" alt="A tray of cinnamon knots dusted with sugar" width="960" height="640">\n'
        'site/visit.html:14:    <img src="img/shopfront-960.webp" alt="The green shopfront of Juniper &amp; Rye" width="960" height="640">'
    )
    sub.user(
        sclock.tick(0.1, 0.4),
        tool_result(grep["id"], grep_out),
        toolUseResult={
            "mode": "content",
            "numFiles": 3,
            "filenames": [],
            "content": grep_out,
            "numLines": 3,
        },
    )
    ls = tool_use(rng, "Bash", {"command": "ls site/img", "description": "List optimised images"})
    sub.assistant_message(sclock, CLAUDE_SUB_MODEL, [ls], anthropic_usage(6, 64, 412, 9_733), "tool_use")
    ls_out = "\n".join(
        f"{n}-{w}.webp"
        for n in ("bread-wall", "cinnamon-knots", "counter-morning", "shopfront", "sourdough-crumb")
        for w in (1600, 480, 960)
    )
    sub.user(
        sclock.tick(0.1, 0.6),
        tool_result(ls["id"], ls_out),
        toolUseResult={"stdout": ls_out, "stderr": "", "interrupted": False, "isImage": False},
    )
    sub_final = (
        "All 5 referenced images exist in site/img/ (bread-wall 480/960/1600, cinnamon-knots-960, "
        'shopfront-960). Every <img> has an alt attribute; the index.html hero uses alt="" '
        "(decorative). counter-morning and sourdough-crumb are generated but unused."
    )
    sub.assistant_message(
        sclock,
        CLAUDE_SUB_MODEL,
        [{"type": "text", "text": sub_final}],
        anthropic_usage(6, 118, 530, 10_145),
        "end_turn",
    )

    clock.t = sclock.t + 0.4
    s.user(
        clock.t,
        tool_result(
            task["id"],
            [
                {"type": "text", "text": sub_final},
                {
                    "type": "text",
                    "text": f"agentId: {agent_id} (for resuming to continue this agent's work if needed)",
                },
            ],
        ),
        toolUseResult={
            "status": "completed",
            "prompt": task_prompt,
            "agentId": agent_id,
            "content": [{"type": "text", "text": sub_final}],
            "totalDurationMs": round((sclock.t - sub_start) * 1000),
            "totalTokens": 10_269,
            "totalToolUseCount": 2,
        },
        sourceToolAssistantUUID=msg1[-1]["uuid"],
    )

    write_tool = tool_use(rng, "Write", {"file_path": f"{cwd}/.github/workflows/pages.yml", "content": tx.PAGES_YML})
    msg2 = s.assistant_message(
        clock, CLAUDE_MAIN_MODEL, [write_tool], anthropic_usage(1, 690, 1_244, 18_204), "tool_use"
    )
    s.user(
        clock.tick(0.1, 0.5),
        tool_result(write_tool["id"], f"File created successfully at: {cwd}/.github/workflows/pages.yml"),
        toolUseResult={
            "type": "create",
            "filePath": f"{cwd}/.github/workflows/pages.yml",
            "content": tx.PAGES_YML,
            "structuredPatch": [],
        },
        sourceToolAssistantUUID=msg2[-1]["uuid"],
    )
    bash = tool_use(
        rng,
        "Bash",
        {
            "command": "npx --yes @lhci/cli@0.14 autorun --collect.staticDistDir=site --assert.assertions.categories:accessibility=error",
            "description": "Run Lighthouse CI locally",
            "timeout": 300000,
        },
    )
    msg3 = s.assistant_message(clock, CLAUDE_MAIN_MODEL, [bash], anthropic_usage(1, 163, 702, 19_448), "tool_use")
    s.push(
        {
            **s.base("progress", clock.tick(3, 6)),
            "data": {
                "type": "bash_progress",
                "output": "Running Lighthouse 3 time(s) on http://localhost:4173/index.html",
                "fullOutput": "✅  .lighthouseci/ directory writable\n✅  Configuration file found\nRunning Lighthouse 3 time(s) on http://localhost:4173/index.html",
                "elapsedTimeSeconds": 4,
                "totalLines": 3,
            },
            "toolUseID": "bash-progress-0",
            "parentToolUseID": bash["id"],
        }
    )
    s.user(
        clock.tick(20, 35),
        tool_result(bash["id"], tx.LHCI_OUTPUT),
        toolUseResult={
            "stdout": tx.LHCI_OUTPUT,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
        },
        sourceToolAssistantUUID=msg3[-1]["uuid"],
    )
    err = s.base("system", clock.tick(1, 2))
    err.update(
        {
            "subtype": "api_error",
            "level": "error",
            "error": {"cause": {"code": "overloaded_error"}},
            "retryInMs": 567.4,
            "retryAttempt": 1,
            "maxRetries": 1,
        }
    )
    s.push(err)
    synthetic = s.base("assistant", clock.tick(1, 2))
    synthetic["message"] = {
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
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": None,
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        },
        "content": [
            {
                "type": "text",
                "text": 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
            }
        ],
    }
    synthetic["isApiErrorMessage"] = True
    synthetic["error"] = "overloaded"
    s.push(synthetic)
    s.user(clock.tick(8, 20), "continue")
    final = (
        "Done:\n\n- `.github/workflows/pages.yml` runs Lighthouse CI on every push to `main` and "
        "deploys `site/` to GitHub Pages only if it passes.\n- Locally, accessibility scores 1.00 "
        "(home) and 0.98 (menu), above the 0.95 gate.\n- All referenced images exist; two generated "
        "sizes (`counter-morning`, `sourdough-crumb`) are unused and can be deleted."
    )
    msg4 = s.assistant_message(
        clock,
        CLAUDE_MAIN_MODEL,
        [{"type": "text", "text": final}],
        anthropic_usage(3, 221, 1_530, 19_448),
        "end_turn",
    )
    dur = s.base("system", clock.tick(0.01, 0.05))
    dur.update({"subtype": "turn_duration", "durationMs": round((clock.t - start) * 1000), "isMeta": False})
    s.push(dur)

    summary: JSON = {
        "type": "summary",
        "summary": "Deploy bakery site to GitHub Pages with a Lighthouse accessibility gate",
        "leafUuid": msg4[-1]["uuid"],
    }
    proj = out / "claude" / "projects" / "-home-dev-site"
    write(proj / f"{s.session_id}.jsonl", dump_jsonl([summary, snapshot, *s.lines]))
    subdir = proj / s.session_id / "subagents"
    write(subdir / f"agent-{agent_id}.jsonl", dump_jsonl(sub.lines))
    write(
        subdir / f"agent-{agent_id}.meta.json",
        dump_json({"toolUseId": task["id"], "spawnDepth": 1, "model": CLAUDE_SUB_MODEL}),
    )
    return s, sub


# ---------------------------------------------------------------------------
# Raw API captures


def build_api(rng: random.Random, out: Path) -> tuple[str, str]:
    """Write one OpenAI Responses object and one Anthropic Messages object."""
    created = int(BASE_TIME) + 90 * 60 + 7
    # store:true and no ``include``: the reasoning item keeps its summary and has no
    # encrypted_content (Responses returns it only when asked for).
    conv = mint.new_openai_conversation(rng, store=True, marker="8190")
    resp_id = conv.item_id(rng, "resp", created + 0.214)
    fc_id = conv.item_id(rng, "fc", created + 6.71)
    responses: JSON = {
        "id": resp_id,
        "object": "response",
        "created_at": created,
        "status": "completed",
        "background": False,
        "billing": {"payer": "developer"},
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "model": "gpt-5-mini-2025-08-07",
        "output": [
            {
                "id": conv.item_id(rng, "rs", created + 0.98),
                "type": "reasoning",
                "summary": [
                    {
                        "type": "summary_text",
                        "text": "**Checking stock before confirming**\n\nThe customer wants two cardamom knots and a dark rye for Saturday. I should check Saturday's bake sheet before confirming the pickup time.",
                    }
                ],
            },
            {
                "id": conv.item_id(rng, "msg", created + 5.9),
                "type": "message",
                "status": "completed",
                "content": [
                    {
                        "type": "output_text",
                        "annotations": [],
                        "logprobs": [],
                        "text": "Let me check Saturday's bake sheet.",
                    }
                ],
                "role": "assistant",
            },
            {
                "id": fc_id,
                "type": "function_call",
                "status": "completed",
                "arguments": '{"day":"2026-09-05","items":["cardamom knot","dark rye & caraway"]}',
                "call_id": mint.openai_call_id(rng),
                "name": "check_bake_sheet",
            },
        ],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt_cache_key": None,
        "prompt_cache_retention": None,
        "reasoning": {"effort": "medium", "summary": "detailed"},
        "safety_identifier": None,
        "service_tier": "default",
        "store": True,
        "temperature": 1,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [
            {
                "type": "function",
                "description": "Look up how many of each item are planned for a given day's bake.",
                "name": "check_bake_sheet",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "day": {"type": "string", "description": "ISO date."},
                        "items": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["day", "items"],
                    "additionalProperties": False,
                },
                "strict": True,
            }
        ],
        "top_logprobs": 0,
        "top_p": 1,
        "truncation": "disabled",
        "usage": {
            "input_tokens": 412,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 188,
            "output_tokens_details": {"reasoning_tokens": 128},
            "total_tokens": 600,
        },
        "user": None,
        "metadata": {},
    }
    write(out / "api" / "openai-responses-reasoning.json", dump_json(responses))

    t_msg = BASE_TIME + 91 * 60 + 12.604
    thinking_text = (
        "The user asks for a short Instagram caption announcing Saturday's new dark rye & caraway "
        "loaf, and wants it posted through the scheduling tool. Keep it warm, under 200 "
        "characters, mention the 7:30 opening, then call schedule_post for Saturday 07:00."
    )
    anthropic: JSON = {
        "model": "claude-opus-4-7",
        "id": mint.anthropic_uuid7_id(rng, "msg", t_msg),
        "type": "message",
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": thinking_text,
                "signature": mint.anthropic_signature(rng, "claude-opus-4-7", version=12, ciphertext_len=232),
            },
            {
                "type": "text",
                "text": "Here's the caption, scheduled for Saturday at 07:00:\n\n“New this Saturday: dark rye & caraway, 48 hours in the making. Doors open 7:30 — come early. 🍞”",
            },
            {
                "type": "tool_use",
                "id": mint.toolu_id(rng),
                "name": "schedule_post",
                "input": {
                    "when": "2026-09-05T07:00:00+01:00",
                    "text": "New this Saturday: dark rye & caraway, 48 hours in the making. Doors open 7:30 — come early. 🍞",
                },
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "stop_details": None,
        "usage": {
            "input_tokens": 914,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 236,
            "output_tokens_details": {"thinking_tokens": 61},
            "service_tier": "standard",
            "inference_geo": "global",
        },
    }
    write(out / "api" / "anthropic-messages-thinking.json", dump_json(anthropic))
    return resp_id, str(anthropic["id"])


# ---------------------------------------------------------------------------


def write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _clear(out: Path) -> None:
    """Delete ``out`` if it holds only what this generator writes; refuse otherwise."""
    if not out.exists():
        return
    if not out.is_dir():
        raise SystemExit(f"refusing to overwrite {out}: not a directory")
    foreign = sorted(p.name for p in out.iterdir() if p.name not in OWNED_ENTRIES)
    if foreign:
        raise SystemExit(f"refusing to delete {out}: it holds {', '.join(foreign)}")
    shutil.rmtree(out)


def generate(out: Path) -> dict[str, Any]:
    """Delete and rewrite ``out`` with the sample tree; return the ids it wrote."""
    _clear(out)
    out.mkdir(parents=True)
    # One generator per part (seeded from SEED and the part's name): a change to one part
    # leaves the others' ids as they were.
    parent, workers = build_muse(random.Random(SEED), out)
    codex_parent, codex_child = build_codex(random.Random(f"{SEED}:codex"), out)
    claude, claude_sub = build_claude(random.Random(f"{SEED}:claude"), out)
    resp_id, msg_id = build_api(random.Random(f"{SEED}:api"), out)
    info: dict[str, Any] = {
        "muse_parent": parent.session_id,
        "muse_workers": {
            "styles": workers[0].session_id,
            "pages": workers[1].session_id,
            "images": workers[2].session_id,
            "a11y_audit_outlier": workers[3].session_id,
        },
        "codex_parent": codex_parent.thread_id,
        "codex_parent_file": codex_parent.filename(),
        "codex_child": codex_child.thread_id,
        "codex_child_file": codex_child.filename(),
        "claude_session": claude.session_id,
        "claude_agent": claude_sub.agent_id,
        "openai_response": resp_id,
        "anthropic_message": msg_id,
    }
    write(out / "README.md", render_readme(info).encode("utf-8"))
    return info


def render_readme(info: dict[str, Any]) -> str:
    """The user-facing README of the sample tree."""
    w = info["muse_workers"]
    p = info["muse_parent"]
    return f"""# musetui sample transcripts

A small, **synthetic** set of agent transcripts that musetui opens when it finds none of your
own. Every id, token and signature in it was minted by `musetui_synth` so that it decodes the way
the real thing does (times, markers, structure), but none of it came from a real provider.
Regenerate it with `python -m musetui_synth.sample`.

The story: on 2026-09-01 from 22:00 UTC a small team builds the website of *Juniper & Rye*, a
bakery in Leith, with three different agent harnesses.

## `muse-vm/`: a Muse VM session with four workers

```
muse-vm/sessions/{p}/session.jsonl
muse-vm/sessions/{p}/subagents/{w["styles"]}/session.jsonl
muse-vm/sessions/{p}/subagents/{w["pages"]}/session.jsonl
muse-vm/sessions/{p}/subagents/{w["images"]}/session.jsonl
muse-vm/sessions/{p}/subagents/{w["a11y_audit_outlier"]}/session.jsonl   <- the outlier
```

- **Parent** `{p}`: declared `meta` / `avocado-1.3` (Meta's Avocado). It reads the brief, spawns
  three workers, waits, spawns an accessibility auditor, then applies the audit's fixes. Its
  evidence matches the declaration: tool-call ids are `call_` + 32 hex (uuid4, a self-hosted
  shape), reasoning is plain visible text with an empty `signature`, message ids are uuid4s.
  It also contains one event of a kind musetui does not know (`checkpoint_saved`).
- **Workers** `styles`, `pages`, `images`: Avocado (`avocado-1.3-mini`, `avocado-1.3`,
  `avocado-1.3-mini`), with the same Avocado evidence.
- **Outlier** `{w["a11y_audit_outlier"]}` (the accessibility audit): its metadata declares
  `provider_id: azure`, `model_id: muse-special` (route `azure/muse-special`), and every artifact
  in it belongs to the **OpenAI Responses stack**, not to Avocado:
  - reasoning `message_id`s are `rs_` ids in the new50 layout whose embedded unix second equals
    the line's `recorded_at` second, with store byte `00` and marker `8196`, one conversation key
    for the whole session;
  - the reasoning text is only a short summary (like Responses `summary_text`), and its
    `signature` is `gpt_responses_v1:` + a Fernet token (`gAAAAA…`, version byte 0x80) minted in
    the same second as the line or one second later;
  - tool-call ids are `call_` + 24 mixed-case characters; tool-call and assistant message ids are
    `fc_` / `msg_` new50 ids of the same conversation.

  Ids and blobs cannot tell OpenAI from Azure; the declared route says Azure, and store byte `00`
  is consistent with it. So musetui should attribute it to provider `openai` (host `azure`,
  declared) and flag it as the `outlier` among its Avocado siblings.

Recorded times (`recorded_at`) are integer **microseconds** since the epoch.

## `codex/`: a Codex CLI rollout with a sub-agent

```
codex/sessions/2026/09/01/{info["codex_parent_file"]}
codex/sessions/2026/09/01/{info["codex_child_file"]}
```

- Parent thread `{info["codex_parent"]}` (`gpt-4.1`, `model_provider: openai`) adds the
  order-form endpoint. File names carry **local** time (UTC+1), one hour ahead of the UTC in
  `session_meta`; the thread ids are UUIDv7s of the session start.
- Sub-agent `{info["codex_child"]}` ("Hypatia", role `worker`) writes the tests; its
  `session_meta.payload.source` is `{{"subagent":{{"thread_spawn":{{"parent_thread_id":…,"depth":1}}}}}}`.
- Both run `gpt-4.1`, a model without reasoning, so they carry no reasoning items and no
  encrypted reasoning (Codex on a reasoning model stores OpenAI's Fernet `encrypted_content` in
  every turn).
- Evidence: `call_` + 24 ids and newer-style `fc_`/`msg_`/`ctc_` item ids with store byte `01`
  (Codex sends `store:false` to OpenAI), minted within seconds of their lines. The parent also
  has a `compacted` line whose history ends with a local summary.

## `claude/`: a Claude Code 2.1 session with a sub-agent

```
claude/projects/-home-dev-site/{info["claude_session"]}.jsonl
claude/projects/-home-dev-site/{info["claude_session"]}/subagents/agent-{info["claude_agent"]}.jsonl
claude/projects/-home-dev-site/{info["claude_session"]}/subagents/agent-{info["claude_agent"]}.meta.json
```

- Main session on `claude-sonnet-4-6`: sets up a GitHub Pages workflow with a Lighthouse gate.
  One API message is split over three lines (thinking, text, tool_use) sharing `message.id` and
  `requestId`. `req_011C…`/`msg_011C…` ids are UUIDv7s 2–5 s before their lines; the thinking
  signature (header v12) names `claude-sonnet-4-6`. It also has a `progress` line, an
  `api_error` system line followed by a locally generated `<synthetic>` assistant line (not
  model output), and a `turn_duration` system line.
- Sub-agent `{info["claude_agent"]}` (Explore, `claude-haiku-4-5-20251001`, signature header v13
  naming it): every line has `isSidechain: true`, the parent's `sessionId` and `agentId`. Its
  `.meta.json` links it to the main session's `Task` tool-use id.

## `api/`: two raw API responses

- `openai-responses-reasoning.json`: one OpenAI Responses object (`{info["openai_response"]}`):
  `resp_`/`rs_`/`msg_`/`fc_` new50 ids sharing one conversation key, `created_at` equal to the
  `resp_` time, `store: true` (store byte `00`; outside Codex that says nothing about Azure), a
  reasoning summary without `encrypted_content` (the request did not `include` it), and no
  `content_filters` key (so nothing points to Azure).
- `anthropic-messages-thinking.json`: one Anthropic Messages object (`{info["anthropic_message"]}`,
  a UUIDv7 id) on `claude-opus-4-7`: a thinking block whose v12 signature names the model, a
  `toolu_01…` tool use, and first-party usage keys (`service_tier`, `cache_creation`,
  `inference_geo`).
"""


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m musetui_synth.sample [OUT_DIR]``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m musetui_synth.sample [OUT_DIR]", file=sys.stderr)
        return 2
    out = Path(args[0]) if args else DEFAULT_OUT
    info = generate(out)
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({total:,} bytes); outlier worker {info['muse_workers']['a11y_audit_outlier']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
