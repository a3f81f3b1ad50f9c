"""Every setting, in one dataclass (validated by pydantic): the user's ``config.toml``, then ``MUSETUI_*`` overrides.

The file is ``<user config dir>/musetui/core/config.toml`` (``~/.config/musetui/core/config.toml`` on Linux;
``MUSETUI_CONFIG_DIR`` moves the directory). Each key has an environment variable of the same
name in upper case with the ``MUSETUI_`` prefix, which wins over the file. :func:`current` reads
them once per process (again only when the environment changes, as tests do), on first use,
never at import time; a plain search never needs them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated, Any, ClassVar

from annotated_types import Ge, Le

from musetui.core.config import config_dir
from musetui.core.errors import SettingsError

__all__ = ["CONFIG_FILE", "NAMES", "Settings", "SettingsError", "current", "load"]

#: The settings file's name, in the config directory.
CONFIG_FILE = "config.toml"
ENV_PREFIX = "MUSETUI_"


def _doc(text: str) -> dict[str, str]:
    return {"description": text}


@dataclass(frozen=True, slots=True)
class Settings:
    """musetui's settings (each documented in docs/settings.md).

    A plain dataclass, so that the defaults cost no pydantic import; pydantic validates it (its
    constraints are the ``Annotated`` ones) only when a file or the environment gives a value.
    """

    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    cache_dir: Path | None = field(default=None, metadata=_doc("where the cache lives (default: the user cache dir)"))
    no_cache: bool = field(default=False, metadata=_doc("the app runs without the persistent cache"))
    theme: str = field(default="musetui", metadata=_doc("the app's Textual theme"))
    live_interval: Annotated[float, Ge(0)] = field(
        default=1.0, metadata=_doc("seconds between the app's live-follow polls (0: off)")
    )
    worker_nice: Annotated[int, Ge(0), Le(19)] = field(
        default=5, metadata=_doc("niceness added to the app's index workers, so keys are answered first")
    )
    max_file_bytes: Annotated[int, Ge(1)] = field(
        default=16 * 1024**3, metadata=_doc("files larger than this are scanned in part")
    )
    no_pyperclip: bool = field(default=False, metadata=_doc("copy with OSC 52 only, never the local clipboard"))
    debug: bool = field(default=False, metadata=_doc("an internal error prints its traceback"))


#: Every setting's name, in the order of :class:`Settings`.
NAMES: tuple[str, ...] = tuple(f.name for f in fields(Settings))
_BOOLS = frozenset(f.name for f in fields(Settings) if f.type in (bool, "bool"))
#: Settings whose every environment value is valid, and is what pydantic would make of it:
#: a flag (read by :func:`_env_value`), a text, a path (pydantic's lax ``str`` to ``Path`` is
#: ``Path(raw)``, for any string). An environment that sets only these (``MUSETUI_CACHE_DIR``,
#: say), with no settings file, needs no pydantic: about 0.1 s of import on every command.
#: ``tests/unit/test_settings.py`` checks that both ways give the same settings.
_TOTAL: dict[str, Any] = {
    f.name: {"bool": bool, "str": str, "Path | None": Path}[str(f.type)]
    for f in fields(Settings)
    if str(f.type) in ("bool", "str", "Path | None")
}


def _env_value(name: str, raw: str) -> Any:
    """An environment value as the settings read it (``1``/``0`` for flags, an empty flag is off)."""
    if name in _BOOLS:
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
        name: _env_value(name, env[ENV_PREFIX + name.upper()]) for name in NAMES if ENV_PREFIX + name.upper() in env
    }
    merged = {**values, **overrides}
    if not merged:
        return Settings()  # (nothing to validate: the defaults, without importing pydantic)
    if not values and all(name in _TOTAL for name in overrides):
        return _total(overrides)
    return _validate(merged, "the environment (MUSETUI_*)" if overrides else str(path))


def _total(overrides: dict[str, Any]) -> Settings:
    """The settings of environment values that are valid whatever they are (see :data:`_TOTAL`), without pydantic."""
    return Settings(**{name: _TOTAL[name](v) for name, v in overrides.items()})


def _validate(values: dict[str, Any], source: str) -> Settings:
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(Settings).validate_python(values)
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
