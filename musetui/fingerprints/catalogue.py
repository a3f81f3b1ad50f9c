"""The model catalogue: declared model names → provider, host and display family.

The catalogue is data (``catalogue.toml`` next to this file), validated with pydantic. A user
file ``<config dir>/catalogue.toml`` with the same layout is read first, so its entries win.
The config dir is ``$MUSETUI_CONFIG_DIR`` when set, else ``platformdirs.user_config_dir("musetui")``.
Nothing is read at import time; the built-in part is cached after the first load.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import platformdirs
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from musetui.model import Host, Provider, Via

__all__ = [
    "BUILTIN_PATH",
    "Catalogue",
    "CatalogueEntry",
    "CatalogueError",
    "EndpointEntry",
    "HeaderEntry",
    "RouteEntry",
    "UpstreamEntry",
    "builtin_catalogue",
    "default_config_dir",
    "load_catalogue",
]

ProviderName = Provider
HostName = Host

#: The built-in catalogue shipped as package data.
BUILTIN_PATH = Path(__file__).with_name("catalogue.toml")
CATALOGUE_FILE = "catalogue.toml"
ENV_CONFIG_DIR = "MUSETUI_CONFIG_DIR"
_MAX_ROUTE_DEPTH = 4


_M = TypeVar("_M", bound=BaseModel)


class CatalogueError(ValueError):
    """A catalogue file could not be read or one of its entries is invalid."""


class CatalogueEntry(BaseModel):
    """One ``[[model]]`` entry: a case-insensitive glob and what a matching name points to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    provider: ProviderName
    host: HostName | None = None
    family: str
    note: str = ""

    @field_validator("pattern", "family")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        """Reject empty patterns and family names."""
        if not v.strip():
            raise ValueError("must not be empty")
        return v


class RouteEntry(BaseModel):
    """One ``[[route]]`` entry: a ``<route>/`` prefix whose remainder names the model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prefix: str
    host: HostName | None = None
    provider: ProviderName | None = None  # forces the provider (e.g. groq/)
    fallback_provider: ProviderName = "unknown"
    note: str = ""

    @field_validator("prefix")
    @classmethod
    def _prefix_shape(cls, v: str) -> str:
        """Require a non-empty prefix ending in ``/``."""
        if not v.strip() or not v.endswith("/"):
            raise ValueError("must be a non-empty prefix ending in '/'")
        return v


class _Signal(BaseModel):
    """What an HTTP-capture signal (endpoint, header, upstream name) points to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: ProviderName | None = None
    host: HostName | None = None
    via: Via | None = None
    strength: Literal["strong", "medium", "weak"] = "strong"
    tag: Literal["verified", "source", "guess"] = "source"
    note: str = ""


class EndpointEntry(_Signal):
    """One ``[[endpoint]]`` entry: a glob on a request URL's host name."""

    match: str

    @field_validator("match")
    @classmethod
    def _lower_glob(cls, v: str) -> str:
        """Require a non-empty glob; host names compare in lower case."""
        if not v.strip():
            raise ValueError("must not be empty")
        return v.strip().lower()


class HeaderEntry(_Signal):
    """One ``[[header]]`` entry: a glob on a response header name (and optionally its value)."""

    match: str
    value: str | None = None

    @field_validator("match")
    @classmethod
    def _lower_glob(cls, v: str) -> str:
        """Require a non-empty glob; header names compare in lower case."""
        if not v.strip():
            raise ValueError("must not be empty")
        return v.strip().lower()


class UpstreamEntry(_Signal):
    """One ``[[upstream]]`` entry: the name a router's body gives the upstream that served it."""

    router: Via
    name: str


def _glob_match(pattern: str, text: str) -> bool:
    """Case-sensitive full glob match (callers lower-case both sides)."""
    return fnmatch.fnmatchcase(text, pattern)


