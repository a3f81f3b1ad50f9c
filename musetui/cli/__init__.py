"""Command line: the TUI by default; ``scan``, ``search``, ``show``, ``cache`` and the others for scripts.

One module per subcommand (:mod:`~musetui.cli.scan`, :mod:`~musetui.cli.show`, …), what they
share in :mod:`~musetui.cli.common`. Exit codes: 0 on success (malformed lines are reported,
not fatal); 1 when ``search`` matched nothing; 2 on usage errors or a missing path, with one
line on stderr.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from musetui.cli.common import UsageError, err
from musetui.core.errors import SettingsError

SUBCOMMANDS = ("scan", "search", "show", "cache", "report", "fleet", "bundle", "verify", "diff", "timeline")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``musetui`` console script.

    The last boundary: an unexpected error is one line on stderr (``MUSETUI_DEBUG=1`` shows
    the traceback), never a traceback by default.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(args)
    except Exception as exc:
        if _debug():
            raise
        from musetui.core.diagnostics import internal_error

        err(f"musetui: {internal_error('', exc).message}")
        return 1


def _debug() -> bool:
    """The ``debug`` setting (off when the settings themselves cannot be read)."""
    from musetui.core.settings import current

    try:
        return current().debug
    except SettingsError:
        return False


def _run_subcommand(cmd: str, rest: list[str]) -> int:
    """Run subcommand ``cmd`` (one of :data:`SUBCOMMANDS`), importing only its module."""
    if cmd == "scan":
        from musetui.cli.scan import cmd_scan

        return cmd_scan(rest)
    if cmd == "search":
        from musetui.cli.search import cmd_search

        return cmd_search(rest)
    if cmd == "show":
        from musetui.cli.show import cmd_show

        return cmd_show(rest)
    if cmd in ("report", "fleet", "diff"):
        from musetui.cli import reports

        return {"report": reports.cmd_report, "fleet": reports.cmd_fleet, "diff": reports.cmd_diff}[cmd](rest)
    if cmd in ("bundle", "verify"):
        from musetui.cli import bundle

        return bundle.cmd_bundle(rest) if cmd == "bundle" else bundle.cmd_verify(rest)
    if cmd == "timeline":
        from musetui.cli.timeline import cmd_timeline

        return cmd_timeline(rest)
    from musetui.cli.cache import cmd_cache

    return cmd_cache(rest)


def _main(args: list[str]) -> int:
    try:
        if args and args[0] in SUBCOMMANDS:
            return _run_subcommand(args[0], args[1:])
        from musetui.cli.tui import cmd_tui

        return cmd_tui(args)
    except UsageError as exc:
        err(str(exc).splitlines()[0] if str(exc) else "musetui: usage error")
        return 2
    except SettingsError as exc:
        err(f"musetui: {exc}")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Downstream closed early (`| head`): silence the flush at exit.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def run() -> NoReturn:
    """Run :func:`main` and exit with its status."""
    sys.exit(main())
