"""Line times: recorded times that run backwards by more than the tolerance, over every record of a file.

A record's recorded time is what its observer read, or, for a record the scan did not
observe, what the format's probe reads from its bytes (the value after the format's time
key). Every record's time counts, window by window; what carries over between windows (and
over an append) is the latest time so far and the first backward step (:class:`Clock`).

Most windows are in order, and that is decided without reading a time per line in Python:

* When a format's lines have their time key at one place (Muse, Codex: ``time_in_place``),
  a window whose records are in byte order, share their bytes up to the first record's time,
  and end that time at one place with the same byte, is in time order: the records differ
  first in their times, which have one shape. (Muse's lines are; one comparison of the
  list with its sorted copy decides.)
* Otherwise the key and time of each record are cut from its bytes (at the first record's
  place, or where each has its key) by C loops, the observed times joined in as the same
  bytes; when all have one shape (the key, then ISO-8601 UTC times ending in ``Z`` with the
  same digits, or integers of one width), their byte order is their time order: in order,
  or walked with the latest time kept as bytes, only a step back parsed (Claude Code's
  inline subagent lines often run a few seconds behind).

Any other window is read record by record, each time parsed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Protocol

from musetui.core.fingerprints.attribution import TOL_BEFORE_S
from musetui.core.model import parse_time
from musetui.core.reasons import TimeBackwards

__all__ = ["Clock", "TimeProbe", "reason", "track"]

#: Every digit to 0: what is left is a cut time's shape.
_ZEROS = bytes.maketrans(b"0123456789", b"0000000000")
#: A time value with the byte after it: an ISO-8601 UTC time, or an integer.
_ISO_Z = re.compile(rb'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z"')
_INT = re.compile(rb"[1-9]\d{0,19}[,}\s]")


class TimeProbe(Protocol):
    """What the check asks of a format's probe (:class:`musetui.core.scan.stages.LineProbe` has it)."""

    @property
    def time_key(self) -> bytes: ...

    @property
    def time_in_place(self) -> bool: ...

    def time(self, line: bytes) -> Any: ...


@dataclass(slots=True)
class Clock:
    """What the check carries from window to window: the latest time so far, and the backward steps.

    Attributes:
        top_line: the line of the latest time so far (0: none yet).
        top: that time (unix seconds).
        back: the first backward step beyond the tolerance, ``(top_line, line, top, time)``, or None.
        steps: how many backward steps beyond the tolerance.
        raw: the latest time as cut from its line (the value and the byte after it), when not yet
            parsed into ``top`` (most files are one window: their times are never parsed).
    """

    top_line: int = 0
    top: float = 0.0
    back: tuple[int, int, float, float] | None = None
    steps: int = 0
    raw: bytes = b""

    def settle(self) -> None:
        """Parse ``raw`` into ``top``."""
        if self.raw:
            t = _cut_time(self.raw)
            self.raw = b""
            if t is None:
                self.top_line = 0
            else:
                self.top = t

    def see(self, line: int, t: float) -> None:
        """One record's time, in line order (after :meth:`settle`)."""
        if not self.top_line or t > self.top:
            self.top_line, self.top = line, t
        elif self.top - t > TOL_BEFORE_S:
            self.steps += 1
            if self.back is None:
                self.back = (self.top_line, line, self.top, t)

    def advance(self, low: bytes, high: bytes, high_line: int) -> bool:
        """A window in order from ``low`` to ``high`` (cut times; the last at ``high_line``).

        False: it steps back from an earlier window, or a time does not parse (it is then read
        record by record).
        """
        if self.top_line:
            self.settle()
        if not self.top_line:
            self.top_line, self.raw = high_line, high
            return True
        t, top = _cut_time(low), _cut_time(high)
        if t is None or top is None or self.top - t > TOL_BEFORE_S:
            return False
        if top > self.top:
            self.top_line, self.top = high_line, top
        return True


def reason(clock: Clock) -> TimeBackwards | None:
    """The ``time-mismatch`` reason of a file's line times (None: they never run backwards beyond the tolerance)."""
    return None if clock.back is None else TimeBackwards(*clock.back, count=clock.steps)


def track(
    clock: Clock,
    records: Sequence[int],
    texts: list[bytes],
    times: Sequence[Any],
    probe: TimeProbe,
    observe_all: bool,
    base_line: int,
) -> None:
    """Move ``clock`` over one window's records.

    Args:
        clock: what earlier windows left.
        records: the indices of the window's records (line ``base_line + i + 1``).
        texts: their bytes.
        times: each line's time, as observed (None: not observed, or no time).
        probe: the format's probe (it reads the time of an unobserved record).
        observe_all: every record was observed.
        base_line: the lines before the window.
    """
    if not records:
        return
    key = probe.time_key
    if observe_all:
        if _observed_in_order(clock, times, base_line):
            return
    elif key and (
        (probe.time_in_place and _in_place(clock, records, texts, key, base_line))
        or _each_in_order(clock, records, texts, times, key, base_line)
    ):
        return
    clock.settle()
    probe_time = probe.time
    for i, text in zip(records, texts, strict=True):
        raw = times[i]
        if raw is None and not observe_all:
            raw = probe_time(text)
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
    low, high = parse_time(raws[0]), parse_time(raws[-1])
    if low is None or high is None:
        return False
    clock.settle()
    if clock.top_line and clock.top - low > TOL_BEFORE_S:
        return False
    if not clock.top_line or high > clock.top:
        i = len(times) - 1
        while times[i] is None:
            i -= 1
        clock.top_line, clock.top = base_line + i + 1, high
    return True


