"""``compact_session``: choose what to summarise, summarise it, and write the fork the agent
resumes: what ``ctxtop compact --json`` prints.

The agent's file is only read (its bytes once, then its hash again after writing); the fork goes
to a new path, atomically, and is recorded in the action log so ``ctxtop undo`` removes it.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.agents import AGENTS
from engine.agents.codex.writer import is_codex
from engine.compaction.cut_table import item_tokens, round_table, turn_requests
from engine.compaction.handoff import handoff_message
from engine.compaction.items import Cut, Item, choose_cut
from engine.compaction.source import Source
from engine.compaction.structured import structured_summary
from engine.config import LLMSettings
from engine.editing import actions
from engine.editing.atomic import write_new
from engine.editing.preview import ShownContext, priced_rewrite, sections, whole_context
from engine.errors import CtxtopError, InputError
from engine.forks.edit import (
    changed_since_read,
    read_back,
    read_session_bytes,
    refuse_unsupported,
    state_of,
)
from engine.safety.secrets import SecretMasker
from engine.sessions.model import SessionState
from engine.sessions.report import DEFAULT_ENCODING, encoding_for, model_info
from engine.tokens import get_encoding

SUMMARIZERS = ("structured", "llm")
# Rounds kept verbatim by default: the working set of a task in progress (the last few tool
# calls and their results) survives, as Anthropic's clear_tool_uses keeps 3 tool uses.
DEFAULT_KEEP_ROUNDS = 3
BUDGET_SHARE = 0.10  # the summary's default budget: this share of the model's window

Count = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Prepared:
    """A summary made earlier for the same bytes (the dashboard's preview): written as it was
    shown, without asking the summariser again."""

    summary: str
    summarizer: str
    source_sha256: str
    summarised_rounds: int
    warnings: tuple[str, ...] = ()
    secrets_masked: int = 0

    @classmethod
    def from_outcome(cls, outcome: dict[str, Any]) -> Prepared:
        """The summary of a dry run's outcome (its warnings about the summariser kept)."""
        said = tuple(w for w in outcome["warnings"] if w.startswith("LLM summary failed"))
        return cls(
            outcome["summary"],
            outcome["summarizer"],
            outcome["source_sha256"],
            outcome["summarised_rounds"],
            said,
            outcome["secrets_masked"],
        )


@dataclass(slots=True)
class Loaded:
    source: Source
    state: SessionState | None
    count: Count
    window: int


def _load(path: Path, data: bytes) -> Loaded:
    state: SessionState | None
    try:
        state = state_of(path, data)
        agent = state.agent
    except InputError:
        if not is_codex(data):
            raise
        state, agent = None, "codex"  # until ctxtop reads Codex sessions itself
    plugin = AGENTS.get(agent)
    if plugin is None or plugin.source is None:
        raise InputError(str(path), f"compacting {agent} sessions is not supported yet")
    source_class = plugin.source
    source = source_class(path, data, state)
    model = source.model()
    if state is not None:
        encoding = encoding_for(state)
    else:
        encoding = get_encoding(model_info(model).encoding or DEFAULT_ENCODING)
    window = (state.context_window if state else None) or model_info(model).context_window
    return Loaded(source, state, encoding.count, window)


def estimate(items: list[Item], count: Count) -> int:
    """Tokenizer estimate of items (text, call inputs and results): for a format ctxtop does not
    read yet."""
    return sum(item_tokens(item, count) for item in items)


def _tokens(loaded: Loaded, source: Source, state: SessionState | None) -> int:
    if state is not None:
        return sections(state)[1]
    return estimate(source.items(), loaded.count)


def _read_fork(loaded: Loaded, data: bytes, session_id: str) -> tuple[Source, SessionState | None]:
    """The fork read back as the agent (and ctxtop) will see it."""
    writer = loaded.source.writer
    with tempfile.TemporaryDirectory(prefix="ctxtop-compact-") as scratch:
        name = writer.fork_name(session_id)
        path = write_new(Path(scratch), name, data, names=writer.fork_dir() / name)
        state = read_back(loaded.source.path, path) if loaded.state is not None else None
        return type(loaded.source)(path, data, state), state


def _cache_figures(model: str | None, tokens_after: int, saved: int) -> dict[str, Any]:
    """The whole compacted prompt is written to the cache again once; each later request reads
    ``saved`` fewer tokens. Priced with the model registry."""
    return priced_rewrite(model, tokens_after, max(saved, 0)).figures()


def summarise(
    loaded: Loaded,
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
        from engine.compaction.llm import LLMFailure, llm_summary

        try:
            settings = llm or LLMSettings()
            return llm_summary(*args, settings=settings, cancel=cancel, masker=masker), "llm"
        except LLMFailure as failure:
            warnings.append(f"LLM summary failed ({failure}); used the structured summary instead")
    return structured_summary(*args), "structured"


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
    prepared: Prepared | None = None,
    upto: int | None = None,
    shown: ShownContext | None = None,
) -> dict[str, Any]:
    """``cancel``: an event the caller (the dashboard) may set from another thread to stop
    waiting for the LLM summariser; the structured summary is used instead. ``prepared``: the
    summary to write (used only if the file is still the bytes it was made from). ``upto`` and
    ``shown``: the dashboard's sample (its bytes and its gauge figure), see ``whole_context``."""
    if summarizer not in SUMMARIZERS:
        raise CtxtopError(f"unknown summarizer {summarizer!r}; use {' or '.join(SUMMARIZERS)}")
    source_path = Path(path)
    refuse_unsupported(source_path, "compacting")
    data = read_session_bytes(source_path, upto)
    source_hash = hashlib.sha256(data).hexdigest()
    loaded = _load(source_path, data)
    source = loaded.source
    try:
        cut = choose_cut(source.items(), keep_rounds, before)
    except CtxtopError as error:  # nothing to compact, or a round that does not exist: say where
        raise InputError(str(source_path), str(error)) from None
    budget = budget if budget is not None else int(loaded.window * BUDGET_SHARE)
    if budget <= 0:
        raise CtxtopError(f"the summary budget must be a positive number of tokens, not {budget}")
    warnings: list[str] = []
    masker = SecretMasker()
    if prepared is not None and (prepared.source_sha256, prepared.summarised_rounds) == (
        source_hash,
        len(cut.summarised_rounds),
    ):
        summary, used = prepared.summary, prepared.summarizer
        warnings.extend(prepared.warnings)
        masker.count = prepared.secrets_masked
    else:
        if prepared is not None:
            warnings.append("the session or the cut changed since the preview: summarised again")
        summary, used = summarise(loaded, cut, summarizer, budget, llm, warnings, cancel, masker)
    summary = masker.mask(summary)  # the summary is new text ctxtop writes: no secrets in it
    tokens_before = _tokens(loaded, source, loaded.state)
    session_id = str(uuid.uuid4())
    message = handoff_message(summary, len(cut.kept_rounds), cut.kept_request is not None)
    try:
        fork_data = source.render(cut, message, session_id, tokens_before)
    except RecursionError:
        raise InputError(str(source_path), "a record is nested too deeply to rewrite") from None
    fork_source, fork_state = _read_fork(loaded, fork_data, session_id)
    tokens_after = _tokens(loaded, fork_source, fork_state)
    if tokens_after >= tokens_before:
        warnings.append(
            f"the compacted session is not smaller ({tokens_before} -> {tokens_after} tokens): "
            "there is little to summarise yet"
        )
    writer = source.writer
    fork: Path | None = None
    if not dry_run:
        fork = write_new(writer.fork_dir(), writer.fork_name(session_id), fork_data)
        warnings.extend(changed_since_read(source_path, source_hash))
    resume = writer.resume_command(session_id, source.cwd()) if fork else None
    outcome: dict[str, Any] = {
        "agent": source.agent,
        "source": str(source_path),
        "source_sha256": source_hash,
        "fork": str(fork) if fork else None,
        "session_id": session_id if fork else None,
        "resume_command": resume,
        "dry_run": dry_run,
        "summarizer": used,
        "summarizer_requested": summarizer,
        "summary": summary,
        "summary_tokens": loaded.count(summary),
        "budget": budget,
        "tokens_before": tokens_before,
        "tokens_after": tokens_after,
        **whole_context(loaded.state, tokens_before, tokens_before - tokens_after, shown),
        "rounds": cut.rounds,
        "turns": cut.turn_count,
        "summarised_rounds": len(cut.summarised_rounds),
        "kept_rounds": len(cut.kept_rounds),
        "kept_request": cut.kept_request is not None,
        "overflowed_round": cut.overflowed_round,
        "round_table": round_table(cut, loaded.count),
        "requests": turn_requests(cut),
        "previous_summary": cut.previous_summary is not None,
        "secrets_masked": masker.count,
        **_cache_figures(source.model(), tokens_after, tokens_before - tokens_after),
        "warnings": warnings,
    }
    if fork is not None:
        entry = actions.record(
            "compact",
            [fork],
            source=str(source_path),
            source_sha256=source_hash,
            fork=str(fork),
            fork_sha256=hashlib.sha256(fork_data).hexdigest(),
            session_id=session_id,
            agent=source.agent,
            summarizer=used,
            kept_rounds=len(cut.kept_rounds),
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            resume_command=resume,
        )
        outcome["action_id"] = entry["id"]
    return outcome
