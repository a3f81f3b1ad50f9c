"""Search execution: the library API and ``musetui search`` against real and bundled transcripts.

Expected hits are computed here by reading the files directly (or from ``musetui scan``),
never by calling the search code under test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musetui.core.search import (
    REGEX_LINE_CAP,
    SNIPPET_MAX,
    Hit,
    Query,
    QueryError,
    parse_query,
    run_search,
    search_sessions,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"
REAL = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "real"
OUTLIER = "01a05efe-03bb-72c8-854a-4c1c088cc3b9"
CALL = "call_vRYeJ5ycDgP6BwLGJEtinVF6"
REAL_CALL = "call_YunNGbIwdVJ2i0y0Mybva4Pw"
CANDIDATE = re.compile(r"\.(jsonl|json|ndjson|jsonlines|yaml|yml|har)$|\.chunks\.txt$")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def sample() -> Path:
    assert (SAMPLE / "muse-vm").is_dir(), (
        f"the committed sample is missing at {SAMPLE} (python -m musetui_synth.sample)"
    )
    return SAMPLE


@pytest.fixture(scope="module")
def real() -> Path:
    if not REAL.is_dir():
        pytest.skip(f"real public captures not available at {REAL} (they live in ../shared, outside this repo)")
    return REAL


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "musetui", "search", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def cli_json(*args: str) -> tuple[int, list[dict[str, Any]]]:
    proc = cli("--json", *args)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()]


def scan_records(root: Path) -> dict[str, dict[str, Any]]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-m", "musetui", "scan", str(root), "--json", "-q"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    ).stdout
    return {r["path"]: r for r in map(json.loads, out.splitlines())}


def candidate_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and CANDIDATE.search(p.name)
        and not (p.name.startswith("agent-") and p.name.endswith(".meta.json"))
    )


def lines_where(root: Path, pred: Any, files: list[Path] | None = None) -> set[tuple[str, int]]:
    """(relative path, 1-based line) of every physical line for which ``pred(line)`` holds."""
    out: set[tuple[str, int]] = set()
    for p in files if files is not None else candidate_files(root):
        for i, line in enumerate(p.read_bytes().split(b"\n"), 1):
            if pred(line):
                out.add((p.relative_to(root).as_posix(), i))
    return out


def located(hits: list[dict[str, Any]] | list[Hit]) -> set[tuple[str, int]]:
    return {(h["path"], h["line"]) if isinstance(h, dict) else (h.path, h.line) for h in hits}


def search(paths: list[Path], query: str, **kw: Any) -> list[Hit]:
    return list(run_search([str(p) for p in paths], query, **kw))


# -- the command line against the bundled sample ---------------------------------------------------


def test_call_id_finds_the_call_and_its_result(sample: Path) -> None:
    code, hits = cli_json(str(sample), CALL)
    assert code == 0
    expected = lines_where(sample, lambda line: CALL.encode() in line)
    assert len(expected) == 2
    assert located(hits) == expected
    for h in hits:
        assert set(h) == {"root", "path", "session_id", "line", "field", "snippet"}
        assert h["session_id"] == OUTLIER
        assert CALL in h["snippet"]
    assert [h["field"] for h in hits] == [
        "payload.event.tool_calls[0].call_id",
        "payload.event.results[0].tool_call_id",
    ]
    kinds = [h.item_kind for h in search([sample], CALL)]
    assert kinds == ["tool_call", "tool_result"]


def test_hits_are_sorted_and_carry_scan_session_ids(sample: Path) -> None:
    scan = scan_records(sample)
    code, hits = cli_json(str(sample), '/"/')
    assert code == 0
    assert [(h["path"], h["line"]) for h in hits] == sorted((h["path"], h["line"]) for h in hits)
    assert {h["path"] for h in hits} == set(scan)
    for h in hits:
        assert h["session_id"] == scan[h["path"]]["session_id"]


def test_provider_openai_has_encrypted_lists_exactly_the_encrypted_items(sample: Path) -> None:
    scan = scan_records(sample)
    openai = [Path(p) for p, r in scan.items() if r["provider"] == "openai"]
    worker = next(p for p in openai if OUTLIER in str(p))
    assert scan[worker.as_posix()]["declared_model"] == "muse-special"

    def encrypted(line: bytes) -> bool:
        return (
            re.search(rb"gAAAAA[A-Za-z0-9_-]{20,}", line) is not None
            or re.search(rb'"encrypted_content":\s*"[^"]', line) is not None
        )

    expected = lines_where(sample, encrypted, [sample / p for p in openai])
    code, hits = cli_json(str(sample), "provider:openai has:encrypted")
    assert code == 0
    assert located(hits) == expected
    # The muse-special worker's reasoning items are all there, and they are its only ones.
    reasoning = lines_where(sample, lambda line: b'"kind":"reasoning_committed"' in line, [sample / worker])
    assert reasoning and {x for x in located(hits) if x[0] == worker.as_posix()} == reasoning
    # Issue 5's criterion: exactly the muse-special worker's items (the sample's other OpenAI
    # sessions, the Codex pair and the Responses capture, carry no encrypted reasoning).
    assert {h["path"] for h in hits} == {worker.as_posix()} and len(hits) == len(reasoning) == 3
    assert all(h["field"].endswith(("signature", "encrypted_content")) for h in hits)
    assert not [h for h in hits if scan[h["path"]]["provider"] != "openai"]


def test_exit_codes(sample: Path) -> None:
    assert cli(str(sample), CALL).returncode == 0
    assert cli(str(sample), "zzzq-no-such-text-anywhere").returncode == 1
    for bad in ("foo:bar", "/[a-/", "kind:thought", "a |", ""):
        proc = cli(str(sample), bad)
        assert proc.returncode == 2, bad
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("musetui")
    assert "unknown field 'foo:'" in cli(str(sample), "foo:bar").stderr
    assert "invalid regex /[a-/:" in cli(str(sample), "/[a-/").stderr
    assert cli(str(sample / "no-such-dir"), "x").returncode == 2
    assert cli(str(sample)).returncode == 2


def test_text_output_and_limit(sample: Path) -> None:
    proc = cli(str(sample), CALL)
    assert proc.returncode == 0
    first = proc.stdout.splitlines()[0]
    assert (
        first.startswith(f"{sample}/muse-vm/")  # root/path, which `musetui show` accepts
        and f":5: [payload.event.tool_calls[0].call_id] {CALL}" in first
    )
    code, hits = cli_json("--limit", "1", str(sample), CALL)
    assert code == 0 and len(hits) == 1 and hits[0]["line"] == 5


# -- the command line against real public captures -----------------------------------------------


def test_real_call_id_exact_lines(real: Path) -> None:
    expected = lines_where(real, lambda line: REAL_CALL.encode() in line)
    assert expected, "the capture holds the id"
    code, hits = cli_json(str(real), REAL_CALL)
    assert code == 0
    assert located(hits) == expected
    assert all(h["session_id"] and REAL_CALL in h["snippet"] for h in hits)


def test_real_regex_exact_lines(real: Path) -> None:
    pat = re.compile(rb"rs_[0-9a-f]{48,50}")
    expected = lines_where(real, lambda line: pat.search(line) is not None)
    code, hits = cli_json(str(real), "/rs_[0-9a-f]{48,50}/")
    assert code == 0 and len(expected) > 3
    assert located(hits) == expected


def test_real_smart_case_word_exact_lines(real: Path) -> None:
    expected = lines_where(real, lambda line: b"encrypted_content" in line.lower())
    code, hits = cli_json(str(real), "encrypted_content")
    assert code == 0
    assert located(hits) == expected
    upper = lines_where(real, lambda line: b"Encrypted" in line)
    code, hits = cli_json(str(real), "Encrypted")
    assert located(hits) == upper and code == (0 if upper else 1)


def test_real_session_ids_match_scan(real: Path) -> None:
    scan = scan_records(real)
    hits = search([real], "/./")
    assert {h.path for h in hits} == set(scan)
    for h in hits:
        assert h.session_id == scan[h.path]["session_id"], h.path


def test_real_document_fields(real: Path) -> None:
    hits = search([real], REAL_CALL)
    assert [h.field for h in hits] and all(re.fullmatch(r"output\[\d+\]\.call_id", h.field) for h in hits)
    assert all(h.item_kind == "tool_call" for h in hits)


def test_real_has_encrypted_is_azure_and_openai_reasoning(real: Path) -> None:
    hits = search([real], "has:encrypted")
    paths = {h.path for h in hits}
    assert any("reasoning-encrypted-content" in p for p in paths)
    assert not any("anthropic" in p for p in paths)
    # The sanitized Codex rollouts hold no token, but their reasoning items were encrypted.
    redacted = [h for h in hits if "localpush" in h.path]
    assert redacted and all(h.item_kind == "reasoning" and "REDACTED_ENCRYPTED_CONTENT" in h.snippet for h in redacted)


# -- the library on crafted trees -----------------------------------------------------------------


def write_lines(path: Path, records: list[Any], raw: list[bytes] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(orjson.dumps(r) + b"\n" for r in records) + b"".join(line + b"\n" for line in raw or [])
    path.write_bytes(data)
    return path


def generic(text: str, **kw: Any) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": kw.pop("id", "m1"), "text": text, **kw}


def test_phrase_matches_escaped_json(tmp_path: Path) -> None:
    write_lines(tmp_path / "s.jsonl", [generic('she said "hi" and left'), generic("nothing")])
    hits = search([tmp_path], '"said \\"hi\\""')
    assert [(h.line, h.field) for h in hits] == [(1, "text")]
    snippet = hits[0].snippet
    assert 'said "hi"' in snippet
    ((s, e),) = hits[0].match_spans
    assert snippet[s:e] == 'said "hi"'


def test_unicode_escaped_text_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps(generic("un café crème"), ensure_ascii=True) + "\n")
    assert b"\\u00e9" in (tmp_path / "a.jsonl").read_bytes()
    hits = search([tmp_path], '"café crème"')
    assert len(hits) == 1 and hits[0].field == "text" and "café crème" in hits[0].snippet
    assert search([tmp_path], "CAFÉ") == []
    assert len(search([tmp_path], "café")) == 1


def test_json_inside_a_string(tmp_path: Path) -> None:
    args = json.dumps({"path": "site/visit.html", "note": 'a "quoted" word'})
    write_lines(tmp_path / "a.jsonl", [{"type": "function_call", "arguments": args}])
    hits = search([tmp_path], '"a \\"quoted\\" word"')
    assert len(hits) == 1 and hits[0].field == "arguments<json>.note"
    hits = search([tmp_path], "visit.html")
    assert hits[0].field == "arguments"


def test_regex_runs_on_raw_bytes_and_reports_raw_field(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.jsonl", [{"name": "read_file", "x": 1}, {"name": "write_file"}])
    hits = search([tmp_path], '/"name":"read_file"/')
    assert [(h.line, h.field) for h in hits] == [(1, "raw")]
    assert '"name":"read_file"' in hits[0].snippet
    hits = search([tmp_path], "/read_file/")
    assert [(h.line, h.field) for h in hits] == [(1, "name")]


def test_and_or_not(tmp_path: Path) -> None:
    write_lines(
        tmp_path / "a.jsonl",
        [
            generic("alpha beta"),
            generic("alpha gamma"),
            generic("beta gamma"),
            generic("alpha beta gamma"),
        ],
    )
    assert [h.line for h in search([tmp_path], "alpha beta")] == [1, 4]
    assert [h.line for h in search([tmp_path], "alpha beta|gamma")] == [1, 2, 4]
    assert [h.line for h in search([tmp_path], "alpha -gamma")] == [1]
    assert [h.line for h in search([tmp_path], "-alpha")] == [3]
    assert [h.line for h in search([tmp_path], "ALPHA")] == []
    assert [h.line for h in search([tmp_path], "/^\\{.*beta gamma/")] == [3, 4]


def test_numbers_and_keys_name_their_field(tmp_path: Path) -> None:
    write_lines(
        tmp_path / "a.jsonl",
        [{"recorded_at": 1788300103188596, "payload": {"encrypted_content": None}}],
    )
    assert search([tmp_path], "1788300103188596")[0].field == "recorded_at"
    hit = search([tmp_path], "encrypted_content")[0]
    assert hit.field == "payload.encrypted_content" and hit.snippet.startswith("encrypted_content")


def test_malformed_lines_still_match(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.jsonl", [generic("fine")], raw=[b'{"text": "broken needle'])
    hits = search([tmp_path], "needle")
    assert [(h.line, h.field, h.item_kind) for h in hits] == [(2, "raw", None)]


def test_snippets_are_short_clean_single_lines(tmp_path: Path) -> None:
    noise = "x" * 3000
    text = noise + "\x1b[31m\u202e line\nbreak\ttab NEEDLE here " + noise
    write_lines(tmp_path / "a.jsonl", [generic(text)])
    (hit,) = search([tmp_path], "NEEDLE")
    assert len(hit.snippet) <= SNIPPET_MAX
    assert "\n" not in hit.snippet and not CONTROL.search(hit.snippet)
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    ((s, e),) = hit.match_spans
    assert hit.snippet[s:e] == "NEEDLE"
    assert "line break tab NEEDLE" in hit.snippet


def test_spans_highlight_every_positive_term(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.jsonl", [generic("the dark rye and the light rye")])
    (hit,) = search([tmp_path], "rye dark -wheat")
    assert [hit.snippet[s:e] for s, e in hit.match_spans] == ["dark", "rye", "rye"]


def test_long_lines_are_never_cut(tmp_path: Path) -> None:
    """Hyperscan runs /needle\\d/ exactly over whole lines; a look-ahead (re only) is refused, not capped."""
    big = "a" * (REGEX_LINE_CAP + 1000) + " needle7 "
    write_lines(tmp_path / "a.jsonl", [generic(big), generic("short needle7")])
    run = run_search([str(tmp_path)], "/needle\\d/")
    assert [h.line for h in run] == [1, 2] and run.long_lines == 0
    with pytest.raises(QueryError, match="look-around"):
        run_search([str(tmp_path)], "/needle(?=\\d)/")
    assert [h.line for h in search([tmp_path], "needle7")] == [1, 2]


def test_documents_report_physical_lines(sample: Path) -> None:
    doc = sample / "api" / "openai-responses-reasoning.json"
    rs = re.search(rb"rs_[0-9a-f]{50}", doc.read_bytes())
    assert rs is not None
    expected = lines_where(sample, lambda line: rs.group() in line, [doc])
    hits = search([doc], rs.group().decode())
    assert {(h.line) for h in hits} == {line for _p, line in expected}
    assert hits[0].path == "openai-responses-reasoning.json" and hits[0].field == "output[0].id"
    assert hits[0].item_kind == "reasoning"


# -- filters ----------------------------------------------------------------------------------------


def test_item_filters(sample: Path) -> None:
    assert [h.line for h in search([sample], f"id:{CALL[:12]}*")] == [5, 7]
    assert [h.line for h in search([sample], f"kind:tool_result id:{CALL[:12]}*")] == [7]
    assert [h.line for h in search([sample], f"{CALL} -kind:tool_call")] == [7]
    assert [h.line for h in search([sample], f"{CALL} role:tool")] == [7]
    hits = search([sample], "kind:reasoning path:*03bb*")
    assert [h.line for h in hits] == sorted(
        line for _p, line in lines_where(sample, lambda x: b"reasoning_committed" in x and OUTLIER.encode() in x)
    )
    assert all(h.item_kind == "reasoning" for h in hits)


def test_has_signature_is_a_non_empty_signature(sample: Path) -> None:
    expected = lines_where(sample, lambda line: re.search(rb'ignature"\s*:\s*"[^"]', line) is not None)
    hits = search([sample], "has:signature")
    assert located(hits) == expected
    assert not located(search([sample], "has:signature model:avocado*"))


def test_time_filters(sample: Path) -> None:
    lines = sample / "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/subagents" / OUTLIER / "session.jsonl"
    records = [json.loads(x) for x in lines.read_text().splitlines()]
    cut = records[5]["recorded_at"] / 1e6
    iso = datetime.fromtimestamp(cut, tz=UTC).isoformat().replace("+00:00", "Z")
    after = search([lines], f"after:{iso}")
    before = search([lines], f"before:{iso}")
    assert [h.line for h in after] == [i + 1 for i, r in enumerate(records) if r["recorded_at"] / 1e6 >= cut]
    assert [h.line for h in before] == [i + 1 for i, r in enumerate(records) if r["recorded_at"] / 1e6 < cut]
    assert search([lines], "after:2030-01-01") == []


def test_session_filters(sample: Path) -> None:
    scan = scan_records(sample)
    codex = {p for p, r in scan.items() if r["format"] == "codex"}
    assert {h.path for h in search([sample], "format:codex /./")} == codex
    assert {h.path for h in search([sample], "-format:codex|muse /./")} == set(scan) - codex - {
        p for p, r in scan.items() if r["format"] == "muse"
    }
    sid = scan[next(iter(codex))]["session_id"]
    assert {h.session_id for h in search([sample], f"session:{sid[:13].upper()} /./")} == {sid}
    special = {p for p, r in scan.items() if r["declared_model"] == "muse-special"}
    assert {h.path for h in search([sample], "model:muse-spec* /./")} == special
    assert {h.path for h in search([sample], "model:MUSE-SPECIAL /./")} == special
    assert {h.path for h in search([sample], "path:subagents /./")} == {p for p in scan if "/subagents/" in p}
    assert search([sample], "path:*.json /./") and all(
        h.path.endswith(".json") for h in search([sample], "path:*.json /./")
    )


def test_flag_and_host_filters_attribute_first(sample: Path) -> None:
    hits = search([sample], "flag:outlier kind:reasoning")
    assert hits and {h.session_id for h in hits} == {OUTLIER}
    assert {h.session_id for h in search([sample], "host:azure /./")} == {OUTLIER}


def test_time_term_finds_decoded_times(sample: Path) -> None:
    """2026-09-01T22:01:43 is the minting second of the worker's first rs_/fc_ ids and token."""
    from musetui.core.fingerprints.extract import walk_record

    t0 = datetime(2026, 9, 1, 22, 1, 43, tzinfo=UTC).timestamp()

    def minted(line: bytes) -> bool:
        if b"2026-09-01T22:01:43" in line:
            return True
        try:
            obj = json.loads(line)
        except ValueError:
            return False
        return any(d.time is not None and t0 <= d.time < t0 + 1 for d, _k, _p in walk_record(obj))

    files = [p for p in candidate_files(sample) if p.suffix == ".jsonl"]
    expected = lines_where(sample, minted, files)
    hits = search([sample], "2026-09-01T22:01:43 path:*.jsonl")
    assert expected and located(hits) == expected
    first = hits[0]
    assert first.field == "payload.event.message_id" and "2026-09-01T22:01:43Z" in first.snippet


