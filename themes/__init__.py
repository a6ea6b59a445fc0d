"""Bundled themes (data files)."""
