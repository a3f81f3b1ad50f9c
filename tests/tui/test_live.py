"""Live follow: a session appended to while the app is open shows its new items."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from musetui.app import MuseApp

from .helpers import OUTLIER_ID, SIZE, current, main, press, settle, wait_for

OUTLIER_REL = (
    "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/subagents/01a05efe-03bb-72c8-854a-4c1c088cc3b9/session.jsonl"
)


def append_message(root: Path, message_id: str, text: str) -> None:
    """Append one committed assistant message to the outlier worker's session."""
    line = {
        "stream": {"kind": "session", "id": OUTLIER_ID},
        "recorded_at": 1788300200000000,
        "payload": {
            "kind": "run",
            "event": {"kind": "assistant_message_committed", "message_id": message_id, "text": text},
        },
    }
    with open(root / OUTLIER_REL, "ab") as f:
        f.write(orjson.dumps(line) + b"\n")


@pytest.fixture
def live_tree(tmp_path: Path, sample_root: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sample to change under the app, with live follow polling every 0.2 s."""
    monkeypatch.setenv("MUSETUI_LIVE_INTERVAL", "0.2")
    root = tmp_path / "tree"
    shutil.copytree(sample_root, root)
    return root


async def test_appended_items_appear_within_two_seconds(live_tree: Path) -> None:
    root = live_tree
    app = MuseApp([str(root)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        assert scr.status.index_text.endswith("· live")
        await press(pilot, "o")
        s = current(app)
        assert s.session_id == OUTLIER_ID
        await settle(pilot)
        before = len(scr.items.items)
        assert before == s.items
        append_message(root, "m-live", "appended live")
        await wait_for(pilot, lambda: len(scr.items.items) > before, timeout=2.0)
        assert len(scr.items.items) == before + 1, "the new item shows within 2 s"
        assert scr.items.items[-1].text == "appended live"
        assert current(app).items == before + 1
        assert "live" in scr.status.index_text and "1 updated" in scr.status.index_text
        assert "outlier" in current(app).attribution.flags


async def test_a_deleted_session_leaves_the_tree(live_tree: Path) -> None:
    root = live_tree
    app = MuseApp([str(root)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scr = main(app)
        tree = scr.session_tree
        codex = [s for s in tree.sessions if s.format == "codex"]
        before = len(tree.sessions)
        victim = min(codex, key=lambda s: s.path)
        assert tree.node_for(victim) is not None
        (root / victim.path).unlink()
        await wait_for(pilot, lambda: victim.key not in {s.key for s in tree.sessions}, timeout=2.0)
        await settle(pilot)
        assert victim.key not in {s.key for s in tree.sessions}, "the deleted session leaves within 2 s"
        assert len(tree.sessions) == before - 1
        assert tree.node_for(victim) is None
        assert all(s.key != victim.key for s in tree.ordered())
        assert "-1 gone" in scr.status.index_text
        # The rest of the tree still works: the outlier is one key away.
        await press(pilot, "o")
        assert current(app).session_id == OUTLIER_ID


async def test_open_search_results_follow_new_lines(live_tree: Path) -> None:
    """With / open, a line that live follow brings in joins the hits (issue: results update)."""
    from musetui.screens.search import SearchScreen

    root = live_tree
    app = MuseApp([str(root)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"zephyrine")
        await settle(pilot)
        state = main(app).search_state
        assert state.done and state.total == 0
        append_message(root, "m-z", "zephyrine")
        await wait_for(pilot, lambda: state.done and state.total == 1, timeout=4.0)
        assert state.done and state.total == 1, "the open search re-ran on the new line"
        hit = state.hits[0]
        assert hit.session_id == OUTLIER_ID and "zephyrine" in hit.snippet
