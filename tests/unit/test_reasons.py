"""Reasons are computed once, survive the cache, and read the same in ``show`` and ``scan``; one rule for shown gaps."""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import shutil
from pathlib import Path

from musetui.cli import main as cli
from musetui.core.index import Index
from musetui.core.model import FLAGS, fmt_gap
from musetui.core.reasons import Anomaly, DeclaredMismatch, MixedProviders, Outlier
from musetui.widgets.text import hms

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts"
OUTLIER = (
    SAMPLE
    / "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/subagents/01a05efe-03bb-72c8-854a-4c1c088cc3b9/session.jsonl"
)


def run_cli(*args: str) -> str:
    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8")
    with contextlib.redirect_stdout(out):
        assert cli(list(args)) == 0
    out.flush()
    return buf.getvalue().decode("utf-8")


def flag_lines(markdown: str) -> list[str]:
    """The verdict line and the flag lines of a ``show`` report."""
    return [x for x in markdown.splitlines() if x.startswith(("- **Verdict:**", "- **Flag "))]


def test_a_gap_is_taken_between_the_times_as_shown() -> None:
    line, minted = 1788300103.188596, 1788300104.0  # the sample's line 4 and its Fernet token
    assert (hms(line), hms(minted)) == ("22:01:43", "22:01:44")
    assert fmt_gap(minted, line) == "+1 s"  # (was "0 s": the clocks on screen differ by one second)
    assert fmt_gap(line, line + 0.5) == "0 s" and fmt_gap(100.9, 103.1) == "−3 s"
    assert fmt_gap(7200.0, 0.0) == "+2.0 h"


def test_the_outlier_reason_is_structured_and_is_the_json_detail() -> None:
    index = Index([str(SAMPLE)], workers=1, use_cache=False).scan()
    s = next(x for x in index.sessions if Path(x.abspath) == OUTLIER)
    (reason,) = s.attribution.reasons
    assert reason == Outlier("openai", "meta", 3, 3, "siblings", "01a05efc-7bb7-7cd1-8155-66af75f0734c", str(SAMPLE))
    (ev,) = [e for e in s.record()["evidence"] if e["detector"] == "outlier"]
    assert ev["detail"] == reason.text


def test_reasons_pickle_as_they_are() -> None:
    for reason in (
        Outlier("openai", "meta", 4, 5, "fleet", "muse"),
        DeclaredMismatch("artifacts", "meta avocado-1.3", "meta", "openai"),
        DeclaredMismatch("store-byte-00", "openai gpt-5", count=3),
        MixedProviders(("anthropic", "openai")),
        Anomaly("truncated-blob", 2, 4, "fernet", "gAAAAAB…Qk=", 1788300104.0, 1788300103.188596),
    ):
        assert pickle.loads(pickle.dumps(reason)) == reason
        assert reason.text and reason.flag in FLAGS


def test_reasons_survive_the_cache(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    shutil.copytree(SAMPLE, root)
    cut = root / OUTLIER.relative_to(SAMPLE)
    text = cut.read_text(encoding="utf-8")
    token = text.index("gAAAAAB")
    cut.write_text(text[: token + 200] + text[token + 205 :], encoding="utf-8")  # a Fernet token cut short
    cold = Index([str(root)], workers=1, use_cache=True).scan()
    warm = Index([str(root)], workers=1, use_cache=True).scan()
    assert warm.result.cache_hits == len(warm.files)
    got = {s.path: (s.attribution.flags, s.attribution.reasons) for s in warm.sessions}
    assert got == {s.path: (s.attribution.flags, s.attribution.reasons) for s in cold.sessions}
    kinds = {type(r) for _f, rs in got.values() for r in rs}
    assert kinds == {Outlier, Anomaly}, kinds


def test_show_of_each_sample_file_gives_the_flags_and_reasons_of_the_scan() -> None:
    """``show FILE`` (its default context) and ``show FILE --root R`` say what ``scan R`` says."""
    explained = run_cli("scan", str(SAMPLE), "--explain")
    records = [json.loads(x) for x in run_cli("scan", str(SAMPLE), "--json", "--no-cache").splitlines()]
    for rec in records:
        target = SAMPLE / rec["path"]
        alone, rooted = run_cli("show", str(target)), run_cli("show", str(target), "--root", str(SAMPLE))
        assert flag_lines(alone) == flag_lines(rooted), rec["path"]
        assert f"flags: {', '.join(rec['flags']) or 'none'}" in flag_lines(rooted)[0]
        for line in flag_lines(rooted)[1:]:
            flag, text = line.removeprefix("- **Flag ").split(":** ", 1)
            assert f"  {flag}: {text}\n" in explained
        assert ("- **Parent session:**" in alone) == bool(rec["parent_session_id"]), rec["path"]


def _chat(folder: Path, name: str, model: str) -> None:
    """A one-request OpenAI-chat log declaring ``model`` (no artifacts: the declaration decides)."""
    folder.mkdir(parents=True, exist_ok=True)
    body = {"model": model, "choices": [{"message": {"role": "assistant", "content": "ok"}}]}
    (folder / name).write_text(json.dumps(body), encoding="utf-8")


def test_show_under_the_scan_root_flags_what_the_scan_flags(tmp_path: Path) -> None:
    """A folder whose own majority differs from the tree's: ``show --root TREE`` follows the tree."""
    tree = tmp_path / "tree"
    for i in range(3):
        _chat(tree / "a", f"d{i}.json", "deepseek-chat")
    _chat(tree / "a", "g.json", "gpt-4o")
    for i in range(8):
        _chat(tree / "b", f"g{i}.json", "gpt-4o")
    records = {r["path"]: r for r in map(json.loads, run_cli("scan", str(tree), "--json", "--no-cache").splitlines())}
    assert records["a/g.json"]["flags"] == [] and records["a/d0.json"]["flags"] == ["outlier"]
    for path, rec in records.items():
        shown = flag_lines(run_cli("show", str(tree / path), "--root", str(tree)))
        assert f"flags: {', '.join(rec['flags']) or 'none'}" in shown[0], path
        details = [e["detail"] for e in rec["evidence"] if e["detector"] == "outlier"]
        assert [x.split(":** ", 1)[1] for x in shown[1:]] == details, path
