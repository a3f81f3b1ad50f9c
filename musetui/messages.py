"""Messages posted by the workers and widgets: small dataclasses, progress ones coalesce."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from musetui.core.fingerprints.types import Decoded
    from musetui.core.model import SessionSummary
    from musetui.core.session import OpenedSession


@dataclass
class SessionsFound(Message):
    """A batch of newly indexed sessions (in walk order)."""

    sessions: list[SessionSummary]


@dataclass
class SessionsReplaced(Message):
    """Sessions read ahead whose files changed (or went) before the index reached them."""

    removed: list[SessionSummary]
    added: list[SessionSummary]


@dataclass
class IndexProgress(Message):
    """How far indexing got; a newer one replaces an older one still in the queue."""

    done: int
    total: int
    bytes_done: int
    bytes_total: int
    sessions: int
    walked: bool = True  # False while files are still being found (the totals still grow)

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress)


@dataclass
class IndexFinished(Message):
    """Indexing ended (completed or cancelled); the tree links are final when not cancelled."""

    cancelled: bool
    top: list[SessionSummary]
    children: dict[str, list[SessionSummary]]
    elapsed: float
    diagnostics: int = 0
    diagnostic_list: list[Any] = field(default_factory=list)


@dataclass
class IndexRefreshed(Message):
    """Live follow: sessions appeared, grew or vanished on disk (links and verdicts updated)."""

    added: list[SessionSummary]
    changed: list[SessionSummary]
    removed: list[SessionSummary]
    top: list[SessionSummary]
    children: dict[str, list[SessionSummary]]
    #: Every diagnostic the index holds now (the ``D`` view follows them live).
    diagnostic_list: list[Any] = field(default_factory=list)


@dataclass
class IndexFailed(Message):
    """Indexing raised an exception."""

    error: str


@dataclass
class SessionOpened(Message):
    """A session's items were read and parsed."""

    key: str
    opened: OpenedSession
    elapsed: float


@dataclass
class SessionOpenFailed(Message):
    """A session could not be opened."""

    key: str
    error: str


@dataclass
class SessionDecoded(Message):
    """The distinct fingerprints of an opened session, each with the item it came from."""

    key: str
    decoded: list[tuple[int, Decoded]]
    capped: bool = False
    reasoning: list[tuple[int, int, str, str]] = field(default_factory=list)


@dataclass
class SearchResults(Message):
    """Search hits so far; ``done`` when the search finished."""

    generation: int
    query: str
    hits: list[Any]
    total: int
    done: bool

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SearchResults) and message.generation == self.generation and not message.done


@dataclass
class SearchFailed(Message):
    """The query was invalid or the search raised."""

    generation: int
    query: str
    error: str


@dataclass
class ItemHighlighted(Message):
    """The item list's cursor moved."""

    index: int


@dataclass
class ItemDrill(Message):
    """Enter/l on an item: move into the side panes."""

    index: int


@dataclass
class SessionHighlighted(Message):
    """The tree's cursor is on a session (or on a group: ``None``)."""

    summary: SessionSummary | None


@dataclass
class SessionDrill(Message):
    """Enter/l on a session: open its items and move into them."""

    summary: SessionSummary


@dataclass
class ReportReady(Message):
    """The evidence report to copy (``y``), built in a worker exactly as ``musetui show`` builds it."""

    text: str
    what: str
    error: str = ""


@dataclass
class DiffReady(Message):
    """The text view of a session diff (``M``), built in a worker as ``musetui diff`` builds it."""

    text: str
    title: str
    error: str = ""


@dataclass
class FocusBack(Message):
    """h/backspace from a widget that has nowhere further to go."""

    origin: str = field(default="")
