"""``python -m musetui``."""

from musetui.cli import run

run()