def test_marker_digits_find_the_id(sample: Path) -> None:
    hits = search([sample], f"8196 path:*{OUTLIER}*")
    assert hits and all(re.search(r"(rs|fc|msg)_[0-9a-f]{50}", h.snippet) for h in hits)
    assert {h.line for h in hits} == {
        line
        for _p, line in lines_where(
            sample,
            lambda x: b"8196" in x,
            [p for p in candidate_files(sample) if OUTLIER in str(p)],
        )
    }


# -- raw hints are sound: a filter that drives the search finds what a full read finds ---------------


@pytest.mark.parametrize("query", ["has:encrypted", "has:signature", "id:call_*", "has:encrypted kind:reasoning"])
def test_filter_hints_agree_with_reading_every_item(sample: Path, real: Path, query: str) -> None:
    q = parse_query(query)
    assert q.driver >= 0
    slow = Query(q.source, q.groups, -1)
    for root in (sample, real):
        fast_all = list(run_search([str(root)], q))
        full_all = list(run_search([str(root)], slow))
        # Whole-file JSON documents: the same files (a hit names the line its hint is on
        # there, where reading every item names the item's first line). Not for
        # has:signature: reading every item checks a document item's signature on that
        # first line only (a query with has: always has its hint to drive it).
        if "signature" not in query:
            assert {h.path for h in fast_all} == {h.path for h in full_all}, (root, query)
        docs = (".json", ".yaml", ".yml", ".har")  # whole-file documents and HTTP captures
        fast = [h for h in fast_all if not h.path.endswith(docs)]
        full = [h for h in full_all if not h.path.endswith(docs)]
        assert located(fast) == located(full), (root, query)


