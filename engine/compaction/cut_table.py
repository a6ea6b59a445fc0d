"""The cut as rows a person reads: one row per round (its turn, the tools it called, its size,
kept or summarised), and those rows grouped into lines per turn for the CLI and the panel."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.compaction.items import Cut, Item, Round
from ctxtop.engine.words import plural

Count = Callable[[str], int]


def item_tokens(item: Item, count: Count) -> int:
    """Tokenizer estimate of an item: its text, its calls' inputs and their results."""
    total = count(item.text) if item.text else 0
    for call in item.calls:
        total += count(str(call.input)) + (count(call.result) if call.result else 0)
    return total


@dataclass(frozen=True, slots=True)
class RoundRow:
    """One round of the cut: its number and turn, the tools it called, its size, and whether
    it is kept verbatim (else summarised)."""

    round: int
    turn: int
    calls: tuple[str, ...]
    call_ids: tuple[str, ...]
    tokens: int
    kept: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "turn": self.turn,
            "calls": list(self.calls),
            "call_ids": list(self.call_ids),
            "tokens": self.tokens,
            "kept": self.kept,
        }


def round_row(round_: Round, kept: bool, count: Count) -> RoundRow:
    return RoundRow(
        round_.number,
        round_.turn,
        tuple(call.name for call in round_.calls),
        tuple(call.call_id for call in round_.calls),
        sum(item_tokens(item, count) for item in round_.items),
        kept,
    )


def round_table(cut: Cut, count: Count) -> tuple[RoundRow, ...]:
    rows = [round_row(r, False, count) for r in cut.summarised_rounds]
    return (*rows, *(round_row(r, True, count) for r in cut.kept_rounds))


def turn_requests(cut: Cut) -> list[dict[str, Any]]:
    """Each turn's number and request text (the JSON form: rows, not a dict keyed by number)."""
    return [{"turn": t.number, "request": t.request.text} for t in cut.turns if t.request]


def requests_by_turn(cut: Cut) -> dict[int, str]:
    """Each turn's request text by its number."""
    return {t.number: t.request.text for t in cut.turns if t.request}


def _span(rows: Sequence[RoundRow]) -> str:
    first, last = rows[0].round, rows[-1].round
    return f"round {first}" if first == last else f"rounds {first}–{last}"


def _tools(rows: Sequence[RoundRow]) -> str:
    tally = Counter(name for row in rows for name in row.calls)
    if not tally:
        return "no tool calls"
    return ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in tally.most_common(4)) + (
        ", …" if len(tally) > 4 else ""
    )


def cut_lines(
    rows: Sequence[RoundRow],
    requests: dict[int, str],
    short: Callable[[int], str] = str,
    width: int = 60,
) -> list[str]:
    """Per turn: its request (cut to ``width``), then its rounds as runs of summarised and kept,
    with the tools they called and their size (≈: tokenizer estimates)."""
    lines: list[str] = []
    turns = sorted({row.turn for row in rows})
    for turn in turns:
        in_turn = [row for row in rows if row.turn == turn]
        request = " ".join(requests.get(turn, "").split())
        if turn == 0:
            lines.append("before the first request")
        else:
            cut = request if len(request) <= width else request[: width - 1] + "…"
            lines.append(f'turn {turn}: "{cut}"')
        runs: list[list[RoundRow]] = []
        for row in in_turn:
            if runs and runs[-1][-1].kept == row.kept:
                runs[-1].append(row)
            else:
                runs.append([row])
        for run in runs:
            what = "kept verbatim" if run[0].kept else "summarised"
            tokens = sum(row.tokens for row in run)
            lines.append(f"  {_span(run)} {what} ({_tools(run)}; {short(tokens)}≈ tokens)")
    return lines


def cut_headline(cut_rows: Sequence[RoundRow], kept_request: bool) -> str:
    """One line: how many rounds are summarised and kept, and whether a request is kept."""
    kept = sum(1 for row in cut_rows if row.kept)
    summarised = len(cut_rows) - kept
    line = f"{plural(summarised, 'round')} summarised, {kept} kept verbatim"
    if kept_request:
        line += " (the cut is inside a turn: its request is kept too)"
    return line
