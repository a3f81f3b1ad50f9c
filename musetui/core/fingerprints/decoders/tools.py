"""Tool-call id classes of the other providers and servers (§8.6)."""

from __future__ import annotations

import functools
import re

from musetui.core.fingerprints import shapes
from musetui.core.fingerprints.decoders._common import (
    WINDOW_END_MS,
    WINDOW_MIN_MS,
    _iso_ms,
)
from musetui.core.fingerprints.decoders.anthropic import decode_anthropic_id
from musetui.core.fingerprints.types import Decoded, Strength, Tag

# ---------------------------------------------------------------------------------------------
# Tool-call ids (§8.6)
# ---------------------------------------------------------------------------------------------

_GEMINI_CLI_RE = re.compile(r"[A-Za-z0-9_\-.]+-(\d{13})-[0-9a-f]{6,}")


def _tool(
    s: str,
    shape: str,
    provider: str | None,
    strength: Strength,
    tag: Tag,
    meaning: str,
    host: str | None = None,
    time: float | None = None,
    extra: tuple[tuple[str, str], ...] = (),
) -> Decoded:
    """Build a ``tool-id`` Decoded for a shape decoded in code (not a row of the table)."""
    return Decoded(
        detector="tool-id",
        value=s,
        provider=provider,
        host=host,
        strength=strength,
        tag=tag,
        time=time,
        fields=(("class", shape), *extra),
        meaning=meaning,
        shape=shape,
    )


@functools.cache
def _families() -> tuple[tuple[str, ...], dict[str, tuple[shapes.Shape, ...]]]:
    """The table's tool-id rows by family prefix (``""``: rows of no family), and the prefixes."""
    by: dict[str, list[shapes.Shape]] = {}
    for row in shapes.table().of("tool-id"):
        by.setdefault(row.prefix, []).append(row)
    prefixes = tuple(p for p in by if p)
    return prefixes, {p: tuple(rows) for p, rows in by.items()}


def _anthropic_tool(s: str) -> Decoded | None:
    """A ``toolu_``/``srvtoolu_`` id as a tool-id class (its route decides the shape)."""
    d = decode_anthropic_id(s)
    if d is None or d.provider is None:
        return None
    shape = "toolu_bdrk_01" if s.startswith("toolu_bdrk_") else s.split("_01", 1)[0] + "_01"
    return _tool(s, shape, "anthropic", d.strength, d.tag, d.meaning, host=d.host)


def _gemini_cli_tool(s: str) -> Decoded | None:
    """A Gemini CLI ``<name>-<ms>-<hex>`` tool-call id, minted inside the time window."""
    m = _GEMINI_CLI_RE.fullmatch(s)
    if m is None:
        return None
    ms = int(m.group(1))
    if not WINDOW_MIN_MS <= ms < WINDOW_END_MS:
        return None
    return _tool(
        s,
        "name-ms-hex",
        "google",
        "medium",
        "source",
        f"<name>-<ms>-<hex>: synthesized by Gemini CLI at {_iso_ms(ms)}",
        time=ms / 1000.0,
        extra=(("minted", _iso_ms(ms)),),
    )


def _classify_tool_id(s: str, strong_only: bool) -> Decoded | None:
    """Classify a tool-call id; with ``strong_only`` skip the classes that need an id key.

    The shapes are rows of the id-shape table (``shapes.toml``): an id that starts with a
    family's prefix is classified by that family's rows alone. Anthropic's ids and Gemini
    CLI's carry a route or a time, and are decoded here.
    """
    if s.startswith(("toolu_", "srvtoolu_")):
        return _anthropic_tool(s)
    prefixes, rows = _families()
    family = ""
    if s.startswith(prefixes):
        family = next(p for p in prefixes if s.startswith(p))
    for row in rows.get(family, ()):
        if strong_only and row.needs_id_key:
            continue
        got = row.decode(s)
        if got is not None:
            return got
    if family or strong_only or len(s) < 22 or "-" not in s:
        return None
    return _gemini_cli_tool(s)


def classify_tool_id(s: str) -> Decoded | None:
    """Classify a tool-call id by the §8.6 table (apply to values of id-bearing keys)."""
    return _classify_tool_id(s, strong_only=False)