@pytest.mark.parametrize(
    "query",
    [
        CALL,
        "Bearer|muse-special",
        "/gpt_responses_v1:gAAAAAB[A-Za-z0-9_-]{3}/",
        "/rs_[0-9a-f]{18}/ kind:reasoning",
        '"order form"',
        "has:encrypted",
        "id:call_*",
        "muse-special -/avocado/",
    ],
)
def test_quick_file_check_agrees_with_the_full_read(
    sample: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    query: str,
) -> None:
    """Files dropped by the quick check (buffer read, no hint) are exactly the hitless ones.

    The tree is the sample plus each transcript with its lines reversed (hits then sit at
    both ends of files).
    """
    import musetui.core.search.executor as search_mod

    tree = tmp_path_factory.mktemp("quick")
    shutil.copytree(sample, tree / "sample")
    for p in candidate_files(sample):
        if p.suffix == ".jsonl":
            dest = tree / "reversed" / p.relative_to(sample)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(b"".join(reversed(p.read_bytes().splitlines(keepends=True))))
    quick = [h.record() for h in run_search([str(tree)], query, workers=1)]
    monkeypatch.setattr(search_mod, "QUICK_BUFFER", 0)  # every file takes the full read
    full = [h.record() for h in run_search([str(tree)], query, workers=1)]
    assert quick == full and (quick or query == "muse-special -/avocado/"), query


