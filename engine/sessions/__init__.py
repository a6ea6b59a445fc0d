"""Session readers: agents' on-disk logs in, a live ``SessionState`` out.

The pieces, for the dashboard and the CLI:

- ``SessionReader(path)``: detects the agent from the file's content and reads it incrementally;
  ``poll()`` applies what was appended, ``state`` is the live ``SessionState``;
- ``follow(reader)``: an iterator of states, one after each change (watchfiles or polling);
- ``build_report(adapter)``: the figures of ``ctxtop report --json``;
- ``discover(agent)``: session files in the agents' default locations, newest first.
"""

from engine.sessions.discovery import discover
from engine.sessions.model import SessionState
from engine.sessions.reader import SessionReader, read_all, read_session
from engine.sessions.report import build_report, context_tokens
from engine.sessions.watch import follow, follow_with

__all__ = [
    "SessionReader",
    "SessionState",
    "build_report",
    "context_tokens",
    "discover",
    "follow",
    "follow_with",
    "read_all",
    "read_session",
]
