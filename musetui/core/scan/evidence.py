"""Extract evidence: where the raw pass's fingerprints are in a window, located by line, zoned, timed, and named.

The earlier stages validate and observe the lines; this one turns the candidates
:func:`musetui.core.fingerprints.extract.raw_hits` finds in the same bytes into located evidence
for attribution (:func:`extract_evidence`), and names the field path of the examples kept, by
re-parsing their line (:class:`Resolver`).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Any

import orjson

from musetui.core import jsonwalk, sources
from musetui.core.fingerprints import extract
from musetui.core.fingerprints.attribution import EXAMPLES, TOL_AFTER_CREATED_S, Located
from musetui.core.model import parse_time
from musetui.core.reader import sse_payload
from musetui.core.sources.base import ZONE_MODEL
from musetui.core.sources.registry import zone_table

if TYPE_CHECKING:
    from musetui.core.scan.stages import LineProbe, Observed, Window
    from musetui.core.scan.state import ScanState

__all__ = ["Resolver", "clean", "extract_evidence", "name_fields", "raw_evidence", "walk_lines"]

#: Evidence whose field is named per window (the rest keep the raw pass's field, if any).
WINDOW_RESOLVED = 256


def extract_evidence(data: bytes, window: Window, seen: Observed, state: ScanState) -> list[Located]:
    """The fingerprints in ``window`` (whose bytes are ``data``), located: every string of an API capture, else the raw pass's hits."""
    if seen.fmt in sources.API_FORMATS:
        return walk_lines(window.lines, window.base_line, seen.times, seen.zones, state.sse, state.seen, seen.fmt)
    probe = None if seen.observe_all else seen.probe
    return raw_evidence(data, window.rel_starts, window.base_line, window.lines, seen.times, seen.zones, probe, state)


def name_fields(window: Window, seen: Observed, sse: bool, located: list[Located]) -> None:
    """Name the field paths of the first :data:`WINDOW_RESOLVED` of ``located`` that have none (the window's lines go next)."""
    resolver = Resolver(window.lines, sse, window.base_line, seen.kept)
    todo = [loc for loc in located if not loc.field]
    for loc in todo[:WINDOW_RESOLVED]:
        loc.field = resolver(loc)


def clean(line: bytes, sse: bool) -> bytes:
    line = line.strip()
    return (sse_payload(line) or b"") if sse else line


#: The field paths named lately, per kind of evidence (detector, shape): the first guesses for
#: the next of its kind (:func:`musetui.core.jsonwalk.find_unique` checks a guess exactly).
_PATHS: dict[tuple[str, str], list[jsonwalk.Steps]] = {}
_MAX_KINDS = 1024
_GUESSES = 4


class Resolver:
    """Names the field path of an artifact by re-parsing its line (cached).

    The path is :func:`musetui.core.fingerprints.extract.field_path`'s. Where the line shows
    the value can be in one place only, the paths lately named for its kind are tried first
    (:func:`musetui.core.jsonwalk.find_unique`): one lookup per member instead of a walk.
    """

    def __init__(self, lines: list[bytes], sse: bool, base_line: int = 0, parsed: dict[int, Any] | None = None) -> None:
        self.lines = lines
        self.sse = sse
        self.base_line = base_line
        self.cache: dict[int, Any] = parsed if parsed is not None else {}  # line index -> orjson's record (or None)
        self.plain: dict[int, bool] = {}  # line index -> whether it spells printable ASCII literally

    def __call__(self, loc: Located) -> str:
        idx = loc.line - 1 - self.base_line
        if idx < 0 or idx >= len(self.lines):
            return ""
        dec = loc.decoded
        key = dec.value if dec.detector.startswith("key") else None
        if not dec.value and key is None:
            return ""  # an empty value names no field (extract.field_path finds no empty needle)
        if idx not in self.cache:
            try:
                self.cache[idx] = orjson.loads(clean(self.lines[idx], self.sse))
            except orjson.JSONDecodeError:
                self.cache[idx] = None
        obj = self.cache[idx]
        if obj is None:
            return ""
        kind = (dec.detector, dec.shape)
        guesses = _PATHS.get(kind)
        if guesses is not None:
            plain = self.plain.get(idx)
            if plain is None:
                plain = self.plain[idx] = jsonwalk.spells_needles(self.lines[idx])
            if plain:
                found = jsonwalk.find_unique(obj, self.lines[idx], dec.value, key, guesses)
                if found is not None:
                    return found
        path = extract.field_path(obj, dec.value, key)
        if path is not None:
            _remember(kind, path, guesses)
        return path or ""


