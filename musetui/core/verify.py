"""``musetui verify``: re-hash and re-scan an evidence bundle received from someone else.

The zip is untrusted. Before anything is read, every member is checked: names must be
relative paths without ``..``, empty or absolute parts (:func:`unsafe_name`); symlinks,
devices and encrypted members are refused; the member count and the declared sizes are
bounded (:class:`Limits`), and a member is never read past its declared size, so a zip
bomb is refused, not expanded. The raw files are written into a fresh temporary
directory (exclusive creates, no symlink followed), scanned there without the cache, and
removed; nothing is written anywhere else.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from musetui.core.bundle import FILES, FORMAT, FORMAT_VERSION, MANIFEST, RECORDS, manifest_digest

#: A scan record longer than this (in records.jsonl) is not read.
MAX_RECORD = 64 * 2**20


@dataclass(frozen=True, slots=True)
class Limits:
    """What a bundle may hold before :func:`verify` refuses it."""

    max_members: int = 1_000_000
    max_total: int = 16 * 2**30  # declared uncompressed bytes, all members
    max_manifest: int = 256 * 2**20
    max_depth: int = 64


@dataclass(slots=True)
class Outcome:
    """What :func:`verify` found: no difference means verified."""

    differences: list[str] = field(default_factory=list)
    refused: bool = False  # the zip was not opened further (unsafe or unreadable)
    manifest_sha256: str = ""  # of MANIFEST.json's bytes, as found
    members: int = 0
    sessions: int = 0

    @property
    def verified(self) -> bool:
        """Every hash and every verdict reproduced."""
        return not self.differences and not self.refused


def unsafe_name(name: str, max_depth: int = 64) -> str | None:
    """Why a member name cannot be extracted safely, or None when it can."""
    if not name or len(name) > 4096:
        return "empty or overlong name"
    if "\0" in name:
        return "NUL in the name"
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    seps = ("/", "\\") if os.sep == "\\" or os.altsep else ("/",)
    parts = [name]
    for sep in seps:
        parts = [q for p in parts for q in p.split(sep)]
    if any(p == ".." for p in parts):
        return "path traversal (..)"
    if any(p in ("", ".") for p in parts):
        return "empty or '.' path component"
    if len(parts) > max_depth:
        return f"deeper than {max_depth} directories"
    if any(len(p.encode("utf-8", "surrogatepass")) > 255 for p in parts):
        return "a path component longer than 255 bytes"
    return None


def check_members(infos: list[zipfile.ZipInfo], limits: Limits) -> list[str]:
    """Every reason to refuse the zip without reading a member (an empty list: safe to read)."""
    out: list[str] = []
    if len(infos) > limits.max_members:
        return [f"refused: {len(infos):,} members (at most {limits.max_members:,})"]
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        why = unsafe_name(name.rstrip("/") if info.is_dir() else name, limits.max_depth)
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if why is None and kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
            why = "a symlink" if kind == stat.S_IFLNK else "not a regular file"
        if why is None and info.flag_bits & 0x1:
            why = "encrypted"
        if why is None and name in seen:
            why = "a second member of the same name"
        if why is not None:
            out.append(f"refused: {name!r}: {why}")
        seen.add(name)
        total += max(0, info.file_size)
    if total > limits.max_total:
        out.append(f"refused: the members declare {total:,} bytes in all (at most {limits.max_total:,}: --max-bytes)")
    return out


def _read_manifest(zf: zipfile.ZipFile, limits: Limits, out: Outcome) -> dict[str, Any] | None:
    """The parsed manifest, its own hash checked; None (with the difference named) when unusable."""
    try:
        info = zf.getinfo(MANIFEST)
    except KeyError:
        out.differences.append(f"{MANIFEST}: missing")
        return None
    if info.file_size > limits.max_manifest:
        out.differences.append(f"{MANIFEST}: {info.file_size:,} bytes (at most {limits.max_manifest:,})")
        return None
    try:
        data = zf.read(info)
        manifest = orjson.loads(data)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        out.differences.append(f"{MANIFEST}: unreadable ({exc})")
        return None
    out.manifest_sha256 = hashlib.sha256(data).hexdigest()
    problem = _malformed(manifest)
    if problem:
        out.differences.append(f"{MANIFEST}: {problem}")
        return None
    if manifest.get("manifest_sha256") != manifest_digest(manifest):
        out.differences.append(f"{MANIFEST}: its manifest_sha256 does not match its content (the manifest was changed)")
    return dict(manifest)


def _malformed(m: object) -> str | None:
    """What makes a parsed manifest unusable, or None."""
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        return f"not a {FORMAT} manifest"
    if m.get("format_version") != FORMAT_VERSION:
        return f"format_version {m.get('format_version')!r}: this musetui reads {FORMAT_VERSION}"
    members, sessions, roots = m.get("members"), m.get("sessions"), m.get("roots")
    if not isinstance(members, list) or not all(
        isinstance(x, dict)
        and isinstance(x.get("name"), str)
        and isinstance(x.get("sha256"), str)
        and isinstance(x.get("size"), int)
        for x in members
    ):
        return "malformed 'members'"
    if not isinstance(roots, list) or not all(
        isinstance(r, dict)
        and isinstance(r.get("label"), str)
        and "/" not in r["label"]
        and unsafe_name(r["label"]) is None
        and r.get("kind") in ("dir", "file")
        for r in roots
    ):
        return "malformed 'roots'"
    if not isinstance(sessions, list) or not all(
        isinstance(s, dict) and all(isinstance(s.get(k), str) for k in ("member", "root", "path")) for s in sessions
    ):
        return "malformed 'sessions'"
    ctx = m.get("context", {})
    rows = ctx.get("sessions", []) if isinstance(ctx, dict) else None
    if not isinstance(rows, list) or not all(
        isinstance(r, list)
        and len(r) == 5
        and isinstance(r[0], str)
        and isinstance(r[1], str)
        and (r[2] is None or isinstance(r[2], str))
        and isinstance(r[3], str)
        and isinstance(r[4], int)
        for r in rows
    ):
        return "malformed 'context'"
    return None


def _chunks(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """A member's bytes, never more than it declares (zipfile stops there and checks the CRC)."""
    with zf.open(info) as src:
        while chunk := src.read(1 << 20):
            yield chunk


