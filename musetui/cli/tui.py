"""``musetui [PATH ...]``: open the browser."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from musetui.cli.common import Parser, check_paths


def cmd_tui(argv: Sequence[str]) -> int:
    """``musetui [PATH ...]``: open the browser."""
    p = Parser(
        prog="musetui",
        description="Forensic browser for AI-agent transcripts.",
        epilog="Subcommands: scan, search, show, cache, report, fleet, bundle, verify, diff, timeline "
        "(musetui <cmd> --help).",
    )
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--version", action="store_true")
    from musetui.core.config import docs_dir

    p.epilog = (
        f"{p.epilog} Documentation: {docs_dir() / 'fingerprints.md'} explains every fingerprint "
        "(each evidence detail's docs/fingerprints.md#… names its section)."
    )
    ns = p.parse_args(list(argv))
    if ns.version:
        from importlib.metadata import version

        sys.stdout.write(f"musetui {version('musetui')}\n")
        return 0
    check_paths(ns.paths)
    from musetui.core.config import cache_wanted, default_roots
    from musetui.core.early import HeadStart

    roots = [str(Path(x)) for x in ns.paths] or default_roots()
    use_cache = cache_wanted()
    # Before Textual is imported: the first files are read in a child while the app starts.
    head = HeadStart.start(roots, use_cache=use_cache)
    try:
        from musetui.app import MuseApp

        app = MuseApp(roots, use_cache=use_cache, head=head)
        app.run()
    finally:
        if head is not None:
            head.close()
    return app.return_code or 0
