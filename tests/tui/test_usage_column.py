"""The tree's tokens column: each session's input plus output tokens, under its header, where the width allows."""

from __future__ import annotations

from musetui.app import MuseApp
from musetui.widgets.tree_header import TreeHeader

from .helpers import main, settle


async def test_the_tree_shows_each_sessions_tokens(sample_root: str) -> None:
    """At 80×24 the tree has the screen's width: the tokens column fits beside whole model names."""
    app = MuseApp([sample_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        header = app.screen.query_one(TreeHeader).render().plain  # type: ignore[union-attr]
        assert "tokens" in header, header
        end = header.index("tokens") + len("tokens")
        tree = main(app).session_tree
        rows = [tree.render_line(y).text for y in range(tree.row_count)]
        # The Muse parent: 42,936 in + 3,031 out (its model_completed events, checked by hand).
        (muse,) = [r for r in rows if "01a05e" in r and "avocado-1.3" in r and "meta" in r and " 30 " in r]
        assert muse[end - 6 : end] == " 46.0k", muse


async def test_no_tokens_column_without_usage(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path)) / "t"
    root.mkdir()
    (root / "a.jsonl").write_text('{"hello": "world"}\n')
    app = MuseApp([str(root)])
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        header = app.screen.query_one(TreeHeader).render().plain  # type: ignore[union-attr]
        assert "items" in header and "tokens" not in header, header
