"""The drift watch's quiet path (a record read as one found quiet before is not checked again) does what checking
every record does: the same kinds returned, the same names counted at the same lines, the same version, over
adversarial records of each format (hypothesis): unknown, missing, non-string and duplicate kinds, extra keys."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
import simdjson
from hypothesis import given, settings
from hypothesis import strategies as st

from musetui.core.drift import Known, Watch
from musetui.core.sources import claude_code, codex, muse

_ODD = st.one_of(st.sampled_from(["new_kind", "", "run", "type"]), st.integers(0, 2), st.none(), st.just({"k": "x"}))


def _kind(known: Known, names: list[str]) -> st.SearchStrategy[Any]:
    """Mostly a few kinds (each often repeated: the quiet path's), known or not, and any odd one."""
    few = st.sampled_from([*sorted(known.kinds)[:2], *names, "new_kind"])
    return st.one_of(few, few, st.sampled_from(sorted(known.kinds)), _ODD)


@st.composite
def _one(draw: Any, known: Known) -> list[tuple[str, Any]]:
    """A record's top-level members, in order (keys may repeat: the JSON is written member by member)."""
    nested_kind, (path, names, _what) = next(
        iter(known.nested.items()), ("message", (("message", "type"), frozenset({"text"}), "type"))
    )
    kind = draw(_kind(known, [nested_kind]))
    sub = draw(st.one_of(st.sampled_from(sorted(names)[:2]), st.sampled_from(["new_kind", "other_kind"]), _ODD))
    if len(known.kind) == 2:  # (Muse: payload.kind, and payload.event.kind)
        inner: dict[str, Any] = {known.kind[1]: kind}
        if draw(st.booleans()):
            inner[path[1]] = {path[2]: sub, "text": "x"}
        members = [("stream", {"kind": "session", "id": "s"}), ("recorded_at", 1), (known.kind[0], inner)]
    else:  # (Claude Code, Codex: type, and payload.type; a version, at the top or in the payload, or none)
        members = [(known.kind[0], kind), ("timestamp", "2026-01-01T00:00:00Z")]
        payload: dict[str, Any] = {path[1]: sub} if draw(st.booleans()) else {}
        version = draw(st.sampled_from(["1.0", "2.0", None]))
        if version is not None and len(known.version[0]) == 2:
            payload[known.version[0][1]] = version
        elif version is not None:
            members.append((known.version[0][0], version))
        if payload:
            members.append((path[0], payload))
    if draw(st.integers(0, 4)) == 0:
        members.append((draw(st.sampled_from(["extra", "teleported", *sorted(known.keys)])), 1))
    if draw(st.integers(0, 6)) == 0:
        members.insert(0, members[-1])  # (a duplicate key: the first is the one read)
    return members


def _line(members: list[tuple[str, Any]]) -> bytes:
    return b"{" + b",".join(orjson.dumps(k) + b":" + orjson.dumps(v) for k, v in members) + b"}"


def _records(known: Known) -> st.SearchStrategy[list[bytes]]:
    """A few distinct records, each repeated (the quiet path is for a record like one seen before), some with a twin
    that has one key more (the same kinds, another shape)."""

    @st.composite
    def many(draw: Any) -> list[bytes]:
        pool = [_line(m) for m in draw(st.lists(st.builds(list, _one(known)), min_size=1, max_size=5))]
        pool += [line[:-1] + b',"extra":1}' for line in pool if line.startswith(b"{") and draw(st.booleans())]
        pool.append(draw(st.sampled_from([b"[1,2]", b"7", b'"s"', b"null", b"{}"])))
        return draw(st.lists(st.sampled_from(pool), max_size=25))

    return many()


def _watched(known: Known, lines: list[bytes], quiet: bool) -> tuple[list[Any], list[Any], Any]:
    """Each line shown to a watch as the scan shows it (a simdjson proxy); with ``quiet`` False, every one checked."""
    watch = Watch(known)
    see = watch.__call__ if quiet else watch._check  # (the check reads each record, and keeps none quiet)
    reads = []
    for i, line in enumerate(lines):
        doc = simdjson.Parser().parse(
            line
        )  # (a parser each: a shape may keep an object kind's proxy, as the scan's may)
        reads.append(see(doc, i + 1))
        del doc
    return reads, list(watch.seen.items()), watch.version


@settings(max_examples=300)
@given(st.sampled_from([muse.KNOWN, codex.KNOWN, claude_code.KNOWN]), st.data())
def test_the_quiet_path_does_what_checking_each_record_does(known: Known, data: Any) -> None:
    lines = data.draw(_records(known))
    assert _watched(known, lines, quiet=True) == _watched(known, lines, quiet=False)


class _Counting(Watch):
    """A watch that counts the records it checks."""

    __slots__ = ("checked",)

    def _judge(self, doc: Any, line: int, n: int, kind: Any, skind: Any, hush: bool) -> Any:
        self.checked.append(line)
        return super()._judge(doc, line, n, kind, skind, hush)


def test_quiet_records_are_not_checked_again() -> None:
    """The quiet path is taken (the test above compares something): a Muse file's repeated kinds are checked once each."""
    watch = _Counting(muse.KNOWN)
    watch.checked = []
    payload = {"kind": "run", "event": {"kind": "started"}}
    line = _line([("stream", {"kind": "session", "id": "s"}), ("recorded_at", 1), ("payload", payload)])
    parser = simdjson.Parser()
    for i in range(5):
        doc = parser.parse(line)
        assert watch(doc, i + 1) == ("run", "started")
        del doc
    assert watch.checked == [1]


def _muse(kind: Any, event: Any = None, *extra: tuple[str, Any]) -> bytes:
    payload: dict[str, Any] = {"kind": kind} if event is None else {"kind": kind, "event": {"kind": event}}
    return _line([("stream", {"kind": "session", "id": "s"}), ("recorded_at", 1), ("payload", payload), *extra])


_CASES = [
    (muse.KNOWN, [_muse("run", "new_kind")] * 3),  # (an unknown event kind, counted each time)
    (muse.KNOWN, [_muse("run", "started"), _muse("run", "started", ("extra", 1)), _muse("run", "started")]),
    (
        muse.KNOWN,
        [_muse("run", "started"), _line([("payload", {"kind": "zz"}), *orjson.loads(_muse("run", "started")).items()])],
    ),
    (
        muse.KNOWN,
        [_muse("run", None), _muse("run", 5), _muse("run", 5), _muse("metadata"), _muse("metadata", "started")],
    ),
    (
        claude_code.KNOWN,
        [
            _line([("type", "system"), ("version", "1.0")]),
            _line([("type", "new_kind")]),
            _line([("type", "system"), ("version", "2.0")]),
            _line([("type", "new_kind")]),
        ],
    ),
    (
        codex.KNOWN,
        [
            _line([("type", "session_meta"), ("payload", {"cli_version": "1"})]),
            _line([("type", "response_item"), ("payload", {"type": "odd"})]),
            _line([("type", "session_meta"), ("payload", {"cli_version": "2"})]),
            _line([("type", "response_item"), ("payload", {"type": "odd"})]),
        ],
    ),
]


@pytest.mark.parametrize(("known", "lines"), _CASES)
def test_cases_the_quiet_path_must_not_pass_by(known: Known, lines: list[bytes]) -> None:
    """Records the quiet path must check: drift counted each time, a carrier's new version, a twin with a key more."""
    assert _watched(known, lines, quiet=True) == _watched(known, lines, quiet=False)
