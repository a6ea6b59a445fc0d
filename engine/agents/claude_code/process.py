"""Where a new Claude Code process took the session's next prompt.

``claude -p … --resume <id>`` runs one process per prompt, each appending to the same session
file. A prompt reaches the agent through its input queue, which 2.x logs as ``queue-operation``
records: ``enqueue`` then ``dequeue`` (2.1.x), or ``dequeue`` alone (2.0.x), before the prompt.
The queue also holds what a user typed while a turn was running (taken when the turn ends, or
``remove``d from the queue when the running turn takes it as a ``queued_command`` attachment,
2.1.33x) and the task notifications the agent queues for itself inside a running process: none
of them starts a process. A new process sends a fresh system prompt, which matters for the prompt
cache.
"""

from __future__ import annotations

from ctxtop.engine.agents.claude_code.entries import Entry
from ctxtop.engine.sessions.model import SessionState

TASK_NOTIFICATION = "<task-notification>"


class ProcessStarts:
    """Fed the main file's records in order; appends to ``state.process_starts`` the line of
    each queue record that starts a process."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self._turn_open = False  # the model owes a response (a prompt or tool results are out)
        self._queued = 0  # enqueued and not yet dequeued
        # The records since the last queue record that may open or close the turn: looked at
        # only when the next queue record comes (most sessions have few), not one by one; a
        # bool: a line already known to leave the turn open or closed (``feed_turn``).
        self._since: list[Entry | bool] = []

    def feed(self, line_entry: Entry, line: int) -> None:
        kind = line_entry.type
        if kind == "assistant":
            self._since = [line_entry]  # what came before it no longer matters
        elif kind == "user":
            self._since.append(line_entry)
        elif kind == "queue-operation":
            self._settle()
            self._queue(line_entry, line)

    def feed_turn(self, kind: str, opens: bool) -> None:
        """A user or assistant line known by what it does to the turn (a cold read's history,
        engine/agents/claude_code/history.py): an assistant line leaves it open or not, a user
        line with ``opens`` opens it."""
        if kind == "assistant":
            self._since = [opens]
        elif opens:
            self._since.append(True)

    def _settle(self) -> None:
        """Whether the turn is open after the records since the last queue record."""
        for line_entry in self._since:
            if isinstance(line_entry, bool):
                self._turn_open = line_entry
            elif line_entry.type == "assistant":
                self._turn_open = line_entry.opens_turn()
            elif line_entry.opens_turn():
                self._turn_open = True
        self._since = []

    def _queue(self, line_entry: Entry, line: int) -> None:
        operation, content = line_entry.queue
        if operation == "enqueue":
            self._queued += 1
            notification = isinstance(content, str) and content.startswith(TASK_NOTIFICATION)
            if not self._turn_open and not notification:
                self.state.process_starts.append(line)
        elif operation == "dequeue":
            if self._queued:
                self._queued -= 1
            elif not self._turn_open:
                self.state.process_starts.append(line)  # 2.0.x logs the dequeue alone
        elif operation == "remove" and self._queued:
            self._queued -= 1  # left the queue without a dequeue (enqueue = dequeue + remove)
