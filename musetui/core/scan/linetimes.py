"""Line times: recorded times that run backwards by more than the tolerance, over every record of a file.

A record's recorded time is what its observer read, or, for a record the scan did not
observe, what the format's probe reads from its bytes (the value after the format's time
key). Every record's time counts, window by window; what carries over between windows (and
over an append) is the latest time so far and the first backward step (:class:`Clock`).

Most windows are in order, and that is checked without Python work per line: the bytes of
each line's time value are cut out by C loops (``map`` over the window's lines), and when all
have one shape (ISO-8601 UTC times ending in ``Z`` with the same digits, or integers of one
width) their byte order is their time order, so one comparison of the list with its sorted
copy decides. Observed times are checked to be the values cut out. Any other window is read
line by line, each time parsed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import add, is_not
from typing import Any

from musetui.core.fingerprints.attribution import TOL_BEFORE_S
from musetui.core.model import parse_time
from musetui.core.reasons import TimeBackwards
from musetui.core.scan.stages import LineProbe

__all__ = ["Clock", "reason", "track"]

_DIGITS = b"0123456789"
#: The first time value of a window, with the byte after it: an ISO-8601 UTC time, or an integer.
_ISO_Z = re.compile(rb'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z"')
_INT = re.compile(rb"[1-9]\d{0,19}[,}\s]")


@dataclass(slots=True)
class Clock:
    """What the check carries from window to window: the latest time so far, and the backward steps.

    Attributes:
        top_line: the line of the latest time so far (0: none yet).
        top: that time (unix seconds).
        back: the first backward step beyond the tolerance, ``(top_line, line, top, time)``, or None.
        steps: how many backward steps beyond the tolerance.
    """

    top_line: int = 0
    top: float = 0.0
    back: tuple[int, int, float, float] | None = None
    steps: int = 0

    def see(self, line: int, t: float) -> None:
        """One record's time, in line order."""
        if not self.top_line or t > self.top:
            self.top_line, self.top = line, t
        elif self.top - t > TOL_BEFORE_S:
            self.steps += 1
            if self.back is None:
                self.back = (self.top_line, line, self.top, t)


def reason(clock: Clock) -> TimeBackwards | None:
    """The ``time-mismatch`` reason of a file's line times (None: they never run backwards beyond the tolerance)."""
    return None if clock.back is None else TimeBackwards(*clock.back, count=clock.steps)


def track(
    clock: Clock,
    lines: Sequence[bytes],
    records: Sequence[int],
    times: Sequence[Any],
    probe: LineProbe,
    observe_all: bool,
    base_line: int,
) -> None:
    """Move ``clock`` over one window: ``lines`` (the first is line ``base_line + 1``), its ``records`` and observed ``times``."""
    if observe_all:
        if _observed_in_order(clock, times, base_line):
            return
    elif probe.time_key and _cut_in_order(clock, lines, times, probe.time_key, base_line):
        return
    probe_time = probe.time
    for i in records:
        raw = times[i]
        if raw is None and not observe_all:
            raw = probe_time(lines[i])
        t = parse_time(raw)
        if t is not None:
            clock.see(base_line + i + 1, t)


def _observed_in_order(clock: Clock, times: Sequence[Any], base_line: int) -> bool:
    """Every record was observed: whether its times are plainly in order (``clock`` then moved); False: not decided."""
    raws = [t for t in times if t is not None]
    if not raws:
        return True
    kinds = set(map(type, raws))
    if kinds == {str}:
        if len(set(map(len, raws))) != 1:
            return False
    elif not kinds <= {int, float} or _scale(raws[0]) != _scale(raws[-1]):
        return False  # (numbers of one scale: seconds, ms, µs or ns, as parse_time reads them)
    if sorted(raws) != raws:
        return False
    return _moved(clock, parse_time(raws[0]), parse_time(raws[-1]), base_line + _last_index(times) + 1)


def _cut_in_order(clock: Clock, lines: Sequence[bytes], times: Sequence[Any], key: bytes, base_line: int) -> bool:
    """Whether every line's time, cut from its bytes after ``key``, is plainly in order (``clock`` then moved).

    False: not decided (values of another shape, out of order, or an observed time that is
    not the value cut from its line).
    """
    pos = list(map(bytes.find, lines, repeat(key)))
    has = list(map((-1).__ne__, pos))
    found = list(compress(range(len(pos)), has))
    if not found:
        return not any(t is not None for t in times)
    i0 = found[0]
    lk = len(key)
    m = (_ISO_Z if key.endswith(b'"') else _INT).match(lines[i0], pos[i0] + lk)
    if m is None:
        return False
    first = m.group()
    width = len(first)  # (the value and the byte after it)
    starts = list(map(add, compress(pos, has), repeat(lk)))
    vals = list(map(bytes.__getitem__, compress(lines, has), map(slice, starts, map(add, starts, repeat(width)))))
    if b"".join(vals).translate(None, _DIGITS) != first.translate(None, _DIGITS) * len(vals) or sorted(vals) != vals:
        return False
    cut = dict(zip(found, vals, strict=True))
    for i, t in compress(enumerate(times), map(is_not, times, repeat(None))):
        v = cut.get(i)
        if v is None or v[:-1] != (t.encode() if type(t) is str else b"%d" % t if type(t) is int else None):
            return False
    return _moved(clock, _value(vals[0]), _value(vals[-1]), base_line + found[-1] + 1)


def _value(cut: bytes) -> float | None:
    """The time of a value cut from a line (with the byte after it)."""
    raw = cut[:-1]
    return parse_time(raw.decode("ascii") if raw[-1:] == b"Z" else int(raw))


def _moved(clock: Clock, low: float | None, high: float | None, high_line: int) -> bool:
    """A window in order from ``low`` to ``high`` (its last time at ``high_line``): ``clock`` moved, unless it steps back."""
    if low is None or high is None:
        return False
    if clock.top_line and clock.top - low > TOL_BEFORE_S:
        return False  # (it steps back from an earlier window: read line by line, to name the lines)
    if not clock.top_line or high > clock.top:
        clock.top_line, clock.top = high_line, high
    return True


def _scale(v: float) -> int:
    return sum(v > x for x in (0, 1e11, 1e14, 1e17))


def _last_index(times: Sequence[Any]) -> int:
    return next(i for i in range(len(times) - 1, -1, -1) if times[i] is not None)
