"""Transcript text is never markup and never drives the terminal."""

from __future__ import annotations

import json
from pathlib import Path

from musetui.app import MuseApp
from musetui.widgets.item_list import ItemList

from .helpers import SIZE, current, item_rows, main, press, settle, tree_rows

EVIL = "[bold]BOLD[/bold] [@click=app.quit]CLICK[/] \x1b[2J\x1b]52;c;aGVsbG8=\x07 \u202eevil\u202c [red]x"
EVIL_ID = "0aa0[bold]x\x1b[2J\u202e-id"
CONTROLS = ("\x1b", "\x07", "\u202e", "\u202c", "\x9b")


def _write_session(root: Path) -> Path:
    d = root / "sessions" / "0aa0-evil"
    d.mkdir(parents=True)
    base = {"stream": {"kind": "session", "id": EVIL_ID}, "recorded_at": 1788300100000000}
    lines = [
        {
            **base,
            "payload": {"kind": "metadata", "record": {"provider_id": "x[bold]", "model_id": EVIL}},
        },
        {**base, "payload": {"kind": "run", "event": {"kind": "started", "prompt": EVIL}}},
        {
            **base,
            "payload": {
                "kind": "run",
                "event": {
                    "kind": "assistant_message_committed",
                    "message_id": "m[bold]1",
                    "text": EVIL + "\n" + EVIL,
                },
            },
        },
        {
            **base,
            "payload": {
                "kind": "run",
                "event": {"kind": "reasoning_committed", "text": EVIL, "signature": ""},
            },
        },
    ]
    path = d / "session.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for obj in lines:
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        fh.write("{not json \x1b[2J [bold]\n")
    return path


def _clean(text: str) -> None:
    for c in CONTROLS:
        assert c not in text, repr(c)


async def test_markup_escapes_and_bidi_are_shown_as_text(tmp_path: Path) -> None:
    _write_session(tmp_path)
    app = MuseApp([str(tmp_path)])
    async with app.run_test(size=(260, 50)) as pilot:
        await settle(pilot)
        scr = main(app)
        assert len(scr.session_tree.sessions) == 1
        await press(pilot, "j", "enter")
        assert app.is_running
        assert isinstance(app.focused, ItemList)
        s = current(app)
        await press(pilot, "z")  # the items alone: the rows' text has the room to show it all
        rows = "\n".join(item_rows(app))
        _clean(rows)
        assert "[bold]BOLD[/bold]" in rows
        assert "[@click=app.quit]CLICK" in rows
        await press(pilot, "z")
        trows = "\n".join(tree_rows(app))
        _clean(trows)
        assert "[bold]" in trows or "0aa0" in trows
        for y in range(len(scr.items.items)):
            scr.items.cursor = y
            await settle(pilot)
            for pane_id in ("raw", "ids", "signature", "reasoning", "evidence"):
                scr.action_pane(pane_id)
                plain = scr.pane(pane_id).plain
                _clean(plain)
        scr.action_pane("reasoning")
        scr.items.cursor = 3
        await settle(pilot)
        scr.action_pane("reasoning")
        assert "[bold]BOLD[/bold]" in scr.pane("reasoning").plain
        scr.action_pane("raw")
        assert "[@click=app.quit]" in scr.pane("raw").plain
        await press(pilot, "y")
        _clean(app.clipboard)
        assert "[bold]" in app.clipboard
        await press(pilot, "backspace", "y")
        _clean(app.clipboard)
        assert s.session_id is not None
        snapshot = app.export_screenshot()
        _clean(snapshot)
        await pilot.click(ItemList, offset=(20, 2))
        await settle(pilot)
        assert app.is_running


async def test_notifications_escape_markup(tmp_path: Path) -> None:
    _write_session(tmp_path)
    app = MuseApp([str(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "j", "y")
        assert app.is_running
        notes = list(app._notifications)
        assert notes, "copy must notify"
        assert any("Copied evidence for" in n.message for n in notes)


async def test_a_session_id_that_is_broken_markup_is_a_plain_label(tmp_path: Path) -> None:
    """Tree labels given as str are parsed as markup: an unmatched closing tag used to crash."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    line = {
        "type": "user",
        "sessionId": "[/x] evil [/]",
        "uuid": "u1",
        "timestamp": "2026-09-01T00:00:00Z",
        "message": {"role": "user", "content": "hi"},
    }
    (proj / "s1.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    app = MuseApp([str(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        assert [s.session_id for s in scr.session_tree.sessions] == ["[/x] evil [/]"]
        assert "Indexed: 1 session" in scr.status.index_text
        node = scr.session_tree.node_for(scr.session_tree.sessions[0])
        assert node is not None and node.label.plain == "[/x] evil [/]"
