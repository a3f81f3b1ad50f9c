"""The command and environment that show a transcript in the user's pager, read-only.

No Textual here: the main screen suspends the app and runs what these functions return.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

#: Pagers that take ``+N`` for "start at line N" (less takes ``+Ng``).
PLUS_LINE_PAGERS = frozenset({"more", "most", "vi", "vim", "nvim", "view", "nano", "emacs", "micro"})


def pager_command(pager: Sequence[str], path: str, line: int | None) -> list[str]:
    """The command that opens ``path`` in ``pager``, at ``line`` when the pager can start there."""
    name = os.path.basename(pager[0]) if pager else ""
    if line and name == "less":
        return [*pager, f"+{line}g", path]
    if line and name in PLUS_LINE_PAGERS:
        return [*pager, f"+{line}", path]
    return [*pager, path]


def safe_less_options(options: str) -> str:
    """``$LESS`` without -r/-R (which let escape sequences from the file reach the terminal)."""
    out: list[str] = []
    for token in options.split():
        if token.lower() == "--raw-control-chars":
            continue
        if token.startswith("-") and not token.startswith("--"):
            token = token[0] + "".join(c for c in token[1:] if c not in "rR")
            if token == "-":
                continue
        out.append(token)
    return " ".join(out)


def pager_invocation(path: str, line: int | None, environ: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The command and environment that open ``path`` at ``line`` in ``$PAGER`` (default ``less``).

    Args:
        path: The file to show.
        line: The line to start at, or None for the top.
        environ: The environment to start from (``os.environ``).

    Returns:
        The command, and the environment with ``$LESS`` made safe and ``LESSSECURE=1``.
    """
    import shlex  # (only when a pager runs: the app's start does not pay for it)

    pager = shlex.split(environ.get("PAGER") or "less") or ["less"]
    command = pager_command(pager, path, line)
    env = dict(environ)
    # less shows escape sequences as ^[ unless -R/-r asks it to pass them to the terminal
    env["LESS"] = safe_less_options(env.get("LESS", ""))
    env["LESSSECURE"] = "1"
    return command, env
