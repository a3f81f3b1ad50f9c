"""Every setting, in one pydantic model: the user's ``config.toml``, then ``MUSETUI_*`` overrides.

The file is ``<user config dir>/musetui/core/config.toml`` (``~/.config/musetui/core/config.toml`` on Linux;
``MUSETUI_CONFIG_DIR`` moves the directory). Each key has an environment variable of the same
name in upper case with the ``MUSETUI_`` prefix, which wins over the file. :func:`current` reads
them once per process (again only when the environment changes, as tests do), on first use,
never at import time; a plain search never needs them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from musetui.core.config import config_dir
from musetui.core.errors import SettingsError

__all__ = ["CONFIG_FILE", "Settings", "SettingsError", "current", "load"]

#: The settings file's name, in the config directory.
CONFIG_FILE = "config.toml"
ENV_PREFIX = "MUSETUI_"


class Settings(BaseModel):
    """musetui's settings (each documented in docs/settings.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cache_dir: Path | None = Field(None, description="where the cache lives (default: the user cache dir)")
    no_cache: bool = Field(False, description="the app runs without the persistent cache")
    theme: str = Field("musetui", description="the app's Textual theme")
    live_interval: float = Field(1.0, ge=0, description="seconds between the app's live-follow polls (0: off)")
    worker_nice: int = Field(
        5, ge=0, le=19, description="niceness added to the app's index workers, so keys are answered first"
    )
    max_file_bytes: int = Field(16 * 1024**3, ge=1, description="files larger than this are scanned in part")
    no_pyperclip: bool = Field(False, description="copy with OSC 52 only, never the local clipboard")
    debug: bool = Field(False, description="an internal error prints its traceback")


def _env_value(name: str, raw: str) -> Any:
    """An environment value as the model reads it (``1``/``0`` for flags, an empty flag is off)."""
    field = Settings.model_fields[name]
    if field.annotation in (bool, "bool"):
        return raw.strip().lower() not in ("", "0", "false", "no", "off")
    return raw


def load(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the settings file and the environment, validated.

    Raises:
        SettingsError: the file is not valid TOML, names an unknown setting, or a value is out of range.
    """
    env = os.environ if environ is None else environ
    path = config_dir(env) / CONFIG_FILE
    values: dict[str, Any] = {}
    if path.is_file():
        import tomllib

        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"{path}: {exc}") from exc
        _validate(values, str(path))
    overrides = {
        name: _env_value(name, env[ENV_PREFIX + name.upper()])
        for name in Settings.model_fields
        if ENV_PREFIX + name.upper() in env
    }
    merged = {**values, **overrides}
    return _validate(merged, "the environment (MUSETUI_*)" if overrides else str(path))


def _validate(values: dict[str, Any], source: str) -> Settings:
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "?"
        var = ENV_PREFIX + where.upper()
        raise SettingsError(f"setting {where} ({var}) from {source}: {first['msg']}") from exc


_CURRENT: tuple[tuple[tuple[str, str], ...], Settings] | None = None


def current() -> Settings:
    """The settings of this process: read on first use, and again only when the environment changes."""
    global _CURRENT
    key = tuple(
        sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX) or k in ("HOME", "XDG_CONFIG_HOME"))
    )
    if _CURRENT is None or _CURRENT[0] != key:
        _CURRENT = (key, load())
    return _CURRENT[1]
