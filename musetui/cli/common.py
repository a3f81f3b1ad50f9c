"""What every subcommand shares: the parser, usage errors, path checks, and writing to stdout and stderr."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, NoReturn


class UsageError(Exception):
    """A usage problem: reported on one line, exit status 2."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped at spaces only: a path or a name is never cut at a hyphen."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.fill(
            " ".join(text.split()),
            width,
            initial_indent=indent,
            subsequent_indent=indent,
            break_on_hyphens=False,
            break_long_words=False,
        )


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def check_paths(paths: Sequence[str]) -> None:
    for p in paths:
        if not os.path.lexists(p):
            raise UsageError(f"musetui: no such file or directory: {p}")


def check_output_outside(output: str | None, roots: Sequence[str], option: str) -> None:
    """Refuse an output file that lies inside a scanned tree: musetui never writes under a tree it reads."""
    if not output or output == "-":
        return
    target = os.path.realpath(os.path.abspath(output))
    for root in roots:
        real = os.path.realpath(root)
        if target == real or (os.path.isdir(real) and target.startswith(real.rstrip(os.sep) + os.sep)):
            raise UsageError(f"musetui: {option} {output} lies inside the scanned tree {root}: write it elsewhere")


def err(text: str) -> None:
    from musetui.core.safetext import strip_controls

    sys.stderr.write(strip_controls(text) + "\n")


def resolve(path: str) -> str:
    """A PATH as printed by musetui (escaped, see :func:`musetui.core.diagnostics.escape_name`) or as it is."""
    from musetui.core.diagnostics import resolve_cli_path

    return resolve_cli_path(path)


def root_names(paths: Sequence[str]) -> dict[str, str]:
    """Absolute root directory -> the PATH argument as given (a file's directory, for a file)."""
    out: dict[str, str] = {}
    for p in paths:
        a = os.path.abspath(p)
        if os.path.isdir(a):
            out.setdefault(a, p)
        else:
            out.setdefault(os.path.dirname(a), os.path.dirname(p) or ".")
    return out


def shown_path(root: str, path: str) -> str:
    """``root/path`` for text outputs, escaped (see :func:`musetui.core.diagnostics.escape_name`); ``show`` accepts it."""
    from musetui.core.diagnostics import escape_name

    joined = root + path if not root or root.endswith("/") else f"{root}/{path}"
    return escape_name(joined)


def write_json(report: dict[str, object]) -> int:
    """One JSON object on stdout (``show --json``)."""
    from musetui.core.diagnostics import record_json

    sys.stdout.flush()
    sys.stdout.buffer.write(record_json(report))
    sys.stdout.buffer.flush()
    return 0


def write_text(text: str) -> None:
    """Write report text to stdout; a name that is not UTF-8 shows its bytes as ``\\udcNN`` escapes."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()
