"""Which requests of a session are on its current context, and what they carried."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ctxtop.engine.sessions.model import Message, Response, SessionState


@dataclass(slots=True)
class OnContext:
    """A response whose answer is on the context: where, and the message tokens before it."""

    response: Response
    index: int  # first message of its answer
    before: int  # tokenizer count of the messages before it
    answer: int  # tokenizer count of its answer's messages


def on_context(
    state: SessionState,
    context: Sequence[Message],
    tokens: Sequence[int],
    since: int | None = None,
) -> list[OnContext]:
    """The responses whose answers are on the context, in context order, since the last
    compaction (or the line ``since``)."""
    first: dict[str, int] = {}
    answer: Counter[str] = Counter()
    for index, message in enumerate(context):
        key = message.response_key
        if key is not None:
            first.setdefault(key, index)
            answer[key] += tokens[index]
    found: list[OnContext] = []
    running = 0
    position = 0
    # A response from before the last compaction (or truncation) may still have its answer on
    # the context (a preserved segment), but its prompt held the history since replaced.
    since = state.last_rewrite_line if since is None else since
    for key, index in sorted(first.items(), key=lambda item: item[1]):
        response = state.responses.get(key)
        if response is None or response.line < since:
            continue
        running += sum(tokens[position:index])
        position = index
        found.append(OnContext(response, index, running, answer[key]))
    return found


def newest_run_start(found: Sequence[OnContext]) -> OnContext:
    """The first of the newest requests made with the newest one's model (``found`` not empty):
    another model counts the same text with its own tokenizer, and its requests may carry
    another system prompt (a skill that runs on another model)."""
    model = found[-1].response.model
    start = len(found) - 1
    while start > 0 and found[start - 1].response.model == model:
        start -= 1
    return found[start]
