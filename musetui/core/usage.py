"""Token usage as the views print it (the record's ``usage``: ``{input, output, cached, reasoning}``)."""

from __future__ import annotations

from collections.abc import Mapping


def _n(value: int | None) -> str:
    return f"{value:,}" if value is not None else "?"


def usage_text(usage: Mapping[str, int | None] | None) -> str | None:
    """``12,345 in (8,000 cached) · 678 out (120 reasoning)``; unknown counts read ``?``; None when nothing is recorded."""
    if usage is None or all(v is None for v in usage.values()):
        return None
    text = f"{_n(usage.get('input'))} in"
    if usage.get("cached") is not None:
        text += f" ({_n(usage.get('cached'))} cached)"
    text += f" · {_n(usage.get('output'))} out"
    if usage.get("reasoning") is not None:
        text += f" ({_n(usage.get('reasoning'))} reasoning)"
    return text


def compact(n: int | None) -> str:
    """A count in at most five characters: ``950``, ``12.3k``, ``4.1M``; ``-`` when unknown."""
    if n is None:
        return "-"
    if n < 1000:
        return str(n)
    if n < 999_950:
        return f"{n / 1000:.1f}k" if n < 99_950 else f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M" if n < 99_950_000 else f"{n // 1_000_000}M"


def total(usage: Mapping[str, int | None] | None) -> int | None:
    """Input plus output tokens (the tree's one number), or None when neither is recorded."""
    if usage is None:
        return None
    parts = [v for v in (usage.get("input"), usage.get("output")) if v is not None]
    return sum(parts) if parts else None
