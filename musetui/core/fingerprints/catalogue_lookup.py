"""The model catalogue's matcher, and the built-in catalogue read without pydantic (the scan path).

A scan only looks declared model names up. Building the pydantic models of
:mod:`musetui.core.fingerprints.catalogue` costs more than reading the file, so the scan reads the
built-in ``catalogue.toml`` here into plain records, with the same defaults. A test checks that
they equal what pydantic validates, field for field, and that every lookup agrees. A user's
``catalogue.toml`` is always validated by pydantic (see :func:`scan_lookup`).
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

#: The built-in catalogue shipped as package data.
BUILTIN_PATH = Path(__file__).with_name("catalogue.toml")
CATALOGUE_FILE = "catalogue.toml"
ENV_CONFIG_DIR = "MUSETUI_CONFIG_DIR"
_MAX_ROUTE_DEPTH = 4


class EntryLike(Protocol):
    """What the matcher reads of a ``[[model]]`` entry."""

    @property
    def pattern(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def host(self) -> str | None: ...
    @property
    def family(self) -> str: ...
    @property
    def note(self) -> str: ...


class RouteLike(Protocol):
    """What the matcher reads of a ``[[route]]`` entry."""

    @property
    def prefix(self) -> str: ...
    @property
    def host(self) -> str | None: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def fallback_provider(self) -> str: ...
    @property
    def note(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Entry:
    """A ``[[model]]`` entry as read from the built-in file (the fields of ``CatalogueEntry``)."""

    pattern: str
    provider: str
    family: str
    host: str | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Route:
    """A ``[[route]]`` entry as read from the built-in file (the fields of ``RouteEntry``)."""

    prefix: str
    host: str | None = None
    provider: str | None = None
    fallback_provider: str = "unknown"
    note: str = ""


class Catalogue:
    """An ordered list of model entries plus route prefixes; the first matching entry wins."""

    def __init__(
        self,
        entries: Sequence[Any],
        routes: Sequence[Any] = (),
        endpoints: Sequence[Any] = (),
        headers: Sequence[Any] = (),
        upstreams: Sequence[Any] = (),
        *,
        make_entry: Callable[..., Any] | None = None,
    ) -> None:
        """Build the matcher; every sequence is in precedence order.

        ``make_entry(pattern=, provider=, host=, family=, note=)`` builds the entry of a routed
        name (default: pydantic's ``CatalogueEntry``, imported only when a route is resolved).
        """
        self._entries: tuple[Any, ...] = tuple(entries)
        self._routes: tuple[Any, ...] = tuple(routes)
        self.endpoints: tuple[Any, ...] = tuple(endpoints)
        self.headers: tuple[Any, ...] = tuple(headers)
        self.upstreams: tuple[Any, ...] = tuple(upstreams)
        self._make_entry = make_entry
        self._compiled: tuple[tuple[re.Pattern[str], EntryLike], ...] = tuple(
            (re.compile(fnmatch.translate(e.pattern), re.IGNORECASE), e) for e in self._entries
        )
        # longest prefix first, so "accounts/fireworks/models/" beats shorter ones
        self._route_order: tuple[RouteLike, ...] = tuple(
            sorted(self._routes, key=lambda r: len(r.prefix), reverse=True)
        )
        self._cache: dict[tuple[str, str | None], Any] = {}

    @property
    def entries(self) -> tuple[Any, ...]:
        """The model entries in precedence order."""
        return self._entries

    @property
    def routes(self) -> tuple[Any, ...]:
        """The route prefixes in precedence order."""
        return self._routes

    def __len__(self) -> int:
        """Number of model entries."""
        return len(self._entries)

    def __iter__(self) -> Iterator[Any]:
        """Iterate over the model entries in precedence order."""
        return iter(self._entries)

    def lookup(self, model: str, provider_hint: str | None = None) -> Any:
        """Return the entry for a declared model name, or None when nothing matches.

        ``provider_hint`` is a declared provider or route (Muse ``provider_id``, Codex
        ``model_provider``): when it names a route and ``model`` has no route prefix of its own,
        ``<hint>/<model>`` is tried first, so ``("gpt-5.5", "azure")`` gives OpenAI on Azure.
        """
        ck = (model, provider_hint)
        if ck in self._cache:
            return self._cache[ck]
        name = model.strip()
        found: EntryLike | None = None
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

    def endpoint(self, hostname: str) -> Any:
        """The first ``[[endpoint]]`` whose glob matches a request's host name (port ignored)."""
        name = hostname.strip().lower().rsplit("@", 1)[-1].split(":", 1)[0].rstrip(".")
        if not name:
            return None
        return next((e for e in self.endpoints if fnmatch.fnmatchcase(name, e.match)), None)

    def header(self, name: str, value: str = "") -> Any:
        """The first ``[[header]]`` whose glob matches a response header name (and value)."""
        low = name.strip().lower()
        for e in self.headers:
            if fnmatch.fnmatchcase(low, e.match) and (e.value is None or fnmatch.fnmatch(value, e.value)):
                return e
        return None

    def upstream(self, router: str, name: str) -> Any:
        """The ``[[upstream]]`` a router's body names (case-insensitive), or None."""
        low = name.strip().lower()
        return next((u for u in self.upstreams if u.router == router and u.name.lower() == low), None)

    def _direct(self, name: str) -> EntryLike | None:
        """First model entry whose glob matches ``name`` in full."""
        for rx, entry in self._compiled:
            if rx.match(name):
                return entry
        return None

    def _route_for(self, name: str) -> RouteLike | None:
        """The longest route whose prefix starts ``name`` (case-insensitive)."""
        low = name.lower()
        for route in self._route_order:
            if low.startswith(route.prefix.lower()):
                return route
        return None

    def _resolve(self, name: str, depth: int) -> EntryLike | None:
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
            provider: str = route.provider
        elif inner is not None and inner.provider != "unknown":
            provider = inner.provider
        else:
            provider = route.fallback_provider
        host = route.host or (inner.host if inner else None)
        family = inner.family if inner else (rest or route.prefix.rstrip("/"))
        notes = [n for n in (route.note, inner.note if inner else "") if n]
        if self._make_entry is None:
            self._make_entry = _validated_entry()
        made: EntryLike = self._make_entry(
            pattern=route.prefix + (inner.pattern if inner else "*"),
            provider=provider,
            host=host,
            family=family,
            note="; ".join(notes),
        )
        return made


def _validated_entry() -> Callable[..., Any]:
    """pydantic's ``CatalogueEntry`` (imported only when a route of a validated catalogue is resolved)."""
    from musetui.core.fingerprints.catalogue import CatalogueEntry

    return CatalogueEntry


def read_builtin_tables() -> tuple[list[Entry], list[Route]]:
    """The ``[[model]]`` and ``[[route]]`` tables of the built-in file as plain records (no validation)."""
    doc = tomllib.loads(BUILTIN_PATH.read_text(encoding="utf-8"))
    models = [Entry(**raw) for raw in doc.get("model", [])]
    routes = [Route(**raw) for raw in doc.get("route", [])]
    return models, routes


_BUILTIN: Catalogue | None = None


def builtin_models() -> Catalogue:
    """The built-in catalogue's models and routes, read without pydantic (once per process)."""
    global _BUILTIN
    if _BUILTIN is None:
        models, routes = read_builtin_tables()
        _BUILTIN = Catalogue(models, routes, make_entry=Entry)
    return _BUILTIN


def default_config_dir() -> Path:
    """The user config dir: ``$MUSETUI_CONFIG_DIR`` if set, else the platform default."""
    from musetui.core.config import config_dir

    return config_dir()


def scan_lookup() -> Callable[[str], Any]:
    """The model lookup a scan uses: the built-in one read here, or, with a user file, the validated catalogue."""
    if (default_config_dir() / CATALOGUE_FILE).is_file():
        from musetui.core.fingerprints.catalogue import (
            load_catalogue,  # pydantic validates the user's file
        )

        return load_catalogue().lookup
    return builtin_models().lookup
