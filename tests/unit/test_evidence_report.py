"""``musetui report``: contents, one source of truth with ``show``, escaping, and a real browser."""

from __future__ import annotations

import hashlib
import html as html_lib
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from musetui.cli import main
from musetui.core import evidence_report as er
from musetui.core import report_html, report_page
from musetui.core.fingerprints.types import Decoded
from musetui.core.model import Item, SessionSummary, iso
from musetui.core.reasons import flag_sentences
from musetui.core.report import session_markdown
from musetui.core.report_html import breakable, segments_table, strongest_line

SNAPSHOT = Path(__file__).with_name("snapshots") / "evidence_report.md"
MUSE_SPECIAL = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"

HOSTILE_ID = "javascript:alert(1)//<script>alert('id')</script>"
HOSTILE_MODEL = "claude-3-opus<script>alert('model')</script><img src=x onerror=alert(1)>"
HOSTILE_TEXT = (
    "</textarea><script>alert('text')</script><img src=x onerror=alert(2)> \x1b[31mred\u202e [x](javascript:alert(3))"
)
HOSTILE_NAME = "<img src=x onerror=alert(4)>.json"


def _hostile_tree(root: Path) -> Path:
    """Three ordinary OpenAI chat captures and one whose id, model, text and file name are markup."""
    root.mkdir()
    for i in (1, 2, 3):
        rec = {
            "id": f"chatcmpl-{i}",
            "object": "chat.completion",
            "created": 1788300000,
            "model": "gpt-4o",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}}],
        }
        (root / f"ok{i}.json").write_text(json.dumps(rec) + "\n")
    bad = {
        "id": HOSTILE_ID,
        "object": "chat.completion",
        "created": 1788300000,
        "model": HOSTILE_MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": HOSTILE_TEXT}}],
    }
    (root / HOSTILE_NAME).write_text(json.dumps(bad) + "\n")
    (root / "broken.jsonl").write_bytes(b'{"x": "</textarea><script>alert(5)</script>\n')
    return root


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside script elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def _assert_inert(html: str) -> _Tags:
    """Nothing in the document loads, links out or runs, except the report's own script."""
    parser = _Tags()
    parser.feed(html)
    names = [t for t, _ in parser.tags]
    assert names.count("script") == 1
    assert parser.scripts == [report_page.SCRIPT]
    for forbidden in (
        "img",
        "iframe",
        "object",
        "embed",
        "link",
        "textarea",
        "form",
        "base",
        "video",
        "audio",
        "source",
    ):
        assert forbidden not in names, forbidden
    for tag, attrs in parser.tags:
        for k, v in attrs:
            assert not k.startswith("on"), (tag, k, v)
            if k in ("src", "srcset", "action", "formaction", "xlink:href", "background", "poster"):
                raise AssertionError(f"{tag} has {k}={v!r}")
            if k == "href":
                assert v is not None and v.startswith("#"), (tag, v)
    assert "url(" not in html and "@import" not in html
    return parser


def _report(paths: list[str], fmt: str, tmp_path: Path) -> str:
    out = tmp_path / f"r.{fmt}"
    assert main(["report", *paths, "-o", str(out), "--no-cache"]) == 0
    return out.read_text(encoding="utf-8")


def test_sample_html_names_the_outlier_with_evidence_hashes_and_a_chart(sample_dir: Path, tmp_path: Path) -> None:
    html = _report([str(sample_dir)], "html", tmp_path)
    _assert_inert(html)
    assert "<svg" in html and 'aria-label="sessions over time"' in html and 'aria-label="provider mix"' in html
    flagged = html.split('id="flagged"', 1)[1].split('id="sessions"', 1)[0]
    first = flagged.split('<section class="session"', 2)[1]
    assert MUSE_SPECIAL in first and "outlier" in first and "muse-special" in first
    assert "differs from 3 of 3 sibling sessions" in first  # the evidence of the outlier flag
    worker = next(sample_dir.rglob(f"{MUSE_SPECIAL}/session.jsonl"))
    assert hashlib.sha256(worker.read_bytes()).hexdigest() in html
    for f in sample_dir.rglob("*.json*"):  # every examined file is in the appendix with its hash
        if not f.name.endswith(".meta.json"):
            assert hashlib.sha256(f.read_bytes()).hexdigest() in html, f
    assert "default-src &#x27;none&#x27;" in html  # a CSP that forbids every load


