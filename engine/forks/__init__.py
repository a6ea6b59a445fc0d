"""Forks: ``ctxtop edit`` (``edit.py``), ``ctxtop compact`` (``compact.py``) and ``ctxtop
restore`` (``restore.py``) read a session, ask its agent's plugin (engine/agents) to write a
changed copy, and write that copy as a new session beside it, atomically, logged for ``ctxtop
undo``; ``compactions.py`` is what ``ctxtop compactions`` and ``restore`` know of each
compaction (what it held, kept and dropped). This package sits above the agents and the
editing and compaction machinery it drives; nothing below imports it."""
