"""The command line's readable outputs for a person: the fitted scan table, show, search, help, fleet."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from rich.cells import cell_len

from musetui.cli import main

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"
OUTLIER = (
    "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/subagents/01a05efe-03bb-72c8-854a-4c1c088cc3b9/session.jsonl"
)


def _records(capsys: pytest.CaptureFixture[str], root: Path = SAMPLE) -> list[dict[str, object]]:
    assert main(["scan", str(root), "--json", "-q"]) == 0
    return [orjson.loads(x) for x in capsys.readouterr().out.splitlines()]


def _table(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int) -> tuple[list[str], str]:
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["scan", str(SAMPLE), "-q"]) == 0
    got = capsys.readouterr()
    return got.out.splitlines(), got.err


@pytest.mark.parametrize("width", [80, 120, 200])
def test_scan_table_fits_the_width_one_line_per_session(
    width: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """COLUMNS=80/120/200: one line per session within the width, the root once, values whole or cut with … (never split)."""
    records = _records(capsys)
    lines, err = _table(capsys, monkeypatch, width)
    assert lines[0] == f"root: {SAMPLE}" and not any(str(SAMPLE) in x for x in lines[1:])
    header, rows = lines[1], lines[2:]
    assert len(rows) == len(records) == 11
    assert err == "11 sessions, 1 flagged\n"
    assert all(cell_len(x) <= width for x in lines), [cell_len(x) for x in lines]
    names = re.split(r" {2,}", header[2:].strip())
    assert names[-1] == "path" and "provider" in names and "flags" in names
    for row, rec in zip(rows, records, strict=True):
        cells = dict(zip(names, re.split(r" {2,}", row[2:].strip()), strict=True))
        path = str(rec["path"])
        shown = cells["path"]
        head, cut, tail = shown.partition("…")  # whole, or a/…/c/d, …/c/d, …d: its start and end are the path's
        assert shown == path or (cut and path.startswith(head) and path.endswith(tail)), (shown, path)
        assert cells["provider"] == str(rec["provider"]) + (f"/{rec['host']}" if rec["host"] else "")  # never cut here
        assert cells["flags"] == (", ".join(rec["flags"]) or "-")  # type: ignore[arg-type]
        model = str(rec["declared_model"])
        if "declared model" in cells:
            assert cells["declared model"] == model or (
                cells["declared model"].endswith("…") and model.startswith(cells["declared model"][:-1])
            )
        assert row.startswith("⚑ ") == (path == OUTLIER)
    outlier = next(r for r in rows if r.startswith("⚑"))
    assert "outlier" in outlier and "muse-special" in outlier
    if width >= 120:  # the format, confidence and items columns have room, and the models are whole
        assert {"format", "conf", "items", "flags", "declared model"} <= set(names)
    if width == 200:
        assert all(row.endswith(str(rec["path"])) for row, rec in zip(rows, records, strict=True))
        assert all(f"  {rec['declared_model']}  " in row for row, rec in zip(rows, records, strict=True))


def test_scan_table_in_a_terminal_colours_the_flagged_row(tmp_path: Path) -> None:
    """On a TTY (a real pseudo-terminal) the outlier's row is coloured, others are not; NO_COLOR turns colour off."""

    def run(**env: str) -> list[str]:
        leader, follower = pty.openpty()
        full = {
            **{k: v for k, v in os.environ.items() if k != "NO_COLOR"},
            "COLUMNS": "120",
            "TERM": "xterm-256color",
            **env,
        }
        proc = subprocess.run(
            [sys.executable, "-m", "musetui", "scan", "-q", str(SAMPLE)],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=full,
            timeout=120,
            check=True,
        )
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(leader)
        assert proc.stderr.endswith(b"11 sessions, 1 flagged\n")
        return out.decode().replace("\r\n", "\n").splitlines()

    lines = run()
    flagged = [x for x in lines if "muse-special" in x]
    plain = [x for x in lines if "avocado-1.3" in x]
    assert len(lines) == 13 and len(flagged) == 1 and len(plain) == 4
    assert "\x1b[" in flagged[0] and not any("\x1b[" in x for x in plain)
    assert all(cell_len(re.sub(r"\x1b\[[0-9;]*m", "", x)) <= 120 for x in lines)
    colour = re.compile(r"\x1b\[(?:[0-9]+;)*(?:3[0-8]|9[0-7])[;m]")  # a foreground colour (bold stays)
    assert colour.search(flagged[0])
    assert not any(colour.search(x) for x in run(NO_COLOR="1"))


