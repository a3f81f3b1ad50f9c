"""Edge inputs of issue 24's table: a file that shrinks while it is read, UTF-16/32 with a BOM,
lone-CR line ends, a cassette nested past the depth budget, invisible characters in names."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from musetui.core import reader, scanner
from musetui.core.scanner import scan_file


def _lines(n: int) -> bytes:
    return b"".join(b'{"role": "user", "content": "hello %d", "model": "gpt-4o"}\n' % i for i in range(n))


def _replacing_pread(other: Path, path: Path) -> Callable[[int, int, int], bytes]:
    """``os.pread`` that moves ``other`` over ``path`` after each read (another writer replacing the file)."""
    real = os.pread

    def pread(fd: int, length: int, offset: int) -> bytes:
        data = real(fd, length, offset)
        os.replace(other, path)
        return data

    return pread


def _truncating_pread(path: Path, after_calls: int, keep: int) -> Callable[[int, int, int], bytes]:
    """``os.pread`` that truncates ``path`` to ``keep`` bytes after ``after_calls`` reads (another writer)."""
    real = os.pread
    calls = [0]

    def pread(fd: int, length: int, offset: int) -> bytes:
        data = real(fd, length, offset)
        calls[0] += 1
        if calls[0] == after_calls:
            os.truncate(path, keep)
        return data

    return pread


def _texts(out: scanner.Outcome) -> list[str]:
    return [d.message for d in out.diagnostics]


def test_a_file_that_shrinks_during_a_whole_read_is_said_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(_lines(200))
    size = f.stat().st_size
    monkeypatch.setattr(os, "pread", _truncating_pread(f, 1, size // 2))
    out = scan_file(str(f), "s.jsonl", str(tmp_path))
    want = f"file shrank (or was replaced) while it was read: {size:,} of {size:,} bytes (it now holds {size // 2:,})"
    assert want in _texts(out)
    assert out.summary is not None and want in out.summary.notes


def test_a_file_that_shrinks_during_a_windowed_read_is_said_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "big.jsonl"
    f.write_bytes(_lines(3000))
    size = f.stat().st_size
    monkeypatch.setattr(scanner, "WINDOW_BYTES", 16 * 1024)
    monkeypatch.setattr(os, "pread", _truncating_pread(f, 2, size // 3))
    out = scan_file(str(f), "big.jsonl", str(tmp_path))
    said = [t for t in _texts(out) if t.startswith("file shrank (or was replaced) while it was read: ")]
    assert len(said) == 1 and f" of {size:,} bytes" in said[0], _texts(out)
    assert out.summary is not None and out.summary.items < 3000


def test_a_file_replaced_during_its_read_is_said_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "r.jsonl"
    f.write_bytes(_lines(50))
    other = tmp_path / "other"
    other.write_bytes(_lines(50))
    monkeypatch.setattr(os, "pread", _replacing_pread(other, f))
    out = scan_file(str(f), "r.jsonl", str(tmp_path))
    assert any(t.startswith("file shrank (or was replaced) while it was read") for t in _texts(out)), _texts(out)


def test_an_untouched_file_gets_no_such_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "big.jsonl"
    f.write_bytes(_lines(3000))
    link = tmp_path / "link.jsonl"
    link.symlink_to(f)
    small = tmp_path / "small.jsonl"
    small.write_bytes(_lines(10))
    whole = scanner.WINDOW_BYTES
    for path, n in ((f, 3000), (link, 3000), (small, 10)):
        for window in (16 * 1024, whole):  # windowed, then whole
            monkeypatch.setattr(scanner, "WINDOW_BYTES", window)
            out = scan_file(str(path), path.name, str(tmp_path))
            assert out.summary is not None and out.summary.items == n
            assert not [t for t in _texts(out) if "shrank" in t], (path, _texts(out))


_RECORDS = _lines(5).decode()


@pytest.mark.parametrize(
    ("codec", "bom", "name"),
    [
        ("utf-16-le", b"\xff\xfe", "UTF-16"),
        ("utf-16-be", b"\xfe\xff", "UTF-16"),
        ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32"),
        ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32"),
    ],
)
def test_utf16_and_utf32_with_a_bom_are_named(
    tmp_path: Path, codec: str, bom: bytes, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "u.jsonl"
    f.write_bytes(bom + _RECORDS.encode(codec))
    out = scan_file(str(f), "u.jsonl", str(tmp_path))
    assert out.summary is None
    assert _texts(out) == [f"{name} text (BOM): not read; musetui reads UTF-8 JSON"]
    monkeypatch.setattr(scanner, "WINDOW_BYTES", 64)  # the windowed read says the same
    assert _texts(scan_file(str(f), "u.jsonl", str(tmp_path))) == _texts(out)


def test_lone_cr_line_ends_are_named_not_truncated(tmp_path: Path) -> None:
    for tail in ("\r", ""):
        f = tmp_path / "mac.jsonl"
        f.write_bytes((_RECORDS.rstrip("\n").replace("\n", "\r") + tail).encode())
        out = scan_file(str(f), "mac.jsonl", str(tmp_path))
        said = _texts(out)
        assert f"malformed: {scanner.LONE_CR}" in said, said
        assert not [t for t in said if "truncated" in t]


def test_crlf_and_a_truly_truncated_last_line_keep_their_names(tmp_path: Path) -> None:
    f = tmp_path / "dos.jsonl"
    f.write_bytes(_RECORDS.replace("\n", "\r\n").encode() + b'{"role": "us')
    out = scan_file(str(f), "dos.jsonl", str(tmp_path))
    assert out.summary is not None and out.summary.items == 5
    assert [t for t in _texts(out) if t.startswith("malformed: truncated")], _texts(out)


_REQUEST = '{request: {uri: "https://api.openai.com/v1/chat/completions", method: POST, body: ""}, response: {status: {code: 200}, body: {string: ""}}}'


@pytest.mark.parametrize(
    "text",
    [
        "interactions: " + "[" * 150 + _REQUEST + "]" * 150 + "\n",  # flow style
        "interactions:\n"
        + "- " * 150
        + "request: {uri: 'https://api.openai.com/v1/chat/completions'}\n",  # block style
        "interactions:\n"
        + "- " * 150
        + "request: {uri: 'https://x/'}\n"
        + "  " * 150
        + "response: {status: {code: 200}}\n",
    ],
)
def test_a_deeply_nested_interactions_list_is_a_diagnostic(tmp_path: Path, text: str) -> None:
    f = tmp_path / "deep.yaml"
    f.write_text(text)
    out = scan_file(str(f), "deep.yaml", str(tmp_path))
    assert out.summary is None
    assert _texts(out) == [
        "unreadable HTTP capture: interactions hold no request/response mapping (lists nested 150 deep)"
    ]


@pytest.mark.parametrize("mark", ["\u3164", "\u034f", "\ufe0f", "\ufff9", "\U000e0041", "\u200b", "\u2066"])
def test_invisible_characters_in_a_file_name_are_escaped_in_scan_and_show(
    tmp_path: Path, mark: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from musetui.cli import main
    from musetui.core.safetext import escape_name

    f = tmp_path / f"a{mark}b.jsonl"
    f.write_bytes(_lines(3))
    shown = escape_name(f.name)
    assert shown != f.name and shown.isascii()
    assert main(["scan", str(tmp_path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert shown in out and mark not in out
    assert main(["show", str(f)]) == 0
    md = capsys.readouterr().out
    assert f"- **File:** `{escape_name(str(f))}`" in md and mark not in md


def test_a_resume_whose_file_shrinks_as_it_is_read_rescans_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "grow.jsonl"
    states = []
    for _ in range(2):
        f.write_bytes(_lines(20))
        first = scan_file(str(f), "grow.jsonl", str(tmp_path), want_state=True)
        assert first.state is not None
        states.append(first.state)
    f.write_bytes(_lines(40))
    assert scanner.resume_file(states[0], str(f)) is not None  # an append alone resumes
    # (pread 1: the byte before the resume point; 2: the appended bytes, then another writer truncates)
    monkeypatch.setattr(os, "pread", _truncating_pread(f, 2, f.stat().st_size - 100))
    assert scanner.resume_file(states[1], str(f)) is None


def test_a_file_rewritten_in_place_during_its_read_is_said_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "w.jsonl"
    f.write_bytes(_lines(50))
    real = os.pread

    def pread(fd: int, length: int, offset: int) -> bytes:
        data = real(fd, length, offset)
        with f.open("r+b") as out:  # another writer: same size, other bytes
            out.write(b'{"role": "system"')
        st = f.stat()
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # (a new time, whatever the clock's grain)
        return data

    monkeypatch.setattr(os, "pread", pread)
    out = scan_file(str(f), "w.jsonl", str(tmp_path))
    size = f.stat().st_size
    want = f"file was rewritten while it was read (same size, new modification time): {size:,} of {size:,} bytes"
    assert want in _texts(out)


def test_a_file_replaced_by_a_larger_one_during_its_read_says_what_the_open_file_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the read, the path's stat stands for the open file's only while it names that file.

    Here it names a larger file: the note says what the file that was read holds (its ``fstat``),
    and the scan is not said to have grown.
    """
    f = tmp_path / "r.jsonl"
    f.write_bytes(_lines(50))
    size = f.stat().st_size
    other = tmp_path / "other"
    other.write_bytes(_lines(80))
    monkeypatch.setattr(os, "pread", _replacing_pread(other, f))
    got = reader.read_file(str(f))
    assert got.note == f"file shrank (or was replaced) while it was read: {size:,} of {size:,} bytes"
    assert not got.grew and got.size == size


