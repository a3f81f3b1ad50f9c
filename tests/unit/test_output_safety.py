"""No control, bidi or invisible character of a transcript reaches any text output, and no Markdown output is live.

The hostile tree (``tests/hostile.py``) puts every Bidi_Control and Default_Ignorable_Code_Point
character, and every C0/C1 control, in a session id, a declared provider and model, a file
name and the transcript's texts, next to Markdown and HTML payloads. Every output of
``scan`` (table and ``--json``), ``show`` (session and line), ``search`` (text and
``--json``), ``report`` (Markdown and HTML) and ``fleet`` is read whole.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hostile import MD_PAYLOAD, MODEL, NAMED, SESSION_ID, TEXT, assert_inert, hostile_tree, leaks

from musetui.cli import main
from musetui.core.diagnostics import escape_name


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(root of the hostile tree, the hostile session's file)."""
    return tmp_path / "muse-vm", hostile_tree(tmp_path)


def _line_of(path: Path, needle: str) -> int:
    for i, raw in enumerate(path.read_text("utf-8").splitlines(), 1):
        if needle in raw:
            return i
    raise AssertionError(needle)


def test_scan_table_shows_names_visibly_and_nothing_raw(
    tree: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, target = tree
    for extra in (["--no-cache"], [], []):  # cold without cache, cold with, warm
        code, out, err = _run(capsys, "scan", str(root), *extra)
        assert code == 0
        assert leaks(out + err) == []
        row = next(line for line in out.splitlines() if "outlier" in line)
        for c in NAMED:  # shown, not obeyed and not dropped
            assert f"\\u{ord(c):04x}" in row
        assert escape_name(str(target.relative_to(root))) in out  # (the root is printed once above)


def test_scan_json_escapes_and_keeps_the_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / f"r{NAMED}\u3164"  # a root whose own name is hostile too
    base.mkdir()
    target = hostile_tree(base)
    root = base / "muse-vm"
    sibling = next(p for p in root.rglob("session.jsonl") if p != target)
    for extra in (
        ["--no-cache"],
        [],
        [],
        ["touch"],
    ):  # no cache, cold, warm (stored output), stored records
        if extra == ["touch"]:
            with sibling.open("ab") as fh:
                fh.write(sibling.read_bytes().splitlines(keepends=True)[-1])
            extra = []
        code, out, err = _run(capsys, "scan", str(root), "--json", *extra)
        assert code == 0
        assert leaks(out + err) == []  # only JSON escapes: the raw characters never appear
        recs = list(map(orjson.loads, out.splitlines()))
        (rec,) = [r for r in recs if "outlier" in r["flags"]]
        assert rec["declared_model"] == MODEL.strip()  # the data contract: the same value
        assert rec["session_id"] == SESSION_ID
        assert rec["path"] == str(target.relative_to(root))
        assert {r["root"] for r in recs} == {str(root)}


def test_show_and_show_line(tree: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _root, target = tree
    code, out, err = _run(capsys, "show", escape_name(str(target)))
    assert code == 0, err
    assert leaks(out + err) == []
    assert "\\u061c" in out and "\\u2066" in out  # the id, the model and the path show them
    code, out, err = _run(capsys, "show", str(target), "--line", str(_line_of(target, "needle")))
    assert code == 0, err
    assert leaks(out + err) == []
    assert "needle" in out


def test_search_text_and_json(tree: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    root, _target = tree
    code, out, err = _run(capsys, "search", str(root), "needle")
    assert code == 0 and out
    assert leaks(out + err) == []
    code, out, err = _run(capsys, "search", str(root), "needle", "--json")
    assert code == 0 and out
    assert leaks(out + err) == []
    assert any(r["session_id"] == SESSION_ID for r in map(orjson.loads, out.splitlines()))


def test_report_markdown_and_html(tree: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _target = tree
    code, out, err = _run(capsys, "report", str(root), "-o", "-")
    assert code == 0, err
    assert leaks(out + err) == []
    assert "\\u061c" in out
    html_file = tmp_path / "r.html"
    code, _out, err = _run(capsys, "report", str(root), "-o", str(html_file))
    assert code == 0, err
    page = html_file.read_text("utf-8")
    assert leaks(page) == []
    assert "\\u061c" in page and "<img src=x" not in page and "<script>alert" not in page


def test_fleet_text(tree: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    root, _target = tree
    code, out, err = _run(capsys, "fleet", str(root))
    assert code == 0, err
    assert leaks(out + err) == []


def test_timeline_text_and_json(tree: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    root, _target = tree
    for extra in ([], ["--json"]):
        code, out, err = _run(capsys, "timeline", str(root), *extra)
        assert code == 0 and out, err
        assert leaks(out + err) == []


def test_names_that_differ_only_by_invisible_characters_look_different(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "r"
    (root / "p").mkdir(parents=True)
    names = ["a", "a\u3164", "a\u034f", "a\ufe0f", "a\ufff9", "a\U000e0041", "a\u200b"]
    for i, n in enumerate(names):
        line = {
            "type": "user",
            "sessionId": f"s{n}",
            "uuid": f"u{i}",
            "timestamp": "2026-09-01T00:00:00Z",
            "message": {"role": "user", "content": "hi", "model": f"m{n}"},
        }
        (root / "p" / f"{n}.jsonl").write_bytes(orjson.dumps(line) + b"\n")
    code, out, _ = _run(capsys, "scan", str(root), "--no-cache")
    lines = out.splitlines()
    assert lines[0] == f"root: {escape_name(str(root))}"  # the table prints the root once, then a header
    rows = [line for line in lines[2:] if line.strip()]
    assert code == 0 and len(rows) == len(names)
    assert len(set(rows)) == len(names)
    shown = {row.split("  ")[-1].strip() for row in rows}
    assert shown == {escape_name(f"p/{n}.jsonl") for n in names}
    assert all(s.isprintable() for s in shown)
    for n in names:  # show accepts every path as printed, and its heading tells the ids apart
        code, md, err = _run(capsys, "show", escape_name(f"{root}/p/{n}.jsonl"))
        assert code == 0, err
        assert f"`{escape_name('s' + n)}`" in md


# -- Markdown -------------------------------------------------------------------------------


def test_markdown_outputs_are_inert(tree: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    root, target = tree
    outputs = []
    for argv in (
        ["show", str(target)],
        ["show", str(target), "--line", str(_line_of(target, "needle"))],
        ["show", str(target), "--line", "1"],
        ["report", str(root), "-o", "-"],
    ):
        code, out, err = _run(capsys, *argv)
        assert code == 0, err
        outputs.append(out)
        assert_inert(out)
    assert "<img src=x" in outputs[0] and "[a](http://127.0.0.1/)" in outputs[0]  # shown as text, in code spans
    assert "<img src=x" in outputs[1] and TEXT.split()[0] in outputs[1]


def test_markdown_of_a_payload_everywhere_is_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same payload as a file name, an id, a model, a provider, a field and a text (a Claude Code session)."""
    root = tmp_path / "projects" / "p"
    root.mkdir(parents=True)
    payload = MD_PAYLOAD.replace("/", "∕")  # (a file name holds no slash)
    line = {
        "type": "assistant",
        "sessionId": MD_PAYLOAD,
        "uuid": "u1",
        "timestamp": "2026-09-01T00:00:00Z",
        "message": {
            "role": "assistant",
            "model": MD_PAYLOAD,
            "id": "msg_01" + "A" * 22,
            "content": [{"type": "text", "text": MD_PAYLOAD}],
            MD_PAYLOAD: MD_PAYLOAD,
        },
    }
    path = root / f"{payload}.jsonl"
    path.write_bytes(orjson.dumps(line) + b"\n")
    for argv in (
        ["show", str(path)],
        ["show", str(path), "--line", "1"],
        ["report", str(tmp_path), "-o", "-"],
    ):
        code, out, err = _run(capsys, *argv)
        assert code == 0, err
        assert_inert(out)