def test_quick_check_reads_what_the_full_read_reads(tmp_path: Path) -> None:
    """Counted files and bytes agree; a file over the buffer and an empty one are read whole."""
    import musetui.core.search.executor as search_mod

    (tmp_path / "big.jsonl").write_bytes(b'{"text": "pad"}\n' * 200 + b'{"text": "Needle"}\n')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "small.jsonl").write_bytes(b'{"text": "hay"}\n')
    runs = []
    for size in (1 << 20, 512):  # 512: big.jsonl no longer fits the buffer
        search_mod.QUICK_BUFFER, saved = size, search_mod.QUICK_BUFFER
        try:
            run = run_search([str(tmp_path)], "Needle", workers=1)
            runs.append(([h.line for h in run], run.files, run.bytes))
        finally:
            search_mod.QUICK_BUFFER = saved
    assert runs[0] == runs[1] == ([201], 3, 200 * 16 + 19 + 16)


# -- walking, parallelism, sessions, limits -----------------------------------------------------------


def test_walk_matches_the_index(tmp_path: Path, sample: Path) -> None:
    from musetui.core.index import walk_roots
    from musetui.core.search.files import walk as _walk

    tree = tmp_path / "t"
    shutil.copytree(sample, tree)
    for rel in (
        "a.b/x.jsonl",
        "a/x.jsonl",
        "a/agent-1.meta.json",
        "a/notes.txt",
        "a/README.md",
        "a/noext",
        "z.log",
    ):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(json.dumps(generic("hello")) + "\n")
    (tree / "a" / "loop").symlink_to(tree / "a")  # a symlink loop
    os.mkfifo(tree / "a" / "pipe.jsonl")
    for root in (tree, tree / "a", tree / "a.b" / "x.jsonl"):
        notes: list[str] = []
        mine = [(t.path, t.maybe) for t in _walk([str(root)], notes)]
        theirs = sorted((e.relpath, e.maybe) for e in walk_roots([str(root)], []))
        assert mine == theirs
    notes = []
    list(_walk([str(tree)], notes))
    assert any("pipe.jsonl" in n for n in notes) and any("loop" in n for n in notes)
    hits = search([tree], "hello")
    assert [h.path for h in hits] == ["a.b/x.jsonl", "a/noext", "a/notes.txt", "a/x.jsonl", "z.log"]


