"""musetui: a forensic browser for AI-agent transcripts."""

__version__ = "0.1.0"