def _place(tmp: str, name: str) -> int:
    """A new file for member ``name`` under ``tmp`` (exclusive, no symlink followed)."""
    target = os.path.join(tmp, *name.split("/"))
    os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(target, flags, 0o600)


def _check_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, want: dict[str, Any], tmp: str, out: Outcome) -> None:
    """Hash one member (writing it under ``tmp`` when it is to be re-scanned); name any difference."""
    name = info.filename
    extract = name.startswith(FILES) or name == RECORDS
    h = hashlib.sha256()
    size = 0
    fd = -1
    try:
        if extract:
            fd = _place(tmp, name)
        for chunk in _chunks(zf, info):
            h.update(chunk)
            size += len(chunk)
            if fd >= 0:
                os.write(fd, chunk)
    except (zipfile.BadZipFile, EOFError, NotImplementedError, ValueError) as exc:
        out.differences.append(f"{name}: unreadable member ({exc})")
        return
    except OSError as exc:
        out.differences.append(f"{name}: cannot be placed for the re-scan ({exc.strerror or exc})")
        return
    finally:
        if fd >= 0:
            os.close(fd)
    digest = h.hexdigest()
    if digest != want["sha256"]:
        out.differences.append(f"{name}: sha256 {digest} differs from the manifest's {want['sha256']}")
    elif size != want["size"]:
        out.differences.append(f"{name}: {size:,} bytes, the manifest says {want['size']:,}")