def test_markdown_evidence_is_the_show_markdown(sample_dir: Path) -> None:
    data = er.collect([str(sample_dir)], use_cache=False)
    md = er.render_markdown(data)
    flagged = er.flagged_sessions(data.sessions)
    assert [s.session_id for s in flagged][:1] == [MUSE_SPECIAL]
    for s in flagged:
        assert session_markdown(s).rstrip("\n") in md


class _Text(HTMLParser):
    """The text a reader sees (outside style and script), one string per text node."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self._skip = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip = tag in ("style", "script")

    def handle_endtag(self, tag: str) -> None:
        self._skip = False

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def _visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return "\n".join(parser.text)


def test_html_evidence_is_html_with_the_facts_of_show(sample_dir: Path) -> None:
    """Cards and tables, not Markdown in a <pre>; every reason, value and detail that ``show`` prints."""
    data = er.collect([str(sample_dir)], use_cache=False)
    html = report_page.render_html(data)
    text = _visible_text(html)
    for markdown in ("- **", "**Verdict:**", "**Why:**", "#### ", "```"):
        assert markdown not in text, markdown
    assert not re.search(r"`[^`\n]+`", text), re.findall(r"`[^`\n]+`", text)[:3]  # no backtick-wrapped value
    assert '<pre class="evidence">' not in html
    flagged = er.flagged_sessions(data.sessions)
    sections = html.split('<section class="session"')[1:]
    assert len(sections) == len(flagged) >= 1
    for s, section in zip(flagged, sections, strict=True):
        assert 'class="card verdict"' in section and '<table class="evidence">' in section
        for flag, reason in flag_sentences(s.attribution.flags, s.attribution.reasons):
            assert report_html.esc(flag) in section and report_html.esc(reason) in section
        for e in s.attribution.evidence:
            if e.detector != "outlier":
                assert report_html.esc(e.value) in section and report_html.esc(e.detail) in section
    first = sections[0]
    worker = next(sample_dir.rglob(f"{MUSE_SPECIAL}/session.jsonl"))
    lines = worker.read_bytes().split(b"\n")
    line = strongest_line(flagged[0])
    assert line is not None and f"Raw line {line}" in first
    assert report_html.esc(lines[line - 1].decode()) in first  # the raw line, escaped, in a monospace block
    assert '<pre class="raw">' in first and '<table class="decoded">' in first


def test_the_raw_line_and_decoded_fields_are_text_not_markup() -> None:
    """A raw line and decoded fields full of markup, escapes and bidi controls reach the page inert."""
    raw = json.dumps({"id": "chatcmpl-1", "content": HOSTILE_TEXT}).encode() + b"\x1b[2J"
    item = Item(index=0, line=7, offset=100, length=len(raw), kind="message", role="<b>assistant</b>")
    dec = Decoded(
        "openai-item-id",
        HOSTILE_ID,
        "openai",
        None,
        "strong",
        "verified",
        fields=(("<i>layout</i>", HOSTILE_MODEL),),
        meaning=HOSTILE_TEXT,
        problems=("<u>bad</u>",),
    )
    block = report_html.raw_block(report_html.RawLine(item, raw, [dec]))
    _assert_inert(f"<script>{report_page.SCRIPT}</script>" + block)
    for bad in ("<script>alert", "<img", "</textarea>", "<b>", "<i>", "<u>", "\x1b", "\u202e"):
        assert bad not in block, bad
    assert (
        '<pre class="raw">' in block and report_html.esc(HOSTILE_ID) in block and "&lt;i&gt;layout&lt;/i&gt;" in block
    )


def test_flagged_session_shows_its_title_and_time_span(sample_dir: Path) -> None:
    """The muse-special worker's title is its first prompt (Muse's ``started`` event), cleaned."""
    worker = next(sample_dir.rglob(f"{MUSE_SPECIAL}/session.jsonl"))
    started = next(json.loads(x) for x in worker.read_text().splitlines() if '"started"' in x)
    prompt = started["payload"]["event"]["prompt"]
    data = er.collect([str(sample_dir)], use_cache=False)
    first = report_page.render_html(data).split('<section class="session"', 2)[1]
    heading = re.search(r'<span class="title">(.*?)</span>', first)
    assert heading is not None
    shown = html_lib.unescape(heading.group(1))
    assert shown.rstrip("…") and prompt.startswith(shown.rstrip("…")) and len(shown) > 60
    s = er.flagged_sessions(data.sessions)[0]
    assert s.started_at is not None and s.ended_at is not None
    for t in (s.started_at, s.ended_at):
        assert report_html.esc(iso(t)) in first


def test_segments_are_shown_when_the_record_has_them(sample_dir: Path) -> None:
    """No segments table without segments; one row per segment, as dicts (the record) or objects."""
    data = er.collect([str(sample_dir)], use_cache=False)
    s = er.flagged_sessions(data.sessions)[0]
    if not getattr(s, "segments", None):
        assert segments_table(s) == ""
    seg = {
        "first_line": 3,
        "last_line": 9,
        "items": 5,
        "provider": "openai",
        "host": "<azure>",
        "started_at": s.started_at,
        "ended_at": s.ended_at,
    }
    for form in (seg, SimpleNamespace(**seg)):
        shown = segments_table(cast(SessionSummary, SimpleNamespace(segments=[form])))
        assert "3–9" in shown and "&lt;azure&gt;" in shown and report_html.esc(iso(s.started_at)) in shown


def test_paths_break_at_slashes_and_the_appendix_path_column_is_wide(sample_dir: Path) -> None:
    data = er.collect([str(sample_dir)], use_cache=False)
    html = report_page.render_html(data)
    appendix = html.split('id="sessions"', 1)[1].split('id="files"', 1)[0]
    assert '<col class="c-path">' in appendix
    width = re.search(r"table\.sessions col\.c-path \{ width: (\d+)%", report_html.CSS)
    assert width is not None and int(width.group(1)) >= 20
    assert "muse-vm/<wbr>sessions/<wbr>" in appendix
    assert breakable("a/<b>/c") == "a/<wbr>&lt;b&gt;/<wbr>c"
    assert "@media print" in report_html.CSS and "break-before: page" in report_html.CSS


def _normalised(data: er.ReportData, repo: Path) -> str:
    """The Markdown with what varies between checkouts fixed, and each session's evidence elided."""
    data.generated_at = 1_800_000_000.0
    data.catalogue = "sha256:<catalogue>"
    for f in data.files:
        f.mtime_ns = 0
    md = er.render_markdown(data)
    for s in er.flagged_sessions(data.sessions):
        md = md.replace(session_markdown(s).rstrip("\n"), f"<session_markdown of {s.path}>")
    return re.sub(r"\b[0-9a-f]{64}\b", lambda m: m.group(0) if m.group(0) in md_hashes(data) else "<seal>", md).replace(
        str(repo), "<repo>"
    )


