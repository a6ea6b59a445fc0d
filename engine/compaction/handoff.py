"""The text the agent sees in place of the summarised history: a short note, then the summary
(which ends with the pointer to the full transcript)."""

from __future__ import annotations

OPENING = "This session continues an earlier conversation that ctxtop compacted"


def handoff_message(summary: str, kept_rounds: int, kept_request: bool = False) -> str:
    rounds = f"{kept_rounds} most recent round{'s' if kept_rounds != 1 else ''}"
    if kept_request:
        # The cut fell inside a turn: the model must still know what it is working on.
        after = (
            f" The user's current request follows it verbatim, then the {rounds} of work on "
            "it; the summary covers the earlier rounds and was written without them."
        )
    elif kept_rounds:
        after = (
            f" The {rounds} of the conversation follow it verbatim; the summary was written "
            "without them."
        )
    else:
        after = " Continue from its continuation plan."
    return (
        f"{OPENING}. The summary below covers the earlier part of the conversation.{after}"
        f"\n\n{summary}"
    )
