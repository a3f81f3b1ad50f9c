"""A real Claude Code session (the bundled sample) that switches provider mid-way, for the unit and Pilot tests."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from musetui_synth import mint

CLAUDE = "claude/projects/-home-dev-site/4e710f04-7f87-4b76-b9ba-ab287a3112ab.jsonl"
#: 2025-12-13T10:00:00Z: when the third appended line says it was recorded.
BACK = datetime(2025, 12, 13, 10, tzinfo=UTC).timestamp()


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _dump(records: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def claude_switched(sample_dir: Path, tmp_path: Path) -> Path:
    """The real Claude Code sample session, with four lines appended that an OpenAI Responses stack served.

    Still declaring Claude: lines 19-21 carry Responses ids, a ``gpt_responses_v1`` Fernet token
    and a ``call_`` + 24 id; line 21 (and the id it carries) is recorded 262 days before line 20.
    """
    src = sample_dir / CLAUDE
    data = src.read_bytes()
    assert data.count(b"\n") == 18
    last = orjson.loads(data.splitlines()[-1])
    base = {k: last[k] for k in ("cwd", "sessionId", "version", "gitBranch", "slug", "userType")}
    rng = random.Random(7)
    conv = mint.new_openai_conversation(rng, store=True)
    t0 = datetime(2026, 9, 1, 22, 45, tzinfo=UTC).timestamp()

    def assistant(t: float, content: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
        message = {"model": "claude-sonnet-4-6", "id": conv.item_id(rng, prefix, t), "type": "message",
                   "role": "assistant", "content": content}  # fmt: skip
        return {**base, "parentUuid": None, "isSidechain": False, "type": "assistant", "uuid": mint.uuid4(rng),
                "timestamp": _iso(t), "message": message}  # fmt: skip

    sig = mint.muse_gpt_responses_signature(rng, int(t0))
    appended = [
        assistant(t0, [{"type": "thinking", "thinking": "Checking the build.", "signature": sig}], "rs"),
        assistant(t0 + 3, [{"type": "tool_use", "id": mint.openai_call_id(rng), "name": "Bash", "input": {}}], "fc"),
        assistant(BACK, [{"type": "text", "text": "Done."}], "msg"),
        {**base, "parentUuid": None, "isSidechain": False, "type": "user", "uuid": mint.uuid4(rng),
         "timestamp": _iso(t0 + 9), "message": {"role": "user", "content": "thanks"}},
    ]  # fmt: skip
    out = tmp_path / "claude" / "projects" / "-home-dev-site" / src.name
    out.parent.mkdir(parents=True)
    out.write_bytes(data + _dump(appended))
    return out
