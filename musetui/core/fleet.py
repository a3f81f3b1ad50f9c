"""Rank machines by how unusual their attribution is (``musetui fleet``).

Each ROOT is one machine: a transcript tree (scanned as ``scan --json`` would), a saved
``scan --json`` output (or a directory of them), or a Parquet file written by
``scan --parquet``. Everything is reduced to scan records first, so a saved output and a
live scan of the same tree rank the same. The scoring is :data:`EXPLAIN`.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from musetui.core.safetext import json_bytes

#: Keys every scan record has (how a saved ``scan --json`` output is recognised).
RECORD_KEYS = frozenset({"path", "format", "provider", "host", "confidence", "flags", "evidence", "items"})
#: The record fields the ranking and its output read (Parquet is read for these columns only).
FLEET_COLUMNS = ("path", "root", "session_id", "format", "declared_model", "provider", "host", "flags", "segments")
#: A (format, provider, host) class below this share of the other machines' sessions is rare.
RARE_SHARE = 0.05
#: Weights of the four parts of a machine's score (they sum to 1).
W_MIX, W_RARE, W_FLAGGED, W_MISMATCH = 0.3, 0.3, 0.2, 0.2
#: What each flag adds to a session's fleet score.
FLAG_WEIGHTS = {
    "outlier": 1.0,
    "declared-mismatch": 1.0,
    "mixed-providers": 0.8,
    "provider-switch": 0.8,
    "imitation-id": 0.8,
    "time-mismatch": 0.5,
    "truncated-blob": 0.3,
}
#: What a session of a rare class adds to its fleet score.
RARE_SESSION = 1.0
#: Sessions listed per machine in ``top_sessions``.
TOP_PER_MACHINE = 10

EXPLAIN = f"""\
musetui fleet: how machines are scored
======================================

Each ROOT is one machine. It is reduced to its scan records (the records of
`musetui scan --json`, with outlier flags computed within that machine), read from a
transcript tree, from saved `scan --json` outputs, or from `scan --parquet` files.
Saved records whose `root` field names several roots count as one machine per root.

For machine m with n sessions, against the REST of the fleet (every other machine's
sessions pooled; with a single machine the rest is empty and D = R = 0):

  D  mix divergence: total variation distance between m's attributed (provider, host)
     mix and the rest's: D = 1/2 * sum |share_m(k) - share_rest(k)|, in 0..1.
  r  rare sessions: m's sessions with a (format, provider, host) class that makes up less
     than {RARE_SHARE:.0%} of the rest's sessions (a class absent elsewhere is rare).
  Both count segments: a session counts once for each (provider, host) its
  `segments` show, so one session that switches providers mid-way counts for the
  provider it switched to (a record without segments counts its verdict).
  eF excess flagged: F - n * median rate, where F counts m's sessions with any flag and
     the median is taken over every machine's F / n (never below 0).
  eM excess mismatches: the same with `declared-mismatch` sessions.

  score = {W_MIX} * D + {W_RARE} * (1 - 0.5^r) + {W_FLAGGED} * (1 - 0.5^eF) + {W_MISMATCH} * (1 - 0.5^eM)

Counts enter as 1 - 0.5^x so one odd session among thousands still shows, and the
hundredth adds little. Machines rank by score (highest, most unusual, first), then by
flagged sessions, then by root.