def verify(path: str, *, limits: Limits | None = None, workers: int | None = None) -> Outcome:
    """Check the bundle at ``path``: every hash, then every verdict (see the module's text)."""
    limits = limits or Limits()
    out = Outcome()
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        out.refused = True
        out.differences.append(f"{os.path.basename(path)}: not a readable zip ({exc})")
        return out
    with zf:
        infos = zf.infolist()
        refusals = check_members(infos, limits)
        if refusals:
            out.refused = True
            out.differences.extend(refusals)
            return out
        manifest = _read_manifest(zf, limits, out)
        if manifest is None:
            return out
        tmp = tempfile.mkdtemp(prefix="musetui-verify-")
        try:
            if not _room(tmp, infos, out):
                return out
            _check_members(zf, infos, manifest, tmp, out)
            out.sessions = compare_verdicts(manifest, tmp, out.differences, workers=workers)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _room(tmp: str, infos: list[zipfile.ZipInfo], out: Outcome) -> bool:
    """Whether the temporary directory can hold the members to re-scan (named when it cannot)."""
    need = sum(i.file_size for i in infos if i.filename.startswith(FILES) or i.filename == RECORDS)
    free = shutil.disk_usage(tmp).free
    if need > free:
        out.refused = True
        out.differences.append(
            f"refused: the re-scan needs {need:,} bytes in {tempfile.gettempdir()}, {free:,} are free (TMPDIR)"
        )
        return False
    return True


def _check_members(
    zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], manifest: dict[str, Any], tmp: str, out: Outcome
) -> None:
    """Compare every member with the manifest's list, in name order."""
    listed = {m["name"]: m for m in manifest["members"]}
    present = {i.filename for i in infos}
    for info in sorted(infos, key=lambda i: i.filename):
        if info.filename == MANIFEST:
            continue
        want = listed.get(info.filename)
        if want is None or info.is_dir():
            out.differences.append(f"{info.filename}: not listed in {MANIFEST}")
            continue
        out.members += 1
        _check_member(zf, info, want, tmp, out)
    for name in sorted(set(listed) - present):
        out.differences.append(f"{name}: listed in {MANIFEST} but missing from the zip")
    _check_custody(manifest, listed, out)


def _check_custody(manifest: dict[str, Any], listed: dict[str, dict[str, Any]], out: Outcome) -> None:
    """Each bundled file's sha256 must be the one the chain of custody gives for that input."""
    custody = manifest.get("custody")
    inputs = custody.get("inputs") if isinstance(custody, dict) else None
    given = {r["label"]: r.get("given") for r in manifest["roots"]}
    hashes: dict[tuple[object, object], object] = {}
    for f in inputs if isinstance(inputs, list) else []:
        if isinstance(f, dict):
            hashes[(f.get("root"), f.get("path"))] = f.get("sha256")
    for entry in manifest["sessions"]:
        member = listed.get(entry["member"])
        if member is None:
            continue
        if hashes.get((given.get(entry["root"]), entry["path"])) != member["sha256"]:
            out.differences.append(f"{entry['member']}: the chain of custody gives another sha256 for this input")


# ---------------------------------------------------------------- the re-scan


def compare_verdicts(manifest: dict[str, Any], tmp: str, diffs: list[str], *, workers: int | None = None) -> int:
    """Re-scan the raw files placed under ``tmp`` and name every record ``records.jsonl`` does not reproduce.

    Returns:
        The number of sessions the re-scan found.
    """
    sessions: list[dict[str, str]] = manifest["sessions"]
    roots, label_of = _scan_roots(manifest, tmp)
    found: dict[tuple[str, str], Any] = {}
    if roots:
        from musetui.core.index import Index

        index = Index(roots, workers=workers, use_cache=False).scan()
        _apply_context(index.sessions, manifest, label_of)
        for s in index.sessions:
            found[(label_of.get(s.root, "?"), s.path)] = s
    records = _records(os.path.join(tmp, RECORDS), diffs)
    if len(records) != len(sessions):
        diffs.append(f"{RECORDS}: {len(records):,} records, the manifest lists {len(sessions):,} sessions")
    listed: set[tuple[str, str]] = set()
    for i, entry in enumerate(sessions):
        key = (entry["root"], entry["path"])
        listed.add(key)
        name = entry["member"]
        if name != f"{FILES}{entry['root']}/{entry['path']}":
            diffs.append(f"{MANIFEST}: session {i + 1} names member {name!r} for {entry['root']}/{entry['path']}")
        again = found.get(key)
        if again is None:
            diffs.append(f"{name}: the re-scan finds no session in it")
            continue
        want = records[i] if i < len(records) else None
        if want is not None:
            d = _record_diff(want, again.record())
            if d:
                diffs.append(f"{name}: verdict not reproduced: {d}")
    for label, path in sorted(set(found) - listed):
        diffs.append(f"{FILES}{label}/{path}: the re-scan finds a session the manifest does not list")
    return len(found)


