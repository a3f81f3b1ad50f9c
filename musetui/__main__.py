"""``python -m musetui``."""

from musetui.cli import run

if __name__ == "__main__":
    run()
