"""The ``structured`` summariser: an 8-section hand-off built from the session itself, offline
and deterministic, shrunk to a token budget from the bottom section up."""

from __future__ import annotations

import re
from collections import Counter as Tally
from collections.abc import Callable
from dataclasses import dataclass

from ctxtop.engine.compaction.facts import (
    Facts,
    changed_paths,
    command_of,
    error_line,
    first_line,
    gather,
    languages,
    one_line,
    programs,
    read_paths,
)
from ctxtop.engine.compaction.handoff import OPENING
from ctxtop.engine.compaction.items import Call, Cut, Item
from ctxtop.engine.words import plural

Count = Callable[[str], int]

TITLES = (
    "Conversation overview",
    "Technical foundation",
    "Codebase status",
    "Problem resolution",
    "Progress",
    "Active work state",
    "Recent operations",
    "Continuation plan",
)
RECENT_CALLS = 8
# Bounded run before the colon: an unbounded one rescanned the rest of a line for every
# "Full transcript" in it (a previous summary of 300 KB of them: 24 s).
_POINTER = re.compile(r"(?:transcript at|Full transcript[^:\n]{0,200}+):\s*(\S+)")
_DONE = ("completed", "done", "complete")
_ACTIVE = ("in_progress", "in progress", "active")


def pointer_line(source: str, earlier: str | None) -> str:
    """The one pointer to the full transcript (and to an earlier one a previous summary named)."""
    line = (
        f"Full transcript of the conversation before this summary: {source} "
        "(read it when you need exact details: code, commands, error messages)."
    )
    if earlier and earlier != source:
        line += f" The part before the previous summary is in: {earlier}"
    return line


def earlier_transcript(previous: Item | None) -> str | None:
    if previous is None:
        return None
    found = _POINTER.findall(previous.text)
    return found[-1].rstrip(".") if found else None


def previous_lines(previous: Item | None, openings: tuple[str, ...]) -> list[str]:
    """The previous summary's own lines, without its opening note (ctxtop's, one of the agents'
    ``openings``) and transcript pointer."""
    if previous is None:
        return []
    notes = (OPENING, *openings, "Continue the conversation")
    lines = []
    for line in previous.text.splitlines():
        text = line.strip()
        if not text or text.startswith(notes) or _POINTER.search(text):
            continue
        lines.append("  " + one_line(text, 300))
    return lines


@dataclass(slots=True)
class Section:
    title: str
    lines: list[str]
    drop_oldest: bool  # shrink by dropping the first lines (else the last)

    def text(self, number: int) -> str:
        body = "\n".join(f"- {line}" if not line.startswith("  ") else line for line in self.lines)
        return f"{number}. {self.title}\n{body}"


def _describe(call: Call) -> str:
    command = command_of(call)
    if command is not None:
        return f"{call.name} `{one_line(command, 120)}`"
    paths = changed_paths(call) or read_paths(call)
    if paths:
        return f"{call.name} {paths[0]}"
    return f"{call.name} {one_line(str(call.input), 80)}"


def _outcome(call: Call) -> str:
    if call.result is None:
        return "no result yet"
    failed = call.is_error or error_line(call) is not None
    shown = one_line(first_line(call.result) or "(no output)", 100)
    return f"{'error' if failed else 'ok'}: {shown}"