class Catalogue:
    """An ordered list of model entries plus route prefixes; the first matching entry wins."""

    def __init__(
        self,
        entries: Sequence[CatalogueEntry],
        routes: Sequence[RouteEntry] = (),
        endpoints: Sequence[EndpointEntry] = (),
        headers: Sequence[HeaderEntry] = (),
        upstreams: Sequence[UpstreamEntry] = (),
    ) -> None:
        """Build the matcher; every sequence is in precedence order."""
        self._entries: tuple[CatalogueEntry, ...] = tuple(entries)
        self._routes: tuple[RouteEntry, ...] = tuple(routes)
        self.endpoints: tuple[EndpointEntry, ...] = tuple(endpoints)
        self.headers: tuple[HeaderEntry, ...] = tuple(headers)
        self.upstreams: tuple[UpstreamEntry, ...] = tuple(upstreams)
        self._compiled: tuple[tuple[re.Pattern[str], CatalogueEntry], ...] = tuple(
            (re.compile(fnmatch.translate(e.pattern), re.IGNORECASE), e) for e in self._entries
        )
        # longest prefix first, so "accounts/fireworks/models/" beats shorter ones
        self._route_order: tuple[RouteEntry, ...] = tuple(
            sorted(self._routes, key=lambda r: len(r.prefix), reverse=True)
        )
        self._cache: dict[tuple[str, str | None], CatalogueEntry | None] = {}

    @property
    def entries(self) -> tuple[CatalogueEntry, ...]:
        """The model entries in precedence order."""
        return self._entries

    @property
    def routes(self) -> tuple[RouteEntry, ...]:
        """The route prefixes in precedence order."""
        return self._routes

    def __len__(self) -> int:
        """Number of model entries."""
        return len(self._entries)

    def __iter__(self) -> Iterator[CatalogueEntry]:
        """Iterate over the model entries in precedence order."""
        return iter(self._entries)

    def lookup(self, model: str, provider_hint: str | None = None) -> CatalogueEntry | None:
        """Return the entry for a declared model name, or None when nothing matches.

        ``provider_hint`` is a declared provider or route (Muse ``provider_id``, Codex
        ``model_provider``): when it names a route and ``model`` has no route prefix of its own,
        ``<hint>/<model>`` is tried first, so ``("gpt-5.5", "azure")`` gives OpenAI on Azure.
        """
        ck = (model, provider_hint)
        if ck in self._cache:
            return self._cache[ck]
        name = model.strip()
        found: CatalogueEntry | None = None
        if name:
            hint = (provider_hint or "").strip().lower()
            if hint and self._route_for(name) is None:
                routed = f"{hint}/{name}"
                if self._route_for(routed) is not None:
                    found = self._resolve(routed, 0)
            if found is None:
                found = self._resolve(name, 0)
        if len(self._cache) < 4096:
            self._cache[ck] = found
        return found

    def endpoint(self, hostname: str) -> EndpointEntry | None:
        """The first ``[[endpoint]]`` whose glob matches a request's host name (port ignored)."""
        name = hostname.strip().lower().rsplit("@", 1)[-1].split(":", 1)[0].rstrip(".")
        if not name:
            return None
        return next((e for e in self.endpoints if _glob_match(e.match, name)), None)

    def header(self, name: str, value: str = "") -> HeaderEntry | None:
        """The first ``[[header]]`` whose glob matches a response header name (and value)."""
        low = name.strip().lower()
        for e in self.headers:
            if _glob_match(e.match, low) and (e.value is None or fnmatch.fnmatch(value, e.value)):
                return e
        return None

    def upstream(self, router: str, name: str) -> UpstreamEntry | None:
        """The ``[[upstream]]`` a router's body names (case-insensitive), or None."""
        low = name.strip().lower()
        return next((u for u in self.upstreams if u.router == router and u.name.lower() == low), None)

    def _direct(self, name: str) -> CatalogueEntry | None:
        """First model entry whose glob matches ``name`` in full."""
        for rx, entry in self._compiled:
            if rx.match(name):
                return entry
        return None

    def _route_for(self, name: str) -> RouteEntry | None:
        """The longest route whose prefix starts ``name`` (case-insensitive)."""
        low = name.lower()
        for route in self._route_order:
            if low.startswith(route.prefix.lower()):
                return route
        return None

    def _resolve(self, name: str, depth: int) -> CatalogueEntry | None:
        """Direct match first; else strip a route prefix and let the rest decide."""
        entry = self._direct(name)
        if entry is not None or depth >= _MAX_ROUTE_DEPTH:
            return entry
        route = self._route_for(name)
        if route is None:
            return None
        rest = name[len(route.prefix) :].strip()
        inner = self._resolve(rest, depth + 1) if rest else None
        if route.provider is not None:
            provider: ProviderName = route.provider
        elif inner is not None and inner.provider != "unknown":
            provider = inner.provider
        else:
            provider = route.fallback_provider
        host = route.host or (inner.host if inner else None)
        family = inner.family if inner else (rest or route.prefix.rstrip("/"))
        notes = [n for n in (route.note, inner.note if inner else "") if n]
        return CatalogueEntry(
            pattern=route.prefix + (inner.pattern if inner else "*"),
            provider=provider,
            host=host,
            family=family,
            note="; ".join(notes),
        )


