"""The real app in a real terminal (tmux): the evidence is on screen at 80x24 and 120x30, and
every cell of the focused cursor row reads at >= 4.5:1 in the colours the terminal was sent."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

REPO = Path(__file__).resolve().parents[2]


def _xterm_256() -> list[tuple[int, int, int]]:
    base = [
        (0, 0, 0),
        (128, 0, 0),
        (0, 128, 0),
        (128, 128, 0),
        (0, 0, 128),
        (128, 0, 128),
        (0, 128, 128),
        (192, 192, 192),
        (128, 128, 128),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (0, 0, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ]
    steps = (0, 95, 135, 175, 215, 255)
    cube = [(steps[r], steps[g], steps[b]) for r in range(6) for g in range(6) for b in range(6)]
    grey = [(8 + 10 * i,) * 3 for i in range(24)]
    return base + cube + grey  # type: ignore[return-value]


PALETTE = _xterm_256()
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def cells(line: str) -> list[tuple[str, tuple[int, int, int] | None, tuple[int, int, int] | None, bool]]:
    """(char, fg, bg, reverse) for each character of a ``capture-pane -e`` line."""
    fg: tuple[int, int, int] | None = None
    bg: tuple[int, int, int] | None = None
    rev = False
    out = []
    pos = 0
    for m in SGR.finditer(line + "\x1b[m"):
        for ch in line[pos : m.start()]:
            out.append((ch, fg, bg, rev))
        pos = m.end()
        codes = [int(c) if c else 0 for c in m.group(1).split(";")] if m.group(1) else [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                fg = bg = None
                rev = False
            elif c == 7:
                rev = True
            elif c == 27:
                rev = False
            elif c in (38, 48) and i + 1 < len(codes):
                if codes[i + 1] == 5:
                    colour = PALETTE[codes[i + 2]]
                    i += 2
                else:
                    colour = (codes[i + 2], codes[i + 3], codes[i + 4])
                    i += 4
                if c == 38:
                    fg = colour
                else:
                    bg = colour
            elif c == 39:
                fg = None
            elif c == 49:
                bg = None
            elif 30 <= c <= 37:
                fg = PALETTE[c - 30]
            elif 40 <= c <= 47:
                bg = PALETTE[c - 40]
            elif 90 <= c <= 97:
                fg = PALETTE[c - 90 + 8]
            i += 1
    return out


def wcag(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    def lum(rgb: tuple[int, int, int]) -> float:
        def ch(c: int) -> float:
            v = c / 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * ch(rgb[0]) + 0.7152 * ch(rgb[1]) + 0.0722 * ch(rgb[2])

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


class Tmux:
    def __init__(self, width: int, height: int, tmp: Path) -> None:
        self.socket = f"musetui-test-{uuid.uuid4().hex[:8]}"
        env = {
            **os.environ,
            "MUSETUI_LIVE_INTERVAL": "0",
            "MUSETUI_CACHE_DIR": str(tmp / "cache"),
            "MUSETUI_NO_PYPERCLIP": "1",
        }
        cmd = f"cd {REPO} && {sys.executable} -m musetui sample_transcripts; sleep 30"
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                str(width),
                "-y",
                str(height),
                cmd,
            ],
            check=True,
            env=env,
        )

    def keys(self, *keys: str) -> None:
        """Send keys (the caller then waits for what they show, with :meth:`wait_for`)."""
        for key in keys:
            subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "t", key], check=True)

    def screen(self, escapes: bool = False) -> str:
        args = ["tmux", "-L", self.socket, "capture-pane", "-p", "-t", "t"] + (["-e"] if escapes else [])
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout

    def wait_for(self, text: str, limit: float = 30.0) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
def test_o_shows_the_evidence_and_the_cursor_row_reads(size: tuple[int, int], tmp_path: Path) -> None:
    tmux = Tmux(*size, tmp_path)
    try:
        tmux.wait_for("1 outlier")
        tmux.keys("o")
        screen = tmux.wait_for("verdict")  # o opens on the evidence (alone on a narrow screen)
        assert "openai (host azure)" in screen and "outlier: provider openai differs" in screen
        if size[0] < 100:
            tmux.keys("escape")  # back to the tree, its cursor on the outlier
        tmux.wait_for("⚑ 01a05efe")
        # The focused cursor row, in the colours the terminal was sent.
        row = next(line for line in tmux.screen(escapes=True).splitlines() if "⚑ 01a05efe" in SGR.sub("", line))
        low = []
        inside = cells(row)
        bars = [i for i, c in enumerate(inside) if c[0] == "│"]
        inside = inside[bars[0] + 1 : bars[1]]  # the tree's frame (and the parts beside it) are not the row
        for ch, fg, bg, rev in inside:
            if ch.strip() and fg is not None and bg is not None:
                a, b = (bg, fg) if rev else (fg, bg)
                if wcag(a, b) < 4.5:
                    low.append((ch, round(wcag(a, b), 2)))
        cursor = [c for c in cells(row) if c[0] in "⚑0123456789abcdef"]
        assert cursor and all(c[1] is not None and c[2] is not None for c in cursor), "colours not explicit"
        assert not low, low
        tmux.keys("tab", "tab", "5")  # tab goes to the panes at every width
        screen = tmux.wait_for("Evidence records")
        assert "openai (host azure)" in screen and "outlier" in screen
        assert "outlier: provider openai differs" in screen  # the reason, as y and show word it
        width = max(len(line) for line in screen.splitlines())
        assert width <= size[0]
    finally:
        tmux.close()
