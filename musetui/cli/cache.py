"""``musetui cache info|clear [PATH ...]``: inspect or clear the persistent cache."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from musetui.cli.common import Parser


def cmd_cache(argv: Sequence[str]) -> int:
    """``musetui cache info|clear [PATH ...]``."""
    p = Parser(prog="musetui cache", description="Inspect or clear the persistent cache.")
    p.add_argument("action", choices=("info", "clear"))
    p.add_argument("paths", nargs="*", metavar="PATH", help="only the databases of these roots")
    ns = p.parse_args(list(argv))
    from musetui.core.cache import db_path
    from musetui.core.cache_files import cache_files
    from musetui.core.config import cache_dir

    d = cache_dir()
    files = cache_files()
    if ns.paths:  # a root's database and its -wal/-shm companions
        names = {db_path(str(x)).name for x in ns.paths}
        files = [f for f in files if any(f.name == n or f.name.startswith(n + "-") for n in names)]
    if ns.action == "info":
        size = sum(f.stat().st_size for f in files if f.is_file())
        dbs = [f for f in files if f.suffix == ".sqlite3"]
        from musetui.core.report import human_bytes

        sys.stdout.write(f"cache directory: {d}\ndatabases: {len(dbs)}\nsize: {human_bytes(size)} ({size:,} bytes)\n")
        for f in dbs:
            sys.stdout.write(f"  {f.name}\n")
            for line in _db_info(f):
                sys.stdout.write(f"    {line}\n")
        return 0
    for f in files:
        f.unlink(missing_ok=True)
    sys.stdout.write(f"removed {len(files)} cache files from {d}\n")
    return 0


def _db_info(path: Path) -> list[str]:
    """What one cache database holds, read without writing to it."""
    import sqlite3

    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error as exc:
        return [f"unreadable: {exc}"]
    from musetui.core.cache import SCHEMA_VERSION
    from musetui.core.safetext import escape_name

    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        root = f"root: {escape_name(meta.get('root', '?'))}"
        schema = meta.get("schema", "?")
        if schema != str(SCHEMA_VERSION):
            return [root, f"schema {schema}, this musetui uses {SCHEMA_VERSION}: rebuilt on next use"]
        files, states = conn.execute("SELECT count(*), count(state) FROM files").fetchone()
        outputs = conn.execute("SELECT count(*) FROM results").fetchone()[0]
    except sqlite3.Error as exc:
        return [f"unreadable (rebuilt on next use): {exc}"]
    finally:
        conn.close()
    return [root, f"schema {schema}; {files} files, {states} resumable; {outputs} stored scan output(s)"]
