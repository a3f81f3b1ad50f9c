"""The clipboard helper, the lazy item sequence, NO_COLOR, the pager command and the theme."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from musetui import clipboard
from musetui.app import MuseApp
from musetui.core.model import PROVIDERS, SessionSummary
from musetui.core.session import open_session
from musetui.theme import MUSETUI_THEME, provider_style, theme_variable_defaults
from musetui.widgets.lazy_session import LazyItems, line_starts, open_lazily

from .helpers import OUTLIER_ID, SIZE, current, main, press, settle, tree_rows

OUTLIER = Path(
    "sample_transcripts/muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/subagents/"
    "01a05efe-03bb-72c8-854a-4c1c088cc3b9/session.jsonl"
)


def test_cap_payload_cuts_on_a_character_boundary() -> None:
    text = "é" * 400_000  # 800,000 bytes
    capped, was_capped = clipboard.cap_payload(text)
    assert was_capped
    assert len(capped.encode("utf-8")) <= clipboard.MAX_COPY_BYTES
    assert "truncated by musetui" in capped
    same, not_capped = clipboard.cap_payload("small")
    assert (same, not_capped) == ("small", False)


def test_over_ssh() -> None:
    assert clipboard.over_ssh({"SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"})
    assert clipboard.over_ssh({"SSH_TTY": "/dev/pts/1"})
    assert not clipboard.over_ssh({})


def test_pyperclip_skipped_over_ssh_and_errors_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def broken(text: str) -> None:
        calls.append(text)
        raise RuntimeError("no clipboard")

    monkeypatch.setitem(sys.modules, "pyperclip", types.SimpleNamespace(copy=broken))
    monkeypatch.delenv("MUSETUI_NO_PYPERCLIP", raising=False)
    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    monkeypatch.delenv("SSH_TTY", raising=False)
    monkeypatch.delenv("SSH_CLIENT", raising=False)
    assert clipboard._pyperclip_copy("x") is False
    assert calls == ["x"]
    monkeypatch.setenv("SSH_TTY", "/dev/pts/0")
    assert clipboard._pyperclip_copy("y") is False
    assert calls == ["x"]


async def test_copy_text_notifies_with_size_and_caps(sample_root: str) -> None:
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        size = clipboard.copy_text(app, "[b]x" * 10, "thing [red]")
        assert size == 40 and app.clipboard == "[b]x" * 10
        big = clipboard.copy_text(app, "a" * (clipboard.MAX_COPY_BYTES + 10), "big")
        assert big <= clipboard.MAX_COPY_BYTES
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("Copied thing" in m and "(40 bytes)" in m for m in messages)
        assert any("truncated" in m for m in messages)


def test_line_starts_skip_blank_lines() -> None:
    starts, numbers = line_starts(b'{"a":1}\n\n  \n{"b":2}\r\n\n{"c":3}')
    assert list(starts) == [0, 12, 22]
    assert list(numbers) == [1, 4, 6]


def _big_copy(tmp_path: Path, repeat: int) -> SessionSummary:
    lines = OUTLIER.read_bytes().splitlines()
    root = tmp_path / "sessions" / "big"
    root.mkdir(parents=True)
    path = root / "session.jsonl"
    path.write_bytes(b"\n".join(lines * repeat) + b"\n")
    from musetui.core.index import Index

    return Index([str(tmp_path)]).scan().sessions[0]


def test_lazy_items_match_the_full_parse(tmp_path: Path) -> None:
    s = _big_copy(tmp_path, 80)  # 1,120 lines: three windows
    full = open_session(s)
    lazy = open_lazily(s)
    items = lazy.items
    assert isinstance(items, LazyItems)
    assert len(items) == len(full.items) == 1120
    for i in (0, 5, 511, 512, 1023, 1119):
        a, b = items[i], full.items[i]
        assert (a.line, a.kind, a.role, a.ids, a.reasoning, a.offset, a.length) == (
            b.line,
            b.kind,
            b.role,
            b.ids,
            b.reasoning,
            b.offset,
            b.length,
        )
        assert a.index == i
        assert lazy.raw(a) == full.raw(b)
    assert items.index_for_line(600) == 599
    assert [it.line for it in items[10:13]] == [11, 12, 13]
    with pytest.raises(IndexError):
        items[5000]


async def test_huge_session_opens_lazily(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import musetui.widgets.lazy_session as lazy_mod

    monkeypatch.setattr(lazy_mod, "LAZY_MIN_ITEMS", 1000)
    _big_copy(tmp_path, 80)
    app = MuseApp([str(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "j", "enter", "G")
        scr = main(app)
        assert isinstance(scr.items.items, LazyItems)
        item = scr.items.current
        assert item is not None and item.line == 1120
        await press(pilot, "y")
        assert "line 1120" in app.clipboard


async def test_no_color_keeps_every_label(sample_root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o")
        row = tree_rows(app)[main(app).session_tree.cursor_line]
        assert "⚑" in row and "openai/azure" in row and "muse-special" in row
        assert current(app).session_id == OUTLIER_ID


async def test_pager_command_without_a_terminal(sample_root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAGER", "true")
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o")
        main(app).evidence.open_in_pager()
        await settle(pilot)
        assert app.is_running


def test_theme_variables_cover_every_provider() -> None:
    defaults = theme_variable_defaults()
    for p in PROVIDERS:
        assert f"provider-{p}" in defaults
        assert f"provider-{p}" in MUSETUI_THEME.variables
    assert provider_style(defaults, "openai").color is not None
    assert provider_style({}, "nonsense").color is not None
    assert provider_style({"provider-openai": "not a colour"}, "openai") is not None


def test_safe_less_options() -> None:
    from musetui.screens.main import safe_less_options

    assert safe_less_options("-FRX --mouse") == "-FX --mouse"
    assert safe_less_options("-R --RAW-CONTROL-CHARS --quit-if-one-screen") == "--quit-if-one-screen"
    assert safe_less_options("") == ""


def _contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG contrast ratio of two sRGB colours."""

    def lum(c: tuple[int, int, int]) -> float:
        def ch(v: int) -> float:
            x = v / 255
            return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

        r, g, bl = (ch(v) for v in c)
        return 0.2126 * r + 0.7152 * g + 0.0722 * bl

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("theme", ["musetui", "textual-light", "textual-dark", "solarized-light"])
async def test_muted_text_stays_legible_in_every_theme(
    sample_root: str, theme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from musetui.widgets.header import MuseHeader
    from musetui.widgets.item_list import ItemList
    from musetui.widgets.session_tree import SessionTree
    from musetui.widgets.styling import component_style

    monkeypatch.setenv("MUSETUI_THEME", theme)
    app = MuseApp([sample_root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == theme
        scr = main(app)
        parts = [
            (scr.query_one(SessionTree), "session-tree--dim"),
            (scr.query_one(ItemList), "item-list--dim"),
            (scr.query_one(ItemList), "item-list--meta"),
            (scr.query_one(MuseHeader), "header--dim"),
        ]
        for widget, name in parts:
            style = component_style(widget, name)
            assert style.color is not None, name
            fg = style.color.get_truecolor()
            bg = widget.background_colors[1].rgb
            assert _contrast((fg.red, fg.green, fg.blue), bg) >= 2.5, (theme, name, fg, bg)


def _claude_split_session(turns: int, interleave_at: int) -> bytes:
    """A Claude Code session whose assistant messages are split over two lines each."""
    import orjson

    out = []
    for k in range(turns):
        ts = f"2026-09-01T22:{k // 60 % 60:02d}:{k % 60:02d}.000Z"
        base = {"sessionId": "s-lazy", "timestamp": ts, "cwd": "/w", "version": "2.0.0"}
        out.append({**base, "type": "user", "uuid": f"u{k}", "message": {"role": "user", "content": f"question {k}"}})
        msg = {"id": f"msg_lazy{k}", "model": "claude-sonnet-4-5", "role": "assistant"}
        out.append(
            {
                **base,
                "type": "assistant",
                "uuid": f"a{k}",
                "requestId": f"req_{k}",
                "message": {**msg, "content": [{"type": "thinking", "thinking": f"thought {k}", "signature": "c2ln"}]},
            }
        )
        if k == interleave_at:  # a line of another kind between the two halves
            out.append({**base, "type": "system", "uuid": f"s{k}", "content": f"hook ran {k}"})
        out.append(
            {
                **base,
                "type": "assistant",
                "uuid": f"b{k}",
                "requestId": f"req_{k}",
                "message": {**msg, "content": [{"type": "text", "text": f"answer {k}"}]},
            }
        )
    return b"".join(orjson.dumps(o) + b"\n" for o in out)


def test_lazy_items_merge_split_messages_across_window_edges() -> None:
    import orjson

    from musetui.core import sources
    from musetui.core.sources.base import Record
    from musetui.widgets.lazy_session import WINDOW

    # Turn 170's thinking is row 511 (the last of window 0); its text is row 512.
    data = _claude_split_session(400, interleave_at=300)
    starts, numbers = line_starts(data)
    lazy = LazyItems("claude-code", data, starts, numbers)
    assert len(lazy) == 1201
    records = []
    for off, no in zip(starts, numbers, strict=True):
        end = data.index(b"\n", off)
        records.append(Record(no, off, end - off, orjson.loads(data[off:end])))
    full = sources.build_items("claude-code", records)
    assert len(full) == 801  # 400 questions, 400 merged answers, 1 system line
    row_of = {no: row for row, no in enumerate(numbers)}
    merged_rows = set()
    for item in full:
        got = lazy[row_of[item.line]]
        assert (got.kind, got.text, got.ids, got.reasoning, got.line, got.lines) == (
            item.kind,
            item.text,
            item.ids,
            item.reasoning,
            item.line,
            item.lines,
        ), item.line
        for extra in item.merged:
            placeholder = lazy[row_of[extra]]
            assert placeholder.subkind == "merged" and f"line {item.line}" in placeholder.text
            merged_rows.add(row_of[extra])
    straddler = lazy[WINDOW - 1]
    assert straddler.text == "thought 170\nanswer 170" and lazy[WINDOW].subkind == "merged"
    assert len(merged_rows) == 400
    assert all(lazy[r].subkind != "no item" for r in range(len(lazy)))


def test_lazy_items_mark_lines_over_the_limit_malformed(monkeypatch: pytest.MonkeyPatch) -> None:
    import musetui.widgets.lazy_session as lazy_mod

    monkeypatch.setattr(lazy_mod, "MAX_LINE_BYTES", 300)
    data = _claude_split_session(3, interleave_at=-1)
    long_line = b'{"type": "user", "note": "' + b"x" * 400 + b'"}\n'
    data = data + long_line
    starts, numbers = line_starts(data)
    lazy = LazyItems("claude-code", data, starts, numbers)
    last = lazy[len(lazy) - 1]
    assert last.kind == "unknown" and "over the 0 MiB limit" in last.text and last.line == 10
