"""Score musetui's attribution on real HTTP captures, against labels their envelopes prove.

Usage: python bench/eval_attribution.py [CORPUS_DIR] [--json] [--findings FILE] [--repo NAME ...]

CORPUS_DIR is what ``scripts/fetch_eval_corpora.py`` wrote (default: ``<user cache>/musetui/eval``,
with its ``MANIFEST.json``); any directory of captures also works (repository = first folder).

**The labeller** (``bench/eval_labels.py``, which imports nothing from musetui) reads only each
exchange's envelope: the request URL's host and path, the model named in the request body or URL,
and the tables of ``bench/eval_sources.toml``. Those tables were written from the services' public
API documentation and share nothing with musetui's detectors, so a detector's mistake cannot
reappear as a label. An exchange whose envelope does not decide a label is *unlabelled* and is
never guessed. A file's label is the label of the majority of its labelled model calls.

**The engine** is the one the CLI uses (``musetui.index.Index``), run twice:

- (a) on the captures as they are: one verdict per file, scored against the file's label;
- (b) on the response bodies alone, each written as a standalone JSON document (a JSON body as
  ``.json``, a streamed body as the JSON Lines of its events) in a temporary directory: what a
  transcript gives a user. Each body is scored against its own exchange's label; a verdict with no
  host is not wrong about the host there, since a body seldom shows one.

Scores per provider, host, format, repository and split (``split`` in eval_sources.toml):
accuracy, abstention (``unknown``), false flags, confident-and-wrong (confidence >= 0.8 and a
wrong provider or host) and calibration (a reliability table and the expected calibration error,
over the verdicts that name a provider).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
import tempfile
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import platformdirs
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # eval_labels beside it, when imported from elsewhere
from eval_labels import (
    ANY_HOST,
    SOURCES,
    Capture,
    Exchange,
    Label,
    Labeller,
    read_capture,
    sniff,
)

__all__ = ["ANY_HOST", "SOURCES", "Capture", "Exchange", "Label", "Labeller", "read_capture", "sniff"]

CONFIDENT = 0.8
FALSE_FLAGS = ("declared-mismatch", "time-mismatch", "imitation-id")
BINS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)


# ---------------------------------------------------------------- bodies alone
def body_document(body: bytes) -> tuple[str, bytes] | None:
    """A response body as a standalone transcript document: (suffix, bytes), or None when it is not JSON."""
    text = body.strip()
    if not text:
        return None
    try:
        json.loads(text)
        return ".json", text + b"\n"
    except ValueError:
        pass
    events = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(b"data:"):
            line = line[5:].strip()
        if line[:1] not in (b"{", b"["):
            continue
        try:
            json.loads(line)
        except ValueError:
            continue
        events.append(line)
    return (".jsonl", b"\n".join(events) + b"\n") if events else None


# ---------------------------------------------------------------- running musetui
def musetui_records(root: Path) -> dict[str, dict[str, Any]]:
    """musetui's scan record of every session under ``root``, by path (the engine the CLI runs)."""
    from musetui.index import Index

    roots = sorted(str(d) for d in root.iterdir() if d.is_dir())
    index = Index(roots, workers=int(os.environ.get("EVAL_WORKERS", "1")), use_cache=False, light=True).scan()
    return {s.abspath: s.record() for s in index.sorted_sessions()}


