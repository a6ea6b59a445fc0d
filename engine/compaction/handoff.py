"""The text the agent sees in place of the summarised history: a short note, then the summary
(which ends with the pointer to the full transcript)."""

from __future__ import annotations

OPENING = "This session continues an earlier conversation that ctxtop compacted"


def handoff_message(summary: str, kept_rounds: int) -> str:
    if kept_rounds:
        after = (
            f" The {kept_rounds} most recent round{'s' if kept_rounds != 1 else ''} of the "
            "conversation follow it verbatim; the summary was written without them."
        )
    else:
        after = " Continue from its continuation plan."
    return (
        f"{OPENING}. The summary below covers the earlier part of the conversation.{after}"
        f"\n\n{summary}"
    )
