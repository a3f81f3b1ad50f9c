"""Why a session carries each flag: the facts, found once by the core, and the one sentence every view prints.

Attribution and the fleet pass record a reason beside every flag they raise. The app's
evidence pane, ``y``, ``show``, ``report``, ``scan --explain`` and the JSON ``detail`` of an
outlier all print :attr:`text`, so the evidence a reader copies is the evidence on screen.
Headless: nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from musetui.core._pickling import reduce_by_fields
from musetui.core.model import fmt_gap


@dataclass(frozen=True, slots=True)
class Outlier:
    """The session's provider differs from its siblings' (``scope="siblings"``) or its fleet's majority."""

    __reduce__ = reduce_by_fields
    flag: ClassVar[str] = "outlier"

    provider: str
    #: The provider the others share, how many of them share it, and how many were compared.
    majority: str
    n: int
    total: int
    scope: Literal["siblings", "fleet"]
    #: Siblings: the parent session's id. Fleet: the format of the sessions compared.
    group: str
    #: The scan root the comparison was made under ("this root" of the fleet's sentence).
    root: str = ""

    @property
    def text(self) -> str:
        """The reason, in one sentence."""
        if self.scope == "siblings":
            return (
                f"provider {self.provider} differs from {self.n} of {self.total} sibling sessions "
                f"({self.majority}) under parent {self.group}"
            )
        return (
            f"provider {self.provider} differs from the fleet majority: {self.n} of {self.total} "
            f"{self.group} sessions under this root are {self.majority}"
        )


@dataclass(frozen=True, slots=True)
class DeclaredMismatch:
    """The evidence contradicts the declaration: by provider, by Codex's store byte, or by a signature's model."""

    __reduce__ = reduce_by_fields
    flag: ClassVar[str] = "declared-mismatch"

    basis: Literal["artifacts", "store-byte-00", "store-byte-01", "signature-model"]
    #: What the transcript declares (``azure muse-special``, or its models).
    declared: str
    #: artifacts: the declared provider, then the provider the artifacts name; signature-model:
    #: the model the signature names. Store bytes: the number of ids carrying the byte.
    declared_provider: str = ""
    found: str = ""
    count: int = 0

    @property
    def text(self) -> str:
        """The reason, in one sentence."""
        if self.basis == "artifacts":
            return f"declared {self.declared} ({self.declared_provider}) but artifacts say {self.found}"
        if self.basis == "store-byte-00":
            return f"Codex sends store:true only to Azure; {self.count} ids carry store byte 00 (azure hint, guess)"
        if self.basis == "store-byte-01":
            return f"declared azure but {self.count} ids carry store byte 01 (store:false: not Codex-on-Azure)"
        return f"thinking signature names {self.found}, transcript declares {self.declared}"


@dataclass(frozen=True, slots=True)
class MixedProviders:
    """Strong evidence of two or more providers in one session's model output."""

    __reduce__ = reduce_by_fields
    flag: ClassVar[str] = "mixed-providers"

    providers: tuple[str, ...]

    @property
    def text(self) -> str:
        """The reason, in one sentence."""
        return "strong evidence of " + " and ".join(self.providers)


#: What each anomaly flag counts, in words: for one artifact, and for several.
ANOMALY_WORDS = {
    "time-mismatch": (
        "decoded time disagrees with its line's recorded time",
        "decoded times disagree with their lines' recorded times",
    ),
    "imitation-id": (
        "artifact fails its own checks (impossible time, marker or store byte)",
        "artifacts fail their own checks (impossible time, marker or store byte)",
    ),
    "truncated-blob": ("token or signature is cut or broken", "tokens or signatures are cut or broken"),
}