# ---------------------------------------------------------------- scoring
@dataclass
class Case:
    """One scored verdict: a file (mode ``capture``) or one exchange's body (mode ``body``)."""

    mode: str
    repo: str
    split: str
    path: str
    exchange: int | None
    fmt: str
    label: Label
    got: dict[str, Any]
    exchanges: int = 1
    mixed: bool = False
    also: tuple[Label, ...] = ()
    calls: str = ""  # a capture's labelled exchanges by label: "0,1,2 anthropic/-/-; 3,4 openai/-/-"

    @property
    def provider_ok(self) -> bool:
        return bool(self.got["provider"] == self.label.provider)

    @property
    def host_ok(self) -> bool:
        if self.label.host == ANY_HOST or (self.mode == "body" and self.got["host"] is None):
            return True
        return bool(self.got["host"] == self.label.host)

    @property
    def right(self) -> bool:
        if self.also:  # a capture whose model calls split evenly: any of the tied labels is right
            return any(replace(self, label=lb, also=()).right for lb in (self.label, *self.also))
        return self.provider_ok and self.host_ok

    @property
    def abstained(self) -> bool:
        return bool(self.got["provider"] == "unknown" and self.label.provider != "unknown")

    @property
    def wrong(self) -> bool:
        return not self.right and not self.abstained

    @property
    def confident_wrong(self) -> bool:
        return self.wrong and float(self.got["confidence"]) >= CONFIDENT

    @property
    def false_flags(self) -> list[str]:
        if self.mixed:  # two providers really served it: a declared model of one contradicts the other
            return [f for f in self.got["flags"] if f in ("time-mismatch", "imitation-id")]
        return [f for f in self.got["flags"] if f in (*FALSE_FLAGS, "mixed-providers", "provider-switch")]


@dataclass
class Stats:
    """Counts over a group of cases."""

    n: int = 0
    right: int = 0
    abstained: int = 0
    wrong: int = 0
    confident_wrong: int = 0
    false_flags: int = 0
    via_right: int = 0
    claims: list[tuple[float, bool]] = field(default_factory=list)

    def add(self, c: Case) -> None:
        self.n += 1
        self.right += c.right
        self.abstained += c.abstained
        self.wrong += c.wrong
        self.confident_wrong += c.confident_wrong
        self.false_flags += bool(c.false_flags)
        self.via_right += c.got["via"] == c.label.via
        if c.got["provider"] != "unknown":
            self.claims.append((float(c.got["confidence"]), c.right))

    def ece(self) -> float | None:
        """Expected calibration error over the verdicts that name a provider."""
        if not self.claims:
            return None
        total = 0.0
        for lo, hi in itertools.pairwise(BINS):
            b = [(conf, ok) for conf, ok in self.claims if lo <= conf < hi]
            if b:
                total += len(b) * abs(sum(ok for _c, ok in b) / len(b) - sum(c for c, _ok in b) / len(b))
        return total / len(self.claims)

    def reliability(self) -> list[dict[str, Any]]:
        """One row per confidence bin: verdicts, mean confidence, fraction right."""
        rows = []
        for lo, hi in itertools.pairwise(BINS):
            b = [(conf, ok) for conf, ok in self.claims if lo <= conf < hi]
            if b:
                rows.append({"bin": f"{lo:.1f}-{min(hi, 1.0):.1f}", "n": len(b),
                             "confidence": round(sum(c for c, _ok in b) / len(b), 3),
                             "right": round(sum(ok for _c, ok in b) / len(b), 3)})
        return rows

    def row(self) -> dict[str, Any]:
        """The group's numbers as a JSON-ready dict."""
        n = self.n or 1
        ece = self.ece()
        committed = self.n - self.abstained
        return {"n": self.n, "accuracy": round(self.right / n, 4), "abstention": round(self.abstained / n, 4),
                "committed_accuracy": round(self.right / committed, 4) if committed else None,
                "wrong": self.wrong, "confident_wrong": self.confident_wrong, "false_flags": self.false_flags,
                "via_accuracy": round(self.via_right / n, 4), "ece": None if ece is None else round(ece, 4)}


GROUPS: dict[str, Callable[[Case], str]] = {
    "provider": lambda c: c.label.provider,
    "host": lambda c: c.label.host or "-",
    "format": lambda c: c.fmt,
    "repository": lambda c: c.repo,
    "split": lambda c: c.split,
}


def summarise(cases: list[Case]) -> dict[str, Any]:
    """Overall, grouped and calibration numbers of one mode."""
    overall = Stats()
    groups: dict[str, dict[str, Stats]] = {g: defaultdict(Stats) for g in GROUPS}
    for c in cases:
        overall.add(c)
        for g, key in GROUPS.items():
            groups[g][key(c)].add(c)
    out: dict[str, Any] = {"overall": overall.row(), "reliability": overall.reliability()}
    for g, by in groups.items():
        out[g] = {k: v.row() for k, v in sorted(by.items(), key=lambda kv: -kv[1].n)}
    out["reliability_by_split"] = {k: v.reliability() for k, v in groups["split"].items()}
    return out