def _format_error(exc: ValidationError) -> str:
    """Render pydantic errors as ``field: message`` pairs."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "entry"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def _validate_all(
    doc: dict[str, Any], table: str, cls: type[_M], label: str, source: str
) -> list[_M]:
    """Validate every ``[[table]]`` entry of ``doc`` as ``cls``; errors name the entry."""
    items: Any = doc.get(table, [])
    if not isinstance(items, list):
        raise CatalogueError(f"{source}: '{table}' must be an array of tables ([[{table}]])")
    out: list[_M] = []
    for i, raw in enumerate(items, start=1):
        name = raw.get(label) if isinstance(raw, dict) else None
        where = f"[[{table}]] entry #{i}" + (f" ({label} {name!r})" if name is not None else "")
        if not isinstance(raw, dict):
            raise CatalogueError(f"{source}: {where}: must be a table")
        try:
            out.append(cls.model_validate(raw))
        except ValidationError as exc:
            raise CatalogueError(f"{source}: {where}: {_format_error(exc)}") from exc
    return out


@dataclass(slots=True)
class _Tables:
    """The validated tables of one catalogue file."""

    models: list[CatalogueEntry]
    routes: list[RouteEntry]
    endpoints: list[EndpointEntry]
    headers: list[HeaderEntry]
    upstreams: list[UpstreamEntry]


_TABLES = ("model", "route", "endpoint", "header", "upstream")


def _parse(text: str, source: str) -> _Tables:
    """Validate the TOML text of a catalogue file; errors name ``source`` and the entry."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{source}: not valid TOML: {exc}") from exc
    unknown = sorted(set(doc) - set(_TABLES))
    if unknown:
        raise CatalogueError(
            f"{source}: unknown top-level key(s) {', '.join(unknown)}; "
            "expected [[model]], [[route]], [[endpoint]], [[header]] and [[upstream]] tables"
        )
    return _Tables(
        _validate_all(doc, "model", CatalogueEntry, "pattern", source),
        _validate_all(doc, "route", RouteEntry, "prefix", source),
        _validate_all(doc, "endpoint", EndpointEntry, "match", source),
        _validate_all(doc, "header", HeaderEntry, "match", source),
        _validate_all(doc, "upstream", UpstreamEntry, "name", source),
    )


def _read(path: Path) -> _Tables:
    """Read and validate one catalogue file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogueError(f"{path}: cannot read: {exc}") from exc
    return _parse(text, str(path))


@functools.cache
def builtin_catalogue() -> Catalogue:
    """The catalogue shipped with musetui (read once, then cached)."""
    t = _read(BUILTIN_PATH)
    return Catalogue(t.models, t.routes, t.endpoints, t.headers, t.upstreams)


def default_config_dir() -> Path:
    """The user config dir: ``$MUSETUI_CONFIG_DIR`` if set, else the platform default."""
    env = os.environ.get(ENV_CONFIG_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir("musetui"))


def load_catalogue(config_dir: Path | None = None) -> Catalogue:
    """The built-in catalogue with the user's ``catalogue.toml`` (if any) taking precedence.

    Raises:
        CatalogueError: the user file is not valid TOML or has an invalid entry; the message
            names the file and the entry.
    """
    base = builtin_catalogue()
    directory = config_dir if config_dir is not None else default_config_dir()
    path = directory / CATALOGUE_FILE
    if not path.is_file():
        return base
    t = _read(path)
    return Catalogue(
        [*t.models, *base.entries],
        [*t.routes, *base.routes],
        [*t.endpoints, *base.endpoints],
        [*t.headers, *base.headers],
        [*t.upstreams, *base.upstreams],
    )