def _remember(kind: tuple[str, str], path: str, guesses: list[jsonwalk.Steps] | None) -> None:
    """Keep ``path`` as the first guess for ``kind`` (a few per kind, a bounded number of kinds)."""
    steps = jsonwalk.steps_of(path)
    if steps is None:
        return
    if guesses is None:
        if len(_PATHS) >= _MAX_KINDS:
            _PATHS.clear()
        _PATHS[kind] = [steps]
        return
    if steps in guesses:
        guesses.remove(steps)
    guesses.insert(0, steps)
    del guesses[_GUESSES:]


def raw_evidence(
    data: bytes,
    starts: list[int],
    base_line: int,
    lines: list[bytes],
    times: list[Any],
    zones: bytearray,
    probe: LineProbe | None,
    state: ScanState,
) -> list[Located]:
    """Locate the raw-pass hits; time-less artifacts of one shape collapse to a few examples and a count.

    With a ``probe``, the zone and time of a hit's line are read from its raw bytes (the
    line was validated but never observed). ``starts`` are relative to ``data``. On a
    model-output line, the format's zone table (:mod:`musetui.core.sources.zones`) says whether
    the hit sits in a field the serving stack writes or in quoted text.
    """
    out: list[Located] = []
    parsed_time: dict[int, float | None] = {}
    zone_of: dict[int, int] = {}
    collapsed = state.collapsed
    n_lines = len(times)
    table = zone_table(state.fmt)
    zone_at = table.zone_at if table.default != ZONE_MODEL else None  # a format without a table: lines decide
    for dec, pos, _key, value in extract.raw_hits(data, state.seen, keys=False):
        li = bisect_right(starts, pos) - 1
        if not 0 <= li < n_lines:
            continue
        zone = zone_of.get(li)
        if zone is None:
            zone = zone_of[li] = probe.zone(lines[li]) if probe is not None else zones[li]
        if (
            not zone
            and zone_at is not None
            and (dec.provider or dec.host or dec.via or dec.time is not None or dec.problems)
        ):
            # (a hit that names no provider or host, and carries no time, decides nothing: its line's zone will do)
            zone = zone_at(lines[li], pos - starts[li], dec.detector == "key")
        if dec.time is None and not dec.problems:
            key = (dec.detector, dec.shape, dec.provider, zone)
            group = collapsed.get(key)
            if group is None:
                group = collapsed[key] = []
            if len(group) >= EXAMPLES:
                group[-1].count += 1
                continue
            if value is not None:
                text = value.decode("ascii", "replace")
                if text != dec.value:
                    dec = dec.with_value(text)
            loc = Located(dec, base_line + li + 1, "", zone, None)
            group.append(loc)
            out.append(loc)
            continue
        if li not in parsed_time:
            raw = times[li]
            if raw is None and probe is not None:
                raw = probe.time(lines[li])
            parsed_time[li] = parse_time(raw)
        out.append(Located(dec, base_line + li + 1, "", zone, parsed_time[li]))
    return out


def walk_lines(
    lines: list[bytes],
    base_line: int,
    times: list[Any],
    zones: bytearray,
    sse: bool,
    seen_b: set[bytes],
    fmt: str | None = None,
) -> list[Located]:
    """Full walk of every record (API captures are small): every string through the decoders."""
    out: list[Located] = []
    zone_of = zone_table(fmt).zone_of
    for i, line in enumerate(lines):
        if times[i] is None and not line.strip():
            continue
        try:
            obj = orjson.loads(clean(line, sse))
        except orjson.JSONDecodeError:
            continue
        t = parse_time(times[i])
        for dec, _key, path in sources.walk_record(obj):
            tag = dec.value.encode("utf-8", "replace")
            if dec.value and tag in seen_b:
                continue
            seen_b.add(tag)
            out.append(
                Located(
                    dec,
                    base_line + i + 1,
                    path,
                    zones[i] or zone_of(path, dec.detector.startswith("key")),
                    t,
                    after_tol=TOL_AFTER_CREATED_S,
                )
            )
    return out
