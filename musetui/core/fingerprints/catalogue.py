"""The model catalogue: declared model names → provider, host and display family.

The catalogue is data (``catalogue.toml`` next to this file), validated with pydantic. A user
file ``<config dir>/catalogue.toml`` with the same layout is read first, so its entries win.
The config dir is ``$MUSETUI_CONFIG_DIR`` when set, else ``platformdirs.user_config_dir("musetui")``.
Nothing is read at import time; the built-in part is cached after the first load.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from musetui.core.fingerprints import catalogue_lookup
from musetui.core.fingerprints.catalogue_lookup import (
    BUILTIN_PATH,
    CATALOGUE_FILE,
    ENV_CONFIG_DIR,
    default_config_dir,
)
from musetui.core.model import Host, Provider, Via

__all__ = [
    "BUILTIN_PATH",
    "CATALOGUE_FILE",
    "ENV_CONFIG_DIR",
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
    """One ``[[header]]`` entry: a glob on a response header name (and optionally its value).

    ``shape`` is the regex (full match) of the values the real service sends: a value of
    another shape (a recorder's placeholder, a scrubbed value) earns no credit.
    """

    match: str
    value: str | None = None
    shape: str | None = None

    @field_validator("shape")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        """Require a valid regular expression."""
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from exc
        return v

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


class Catalogue(catalogue_lookup.Catalogue):
    """An ordered list of model entries plus route prefixes; the first matching entry wins.

    The matching is :class:`musetui.core.fingerprints.catalogue_lookup.Catalogue`'s; here every
    entry is a validated pydantic model.
    """

    def __init__(
        self,
        entries: Sequence[CatalogueEntry],
        routes: Sequence[RouteEntry] = (),
        endpoints: Sequence[EndpointEntry] = (),
        headers: Sequence[HeaderEntry] = (),
        upstreams: Sequence[UpstreamEntry] = (),
    ) -> None:
        """Build the matcher; every sequence is in precedence order."""
        super().__init__(entries, routes, endpoints, headers, upstreams, make_entry=CatalogueEntry)

    @property
    def entries(self) -> tuple[CatalogueEntry, ...]:
        """The model entries in precedence order."""
        return cast(tuple[CatalogueEntry, ...], self._entries)

    @property
    def routes(self) -> tuple[RouteEntry, ...]:
        """The route prefixes in precedence order."""
        return cast(tuple[RouteEntry, ...], self._routes)

    def __iter__(self) -> Iterator[CatalogueEntry]:
        """Iterate over the model entries in precedence order."""
        return iter(self.entries)

    def lookup(self, model: str, provider_hint: str | None = None) -> CatalogueEntry | None:
        """Return the entry for a declared model name, or None when nothing matches (see the base class)."""
        return cast(CatalogueEntry | None, super().lookup(model, provider_hint))

    def endpoint(self, hostname: str) -> EndpointEntry | None:
        """The first ``[[endpoint]]`` whose glob matches a request's host name (port ignored)."""
        return cast(EndpointEntry | None, super().endpoint(hostname))

    def header(self, name: str, value: str = "") -> HeaderEntry | None:
        """The first ``[[header]]`` whose glob matches a response header name (and value)."""
        return cast(HeaderEntry | None, super().header(name, value))

    def upstream(self, router: str, name: str) -> UpstreamEntry | None:
        """The ``[[upstream]]`` a router's body names (case-insensitive), or None."""
        return cast(UpstreamEntry | None, super().upstream(router, name))


def _format_error(exc: ValidationError) -> str:
    """Render pydantic errors as ``field: message`` pairs."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "entry"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def _validate_all(doc: dict[str, Any], table: str, cls: type[_M], label: str, source: str) -> list[_M]:
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


def catalogue_digest() -> str:
    """sha256 of the model catalogue in use: the built-in file, then the user's override if present."""
    h = hashlib.sha256()
    names = []
    for label, path in (("builtin", BUILTIN_PATH), ("user", default_config_dir() / CATALOGUE_FILE)):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        h.update(label.encode() + b"\0" + data + b"\0")
        names.append(label)
    return f"sha256:{h.hexdigest()} ({' + '.join(names) or 'none'})"
