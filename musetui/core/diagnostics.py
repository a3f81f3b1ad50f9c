"""Diagnostics made presentable: one boundary per file, safe names, and per-file grouping.

:func:`group` turns the flat list a scan produces into one :class:`Group` per file and
kind of problem (a file with 412 malformed lines is one group, not 412 lines), so that a
command line or a UI can list every file's problems without one noisy file hiding the
others. :func:`internal_error` is how any unexpected exception inside one file becomes
that file's diagnostic. :func:`escape_name` makes a file name safe to print.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import orjson

from musetui.core.drift import is_drift, tally
from musetui.core.model import Diagnostic
from musetui.core.safetext import escape_name, json_bytes, json_name, one_line, unescape_name

__all__ = [
    "Group",
    "LineError",
    "escape_name",
    "group",
    "internal_error",
    "stderr_lines",
    "unescape_name",
]

#: Longest exception message kept in an ``internal error`` diagnostic.
MAX_ERROR_CHARS = 300


class LineError(Exception):
    """An unexpected exception raised while handling one line of a file (carries the line)."""

    def __init__(self, line: int, error: BaseException) -> None:
        super().__init__(line, error)
        self.line = line
        self.error = error


def internal_error(path: str, exc: BaseException, line: int = 0) -> Diagnostic:
    """The diagnostic for a bug or an unexpected failure inside one file: ``internal error: <type>: <message>``."""
    if isinstance(exc, LineError):
        line, exc = exc.line, exc.error
    msg = " ".join(str(exc).split())
    if len(msg) > MAX_ERROR_CHARS:
        msg = msg[: MAX_ERROR_CHARS - 1] + "…"
    return Diagnostic(
        path, line, f"internal error: {type(exc).__name__}: {msg}" if msg else f"internal error: {type(exc).__name__}"
    )


def json_safe(value: object) -> object:
    """``value`` with every string as JSON can carry it (see :func:`json_name`), keys included."""
    if isinstance(value, str):
        return json_name(value)
    if isinstance(value, dict):
        return {json_name(str(k)): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def record_json(record: dict[str, object]) -> bytes:
    """A scan record as one line of JSON (newline included).

    A string taken from a file name that is not UTF-8 (a session id from the name, say) is
    escaped as paths are, so the record can always be written. DEL, C1 controls and invisible
    characters are written as ``\\uXXXX`` escapes (see :func:`musetui.core.safetext.json_bytes`).
    """
    try:
        return json_bytes(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
    except TypeError:
        return json_bytes(orjson.dumps(json_safe(record), option=orjson.OPT_APPEND_NEWLINE))


def resolve_cli_path(path: str) -> str:
    """A path from the command line as it exists on disk: as given, or unescaped (see :func:`escape_name`)."""
    if os.path.lexists(path) or "\\" not in path:
        return path
    alt = unescape_name(path)
    return alt if os.path.lexists(alt) else path


@dataclass(frozen=True, slots=True)
class Group:
    """The diagnostics of one file that share a kind.

    Attributes:
        path: the file (or directory) relative to its root, as in the diagnostics.
        kind: ``malformed``, ``binary``, ``other`` (one group per ``other`` message) or ``drift`` (one
            per unknown kind or key and harness version, over every file: ``path`` is the first).
        count: how many lines (or diagnostics) the group stands for.
        reason: what went wrong: the first malformed line's reason, or the message.
        first_line: the first line concerned (0: the whole file).
    """

    path: str
    kind: str
    count: int
    reason: str
    first_line: int

    def text(self) -> str:
        """One line for stderr: ``path: 412 malformed lines (first at 3: invalid JSON …)``."""
        where = escape_name(self.path)
        reason = one_line(self.reason)
        if self.kind == "binary":
            return f"{where}: binary file: {self.count:,} lines"
        if self.kind == "malformed":
            if self.count == 1:
                return f"{where}:{self.first_line}: malformed: {reason}"
            return f"{where}: {self.count:,} malformed lines (first at {self.first_line}: {reason})"
        return f"{where}:{self.first_line}: {reason}" if self.first_line else f"{where}: {reason}"


_MORE_RE = re.compile(r"^… (\d+) more malformed lines$")
_BINARY_RE = re.compile(r"^(?:binary file|no JSON records): (\d+) malformed lines")


def group(diags: Iterable[Diagnostic]) -> list[Group]:
    """Group diagnostics per file: all malformed lines of a file become one group.

    A file with no JSON records and NUL bytes is one ``binary`` group. Groups keep the
    order in which their files first appear; within a file, malformed lines come first.

    Args:
        diags: diagnostics in scan order (as :class:`musetui.core.index.Index` collects them).

    Returns:
        One :class:`Group` per file and kind (per message for other diagnostics).
    """
    diags = list(diags)
    drifted = [d for d in diags if is_drift(d)]
    if drifted:
        diags = [d for d in diags if not is_drift(d)]
    order: list[str] = []
    malformed: dict[str, list[int | str]] = {}  # path -> [count, first line, first reason]
    binary: dict[str, int] = {}
    others: dict[str, list[Group]] = {}
    for d in diags:
        path = d.path
        if path not in malformed and path not in others and path not in binary:
            order.append(path)
            others[path] = []
        msg = d.message
        if msg.startswith("malformed: "):
            m = malformed.get(path)
            if m is None:
                malformed[path] = [1, d.line, msg[11:]]
            else:
                m[0] = int(m[0]) + 1
            continue
        more = _MORE_RE.match(msg)
        if more:
            m = malformed.setdefault(path, [0, 0, ""])
            m[0] = int(m[0]) + int(more.group(1))
            continue
        b = _BINARY_RE.match(msg)
        if b and msg.startswith("binary file"):
            binary[path] = int(b.group(1))
            continue
        if b:  # no JSON records: the malformed group says it all, plus this note
            others[path].append(Group(path, "other", 1, "no JSON records: nothing to index", 0))
            continue
        others[path].append(Group(path, "other", 1, msg, d.line))
    out: list[Group] = []
    for path in order:
        if path in binary:
            out.append(Group(path, "binary", binary[path], "binary data (NUL bytes), not JSON", 1))
        elif path in malformed:
            count, line, reason = malformed[path]
            out.append(Group(path, "malformed", int(count), str(reason), int(line)))
        out.extend(others.get(path, []))
    out.extend(Group(r.first_path, "drift", r.count, r.text(), r.first_line) for r in tally(drifted))
    return out


#: The message of a file the scan looked at and did not read (no format claims it).
UNREAD = "not read: not a recognised format"


def unread(path: str, why: str) -> Diagnostic:
    """The diagnostic of a file whose name suggests a transcript or capture that no format reads."""
    return Diagnostic(path, 0, f"{UNREAD} ({why})" if why else UNREAD)


def is_unread(diag: Diagnostic) -> bool:
    """Whether ``diag`` says its file was looked at and not read (see :func:`unread`)."""
    return diag.line == 0 and diag.message.startswith(UNREAD)


def stderr_lines(
    diags: Sequence[Diagnostic], per_file: int = 5, limit: int = 200, list_unread: bool = False
) -> list[str]:
    """The lines ``musetui`` prints on stderr for ``diags``: grouped, at most ``per_file`` per file.

    At most ``limit`` lines in all; the last says how many more groups were left out. Files
    that were looked at and not read are one count line (``list_unread``: one line each).
    """
    skipped = [d for d in diags if is_unread(d)]
    if skipped and not list_unread:
        diags = [d for d in diags if not is_unread(d)]
    groups = group(diags)
    lines: list[str] = []
    shown: dict[str, int] = {}
    hidden = 0
    for g in groups:
        drift = g.kind == "drift"  # (one name over many files: no file's share)
        n = 0 if drift else shown.get(g.path, 0)
        if n >= per_file or len(lines) >= limit:
            hidden += 1
            continue
        if not drift:
            shown[g.path] = n + 1
        lines.append(g.text())
    if hidden:
        lines.append(f"… {hidden} more diagnostics (write them all with --diagnostics FILE)")
    if skipped and not list_unread:
        n = len(skipped)
        lines.append(f"{n} file{'s' if n != 1 else ''} not read: not a recognised format (--stats lists them)")
    return lines