Sessions are ranked across the fleet by: the sum of their flags' weights
({", ".join(f"{k} {v}" for k, v in FLAG_WEIGHTS.items())}),
plus {RARE_SESSION} when their class is rare on the rest of the fleet. Each machine's
`top_sessions` lists its {TOP_PER_MACHINE} highest (score above 0).
"""


class FleetInputError(Exception):
    """A ROOT that cannot be read as a machine (reported on one line)."""


@dataclass(slots=True)
class Machine:
    """One machine's scan records, and what the ranking makes of them."""

    root: str
    records: list[dict[str, Any]]
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    session_scores: list[float] = field(default_factory=list)

    @property
    def flagged(self) -> int:
        """Sessions with at least one flag."""
        return sum(1 for r in self.records if r.get("flags"))

    @property
    def mismatches(self) -> int:
        """Sessions flagged ``declared-mismatch``."""
        return sum(1 for r in self.records if "declared-mismatch" in (r.get("flags") or ()))

    def top_sessions(self) -> list[dict[str, Any]]:
        """This machine's highest-scoring sessions, as listed in ``--json``."""
        ranked = sorted(
            (i for i, sc in enumerate(self.session_scores) if sc > 0),
            key=lambda i: (-self.session_scores[i], self.records[i].get("path") or ""),
        )
        return [_session_entry(self.records[i], self.session_scores[i]) for i in ranked[:TOP_PER_MACHINE]]

    def summary(self) -> dict[str, Any]:
        """The ``--json`` object: exactly ``{root, sessions, providers, hosts, flagged, mismatches, score, top_sessions}``."""
        return {
            "root": self.root,
            "sessions": len(self.records),
            "providers": _tally(r.get("provider") or "unknown" for r in self.records),
            "hosts": _tally(r["host"] for r in self.records if r.get("host")),
            "flagged": self.flagged,
            "mismatches": self.mismatches,
            "score": self.score,
            "top_sessions": self.top_sessions(),
        }


def _session_entry(r: dict[str, Any], score: float) -> dict[str, Any]:
    return {
        "path": r.get("path"),
        "session_id": r.get("session_id"),
        "format": r.get("format"),
        "declared_model": r.get("declared_model"),
        "provider": r.get("provider"),
        "host": r.get("host"),
        "flags": list(r.get("flags") or ()),
        "score": score,
    }


def _tally(values: Iterable[str]) -> dict[str, int]:
    c = Counter(values)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def _mix_keys(r: dict[str, Any]) -> list[tuple[str, str]]:
    """The (provider, host) of each of the session's segments, once each (its verdict's without segments)."""
    segs = r.get("segments")
    if isinstance(segs, list) and len(segs) > 1:
        keys = [(g.get("provider") or "unknown", g.get("host") or "") for g in segs if isinstance(g, dict)]
        if keys:
            return list(dict.fromkeys(keys))
    return [(r.get("provider") or "unknown", r.get("host") or "")]


def _class_keys(r: dict[str, Any]) -> list[tuple[str, str, str]]:
    fmt = r.get("format") or ""
    return [(fmt, p, h) for p, h in _mix_keys(r)]


def _saturate(x: float) -> float:
    return 1.0 - float(0.5 ** max(0.0, x))


def rank(machines: list[Machine]) -> list[Machine]:
    """Score every machine and its sessions against the rest of the fleet; most unusual first."""
    mix_total: Counter[tuple[str, str]] = Counter()
    class_total: Counter[tuple[str, str, str]] = Counter()
    for m in machines:
        mix_total.update(k for r in m.records for k in _mix_keys(r))
        class_total.update(k for r in m.records for k in _class_keys(r))
    n_total = sum(mix_total.values())
    rates_f = [m.flagged / len(m.records) for m in machines if m.records]
    rates_m = [m.mismatches / len(m.records) for m in machines if m.records]
    med_f = statistics.median(rates_f) if rates_f else 0.0
    med_m = statistics.median(rates_m) if rates_m else 0.0
    for m in machines:
        n = len(m.records)
        own_mix = Counter(k for r in m.records for k in _mix_keys(r))
        own_class = Counter(k for r in m.records for k in _class_keys(r))
        n_own = sum(own_mix.values())
        n_rest = n_total - n_own
        divergence = 0.0
        if n_own and n_rest:
            keys = set(mix_total)
            divergence = 0.5 * sum(abs(own_mix[k] / n_own - (mix_total[k] - own_mix[k]) / n_rest) for k in keys)

        def rare(r: dict[str, Any], own: Counter[tuple[str, str, str]] = own_class, rest_n: int = n_rest) -> bool:
            return bool(rest_n) and any((class_total[k] - own[k]) < RARE_SHARE * rest_n for k in _class_keys(r))

        rare_flags = [rare(r) for r in m.records]
        n_rare = sum(rare_flags)
        excess_f = max(0.0, m.flagged - n * med_f)
        excess_m = max(0.0, m.mismatches - n * med_m)
        m.parts = {
            "D": round(divergence, 4),
            "r": n_rare,
            "eF": round(excess_f, 3),
            "eM": round(excess_m, 3),
        }
        m.score = round(
            W_MIX * divergence
            + W_RARE * _saturate(n_rare)
            + W_FLAGGED * _saturate(excess_f)
            + W_MISMATCH * _saturate(excess_m),
            3,
        )
        m.session_scores = [
            round(sum(FLAG_WEIGHTS.get(f, 0.0) for f in (r.get("flags") or ())) + (RARE_SESSION if is_rare else 0.0), 3)
            for r, is_rare in zip(m.records, rare_flags, strict=True)
        ]
    return sorted(machines, key=lambda m: (-m.score, -m.flagged, m.root))


