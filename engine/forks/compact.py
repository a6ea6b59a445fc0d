"""``ctxtop compact``: choose what to summarise, summarise it, preview the fork in memory, and
write it (``engine/forks/transaction.py``: the session's bytes read once, the fork read back
before it is written, written atomically, logged for ``ctxtop undo``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.engine.agents import AGENTS, compacts_unread, summary_openings
from ctxtop.engine.agents.agent_window import agent_window
from ctxtop.engine.compaction.cut_table import RoundRow, item_tokens, round_table, turn_requests
from ctxtop.engine.compaction.handoff import handoff_message
from ctxtop.engine.compaction.items import Cut, Item, choose_cut
from ctxtop.engine.compaction.source import Source
from ctxtop.engine.compaction.structured import structured_summary
from ctxtop.engine.config import LLMSettings
from ctxtop.engine.editing.preview import ShownContext, priced_rewrite, sections, whole_context
from ctxtop.engine.errors import CtxtopError, InputError
from ctxtop.engine.forks.transaction import (
    COMPACTING,
    Loaded,
    NewFork,
    Outcome,
    Preview,
    commit,
    load,
    read_back,
    unwritten,
    usage_estimates,
)
from ctxtop.engine.models.registry import lookup as model_info
from ctxtop.engine.safety.secrets import SecretMasker
from ctxtop.engine.sessions.cache_clock import writes_for_an_hour
from ctxtop.engine.sessions.ledger import DEFAULT_ENCODING, Ledger, encoding_for
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.tokens import get_encoding

SUMMARIZERS = ("structured", "llm")
# Rounds kept verbatim by default: the working set of a task in progress (the last few tool
# calls and their results) survives, as Anthropic's clear_tool_uses keeps 3 tool uses.
DEFAULT_KEEP_ROUNDS = 3
BUDGET_SHARE = 0.10  # the summary's default budget: this share of the model's window

Count = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Compactable:
    """The session as its agent's compaction source sees it, with the counter and window of its
    model."""

    source: Source
    count: Count
    window: int


def compactable(loaded: Loaded) -> Compactable:
    state = loaded.state
    plugin = AGENTS.get(state.agent) if state is not None else compacts_unread(loaded.data)
    if plugin is None or plugin.source is None:
        agent = state.agent if state is not None else "such"
        raise InputError(str(loaded.path), f"compacting {agent} sessions is not supported yet")
    writer = loaded.writer(plugin.source.writer_class)
    source = plugin.source(loaded.path, loaded.data, loaded.state, writer=writer)
    model = source.model()
    if loaded.state is not None:
        encoding = encoding_for(loaded.state)
    else:
        encoding = get_encoding(model_info(model).encoding or DEFAULT_ENCODING)
    window = agent_window(loaded.state, model).tokens
    return Compactable(source, loaded.counter(encoding), window)


def estimate(items: list[Item], count: Count) -> int:
    """Tokenizer estimate of items (text, call inputs and results): for a format ctxtop does not
    read yet."""
    return sum(item_tokens(item, count) for item in items)


@dataclass(frozen=True, slots=True)
class CompactDetails:
    """A compaction's own figures (``Preview.details``)."""

    summarizer: str  # the one used (the structured one when the LLM failed)
    summarizer_requested: str
    summary: str  # as it is written
    summary_tokens: int
    budget: int
    cut: Cut
    round_table: tuple[RoundRow, ...]
    secrets_masked: int  # in what went to the LLM and in the summary
    # "nothing to compact: ..." when the compacted session would not be smaller: never written
    refused: str | None = None

    def settings(self) -> dict[str, Any]:
        return {
            "summarizer": self.summarizer,
            "summarizer_requested": self.summarizer_requested,
            "summary": self.summary,
            "summary_tokens": self.summary_tokens,
            "budget": self.budget,
        }

    def figures(self) -> dict[str, Any]:
        cut = self.cut
        return {
            "rounds": cut.rounds,
            "turns": cut.turn_count,
            "summarised_rounds": len(cut.summarised_rounds),
            "kept_rounds": len(cut.kept_rounds),
            "kept_request": cut.kept_request is not None,
            "overflowed_round": cut.overflowed_round,
            "round_table": [row.as_json() for row in self.round_table],
            "requests": turn_requests(cut),
            "previous_summary": cut.previous_summary is not None,
            "secrets_masked": self.secrets_masked,
            "nothing_to_compact": self.refused,
        }

    def logged(self) -> dict[str, Any]:
        return {"summarizer": self.summarizer, "kept_rounds": len(self.cut.kept_rounds)}


