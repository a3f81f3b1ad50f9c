"""The chain of custody: who examined what, where, with which tool, and how to check it.

Built once here (headless) and shown by every output that hands evidence over: the
bundle's ``MANIFEST.json`` holds it as JSON, and the reports render it as Markdown or HTML.
"""

from __future__ import annotations

import getpass
import html
import os
import re
import shlex
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from musetui import __version__
from musetui.core.model import iso
from musetui.core.safetext import strip_controls


@dataclass(slots=True)
class InputFile:
    """One input file: where it was found, its size and mtime as scanned, and its sha256."""

    root: str  # the PATH argument it was found under, as given
    path: str  # relative to that root, with '/' separators
    size: int
    mtime_ns: int
    sha256: str  # "" when it could not be read
    note: str = ""

    def record(self) -> dict[str, Any]:
        """The JSON form (``mtime`` as ISO-8601 UTC)."""
        from musetui.core.safetext import json_name

        rec: dict[str, Any] = {
            "root": json_name(self.root),
            "path": json_name(self.path),
            "size": self.size,
            "mtime": iso(self.mtime_ns / 1e9),
            "sha256": self.sha256,
        }
        if self.note:
            rec["note"] = self.note
        return rec


@dataclass(slots=True)
class Custody:
    """The chain-of-custody block (see :func:`build`)."""

    examiner: str
    host: str
    command: list[str]
    version: str
    catalogue: str
    filters: dict[str, Any]
    time: float
    verification: str
    inputs: list[InputFile] = field(default_factory=list)
    #: Where a report finds the inputs' hashes instead of a list here (an appendix, the manifest).
    inputs_note: str = ""

    def record(self) -> dict[str, Any]:
        """The JSON form, as ``MANIFEST.json`` holds it."""
        return {
            "examiner": self.examiner,
            "host": self.host,
            "command": shlex.join(self.command),
            "argv": list(self.command),
            "musetui_version": self.version,
            "catalogue": self.catalogue,
            "filters": dict(self.filters),
            "time": iso(self.time),
            "inputs": [f.record() for f in self.inputs],
            "verification": self.verification,
        }


def default_examiner() -> str:
    """The user name (``--examiner`` overrides it)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name in the environment or the password database
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"


def build(
    argv: Sequence[str] | None,
    *,
    examiner: str | None = None,
    filters: dict[str, Any] | None = None,
    verification: str = "",
    inputs: Sequence[InputFile] = (),
    now: float | None = None,
) -> Custody:
    """The custody block of one run of musetui.

    Args:
        argv: the command line (``musetui`` and its arguments); None: this process's own.
        examiner: who ran it (default: the user name).
        filters: the session filters, as given (see :meth:`musetui.core.selection.Filters.describe`).
        verification: how a reader checks the output.
        inputs: every input file, with its sha256.
        now: the time of the examination (default: now).
    """
    from musetui.core.fingerprints.catalogue import catalogue_digest

    command = list(argv) if argv is not None else ["musetui", *sys.argv[1:]]
    return Custody(
        examiner=examiner or default_examiner(),
        host=socket.gethostname(),
        command=command,
        version=__version__,
        catalogue=catalogue_digest(),
        filters=dict(filters or {}),
        time=time.time() if now is None else now,
        verification=verification,
        inputs=list(inputs),
    )


def filters_text(filters: dict[str, Any]) -> str:
    """``--flagged --provider openai`` from the filters' JSON form (``none`` when empty)."""
    parts: list[str] = []
    for k, v in filters.items():
        values = v if isinstance(v, list) else [v]
        parts += [f"--{k}" if x is True else f"--{k} {x}" for x in values]
    return " ".join(parts) or "none"


def _facts(c: Custody) -> list[tuple[str, str]]:
    filters = filters_text(c.filters)
    return [
        ("Examiner", c.examiner),
        ("Host", c.host),
        ("Command line", shlex.join(c.command)),
        ("musetui", c.version),
        ("Model catalogue", c.catalogue),
        ("Filters", filters),
        ("Time (UTC)", iso(c.time) or "?"),
        ("Input files", c.inputs_note or f"{len(c.inputs):,}, each with its sha256 below"),
        ("Verification", c.verification),
    ]


def markdown(c: Custody) -> list[str]:
    """The block as Markdown lines: a section, with the input files unless ``inputs_note`` says where they are."""
    out = ["## Chain of custody", ""]
    ours = ("musetui", "Time (UTC)", "Input files", "Verification")  # (our own text; the rest is given)
    for k, v in _facts(c):
        out.append(f"- **{k}:** {v if k in ours else _code(v)}")
    if not c.inputs_note:
        out.append("")
        out.extend(f"- `{f.sha256 or '-'}` {_code(f.root + '/' + f.path)} ({f.size:,} bytes)" for f in c.inputs)
    return out


def _code(text: str) -> str:
    """A Markdown code span of one line that no backtick in ``text`` can close early."""
    t = strip_controls(text).replace("\r", " ").replace("\n", " ")
    longest = max((len(run) for run in re.findall("`+", t)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def html_block(c: Custody) -> str:
    """The block as an HTML section (everything escaped)."""

    def esc(text: str) -> str:
        return html.escape(strip_controls(text), quote=True)

    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in _facts(c))
    out = f'<h2 id="custody">Chain of custody</h2><dl class="facts">{rows}</dl>'
    if not c.inputs_note and c.inputs:
        items = "".join(f"<li><code>{esc(f.sha256 or '-')}</code> {esc(f.root)}/{esc(f.path)}</li>" for f in c.inputs)
        out += f"<ul>{items}</ul>"
    return out
