"""Sessions that each raise one flag, made from the bundled sample's outlier by a small, documented edit."""

from __future__ import annotations

import json
import re
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts"
#: The sample's muse-special session (openai on azure, among Avocado siblings: the outlier).
OUTLIER = (
    SAMPLE
    / "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/subagents/01a05efe-03bb-72c8-854a-4c1c088cc3b9/session.jsonl"
)
CLAUDE = SAMPLE / "claude/projects/-home-dev-site/4e710f04-7f87-4b76-b9ba-ab287a3112ab.jsonl"
#: The flags a session here can raise by itself (``outlier`` needs the sample's whole tree).
FLAGS = ("declared-mismatch", "time-mismatch", "imitation-id", "mixed-providers", "truncated-blob")


def _lines() -> list[str]:
    return OUTLIER.read_text(encoding="utf-8").splitlines()


def _declared_avocado() -> list[str]:
    """The same OpenAI-stack artifacts, declared as Meta's avocado-1.3."""
    text = OUTLIER.read_text(encoding="utf-8")
    text = text.replace('"azure/muse-special"', '"meta/avocado-1.3"').replace(
        '"provider_id":"azure"', '"provider_id":"meta"'
    )
    return text.replace('"model_id":"muse-special"', '"model_id":"avocado-1.3"').splitlines()


def _line_an_hour_early() -> list[str]:
    """Line 4 (a reasoning item) recorded an hour before the ids and the Fernet token it holds were minted."""
    lines = _lines()
    rec = json.loads(lines[3])
    rec["recorded_at"] -= 3600 * 1_000_000
    lines[3] = json.dumps(rec, separators=(",", ":"))
    return lines


def _id_from_2037() -> list[str]:
    """The reasoning id's time bytes set to 2037 (after OpenAI's plausible window): an imitation."""
    lines = _lines()
    lines[3] = lines[3].replace("rs_0fb0962a440df430006a974b47", "rs_0fb0962a440df430007f000000")
    return lines


def _anthropic_line() -> list[str]:
    """One more reasoning item whose id and signature are Anthropic's (from the sample's Claude session)."""
    lines = _lines()
    claude = CLAUDE.read_text(encoding="utf-8")
    signature = re.search(r'"signature":"([^"]{200,})"', claude)
    msg = re.search(r'"id":"(msg_01[A-Za-z0-9]{20,})"', claude)
    assert signature and msg
    rec = json.loads(lines[3])
    rec["payload"]["event"].update(message_id=msg.group(1), signature=signature.group(1))
    return [*lines, json.dumps(rec, separators=(",", ":"))]


def _cut_token() -> list[str]:
    """The first Fernet token with five characters cut from its middle."""
    lines = _lines()
    rec = json.loads(lines[3])
    sig = rec["payload"]["event"]["signature"]
    rec["payload"]["event"]["signature"] = sig[:200] + sig[205:]
    lines[3] = json.dumps(rec, separators=(",", ":"))
    return lines


MAKERS = {
    "declared-mismatch": _declared_avocado,
    "time-mismatch": _line_an_hour_early,
    "imitation-id": _id_from_2037,
    "mixed-providers": _anthropic_line,
    "truncated-blob": _cut_token,
}


def flag_root(base: Path, flag: str) -> Path:
    """A root holding one Muse session that raises ``flag`` (and its ``session.jsonl``'s directory)."""
    folder = base / flag / "sessions" / "01a05efe-03bb-72c8-854a-4c1c088cc3b9"
    folder.mkdir(parents=True)
    (folder / "session.jsonl").write_text("\n".join(MAKERS[flag]()) + "\n", encoding="utf-8")
    return base / flag