def _in_place(clock: Clock, records: Sequence[int], texts: list[bytes], key: bytes, base_line: int) -> bool:
    """The records of a format whose lines have their time at one place: whether plainly in order (``clock`` moved).

    When the records are in byte order and the first and the last share their bytes up to the
    first record's time, every record lies between them, so shares those bytes: the times
    start at one place, and, ending at one place (the ISO time's ``Z``, or the integer's end,
    where the first has it), they are what the records differ in first. Otherwise each
    record is cut at the first record's place, and the cuts must have one shape.
    """
    first = texts[0]
    j = first.find(key)
    if j < 0:
        return False
    iso = key.endswith(b'"')
    s = j + len(key)
    m = (_ISO_Z if iso else _INT).match(first, s)
    if m is None:
        return False
    e = m.end()
    high_line = base_line + records[-1] + 1
    if len(texts) == 1:  # (one record: in order, what follows would find)
        return clock.advance(first[s:e], first[s:e], high_line)
    if sorted(texts) == texts and texts[-1][:s] == first[:s]:
        at, want = (e - 2, 90) if iso else (e - 1, first[e - 1])
        try:
            ends = bytes(map(itemgetter(at), texts))
        except IndexError:  # (a record too short)
            ends = b""
        if ends == bytes((want,)) * len(texts):
            return clock.advance(first[s:e], texts[-1][s:e], high_line)
    cuts = list(map(itemgetter(slice(j, e)), texts))
    if not _one_shape(cuts):
        return False
    if sorted(cuts) == cuts:
        return clock.advance(cuts[0][s - j :], cuts[-1][s - j :], high_line)
    return _walk(clock, cuts, [base_line + i + 1 for i in records], s - j)


def _each_in_order(
    clock: Clock, records: Sequence[int], texts: list[bytes], times: Sequence[Any], key: bytes, base_line: int
) -> bool:
    """Whether the records' times are plainly in order (``clock`` then moved), each cut where it has its key.

    An observed time stands for its record's, as the bytes it would be cut as.
    """
    lk = len(key)
    width = 0
    cuts: list[bytes] = []
    text = key.decode()
    lines: list[int] = []
    for k, i in enumerate(records):
        t = times[i]
        if t is None:
            line = texts[k]
            j = line.find(key)
            if j < 0:
                continue
            if not width:
                m = (_ISO_Z if key.endswith(b'"') else _INT).match(line, j + lk)
                if m is None:
                    return False
                width = m.end() - j
            cuts.append(line[j : j + width])
        elif type(t) is str:
            cuts.append((text + t + '"').encode())
        elif type(t) is int:
            cuts.append(b"%b%d," % (key, t))
        else:
            return False
        lines.append(base_line + i + 1)
    if not cuts:
        return True
    if (_ISO_Z if key.endswith(b'"') else _INT).fullmatch(cuts[0], lk) is None or not _one_shape(cuts):
        return False
    if sorted(cuts) == cuts:
        return clock.advance(cuts[0][lk:], cuts[-1][lk:], lines[-1])
    return _walk(clock, cuts, lines, lk)


def _walk(clock: Clock, cuts: list[bytes], lines: list[int], lk: int) -> bool:
    """Cuts of one shape, not in order (Claude Code's inline subagent lines run a little behind): ``clock`` moved.

    The latest time so far is kept as bytes (byte order is time order); only a step back is
    parsed, to weigh it against the tolerance. False: not decided (a window after another, or a
    time that does not parse).
    """
    if clock.top_line:
        return False  # (times of an earlier window are parsed: read record by record)
    # ISO times that agree up to the ten minutes ("2026-02-12T10:0") are less than 600 s apart.
    head = lk + 15 if TOL_BEFORE_S >= 600 and cuts[0].endswith(b'Z"') else 0
    top, top_line, top_t = cuts[0], lines[0], None
    for v, line in zip(cuts, lines, strict=True):
        if v > top:
            top, top_line, top_t = v, line, None
        elif v < top:
            if head and v[:head] == top[:head]:
                continue
            if top_t is None:
                top_t = _cut_time(top[lk:])
            t = _cut_time(v[lk:])
            if top_t is None or t is None:
                return False
            if top_t - t > TOL_BEFORE_S:
                clock.steps += 1
                if clock.back is None:
                    clock.back = (top_line, line, top_t, t)
    clock.top_line, clock.raw = top_line, top[lk:]
    return True


def _one_shape(cuts: list[bytes]) -> bool:
    """Whether the cuts have the first's bytes but digits (its key, separators and end).

    Times of one shape (ISO-8601 in UTC, or integers of one width) order as their bytes do.
    """
    return b"".join(cuts).translate(_ZEROS) == cuts[0].translate(_ZEROS) * len(cuts)


def _cut_time(cut: bytes) -> float | None:
    """The time of a cut (the value, and the byte after it)."""
    raw = cut[:-1]
    if raw[-1:] == b"Z":
        return parse_time(raw.decode("ascii"))
    try:
        return parse_time(int(raw))
    except ValueError:
        return None


def _scale(v: float) -> int:
    return sum(v > x for x in (0, 1e11, 1e14, 1e17))
