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

**The engine** is the one the CLI uses (``musetui.core.index.Index``), run twice:

- (a) on the captures as they are: one verdict per file, scored against the file's label;
- (b) on the response bodies alone, each written as a standalone JSON document (a JSON body as
  ``.json``, a streamed body as the JSON Lines of its events) in a temporary directory: what a
  transcript gives a user. Each body is scored against its own exchange's label; a verdict with no
  host is not wrong about the host there, since a body seldom shows one.

Scores per provider, host, format, repository and split (``split`` in eval_sources.toml):
accuracy, abstention (``unknown``), false flags, confident-and-wrong (confidence >= 0.8 and a
wrong provider or host) and calibration (a reliability table and the expected calibration error,
over the verdicts that name a provider). A capture listed under ``[[edited]]`` (a person wrote or
moved its ids, seen by reading it) keeps its ``imitation-id`` and ``time-mismatch``: there they are true.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
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

# eval_labels and eval_report lie beside this file, also when it is imported from elsewhere.
sys.path.insert(0, str(Path(__file__).resolve().parent))
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
from eval_report import findings, markdown, update_docs

__all__ = [
    "ANY_HOST",
    "SOURCES",
    "Capture",
    "Exchange",
    "Label",
    "Labeller",
    "read_capture",
    "sniff",
]

CONFIDENT = 0.8
#: The most a declaration alone earns (DESIGN.md: "the declared provider at medium confidence at most").
MEDIUM = 0.5
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
    from musetui.core.index import Index

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
    edited: bool = False  # eval_sources.toml [[edited]]: a person wrote its ids, so the id-time flags are true

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
        flags = [f for f in self.got["flags"] if f in (*FALSE_FLAGS, "mixed-providers", "provider-switch")]
        return [f for f in flags if f not in ("imitation-id", "time-mismatch")] if self.edited else flags


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
    evidenced: int = 0  # cases whose record names a provider in any evidence entry
    evidenced_right: int = 0
    claims: list[tuple[float, bool]] = field(default_factory=list)

    def add(self, c: Case) -> None:
        self.n += 1
        self.right += c.right
        self.abstained += c.abstained
        self.wrong += c.wrong
        self.confident_wrong += c.confident_wrong
        self.false_flags += bool(c.false_flags)
        self.via_right += c.got["via"] == c.label.via
        if any(e.get("provider") for e in c.got.get("evidence") or ()):
            self.evidenced += 1
            self.evidenced_right += c.right
        if c.got["provider"] != "unknown":
            self.claims.append((float(c.got["confidence"]), c.right))

    def ece(self, above: float = -1.0) -> float | None:
        """Expected calibration error over the verdicts that name a provider (with a confidence over ``above``).

        ``above=MEDIUM`` leaves out the verdicts that a declaration alone, or little else, decided:
        DESIGN.md holds those at medium confidence at most whatever their measured accuracy, so
        they are under-confident by design, and only the verdicts above that cap can be calibrated.
        """
        claims = [(conf, ok) for conf, ok in self.claims if conf > above]
        if not claims:
            return None
        total = 0.0
        for lo, hi in itertools.pairwise(BINS):
            b = [(conf, ok) for conf, ok in claims if lo <= conf < hi]
            if b:
                total += len(b) * abs(sum(ok for _c, ok in b) / len(b) - sum(c for c, _ok in b) / len(b))
        return total / len(claims)

    def reliability(self) -> list[dict[str, Any]]:
        """One row per confidence bin: verdicts, mean confidence, fraction right."""
        rows = []
        for lo, hi in itertools.pairwise(BINS):
            b = [(conf, ok) for conf, ok in self.claims if lo <= conf < hi]
            if b:
                rows.append(
                    {
                        "bin": f"{lo:.1f}-{min(hi, 1.0):.1f}",
                        "n": len(b),
                        "confidence": round(sum(c for c, _ok in b) / len(b), 3),
                        "right": round(sum(ok for _c, ok in b) / len(b), 3),
                    }
                )
        return rows

    def row(self) -> dict[str, Any]:
        """The group's numbers as a JSON-ready dict."""
        n = self.n or 1
        ece = self.ece()
        ece_above = self.ece(above=MEDIUM)
        committed = self.n - self.abstained
        return {
            "n": self.n,
            "accuracy": round(self.right / n, 4),
            "abstention": round(self.abstained / n, 4),
            "committed_accuracy": round(self.right / committed, 4) if committed else None,
            "wrong": self.wrong,
            "confident_wrong": self.confident_wrong,
            "false_flags": self.false_flags,
            "via_accuracy": round(self.via_right / n, 4),
            "ece": None if ece is None else round(ece, 4),
            "ece_above_medium": None if ece_above is None else round(ece_above, 4),
            "evidenced": self.evidenced,
            "evidenced_accuracy": round(self.evidenced_right / self.evidenced, 4) if self.evidenced else None,
        }


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
                rows.append(
                    {
                        "repo": repo,
                        "path": f.name.replace("__", "/"),
                        "kind": kind,
                        "file": f"{f.parent.name}/{f.name}",
                    }
                )
    return [r for r in rows if not only or r["repo"] in only]


