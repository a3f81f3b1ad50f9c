"""One clipboard helper: OSC 52 always, pyperclip when a local clipboard exists."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from textual.markup import escape

from musetui.core.settings import current

if TYPE_CHECKING:
    from textual.app import App

#: Payloads above this many bytes are cut (terminals drop huge OSC 52 sequences).
MAX_COPY_BYTES = 512 * 1024


def over_ssh(environ: dict[str, str] | None = None) -> bool:
    """True when the session runs over SSH, where a local clipboard is the wrong machine's."""
    env = os.environ if environ is None else environ
    return bool(env.get("SSH_CONNECTION") or env.get("SSH_TTY") or env.get("SSH_CLIENT"))


def _pyperclip_copy(text: str) -> bool:
    if over_ssh() or current().no_pyperclip:
        return False
    try:
        import pyperclip
    except ImportError:
        return False
    try:
        pyperclip.copy(text)
    except Exception:  # PyperclipException, missing xclip/xsel, no display …
        return False
    return True


def cap_payload(text: str, limit: int = MAX_COPY_BYTES) -> tuple[str, bool]:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes (on a character boundary)."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    note = f"\n… [truncated by musetui: {len(data):,} bytes, copied the first {limit:,}]\n"
    room = max(0, limit - len(note.encode("utf-8")))
    return data[:room].decode("utf-8", "ignore") + note, True


def copy_text(app: App[object], text: str, what: str) -> int:
    """Copy ``text`` and notify; returns the number of bytes copied.

    Args:
        app: the running app (its ``copy_to_clipboard`` sends OSC 52).
        text: what to copy; capped at :data:`MAX_COPY_BYTES`.
        what: a short description for the notification, e.g. ``evidence for 019a…e1``.
    """
    payload, capped = cap_payload(text)
    size = len(payload.encode("utf-8"))
    app.copy_to_clipboard(payload)
    local = _pyperclip_copy(payload)
    where = "" if local else " via OSC 52"
    app.notify(escape(f"Copied {what} ({size:,} bytes){where}"), title="Copied", timeout=4)
    if capped:
        app.notify(
            escape(f"The payload was larger than {MAX_COPY_BYTES // 1024} KiB and was truncated."),
            severity="warning",
            timeout=6,
        )
    return size