def summarise(
    loaded: Compactable,
    cut: Cut,
    summarizer: str,
    budget: int,
    llm: LLMSettings | None,
    warnings: list[str],
    cancel: threading.Event | None = None,
    masker: SecretMasker | None = None,
) -> tuple[str, str]:
    """(summary, the summariser actually used): the LLM's, or the structured one if it fails.
    Secrets are masked in what goes to the LLM (counted in ``masker``)."""
    source = loaded.source
    where = str(source.path.resolve())
    args = (cut, budget, loaded.count, where, source.cwd(), source.model())
    if summarizer == "llm":
        from ctxtop.engine.compaction.llm import LLMFailure, llm_summary

        try:
            settings = llm or LLMSettings()
            return llm_summary(*args, settings=settings, cancel=cancel, masker=masker), "llm"
        except LLMFailure as failure:
            warnings.append(f"LLM summary failed ({failure}); used the structured summary instead")
    return structured_summary(*args, openings=summary_openings()), "structured"


def choose(loaded: Loaded, compacting: Compactable, keep_rounds: int, before: int | None) -> Cut:
    """The rounds summarised and kept; an error names the file (nothing to compact, a round
    that does not exist)."""
    try:
        return choose_cut(compacting.source.items(), keep_rounds, before)
    except CtxtopError as error:
        raise InputError(str(loaded.path), str(error)) from None


def preview_compact(
    loaded: Loaded,
    *,
    summarizer: str = "structured",
    keep_rounds: int = DEFAULT_KEEP_ROUNDS,
    before: int | None = None,
    budget: int | None = None,
    llm: LLMSettings | None = None,
    cancel: threading.Event | None = None,
    shown: ShownContext | None = None,
) -> Preview[CompactDetails]:
    """Summarise and build the compacted fork in memory, read back: nothing is written.

    ``cancel``: an event the caller (the dashboard) may set from another thread to stop
    waiting for the LLM summariser; the structured summary is used instead. ``shown``: the
    dashboard's gauge figure for the same bytes, see ``whole_context``."""
    if summarizer not in SUMMARIZERS:
        raise CtxtopError(f"unknown summarizer {summarizer!r}; use {' or '.join(SUMMARIZERS)}")
    compacting = compactable(loaded)
    source = compacting.source
    cut = choose(loaded, compacting, keep_rounds, before)
    if budget is None:
        budget = int(compacting.window * BUDGET_SHARE)
        if budget <= 0:  # a log that gives a window of a few tokens (or none)
            raise CtxtopError(
                f"{loaded.path}: the context window the log gives ({compacting.window:,} tokens)"
                " leaves no room for a summary"
            )
    if budget <= 0:
        raise CtxtopError(f"the summary budget must be a positive number of tokens, not {budget}")
    warnings: list[str] = []
    masker = SecretMasker()
    summary, used = summarise(compacting, cut, summarizer, budget, llm, warnings, cancel, masker)
    summary = masker.mask(summary)  # the summary is new text ctxtop writes: no secrets in it
    if loaded.state is not None:
        tokens_before = loaded.sections()[1]
    else:
        tokens_before = estimate(source.items(), compacting.count)
    fork = NewFork(source.writer, source.agent, source.cwd())
    message = handoff_message(summary, len(cut.kept_rounds), cut.kept_request is not None)
    # The agent's "before" is the whole context, as the gauge shows it.
    before = whole_context(loaded.state, tokens_before, 0, shown, loaded.ledger).before
    try:
        fork_data = source.render(cut, message, fork.session_id, before)
    except RecursionError:
        raise InputError(str(loaded.path), "a record is nested too deeply to rewrite") from None
    tokens_after, read = _tokens_after(loaded, compacting, fork.path, fork_data)
    refused = None
    if tokens_after >= tokens_before:
        refused = (
            f"nothing to compact: the compacted session would not be smaller "
            f"({tokens_before:,} -> {tokens_after:,} tokens); there is little to summarise yet"
        )
    details = CompactDetails(
        used,
        summarizer,
        summary,
        compacting.count(summary),
        budget,
        cut,
        round_table(cut, compacting.count),
        masker.count,
        refused,
    )
    saved = tokens_before - tokens_after
    context = whole_context(loaded.state, tokens_before, saved, shown, loaded.ledger)
    # The fork's context is this estimate until the agent's next request; the usage ctxtop
    # writes into it (what the agent reads on resume) adds up to it too.
    usage = None if read is None else usage_estimates(*read, context.after)
    return fork.preview(
        "compact",
        loaded,
        fork_data,
        (tokens_before, tokens_after),
        context,
        priced_rewrite(
            source.model(),
            tokens_after,
            max(saved, 0),
            loaded.state is not None and writes_for_an_hour(loaded.state),
        ),
        details,
        usage=usage,
        warnings=tuple(warnings),
    )


