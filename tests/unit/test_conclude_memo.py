"""What concluding a session remembers per process gives what the plain steps give.

:func:`attribution.attribute` remembers the verdict of a session with no located artifact per
(format, declared provider, declared model, catalogue), and :func:`verdict.declared_of`
remembers :func:`verdict.declared_family` per (declared provider, declared model,
catalogue). Each is checked against the plain path over a variety of declarations, in an
order where a memo keyed on less would hand one session's verdict to another.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from musetui.core.fingerprints import attribution, verdict
from musetui.core.model import SessionSummary
from musetui.core.reasons import MixedProviders
from musetui.core.scan.conclude import lookup as scan_lookup
from musetui.core.sources.registry import NAMES

PROVIDERS = (None, "", "openai", "OpenAI", "azure", "bedrock", "vertex", "anthropic", "meta", "groq", "unknown", "acme")
MODELS = (
    None,
    "",
    "gpt-5.5",
    "azure/gpt-4o",
    "openai/gpt-5.3-codex",
    "claude-sonnet-4-6",
    "anthropic.claude-3-haiku",
    "avocado-1.3",
    "llama-3.3-70b",
    "no-such-model",
)
MODELS_SEEN: tuple[dict[str, int], ...] = ({}, {"claude-sonnet-4-6": 2}, {"gpt-5.5": 1, "other": 3})


def _no_catalogue(_model: str) -> Any:
    return None


def _summaries() -> list[SessionSummary]:
    out = []
    for fmt, dp, dm, seen in itertools.product((*NAMES, "bedrock-converse"), PROVIDERS, MODELS, MODELS_SEEN):
        s = SessionSummary("p", "/x/p", "/x", fmt, "rule", declared_provider=dp, declared_model=dm)
        s.models = dict(seen)
        out.append(s)
    random.Random(7).shuffle(out)
    return out


def test_bare_verdict_is_the_plain_one_for_every_declaration() -> None:
    attribution._BARE.clear()
    verdict._DECLARED.clear()
    lookups = (scan_lookup(), _no_catalogue)
    summaries = _summaries()
    for _ in range(2):  # the second pass reads the memo
        for k, s in enumerate(summaries):
            lk = lookups[k % 2]
            got = attribution.attribute(s, [], lk)
            assert got == attribution._attribute(s, [], lk, None), (s.format, s.declared_provider, s.declared_model)
    assert attribution._BARE, "the memo is used"
    assert all(k[0] != "bedrock-converse" for k in attribution._BARE), "a verdict with evidence is never remembered"


def test_bare_verdicts_do_not_share_their_lists() -> None:
    attribution._BARE.clear()
    s = SessionSummary("p", "/x/p", "/x", "muse", "rule", declared_provider="meta", declared_model="avocado-1.3")
    attribution.attribute(s, [], scan_lookup())  # (remembered)
    first = attribution.attribute(s, [], scan_lookup())
    first.flags.append("outlier")
    first.evidence.append(attribution._placeholder)
    first.reasons.append(MixedProviders(("a", "b")))
    again = attribution.attribute(s, [], scan_lookup())
    assert again is not first and (again.flags, again.evidence, again.reasons) == ([], [], [])


def test_declared_of_is_declared_family() -> None:
    verdict._DECLARED.clear()
    lookups = (scan_lookup(), _no_catalogue)
    for _ in range(2):
        for k, s in enumerate(_summaries()[:600]):
            lk = lookups[k % 2]
            assert verdict.declared_of(s, lk) == verdict.declared_family(s, lk)


def test_memos_are_bounded() -> None:
    attribution._BARE.clear()
    verdict._DECLARED.clear()
    for i in range(verdict.MEMO_MAX + 10):
        s = SessionSummary("p", "/x/p", "/x", "muse", "rule", declared_provider="meta", declared_model=f"m{i}")
        attribution.attribute(s, [], _no_catalogue)
    assert len(attribution._BARE) == len(verdict._DECLARED) == verdict.MEMO_MAX
    s = SessionSummary("p", "/x/p", "/x", "muse", "rule", declared_provider="meta", declared_model="past")
    assert attribution.attribute(s, [], _no_catalogue) == attribution._attribute(s, [], _no_catalogue, None)
