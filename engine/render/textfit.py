"""The longest prefix of a text, cut before a separator, that fits a token budget (TextChunk).

The library's loop awaits the tokenizer once per piece and its ``breakOnWhitespace`` regex is one
object shared by every TextChunk; sibling chunks prepared together therefore step through the
shared regex position in turns. ``run_interleaved`` reproduces that order so results match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Sequence

from ctxtop.engine.render.elements import JsRegex

Counter = Callable[[str], int]
Steps = Generator[None, None, str]


class RegexCursor:
    """A global JavaScript regex: ``exec`` searches from ``last_index`` and moves it."""

    def __init__(self, pattern: re.Pattern[str], shown: str) -> None:
        self.pattern = pattern
        self.shown = shown
        self.last_index = 0

    def exec(self, text: str) -> int:
        if self.last_index > len(text):
            self.last_index = 0
            return -1
        match = self.pattern.search(text, self.last_index)
        if match is None:
            self.last_index = 0
            return -1
        if match.end() == match.start():
            # The library loops forever on an empty match; refuse instead of hanging.
            raise ValueError(f"breakOn {self.shown} matches the empty string")
        self.last_index = match.end()
        return match.start()


def cursor_for(break_on: str | JsRegex | re.Pattern[str]) -> str | RegexCursor:
    if isinstance(break_on, str):
        return break_on
    if isinstance(break_on, JsRegex):
        if "g" not in break_on.flags:
            raise ValueError(
                "`breakOn` expression must have the global flag set "
                f"(got /{break_on.source}/{break_on.flags})"
            )
        return RegexCursor(break_on.pattern, f"/{break_on.source}/{break_on.flags}")
    return RegexCursor(break_on, f"/{break_on.pattern}/g")


def fit_steps(count: Counter, budget: float, cursor: str | RegexCursor, text: str) -> Steps:
    """The loop as a generator: one ``yield`` where the library awaits the tokenizer."""
    if isinstance(cursor, RegexCursor):
        cursor.last_index = 0
    output = ""
    last = -1
    while last < len(text):
        if isinstance(cursor, str):
            index = text.find(cursor, 0 if last == -1 else last + len(cursor))
        else:
            index = cursor.exec(text)
        if index == -1:
            index = len(text)
        candidate = output + text[max(0, last) : index]
        too_long = count(candidate) > budget
        yield
        if too_long:
            return output
        output = candidate
        last = index
    return output


def text_below_budget(
    count: Counter, budget: float, break_on: str | JsRegex | re.Pattern[str], text: str
) -> str:
    return run_interleaved([fit_steps(count, budget, cursor_for(break_on), text)])[0]


def run_interleaved(loops: Sequence[Steps]) -> list[str]:
    """Runs the loops as the JS microtask queue does: each to its first await, then in turns."""
    results: list[str] = [""] * len(loops)
    active: list[int] = []
    for index, loop in enumerate(loops):
        try:
            next(loop)
            active.append(index)
        except StopIteration as stop:
            results[index] = stop.value
    while active:
        still: list[int] = []
        for index in active:
            try:
                next(loops[index])
                still.append(index)
            except StopIteration as stop:
                results[index] = stop.value
        active = still
    return results