def test_outside_symlinks_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_lines(outside / "s.jsonl", [generic("needle")])
    (outside / "back").symlink_to(outside)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside)
    run = run_search([str(tree)], "needle")
    assert list(run) == []
    assert run.notes == [f"link: skipped: symlink leaves the root -> {outside}"]


def test_parallel_equals_serial(tmp_path: Path, sample: Path) -> None:
    files = [p for p in candidate_files(sample) if p.suffix == ".jsonl"]
    for i in range(300):
        src = files[i % len(files)]
        dest = tmp_path / f"d{i:03d}" / src.name
        dest.parent.mkdir()
        shutil.copyfile(src, dest)
    for query in (CALL, "has:encrypted", "kind:reasoning -avocado", "/rs_[0-9a-f]{50}/"):
        serial = [h.record() for h in run_search([str(tmp_path)], query, workers=1)]
        parallel = [h.record() for h in run_search([str(tmp_path)], query, workers=2)]
        assert serial == parallel and serial, query
    limited = list(run_search([str(tmp_path)], CALL, workers=2, limit=3))
    assert len(limited) == 3


def test_search_sessions_uses_summaries_and_never_reads_pruned_ones(sample: Path) -> None:
    import dataclasses

    from musetui.core.index import Index

    sessions = Index([str(sample)], workers=1).scan().sessions
    expected = [h.record() for h in run_search([str(sample)], "provider:openai has:encrypted")]
    assert [h.record() for h in search_sessions(sessions, "provider:openai has:encrypted")] == expected
    ghosts = [dataclasses.replace(s, abspath=s.abspath + ".gone") if s.format != "codex" else s for s in sessions]
    run = search_sessions(ghosts, parse_query("format:codex call_"))
    hits = list(run)
    assert hits and {h.path for h in hits} <= {s.path for s in sessions if s.format == "codex"}
    assert not [n for n in run.notes if "unreadable" in n]
    run = search_sessions(ghosts, "call_")
    list(run)
    assert [n for n in run.notes if "unreadable" in n], "unpruned sessions are read"


