"""The compaction inspector's result as ``ctxtop compactions`` prints it: in words (what the
dashboard's compaction view shows too, line for line; ≈: ctxtop's tokenizer estimates, the
compaction's own before and after carry the marks of every other view) and as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxtop.engine.forks.compactions import CompactionHistory, Entry, Inspection, Size
from ctxtop.engine.tokens.short import provenance_mark
from ctxtop.engine.words import plural

FATES = {"kept": "kept", "summarised": "in summary", "dropped": "DROPPED"}


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _kinds(rows: Sequence[Size]) -> list[str]:
    """One line per kind, its largest names after it."""
    kinds: dict[str, list[Size]] = {}
    for row in rows:
        kinds.setdefault(row.kind, []).append(row)
    lines: list[str] = []
    for kind, found in sorted(kinds.items(), key=lambda pair: -sum(r.tokens for r in pair[1])):
        count, tokens = sum(r.count for r in found), sum(r.tokens for r in found)
        line = f"    {kind:<17} {count:>4} {_n(tokens):>9}≈"
        named = sorted((r for r in found if r.name), key=lambda r: -r.tokens)
        if named:
            line += "  " + ", ".join(f"{r.name} ×{r.count} {_n(r.tokens)}≈" for r in named[:4])
            line += ", …" if len(named) > 4 else ""
        lines.append(line)
    return lines or ["    (nothing)"]


def _entry(entry: Entry) -> str:
    covered = f" {entry.coverage:.0%} covered" if entry.coverage is not None else ""
    flag = "  ← forgotten instruction" if entry.forgotten else ""
    return (
        f"    {entry.id:<4} {FATES[entry.fate]:<10} {_n(entry.tokens):>7}≈{covered}"
        f"  {entry.label}{flag}"
    )


def headline(item: Inspection) -> str:
    """The compaction in one line: its number, line, trigger, and the agent's before and after."""
    mark = provenance_mark(item.after_source)
    return (
        f"{item.kind} {item.number} · line {item.line} · {item.trigger} ·"
        f" {_n(item.tokens_before)} -> {mark}{_n(item.tokens_after)} tokens"
    )


def inspection_lines(item: Inspection, path: str, restorable: bool) -> list[str]:
    lines = [headline(item)]
    if item.summary_tokens is not None:
        ratio = item.replaced_tokens / item.summary_tokens if item.summary_tokens else 0
        lines.append(
            f"  summary {_n(item.summary_tokens)}≈ tokens in place of {_n(item.replaced_tokens)}≈"
            + (f" ({ratio:.1f}× smaller)" if ratio >= 1 else "")
        )
    elif item.kind == "microcompaction":
        lines.append(f"  nothing summarised: {_n(item.replaced_tokens)}≈ tokens cleared in place")
    else:
        lines.append(
            f"  no summary in the log; {_n(item.replaced_tokens)}≈ tokens left the context"
        )
    lines += ["  just before (by kind, count, tokens):", *_kinds(item.before)]
    lines += ["  right after:", *_kinds(item.after)]
    users = item.of("user message")
    if users:
        lines.append("  user messages (how much of each the summary carries):")
        lines += [_entry(entry) for entry in users]
    others = [entry for entry in item.entries if entry.kind != "user message"]
    if others:
        lines.append("  files and tool results:")
        lines += [_entry(entry) for entry in others]
    dropped = item.dropped
    lines.append(
        f"  dropped: {plural(len(dropped), 'item')}, {_n(sum(e.tokens for e in dropped))}≈ tokens"
        + (
            f"; forgotten instructions: {' '.join(e.id for e in item.forgotten)}"
            if item.forgotten
            else ""
        )
    )
    if restorable:
        lines.append(f"  restore: ctxtop restore {path} --compaction {item.number}")
        if dropped:
            wanted = "forgotten" if item.forgotten else dropped[0].id
            lines.append(f"      or keep the summary and re-add items: … --with {wanted}")
    return lines


def history_lines(history: CompactionHistory) -> list[str]:
    """The whole report: a headline, how the summaries grew, each compaction."""
    path = str(history.path)
    count = len(history.compactions)
    lines = [f"{path} ({history.agent}): {plural(count, 'compaction')}"]
    growth = [size for size in history.summary_growth if size is not None]
    if len(growth) > 1:
        lines.append(
            "summary size, compaction after compaction: " + " -> ".join(f"{_n(s)}≈" for s in growth)
        )
    if history.restore_refused:
        lines.append(history.restore_refused)
    for item in history.compactions:
        lines += ["", *inspection_lines(item, path, history.restore_refused is None)]
    if not count:
        lines.append("no compaction in this session")
    return lines


def history_json(history: CompactionHistory) -> dict[str, Any]:
    """What ``ctxtop compactions --json`` prints."""
    return {
        "file": str(history.path),
        "agent": history.agent,
        "tokens_source": "estimated",  # every item's tokens: tokenizer estimates
        "restore": history.restore_refused or "possible",
        "summary_growth": list(history.summary_growth),
        "compactions": [_inspection_json(item) for item in history.compactions],
    }


def _sizes_json(rows: Sequence[Size]) -> list[dict[str, Any]]:
    return [{"kind": r.kind, "name": r.name, "count": r.count, "tokens": r.tokens} for r in rows]


def _inspection_json(item: Inspection) -> dict[str, Any]:
    return {
        "number": item.number,
        "kind": item.kind,
        "line": item.line,
        "trigger": item.trigger,
        "timestamp": item.timestamp,
        "tokens_before": item.tokens_before,
        "tokens_after": item.tokens_after,
        "tokens_after_source": item.after_source,
        "summary_tokens": item.summary_tokens,
        "replaced_tokens": item.replaced_tokens,
        "before": _sizes_json(item.before),
        "after": _sizes_json(item.after),
        # Each user message, file read and tool result of the context before it, by fate.
        **{
            fate: [_entry_json(e) for e in item.entries if e.fate == fate]
            for fate in ("kept", "summarised", "dropped")
        },
        "user_messages": [_entry_json(e) for e in item.of("user message")],
        "forgotten": [e.id for e in item.forgotten],
    }


def _entry_json(entry: Entry) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": entry.id,
        "kind": entry.kind,
        "label": entry.label,
        "tokens": entry.tokens,
        "fate": entry.fate,
    }
    if entry.coverage is not None:
        found["coverage"] = entry.coverage
    return found
