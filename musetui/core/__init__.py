"""The headless core: formats, fingerprints, scanning, search, cache, reports and every command's engine.

Nothing here imports Textual, the CLI or the UI (``musetui.app``, ``musetui.screens``,
``musetui.widgets``…); an import-linter contract in CI checks it, function-local imports included.
"""
