"""Format drift: unknown record kinds and top-level keys, per harness version, with their first file and line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from musetui.cli import main
from musetui.core.diagnostics import group, stderr_lines
from musetui.core.drift import stats_line, tally
from musetui.core.index import Index

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts"
CLAUDE = "claude/projects/-home-dev-site/4e710f04-7f87-4b76-b9ba-ab287a3112ab.jsonl"
CODEX = "codex/sessions/2026/09/01/rollout-2026-09-01T23-05-10-01a05f01-379d-73f6-a40f-8de845a806ed.jsonl"
MUSE = "muse-vm/sessions/01a05efc-7bb7-7cd1-8155-66af75f0734c/session.jsonl"


def _append(path: Path, record: dict[str, object]) -> int:
    """Append one JSON line to ``path``; returns its line number."""
    data = path.read_bytes()
    path.write_bytes(data + orjson.dumps(record) + b"\n")
    return data.count(b"\n") + 1


def drifted_tree(root: Path) -> dict[str, int]:
    """A copy of the sample with one unknown Claude Code line type (and key), Codex record and Muse event kind."""
    shutil.copytree(SAMPLE, root)
    first = json.loads((root / CLAUDE).read_text().splitlines()[2])
    claude = dict(first, type="teleport-marker", teleportedFrom="elsewhere")
    meta = json.loads((root / CODEX).read_text().splitlines()[0])
    return {
        "claude": _append(root / CLAUDE, claude),
        "codex": _append(root / CODEX, {"timestamp": meta["timestamp"], "type": "brand_new_record", "payload": {}}),
        "muse": _append(
            root / MUSE,
            {
                "stream": {"kind": "session", "id": "x"},
                "recorded_at": 1788300027536282,
                "payload": {"kind": "run", "event": {"kind": "snapshot_taken"}},
            },
        ),
    }


def test_real_current_records_are_known() -> None:
    """The sample's real-shaped records raise no drift but its one planted Muse event kind."""
    index = Index([str(SAMPLE)], use_cache=False).scan()
    rows = tally(index.diagnostics)
    assert [(r.format, r.version, r.what, r.name, r.count, r.first_line) for r in rows] == [
        ("muse", None, "event kind", "checkpoint_saved", 1, 13)
    ]


