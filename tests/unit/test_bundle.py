"""``musetui bundle`` and ``musetui verify``: a sealed bundle verifies; any change, and any unsafe zip, is named."""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from musetui.cli import main
from musetui.core.bundle import MANIFEST, RECORDS, manifest_digest
from musetui.core.verify import unsafe_name

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts"

OUTLIER = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def sample_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One bundle of the whole sample, shared by the tests that only read it."""
    out = tmp_path_factory.mktemp("bundle") / "b.zip"
    assert main(["bundle", str(SAMPLE), "-o", str(out), "--no-cache"]) == 0
    return out


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}


def _rewrite(src: Path, dst: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return dst


def _reseal(members: dict[str, bytes], change: dict[str, bytes]) -> dict[str, bytes]:
    """Members with ``change`` applied and a manifest made consistent again (a careful forgery)."""
    out = {**members, **change}
    manifest = json.loads(out[MANIFEST])
    for m in manifest["members"]:
        m["sha256"] = hashlib.sha256(out[m["name"]]).hexdigest()
        m["size"] = len(out[m["name"]])
    manifest["manifest_sha256"] = manifest_digest(manifest)
    out[MANIFEST] = json.dumps(manifest).encode()
    return out


def test_bundle_of_the_sample_verifies(sample_zip: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "verify", str(sample_zip))
    assert (code, out) == (0, "verified\n"), out + err
    members = _members(sample_zip)
    manifest = json.loads(members[MANIFEST])
    assert manifest["manifest_sha256"] == manifest_digest(manifest)
    raw = [n for n in members if n.startswith("files/")]
    assert len(raw) == len(manifest["sessions"]) == len(members[RECORDS].splitlines()) == 11
    for name in raw:  # byte for byte, at the path relative to the root
        rel = name.split("/", 2)[2]
        assert members[name] == (SAMPLE / rel).read_bytes()
    c = manifest["custody"]
    assert c["examiner"] and c["host"] and c["command"].startswith("musetui bundle ")
    assert c["catalogue"].startswith("sha256:") and c["musetui_version"] and c["time"].endswith("Z")
    assert {f["path"] for f in c["inputs"]} >= {n.split("/", 2)[2] for n in raw}
    assert all(len(f["sha256"]) == 64 for f in c["inputs"])
    assert "musetui verify" in c["verification"]
    assert {m["name"] for m in manifest["members"]} == set(members) - {MANIFEST}
    for m in manifest["members"]:
        assert hashlib.sha256(members[m["name"]]).hexdigest() == m["sha256"]
    assert b"Chain of custody" in members["report.html"] and b"Chain of custody" in members["report.md"]


def test_flipping_one_byte_of_any_member_names_it(
    sample_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    members = _members(sample_zip)
    for i, name in enumerate(sorted(members)):
        data = bytearray(members[name])
        pos = len(data) // 2
        data[pos] ^= 0x01
        bad = _rewrite(sample_zip, tmp_path / f"flip{i}.zip", {**members, name: bytes(data)})
        code, out, _err = _run(capsys, "verify", str(bad))
        assert code == 1, name
        assert any(line.startswith(name + ":") for line in out.splitlines()), (name, out)


def test_a_flipped_byte_in_the_compressed_zip_is_named(
    sample_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with zipfile.ZipFile(sample_zip) as zf:
        info = next(i for i in zf.infolist() if OUTLIER in i.filename)
    raw = bytearray(sample_zip.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + info.compress_size // 2] ^= 0x40
    bad = tmp_path / "crc.zip"
    bad.write_bytes(bytes(raw))
    code, out, _err = _run(capsys, "verify", str(bad))
    assert code == 1 and any(line.startswith(info.filename + ":") for line in out.splitlines()), out


def test_a_changed_verdict_is_named(sample_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A forger who edits records.jsonl and re-seals the manifest is still caught by the re-scan."""
    members = _members(sample_zip)
    lines = members[RECORDS].splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if OUTLIER.encode() in line)
    rec = json.loads(lines[i])
    rec["provider"], rec["flags"] = "meta", []
    lines[i] = json.dumps(rec).encode() + b"\n"
    bad = _rewrite(sample_zip, tmp_path / "verdict.zip", _reseal(members, {RECORDS: b"".join(lines)}))
    code, out, _err = _run(capsys, "verify", str(bad))
    assert code == 1
    (line,) = [x for x in out.splitlines() if "verdict not reproduced" in x]
    assert OUTLIER in line and '"meta" in the bundle, "openai" re-scanned' in line and "flags" in line