@dataclass(frozen=True, slots=True)
class Anomaly:
    """Artifacts that fail a check of their own: a time off its line, an impossible id, a broken blob."""

    __reduce__ = reduce_by_fields

    flag: Literal["time-mismatch", "imitation-id", "truncated-blob"]
    count: int
    #: The first such artifact: its line, detector and value (cut to 40 characters) ...
    line: int
    detector: str
    value: str
    #: ... and, when it holds a time, that time and its line's recorded time (unix seconds).
    minted: float | None = None
    recorded: float | None = None

    @property
    def text(self) -> str:
        """The reason, in one sentence."""
        one, many = ANOMALY_WORDS[self.flag]
        first = f"{self.count} {one if self.count == 1 else many}; the first is the {self.detector} {self.value} at line {self.line}"
        if self.minted is not None and self.recorded is not None:
            first += f", minted {fmt_gap(self.minted, self.recorded)} from its line"
        return first


@dataclass(frozen=True, slots=True)
class ProviderSwitch:
    """The session's segments change provider (or host) at ``line``, and strong evidence backs the change."""

    __reduce__ = reduce_by_fields
    flag: ClassVar[str] = "provider-switch"

    line: int
    #: The provider (``openai/azure``) of the segment that ends, then of the one that starts at ``line``.
    before: str
    after: str
    #: The lines of the segment that ends (for the sentence).
    before_first: int = 0
    before_last: int = 0

    @property
    def text(self) -> str:
        """The reason, in one sentence."""
        return (
            f"the provider changes at line {self.line}: {self.before} for lines {self.before_first}–{self.before_last}, "
            f"then {self.after} from line {self.line}"
        )


@dataclass(frozen=True, slots=True)
class SegmentMismatch:
    """One segment's evidence contradicts the declaration."""

    __reduce__ = reduce_by_fields
    flag: ClassVar[str] = "declared-mismatch"

    first_line: int
    last_line: int
    declared: str
    declared_provider: str
    found: str

    @property
    def text(self) -> str:
        """The reason, in one sentence."""
        return (
            f"lines {self.first_line}–{self.last_line}: declared {self.declared} ({self.declared_provider}) "
            f"but their artifacts say {self.found}"
        )


@dataclass(frozen=True, slots=True)
class TimeBackwards:
    """Recorded line times run backwards by more than the tolerance."""

    __reduce__ = reduce_by_fields
    flag: ClassVar[str] = "time-mismatch"

    #: The line with the later time, then the line after it whose time is earlier, and both times.
    line: int
    later_line: int
    time: float
    later_time: float
    count: int = 1

    @property
    def text(self) -> str:
        """The reason, in one sentence."""
        more = f" ({self.count} such steps)" if self.count > 1 else ""
        return (
            f"recorded times run backwards: line {self.later_line} is recorded "
            f"{fmt_gap(self.later_time, self.time)} from line {self.line}{more}"
        )


Reason = Outlier | DeclaredMismatch | MixedProviders | Anomaly | ProviderSwitch | SegmentMismatch | TimeBackwards


def short_value(value: str, limit: int = 40) -> str:
    """A value cut in the middle to ``limit`` characters (``gAAAAABq…Qk=``), for a reason's sentence."""
    if len(value) <= limit:
        return value
    head = limit * 2 // 3
    return value[:head] + "…" + value[-(limit - head - 1) :]


#: What each flag means, for a flag whose reason was not kept (a summary read without its evidence).
MEANINGS = {
    "declared-mismatch": "the evidence contradicts what the transcript declares",
    "time-mismatch": "a decoded time disagrees with the line's recorded time",
    "imitation-id": "an id shaped like a provider's decodes to an impossible time",
    "mixed-providers": "strong evidence of two providers in one session",
    "truncated-blob": "a token or signature has a broken structure",
    "provider-switch": "the provider (or host) changes between the session's segments, and strong evidence backs it",
    "outlier": "the verdict differs from the session's siblings or the fleet majority",
}


def flag_sentences(flags: Sequence[str], reasons: Sequence[Reason]) -> list[tuple[str, str]]:
    """Each flag with the sentence of each of its reasons, in the flags' order: what every view prints.

    A flag with no recorded reason gets its general meaning, so no view is ever silent about one.
    """
    out: list[tuple[str, str]] = []
    for flag in flags:
        mine = [r.text for r in reasons if r.flag == flag]
        out.extend((flag, t) for t in mine or [MEANINGS.get(flag, "no reason recorded")])
    return out
