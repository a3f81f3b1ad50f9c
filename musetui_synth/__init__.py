"""Synthetic transcripts: seeded id minting, the bundled sample tree and a benchmark corpus."""

from __future__ import annotations
