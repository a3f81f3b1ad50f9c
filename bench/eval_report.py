"""The reports of bench/eval_attribution.py: Markdown tables, the findings file and the docs section."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eval_attribution import Case


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _table(title: str, rows: dict[str, dict[str, Any]], limit: int = 40) -> list[str]:
    out = [
        f"| {title} | n | accuracy | abstained | right when not abstaining | wrong | confident-and-wrong "
        "| false flags | via right | ECE |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, r in list(rows.items())[:limit]:
        ece = "–" if r["ece"] is None else f"{r['ece']:.3f}"
        committed = "–" if r["committed_accuracy"] is None else _pct(r["committed_accuracy"])
        out.append(
            f"| {k} | {r['n']} | {_pct(r['accuracy'])} | {_pct(r['abstention'])} | {committed} | {r['wrong']} | "
            f"{r['confident_wrong']} | {r['false_flags']} | {_pct(r['via_accuracy'])} | {ece} |"
        )
    return out


def _reliability(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| confidence | verdicts | mean confidence | fraction right |", "|---|---:|---:|---:|"]
    out += [f"| {r['bin']} | {r['n']} | {r['confidence']:.2f} | {_pct(r['right'])} |" for r in rows]
    return out


def markdown(result: dict[str, Any]) -> str:
    """The whole result as Markdown tables."""
    meta = result["corpus"]
    lines = [
        f"Corpus: {meta['files']} capture files from {meta['repositories']} repositories, "
        f"{meta['exchanges']} exchanges, {meta['labelled']} labelled model calls "
        f"({meta['unlabelled']} unlabelled: the envelope does not decide them). "
        f"Held out (split `holdout`): {', '.join(meta['holdout']) or 'none'}.",
        "",
    ]
    for mode, title in (
        ("capture", "(a) Full captures, one verdict per file"),
        ("body", "(b) Response bodies alone, one verdict per exchange"),
    ):
        s = result[mode]
        lines += [f"### {title}", "", *_table("all", {"all": s["overall"]}), ""]
        for g in ("provider", "host", "format", "split", "repository"):
            lines += [*_table(g, s[g]), ""]
        lines += [
            "Reliability (verdicts that name a provider):",
            "",
            *_reliability(s["reliability"]),
            "",
        ]
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
        f"{_bin_right(body['reliability'], 0.5)}: a declaration alone stays at 0.5 by design (DESIGN.md: "
        "medium at most), so low confidence means *little evidence*, not *likely wrong*; verdicts that "
        "artifacts decided are [calibrated](#calibration). `unknown` is an abstention, never a guess.",
        "",
        "| confidence | full capture: verdicts | right | body only: verdicts | right |",
        "|---|---:|---:|---:|---:|",
    ]
    bins = dict.fromkeys(r["bin"] for r in cap["reliability"] + body["reliability"])
    for b in sorted(bins):
        c = next((r for r in cap["reliability"] if r["bin"] == b), None)
        d = next((r for r in body["reliability"] if r["bin"] == b), None)
        lines.append(
            f"| {b} | {c['n'] if c else 0} | {_pct(c['right']) if c else '–'} | "
            f"{d['n'] if d else 0} | {_pct(d['right']) if d else '–'} |"
        )
    lines += [
        "",
        "| provider (label) | full: n | right | abstained | confident and wrong | body: n | right | "
        "abstained | confident and wrong |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k in list(dict.fromkeys([*cap["provider"], *body["provider"]])):
        c, d = cap["provider"].get(k), body["provider"].get(k)
        cells = [
            f"{r['n']} | {_pct(r['accuracy'])} | {_pct(r['abstention'])} | {r['confident_wrong']}"
            if r
            else "0 | – | – | –"
            for r in (c, d)
        ]
        lines.append(f"| {k} | {cells[0]} | {cells[1]} |")
    oc, ob = cap["overall"], body["overall"]
    lines += [
        "",
        f"Overall: full capture {_pct(oc['accuracy'])} right, {_pct(oc['abstention'])} abstained, "
        f"{oc['confident_wrong']} confident and wrong, {oc['false_flags']} with a false flag, ECE {oc['ece']}; "
        f"body only {_pct(ob['accuracy'])} right ({_pct(ob['committed_accuracy'] or 0)} of those not "
        f"abstaining), {_pct(ob['abstention'])} abstained, {ob['confident_wrong']} confident and wrong, "
        f"{ob['false_flags']} with a false flag, ECE {ob['ece']}. Repositories held out for checking the "
        f"calibration: {', '.join(m['holdout'])}; there, ECE {cap['split']['holdout']['ece']} (full capture) "
        f"and {body['split']['holdout']['ece']} (body only), and over the verdicts above medium confidence "
        f"(those that more than a declaration decided) {cap['split']['holdout']['ece_above_medium']} and "
        f"{body['split']['holdout']['ece_above_medium']}. Body only, on the {ob['evidenced']:,} bodies whose "
        f"record names a provider in its evidence: {(ob['evidenced_accuracy'] or 0) * 100:.2f}% right. "
        "Per host, format and repository: run the script.",
        DOCS_END,
    ]
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
    flagged = [
        e
        for e in c.got.get("evidence", [])
        if c.false_flags
        and re.search(r"imitation|mismatch|problems:|contradict|declares|another", str(e.get("detail")))
    ]
    ev = flagged or [
        e
        for e in c.got.get("evidence", [])
        if e.get("provider") == c.got["provider"]
        or (e.get("host") and e.get("host") == c.got["host"] and not c.host_ok)
    ]
    ev.sort(key=lambda e: -float(e.get("weight") or 0))
    parts = [
        f"`{e['detector']}` w{e.get('weight')} line {e.get('line')} `{e.get('field')}` = "
        f"`{str(e.get('value'))[:70]}` ({str(e.get('detail'))[:150]})"
        for e in ev[:3]
    ]
    return "; ".join(parts) or "(no evidence names that verdict: declared or default)"


def findings(result_cases: dict[str, list[Case]], meta: dict[str, Any]) -> str:
    """Every miss, confident-and-wrong first, then false flags, then wrong at low confidence."""
    out = [
        "# musetui attribution evaluation: misses",
        "",
        f"Generated {meta['date']} at musetui commit {meta['commit']} by bench/eval_attribution.py "
        f"over {meta['files']} captures / {meta['exchanges']} exchanges from {meta['repositories']} repositories.",
        "Label = what the request envelope proves (URL host/path, model in the request); "
        "verdict = musetui's provider/host/via/confidence. A full capture's line lists its labelled "
        "exchanges (0-based, in file order) by label; a body's line names its one exchange.",
        f"Not scored: {meta['unlabelled']} exchanges whose envelope decides no label; "
        f"{json.dumps(meta['unreadable'])}; bodies skipped {json.dumps(meta['bodies_skipped'])}. "
        "Labels at a loopback host are the declared model's maker only (a local server may be a mock "
        "or a gateway): weigh those misses accordingly.",
        "",
    ]
    picks: list[tuple[str, Callable[[Case], bool]]] = [
        ("Confident and wrong (confidence >= 0.8)", lambda c: c.confident_wrong),
        ("False flags", lambda c: bool(c.false_flags)),
        ("Wrong at lower confidence", lambda c: c.wrong and not c.confident_wrong),
    ]
    for title, pick in picks:
        for mode in ("capture", "body"):
            cases = [c for c in result_cases[mode] if pick(c)]
            out += [
                f"## {title}: {'full captures' if mode == 'capture' else 'bodies alone'} ({len(cases)})",
                "",
            ]
            cases.sort(key=lambda c: (c.repo, c.path, c.exchange or 0))
            for c in cases:
                g = c.got
                where = f"exchange {c.exchange}" if c.exchange is not None else f"exchanges {c.calls}"
                out.append(
                    f"- {c.repo} `{c.path}` {where}: "
                    f"label {c.label.provider}/{c.label.host or '-'}/{c.label.via or '-'} ({c.label.basis}); "
                    f"musetui {g['provider']}/{g['host'] or '-'}/{g['via'] or '-'} {float(g['confidence']):.2f} "
                    f"[{g['format']}] flags {','.join(g['flags']) or '-'}; evidence: {_misleading(c)}"
                )
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
            what = (
                "confident-and-wrong"
                if c.confident_wrong
                else "wrong"
                if c.wrong
                else "false " + "+".join(c.false_flags)
            )
            ev = _evidence_kind(_misleading(c))
            groups[(what, mode, f"{c.label.provider}->{c.got['provider']}/{c.got['host'] or '-'}", ev)].append(c)
    out = [
        "## Patterns (every miss below, grouped)",
        "",
        "| miss | mode | label -> verdict | first evidence | count | repositories | example |",
        "|---|---|---|---|---:|---|---|",
    ]
    for (what, mode, change, ev), cs in sorted(
        groups.items(), key=lambda kv: (kv[0][0] != "confident-and-wrong", -len(kv[1]))
    ):
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
        out += [
            f"### {'full captures' if mode == 'capture' else 'bodies alone'} ({sum(len(v) for v in groups.values())})",
            "",
        ]
        for (repo, fmt, prov), cs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            ex = cs[0]
            out.append(
                f"- {len(cs)} × {repo} [{fmt}] label {prov}: e.g. `{ex.path}` exchange "
                f"{'-' if ex.exchange is None else ex.exchange} ({ex.label.basis})"
            )
        out.append("")
    return out