def md_hashes(data: er.ReportData) -> set[str]:
    """The input files' hashes (kept in the snapshot); any other 64-hex value is the report's own hash."""
    return {f.sha256 for f in data.files} | {er.SEAL_ZEROS}


def test_markdown_snapshot(sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(sample_dir.parent)
    data = er.collect([sample_dir.name], use_cache=False)
    md = _normalised(data, sample_dir.parent)
    if os.environ.get("MUSETUI_UPDATE_SNAPSHOTS") or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(md, encoding="utf-8")
    assert md == SNAPSHOT.read_text(encoding="utf-8"), "run with MUSETUI_UPDATE_SNAPSHOTS=1 after a deliberate change"


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_the_report_carries_its_own_hash(fmt: str, sample_dir: Path, tmp_path: Path) -> None:
    """The stated hash is the sha256 of the file with that hash written as 64 zeros (its own check command)."""
    text = _report([str(sample_dir)], fmt, tmp_path)
    found = re.findall(r"sha256 of this report:\D*?([0-9a-f]{64})", text)
    assert len(found) == 1
    digest = found[0]
    check = er.seal_check(digest)
    assert (report_html.esc(check) if fmt == "html" else check) in text
    assert hashlib.sha256(text.replace(digest, er.SEAL_ZEROS).encode("utf-8")).hexdigest() == digest
    changed = text.replace("sessions", "Sessions", 1)
    assert hashlib.sha256(changed.replace(digest, er.SEAL_ZEROS).encode("utf-8")).hexdigest() != digest


def test_injection_reaches_nothing_unescaped(tmp_path: Path) -> None:
    tree = _hostile_tree(tmp_path / "tree")
    html = _report([str(tree)], "html", tmp_path)
    _assert_inert(html)
    for raw in ("<script>alert", "<img", "</textarea>", "\x1b", "\u202e"):
        assert raw not in html, raw
    # What the transcript said did reach the report, as text.
    assert (
        report_html.esc(HOSTILE_ID) in html
        and report_html.esc(HOSTILE_MODEL) in html
        and report_html.esc(HOSTILE_NAME) in html
    )
    md = _report([str(tree)], "md", tmp_path)
    assert "\x1b" not in md and "\u202e" not in md
    assert "outlier" in md and HOSTILE_ID in md  # the hostile session is the flagged one


def test_stdout_is_markdown_and_bad_extensions_are_usage_errors(
    sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(sample_dir), "-o", "-", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# musetui evidence report") and "## Appendix B: every file" in out
    assert main(["report", str(sample_dir), "-o", str(tmp_path / "r.pdf")]) == 2
    assert "use .html or .md" in capsys.readouterr().err
    assert main(["report", str(sample_dir), "-o", str(tmp_path / "r.txt"), "--format", "md", "--no-cache"]) == 0
    assert (tmp_path / "r.txt").read_text().startswith("# musetui evidence report")
    assert main(["report", str(tmp_path / "absent"), "-o", "-"]) == 2


def test_nothing_under_the_tree_is_written(sample_dir: Path, tmp_path: Path) -> None:
    tree = tmp_path / "vm"
    shutil.copytree(sample_dir, tree)
    before = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in tree.rglob("*")}
    _report([str(tree)], "html", tmp_path)
    assert {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in tree.rglob("*")} == before


# ---------------------------------------------------------------- headless Chromium

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium here (Debian: apt-get install chromium; .ci/run installs it)")


def _run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"Chromium is installed but did not start: {exc}")