def test_a_filtered_bundle_reproduces_outliers_through_its_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.zip"
    code, stdout, err = _run(
        capsys, "bundle", str(SAMPLE), "-o", str(out), "--flagged", "--examiner", "A. Examiner", "--no-cache"
    )
    assert code == 0, err
    assert stdout.startswith("MANIFEST.json sha256 ")
    members = _members(out)
    manifest = json.loads(members[MANIFEST])
    assert [s["path"].split("/")[-2] for s in manifest["sessions"]] == [OUTLIER]
    assert manifest["custody"]["examiner"] == "A. Examiner" and manifest["custody"]["filters"] == {"flagged": True}
    assert b'"outlier"' in members[RECORDS]
    assert _run(capsys, "verify", str(out))[:2] == (0, "verified\n")
    # Without the context of the sessions left out, the outlier flag is not reproduced: named.
    manifest["context"]["sessions"] = []
    manifest["manifest_sha256"] = manifest_digest(manifest)
    bad = _rewrite(out, tmp_path / "noctx.zip", {**members, MANIFEST: json.dumps(manifest).encode()})
    code, stdout, _err = _run(capsys, "verify", str(bad))
    assert code == 1 and "verdict not reproduced" in stdout and "flags" in stdout


def test_an_edited_manifest_is_named(sample_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    members = _members(sample_zip)
    manifest = json.loads(members[MANIFEST])
    manifest["custody"]["examiner"] = "someone else"
    bad = _rewrite(sample_zip, tmp_path / "m.zip", {**members, MANIFEST: json.dumps(manifest).encode()})
    code, out, _err = _run(capsys, "verify", str(bad))
    assert code == 1 and "MANIFEST.json: its manifest_sha256 does not match" in out
    extra = _rewrite(sample_zip, tmp_path / "x.zip", {**members, "files/planted.jsonl": b"{}\n"})
    code, out, _err = _run(capsys, "verify", str(extra))
    assert code == 1 and "files/planted.jsonl: not listed in MANIFEST.json" in out
    manifest = json.loads(members[MANIFEST])
    target = next(f for f in manifest["custody"]["inputs"] if OUTLIER in f["path"])
    target["sha256"] = "0" * 64
    manifest["manifest_sha256"] = manifest_digest(manifest)
    forged = _rewrite(sample_zip, tmp_path / "c.zip", {**members, MANIFEST: json.dumps(manifest).encode()})
    code, out, _err = _run(capsys, "verify", str(forged))
    assert code == 1 and f"{OUTLIER}/session.jsonl: the chain of custody gives another sha256" in out, out
    fewer = dict(members)
    gone = next(n for n in fewer if n.startswith("files/"))
    del fewer[gone]
    code, out, _err = _run(capsys, "verify", str(_rewrite(sample_zip, tmp_path / "g.zip", fewer)))
    assert code == 1 and f"{gone}: listed in MANIFEST.json but missing from the zip" in out


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../escape.jsonl", "traversal"),
        ("files/a/../../escape", "traversal"),
        ("/etc/evil", "absolute"),
        ("files//x", "empty"),
    ],
)
def test_unsafe_names_are_refused_before_anything_is_written(
    sample_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, why: str
) -> None:
    assert why in (unsafe_name(name) or "")
    members = _members(sample_zip)
    bad = tmp_path / "deep" / "t.zip"
    bad.parent.mkdir()
    with zipfile.ZipFile(bad, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
        info = zipfile.ZipInfo("placeholder")
        info.filename = name  # (ZipInfo would normalise the name: set it as a hostile tool does)
        zf.writestr(info, b"pwned\n")
    code, out, _err = _run(capsys, "verify", str(bad))
    assert code == 1 and "refused" in out and why in out
    assert not (tmp_path / "escape.jsonl").exists() and not (tmp_path / "deep" / "escape.jsonl").exists()


def test_symlinks_and_bombs_are_refused(sample_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    members = _members(sample_zip)
    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
        info = zipfile.ZipInfo("files/sample_transcripts/passwd")
        info.external_attr = 0o120777 << 16  # a symlink
        zf.writestr(info, "/etc/passwd")
    code, out, _err = _run(capsys, "verify", str(link))
    assert code == 1 and "'files/sample_transcripts/passwd': a symlink" in out
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in members.items():
            zf.writestr(n, data)
        with zf.open("files/sample_transcripts/zeros.jsonl", "w") as w:
            for _ in range(64):
                w.write(bytes(1 << 20))  # 64 MiB of zeros: about 64 kB compressed
    assert bomb.stat().st_size < 1 << 20
    code, out, _err = _run(capsys, "verify", str(bomb), "--max-bytes", str(32 << 20))
    assert code == 1 and "refused: the members declare" in out
    dup = tmp_path / "dup.zip"
    with zipfile.ZipFile(dup, "w") as zf, pytest.warns(UserWarning):
        for n, data in members.items():
            zf.writestr(n, data)
        zf.writestr(RECORDS, b"{}\n")
    code, out, _err = _run(capsys, "verify", str(dup))
    assert code == 1 and "a second member of the same name" in out
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 not a zip")
    code, out, _err = _run(capsys, "verify", str(junk))
    assert code == 1 and "not a readable zip" in out


def test_bundle_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _run(capsys, "bundle", str(SAMPLE), "-o", str(SAMPLE / "inside.zip"))
    assert code == 2 and "inside the scanned tree" in err and not (SAMPLE / "inside.zip").exists()
    code, _out, err = _run(capsys, "bundle", str(SAMPLE), "-o", str(tmp_path / "b.zip"), "--since", "last week")
    assert code == 2 and "--since" in err
    code, _out, err = _run(capsys, "verify", str(tmp_path / "missing.zip"))
    assert code == 2
    assert os.listdir(tmp_path) == []


def test_filters_select_sessions() -> None:
    from musetui.core.index import Index
    from musetui.core.selection import FilterError, Filters

    sessions = Index([str(SAMPLE)], workers=1, use_cache=False).scan().sorted_sessions()

    def ids(**kw: object) -> set[str]:
        return {s.session_id or "" for s in Filters.parse(**kw).select(sessions)}  # type: ignore[arg-type]

    assert ids() == {s.session_id for s in sessions} and len(sessions) == 11
    assert ids(flagged=True) == {OUTLIER}
    meta = {s.session_id for s in sessions if s.attribution.provider == "meta"}
    assert len(meta) == 4 and ids(providers=["meta"]) == meta
    assert ids(providers=["meta,OpenAI"]) == meta | {
        s.session_id for s in sessions if s.attribution.provider == "openai"
    }
    assert ids(sessions=[OUTLIER[:8]]) == {OUTLIER} and ids(sessions=["01a0"]) != {OUTLIER}
    assert ids(sessions=[str(next(s.abspath for s in sessions if s.session_id == OUTLIER))]) == {OUTLIER}
    assert ids(flagged=True, providers=["meta"]) == set()
    assert ids(since="2035-01-01") == set() and ids(until="2020-01-01") == set()
    t0 = datetime(2026, 9, 1, 22, 5, tzinfo=UTC).timestamp()
    t1 = datetime(2026, 9, 2, tzinfo=UTC).timestamp()  # the end of the hour 2026-09-01T23
    window = ids(since="2026-09-01T22:05", until="2026-09-01T23")
    assert 0 < len(window) < len(sessions) - 1 and window == {
        s.session_id
        for s in sessions
        if s.started_at is not None and s.started_at < t1 and (s.ended_at or s.started_at) >= t0
    }
    late = ids(since="2026-09-01T23:30")
    assert late and late < ids()
    with pytest.raises(FilterError):
        Filters.parse(until="soon")


def test_report_takes_the_filters_and_the_custody_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.md"
    code, _out, err = _run(
        capsys, "report", str(SAMPLE), "-o", str(out), "--flagged", "--examiner", "E. X", "--no-cache"
    )
    assert code == 0, err
    text = out.read_text()
    appendix = text.split("## Appendix A: every session", 1)[1].split("## Appendix B", 1)[0]
    assert OUTLIER in appendix and "avocado" not in appendix
    custody = text.split("## Chain of custody", 1)[1]
    assert "**Examiner:** `E. X`" in custody and "**Filters:** `--flagged`" in custody
    assert "musetui report " in custody and "**Verification:**" in custody and "appendix B" in custody
    assert f"sha256 of {out}: {hashlib.sha256(out.read_bytes()).hexdigest()}" in err
    html_out = tmp_path / "r.html"
    assert _run(capsys, "report", str(SAMPLE), "-o", str(html_out), "--provider", "meta")[0] == 0
    page = html_out.read_text()
    assert 'id="custody"' in page and "--provider meta" in page and OUTLIER not in page


def test_the_hand_over_modules_are_headless() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import musetui.core.bundle, musetui.core.verify, musetui.core.custody, musetui.core.selection, musetui.cli.bundle\n"
        "print(','.join(sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
