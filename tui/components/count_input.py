"""A number field that keeps every keystroke.

Textual's ``Input`` runs backspace as a binding (an action dispatched later) and types a
character at once: a backspace and a digit read in one go (typed fast, or a terminal that sends
them together) lost the digit ("3", backspace, "5" gave an empty field). Here backspace is
handled as the key arrives, in order with the characters after it.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class CountInput(Input):
    async def _on_key(self, event: events.Key) -> None:
        if event.key == "backspace":
            event.stop()
            event.prevent_default()
            self.action_delete_left()
            return
        await super()._on_key(event)