# ---------------------------------------------------------------- the run
def _manifest(corpus: Path, only: set[str]) -> list[dict[str, Any]]:
    """The manifest the fetch script wrote, or (for a directory laid out as ``<owner>__<name>/<file>``,
    like the real-world corpus) one built by sniffing every file."""
    if (corpus / "MANIFEST.json").is_file():
        rows: list[dict[str, Any]] = json.loads((corpus / "MANIFEST.json").read_text(encoding="utf-8"))
    else:
        rows = []
        for f in sorted(corpus.glob("*/*")):
            kind = sniff(f.read_bytes()) if f.is_file() else None
            if kind is not None:
                repo = f.parent.name.replace("__", "/", 1)
                rows.append({"repo": repo, "path": f.name.replace("__", "/"), "kind": kind,
                             "file": f"{f.parent.name}/{f.name}"})
    return [r for r in rows if not only or r["repo"] in only]


def load_captures(
    corpus: Path, labeller: Labeller, splits: dict[str, str], only: set[str], doubts: frozenset[tuple[str, str]] = frozenset()
) -> tuple[list[Capture], Counter[str]]:
    """Read and label every capture of the manifest; count what could not be read or is doubted."""
    caps, problems = [], Counter[str]()
    for row in _manifest(corpus, only):
        if (row["repo"], row["path"]) in doubts:
            problems["envelope known to contradict the body (eval_sources.toml [[doubt]])"] += 1
            continue
        path = corpus / row["file"]
        try:
            exchanges = read_capture(path.read_bytes())
        except (ValueError, yaml.YAMLError, KeyError, IndexError, TypeError, AttributeError) as exc:
            problems[f"unreadable ({type(exc).__name__})"] += 1
            continue
        caps.append(Capture.labelled(row["repo"], splits.get(row["repo"], "fit"), row["path"], path, row["kind"],
                                     exchanges, labeller))
    return caps, problems


def _got(rec: dict[str, Any] | None) -> dict[str, Any]:
    if rec is None:
        return {"provider": "unknown", "host": None, "via": None, "confidence": 0.0, "flags": [], "evidence": [],
                "format": "(not read)"}
    return rec


def capture_cases(caps: list[Capture], records: dict[str, dict[str, Any]]) -> list[Case]:
    """Mode (a): one case per labelled capture file."""
    out = []
    for cap in caps:
        labels, mixed = cap.file_labels()
        if not labels:
            continue
        got = _got(records.get(str(cap.file.resolve())))
        by: dict[str, list[str]] = defaultdict(list)
        for i, lb in sorted(cap.labels.items()):
            by[f"{lb.provider}/{lb.host or '-'}/{lb.via or '-'}"].append(str(i))
        calls = "; ".join(f"{','.join(ix)} {key}" for key, ix in by.items())
        out.append(Case("capture", cap.repo, cap.split, cap.path, None, cap.kind, labels[0], got, len(cap.labels), mixed,
                        tuple(labels[1:]), calls))
    return out


def body_cases(caps: list[Capture], tmp: Path) -> tuple[list[Case], Counter[str]]:
    """Mode (b): one case per labelled exchange whose response body is JSON or streamed JSON."""
    where: dict[str, tuple[Capture, Exchange]] = {}
    skipped = Counter[str]()
    for n, cap in enumerate(caps):
        for ex in cap.exchanges:
            if ex.index not in cap.labels:
                continue
            doc = body_document(ex.resp_body)
            if doc is None:
                skipped["body not JSON (binary event stream, brotli, text)"] += 1
                continue
            target = tmp / cap.repo.replace("/", "__") / f"{n:05d}-{ex.index:03d}{doc[0]}"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(doc[1])
            where[str(target.resolve())] = (cap, ex)
    records = musetui_records(tmp)
    out = []
    for key, (cap, ex) in where.items():
        got = _got(records.get(key))
        out.append(Case("body", cap.repo, cap.split, cap.path, ex.index, got["format"], cap.labels[ex.index], got))
    return out, skipped