def test_search_sessions_reads_only_what_was_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines appended after indexing are not searched (the TUI re-indexes them first).

    Both ways of reading agree: the quick buffer check and the full read.
    """
    import musetui.core.search.executor as search_mod
    from musetui.core.index import Index

    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type": "message", "text": "Needle one"}\n')
    sessions = Index([str(tmp_path)], workers=1).scan().sessions
    with path.open("ab") as f:
        f.write(b'{"type": "message", "text": "Needle two"}\n')
    for size in (search_mod.QUICK_BUFFER, 0):
        monkeypatch.setattr(search_mod, "QUICK_BUFFER", size)
        run = search_sessions(sessions, "Needle", workers=1)
        assert [h.line for h in run] == [1] and run.bytes == sessions[0].read_bytes, size
    assert [h.line for h in run_search([str(tmp_path)], "Needle", workers=1)] == [1, 2]


def test_limit_and_cancel(sample: Path) -> None:
    assert len(search([sample], "/./", limit=4)) == 4
    calls = 0

    def cancelled() -> bool:
        nonlocal calls
        calls += 1
        return calls > 2

    run = run_search([str(sample)], "/./", cancelled=cancelled, workers=1)
    got = list(run)
    assert calls == 3 and 0 < len({h.path for h in got}) <= 3


def test_query_errors_are_raised_at_call_time(sample: Path) -> None:
    with pytest.raises(QueryError):
        run_search([str(sample)], "foo:bar")
    with pytest.raises(QueryError):
        search_sessions([], "/(unclosed/")


def test_exponential_pattern_runs_in_linear_time_on_a_1mb_line(tmp_path: Path) -> None:
    """(a+)+$ backtracks exponentially in re on "aaa…ab"; Hyperscan answers in linear time."""
    a_run = "a" * (1 << 20)
    write_lines(
        tmp_path / "a.jsonl",
        [generic(a_run + "b"), generic("short"), generic("xx" + a_run)],
        raw=[b"aaaa" + b"a" * (1 << 20)],
    )
    start = time.perf_counter()
    run = run_search([str(tmp_path)], "/(a+)+$/", workers=1)
    hits = list(run)
    elapsed = time.perf_counter() - start
    # Only the raw line ends in a run of "a": every JSON line ends with "}".
    assert [h.line for h in hits] == [4]
    assert elapsed < 5.0, elapsed
    start = time.perf_counter()
    hits = list(run_search([str(tmp_path)], '/(a+)+"}$/', workers=1))
    assert [h.line for h in hits] == [3] and time.perf_counter() - start < 5.0
    assert hits[0].field == "raw" and "aaa" in hits[0].snippet
    # Matches the empty string (no start of match from Hyperscan): still linear, every line.
    start = time.perf_counter()
    hits = list(run_search([str(tmp_path)], "/(\\w+\\s?)*$/", workers=1))
    assert [h.line for h in hits] == [1, 2, 3, 4] and time.perf_counter() - start < 5.0


def test_core_import_stays_free_of_textual() -> None:
    code = "import sys, musetui.core.search; list(musetui.core.search.run_search(['sample_transcripts'], 'kind:reasoning 2026')); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


# -- the fast paths find exactly what a naive scan finds -------------------------------------------

ALPHABET = "aAbBkK-_.1 "


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(st.text(alphabet=ALPHABET, max_size=40), min_size=1, max_size=12),
    word=st.text(alphabet=ALPHABET.strip(), min_size=1, max_size=5),
)
def test_literal_search_equals_naive_scan(lines: list[str], word: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        raw = [orjson.dumps({"text": line}) for line in lines]
        path.write_bytes(b"\n".join(raw) + b"\n")
        query = f'"{word}"' if word.startswith("-") else word  # -x would negate x
        cs = any(c.isupper() for c in word)
        needle = word.encode()
        expected = [i + 1 for i, r in enumerate(raw) if (needle in r if cs else needle.lower() in r.lower())]
        got = [h.line for h in run_search([str(path)], query)]
        assert got == expected, (query, lines)
        regex = "/" + re.escape(word) + "/"
        got = [h.line for h in run_search([str(path)], regex)]
        assert got == expected, (regex, lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(st.text(alphabet="aAbB_-19 ", max_size=40), min_size=1, max_size=12),
    lead=st.text(alphabet="aAbB_-", min_size=3, max_size=5),
    tail=st.sampled_from(["", "[ab]{2}", "[0-9]*", "b+", ".?a", "(?:_|-)b", "$"]),
)
def test_regex_led_by_a_literal_equals_a_line_search(lines: list[str], lead: str, tail: str) -> None:
    """A regex that starts with its literal hint is tried at each occurrence: same lines."""
    import tempfile

    pattern = re.escape(lead) + tail
    flags = 0 if any(c.isupper() for c in lead) else re.IGNORECASE
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        raw = [orjson.dumps({"text": line}) for line in lines]
        path.write_bytes(b"\n".join(raw) + b"\n")
        expected = [i + 1 for i, r in enumerate(raw) if re.search(pattern.encode(), r, flags) is not None]
        got = [h.line for h in run_search([str(path)], f"/{pattern}/")]
        assert got == expected, (pattern, lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(st.text(alphabet='aZé"\\\n/<x', max_size=30), min_size=1, max_size=8),
    word=st.text(alphabet='aZé"\\\n/<x', min_size=1, max_size=4),
    ascii_only=st.booleans(),
)
def test_phrases_find_every_decoded_occurrence(texts: list[str], word: str, ascii_only: bool) -> None:
    """Whatever the JSON writer escaped, a phrase finds every record whose text holds it."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_text("".join(json.dumps({"text": t}, ensure_ascii=ascii_only) + "\n" for t in texts), "utf-8")
        phrase = '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
        cs = any(c.isupper() for c in word)
        want = {i + 1 for i, t in enumerate(texts) if (word in t if cs else word.lower() in t.lower())}
        got = {h.line for h in run_search([str(path)], phrase)}
        assert want <= got, (phrase, texts)


