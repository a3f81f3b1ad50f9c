"""Format adapters and content-based format detection (the registry: :mod:`.registry`)."""

from __future__ import annotations

from typing import Any

from musetui.core.fingerprints.types import Decoded
from musetui.core.sources import http_capture
from musetui.core.sources.registry import API_FORMATS, build_items, observer_for, probe_for, sniff

__all__ = ["API_FORMATS", "build_items", "observer_for", "probe_for", "sniff", "walk_record"]


def walk_record(obj: Any) -> list[tuple[Decoded, str | None, str]]:
    """Every artifact of one API record: the decoders' walk, plus a router's named upstream."""
    return http_capture.walk_body(obj)
