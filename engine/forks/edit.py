"""``edit_session``: plan an edit, preview it, and write the fork the agent can resume.

The agent's file is only read (its bytes once, then its hash again after writing, to prove it
was left alone); the fork goes to a new path, atomically; the action is logged.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.agents import AGENTS
from engine.agents.session_reader import agent_of, read_session
from engine.analysis.relevance import RelevanceIndex
from engine.analysis.sections import last_user_index
from engine.editing import actions
from engine.editing.atomic import write_new
from engine.editing.explain import nothing_to_clear
from engine.editing.offload import Offloader, default_directory
from engine.editing.policy import Plan, Policy, make_plan
from engine.editing.preview import (
    ShownContext,
    cache_cost,
    diff_lines,
    section_table,
    sections,
    whole_context,
)
from engine.editing.writer import Writer
from engine.errors import CtxtopError, InputError
from engine.files import open_regular
from engine.sessions.ledger import Ledger
from engine.sessions.model import SessionState
from engine.sessions.report import encoding_for, model_info


def sha256(path: Path) -> str:
    """The file's hash, read through a read-only descriptor (a regular file only: a named pipe
    put under the name cannot make ctxtop wait); ``OSError`` if it cannot be read."""
    digest = hashlib.sha256()
    with open(open_regular(path), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def changed_since_read(source: Path, source_hash: str) -> list[str]:
    """A warning if the agent's file no longer hashes to ``source_hash``: it appended meanwhile
    (ctxtop never writes to it), so the fork lacks the newest lines. The fork is kept (and
    logged) so that undo can remove it, also if the file can no longer be read."""
    try:
        if sha256(source) == source_hash:
            return []
    except OSError as error:
        return [
            f"{source}: cannot read it again ({error.strerror or error}): "
            "the fork holds the session as first read"
        ]
    return [
        f"{source} changed while ctxtop read it (the agent is still writing?): "
        "the fork holds the session as first read"
    ]


def read_bytes(path: Path) -> bytes:
    try:
        with open(open_regular(path), "rb") as handle:
            return handle.read()
    except OSError as error:
        raise InputError(str(path), f"cannot read ({error.strerror})") from None


def whole_lines(data: bytes) -> bytes:
    """``data`` without a last line the agent is still writing (no newline yet, not JSON on its
    own), so a fork never ends in half a record; a one-document file is left as it is."""
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    if not cut or not tail.strip():
        return data
    for candidate in (tail, data):
        try:
            json.loads(candidate)
            return data
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue
    return data[:cut]


def refuse_unsupported(source: Path, doing: str) -> None:
    """One line naming the file when its agent, told from the first lines, cannot be
    ``doing`` ("editing" or "compacting") by its capability flags: said before the whole session
    is read (a multi-gigabyte log of such an agent is not read for nothing)."""
    agent = agent_of(source)
    if agent is not None and not (agent.can_edit if doing == "editing" else agent.can_compact):
        raise InputError(str(source), f"{doing} {agent.name} sessions is not supported yet")


def read_session_bytes(path: Path, upto: int | None = None) -> bytes:
    """The session's bytes as of now, whole lines only (the agent may be appending); ``upto``:
    only the first that many bytes (the sample a paused dashboard shows)."""
    data = read_bytes(path)
    return whole_lines(data if upto is None else data[:upto])


def state_of(source: Path, data: bytes) -> SessionState:
    """The session as read from ``data`` (the bytes the fork is made from, even if the agent
    appends meanwhile), through a private copy; errors name the agent's file."""
    with tempfile.TemporaryDirectory(prefix="ctxtop-read-") as scratch:
        suffix = source.suffix if source.suffix in (".json", ".jsonl") else ""
        try:
            copy = write_new(Path(scratch), f"session{suffix}", data)
        except CtxtopError as error:  # a full disk: name the session, not the scratch copy
            reason = str(error).split(" (", 1)[-1].split(")", 1)[0]
            raise InputError(
                str(source),
                f"ctxtop's private copy of it could not be written ({reason}); nothing was written",
            ) from None
        try:
            return read_session(copy)
        except InputError as error:
            raise InputError(str(source), str(error).split(": ", 1)[-1]) from None


def read_back(source: Path, path: Path) -> SessionState:
    """The fork at a scratch ``path`` read as the agent will; an error names the agent's file
    (the scratch file is gone by the time the user reads the message)."""
    try:
        return read_session(path)
    except InputError as error:
        reason = str(error).split(": ", 1)[-1]
        raise InputError(str(source), f"the edit would not read back ({reason})") from None


def _read_back(writer: Writer, data: bytes, session_id: str) -> SessionState:
    name = writer.fork_name(session_id)
    with tempfile.TemporaryDirectory(prefix="ctxtop-preview-") as scratch:
        # A full disk fails here first: the error names the fork, not the scratch copy.
        copy = write_new(Path(scratch), name, data, names=writer.fork_dir() / name)
        return read_back(writer.path, copy)


def relevance_scores(state: SessionState) -> dict[str, float]:
    """TF-IDF relevance of each old tool result to the recent conversation (engine.analysis)."""
    context = state.context
    # Only the scores are used here: the results' sizes are not counted.
    ranked = RelevanceIndex().rank(state, context, last_user_index(context), lambda _: 0)
    return {row.tool_call_id: row.score for row in ranked}


