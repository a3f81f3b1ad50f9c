"""The id-shape table (``shapes.toml`` next to this file): opaque id shapes and what each one means.

The table is data; the decoders read it (:func:`table`) and stay the only code that classifies.
It is read once per process, on first use (never at import time), and checked as it is read:
an unknown key, a provider, host, strength or tag outside the model's names, or a pattern that
does not compile is a :class:`ShapeTableError`. Plain dataclasses, not pydantic: the scan path
reads it, and pydantic's import costs more than the file.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from musetui.core.fingerprints.types import Decoded, Strength, Tag
from musetui.core.model import HOSTS, PROVIDERS

__all__ = ["BUILTIN_PATH", "DETECTORS", "Shape", "ShapeTable", "ShapeTableError", "table"]

#: The built-in table shipped as package data.
BUILTIN_PATH = Path(__file__).with_name("shapes.toml")
#: The classifiers that read the table.
DETECTORS = ("chatcmpl-id", "system-fingerprint", "tool-id")
_STRENGTHS = ("strong", "medium", "weak")
_TAGS = ("verified", "source", "guess")
_ROW_KEYS = frozenset(
    {
        "detector",
        "shape",
        "example",
        "pattern",
        "label",
        "prefix",
        "needs_id_key",
        "provider",
        "host",
        "strength",
        "tag",
        "meaning",
    }
)


class ShapeTableError(ValueError):
    """The id-shape table could not be read or one of its rows is invalid."""


@dataclass(frozen=True, slots=True)
class Shape:
    """One ``[[shape]]`` row, its pattern compiled."""

    detector: str
    shape: str
    pattern: re.Pattern[str]
    first_field: tuple[str, str]
    provider: str | None
    host: str | None
    strength: Strength
    tag: Tag
    meaning: str
    prefix: str = ""
    needs_id_key: bool = False
    groups: tuple[str, ...] = field(default=())
    example: str = ""

    def decode(self, s: str) -> Decoded | None:
        """The row's :class:`Decoded` for ``s``, or None when ``s`` is not of this shape."""
        m = self.pattern.fullmatch(s)
        if m is None:
            return None
        fields = (self.first_field, *((g, m.group(g)) for g in self.groups)) if self.groups else (self.first_field,)
        return Decoded(
            self.detector, s, self.provider, self.host, self.strength, self.tag,
            None, fields, self.meaning, (), self.shape,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class ShapeTable:
    """The rows of each detector, in file order."""

    rows: Mapping[str, tuple[Shape, ...]]

    def of(self, detector: str) -> tuple[Shape, ...]:
        """The rows a detector reads, first match wins."""
        return self.rows.get(detector, ())


def _text(row: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    v = row.get(key, default)
    if not isinstance(v, str) or (default is None and not v.strip()):
        raise ShapeTableError(f"{where}: {key} must be a non-empty string")
    return v


def _choice(row: Mapping[str, Any], key: str, names: tuple[str, ...], where: str, optional: bool) -> Any:
    v = row.get(key)
    if v is None and optional:
        return None
    if v not in names:
        raise ShapeTableError(f"{where}: {key} {v!r} is not one of {', '.join(names)}")
    return v


def _shape(row: Mapping[str, Any], first_fields: Mapping[str, str], n: int) -> Shape:
    """One checked row."""
    where = f"{BUILTIN_PATH.name} [[shape]] #{n}"
    unknown = set(row) - _ROW_KEYS
    if unknown:
        raise ShapeTableError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    detector = _choice(row, "detector", DETECTORS, where, optional=False)
    name = _text(row, "shape", where)
    try:
        pattern = re.compile(_text(row, "pattern", where))
    except re.error as e:
        raise ShapeTableError(f"{where}: pattern does not compile: {e}") from None
    needs_id_key = row.get("needs_id_key", False)
    prefix = _text(row, "prefix", where, default="")
    if not isinstance(needs_id_key, bool):
        raise ShapeTableError(f"{where}: needs_id_key must be true or false")
    if detector != "tool-id" and (prefix or needs_id_key):
        raise ShapeTableError(f"{where}: prefix and needs_id_key are for tool-id rows")
    return Shape(
        detector=detector,
        shape=name,
        pattern=pattern,
        first_field=(first_fields[detector], _text(row, "label", where, default=name)),
        provider=_choice(row, "provider", PROVIDERS, where, optional=True),
        host=_choice(row, "host", HOSTS, where, optional=True),
        strength=_choice(row, "strength", _STRENGTHS, where, optional=False),
        tag=_choice(row, "tag", _TAGS, where, optional=False),
        meaning=_text(row, "meaning", where),
        prefix=prefix,
        needs_id_key=needs_id_key,
        groups=tuple(pattern.groupindex),
        example=_text(row, "example", where),
    )


def parse(data: Mapping[str, Any]) -> ShapeTable:
    """Check a parsed ``shapes.toml`` and build its table."""
    first = data.get("first_field")
    if (
        not isinstance(first, dict)
        or set(first) != set(DETECTORS)
        or not all(isinstance(v, str) for v in first.values())
    ):
        raise ShapeTableError(f"{BUILTIN_PATH.name}: [first_field] must name the first field of {', '.join(DETECTORS)}")
    unknown = set(data) - {"first_field", "shape"}
    if unknown:
        raise ShapeTableError(f"{BUILTIN_PATH.name}: unknown table(s) {', '.join(sorted(unknown))}")
    rows: dict[str, list[Shape]] = {d: [] for d in DETECTORS}
    for n, row in enumerate(data.get("shape", []), 1):
        if not isinstance(row, dict):
            raise ShapeTableError(f"{BUILTIN_PATH.name} [[shape]] #{n}: not a table")
        got = _shape(row, first, n)
        rows[got.detector].append(got)
    return ShapeTable({d: tuple(r) for d, r in rows.items()})


@functools.cache
def table() -> ShapeTable:
    """The built-in table, read and checked on first use."""
    try:
        with BUILTIN_PATH.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ShapeTableError(f"{BUILTIN_PATH}: {e}") from None
    return parse(data)