def fleet_sessions(
    machines: Sequence[Machine], limit: int | None = None
) -> list[tuple[float, Machine, dict[str, Any]]]:
    """Every session with a score above 0, ranked across the fleet (highest first)."""
    out = [(sc, m, r) for m in machines for r, sc in zip(m.records, m.session_scores, strict=True) if sc > 0]
    out.sort(key=lambda t: (-t[0], t[1].root, t[2].get("path") or ""))
    return out[:limit] if limit is not None else out


# ---------------------------------------------------------------- reading machines


def is_scan_record(obj: object) -> bool:
    """True for an object shaped like a ``scan --json`` record."""
    return isinstance(obj, dict) and obj.keys() >= RECORD_KEYS


def _first_line(path: str, limit: int = 1 << 20) -> bytes:
    from musetui.core.reader import read_file

    data = read_file(path, 0, limit).data
    return data.lstrip().split(b"\n", 1)[0]


def _looks_saved(path: str) -> bool:
    """A Parquet file, or a JSON Lines file whose first record is a scan record."""
    if path.endswith(".parquet"):
        return True
    try:
        return is_scan_record(orjson.loads(_first_line(path)))
    except (OSError, orjson.JSONDecodeError):
        return False


def _files_under(root: str) -> Iterator[str]:
    """The files under ``root`` in ``os.walk`` order with sorted names, listed with ``O_NOATIME``."""
    from musetui.core.reader import scan_dir

    try:
        with scan_dir(root) as it:
            entries = sorted((e.name, e.is_dir(), e.is_symlink()) for e in it)
    except OSError:
        return
    yield from (os.path.join(root, name) for name, is_dir, _link in entries if not is_dir)
    for name, is_dir, link in entries:
        if is_dir and not link:
            yield from _files_under(os.path.join(root, name))


def saved_files(root: str) -> list[str] | None:
    """The saved outputs that make up ``root``, or None when it is a transcript tree to scan.

    The walk stops at the first file that is not a saved output (a transcript tree is
    told apart by its first file).
    """
    if os.path.isfile(root):
        return [root] if _looks_saved(root) else None
    files: list[str] = []
    for f in _files_under(root):
        if not _looks_saved(f):
            return None
        files.append(f)
    return files or None