def _overview(facts: Facts, previous: Item | None, openings: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    earlier = previous_lines(previous, openings)
    if earlier:
        lines.append("Earlier work (from the previous summary):")
        lines.extend(earlier)
    label = "since then" if earlier else "in order"
    lines.append(f"The user's requests {label}:" if facts.requests else "No user requests.")
    lines.extend(f'  {n}. "{one_line(text, 600)}"' for n, text in enumerate(facts.requests, 1))
    return lines


def _foundation(facts: Facts, cwd: str | None, model: str | None) -> list[str]:
    lines = []
    if cwd:
        lines.append(f"Working directory: {cwd}")
    if model:
        lines.append(f"Model: {model}")
    if languages(facts):
        lines.append(f"Languages and formats: {', '.join(languages(facts))}")
    if programs(facts):
        lines.append(f"Programs run: {', '.join(programs(facts)[:20])}")
    tools = Tally(call.name for call in facts.calls)
    if tools:
        lines.append("Tools used: " + ", ".join(f"{name} ×{n}" for name, n in tools.most_common()))
    return lines or ["Nothing technical seen in the summarised part."]


def _codebase(facts: Facts) -> list[str]:
    ordered = sorted(facts.files.values(), key=lambda fact: not fact.changes)
    lines = [
        f"{fact.path}: {fact.last} (read {fact.reads}×, changed {fact.changes}×)"
        for fact in ordered
    ]
    return lines or ["No files read or changed."]


def _problems(facts: Facts) -> list[str]:
    lines = [
        f"{_describe(error.call)} failed: {one_line(error.message, 160)} → "
        f"{error.resolution or 'not resolved in the summarised part'}"
        for error in facts.errors
    ]
    return lines or ["No errors seen."]


def _progress(facts: Facts) -> list[str]:
    groups: dict[str, list[str]] = {"Done": [], "In progress": [], "Pending": []}
    for title, status in facts.tasks.values():
        state = status.lower()
        label = "Done" if state in _DONE else "In progress" if state in _ACTIVE else "Pending"
        groups[label].append(title)
    lines = [f"{label}: " + "; ".join(titles) for label, titles in groups.items() if titles]
    # A request another one followed is done, with or without a closing text (Codex keeps
    # the user's messages of a compacted past with no answers); the last one when answered.
    total = len(facts.requests)
    last_answered = any(number == total for number, _ in facts.answers)
    finished = max(total - 1, 0) + (1 if total and last_answered else 0)
    lines.append(f"Requests answered: {finished} of {total}")
    lines.extend(f"Answer to request {n}: {one_line(text, 200)}" for n, text in facts.answers)
    return lines


def _active(cut: Cut) -> list[str]:
    """The last request of the summarised part and what followed it."""
    items = cut.summarised
    starts = [index for index, item in enumerate(items) if item.kind == "request"]
    tail = items[starts[-1] :] if starts else items
    facts = gather(tail)
    lines = []
    if starts:
        lines.append(f'Last summarised request: "{one_line(items[starts[-1]].text, 300)}"')
    touched = list(facts.files)
    if touched:
        lines.append("Files touched in it: " + ", ".join(touched))
    if facts.calls:
        lines.append(f"Its last call: {_describe(facts.calls[-1])} → {_outcome(facts.calls[-1])}")
    if facts.last_text:
        lines.append(f"The assistant's last words: {one_line(facts.last_text, 400)}")
    return lines or ["Nothing was summarised after the previous summary."]


def _recent(facts: Facts) -> list[str]:
    calls = facts.calls[-RECENT_CALLS:]
    return [f"{_describe(call)} → {_outcome(call)}" for call in calls] or ["No tool calls."]


def _plan(facts: Facts, cut: Cut) -> list[str]:
    lines = []
    if facts.requests:
        lines.append(f'Last request: "{one_line(facts.requests[-1], 400)}"')
    open_tasks = [t for t, status in facts.tasks.values() if status.lower() not in _DONE]
    if open_tasks:
        lines.append("Open tasks: " + "; ".join(open_tasks))
    unresolved = [e for e in facts.errors if not e.resolution]
    if unresolved:
        lines.append("Unresolved: " + "; ".join(_describe(e.call) for e in unresolved))
    if cut.kept_rounds:
        rounds = plural(len(cut.kept_rounds), "most recent round")
        if cut.kept_request is not None:
            lines.append(
                f"Continue the user's current request, which follows verbatim with the {rounds} "
                "of work on it."
            )
        else:
            lines.append(f"Continue with the {rounds} that follow verbatim.")
    elif not open_tasks and not unresolved:
        lines.append("Nothing is open: wait for the user's next request.")
    return lines


def sections(
    cut: Cut, cwd: str | None, model: str | None, openings: tuple[str, ...]
) -> list[Section]:
    """``openings``: how the agents' own summaries begin (a previous one's note is left out)."""
    facts = gather(cut.summarised, last_request_open=cut.kept_request is not None)
    return [
        Section(TITLES[0], _overview(facts, cut.previous_summary, openings), True),
        Section(TITLES[1], _foundation(facts, cwd, model), False),
        Section(TITLES[2], _codebase(facts), False),
        Section(TITLES[3], _problems(facts), True),
        Section(TITLES[4], _progress(facts), False),
        Section(TITLES[5], _active(cut), False),
        Section(TITLES[6], _recent(facts), True),
        Section(TITLES[7], _plan(facts, cut), False),
    ]


def render(parts: list[Section], pointer: str) -> str:
    body = "\n\n".join(section.text(n) for n, section in enumerate(parts, 1))
    return f"{body}\n\n{pointer}"


def fit(parts: list[Section], pointer: str, budget: int, count: Count) -> str:
    """The summary within ``budget`` tokens: lines go from the lowest section up (each keeps one),
    then long lines are shortened, then the text is cut (the pointer always stays)."""
    counts: dict[str, int] = {}

    def tokens(line: str) -> int:
        if line not in counts:
            counts[line] = count(line) + 1
        return counts[line]

    # A running sum of per-line counts spares tokenizing the whole text after every drop; the
    # real count of the whole text is checked after each pass.
    estimate = count(render(parts, pointer))
    for section in reversed(parts):
        while estimate > budget and len(section.lines) > 1:
            estimate -= tokens(section.lines.pop(0 if section.drop_oldest else -1))
    text = render(parts, pointer)
    for section in reversed(parts):
        while count(text) > budget and len(section.lines) > 1:
            del section.lines[0 if section.drop_oldest else -1]
            text = render(parts, pointer)
    for limit in (200, 80, 40):
        if count(text) <= budget:
            break
        for section in parts:
            section.lines = [one_line(line, limit) for line in section.lines]
        text = render(parts, pointer)
    if count(text) > budget:
        body, tail = render(parts, "").rstrip(), f"\n\n{pointer}"
        room = max(budget - count(tail), 0)
        while body and count(body) > room:
            body = body[: int(len(body) * 0.8)]
        text = (body + " …" if body else "") + tail
    return text


def structured_summary(
    cut: Cut,
    budget: int,
    count: Count,
    source: str,
    cwd: str | None,
    model: str | None,
    *,
    openings: tuple[str, ...],
) -> str:
    pointer = pointer_line(source, earlier_transcript(cut.previous_summary))
    return fit(sections(cut, cwd, model, openings), pointer, budget, count)
