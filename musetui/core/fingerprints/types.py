"""The result type every decoder returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from musetui.core._pickling import reduce_by_fields

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


def _slot_setters() -> list[Callable[[Decoded, object], None]]:
    names = (
        "detector",
        "value",
        "provider",
        "host",
        "strength",
        "tag",
        "time",
        "fields",
        "meaning",
        "problems",
        "shape",
        "via",
    )
    if tuple(Decoded.__slots__) != names:
        raise TypeError("Decoded's fields changed: update _init")
    return [Decoded.__dict__[name].__set__ for name in names]


_d, _v, _p, _h, _s, _t, _ti, _f, _m, _pr, _sh, _vi = _slot_setters()


def _init(
    self: Decoded,
    detector: str,
    value: str,
    provider: str | None,
    host: str | None,
    strength: Strength,
    tag: Tag,
    time: float | None = None,
    fields: tuple[tuple[str, str], ...] = (),
    meaning: str = "",
    problems: tuple[str, ...] = (),
    shape: str = "",
    via: str | None = None,
) -> None:
    """The dataclass ``__init__``, storing through the slot descriptors.

    A frozen dataclass's own ``__init__`` calls ``object.__setattr__`` per field, about twice
    the cost, and every decoder builds one per artifact (callgrind, bar150[::40] in-process:
    -2.2% instructions for the whole scan). The object stays frozen: assignment still raises.
    """
    _d(self, detector)
    _v(self, value)
    _p(self, provider)
    _h(self, host)
    _s(self, strength)
    _t(self, tag)
    _ti(self, time)
    _f(self, fields)
    _m(self, meaning)
    _pr(self, problems)
    _sh(self, shape)
    _vi(self, via)


setattr(Decoded, "__init__", _init)  # noqa: B010 (type checkers keep the dataclass's signature)
