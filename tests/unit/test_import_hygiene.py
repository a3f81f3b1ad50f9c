"""The headless core never imports Textual."""

from __future__ import annotations

import subprocess
import sys


def test_core_does_not_import_textual() -> None:
    code = (
        "import sys\n"
        "import musetui.cli, musetui.index, musetui.scanner, musetui.session, musetui.report\n"
        "import musetui.fingerprints.decoders, musetui.fingerprints.attribution, musetui.search\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