def edit_session(
    path: str | Path,
    policy: Policy,
    *,
    dry_run: bool = False,
    relevance: dict[str, float] | None = None,
    results_dir: Path | None = None,
    upto: int | None = None,
    shown: ShownContext | None = None,
    on_plan: Callable[[dict[str, str], dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Plan, preview and (unless ``dry_run``) write the fork: what ``ctxtop edit --json`` prints.

    With ``policy.offload``, large results go to files in ``results_dir`` (default: the data
    dir's ``results``), in a directory named after the fork's session id. ``upto`` and
    ``shown``: the dashboard's sample (its bytes and its gauge figure), see ``whole_context``.
    ``on_plan``: given the replacement results and inputs by call id (a live plan is made of
    them: engine/live/apply_plan.py)."""
    source = Path(path)
    refuse_unsupported(source, "editing")
    data = read_session_bytes(source, upto)
    source_hash = hashlib.sha256(data).hexdigest()
    state = state_of(source, data)
    agent = AGENTS.get(state.agent)
    if agent is None or agent.writer is None:
        raise InputError(str(source), f"editing {state.agent} sessions is not supported yet")
    writer_class = agent.writer
    writer = writer_class(source, data)
    encoding = encoding_for(state)
    scan = writer.scan()
    # Only results the model still sees count (not those before a compaction).
    in_context = {
        block.tool_call_id
        for message in state.context
        for block in message.blocks
        if block.kind == "tool_result"
    }
    scan.uses = [use for use in scan.uses if use.result is None or use.call_id in in_context]
    for order, use in enumerate(scan.uses):
        use.order = order
    session_id = str(uuid.uuid4())
    offloader = None
    if policy.offload:
        offloader = Offloader((results_dir or default_directory()) / session_id)
    if policy.order == "relevance" and relevance is None:
        relevance = relevance_scores(state)
    prompt_budget = _prompt_budget(state.model)
    plan: Plan = make_plan(
        scan, policy, encoding.count, relevance, prompt_budget=prompt_budget, offloader=offloader
    )

    count_once = functools.cache(encoding.count)  # relaxed plans count the same results again

    def plan_for(relaxed: Policy) -> Plan:  # a relaxed policy, planned on the same scan
        return make_plan(scan, relaxed, count_once, relevance, prompt_budget=prompt_budget)

    results = {c.use.call_id: c.new_result for c in plan.changes}
    inputs = {c.use.call_id: c.new_input for c in plan.changes if c.input_changed}
    if on_plan is not None:
        on_plan(results, inputs)
    try:
        fork_data = writer.render(results, inputs, session_id)
    except RecursionError:
        raise InputError(str(source), "a record is nested too deeply to rewrite") from None
    after = _read_back(writer, fork_data, session_id)
    ledger, after_ledger = Ledger(), Ledger()  # counts of this edit only: nothing kept
    before_sections, tokens_before = sections(state, ledger)
    after_sections, tokens_after = sections(after, after_ledger)
    cost = cache_cost(after, set(results), tokens_before - tokens_after, set(inputs), after_ledger)
    changed = [
        {
            "tool_call_id": c.use.call_id,
            "tool": c.use.name,
            "cycle": c.use.cycle,
            "tokens_before": c.tokens_before,
            "tokens_after": c.tokens_after,
            "input_cleared": c.input_changed,
            "diff": diff_lines(c.use.result or "", c.new_result),
        }
        for c in plan.changes
    ]
    fork: Path | None = None
    warnings: list[str] = []
    offloaded: list[Path] = []
    if not dry_run and plan.changes:
        # The files first: a fork never points to a file that is not there.
        offloaded = offloader.write() if offloader is not None else []
        try:
            fork = write_new(writer.fork_dir(), writer.fork_name(session_id), fork_data)
        except CtxtopError:
            _remove_offloaded([str(path) for path in offloaded])  # nothing would point to them
            raise
        warnings.extend(changed_since_read(source, source_hash))
    outcome: dict[str, Any] = {
        "agent": state.agent,
        "source": str(source),
        "source_sha256": source_hash,
        "fork": str(fork) if fork else None,
        "session_id": session_id if fork else None,
        "resume_command": writer.resume_command(session_id, state.cwd) if fork else None,
        "dry_run": dry_run,
        "policy": policy.as_dict(),
        "tokens_before": tokens_before,
        "tokens_after": tokens_after,
        **whole_context(state, tokens_before, tokens_before - tokens_after, shown, ledger),
        "sections": section_table(before_sections, after_sections),
        "changed": changed,
        "cleared_tokens": plan.saved,
        "below_minimum": plan.skipped_below_minimum if not plan.changes else 0,
        "nothing_to_clear": nothing_to_clear(scan, policy, plan, plan_for),
        **cost.figures(),
        "tool_uses": len(scan.uses),
        "cycles": scan.cycles,
        "offloaded": [str(path) for path in offloaded],
        "secrets_masked": offloader.masker.count if offloader is not None else 0,
        "warnings": warnings,
    }
    if fork is not None:
        entry = actions.record(
            "edit",
            [fork, *offloaded],
            source=str(source),
            source_sha256=source_hash,
            fork=str(fork),
            fork_sha256=hashlib.sha256(fork_data).hexdigest(),
            session_id=session_id,
            agent=state.agent,
            policy=policy.as_dict(),
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            changed=[{k: v for k, v in c.items() if k != "diff"} for c in changed],
            resume_command=outcome["resume_command"],
            offloaded=outcome["offloaded"],
        )
        outcome["action_id"] = entry["id"]
    return outcome


def _prompt_budget(model: str | None) -> int:
    """What a request may send: the context window less the model's output reserve."""
    info = model_info(model)
    return max(info.context_window - info.max_output, info.context_window // 2)


def _remove_offloaded(paths: list[str]) -> list[str]:
    """Remove the large-result files an edit wrote (and their directory once empty)."""
    removed: list[str] = []
    for name in paths:
        path = Path(name)
        if path.is_file():
            path.unlink()
            removed.append(name)
    for directory in {Path(name).parent for name in paths}:
        with contextlib.suppress(OSError):  # not empty, or already gone
            directory.rmdir()
    return removed