def test_the_stat_after_a_read_is_the_open_files_own(tmp_path: Path) -> None:
    """:func:`reader.after_read`'s stat equals ``os.fstat`` of the descriptor: path kept, grown, replaced or gone."""
    f = tmp_path / "a.jsonl"
    f.write_bytes(_lines(5))
    keys = ("st_ino", "st_dev", "st_size", "st_mtime_ns", "st_mode")

    def same(now: os.stat_result, fd: int) -> bool:
        want = os.fstat(fd)
        return all(getattr(now, k) == getattr(want, k) for k in keys)

    fd = reader.open_ro(str(f))
    try:
        before = os.fstat(fd)
        now, replaced = reader.after_read(str(f), fd, before)
        assert not replaced and same(now, fd)
        with f.open("ab") as out:
            out.write(_lines(3))
        now, replaced = reader.after_read(str(f), fd, before)
        assert not replaced and same(now, fd) and now.st_size > before.st_size
        other = tmp_path / "b"
        other.write_bytes(_lines(40))
        os.replace(other, f)
        now, replaced = reader.after_read(str(f), fd, before)
        assert replaced and same(now, fd) and now.st_size != f.stat().st_size
        f.unlink()
        now, replaced = reader.after_read(str(f), fd, before)
        assert replaced and same(now, fd)
    finally:
        os.close(fd)