# ---------------------------------------------------------------- reports
def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _table(title: str, rows: dict[str, dict[str, Any]], limit: int = 40) -> list[str]:
    out = [f"| {title} | n | accuracy | abstained | right when not abstaining | wrong | confident-and-wrong "
           "| false flags | via right | ECE |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, r in list(rows.items())[:limit]:
        ece = "–" if r["ece"] is None else f"{r['ece']:.3f}"
        committed = "–" if r["committed_accuracy"] is None else _pct(r["committed_accuracy"])
        out.append(f"| {k} | {r['n']} | {_pct(r['accuracy'])} | {_pct(r['abstention'])} | {committed} | {r['wrong']} | "
                   f"{r['confident_wrong']} | {r['false_flags']} | {_pct(r['via_accuracy'])} | {ece} |")
    return out


def _reliability(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| confidence | verdicts | mean confidence | fraction right |", "|---|---:|---:|---:|"]
    out += [f"| {r['bin']} | {r['n']} | {r['confidence']:.2f} | {_pct(r['right'])} |" for r in rows]
    return out


def markdown(result: dict[str, Any]) -> str:
    """The whole result as Markdown tables."""
    meta = result["corpus"]
    lines = [f"Corpus: {meta['files']} capture files from {meta['repositories']} repositories, "
             f"{meta['exchanges']} exchanges, {meta['labelled']} labelled model calls "
             f"({meta['unlabelled']} unlabelled: the envelope does not decide them). "
             f"Held out (split `holdout`): {', '.join(meta['holdout']) or 'none'}.", ""]
    for mode, title in (("capture", "(a) Full captures, one verdict per file"),
                        ("body", "(b) Response bodies alone, one verdict per exchange")):
        s = result[mode]
        lines += [f"### {title}", "", *_table("all", {"all": s["overall"]}), ""]
        for g in ("provider", "host", "format", "split", "repository"):
            lines += [*_table(g, s[g]), ""]
        lines += ["Reliability (verdicts that name a provider):", "", *_reliability(s["reliability"]), ""]
        for split, rows in sorted(s["reliability_by_split"].items()):
            lines += [f"Reliability, split `{split}`:", "", *_reliability(rows), ""]
    return "\n".join(lines)


DOCS_BEGIN = "<!-- eval_attribution:begin -->"
DOCS_END = "<!-- eval_attribution:end -->"


def _bin_right(rows: list[dict[str, Any]], lo: float) -> str:
    row = next((r for r in rows if r["bin"].startswith(f"{lo:.1f}")), None)
    return "no verdicts" if row is None else f"{_pct(row['right'])} of {row['n']}"


def docs_section(result: dict[str, Any]) -> str:
    """The results section of docs/fingerprints.md: what a confidence means, measured."""
    m, cap, body = result["corpus"], result["capture"], result["body"]
    lines = [
        DOCS_BEGIN,
        f"Measured on {m['date']} at commit `{m['commit']}` by `bench/eval_attribution.py`, over "
        f"{m['files']:,} public HTTP captures ({m['exchanges']:,} exchanges, {m['labelled']:,} of them model calls "
        f"whose request envelope names the provider) from {m['repositories']} repositories "
        "(`bench/eval_sources.toml`). Each label comes from the request alone (host, path, the model "
        "asked for) through tables that share nothing with the detectors; an exchange whose envelope "
        "does not decide a label is not scored. Two runs: **full capture** (the file as recorded, one "
        "verdict per file) and **body only** (each response body alone, as a transcript holds it).",
        "",
        f"**What a confidence of 0.9 means.** Of full-capture verdicts at 0.9 or more, "
        f"{_bin_right(cap['reliability'], 0.9)} were right; body only, {_bin_right(body['reliability'], 0.9)}. "
        f"At 0.5–0.6 (a declared model with little else), {_bin_right(cap['reliability'], 0.5)} and "
        f"{_bin_right(body['reliability'], 0.5)}: low confidence here means *little evidence*, not *likely "
        "wrong*, so the scale is conservative below 0.8 (hence the ECE). `unknown` is an abstention, never "
        "a guess.",
        "",
        "| confidence | full capture: verdicts | right | body only: verdicts | right |",
        "|---|---:|---:|---:|---:|",
    ]
    bins = dict.fromkeys(r["bin"] for r in cap["reliability"] + body["reliability"])
    for b in sorted(bins):
        c = next((r for r in cap["reliability"] if r["bin"] == b), None)
        d = next((r for r in body["reliability"] if r["bin"] == b), None)
        lines.append(f"| {b} | {c['n'] if c else 0} | {_pct(c['right']) if c else '–'} | "
                     f"{d['n'] if d else 0} | {_pct(d['right']) if d else '–'} |")
    lines += ["", "| provider (label) | full: n | right | abstained | confident and wrong | body: n | right | "
              "abstained | confident and wrong |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k in list(dict.fromkeys([*cap["provider"], *body["provider"]])):
        c, d = cap["provider"].get(k), body["provider"].get(k)
        cells = [f"{r['n']} | {_pct(r['accuracy'])} | {_pct(r['abstention'])} | {r['confident_wrong']}"
                 if r else "0 | – | – | –" for r in (c, d)]
        lines.append(f"| {k} | {cells[0]} | {cells[1]} |")
    oc, ob = cap["overall"], body["overall"]
    lines += ["", f"Overall: full capture {_pct(oc['accuracy'])} right, {_pct(oc['abstention'])} abstained, "
              f"{oc['confident_wrong']} confident and wrong, {oc['false_flags']} with a false flag, ECE {oc['ece']}; "
              f"body only {_pct(ob['accuracy'])} right ({_pct(ob['committed_accuracy'] or 0)} of those not "
              f"abstaining), {_pct(ob['abstention'])} abstained, {ob['confident_wrong']} confident and wrong, "
              f"{ob['false_flags']} with a false flag, ECE {ob['ece']}. Repositories held out for checking a "
              f"calibration: {', '.join(m['holdout'])}. Per host, format and repository: run the script.",
              DOCS_END]
    return "\n".join(lines)


def update_docs(path: Path, result: dict[str, Any]) -> None:
    """Replace the marked results section of ``path`` with this result."""
    text = path.read_text(encoding="utf-8")
    head, _b, rest = text.partition(DOCS_BEGIN)
    _old, _e, tail = rest.partition(DOCS_END)
    if not _b or not _e:
        raise SystemExit(f"{path} has no {DOCS_BEGIN} ... {DOCS_END} section")
    path.write_text(head + docs_section(result) + tail, encoding="utf-8")


def _misleading(c: Case) -> str:
    """The evidence behind a miss: what raised its false flags, else what named the wrong verdict."""
    flagged = [e for e in c.got.get("evidence", []) if c.false_flags and
               re.search(r"imitation|mismatch|problems:|contradict|declares|another", str(e.get("detail")))]
    ev = flagged or [e for e in c.got.get("evidence", []) if e.get("provider") == c.got["provider"] or
                     (e.get("host") and e.get("host") == c.got["host"] and not c.host_ok)]
    ev.sort(key=lambda e: -float(e.get("weight") or 0))
    parts = [f"`{e['detector']}` w{e.get('weight')} line {e.get('line')} `{e.get('field')}` = "
             f"`{str(e.get('value'))[:70]}` ({str(e.get('detail'))[:150]})" for e in ev[:3]]
    return "; ".join(parts) or "(no evidence names that verdict: declared or default)"


def findings(result_cases: dict[str, list[Case]], meta: dict[str, Any]) -> str:
    """Every miss, confident-and-wrong first, then false flags, then wrong at low confidence."""
    out = ["# musetui attribution evaluation: misses", "",
           f"Generated {meta['date']} at musetui commit {meta['commit']} by bench/eval_attribution.py "
           f"over {meta['files']} captures / {meta['exchanges']} exchanges from {meta['repositories']} repositories.",
           "Label = what the request envelope proves (URL host/path, model in the request); "
           "verdict = musetui's provider/host/via/confidence. A full capture's line lists its labelled "
           "exchanges (0-based, in file order) by label; a body's line names its one exchange.",
           f"Not scored: {meta['unlabelled']} exchanges whose envelope decides no label; "
           f"{json.dumps(meta['unreadable'])}; bodies skipped {json.dumps(meta['bodies_skipped'])}. "
           "Labels at a loopback host are the declared model's maker only (a local server may be a mock "
           "or a gateway): weigh those misses accordingly.", ""]
    picks: list[tuple[str, Callable[[Case], bool]]] = [
        ("Confident and wrong (confidence >= 0.8)", lambda c: c.confident_wrong),
        ("False flags", lambda c: bool(c.false_flags)),
        ("Wrong at lower confidence", lambda c: c.wrong and not c.confident_wrong),
    ]
    for title, pick in picks:
        for mode in ("capture", "body"):
            cases = [c for c in result_cases[mode] if pick(c)]
            out += [f"## {title}: {'full captures' if mode == 'capture' else 'bodies alone'} ({len(cases)})", ""]
            cases.sort(key=lambda c: (c.repo, c.path, c.exchange or 0))
            for c in cases:
                g = c.got
                where = f"exchange {c.exchange}" if c.exchange is not None else f"exchanges {c.calls}"
                out.append(f"- {c.repo} `{c.path}` {where}: "
                           f"label {c.label.provider}/{c.label.host or '-'}/{c.label.via or '-'} ({c.label.basis}); "
                           f"musetui {g['provider']}/{g['host'] or '-'}/{g['via'] or '-'} {float(g['confidence']):.2f} "
                           f"[{g['format']}] flags {','.join(g['flags']) or '-'}; evidence: {_misleading(c)}")
            out.append("")
    return "\n".join(out[:6] + _patterns(result_cases) + out[6:] + _abstentions(result_cases))


def _evidence_kind(text: str) -> str:
    """A short name for the first evidence behind a miss: detector, field leaf, id marker and year."""
    text = text.split("; `", 1)[0]  # the first evidence only
    hit = re.match(r"`([^`]+)` w\S+ line \S+ `([^`]*)`", text)
    if hit is None:
        return text[:40]
    leaf = re.split(r"[.\]\[]", hit.group(2).rstrip("]"))[-1]
    extra = [m.group(0) for m in (re.search(r"marker [0-9a-f]{4}", text), re.search(r"minted \d{4}", text)) if m]
    return " ".join([f"`{hit.group(1)}`", leaf, *extra])


def _patterns(result_cases: dict[str, list[Case]]) -> list[str]:
    """The misses grouped by what went wrong and the evidence behind it, largest group first."""
    groups: dict[tuple[str, ...], list[Case]] = defaultdict(list)
    for mode, cases in result_cases.items():
        for c in cases:
            if not (c.wrong or c.false_flags):
                continue
            what = ("confident-and-wrong" if c.confident_wrong else "wrong" if c.wrong else "false " + "+".join(c.false_flags))
            ev = _evidence_kind(_misleading(c))
            groups[(what, mode, f"{c.label.provider}->{c.got['provider']}/{c.got['host'] or '-'}", ev)].append(c)
    out = ["## Patterns (every miss below, grouped)", "",
           "| miss | mode | label -> verdict | first evidence | count | repositories | example |",
           "|---|---|---|---|---:|---|---|"]
    for (what, mode, change, ev), cs in sorted(groups.items(), key=lambda kv: (kv[0][0] != "confident-and-wrong", -len(kv[1]))):
        repos = ", ".join(sorted({c.repo for c in cs}))
        out.append(f"| {what} | {mode} | {change} | {ev} | {len(cs)} | {repos} | `{cs[0].path.rsplit('/', 1)[-1]}` |")
    return [*out, ""]


def _abstentions(result_cases: dict[str, list[Case]]) -> list[str]:
    """Abstentions where the label names a provider, grouped by repository, format and label."""
    out = ["## Abstained (`unknown`) where the envelope names a provider", ""]
    for mode in ("capture", "body"):
        groups: dict[tuple[str, str, str], list[Case]] = defaultdict(list)
        for c in result_cases[mode]:
            if c.abstained:
                groups[(c.repo, c.fmt, c.label.provider)].append(c)
        out += [f"### {'full captures' if mode == 'capture' else 'bodies alone'} "
                f"({sum(len(v) for v in groups.values())})", ""]
        for (repo, fmt, prov), cs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            ex = cs[0]
            out.append(f"- {len(cs)} × {repo} [{fmt}] label {prov}: e.g. `{ex.path}` exchange "
                       f"{'-' if ex.exchange is None else ex.exchange} ({ex.label.basis})")
        out.append("")
    return out


def _commit() -> str:
    import subprocess

    proc = subprocess.run(["git", "-C", str(SOURCES.parent), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() or "unknown"


def evaluate(corpus: Path, only: set[str] | None = None, bodies: bool = True) -> tuple[dict[str, Any], dict[str, list[Case]]]:
    """Label, scan and score a corpus; return the JSON result and the scored cases."""
    import datetime

    conf = tomllib.loads(SOURCES.read_text(encoding="utf-8"))
    splits = {r["name"]: r.get("split", "fit") for r in conf["repo"]}
    doubts = frozenset((d["repo"], d["path"]) for d in conf.get("doubt", []))
    caps, problems = load_captures(corpus, Labeller(conf["label"]), splits, only or set(), doubts)
    cases: dict[str, list[Case]] = {"capture": capture_cases(caps, musetui_records(corpus)), "body": []}
    skipped: Counter[str] = Counter()
    if bodies:
        with tempfile.TemporaryDirectory(prefix="musetui-eval-") as tmp:
            cases["body"], skipped = body_cases(caps, Path(tmp))
    exchanges = sum(len(c.exchanges) for c in caps)
    labelled = sum(len(c.labels) for c in caps)
    meta = {"date": datetime.date.today().isoformat(), "commit": _commit(), "files": len(caps),
            "repositories": len({c.repo for c in caps}), "exchanges": exchanges, "labelled": labelled,
            "unlabelled": exchanges - labelled, "unreadable": dict(problems), "bodies_skipped": dict(skipped),
            "holdout": sorted({c.repo for c in caps if c.split == "holdout"})}
    result = {"corpus": meta, "capture": summarise(cases["capture"]), "body": summarise(cases["body"])}
    return result, cases


def main(argv: list[str]) -> int:
    """Run the evaluation and print Markdown (or ``--json``); write the findings file when asked."""
    p = argparse.ArgumentParser(prog="eval_attribution", description=__doc__.splitlines()[0])
    p.add_argument("corpus", nargs="?", default=str(Path(platformdirs.user_cache_dir("musetui")) / "eval"))
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--findings", metavar="FILE", help="write every miss, worst first, as Markdown")
    p.add_argument("--repo", action="append", default=[], help="only this repository (repeatable)")
    p.add_argument("--no-bodies", action="store_true", help="skip mode (b), the bodies alone")
    p.add_argument("--update-docs", metavar="MD", help="rewrite the marked results section of this file")
    p.add_argument("--from-json", metavar="FILE", help="report a saved --json result instead of running")
    args = p.parse_args(argv)
    if args.from_json:
        result = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        if args.update_docs:
            update_docs(Path(args.update_docs), result)
        sys.stdout.write(markdown(result) + "\n")
        return 0
    result, cases = evaluate(Path(args.corpus), set(args.repo), bodies=not args.no_bodies)
    if args.update_docs:
        update_docs(Path(args.update_docs), result)
    if args.findings:
        Path(args.findings).parent.mkdir(parents=True, exist_ok=True)
        Path(args.findings).write_text(findings(cases, result["corpus"]) + "\n", encoding="utf-8")
    sys.stdout.write(json.dumps(result, indent=1) + "\n" if args.json else markdown(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
