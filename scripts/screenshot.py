"""Regenerate the README's picture: the app on the bundled sample after ``o``, saved by Textual as SVG.

    python scripts/screenshot.py                 # writes docs/screenshot.svg
    python scripts/screenshot.py -o DIR/x.svg    # elsewhere (the test writes into a temp dir)

The app runs headless (Pilot) at a fixed size, without animations, the cache, the live poll or
the local clipboard, on ``sample_transcripts`` as a relative path, so the picture depends on
nothing but the code and the sample.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "docs" / "screenshot.svg"
#: Wide enough for the side column and the evidence side by side, short enough to read in a README.
SIZE = (160, 40)
TITLE = "musetui on the bundled sample, after o"
#: Read when the app starts: set before it does.
ENV = {
    "TEXTUAL_ANIMATIONS": "none",
    "MUSETUI_NO_CACHE": "1",
    "MUSETUI_LIVE_INTERVAL": "0",
    "MUSETUI_NO_PYPERCLIP": "1",
}


async def shoot(out: Path, size: tuple[int, int] = SIZE) -> Path:
    """Run the app on the sample, press ``o``, wait until it is idle, and save the screen to ``out``."""
    from musetui.app import MuseApp
    from musetui.settle import settle

    app = MuseApp(["sample_transcripts"])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        svg = app.export_screenshot(title=TITLE)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(svg, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the screenshot; print where."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-o", "--output", type=Path, default=DEFAULT_OUT, help="the SVG to write (default: docs/screenshot.svg)"
    )
    args = parser.parse_args(argv)
    out = args.output.resolve()
    os.environ.update(ENV)
    os.chdir(REPO)  # the header shows the root as given: sample_transcripts, not a checkout path
    sys.path.insert(0, str(REPO))
    asyncio.run(shoot(out))
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
