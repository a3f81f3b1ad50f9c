"""``musetui bundle``: a sealed evidence bundle (one zip) that anyone can re-verify.

The zip holds:

- ``files/<root>/<path>``: the raw file of every selected session, byte for byte, at its
  path relative to the root it was found under (``<root>`` names that PATH argument);
- ``report.html`` and ``report.md``: the evidence report of the selected sessions;
- ``records.jsonl``: their scan records (``scan --json``), in the order of the manifest's
  ``sessions``;
- ``MANIFEST.json``: the sha256 and size of every other member, the chain of custody
  (:mod:`musetui.core.custody`), the roots, the sessions, the fleet context of the outlier flags,
  and ``manifest_sha256``, the sha256 of the manifest itself (see :func:`manifest_digest`).

Inputs are read through :mod:`musetui.core.reader` (read-only, ``O_NOATIME``); nothing is written
under a scanned root (the CLI refuses an output inside one). :mod:`musetui.core.verify` checks a
bundle.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from musetui.core import custody
from musetui.core.model import Diagnostic, SessionSummary
from musetui.core.selection import Filters
from musetui.core.walk import FileEntry

FORMAT = "musetui-bundle"
FORMAT_VERSION = 1
MANIFEST = "MANIFEST.json"
RECORDS = "records.jsonl"
REPORT_HTML = "report.html"
REPORT_MD = "report.md"
FILES = "files/"
#: The zip's fixed members (raw files live under :data:`FILES`).
FIXED = (MANIFEST, RECORDS, REPORT_HTML, REPORT_MD)

VERIFICATION = (
    "musetui verify BUNDLE.zip: re-hashes every member against MANIFEST.json, checks the manifest's "
    "own sha256, re-scans files/ and compares every verdict with records.jsonl; it prints 'verified' "
    "only when all agree. Without musetui: sha256sum each member and compare with 'members'. "
    "Compare the sha256 of MANIFEST.json (printed by bundle and by verify) with the one the examiner sent."
)

CONTEXT_NOTE = (
    "Outlier flags compare a session with its siblings and its fleet (same root and format). "
    "Sessions outside the bundle take part through these counts of their attributed providers "
    "(root, format, parent session id, provider, sessions); verify re-computes the flags from the "
    "re-scanned sessions plus these counts, which it cannot re-derive."
)


class BundleError(Exception):
    """The bundle cannot be written (an output problem, not a finding)."""


@dataclass(slots=True)
class BundleResult:
    """What :func:`write_bundle` wrote."""

    output: str
    sessions: int
    members: int
    manifest_sha256: str  # of the MANIFEST.json file's bytes: the seal to hand over
    omitted: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)


def manifest_digest(manifest: dict[str, Any]) -> str:
    """The ``manifest_sha256`` of a manifest: sha256 of its JSON without that key.

    Serialised as Python's ``json.dumps(m, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)`` in UTF-8, so anyone can recompute it with a standard library.
    """
    import hashlib

    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def root_labels(roots: Sequence[str]) -> list[dict[str, str]]:
    """One entry per PATH argument: ``{label, given, kind}``, labels unique and safe as names.

    A directory is labelled by its name; a file by its directory's name (the file keeps its
    own name below it), so ``files/<label>/<path>`` mirrors what the scan saw.
    """
    out: list[dict[str, str]] = []
    used: set[str] = set()
    for given in roots:
        a = os.path.abspath(given)
        kind = "dir" if os.path.isdir(a) else "file"
        base = os.path.basename(a if kind == "dir" else os.path.dirname(a))
        label = re.sub(r"[^A-Za-z0-9._-]", "_", base).strip(".") or "root"
        n, unique = 1, label
        while unique in used:
            n += 1
            unique = f"{label}-{n}"
        used.add(unique)
        out.append({"label": unique, "given": given, "kind": kind, "abspath": a})
    return out


def _member_name(label: str, path: str) -> str | None:
    """``files/<label>/<path>``, or None when the path cannot be a zip member name."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return None
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    return f"{FILES}{label}/{path}"


def _zip_time(t: float) -> tuple[int, int, int, int, int, int]:
    """A zip timestamp (UTC, clamped to the format's 1980–2107)."""
    g = time.gmtime(min(max(t, 315532800.0), 4354819199.0))
    return (g.tm_year, g.tm_mon, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec)


