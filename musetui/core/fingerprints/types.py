"""The result type every decoder returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

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


_NAMES = (
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
if tuple(Decoded.__slots__) != _NAMES:
    raise TypeError("Decoded's fields changed: update _new")


class _Unfrozen:
    """:class:`Decoded`'s layout (the same slots) without its frozen ``__setattr__``."""

    __slots__ = _NAMES


def _new(
    cls: type[Decoded],
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
) -> Decoded:
    """The dataclass's construction, filled in as an :class:`_Unfrozen` (plain slot stores) that then becomes ``cls``.

    A frozen dataclass's own ``__init__`` calls ``object.__setattr__`` per field, and storing
    through the slot descriptors from an ``__init__`` still costs a call per field; a store to a
    slot of a class without ``__setattr__`` costs next to nothing, and the two classes share one
    layout, so the object can change class once filled. Every decoder builds one per artifact
    (callgrind: 10.1 k instructions a Decoded through the descriptors, 3.9 k this way). The
    object is a plain Decoded from then on: frozen (assignment raises), equal, hashed and
    pickled as before. ``Decoded`` keeps ``object.__init__`` (which accepts the arguments
    ``__new__`` took).
    """
    self: Any = _Unfrozen()
    self.detector = detector
    self.value = value
    self.provider = provider
    self.host = host
    self.strength = strength
    self.tag = tag
    self.time = time
    self.fields = fields
    self.meaning = meaning
    self.problems = problems
    self.shape = shape
    self.via = via
    self.__class__ = cls
    return self  # type: ignore[no-any-return]


delattr(Decoded, "__init__")  # (type checkers keep the dataclass's signature)
setattr(Decoded, "__new__", staticmethod(_new))  # noqa: B010
