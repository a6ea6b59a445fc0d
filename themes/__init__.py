"""Bundled themes (YAML data files) and the loader that turns them into Textual themes."""
