"""Time formatting shared by the generators (all UTC)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone


def iso_ms(t: float) -> str:
    """Return ``t`` (unix seconds) as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (milliseconds truncated)."""
    ms = round(t * 1_000_000) // 1000
    dt = datetime.fromtimestamp(ms // 1000, UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def micros(t: float) -> int:
    """Return ``t`` (unix seconds) as integer microseconds, as Muse's ``recorded_at``."""
    return round(t * 1_000_000)


def local_stamp(t: float, offset_hours: int) -> str:
    """Return the Codex rollout file-name stamp ``YYYY-MM-DDTHH-MM-SS`` in local time."""
    dt = datetime.fromtimestamp(int(t), timezone(timedelta(hours=offset_hours)))
    return f"{dt:%Y-%m-%dT%H-%M-%S}"


def local_date_dirs(t: float, offset_hours: int) -> tuple[str, str, str]:
    """Return the Codex ``YYYY``, ``MM``, ``DD`` folder names for local time."""
    dt = datetime.fromtimestamp(int(t), timezone(timedelta(hours=offset_hours)))
    return f"{dt:%Y}", f"{dt:%m}", f"{dt:%d}"


def unix(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> float:
    """Return the unix time of a UTC wall-clock time."""
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()