class _Writer:
    """Adds members to the zip, hashing each as it is written."""

    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.members: list[dict[str, Any]] = []

    def _info(self, name: str, when: float, size: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, _zip_time(when))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
        info.file_size = size
        return info

    def add_bytes(self, name: str, data: bytes, when: float) -> None:
        import hashlib

        self.zf.writestr(self._info(name, when, len(data)), data)
        self.members.append({"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})

    def add_file(self, name: str, abspath: str, size: int, when: float) -> tuple[str, int]:
        """Copy the first ``size`` bytes of ``abspath`` (read-only, ``O_NOATIME``); their sha256 and count.

        Raises:
            OSError: when it cannot be read, or holds fewer than ``size`` bytes now.
        """
        import hashlib

        from musetui.core.reader import open_regular

        h = hashlib.sha256()
        fd = open_regular(abspath)
        try:
            with self.zf.open(self._info(name, when, size), "w", force_zip64=size > 2**31) as out:
                pos = 0
                while pos < size:
                    chunk = os.pread(fd, min(size - pos, 4 * 1024 * 1024), pos)
                    if not chunk:
                        raise OSError(f"shrank to {pos:,} bytes since the scan ({size:,})")
                    out.write(chunk)
                    h.update(chunk)
                    pos += len(chunk)
        finally:
            os.close(fd)
        digest = h.hexdigest()
        self.members.append({"name": name, "size": size, "sha256": digest})
        return digest, size


def _context(
    sessions: Sequence[SessionSummary], chosen: Sequence[SessionSummary], labels: dict[str, str]
) -> list[list[Any]]:
    """Provider counts of the sessions left out: ``[root label, format, parent id, provider, n]``."""
    kept = {s.abspath for s in chosen}
    c: Counter[tuple[str, str, str | None, str]] = Counter()
    for s in sessions:
        if s.abspath in kept or s.attribution.provider == "unknown":
            continue
        label = labels.get(s.root)
        if label is not None:
            c[(label, s.format, s.parent_session_id, s.attribution.provider)] += 1
    return [[*k, n] for k, n in sorted(c.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "", kv[0][3]))]


def write_bundle(
    paths: Sequence[str],
    output: str,
    filters: Filters,
    *,
    argv: Sequence[str] | None = None,
    examiner: str | None = None,
    use_cache: bool = True,
    workers: int | None = None,
) -> BundleResult:
    """Scan ``paths``, select sessions with ``filters`` and write the bundle to ``output``.

    Raises:
        BundleError: when the output cannot be written.
    """
    from musetui.core.index import Index

    index = Index(list(paths), workers=workers, use_cache=use_cache).scan()
    sessions = index.sorted_sessions()
    roots = root_labels(paths)
    job = _Job(index.files, index.diagnostics, sessions, filters.select(sessions), roots, filters, argv, examiner)
    directory = os.path.dirname(os.path.abspath(output))
    try:
        fd, partial = tempfile.mkstemp(prefix=".musetui-bundle-", suffix=".partial", dir=directory)
    except OSError as exc:
        raise BundleError(f"cannot write {output}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w+b") as fh:
            result = _fill(fh, job)
        os.replace(partial, output)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    result.output = output
    return result


@dataclass(slots=True)
class _Job:
    """What one bundle is made of: the scan, the selection and who asked for it."""

    files: Sequence[FileEntry]
    diagnostics: Sequence[Diagnostic]
    sessions: Sequence[SessionSummary]
    chosen: Sequence[SessionSummary]
    roots: list[dict[str, str]]
    filters: Filters
    argv: Sequence[str] | None
    examiner: str | None

    @property
    def label_of(self) -> dict[str, str]:
        """Root directory (absolute) -> its label under ``files/``."""
        return {r["abspath"]: r["label"] for r in self.roots}


def _fill(fh: IO[bytes], job: _Job) -> BundleResult:
    """Write every member into the open zip file ``fh``."""
    now = time.time()
    roots, label_of = job.roots, job.label_of
    entries = {f.abspath: f for f in job.files}
    omitted: list[tuple[str, str]] = []
    listed: list[tuple[SessionSummary, dict[str, Any]]] = []
    hashes: dict[str, str] = {}
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        w = _Writer(zf)
        for s in job.chosen:
            f = entries.get(s.abspath)
            label = label_of.get(s.root)
            name = _member_name(label, s.path) if label is not None else None
            if f is None or name is None:
                omitted.append((s.abspath, "not under a PATH as walked" if f is None else "its name is not UTF-8"))
                continue
            try:
                hashes[s.abspath], _n = w.add_file(name, s.abspath, f.size, f.mtime_ns / 1e9)
            except OSError as exc:
                omitted.append((s.abspath, f"unreadable: {exc.strerror or exc}"))
                continue
            listed.append((s, {"member": name, "root": label, "path": s.path}))
        kept = [s for s, _m in listed]
        w.add_bytes(RECORDS, b"".join(_record(s, roots) for s in kept), now)
        block = _custody(job, hashes, now)
        _add_reports(
            w,
            [r["given"] for r in roots],
            kept,
            [entries[s.abspath] for s in kept],
            job.diagnostics,
            block,
            hashes,
            now,
        )
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "custody": block.record(),
            "roots": [{k: r[k] for k in ("label", "given", "kind")} for r in roots],
            "members": sorted(w.members, key=lambda m: str(m["name"])),
            "sessions": [m for _s, m in listed],
            "context": {"note": CONTEXT_NOTE, "sessions": _context(job.sessions, kept, label_of)},
            "omitted": [{"file": p, "reason": why} for p, why in omitted],
        }
        manifest = _safe(manifest)
        manifest["manifest_sha256"] = manifest_digest(manifest)
        data = json.dumps(manifest, indent=1, ensure_ascii=False).encode("utf-8") + b"\n"
        w.add_bytes(MANIFEST, data, now)
        seal = w.members[-1]["sha256"]
    return BundleResult("", len(kept), len(w.members), str(seal), omitted)


