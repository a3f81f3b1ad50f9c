"""Filling the cache cheaply: each short cut gives exactly what the plain way gives.

A scan that keeps a resume state writes its (summary, observer) pair once, as plain-data
text, and digests the bytes before its offset from the bytes it holds; the snapshot joins
the light texts the workers wrote instead of parsing and encoding them again.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from sample_scans import sample_outcomes

from musetui.core import index, scanner, stored
from musetui.core.cache import LIGHT, SNAPSHOT_ROWS
from musetui.core.cache_codec import Invalid, Raw, Unstorable, codec, deflate, dump, from_text, pack, to_text, unpack
from musetui.core.cache_snapshot import joined, piece, row_text
from musetui.core.scanner import scan_file


def _pack_joined(texts: list[bytes]) -> bytes:
    """The blob of the texts joined as the cache joins the rows of a snapshot chunk (a piece of them)."""
    text, _paths = joined([piece([(f"p{i}", t) for i, t in enumerate(texts)])])
    return text[:1] + deflate(text[1:])


def test_joined_light_texts_are_the_blob_of_their_list(sample_dir: Path) -> None:
    lights = [stored.light_from(o) for o in sample_outcomes(sample_dir)]
    enc = codec(LIGHT)[0]
    assert _pack_joined([stored.light_text(x) for x in lights]) == pack([enc(x) for x in lights])
    odd = (None, [("caf\udce9.jsonl", 0, "a name that is not UTF-8")])  # (the standard library's JSON writes it)
    texts = [stored.light_text(x) for x in [*lights, odd]]
    assert texts[-1][:1] == b"j"
    assert unpack(_pack_joined(texts)) == unpack(pack([enc(x) for x in [*lights, odd]]))


def test_a_snapshot_chunk_of_row_texts_is_the_plain_dump(sample_dir: Path) -> None:
    """Joined at once, or from the pieces of several batches (as the cache keeps them until its snapshot is written)."""
    rows: list[Any] = []
    for i, o in enumerate(sample_outcomes(sample_dir)):
        rows.append((o.summary.abspath, 1, 100 + i, 5000 + i, 10**18 + i, i % 2 == 0, stored.light_from(o), 10**18 - i))
    rows.append(("gone.jsonl", 1, 2, 3, 4, False, None, 5))
    texts = [
        row_text(p, d, n, s, m, h, None if lt is None else stored.light_text(lt), c) for p, d, n, s, m, h, lt, c in rows
    ]
    assert _pack_joined(texts) == dump(SNAPSHOT_ROWS, rows)
    pieces = [piece(list(zip([r[0] for r in rows[a:b]], texts[a:b], strict=True))) for a, b in ((0, 3), (3, len(rows)))]
    text, paths = joined(pieces)
    assert paths == [r[0] for r in rows] and text[:1] + deflate(text[1:]) == dump(SNAPSHOT_ROWS, rows)
    odd = ("caf\udce9.jsonl", 1, 2, 3, 4, False, None, 5)
    text, paths = joined([*pieces, piece([(odd[0], row_text(*odd[:6], None, odd[7]))])])
    assert paths[-1] == odd[0] and text[:1] == b"j" and from_text(text) == unpack(dump(SNAPSHOT_ROWS, [*rows, odd]))


def test_the_frozen_pair_is_the_scans_copy_before_its_conclusion(sample_dir: Path) -> None:
    """Thawed, the frozen text gives the pair a pickle made at the same point gave."""
    made: list[bytes] = []
    freeze = stored.freeze

    def both(summary: Any, observer: Any) -> bytes:
        made.append(pickle.dumps((summary, observer), protocol=pickle.HIGHEST_PROTOCOL))
        return freeze(summary, observer)

    stored.freeze = both  # (the scanner imports it where it freezes)
    try:
        outcomes = sample_outcomes(sample_dir)
    finally:
        stored.freeze = freeze
    states = [o.state for o in outcomes if o.state is not None]
    assert len(states) == len(made) > 5
    for state, pickled in zip(states, made, strict=True):
        summary, observer = stored.thaw(state.frozen, state.fmt)
        want_summary, want_observer = pickle.loads(pickled)
        assert summary == want_summary
        assert type(observer) is type(want_observer)
        assert {k: v for k, v in vars(observer).items() if k not in ("summary", "watch")} == {
            k: v for k, v in vars(want_observer).items() if k not in ("summary", "watch")
        }
        if want_observer.watch is not None:
            assert (observer.watch.version, observer.watch.seen) == (
                want_observer.watch.version,
                want_observer.watch.seen,
            )


def test_a_pair_that_is_not_plain_data_is_pickled_for_this_process_only(sample_dir: Path) -> None:
    o = next(o for o in sample_outcomes(sample_dir) if o.state is not None)
    summary, observer = stored.thaw(o.state.frozen, o.state.fmt)
    observer.odd = 1j  # (no plain form)
    frozen = stored.freeze(summary, observer)
    assert frozen.startswith(stored._PICKLED) and stored.thaw(frozen, o.state.fmt)[1].odd == 1j
    # a pickle that this process did not make (from a file, the cache) is never unpickled
    forged = b"p" + pickle.dumps((summary, observer), protocol=pickle.HIGHEST_PROTOCOL)
    with pytest.raises(Invalid):
        stored.thaw(forged, o.state.fmt)
    o.state.frozen = frozen
    with pytest.raises(Unstorable):
        stored.encode_state(o.state, "p")
    assert index._blobs(o)[1] is None


@pytest.mark.parametrize("line_bytes", [100, 30_000])
@pytest.mark.parametrize("window_lines", [4, 1 << 18])
def test_the_scans_prefix_digest_is_the_one_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line_bytes: int, window_lines: int
) -> None:
    """From a whole file, or the last slice of one (the bytes it lacks are read again)."""
    monkeypatch.setattr(scanner, "WINDOW_LINES", window_lines)
    f = tmp_path / "s.jsonl"
    lines = [b'{"n": %d, "pad": "%s"}\n' % (i, b"x" * line_bytes) for i in range(10)]
    f.write_bytes(b"".join(lines))
    o = scan_file(str(f), "s.jsonl", str(tmp_path), want_state=True)
    state = o.state
    assert state is not None and o.summary is not None and state.offset == f.stat().st_size
    # (slices of 4 lines: the last holds 2, and the digest needs the bytes before them when they are short)
    sliced = window_lines == 4 and len(lines[8]) + len(lines[9]) < stored.PREFIX_BYTES
    assert (state.prefix is None) == sliced
    want = stored.prefix_digest(str(f), state.offset)
    assert want is not None and stored.state_prefix(state, o.summary) == want
    blob = index._blobs(o)[1]
    assert blob is not None and unpack(blob)[0] == want


def test_a_file_changed_after_its_scan_keeps_no_state(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"a": 1}\n{"b": 2}\n')
    kept = scan_file(str(f), "s.jsonl", str(tmp_path), want_state=True)
    changed = scan_file(str(f), "s.jsonl", str(tmp_path), want_state=True)
    assert kept.state is not None and kept.state.prefix is not None and changed.state is not None
    assert index._blobs(kept)[1] is not None
    with f.open("ab") as fh:
        fh.write(b'{"c": 3}\n')
    assert index._blobs(changed)[1] is None  # (its digest is of the bytes scanned, but the file is not that one now)


def test_a_raw_text_is_written_as_the_value_it_holds() -> None:
    value = {"k": [1, 2.5, None, "\u00e9"]}
    inner = to_text(value)
    assert to_text([1, Raw(inner)]) == to_text([1, value])
    odd = ["caf\udce9"]  # (a text only the standard library's JSON writes: the whole is written by it)
    got = to_text([1, Raw(to_text(odd))])
    assert got == to_text([1, odd]) and got[:1] == b"j" and from_text(got) == [1, odd]
