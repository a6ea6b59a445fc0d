"""Forks: ``ctxtop edit`` (``edit.py``) and ``ctxtop compact`` (``compact.py``) read a session,
ask its agent's plugin (engine/agents) to write a changed copy, and write that copy as a new
session beside it, atomically, logged for ``ctxtop undo``. This package sits above the agents
and the editing and compaction machinery it drives; nothing below imports it."""
