"""Settings, the cache location and the transcript directories discovered by default.

Read when the app starts, never at import time. Environment overrides use ``MUSETUI_*``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/musetui`` (platformdirs), or the ``cache_dir`` setting; never inside a scanned tree."""
    from musetui.core.settings import current

    override = current().cache_dir
    return override if override else Path(platformdirs.user_cache_dir("musetui", appauthor=False))


def cache_wanted() -> bool:
    """Whether the app uses the persistent cache (the ``no_cache`` setting turns it off)."""
    from musetui.core.settings import current

    return not current().no_cache


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user config directory (``config.toml``, ``catalogue.toml``), or ``MUSETUI_CONFIG_DIR``.

    The one setting that only the environment can set: it says where the settings file is.
    """
    env = os.environ if environ is None else environ
    override = env.get("MUSETUI_CONFIG_DIR")
    return Path(override).expanduser() if override else Path(platformdirs.user_config_dir("musetui", appauthor=False))


def muse_sessions_dir() -> Path:
    """Muse's sessions folder: MUSE_SESSIONS_DIR, MUSE_DATA_DIR/sessions, MUSE_HOME/sessions, ~/.local/share/muse/sessions."""
    env = os.environ
    if env.get("MUSE_SESSIONS_DIR"):
        return Path(env["MUSE_SESSIONS_DIR"]).expanduser()
    if env.get("MUSE_DATA_DIR"):
        return Path(env["MUSE_DATA_DIR"]).expanduser() / "sessions"
    if env.get("MUSE_HOME"):
        return Path(env["MUSE_HOME"]).expanduser() / "sessions"
    return Path.home() / ".local" / "share" / "muse" / "sessions"


def discovered_roots() -> list[str]:
    """Local Muse, Codex and Claude Code transcript directories that exist."""
    return [str(p) for p in candidate_roots() if p.is_dir()]


def candidate_roots() -> list[Path]:
    """Where Muse, Codex and Claude Code keep transcripts here (the environment overrides applied)."""
    env = os.environ
    codex_home = Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else Path.home() / ".codex"
    claude_home = (
        Path(env["CLAUDE_CONFIG_DIR"]).expanduser() if env.get("CLAUDE_CONFIG_DIR") else Path.home() / ".claude"
    )
    return [muse_sessions_dir(), codex_home / "sessions", codex_home / "archived_sessions", claude_home / "projects"]


def sample_dir() -> Path:
    """The bundled sample transcripts (package data in a wheel; the repo folder in a checkout)."""
    here = Path(__file__).resolve().parents[1]  # the musetui package
    packaged = here / "_sample_transcripts"
    if packaged.is_dir():
        return packaged
    return here.parent / "sample_transcripts"


def docs_dir() -> Path:
    """The documentation (``docs/``: package data in a wheel, as ``_docs``; the repo folder in a checkout)."""
    here = Path(__file__).resolve().parents[1]  # the musetui package
    packaged = here / "_docs"
    if packaged.is_dir():
        return packaged
    return here.parent / "docs"


def default_roots() -> list[str]:
    """What ``musetui`` opens with no PATH: discovered transcripts, else the bundled sample."""
    found = discovered_roots()
    return found or [str(sample_dir())]
