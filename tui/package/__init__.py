"""ctxtop: top for an AI agent's context window.

This folder is the installed ``ctxtop`` package itself (pyproject maps it there); its subpackages
``ctxtop.engine``, ``ctxtop.tui``, ``ctxtop.themes`` and ``ctxtop.sample_sessions`` are the
repository's top-level folders of the same names.
"""