def test_show_takes_the_file_line_that_search_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """``search`` prints FILE:LINE; ``show FILE:LINE`` (and ``FILE:LINE:``) is ``show FILE --line LINE``."""
    assert main(["search", str(SAMPLE), "rs_0fb0962a440df430006a974b47304a81967cd5f8099555ab70"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    m = re.match(r"(.+):([0-9]+): ", first)
    assert m is not None, first
    assert main(["show", m.group(1), "--line", m.group(2)]) == 0
    expected = capsys.readouterr().out
    assert "line 4" in expected.splitlines()[0]
    for arg in (f"{m.group(1)}:{m.group(2)}", f"{m.group(1)}:{m.group(2)}:"):
        assert main(["show", arg]) == 0
        assert capsys.readouterr().out == expected
    assert main(["show", f"{m.group(1)}:{m.group(2)}", "--line", "5"]) == 2
    assert "names line 4, --line 5" in capsys.readouterr().err


def test_show_json_is_the_scan_record_plus_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    """``show --json``: the session's scan record (same names and values), plus file, format_rule, notes and item."""
    scanned = next(r for r in _records(capsys) if r["path"] == OUTLIER)
    target = SAMPLE / OUTLIER
    assert main(["show", str(target), "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert list(report)[: len(scanned)] == list(scanned)
    assert list(report)[len(scanned) :] == ["file", "format_rule", "notes", "item"]
    assert Path(report["root"], report["path"]) == target
    # show indexes the session with its family (its parent's directory), not the whole sample: the
    # parent id (read from the path above that directory) and the outlier's wording are not compared
    context = ("root", "path", "parent_session_id", "evidence")
    assert {k: v for k, v in report.items() if k in scanned and k not in context} == {
        k: v for k, v in scanned.items() if k not in context
    }
    assert [e for e in report["evidence"] if e["detector"] != "outlier"] == [
        e
        for e in scanned["evidence"]
        if e["detector"] != "outlier"  # type: ignore[union-attr]
    ]
    assert report["file"]["abspath"] == str(target) and report["file"]["size"] == target.stat().st_size
    assert len(report["file"]["sha256"]) == 64 and report["item"] is None
    assert main(["show", f"{target}:4", "--json"]) == 0
    item_report = orjson.loads(capsys.readouterr().out)
    item = item_report.pop("item")
    report.pop("item")
    assert item_report == report
    assert main(["show", str(target), "--line", "4"]) == 0
    markdown = capsys.readouterr().out
    assert item["line"] == item["last_line"] == 4 and item["kind"] == "reasoning"
    assert [d["detector"] for d in item["decoded"]] == re.findall(r"^- \*\*([\w-]+)\*\* `", markdown, re.M)
    assert f"sha256 of the raw line:** `{item['sha256']}`" in markdown
    assert orjson.loads(item["raw"])["payload"]["event"]["message_id"].startswith("rs_0fb0962a")


def _no_local_transcripts(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    for var in ("MUSE_SESSIONS_DIR", "MUSE_DATA_DIR", "MUSE_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)


def test_scan_without_path_scans_the_discovered_roots_and_says_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No PATH: the roots the app discovers (here ~/.codex/sessions and CLAUDE_CONFIG_DIR/projects), named on stderr."""
    import shutil

    _no_local_transcripts(monkeypatch, tmp_path)
    shutil.copytree(SAMPLE / "codex" / "sessions", tmp_path / ".codex" / "sessions")
    shutil.copytree(SAMPLE / "claude" / "projects", tmp_path / "cc" / "projects")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert main(["scan", "--json", "--no-cache"]) == 0
    got = capsys.readouterr()
    records = [orjson.loads(x) for x in got.out.splitlines()]
    assert (
        sorted((r["format"], r["root"]) for r in records)
        == [("claude-code", str(tmp_path / "cc" / "projects"))] * 2
        + [("codex", str(tmp_path / ".codex" / "sessions"))] * 2
    )
    assert got.err == "musetui: scanning ~/.codex/sessions, ~/cc/projects\n"  # HOME is tmp_path
    assert main(["scan", "--json", "--no-cache", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_scan_without_path_and_nothing_to_find_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing discovered: exit 2 with one line naming the places looked in (no silent fallback to the sample)."""
    _no_local_transcripts(monkeypatch, tmp_path)
    assert main(["scan", "--json"]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    assert got.err == (
        "musetui scan: no PATH given and no transcripts in ~/.local/share/muse/sessions, ~/.codex/sessions, "
        "~/.codex/archived_sessions, ~/.claude/projects; give a PATH\n"
    )


def test_an_empty_search_says_so_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """No hit: nothing on stdout, one line on stderr, exit 1 (as grep and rg; the README's exit codes)."""
    for extra in ([], ["--json"]):
        assert main(["search", str(SAMPLE), "zzzq-no-such-text", *extra]) == 1
        got = capsys.readouterr()
        assert got.out == ""
        assert got.err == f"musetui search: no hits for 'zzzq-no-such-text' in {SAMPLE}\n"


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def _fields(text: str) -> list[str]:
    m = re.search(r"\{([a-z_, ]+)\}", text)
    assert m is not None, text
    return m.group(1).split(", ")


def test_help_names_the_json_fields_the_output_has(capsys: pytest.CaptureFixture[str]) -> None:
    """``search --help`` and ``fleet --help`` list exactly the keys their ``--json`` objects have."""
    assert main(["search", str(SAMPLE), "avocado", "--json", "--limit", "1"]) == 0
    hit = orjson.loads(capsys.readouterr().out)
    assert _fields(_help(capsys, "search")) == list(hit)
    assert main(["fleet", str(SAMPLE), "--json"]) == 0
    machine = orjson.loads(capsys.readouterr().out)
    assert _fields(_help(capsys, "fleet")) == list(machine)
    scan_help = _help(capsys, "scan")
    assert "default: the Muse, Codex and Claude Code directories" in scan_help and "--workers N" in scan_help


def test_fleet_text_is_aligned_and_counts_are_plural_only_when_more_than_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``1 machine``; numbers right-aligned under their headers; each column of the sessions list starts in one place."""
    assert main(["fleet", str(SAMPLE)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "fleet: 1 machine, 11 sessions: meta 4, openai 4, anthropic 3" in out
    header, row = out[0], out[1]
    for name in ("rank", "score", "sessions", "flagged", "mismatches"):  # right-aligned: ends under the header's end
        end = header.index(name) + len(name)
        assert row[end - 1] != " " and (end == len(row) or row[end] == " "), name
    assert row[header.index("root") :].startswith(str(SAMPLE))
    assert main(["fleet", str(SAMPLE), str(SAMPLE / "claude")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "fleet: 2 machines, 13 sessions: anthropic 5, meta 4, openai 4" in out
    table = out[out.index("most unusual sessions across the fleet:") + 1 :]
    head = table[0]
    starts = [head.index(n) for n in ("provider", "flags", "session")]
    assert len(table) > 5 and any("openai/azure" in x for x in table) and any(" rare " in x for x in table)
    for line in table[1:]:
        assert all(line[s - 2 : s] == "  " and line[s] != " " for s in starts), line


def test_the_docs_ship_in_the_wheel_and_musetui_help_names_them(tmp_path: Path) -> None:
    """docs/ is force-included in the wheel (as musetui/_docs, beside the sample); ``musetui --help`` names the installed copy."""
    import importlib.util
    import shutil
    import tomllib
    import zipfile

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    force = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force["docs"] == "musetui/_docs" and (REPO / "docs" / "fingerprints.md").is_file()
    site = tmp_path / "site"  # an install laid out as the wheel is: the package, each force-include at its target
    shutil.copytree(REPO / "musetui", site / "musetui", ignore=shutil.ignore_patterns("__pycache__"))
    for source, target in force.items():
        shutil.copytree(REPO / source, site / target)
    proc = subprocess.run(
        [sys.executable, "-m", "musetui", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        timeout=60,
        check=True,
    )
    m = re.search(r"Documentation: (\S+) ", " ".join(proc.stdout.split()))
    assert m is not None, proc.stdout
    assert Path(m.group(1)) == site / "musetui" / "_docs" / "fingerprints.md"
    assert Path(m.group(1)).read_bytes() == (REPO / "docs" / "fingerprints.md").read_bytes()
    if importlib.util.find_spec("hatchling") is not None:  # where the build backend is installed, build the real wheel
        from hatchling.builders.wheel import WheelBuilder

        (wheel,) = WheelBuilder(str(REPO)).build(directory=str(tmp_path / "dist"), versions=["standard"])
        assert "musetui/_docs/fingerprints.md" in zipfile.ZipFile(wheel).namelist()


def test_scan_table_fits_every_width_with_wide_characters(tmp_path: Path) -> None:
    """From 20 to 250 columns, every line fits, a row per session, even with double-width names cut."""
    import shutil

    from musetui.core import scan_table as st
    from musetui.core.index import Index

    deep = tmp_path / "项目-非常长的目录名字-用来测试宽字符" / "会话"
    shutil.copytree(SAMPLE / "claude", deep)
    sessions = Index([str(SAMPLE), str(tmp_path)], workers=1, use_cache=False).scan().sessions
    names = {str(SAMPLE): "sample", str(tmp_path): "wide"}
    rows = list(st.rows_of(st.table_order(sessions, names), names))
    assert len(rows) == 13
    for width in range(20, 251, 3):
        lines = [text for text, _row in st.render(rows, st.layout(rows, width))]
        assert all(cell_len(x) <= width for x in lines), (width, max(lines, key=cell_len))
        assert len(lines) == 13 + 2 + 1 + 1  # two root lines, the header, a blank line between the roots
        assert [x[:2] for x in lines if x.startswith(("⚑", "!"))] == ["⚑ "]
