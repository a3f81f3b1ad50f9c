"""Text from a transcript made safe to print: no control, escape or bidi characters.

Kept apart from :mod:`musetui.report` (which pulls in the attribution engine) so that the
command line can clean what it prints without importing more than it uses.
"""

from __future__ import annotations

import re

# C0/C1 controls (except newline and tab), DEL, and bidi/zero-width format controls.
CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def strip_controls(text: str) -> str:
    """Remove control, escape and bidi characters so text can never drive a terminal."""
    return CONTROL_RE.sub("", text)