def load_captures(
    corpus: Path,
    labeller: Labeller,
    splits: dict[str, str],
    only: set[str],
    doubts: frozenset[tuple[str, str]] = frozenset(),
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
        caps.append(
            Capture.labelled(
                row["repo"],
                splits.get(row["repo"], "fit"),
                row["path"],
                path,
                row["kind"],
                exchanges,
                labeller,
            )
        )
    return caps, problems


def _got(rec: dict[str, Any] | None) -> dict[str, Any]:
    if rec is None:
        return {
            "provider": "unknown",
            "host": None,
            "via": None,
            "confidence": 0.0,
            "flags": [],
            "evidence": [],
            "format": "(not read)",
        }
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
        out.append(
            Case(
                "capture",
                cap.repo,
                cap.split,
                cap.path,
                None,
                cap.kind,
                labels[0],
                got,
                len(cap.labels),
                mixed,
                tuple(labels[1:]),
                calls,
            )
        )
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
        out.append(
            Case(
                "body",
                cap.repo,
                cap.split,
                cap.path,
                ex.index,
                got["format"],
                cap.labels[ex.index],
                got,
            )
        )
    return out, skipped


def _commit() -> str:
    import subprocess

    proc = subprocess.run(
        ["git", "-C", str(SOURCES.parent), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() or "unknown"


def evaluate(
    corpus: Path, only: set[str] | None = None, bodies: bool = True
) -> tuple[dict[str, Any], dict[str, list[Case]]]:
    """Label, scan and score a corpus; return the JSON result and the scored cases."""
    import datetime

    conf = tomllib.loads(SOURCES.read_text(encoding="utf-8"))
    splits = {r["name"]: r.get("split", "fit") for r in conf["repo"]}
    doubts = frozenset((d["repo"], d["path"]) for d in conf.get("doubt", []))
    caps, problems = load_captures(corpus, Labeller(conf["label"]), splits, only or set(), doubts)
    cases: dict[str, list[Case]] = {
        "capture": capture_cases(caps, musetui_records(corpus)),
        "body": [],
    }
    skipped: Counter[str] = Counter()
    if bodies:
        with tempfile.TemporaryDirectory(prefix="musetui-eval-") as tmp:
            cases["body"], skipped = body_cases(caps, Path(tmp))
    edited = frozenset((d["repo"], d["path"]) for d in conf.get("edited", []))
    for case in (*cases["capture"], *cases["body"]):
        case.edited = (case.repo, case.path) in edited
    exchanges = sum(len(c.exchanges) for c in caps)
    labelled = sum(len(c.labels) for c in caps)
    meta = {
        "date": datetime.date.today().isoformat(),
        "commit": _commit(),
        "files": len(caps),
        "repositories": len({c.repo for c in caps}),
        "exchanges": exchanges,
        "labelled": labelled,
        "unlabelled": exchanges - labelled,
        "unreadable": dict(problems),
        "bodies_skipped": dict(skipped),
        "holdout": sorted({c.repo for c in caps if c.split == "holdout"}),
    }
    result = {
        "corpus": meta,
        "capture": summarise(cases["capture"]),
        "body": summarise(cases["body"]),
    }
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
