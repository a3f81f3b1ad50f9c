"""The app with a head start (as ``musetui PATH`` runs it): rows read ahead by a child are shown once, then adopted."""

from __future__ import annotations

import shutil
from pathlib import Path

from musetui.app import MuseApp
from musetui.core.early import HeadStart

from .helpers import SIZE, main, settle, tree_rows


async def test_rows_read_ahead_are_on_the_first_frame_and_are_the_index_s_own(sample_root: str) -> None:
    head = _answered(HeadStart.start([sample_root], use_cache=True))  # (the app's imports give it this time)
    app = MuseApp([sample_root], head=head)
    async with app.run_test(size=SIZE) as pilot:
        scr = main(app)
        assert len(scr.session_tree.sessions) == 11  # on screen before the index has begun
        assert scr.first_batch_at is not None
        await settle(pilot)
        tree = scr.session_tree
        assert len(tree.sessions) == len({s.key for s in tree.sessions}) == 11
        index = scr.indexer.index
        assert all(index.result.by_key[s.key] is s for s in tree.sessions)  # one object per session, shared
        assert scr.status.index_text.startswith("Indexed: 11 sessions") and "1 outlier" in scr.status.index_text
        assert "avocado-1.3" in "\n".join(tree_rows(app))


async def test_a_session_that_changed_after_it_was_read_ahead_is_replaced(tmp_path: Path, sample_root: str) -> None:
    root = tmp_path / "root"
    shutil.copytree(sample_root, root)
    probe = HeadStart.start([str(root)], use_cache=False)
    assert probe is not None
    got = probe.take(30.0).outcomes()  # what a child reads ahead from this tree (the same each time)
    target = next(t for t in got if t[0].abspath.endswith("session.jsonl") and t[1].summary is not None)
    gone = next(t for t in got if t[1].summary is not None and t is not target)
    before = target[1].summary
    head = _answered(HeadStart.start([str(root)], use_cache=False))
    path = Path(target[0].abspath)
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))  # one record fewer now
    Path(gone[0].abspath).unlink()  # and another transcript was removed
    app = MuseApp([str(root)], use_cache=False, head=head)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = main(app).session_tree
        now = {s.key: s for s in tree.sessions}
        assert len(now) == len(tree.sessions) == 10
        assert gone[1].summary.key not in now
        fresh = now[before.key]
        assert fresh.items == before.items - 1
        assert fresh is main(app).indexer.index.result.by_key[before.key]


def _answered(head: HeadStart | None) -> HeadStart:
    """``head`` once its child has sent its answer (read, as the app would, only later)."""
    assert head is not None
    if head.ready(30.0):  # blocks on the child's pipe until its answer is there
        return head
    raise AssertionError("the head-start child did not answer in 30 s")


async def test_a_routed_session_says_via_which_router(tmp_path: Path, real_dir: Path) -> None:
    """The OpenRouter capture (SOURCES.md): its row, the items title and the verdict name the router."""
    root = tmp_path / "openrouter"
    root.mkdir()
    name = "tests__models__cassettes__test_openrouter__test_openrouter_tool_optional_parameters.yaml"
    shutil.copy(real_dir / "pydantic__pydantic-ai" / name, root / name)
    app = MuseApp([str(root)], use_cache=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        scr = main(app)
        (s,) = scr.session_tree.sessions
        assert (s.attribution.provider, s.attribution.via) == ("anthropic", "openrouter")
        assert any("anthropic/vertex" in row and "via openrouter" in row for row in tree_rows(app))
        scr.select_session(s, immediate=True)
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        evidence = scr.pane("evidence")
        evidence.render_now()
        assert "anthropic (host vertex) via openrouter · confidence" in evidence.plain  # (show's verdict wording)
