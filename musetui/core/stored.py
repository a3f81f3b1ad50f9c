"""The shapes the persistent cache stores, as plain data: outcomes, resume states and light summaries.

Each is written with :mod:`musetui.core.cache_codec` and read back through its checks: a blob
that does not have exactly its shape is a cache miss (``None``), never an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import sys
import typing
from typing import Any

from musetui.core import reasons
from musetui.core.cache import LIGHT
from musetui.core.cache_codec import (
    HINT_NAMES,
    OVERRIDES,
    Invalid,
    Raw,
    Unstorable,
    attrs_plain,
    attrs_set,
    codec,
    dump,
    from_text,
    load,
    pack,
    to_text,
    unpack,
)
from musetui.core.diagnostics import record_json
from musetui.core.fingerprints.attribution import Located
from musetui.core.model import Attribution, Diagnostic, SessionSummary
from musetui.core.packed import pack_record
from musetui.core.scanner import Outcome, ScanState

__all__ = [
    "LIGHT",
    "PREFIX_BYTES",
    "decode_outcome",
    "decode_state",
    "dump_light",
    "encode_outcome",
    "encode_state",
    "freeze",
    "light_blob",
    "light_from",
    "light_text",
    "outcome_from_light",
    "prefix_digest",
    "prefix_of",
    "state_prefix",
    "thaw",
]


def _none_only() -> tuple[Any, Any]:
    def check(v: Any) -> None:
        if v is not None:
            raise Invalid("expected nothing")

    return check, check


#: An outcome is stored without its resume state (that has a blob of its own).
OVERRIDES[(Outcome, "state")] = _none_only()
#: ``Attribution.reasons`` names the union that musetui.core.model imports only for type checking.
HINT_NAMES["Reason"] = reasons.Reason


def encode_outcome(outcome: Outcome) -> bytes:
    """An outcome (its ``state`` must be None) as a stored blob."""
    return dump(Outcome, outcome)


def decode_outcome(blob: bytes) -> Outcome | None:
    """A stored outcome, or None when the blob is not one (the file is read again)."""
    try:
        got = load(Outcome, blob)
    except Exception:  # any damage at all is a miss, never fatal
        return None
    return got if isinstance(got, Outcome) else None


def light_blob(outcome: Outcome) -> bytes:
    """The light form of an outcome as a stored blob."""
    return dump_light(light_from(outcome))


def dump_light(light: Any) -> bytes:
    """A light form (a :func:`light_from` tuple) as a stored blob."""
    return dump(LIGHT, light)


def light_text(light: Any) -> bytes:
    """A light form as the text the snapshot joins (see :func:`musetui.core.cache_codec.to_text`): not compressed."""
    return to_text(codec(LIGHT)[0](light))


def light_from(outcome: Outcome) -> Any:
    """The light form of an outcome (see :data:`LIGHT`), as a tuple."""
    diags = [(d.path, d.line, d.message) for d in outcome.diagnostics] if outcome.diagnostics else []
    s = outcome.summary
    if s is None:
        return (None, diags)
    a = s.attribution
    light = (
        s.path, s.abspath, s.root, s.format, s.format_rule, s.session_id, s.parent_session_id,
        s.declared_provider, s.declared_model, s.items, s.malformed_lines, s.started_at, s.ended_at,
        s.size, s.mtime_ns, s.inode, s.device, s.read_bytes, s.label, dict(s.models),
        a.provider, a.host, a.confidence, [f for f in a.flags if f != "outlier"] if a.flags else [], a.summary,
        record_json(s.record())[:-1].decode("utf-8"), s.title, a.via, s.usage,
    )  # fmt: skip
    return (light, diags)


def outcome_from_light(light: Any) -> Outcome:
    """Rebuild a light outcome from a checked :data:`LIGHT` tuple (see :func:`light_from`)."""
    summary_t, diags = light
    diagnostics = [Diagnostic(p, ln, m) for p, ln, m in diags]
    if summary_t is None:
        return Outcome(None, diagnostics)
    (path, abspath, root, fmt, rule, sid, parent, dprov, dmodel, items, malformed, started, ended,
     size, mtime_ns, inode, device, read_bytes, label, models, provider, host, conf, flags, why, record,
     title, via, usage) = summary_t  # fmt: skip
    # (the values many sessions share are held once: an index of 100,000 light sessions holds them all)
    summary = SessionSummary(  # positional, in field order (a fifth of a light outcome's cost in keywords)
        path, abspath, _one(root), _one(fmt), _one(rule), sid, parent, _one(dprov), _one(dmodel), items, malformed,
        [], started, ended, size, mtime_ns, inode, device, read_bytes,
        Attribution(_one(provider), _one(host), conf, _one(via), [sys.intern(f) for f in flags], [], _one(why)),
        [], _one(label), _shared(models), title, _shared(usage), pack_record(record.encode("utf-8")),
    )  # fmt: skip
    return Outcome(summary, diagnostics)


def _one(text: str | None) -> Any:
    """``text`` as the one copy of its value this process holds (see :func:`sys.intern`)."""
    return text if text is None else sys.intern(text)


#: Light summaries' ``models`` and ``usage`` maps, one of each value (see :func:`_shared`).
_SHARED: dict[tuple[tuple[str, int | None], ...], dict[str, Any]] = {}
#: At most this many are remembered (past it, the memo starts again: values that repeat come back first).
SHARED_MAX = 4096


def _shared(d: dict[str, Any] | None) -> Any:
    """``d``, or an equal map (same keys in the same order) already held: light summaries share it.

    A light summary is never changed after it is made (a scan builds its maps on the full
    summary), so sessions with the same declared models or the same token totals (often
    none) can hold one map.
    """
    if d is None:
        return None
    key = tuple(d.items())
    got = _SHARED.get(key)
    if got is None:
        if len(_SHARED) >= SHARED_MAX:
            _SHARED.clear()
        got = _SHARED[key] = d
    return got


#: A resume state is kept with the digest of this many bytes before its offset; an append
#: is read alone only when they are unchanged.
PREFIX_BYTES = 64 * 1024

#: The fields of a stored state (its prefix digest is stored apart, see :func:`encode_state`).
_STATE_FIELDS = [f.name for f in dataclasses.fields(ScanState) if f.name != "prefix"]
_STATE_HINTS = typing.get_type_hints(ScanState)
_COLLAPSE_KEY = tuple[str, str, str | None, int]
#: The head of a frozen pair that could not be written as plain data: pickled, for this
#: process only (live follow); such a state is never stored (see :func:`encode_state`). The
#: head is drawn at random per process (forked workers share it), so no bytes from a file or
#: the cache can carry it: what :func:`thaw` unpickles was made here.
_PICKLED = b"p" + os.urandom(16)


def prefix_digest(path: str, offset: int, identity: tuple[int, int, int] | None = None) -> str | None:
    """The sha256 (hex) of the :data:`PREFIX_BYTES` of ``path`` before ``offset``, or None when unreadable.

    With ``identity`` (size, mtime_ns, inode), None also when the file is no longer that one.
    """
    from musetui.core.reader import read_file

    start = max(0, offset - PREFIX_BYTES)
    try:
        fd = read_file(path, start, offset - start)
    except Exception:  # unreadable, not a regular file, a broken gzip file: no resume
        return None
    if len(fd.data) != offset - start or (identity is not None and identity != (fd.size, fd.mtime_ns, fd.inode)):
        return None
    return hashlib.sha256(fd.data).hexdigest()


def prefix_of(data: bytes, base: int, offset: int) -> str | None:
    """What :func:`prefix_digest` reads, from the bytes a scan holds: ``data``, which starts at byte ``base``.

    None when ``data`` does not hold all of them (they are then read again).
    """
    start = max(0, offset - PREFIX_BYTES)
    if start < base or offset - base > len(data):
        return None
    return hashlib.sha256(memoryview(data)[start - base : offset - base]).hexdigest()


def state_prefix(state: ScanState, summary: SessionSummary) -> str | None:
    """The digest of the bytes before the state's offset, if the file is still the one scanned (else None).

    The scan's own digest (of the bytes it read) when it made one, once the file's identity
    (size, mtime_ns, inode) is found unchanged; else the bytes are read again.
    """
    identity = (summary.size, summary.mtime_ns, summary.inode)
    if state.prefix is None:
        return prefix_digest(summary.abspath, state.offset, identity)
    try:
        st = os.stat(summary.abspath)
    except OSError:
        return None
    return state.prefix if (st.st_size, st.st_mtime_ns, st.st_ino) == identity else None


def freeze(summary: SessionSummary, observer: Any) -> bytes:
    """A copy of the (summary, observer) pair of a scan, before its conclusion: the text of its plain data.

    That is the form a resume state stores (see :func:`encode_state`); what cannot be
    written so is pickled, for this process alone (such a state is never stored).
    """
    try:
        watch = observer.watch
        drift = None if watch is None else [watch.version, [[*k, *v] for k, v in watch.seen.items()]]
        return to_text(
            [codec(SessionSummary)[0](summary), type(observer).__name__, attrs_plain(observer, _SKIP), drift]
        )
    except Exception:
        return _PICKLED + pickle.dumps((summary, observer), protocol=pickle.HIGHEST_PROTOCOL)


def thaw(frozen: bytes, fmt: str | None) -> tuple[SessionSummary, Any]:
    """The (summary, observer) pair :func:`freeze` made ``frozen`` of (new objects, checked); ``fmt``: the state's format.

    Raises:
        Invalid: when ``frozen`` is not such a pair.
    """
    if frozen.startswith(_PICKLED):  # (made by this process: stored states never hold one)
        pair: tuple[SessionSummary, Any] = pickle.loads(frozen[len(_PICKLED) :])
        return pair
    return _thaw(from_text(frozen), fmt)


def _thaw(plain: Any, fmt: str | None) -> tuple[SessionSummary, Any]:
    from musetui.core import sources

    frozen = _list(plain)
    if len(frozen) != 4 or type(fmt) is not str:
        raise Invalid("frozen summary malformed")
    summary = codec(SessionSummary)[1](frozen[0])
    observer = sources.observer_for(fmt, summary)
    if type(observer).__name__ != frozen[1]:
        raise Invalid("observer class differs")
    attrs_set(observer, frozen[2], _SKIP)
    _set_drift(observer, frozen[3])
    return summary, observer


def encode_state(state: ScanState, prefix: str) -> bytes:
    """A resume state, with the digest of the bytes before its offset, as a stored blob.

    Raises:
        Unstorable: when some part of it is not plain data (the file is then not resumable).
    """
    if not state.frozen or state.frozen.startswith(_PICKLED):
        raise Unstorable("no frozen summary as plain data")
    where = {id(loc): i for i, loc in enumerate(state.located)}
    values: list[Any] = []
    for name in _STATE_FIELDS:
        v = getattr(state, name)
        if name == "frozen":  # (the text :func:`freeze` made, written as it is)
            values.append(Raw(v))
        elif name == "collapsed":  # its groups hold members of ``located`` (counted in place): stored as their indices
            try:
                values.append([[codec(_COLLAPSE_KEY)[0](k), [where[id(x)] for x in g]] for k, g in v.items()])
            except KeyError as exc:
                raise Unstorable("a collapsed group member is not located") from exc
        else:
            values.append(codec(_STATE_HINTS[name])[0](v))
    return pack([prefix, values])


def decode_state(blob: bytes | None) -> tuple[ScanState, str] | None:
    """A stored resume state and its prefix digest, or None when the blob is not one."""
    if blob is None:
        return None
    try:
        return _decode_state(blob)
    except Exception:  # any damage at all is a miss, never fatal
        return None


def _decode_state(blob: bytes) -> tuple[ScanState, str]:
    got = unpack(blob)
    if type(got) is not list or len(got) != 2 or type(got[0]) is not str or type(got[1]) is not list:
        raise Invalid("not a resume state")
    prefix, values = got
    if len(values) != len(_STATE_FIELDS):
        raise Invalid("resume state fields differ")
    kw: dict[str, Any] = {}
    for name, v in zip(_STATE_FIELDS, values, strict=True):
        if name not in ("frozen", "collapsed"):
            kw[name] = codec(_STATE_HINTS[name])[1](v)
    located: list[Located] = kw["located"]
    groups: dict[Any, list[Located]] = {}
    for pair in _list(values[_STATE_FIELDS.index("collapsed")]):
        key, members = _list(pair)
        if not all(type(i) is int and 0 <= i < len(located) for i in _list(members)):
            raise Invalid("collapsed member out of range")
        groups[codec(_COLLAPSE_KEY)[1](key)] = [located[i] for i in members]
    kw["collapsed"] = groups
    frozen = values[_STATE_FIELDS.index("frozen")]
    _thaw(frozen, kw["fmt"])  # (checked here: a damaged pair is a miss now, not when the file grows)
    kw["frozen"] = to_text(frozen)  # (plain data just checked, as :func:`freeze` writes it)
    return ScanState(**kw), prefix


#: Observer attributes stored apart: the summary (its own codec) and the drift watch (:func:`_set_drift`).
_SKIP = ("summary", "watch")


def _set_drift(observer: Any, stored: Any) -> None:
    """Restore a drift watch's version and counts (``[version, [[version, what, name, count, first], …]]``)."""
    watch = observer.watch
    if stored is None or watch is None:
        if stored is not None or watch is not None:
            raise Invalid("drift watch differs")
        return
    version, rows = _list(stored)
    ok = (str, type(None))
    if not isinstance(version, ok):
        raise Invalid("drift version")
    seen: dict[tuple[str | None, str, str], list[int]] = {}
    for row in _list(rows):
        v, what, name, count, first = _list(row)
        if not (
            isinstance(v, ok) and type(what) is str and type(name) is str and type(count) is int and type(first) is int
        ):
            raise Invalid("drift row")
        seen[(v, what, name)] = [count, first]
    watch.version, watch.seen = version, seen


def _list(v: Any) -> list[Any]:
    if type(v) is not list:
        raise Invalid("expected a list")
    return v