def _safe(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with every string as UTF-8 can carry it (a file name that is not UTF-8 is escaped)."""
    from musetui.core.diagnostics import json_safe

    safe = json_safe(manifest)
    assert isinstance(safe, dict)
    return safe


def _record(s: SessionSummary, roots: list[dict[str, str]]) -> bytes:
    """The session's scan record, ``root`` as the PATH argument was given (as ``scan --json``)."""
    from musetui.core.diagnostics import record_json
    from musetui.core.safetext import json_name

    rec = s.record()
    for r in roots:
        if r["abspath"] == s.root:
            rec["root"] = json_name(r["given"] if r["kind"] == "dir" else (os.path.dirname(r["given"]) or "."))
            break
    return record_json(rec)


def _custody(job: _Job, hashes: dict[str, str], now: float) -> custody.Custody:
    """The custody block, with the sha256 of every file the scan read (the bundled ones hashed as copied)."""
    from musetui.core.reader import sha256_of

    given = {r["abspath"]: r["given"] for r in job.roots}
    inputs = []
    for f in sorted(job.files, key=lambda e: (e.root, e.relpath)):
        sha, note = hashes.get(f.abspath, ""), ""
        if not sha:
            try:
                sha, n, _st = sha256_of(f.abspath, f.size)
                note = "" if n == f.size else f"shrank to {n:,} bytes since the scan"
            except OSError as exc:
                note = f"unreadable: {exc.strerror or exc}"
        inputs.append(custody.InputFile(given.get(f.root, f.root), f.relpath, f.size, f.mtime_ns, sha, note))
    return custody.build(
        job.argv,
        examiner=job.examiner,
        filters=job.filters.describe(),
        verification=VERIFICATION,
        inputs=inputs,
        now=now,
    )


def _add_reports(
    w: _Writer,
    roots: list[str],
    sessions: list[SessionSummary],
    files: list[FileEntry],
    diagnostics: Sequence[Diagnostic],
    block: custody.Custody,
    hashes: dict[str, str],
    now: float,
) -> None:
    """The HTML and Markdown reports of the bundled sessions, with the custody block."""
    from musetui.core import evidence_report as er
    from musetui.core.report_page import render_html

    data = er.from_index(roots, sessions, files, diagnostics)
    for rec in data.files:
        if rec.sha256 != hashes.get(rec.abspath, rec.sha256):
            raise BundleError(f"{rec.abspath} changed while it was bundled: bundle it again")
    data.generated_at = now
    data.custody = dataclasses.replace(
        block, inputs=[], inputs_note="of the bundled files in appendix B; of every input file in MANIFEST.json"
    )
    w.add_bytes(REPORT_HTML, render_html(data).encode("utf-8"), now)
    w.add_bytes(REPORT_MD, er.render_markdown(data).encode("utf-8"), now)