def test_each_unknown_kind_and_key_is_counted_per_version_at_its_first_line(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    index = Index([str(root)], use_cache=False).scan()
    found = {
        (r.format, r.version, r.what, r.name): (r.first_path, r.first_line, r.count) for r in tally(index.diagnostics)
    }
    version = json.loads((root / CLAUDE).read_text().splitlines()[2])["version"]
    assert found[("claude-code", version, "line type", "teleport-marker")] == (CLAUDE, lines["claude"], 1)
    assert found[("claude-code", version, "top-level key", "teleportedFrom")] == (CLAUDE, lines["claude"], 1)
    assert found[("codex", "0.141.0", "record type", "brand_new_record")] == (CODEX, lines["codex"], 1)
    assert found[("muse", None, "event kind", "snapshot_taken")] == (MUSE, lines["muse"], 1)
    line = stats_line(index.diagnostics)
    assert line is not None and line.startswith("drift: 5 unknown kinds or keys (5 records) in 3 formats")


def test_a_kind_met_in_many_files_is_listed_once_at_its_first(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    drifted_tree(root)
    muse = sorted(p for p in root.glob("muse-vm/**/session.jsonl") if "subagents" in str(p))
    for p in muse:
        _append(
            p,
            {
                "stream": {"kind": "session", "id": "x"},
                "recorded_at": 1788300027536282,
                "payload": {"kind": "run", "event": {"kind": "snapshot_taken"}},
            },
        )
    index = Index([str(root)], use_cache=False).scan()
    drift = [g for g in group(index.diagnostics) if g.kind == "drift" and '"snapshot_taken"' in g.reason]
    assert len(drift) == 1
    assert drift[0].count == 1 + len(muse)
    assert drift[0].reason.endswith(f"×{1 + len(muse)} in {1 + len(muse)} files")
    text = [t for t in stderr_lines(index.diagnostics) if "snapshot_taken" in t]
    assert len(text) == 1 and text[0].startswith(drift[0].path + ":")


def test_scan_diagnostics_and_stats_name_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    out = tmp_path / "diags.jsonl"
    assert main(["scan", "--json", "--no-cache", "--stats", "--diagnostics", str(out), str(root)]) == 0
    err = capsys.readouterr().err
    records = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    drift = {(r["path"], r["line"]) for r in records if r["message"].startswith("drift: ")}
    assert {(CLAUDE, lines["claude"]), (CODEX, lines["codex"]), (MUSE, lines["muse"])} <= drift
    assert (
        f'{CODEX}:{lines["codex"]}: drift: codex version "0.141.0": unknown record type "brand_new_record" ×1 in 1 file'
        in err
    )
    assert f'{MUSE}:{lines["muse"]}: drift: muse (no version): unknown event kind "snapshot_taken" ×1 in 1 file' in err
    assert "musetui: drift: 5 unknown kinds or keys" in err


def test_drift_survives_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    drifted_tree(root)
    cold = Index([str(root)], use_cache=True).scan()
    warm = Index([str(root)], use_cache=True).scan()
    assert warm.result.cache_hits == len(warm.files)
    assert tally(warm.diagnostics) == tally(cold.diagnostics) != []


def test_an_append_is_read_alone_and_its_drift_joins_the_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    Index([str(root)], use_cache=True).scan()
    later = _append(root / CODEX, {"timestamp": "2026-09-01T23:09:00.000Z", "type": "brand_new_record", "payload": {}})
    extra = _append(root / CODEX, {"timestamp": "2026-09-01T23:09:01.000Z", "type": "another_record", "payload": {}})
    index = Index([str(root)], use_cache=True).scan()
    assert index.result.resumed == 1
    found = {(r.name, r.first_line, r.count, r.files) for r in tally(index.diagnostics) if r.format == "codex"}
    # the old kind keeps its first line and counts the appended one; the new one is at its own line
    assert found == {("brand_new_record", lines["codex"], 2, 1), ("another_record", extra, 1, 1)}
    assert later > lines["codex"]


def test_following_a_growing_file_does_not_count_its_drift_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    lines = drifted_tree(root)
    index = Index([str(root)], use_cache=True).scan()
    _append(root / CODEX, {"timestamp": "2026-09-01T23:09:00.000Z", "type": "brand_new_record", "payload": {}})
    result = index.refresh(active_window_s=3600)
    assert result.resumed + result.rescanned == 1
    (row,) = [r for r in tally(index.diagnostics) if r.name == "brand_new_record"]
    assert (row.count, row.files, row.first_line) == (2, 1, lines["codex"])


def test_the_report_appendix_tables_the_drift(tmp_path: Path) -> None:
    from musetui.core.evidence_report import collect, render_markdown
    from musetui.core.report_page import render_html

    root = tmp_path / "tree"
    lines = drifted_tree(root)
    data = collect([str(root)], use_cache=False)
    md = render_markdown(data)
    assert f"| codex | `0.141.0` | record type | `brand_new_record` | 1 | 1 | `{CODEX}:{lines['codex']}` |" in md
    html = render_html(data)
    table = html[html.index('<table class="sortable drift"') :]
    table = table[: table.index("</table>")]
    assert "snapshot_taken" in table and f"{MUSE}:{lines['muse']}" in table and "teleport-marker" in table


@pytest.mark.parametrize(
    "line", [b"1", b"null", b'"text"', b"[1, 2]", b"{}", b'{"payload": 3}', b'{"payload": {"kind": 7}}']
)
def test_records_that_are_not_objects_or_hold_odd_kinds_never_raise(line: bytes) -> None:
    import simdjson

    from musetui.core.drift import Watch
    from musetui.core.sources import registry

    for fmt in ("muse", "codex", "claude-code"):
        known = registry.spec(fmt).known
        assert known is not None
        watch = Watch(known)
        watch(orjson.loads(line), 1)
        doc = simdjson.Parser().parse(line)
        watch(doc, 2)
        del doc


def _pointer_seen(known: Any, lines: list[bytes]) -> dict[Any, list[int]]:
    """What the watch reported when it read kinds by JSON pointers (simdjson's ``at_pointer``): the reference."""
    import simdjson

    from musetui.core.drift import KEY, Watch

    ref = Watch(known)  # (its counting, fed the kinds the pointers read)
    shapes = set()  # (kind, key count) of records whose keys were all known: not read again

    def at(doc: Any, path: tuple[str, ...]) -> Any:
        try:
            return doc.at_pointer("".join("/" + k.replace("~", "~0").replace("/", "~1") for k in path))
        except (KeyError, TypeError, ValueError):
            return None

    for line_no, line in enumerate(lines, 1):
        doc = simdjson.Parser().parse(line)
        if not isinstance(doc, simdjson.Object):
            continue
        kind = at(doc, known.kind)
        if kind in known.kinds:
            if kind in known.carriers:
                ref._read_version(doc)
            sub = known.nested.get(kind)
            skind = at(doc, sub[0]) if sub is not None else None
            if sub is not None and type(skind) is str and skind not in sub[1]:
                ref._read_version(doc)
                ref._add(sub[2], skind, line_no)
        elif type(kind) is str:
            ref._read_version(doc)
            ref._add(known.what, kind, line_no)
        if (kind, len(doc)) in shapes:
            del doc
            continue
        keys = list(doc.keys())
        if known.keys.issuperset(keys):
            shapes.add((kind, len(doc)))
        else:
            ref._read_version(doc)
            for k in keys:
                if k not in known.keys:
                    ref._add(KEY, k, line_no)
        del doc
    return ref.seen


_ODD = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["run", "x", "", "payload"]), st.just([1]), st.just({}))
_KIND = st.one_of(
    st.sampled_from(["run", "response_item", "event_msg", "assistant", "new_kind", "model_completed", "message"]),
    _ODD,
)


