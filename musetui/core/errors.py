"""Errors the command line turns into a one-line message (kept apart so that importing them costs nothing)."""

from __future__ import annotations


class SettingsError(ValueError):
    """A setting with a value it cannot take (the message names where it came from)."""
