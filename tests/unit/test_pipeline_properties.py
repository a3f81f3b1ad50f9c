"""Property tests: whole trees of arbitrary JSON and JSONL through scan, search, show and opening.

Each example writes a tree beside a copy of the bundled sample: multi-line files, scalars,
top-level arrays, BOMs, CRLF, broken lines, type swaps of real records, deep nesting and
odd names. Then ``scan`` (cache off, cold and warm) gives one record per file, the
sample's sessions unchanged; ``search`` and ``show --line`` answer; and every session
opens through the app's own headless path (:func:`open_session` or the lazy opener).
The default run is short; ``MUSETUI_SLOW=1 pytest -m slow`` goes deeper.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musetui.cli import main
from musetui.core.index import Index
from musetui.core.session import open_session
from musetui.widgets.lazy_session import can_open_lazily, open_lazily

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts"
SLOW = bool(os.environ.get("MUSETUI_SLOW"))

_REAL_LINES = [ln for p in sorted(SAMPLE.rglob("*.jsonl")) for ln in p.read_bytes().split(b"\n") if ln.strip()][:60]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "id",
                    "payload",
                    "content",
                    "kind",
                    "text",
                    "model",
                    "stream",
                    "output",
                    "timestamp",
                    "recorded_at",
                    "x",
                ]
            )
            | st.text(max_size=8),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


def _dumps(v: Any) -> bytes:
    try:
        return orjson.dumps(v)
    except TypeError:  # an integer beyond 64 bits: written as JSON text all the same
        import json

        return json.dumps(v).encode()


def _deep(depth: int) -> bytes:
    out = b'"x"'
    for i in range(depth):
        out = b"[" + out + b"]" if i % 2 else b'{"content":' + out + b"}"
    return out


@st.composite
def real_swapped(draw: st.DrawFn) -> bytes:
    """A real record with one value swapped for another type (or a key dropped)."""
    obj = orjson.loads(draw(st.sampled_from(_REAL_LINES)))
    paths: list[tuple[Any, ...]] = [()]
    stack: list[tuple[Any, tuple[Any, ...]]] = [(obj, ())]
    while stack:
        cur, path = stack.pop()
        items = cur.items() if isinstance(cur, dict) else enumerate(cur) if isinstance(cur, list) else []
        for k, v in items:
            paths.append((*path, k))
            if len(path) < 5:
                stack.append((v, (*path, k)))
    path = draw(st.sampled_from(paths))
    if not path:
        return _dumps(draw(json_values))
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(json_values)
    return _dumps(obj)


line_st = st.one_of(
    json_values.map(_dumps),
    real_swapped(),
    st.sampled_from(_REAL_LINES),
    st.binary(max_size=40),
    st.sampled_from(_REAL_LINES).map(lambda b: b[: len(b) // 2]),
    st.integers(min_value=300, max_value=1000).map(_deep),
    st.just(b"123"),
    st.just(b'"a string"'),
    st.just(b"[1,2,3]"),
)

names = st.sampled_from(
    [
        "a.jsonl",
        "b.json",
        "c.ndjson",
        "d.txt",
        "new\nline.jsonl",
        "bidi\u202e.jsonl",
        "zw\u200b.jsonl",
        os.fsdecode(b"bad\xff.jsonl"),
        "sp ace.jsonl",
        "-dash.jsonl",
        "x.log",
        "deep/er/e.jsonl",
    ]
)


@st.composite
def files(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(names)
    lines = draw(st.lists(line_st, min_size=0, max_size=8))
    lines.append(draw(st.sampled_from(_REAL_LINES) | json_values.map(_dumps)))  # at least one record
    form = draw(st.sampled_from(["jsonl", "crlf", "bom", "document", "no-final-newline"]))
    if form == "document":
        doc = draw(json_values | st.lists(json_values, max_size=4))
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) if _is_small(doc) else _dumps(doc)
        return name, data + b"\n"
    sep = b"\r\n" if form == "crlf" else b"\n"
    data = sep.join(lines) + (b"" if form == "no-final-newline" else sep)
    if form == "bom":  # a BOM spoils the first line only
        data = b"\xef\xbb\xbf" + data + lines[-1] + sep
    return name, data


def _is_small(v: Any) -> bool:
    try:
        orjson.dumps(v)
    except TypeError:
        return False
    return True


tree_st = st.lists(files(), min_size=1, max_size=5, unique_by=lambda f: f[0])


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _check_tree(
    tmp: Path, tree: list[tuple[str, bytes]], capsys: pytest.CaptureFixture[str], rng: random.Random
) -> None:
    root = tmp / f"t{rng.randrange(10**9)}"
    shutil.copytree(SAMPLE, root / "sample")
    gen = root / "gen"
    for name, data in tree:
        p = gen / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    code, baseline, _ = _run(capsys, "scan", str(root / "sample"), "--json", "--no-cache")
    sample = {orjson.loads(x)["path"]: x for x in baseline.splitlines()}
    outputs = []
    for argv in (["--no-cache"], [], []):  # off, cold, warm
        code, out, err = _run(capsys, "scan", str(root), "--json", *argv)
        assert code == 0, err
        assert "internal error" not in err, err
        outputs.append(out)
    assert outputs[0] == outputs[1] == outputs[2]
    recs = [orjson.loads(x) for x in outputs[0].splitlines()]
    gen_paths = sorted(r["path"] for r in recs if str(r["path"]).startswith("gen/"))
    expect = sorted("gen/" + name for name, _ in tree if not name.endswith((".txt", ".log")))
    from musetui.core.safetext import json_name

    assert [p for p in gen_paths if not p.endswith((".txt", ".log"))] == [json_name(p) for p in expect]
    for r in recs:
        if str(r["path"]).startswith("sample/"):
            rel = str(r["path"])[len("sample/") :]
            want = orjson.loads(sample[rel])
            got = dict(r)
            got["path"], want["root"], got["root"] = rel, None, None
            # An outlier is relative to its fleet, the sessions of its format under the same root, and
            # the generated files join that fleet: they may outvote a sample session. Everything else
            # about a sample session's record must be untouched by its new neighbours.
            if "outlier" in got["flags"] and "outlier" not in want["flags"]:
                assert "under this root are" in got["evidence"][0]["detail"], got
                assert any(str(o["path"]).startswith("gen/") and o["format"] == got["format"] for o in recs)
            for rec in (got, want):
                rec["flags"] = [f for f in rec["flags"] if f != "outlier"]
                rec["evidence"] = [e for e in rec["evidence"] if e["detector"] != "outlier"]
            assert got == want
    assert sum(1 for r in recs if str(r["path"]).startswith("sample/")) == len(sample) == 11
    for query in ("hello", "has:encrypted", "kind:tool_call", "/rs_[0-9a-f]+/"):
        code, out, err = _run(capsys, "search", str(gen), query, "--json")
        assert code in (0, 1) and "internal error" not in err, err
    index = Index([str(gen)], workers=1).scan()
    for s in index.sessions:
        opened = open_lazily(s) if can_open_lazily(s) else open_session(s)
        assert not opened.diagnostics, opened.diagnostics
        for item in list(opened.items)[:20]:
            opened.decoded(item)
            opened.raw(item)
        if opened.items:
            code, out, err = _run(capsys, "show", s.abspath, "--line", str(opened.items[-1].line))
            assert code == 0 and "Traceback" not in err, err
    shutil.rmtree(root)


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(tree=tree_st, seed=st.integers(0, 2**32))
def test_arbitrary_trees_scan_search_show_and_open(
    tree: list[tuple[str, bytes]],
    seed: int,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _check_tree(tmp_path_factory.mktemp("prop"), tree, capsys, random.Random(seed))


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason="deep property run: MUSETUI_SLOW=1 pytest -m slow")
@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(tree=tree_st, seed=st.integers(0, 2**32))
def test_arbitrary_trees_deep(
    tree: list[tuple[str, bytes]],
    seed: int,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _check_tree(tmp_path_factory.mktemp("prop"), tree, capsys, random.Random(seed))