def _tokens_after(
    loaded: Loaded, compacting: Compactable, fork: Path, data: bytes
) -> tuple[int, tuple[SessionState, Ledger] | None]:
    """The fork's tokens, read back as the agent (and ctxtop) will see it, and what was read
    back (None: a format ctxtop compacts without reading it)."""
    if loaded.state is None:
        fork_source = type(compacting.source)(fork, data, None)
        return estimate(fork_source.items(), compacting.count), None
    read = read_back(loaded, fork, data)
    return sections(*read, loaded.factor())[1], read


def compact_session(
    path: str | Path,
    *,
    summarizer: str = "structured",
    keep_rounds: int = DEFAULT_KEEP_ROUNDS,
    before: int | None = None,
    budget: int | None = None,
    dry_run: bool = False,
    llm: LLMSettings | None = None,
    cancel: threading.Event | None = None,
    upto: int | None = None,
    shown: ShownContext | None = None,
) -> Outcome[CompactDetails]:
    """The whole transaction: load, preview, and unless ``dry_run`` write, even a compaction
    that is not smaller (the fork-format tests' small samples); ``ctxtop compact`` and the
    panel write through ``write_compact``, which refuses one. ``upto`` and ``shown``: the
    dashboard's sample (its bytes and its gauge figure)."""
    if summarizer not in SUMMARIZERS:
        raise CtxtopError(f"unknown summarizer {summarizer!r}; use {' or '.join(SUMMARIZERS)}")
    loaded = load(Path(path), COMPACTING, upto)
    preview = preview_compact(
        loaded,
        summarizer=summarizer,
        keep_rounds=keep_rounds,
        before=before,
        budget=budget,
        llm=llm,
        cancel=cancel,
        shown=shown,
    )
    return unwritten(preview, dry_run=True) if dry_run else commit(preview)


def write_compact(
    preview: Preview[CompactDetails], *, logged: bool = True
) -> Outcome[CompactDetails]:
    """Write a previewed compaction; one that is not smaller is refused, naming the file.
    ``logged``: as ``commit``'s."""
    refused = preview.details.refused
    if refused is not None:
        raise InputError(str(preview.loaded.path), refused)
    return commit(preview, logged=logged)