@st.composite
def _record(draw: Any) -> bytes:
    """A record's JSON text, object members written by hand: duplicate keys, odd values, arrays where objects go."""

    def obj(members: list[tuple[str, bytes]]) -> bytes:
        return b"{" + b",".join(orjson.dumps(k) + b":" + v for k, v in members) + b"}"

    def value(depth: int) -> bytes:
        if depth and draw(st.integers(0, 3)) == 0:
            return obj([(draw(_KEYS), value(depth - 1)) for _ in range(draw(st.integers(0, 3)))])
        return orjson.dumps(draw(_KIND))

    if draw(st.booleans()):  # the formats' own shapes (Muse's run events, Codex's response items), odd values in them
        kinds = st.sampled_from([b'"run"', b'"response_item"', b'"snapshot_taken"', b'"message"', b"7", b"null", b"{}"])
        event = obj([("kind", draw(kinds)) for _ in range(draw(st.integers(0, 2)))] + [("text", b'"t"')])
        payload = [("kind", draw(kinds)), ("event", event), ("type", draw(kinds))]
        top = [("payload", obj(payload)), ("type", draw(kinds)), ("stream", b"{}")]
        if draw(st.booleans()):  # (members in another order, some left out, some twice)
            payload = draw(st.permutations(payload + payload[:1]))[: draw(st.integers(1, 4))]
            top = draw(st.permutations([("payload", obj(payload)), *top]))[: draw(st.integers(1, 4))]
        return obj(top)
    inner = obj([(draw(_KEYS), value(2)) for _ in range(draw(st.integers(0, 4)))])
    members = [(draw(_KEYS), value(3) if draw(st.booleans()) else inner) for _ in range(draw(st.integers(0, 5)))]
    if draw(st.integers(0, 9)) == 0:
        return b"[" + inner + b"]"
    return obj(members)


_KEYS = st.sampled_from(["payload", "kind", "event", "type", "stream", "timestamp", "cli_version", "x/y", "0"])


@given(st.lists(_record(), min_size=1, max_size=8))
def test_kinds_read_by_subscripts_are_those_json_pointers_read(lines: list[bytes]) -> None:
    """The watch reads kinds key by key (cheaper than simdjson's JSON pointers), with the same first-key answers."""
    import simdjson

    from musetui.core.drift import Watch
    from musetui.core.sources import registry

    for fmt in ("muse", "codex", "claude-code"):
        known = registry.spec(fmt).known
        assert known is not None
        watch = Watch(known)
        for line_no, line in enumerate(lines, 1):
            doc = simdjson.Parser().parse(line)
            watch(doc, line_no)
            del doc
        assert watch.seen == _pointer_seen(known, lines)
