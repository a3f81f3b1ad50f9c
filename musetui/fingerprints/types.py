"""The result type every decoder returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from musetui._pickling import reduce_by_fields

Strength = Literal["strong", "medium", "weak"]
Tag = Literal["verified", "source", "guess"]


@dataclass(frozen=True, slots=True)
class Decoded:
    """A string recognised as a provider artifact, with what it decodes to.

    Attributes:
        detector: stable detector id, e.g. ``openai-item-id``, ``fernet``, ``tool-id``.
        value: the exact string that was decoded.
        provider: the provider family it points to (``openai`` …), or None when it
            points to no provider (e.g. a uuid4-hex ``call_`` id: self-hosted).
        host: ``azure`` / ``bedrock`` / ``vertex`` / ``fireworks`` when the artifact alone shows it.
        strength: how much the artifact weighs in attribution.
        tag: FINGERPRINTS.md's confidence tag for the rule that fired.
        time: embedded unix seconds, if the artifact carries a time.
        fields: decoded fields for display (layout, marker, store byte …), in display order.
        meaning: one human sentence: what this artifact is.
        problems: reasons it is not genuine or not whole, e.g. ``implausible-time``,
            ``bad-marker``, ``bad-store-byte``, ``truncated``, ``bad-structure``.
        shape: a short class name for the id shape (``call_+24``, ``new50`` …).
        via: the router (``openrouter`` …) the artifact shows the response passed through.
    """

    __reduce__ = reduce_by_fields

    detector: str
    value: str
    provider: str | None
    host: str | None
    strength: Strength
    tag: Tag
    time: float | None = None
    fields: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    meaning: str = ""
    problems: tuple[str, ...] = field(default_factory=tuple)
    shape: str = ""
    via: str | None = None

    def with_value(self, value: str) -> Decoded:
        """This decode for another value of the same shape (``dataclasses.replace``, without its cost)."""
        return Decoded(
            self.detector, value, self.provider, self.host, self.strength, self.tag,
            self.time, self.fields, self.meaning, self.problems, self.shape, self.via,
        )  # fmt: skip

    @property
    def genuine(self) -> bool:
        """True when no check failed (a truncated blob still counts as genuine framing)."""
        problems = self.problems
        return not problems or all(p == "truncated" for p in problems)
