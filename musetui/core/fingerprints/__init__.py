"""Fingerprint decoders, the model catalogue, evidence extraction and attribution."""