def _scan_roots(manifest: dict[str, Any], tmp: str) -> tuple[list[str], dict[str, str]]:
    """The directories (or files) to re-scan, as the PATH arguments were: and each one's label."""
    roots: list[str] = []
    label_of: dict[str, str] = {}
    for r in manifest["roots"]:
        base = os.path.join(tmp, *FILES.rstrip("/").split("/"), r["label"])
        root = base
        if r["kind"] == "file":
            paths = [s["path"] for s in manifest["sessions"] if s["root"] == r["label"]]
            if len(paths) != 1 or unsafe_name(paths[0]) is not None:
                continue
            root = os.path.join(base, *paths[0].split("/"))
        if os.path.lexists(root) and os.path.abspath(root) not in label_of:
            roots.append(root)
            label_of[os.path.abspath(root)] = r["label"]
    return roots, label_of


def _apply_context(sessions: list[Any], manifest: dict[str, Any], label_of: dict[str, str]) -> None:
    """Flag outliers again, with the provider counts of the sessions left out of the bundle."""
    rows = manifest.get("context", {}).get("sessions", [])
    root_of = {label: root for root, label in label_of.items()}
    context = [
        (root_of[label], str(fmt), parent if isinstance(parent, str) else None, str(provider), max(0, n))
        for label, fmt, parent, provider, n in rows
        if label in root_of and provider != "unknown"
    ]
    if context:
        from musetui.core.fingerprints.attribution import mark_outliers

        mark_outliers(sessions, context)


def _records(path: str, diffs: list[str]) -> list[dict[str, Any] | None]:
    """The bundle's scan records, one per line (None for a line that is not a JSON object)."""
    out: list[dict[str, Any] | None] = []
    if not os.path.isfile(path):
        return out  # missing from the zip: already named
    with open(path, "rb") as fh:  # (our own temporary copy, not a scanned file)
        n = 0
        while line := fh.readline(MAX_RECORD + 1):
            n += 1
            rec = None
            if len(line) > MAX_RECORD and not line.endswith(b"\n"):
                while (rest := fh.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass  # (skip the rest of an overlong line, never holding it)
            else:
                with contextlib.suppress(orjson.JSONDecodeError):
                    rec = orjson.loads(line)
            if not isinstance(rec, dict):
                diffs.append(f"{RECORDS}: line {n} is not a scan record")
                rec = None
            out.append(rec)
    return out


def _short(value: object, limit: int = 80) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _record_diff(want: dict[str, Any], got: dict[str, Any]) -> str:
    """The fields where the re-scan's record differs from the bundled one (``root`` aside)."""
    parts = []
    for k in sorted(set(want) | set(got)):
        a, b = want.get(k), got.get(k)
        if k == "root" or a == b:
            continue
        if k == "evidence":
            n_a = len(a) if isinstance(a, list) else 0
            n_b = len(b) if isinstance(b, list) else 0
            parts.append(f"evidence differs ({n_a} items in the bundle, {n_b} re-scanned)")
        else:
            parts.append(f"{k} {_short(a)} in the bundle, {_short(b)} re-scanned")
    return "; ".join(parts)
