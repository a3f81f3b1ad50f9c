"""One explanation per flag: the evidence pane, ``y``, ``show``, the reports and ``scan --explain`` say the same.

For the outlier and for every other flag, the reason sentence the core computed (for the
outlier, the JSON ``detail`` of its record) must appear, word for word, in the text of each
view: the pane's rendered lines under Pilot, the ``y`` clipboard, ``musetui show``, the
Markdown and HTML reports, and ``scan --explain``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from musetui.app import MuseApp
from musetui.cli import main as cli
from musetui.core.index import Index
from musetui.core.report import verdict_line

from .flag_sessions import FLAGS, OUTLIER, SAMPLE, flag_root
from .helpers import current, main, press, settle

SIZE = (160, 48)


def run_cli(*args: str) -> str:
    """What the real CLI prints on stdout, run in this process."""
    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8")
    with contextlib.redirect_stdout(out):
        assert cli(list(args)) == 0
    out.flush()
    return buf.getvalue().decode("utf-8")


class _Text(HTMLParser):
    """The text content of an HTML page (what a reader sees, entities decoded)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    return "".join(parser.parts)


def squash(text: str) -> str:
    """Text without its whitespace: a sentence wrapped across a pane's lines still reads the same."""
    return re.sub(r"\s+", "", text)


def case(flag: str, tmp_path: Path) -> tuple[Path, Path]:
    """The root to open and the session file that carries ``flag``."""
    if flag == "outlier":
        return SAMPLE, OUTLIER
    root = flag_root(tmp_path, flag)
    return root, next(root.rglob("session.jsonl"))


def expected_sentences(flag: str, root: Path, target: Path) -> list[str]:
    """The verdict, its why, and the reasons of ``flag`` as the core states them (the outlier's: its JSON detail)."""
    s = next(x for x in Index([str(root)], workers=1, use_cache=False).scan().sessions if Path(x.abspath) == target)
    assert flag in s.attribution.flags
    verdict = [verdict_line(s), s.attribution.summary]
    if flag == "outlier":
        records = [json.loads(x) for x in run_cli("scan", str(root), "--json", "--no-cache").splitlines()]
        rec = next(r for r in records if target.as_posix().endswith(r["path"]))
        return verdict + [e["detail"] for e in rec["evidence"] if e["detector"] == "outlier"]
    return verdict + [r.text for r in s.attribution.reasons if r.flag == flag]


async def app_views(root: Path, target: Path) -> tuple[str, str]:
    """The evidence pane's rendered lines after ``o`` then ``5``, and what ``y`` then copies."""
    app = MuseApp([str(root)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "5")
        assert Path(current(app).abspath) == target
        pane = main(app).pane("evidence")
        lines = [pane.render_line(y).text for y in range(pane.size.height)]
        await press(pilot, "y")
        return "\n".join(lines), app.clipboard


@pytest.mark.parametrize("flag", ["outlier", *FLAGS])
async def test_every_view_gives_the_same_reason(flag: str, tmp_path: Path) -> None:
    root, target = case(flag, tmp_path)
    sentences = expected_sentences(flag, root, target)
    assert len(sentences) >= 3 and all(sentences)
    pane, copied = await app_views(root, target)
    html_out = tmp_path / "report.html"
    run_cli("report", str(root), "-o", str(html_out), "--format", "html")
    views = {
        "pane 5": pane,
        "y": copied,
        "show": run_cli("show", str(target)),
        "show --root": run_cli("show", str(target), "--root", str(root)),
        "report md": run_cli("report", str(root), "-o", "-", "--format", "md"),
        "report html": html_text(html_out.read_text(encoding="utf-8")),
        "scan --explain": run_cli("scan", str(root), "--explain"),
    }
    for name, text in views.items():
        for sentence in sentences:
            assert squash(sentence) in squash(text), f"{name} does not say: {sentence}\n---\n{text[:3000]}"
    assert copied == views["show --root"], "y copies exactly what show prints for the app's root"


async def test_the_outlier_is_stated_as_a_comparison_not_weighed_evidence() -> None:
    """Pane 5 and ``y`` state the outlier with its flag, never as an evidence record of weight 0."""
    pane, copied = await app_views(SAMPLE, OUTLIER)
    for text in (pane, copied):
        assert "outlier →" not in text and "**outlier**" not in text
        assert "provideropenaidiffersfrom3of3siblingsessions(meta)" in squash(text)
        assert "w 0.00" not in text and "weight 0.00, fleet" not in text


async def test_an_items_report_carries_the_flags_reasons() -> None:
    """``y`` on an item copies ``show --line N``, which states each flag's reason too."""
    app = MuseApp([str(SAMPLE)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "o", "enter", "j", "j", "j", "y")
        (reason,) = current(app).attribution.reasons
        assert "line 4" in app.clipboard and f"- **Flag outlier:** {reason.text}\n" in app.clipboard
        assert app.clipboard == run_cli("show", str(OUTLIER), "--line", "4", "--root", str(SAMPLE))