def read_saved(path: str) -> list[dict[str, Any]]:
    """The scan records of one saved output (JSON Lines, or Parquet with the fleet extra)."""
    if path.endswith(".parquet"):
        from musetui.core.parquet import read_records

        return read_records(path, FLEET_COLUMNS)  # evidence is not needed to rank
    from musetui.core.reader import read_file

    out: list[dict[str, Any]] = []
    for n, line in enumerate(read_file(path).data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise FleetInputError(f"{path}:{n}: not a scan record ({exc})") from exc
        if not is_scan_record(obj):
            raise FleetInputError(f"{path}:{n}: not a scan record")
        out.append(_project(obj))
    return out


def _project(record: dict[str, Any]) -> dict[str, Any]:
    """The fields of a record the ranking reads (a fleet holds millions: evidence, and a lone segment, are dropped)."""
    out = {k: record[k] for k in FLEET_COLUMNS if k in record}
    segs = out.get("segments")
    if isinstance(segs, list) and len(segs) < 2:
        del out["segments"]
    return out


def scan_records(root: str, *, use_cache: bool = True, workers: int | None = None) -> list[dict[str, Any]]:
    """The ``scan --json`` records of one transcript tree (the fields the ranking reads).

    With the cache they are kept under the digest of the walk (:func:`musetui.core.derived.stored_or_built`):
    a warm ``fleet`` over an unchanged tree decodes no session.
    """
    if not use_cache:
        from musetui.core.index import Index

        return _records_of(Index([root], workers=workers, use_cache=False, light=True).scan())
    from musetui.core.derived import stored_or_built

    records, _notices = stored_or_built(
        [root], "fleet records", _records_of, _records_blob, _records_from_blob, workers=workers
    )
    return records


def _records_of(index: Any) -> list[dict[str, Any]]:
    return [_project(s.record()) for s in index.sorted_sessions()]


_BLOB_KEY = "fleet_records"


def _records_blob(records: list[dict[str, Any]]) -> bytes | None:
    """The records as one JSON record for the result cache (None when a name is not UTF-8)."""
    try:
        return orjson.dumps({_BLOB_KEY: records})
    except TypeError:
        return None


def _records_from_blob(blob: bytes) -> list[dict[str, Any]] | None:
    """What :func:`_records_blob` wrote, or None (another layout, or records without their path)."""
    try:
        stored = orjson.loads(blob)
    except orjson.JSONDecodeError:
        return None
    records = stored.get(_BLOB_KEY) if type(stored) is dict else None
    if type(records) is not list or not all(type(r) is dict and type(r.get("path")) is str for r in records):
        return None
    return records


def load_machines(roots: Sequence[str], *, use_cache: bool = True, workers: int | None = None) -> list[Machine]:
    """One machine per ROOT (or per recorded ``root`` inside saved outputs that hold several)."""
    machines: list[Machine] = []
    for root in roots:
        files = saved_files(root)
        if files is None:
            machines.append(Machine(root, scan_records(root, use_cache=use_cache, workers=workers)))
            continue
        records = [r for f in files for r in read_saved(f)]
        inner = sorted({r["root"] for r in records if isinstance(r.get("root"), str)})
        if len(inner) > 1:
            for name in inner:
                machines.append(Machine(name, [r for r in records if r.get("root") == name]))
            rest = [r for r in records if not isinstance(r.get("root"), str)]
            if rest:
                machines.append(Machine(root, rest))
        else:
            machines.append(Machine(root, records))
    return machines


def machines_from_sessions(roots: Sequence[str], sessions: Iterable[Any]) -> list[Machine]:
    """One machine per root from already-indexed sessions (the app's open roots), without re-scanning.

    Only the fields the ranking reads are taken from each :class:`~musetui.core.model.SessionSummary`.
    """
    by_root: dict[str, list[dict[str, Any]]] = {os.path.abspath(r): [] for r in roots}
    for s in sessions:
        a = s.attribution
        by_root.setdefault(s.root, []).append(
            {
                "path": s.path,
                "session_id": s.session_id,
                "format": s.format,
                "declared_model": s.declared_model,
                "provider": a.provider,
                "host": a.host,
                "flags": list(a.flags),
                **_switched(s),
            }
        )
    return [Machine(root, sorted(recs, key=lambda r: r["path"])) for root, recs in by_root.items()]


def _switched(s: Any) -> dict[str, Any]:
    """``{"segments": [...]}`` for a session with two segments or more, else nothing (a light summary is read only then)."""
    from musetui.core.segment_read import segments_of

    if len(s.segments) > 1 or (
        not s.segments and (rec := s.stored_record) is not None and rec.count(b'"first_line"') > 1
    ):
        return {"segments": [g.record() for g in segments_of(s)]}
    return {}


def summary_line(rank_no: int, m: Machine, label: str | None = None) -> str:
    """``#1 vm3 · score 0.277 · 11 sessions · 1 flagged · 0 mismatches · meta 4, openai 4``: the app's per-root row."""
    mix = ", ".join(f"{p} {n}" for p, n in _tally(r.get("provider") or "unknown" for r in m.records).items())
    name = label if label is not None else os.path.basename(m.root.rstrip(os.sep)) or m.root
    return (
        f"#{rank_no} {name} · score {m.score:.3f} · {len(m.records)} sessions · {m.flagged} flagged · "
        f"{m.mismatches} mismatches · {mix}"
    )


# ---------------------------------------------------------------- output


def json_lines(machines: Sequence[Machine]) -> Iterator[bytes]:
    """``fleet --json``: one object per machine, ranked."""
    for m in machines:
        yield json_bytes(orjson.dumps(m.summary(), option=orjson.OPT_APPEND_NEWLINE))


def text_report(machines: Sequence[Machine], *, explain: bool = False, top: int = 20) -> str:
    """The ranking as aligned text, numbers right-aligned (with each score's parts when ``explain``)."""
    from musetui.core.safetext import escape_name, one_line

    rows = [("rank", "score", "sessions", "flagged", "mismatches", "root", "providers")]
    for i, m in enumerate(machines, 1):
        s = m.summary()
        mix = ", ".join(f"{p} {n}" for p, n in s["providers"].items())
        hosts = ", ".join(f"{h} {n}" for h, n in s["hosts"].items())
        rows.append(
            (
                str(i),
                f"{m.score:.3f}",
                str(s["sessions"]),
                str(m.flagged),
                str(m.mismatches),
                escape_name(m.root),
                one_line(mix + (f" (hosts: {hosts})" if hosts else "")),
            )
        )
    lines = _aligned(rows, right={0, 1, 2, 3, 4})
    if explain:
        lines.append("")
        lines.append(
            "score parts (see musetui fleet --explain): D mix divergence, r rare sessions, eF/eM excess flagged/mismatches"
        )
        for m in machines:
            p = m.parts
            lines.append(
                f"  {escape_name(m.root)}: D={p.get('D', 0)} r={p.get('r', 0)} eF={p.get('eF', 0)} eM={p.get('eM', 0)} -> {m.score:.3f}"
            )
    total = Counter(r.get("provider") or "unknown" for m in machines for r in m.records)
    lines.append("")
    lines.append(
        f"fleet: {_count(len(machines), 'machine')}, {_count(sum(total.values()), 'session')}: "
        + ", ".join(f"{p} {n}" for p, n in _tally(total.elements()).items())
    )
    ranked = fleet_sessions(machines, top)
    if ranked:
        lines.append("")
        lines.append("most unusual sessions across the fleet:")
        table = [("score", "provider", "flags", "session")]
        for sc, m, r in ranked:
            who = one_line((r.get("provider") or "unknown") + (f"/{r['host']}" if r.get("host") else ""))
            flags = one_line(",".join(r.get("flags") or ())) or "rare"
            table.append((f"{sc:.2f}", who, flags, f"{escape_name(m.root)}: {escape_name(str(r.get('path')))}"))
        lines.extend("  " + x for x in _aligned(table, right={0}))
    return "\n".join(lines) + "\n"


def _aligned(rows: Sequence[tuple[str, ...]], right: set[int]) -> list[str]:
    """``rows`` as columns two spaces apart, the last one unpadded; the columns in ``right`` right-aligned."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]) - 1)]
    return [
        "  ".join(r[c].rjust(w) if c in right else r[c].ljust(w) for c, w in enumerate(widths)) + "  " + r[-1]
        for r in rows
    ]


def _count(n: int, noun: str) -> str:
    """``1 machine``, ``2 machines``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