def test_the_docs_document_the_query_language() -> None:
    from pathlib import Path

    from musetui.core.search import QUERY_HELP

    doc = (Path(__file__).resolve().parents[2] / "docs" / "query.md").read_text(encoding="utf-8")
    for line in QUERY_HELP.strip().splitlines():
        assert line.rstrip() in doc, line


def test_attribution_filters_index_through_the_cache(tmp_path: Path) -> None:
    import shutil

    from musetui.core.cache import db_path

    root = tmp_path / "tree"
    shutil.copytree(SAMPLE, root)
    query = "provider:openai has:encrypted"
    code, nocache = cli_json("--no-cache", str(root), query)
    assert code == 0 and nocache and not db_path(str(root)).exists()  # --no-cache writes nothing
    code, first = cli_json(str(root), query)
    assert code == 0 and first == nocache and db_path(str(root)).exists()
    code, again = cli_json(str(root), query)  # from the cache: the same hits
    assert code == 0 and again == nocache


def test_search_pool_replaces_a_pool_whose_worker_died(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from musetui.core.search import SearchPool, search_sessions
    from musetui.core.search import executor as search_mod

    monkeypatch.setattr(search_mod, "PARALLEL_MIN_FILES", 1)  # the sample is small: use the pool anyway
    monkeypatch.setattr(search_mod, "PARALLEL_MIN_BYTES", 0)
    pool = SearchPool(2)
    try:
        pool.warm()
        first = pool.executor()
        for proc in list(first._processes.values()):
            proc.kill()
        deadline = time.monotonic() + 10
        while not getattr(first, "_broken", False) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first._broken
        assert pool.executor() is not first
        pool.warm()  # the new processes work
        from musetui.core.index import Index

        sessions = Index([str(sample)], workers=1).scan().sessions
        got = [h.record() for h in search_sessions(sessions, "muse-special", pool=pool)]
        assert got == [h.record() for h in search_sessions(sessions, "muse-special", workers=1)] and got
    finally:
        pool.close()


RG = shutil.which("rg")
RG_GLOBS = ["*.jsonl", "*.json", "*.ndjson", "*.jsonlines", "*.txt", "*.log", "!agent-*.meta.json", "!MANIFEST.json"]


@pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed")
@pytest.mark.parametrize(
    "pattern",
    [
        r"rs_[0-9a-f]{18}",
        r"(\w+\s?)*$",
        r"^\{",
        r'"type":\s*"[a-z_]+"',
        r"\bmuse\b",
        r"call_[A-Za-z0-9]{24}",
        r"a\S+?z",
        r"[^\x00-\x7f]",
    ],
)
def test_regex_hits_are_rgs_lines(sample: Path, pattern: str) -> None:
    """Every regex hit is a line rg reports for the same pattern (smart case), and no other."""
    assert RG is not None
    argv = [RG, "-uu", "-n", "--no-heading", "-S", "--no-messages"]
    for g in RG_GLOBS:
        argv += ["-g", g]
    out = subprocess.run([*argv, "-e", pattern, str(sample)], capture_output=True, text=True, check=False).stdout
    expected = sorted(
        (Path(p).relative_to(sample).as_posix(), int(n))
        for p, n, _rest in (line.split(":", 2) for line in out.splitlines())
    )
    assert sorted((h.path, h.line) for h in search([sample], f"/{pattern}/")) == expected, pattern


def test_the_default_pool_is_sized_by_the_idle_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    from musetui.core.search import executor

    monkeypatch.setattr(executor, "_cpu_pressure", lambda: 0.05)  # Linux: waits for a CPU
    assert executor.usable_workers(2) == 2 and executor.usable_workers(8) == 8
    monkeypatch.setattr(executor, "_cpu_pressure", lambda: 0.5)
    assert executor.usable_workers(2) == 1 and executor.usable_workers(8) == 4
    monkeypatch.setattr(executor, "_cpu_pressure", lambda: None)  # elsewhere: the load average
    monkeypatch.setattr(executor.os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    assert executor.usable_workers(2) == 2 and executor.usable_workers(8) == 8
    monkeypatch.setattr(executor.os, "getloadavg", lambda: (4.0, 4.0, 4.0))
    assert executor.usable_workers(2) == 1 and executor.usable_workers(8) == 4

    def unknown() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(executor.os, "getloadavg", unknown)
    assert executor.usable_workers(2) == 2


def test_a_busy_machine_searches_in_process_unless_workers_are_asked_for(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from musetui.core.search import executor

    monkeypatch.setattr(executor, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(executor, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(executor.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(executor, "_cpu_pressure", lambda: 0.9)
    started: list[int] = []
    real = executor._new_executor

    def counting(nworkers: int, *args: Any, **kwargs: Any) -> Any:
        started.append(nworkers)
        return real(nworkers, *args, **kwargs)

    from musetui.core import parallel

    real_forked = parallel.forked_batches

    def counting_forked(nbatches: int, run_batch: Any, helpers: int, *args: Any) -> Any:
        started.append(helpers + 1)  # the caller searches too
        return real_forked(nbatches, run_batch, helpers, *args)

    monkeypatch.setattr(executor, "_new_executor", counting)
    monkeypatch.setattr(parallel, "forked_batches", counting_forked)
    busy = [h.record() for h in run_search([str(sample)], "muse-special")]
    assert started == [] and busy
    asked = [h.record() for h in run_search([str(sample)], "muse-special", workers=2)]
    assert started == [2] and asked == busy


def test_cpu_pressure_is_read_where_linux_has_it() -> None:
    from musetui.core.search import executor

    got = executor._cpu_pressure()
    if not os.path.exists("/proc/pressure/cpu"):
        assert got is None
    else:
        assert got is not None and 0.0 <= got <= 1.0