@pytest.mark.browser
def test_html_renders_in_headless_chromium(sample_dir: Path, tmp_path: Path) -> None:
    binary = _chromium()
    tree = tmp_path / "vm"
    shutil.copytree(sample_dir, tree)
    _hostile_tree(tree / "hostile")
    html_path = tmp_path / "r.html"
    assert main(["report", str(tree), "-o", str(html_path), "--no-cache"]) == 0
    shot = Path(os.environ.get("MUSETUI_REPORT_SCREENSHOT", str(tmp_path / "report.png")))
    run = _run_chromium(
        binary, tmp_path / "profile", "--window-size=1280,2400", f"--screenshot={shot}", html_path.as_uri()
    )
    if run.returncode != 0 or not shot.exists():
        pytest.fail(f"Chromium could not render: exit {run.returncode}: {run.stderr.decode(errors='replace')[-300:]}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    dom = _run_chromium(binary, tmp_path / "profile2", "--dump-dom", html_path.as_uri())
    text = dom.stdout.decode("utf-8", "replace")
    assert 'data-sortable="ready"' in text  # the inline script ran: the CSP hash admits it
    assert MUSE_SPECIAL in text and "<svg" in text
    tags = re.findall(r"<(script|img|textarea|iframe)\b", text)
    assert tags == ["script"], tags  # after parsing, the hostile markup created no element
    assert text.count('<section class="session"') >= 2 and '<table class="evidence">' in text
    pdf = tmp_path / "a4.pdf"
    run = _run_chromium(
        binary, tmp_path / "profile3", "--no-pdf-header-footer", f"--print-to-pdf={pdf}", html_path.as_uri()
    )
    if run.returncode != 0 or not pdf.exists():
        pytest.fail(f"Chromium could not print: exit {run.returncode}: {run.stderr.decode(errors='replace')[-300:]}")
    body = pdf.read_bytes()
    boxes = {tuple(round(float(x)) for x in m) for m in re.findall(rb"/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]", body)}
    assert boxes == {(595, 842)}, boxes  # every page A4 portrait (the print stylesheet's @page)
    pages = len(re.findall(rb"/Type\s*/Page\b", body))
    assert pages >= 3, pages  # (the print stylesheet starts the flagged sessions and appendix A on new pages)


def test_the_apps_report_is_never_written_inside_a_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "vm"
    (root / "sub").mkdir(parents=True)
    monkeypatch.chdir(root / "sub")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    out = er.default_output([str(root)], now=0)
    assert not out.startswith(str(root) + os.sep) and out.endswith("musetui-report-19700101-000000.html")
    monkeypatch.chdir(tmp_path)
    assert er.default_output([str(root)], now=0) == str(tmp_path / "musetui-report-19700101-000000.html")


def test_sessions_that_switch_are_listed_with_their_segments(sample_dir: Path, tmp_path: Path) -> None:
    """A switched Claude Code session whose model name is markup: its segments in HTML and Markdown, escaped,
    and its OpenAI stretch in the time chart (as ``musetui timeline`` counts it), though its verdict is anthropic."""
    from tests_switched import claude_switched

    path = claude_switched(sample_dir, tmp_path / "t")
    path.write_bytes(path.read_bytes().replace(b"claude-sonnet-4-6", json.dumps(HOSTILE_MODEL)[1:-1].encode()))
    data = er.collect([str(tmp_path / "t")], use_cache=False)
    ((s, segs),) = er.switched(data.sessions)
    assert s.declared_model == HOSTILE_MODEL and s.attribution.provider == "anthropic"
    assert [(g.first_line, g.last_line, g.items, g.provider) for g in segs] == [
        (1, 18, 16, "anthropic"),
        (19, 22, 4, "openai"),
    ]
    page = report_page.render_html(data)
    section = page[page.index('<h2 id="switched">') : page.index('<h2 id="sessions">')]
    assert "Sessions that change provider or host (1)" in section
    assert "<script>" not in section and "<img" not in section and report_html.esc_name(HOSTILE_MODEL) in section
    for cell in ("1 of 2", "2 of 2", "1–18", "19–22", ">16<", ">4<", ">2026-09-01T22:45:00.000Z<"):
        assert cell in section, cell
    assert section.count("openai") >= 1 and section.count("anthropic") >= 1
    chart = page[page.index('aria-label="sessions over time"') : page.index("Sessions over time")]
    assert re.search(r"<title>[^<]*: 1 openai</title>", chart)
    md = er.render_markdown(data)
    part = md[md.index("## Sessions that change provider or host (1)") : md.index("## Appendix A")]
    rows = [line for line in part.splitlines() if line.startswith("| `")]
    assert len(rows) == 2
    assert "| 1 of 2 | 1–18 | 16 | anthropic |" in rows[0] and "| 2 of 2 | 19–22 | 4 | openai |" in rows[1]
    assert er._code(HOSTILE_MODEL) in rows[0]  # (a code span: nothing in it is live)
