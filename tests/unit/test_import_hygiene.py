"""The headless core never imports Textual."""

from __future__ import annotations

import subprocess
import sys


def test_core_does_not_import_textual() -> None:
    code = (
        "import sys\n"
        "import musetui.core.session_forest\n"
        "import musetui.cli, musetui.core.index, musetui.core.scanner, musetui.core.session, musetui.core.report\n"
        "import musetui.core.fingerprints.decoders, musetui.core.fingerprints.attribution, musetui.core.search\n"
        "import musetui.core.pager, musetui.screens.layout\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_text_search_imports_no_attribution_engine(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``musetui search`` without provider:/host:/flag: starts no more than it uses."""
    (tmp_path / "s.jsonl").write_text('{"text": "hello"}\n')
    code = (
        "import sys\n"
        "from musetui.cli import main\n"
        f"code = main(['search', {str(tmp_path)!r}, 'hello', '--json'])\n"
        "heavy = ['musetui.core.report', 'musetui.core.fingerprints.attribution', 'musetui.core.index']\n"
        "sys.stderr.write(f'{code}:' + ','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert '"line":1' in out.stdout and out.stderr.strip().endswith("0:")
