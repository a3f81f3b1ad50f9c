"""Search results: hits (the ``{path, session_id, line, field, snippet}`` contract) and a run."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from musetui.core.search.query import REGEX_LINE_CAP

if TYPE_CHECKING:
    from musetui.core.search.query import Query

__all__ = ["Hit", "SearchRun", "Stats"]


@dataclass(slots=True)
class Hit:
    """One matching line of one session.

    Attributes:
        path: the file relative to the root it was found under (as in the scan record).
        abspath: the absolute path of the file.
        session_id: the session id from the transcript (as in the scan record).
        line: 1-based physical line of the match.
        field: JSON path of the value that matched (``payload.event.text``), or ``raw``.
        snippet: at most :data:`SNIPPET_MAX` characters around the match, one line, no controls.
        match_spans: ``(start, end)`` of every match of a positive term in ``snippet``.
        item_kind: the kind of the item on that line (None for a line that is not a record).
        offset: byte offset of the line in the file.
        root: the root the file was found under.
    """

    path: str
    abspath: str
    session_id: str | None
    line: int
    field: str
    snippet: str
    match_spans: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    item_kind: str | None = None
    offset: int = 0
    root: str = ""

    def record(self) -> dict[str, Any]:
        """The contract form of ``musetui search --json``: path, root, session_id, line, field, snippet.

        ``root`` here is the absolute root (a file root's directory); the command line puts
        the PATH argument as given. Names that are not UTF-8 are escaped (see ``json_name``).
        """
        from musetui.core.safetext import json_name

        return {
            "root": json_name(os.path.dirname(self.root) if self.root == self.abspath else self.root),
            "path": json_name(self.path),
            "session_id": self.session_id,
            "line": self.line,
            "field": self.field,
            "snippet": self.snippet,
        }


#: A hit as plain values, in :class:`Hit`'s field order (see :func:`pack_hits`).
PackedHit = tuple[Any, ...]


def pack_hits(hits: list[Hit]) -> list[PackedHit]:
    """Hits as tuples, for another process: a slotted dataclass pickles through Python calls, a tuple in C (3x faster)."""
    return [
        (h.path, h.abspath, h.session_id, h.line, h.field, h.snippet, h.match_spans, h.item_kind, h.offset, h.root)
        for h in hits
    ]


def unpack_hits(packed: list[PackedHit]) -> list[Hit]:
    """The hits :func:`pack_hits` packed."""
    return [Hit(*t) for t in packed]


@dataclass(slots=True)
class Stats:
    files: int = 0
    bytes: int = 0
    long_lines: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, other: Stats) -> None:
        self.files += other.files
        self.bytes += other.bytes
        self.long_lines += other.long_lines
        self.notes.extend(other.notes)


class SearchRun:
    """The hits of a search, produced lazily, with what was noticed on the way.

    Iterate it for :class:`Hit` objects (sorted by path, then line). ``files``/``bytes``
    count what was read so far, ``long_lines`` the lines a regex searched only in part
    (see :data:`REGEX_LINE_CAP`), and ``notes`` holds one-line remarks (unreadable files,
    lines cut for regexes).
    """

    def __init__(self, query: Query, body: Callable[[SearchRun], Generator[Hit, None, None]]) -> None:
        self.query = query
        self.hits = 0
        self._stats = Stats()
        self._gen = body(self)

    @property
    def files(self) -> int:
        """Files read so far."""
        return self._stats.files

    @property
    def bytes(self) -> int:
        """Bytes read so far."""
        return self._stats.bytes

    @property
    def long_lines(self) -> int:
        """Lines longer than :data:`REGEX_LINE_CAP` that a regex searched only in part."""
        return self._stats.long_lines

    @property
    def notes(self) -> list[str]:
        """Remarks on the search so far (one line each)."""
        out = list(self._stats.notes)
        if self._stats.long_lines:
            out.append(
                f"{self._stats.long_lines} lines longer than {REGEX_LINE_CAP // 1024 // 1024} MiB "
                "were searched by a regex only in their first MiB"
            )
        return out

    def __iter__(self) -> SearchRun:
        return self

    def __next__(self) -> Hit:
        hit = next(self._gen)
        self.hits += 1
        return hit

    def close(self) -> None:
        """Stop the search (worker processes are shut down)."""
        self._gen.close()


# ---------------------------------------------------------------------------------------------
# What a file needs: where it is, and what is known of its session
# ---------------------------------------------------------------------------------------------
