"""Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

Every line is ``{timestamp, [ordinal,] type, payload}`` (agent-log-formats.md §2.2). What is used:

- ``session_meta`` (id, ``cli_version``, cwd, ``base_instructions``), ``turn_context`` (model);
- ``response_item``: exactly what is sent to the model (§2.3), so it is the context;
- usage, counted once per API response (§2.4): 0.169's ``token_usage_record`` (keyed by
  ``response_id``) and ``event_msg/token_count``, which Codex writes twice with identical
  totals. A response is a new cumulative ``total_token_usage`` (``thread_token_usage`` of a
  record is the same figure, so a record and its token_count are one response);
- ``compacted``: the context becomes ``replacement_history`` (§2.5). The token_count Codex
  writes right after it (no new totals, ``last_token_usage`` = only ``total_tokens``) is its
  own estimate of the new history; it can be far off (940,499 after 209,950 in a 258,400
  window, Codex 0.104), so it stands only while no request followed and only within the
  window. The compaction's "after" is then the prompt of the first request after it.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.codex.entries import (
    ROLLOUT_TYPES,
    BadShape,
    CodexEntry,
    Compacted,
    Event,
    Item,
    Meta,
    NotObject,
    TurnContext,
    UnknownType,
    Unreadable,
    Usages,
    WorldState,
    entry,
)
from ctxtop.engine.files import open_regular, read_head
from ctxtop.engine.sessions.adapter import (
    CERTAIN,
    LIKELY,
    NOT_MINE,
    Adapter,
)
from ctxtop.engine.sessions.fork_mark import CTXTOP_TRIGGER
from ctxtop.engine.sessions.model import Block, Compaction, Message, SessionState, Usage

# Items the model produced (besides its messages): they carry the key of the response that
# follows them.
_MODEL_ITEMS = {"reasoning", "call"}
# Codex's auto-compact rule (openai/codex protocol/src/openai_models.rs, rust-v0.154.0,
# ``auto_compact_token_limit``): 90 % of the model's resolved context window; a configured
# ``model_auto_compact_token_limit`` can only lower it. The window Codex logs
# (``model_context_window``) is the *effective* one, resolved × ``effective_context_window_percent``
# (95 by default; observed with 0.169: gpt-5's 272000 is logged as 258400).
AUTOCOMPACT_PERCENT = 90
EFFECTIVE_WINDOW_PERCENT = 95
# Bulky lines nothing here reads (UI items repeating tool outputs, world state snapshots), as
# Codex writes them (compact JSON, "type" after timestamp and ordinal): not decoded at all.
_WORLD_STATE = b'"type":"world_state"'
_ITEM_COMPLETED = b'"type":"event_msg","payload":{"type":"item_completed"'
_SETTINGS = b'"type":"event_msg","payload":{"type":"thread_settings_applied"'
_IGNORED_MARKERS = (
    (_ITEM_COMPLETED, "event_msg:item_completed"),
    (_WORLD_STATE, "world_state"),
    (_SETTINGS, "event_msg:thread_settings_applied"),
)
_MARKER_WINDOW = 160
# The tool that starts a sub-agent thread (multi_agent_v1 namespace). That thread writes its own
# rollout; its session_meta names ours in ``source.subagent.thread_spawn.parent_thread_id``.
SPAWN_TOOL = "spawn_agent"
_HEAD_BYTES = 64 * 1024


def codex_home_of(path: Path) -> Path | None:
    """The ``CODEX_HOME`` a rollout lives in (the parent of its ``sessions`` directory)."""
    for parent in path.parents:
        if parent.name in ("sessions", "archived_sessions"):
            return parent.parent
    return None


def configured_autocompact_limit(codex_home: Path | None) -> int | None:
    """``model_auto_compact_token_limit`` from ``config.toml`` (profiles and ``-c`` overrides
    are not in any file ctxtop can see; the rollout does not log the value)."""
    if codex_home is None:
        return None
    try:
        with open(open_regular(codex_home / "config.toml"), "rb") as handle:
            config = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    value = config.get("model_auto_compact_token_limit")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def codex_autocompact_at(window: int, configured: int | None, *, effective: bool = True) -> int:
    """Codex's threshold (see ``AUTOCOMPACT_PERCENT``) from the window it logs (``effective``)
    or from the model's own window."""
    resolved = window * 100 // EFFECTIVE_WINDOW_PERCENT if effective else window
    limit = resolved * AUTOCOMPACT_PERCENT // 100
    return min(limit, configured) if configured is not None else limit


class _Thread:
    """One Codex thread (the session, or a sub-agent's rollout) fed into one state."""

    def __init__(self, state: SessionState, parent: _Thread | None = None) -> None:
        self.state = state
        self.parent = parent  # a sub-agent's parent thread, whose replayed usage is not its own
        self.instructions: Message | None = None
        self.unclaimed: list[Message] = []  # model items not yet given a response key
        self.by_total: dict[tuple[int, ...], str] = {}  # cumulative usage → response key
        self.last_total: tuple[int, ...] | None = None
        self.has_records = False  # 0.169 token_usage_record seen: token_count only confirms
        self.since_compaction: str | None = None  # newest response since the last compaction
        self.awaiting_after: Compaction | None = None  # a compaction no request followed yet
        self.turn_activity = False  # the user's message in the current turn
        self.spawned: dict[str, str] = {}  # sub-agent thread id → the spawn_agent call's id

    # -- records ---------------------------------------------------------------------------

    def feed(self, entry: CodexEntry, line: int, path: str | None = None) -> None:
        state = self.state
        if type(entry) is Item:
            state.touch(entry.timestamp)
            self._item(entry, f"L{line}", line, entry.timestamp, path)
        elif type(entry) is Event:
            state.touch(entry.timestamp)
            self._event(entry, line, path)
        elif type(entry) is Usages:
            state.touch(entry.timestamp)
            self._usage_record(entry, line, path)
        elif type(entry) is Meta:
            state.touch(entry.timestamp)
            self._meta(entry)
        elif type(entry) is TurnContext:
            state.touch(entry.timestamp)
            if entry.model is not None:
                state.model = entry.model
        elif type(entry) is Compacted:
            state.touch(entry.timestamp)
            self._compacted(entry, line)
        elif type(entry) is WorldState:
            state.touch(entry.timestamp)
            state.ignore_type(entry.kind)
        elif type(entry) is UnknownType:
            state.unknown_type(entry.name)
        elif type(entry) is BadShape:
            state.skip(line, entry.reason, path)
        elif type(entry) is Unreadable:
            state.touch(entry.timestamp)
            raise entry.error
        else:
            state.skip(line, "not a JSON object", path)

    def _meta(self, entry: Meta) -> None:
        state = self.state
        if state.session_id is None and entry.session_id is not None:
            state.session_id = entry.session_id
        if entry.cli_version is not None:
            state.agent_version = entry.cli_version
        if state.cwd is None and entry.cwd is not None:
            state.cwd = entry.cwd
        if entry.instructions is not None and self.instructions is None:
            # The system prompt is logged (newer builds): it is part of every request.
            block = Block("text", entry.instructions)
            self.instructions = Message("instructions", "system", [block], kind="instructions")
            self.state.context.insert(0, self.instructions)

    def _event(self, entry: Event, line: int, path: str | None) -> None:
        kind = entry.event
        if kind == "task_started":
            self.turn_activity = False
            if entry.window:
                self.state.context_window = entry.window
            return
        if kind != "token_count":
            # Events for the user's screen, mirroring the response items (§2.2).
            self.state.ignore_type(f"event_msg:{kind}" if kind is not None else "event_msg")
            return
        if not entry.has_info:
            return  # rate limits only
        if not entry.info_object:
            self.state.skip(line, "token_count with an info that is not an object", path)
            return
        if entry.window is not None:
            self.state.context_window = entry.window
        total = entry.total
        last = entry.last
        if total is None or last is None:
            self.state.skip(line, "token_count without total and last usage", path)
            return
        if total == self.last_total:
            self._post_compaction(entry.estimate)
            return  # Codex writes each token_count twice
        if self._response_key(total) is not None or self.has_records or self._replayed(total):
            return  # counted from its token_usage_record (which comes first in 0.169)
        if not entry.logs_tokens:
            return  # an empty usage: no request
        key = f"total-{total[-1]}"
        self.by_total[total] = key
        self._respond(key, last, line, entry.timestamp)

    def _post_compaction(self, estimate: int | None) -> None:
        """After a compaction Codex logs its estimate of the new history as the last usage:
        taken (labelled an estimate) until a request says more, unless it exceeds the window."""
        compaction = self.state.pending_compaction
        if compaction is None or compaction.post_tokens is not None:
            return
        window = self.state.context_window
        if estimate and (window is None or estimate <= window):
            compaction.post_tokens = estimate
            compaction.post_source = "estimate"

    def _response_key(self, total: tuple[int, ...]) -> str | None:
        """The key of the response this running total belongs to (None if new)."""
        self.last_total = total
        return self.by_total.get(total)

    def _replayed(self, total: tuple[int, ...]) -> bool:
        """A sub-agent rollout starts by replaying its parent's token counts (§2.4)."""
        return self.parent is not None and total in self.parent.by_total

    def _usage_record(self, entry: Usages, line: int, path: str | None) -> None:
        usage = entry.usage
        response_id = entry.response_id
        if usage is None or response_id is None:
            self.state.skip(line, "token_usage_record without a response_id and usage", path)
            return
        if self.parent is not None and response_id in self.parent.state.responses:
            return  # the parent's response, replayed
        if not entry.logs_tokens:
            return  # an empty usage: no request
        self.has_records = True
        key = response_id
        total = entry.total
        if total is not None:
            known = self._response_key(total)
            key = known or response_id
            self.by_total[total] = key
        self._respond(key, usage, line, entry.timestamp)

    def _respond(self, key: str, usage: Usage, line: int, timestamp: str | None) -> None:
        state = self.state
        for message in self.unclaimed:
            message.response_key = key
        if not self.unclaimed and key not in state.responses and state.context:
            state.context[-1].response_key = key  # no item logged for it: anchor at the end
        self.unclaimed.clear()
        state.record_response(key, usage, model=state.model, line=line, timestamp=timestamp)
        self.since_compaction = key
        if self.awaiting_after is not None:
            self.awaiting_after.settle(usage.input_tokens_total)
            self.awaiting_after = None

    # -- context ---------------------------------------------------------------------------

    def _item(
        self,
        entry: Item,
        message_id: str,
        line: int,
        timestamp: str | None,
        path: str | None,
        *,
        live: bool = True,
    ) -> Message | None:
        """One response item → a context message (``live``: written now, not replayed from a
        compaction's history, so it may be claimed by the next response)."""
        kind = entry.item
        if kind == "unhashable":
            raise TypeError("a response item whose type is a list or an object")
        state = self.state
        message: Message | None = None
        from_model = kind in _MODEL_ITEMS
        if kind == "message":
            role = entry.role
            from_model = role == "assistant"
            label = "message"
            if role in ("developer", "system") or (role == "user" and entry.instructions):
                label = "instructions"
            elif role == "user" and live:
                self.turn_activity = True
            message = Message(message_id, role, list(entry.blocks), line, timestamp, kind=label)
        elif kind == "reasoning":
            block = Block("thinking", entry.text)
            message = Message(message_id, "assistant", [block], line, timestamp)
        elif kind == "call":
            message = self._call(entry, message_id, line, timestamp, path)
        elif kind == "output":
            call_id = entry.call_id
            if call_id is None:
                state.skip(line, f"{entry.type} without a call_id", path)
                return None
            text, failed = entry.text, entry.failed
            state.record_tool_result(call_id, text, is_error=failed)
            if state.tools[call_id].name == SPAWN_TOOL:
                self._note_spawn(call_id, text)
            block = Block("tool_result", text, call_id, is_error=failed)
            message = Message(message_id, "tool", [block], line, timestamp)
        elif kind == "compaction":
            block = Block("other", raw=entry.payload)
            message = Message(message_id, "assistant", [block], line)
        elif kind == "server_call":
            message = self._server_call(entry, message_id, line, timestamp)
            from_model = True
        if message is None:
            if live and kind == "unsent":
                state.ignore_type(f"response_item:{entry.type}")
            elif live and kind == "other":
                name = entry.type
                state.unknown_type(f"response_item:{name}" if name is not None else None)
            return None  # ghost snapshots and item types not sent to the model
        if live:
            state.context.append(message)
            if from_model:
                self.unclaimed.append(message)
        return message

    def _call(
        self, entry: Item, message_id: str, line: int, timestamp: str | None, path: str | None
    ) -> Message | None:
        call_id = entry.call_id
        if call_id is None:
            self.state.skip(line, f"{entry.type} without a call_id", path)
            return None
        name, text, raw = entry.name, entry.input_text, entry.raw_input
        self.state.record_tool_call(call_id, name, line=line, input_text=text, raw_input=raw)
        block = Block("tool_use", text, call_id, name, raw=raw)
        return Message(message_id, "assistant", [block], line, timestamp)

    def _server_call(
        self, entry: Item, message_id: str, line: int, timestamp: str | None
    ) -> Message:
        """A tool the API ran itself (``web_search_call``: ``{status, action: {type, query}}``,
        agent-log-formats.md §2.3): a call under its own name, its result not in the log."""
        call_id = entry.call_id if entry.call_id is not None else message_id
        name, raw = entry.name, entry.raw_input
        self.state.record_tool_call(call_id, name, line=line, raw_input=raw)
        block = Block("tool_use", "", call_id, name, raw=raw)
        return Message(message_id, "assistant", [block], line, timestamp)

    def _note_spawn(self, call_id: str, output: str) -> None:
        """``spawn_agent`` answers ``{"agent_id": <thread id>, "nickname": …}`` [OBS 0.169]."""
        try:
            answer = json.loads(output)
        except ValueError:
            return
        if isinstance(answer, dict) and isinstance(answer.get("agent_id"), str):
            self.spawned[answer["agent_id"]] = call_id

    def _compacted(self, entry: Compacted, line: int) -> None:
        """``entry.promised``: the "after" of a compaction ctxtop wrote into its fork (None:
        Codex's)."""
        state = self.state
        timestamp = entry.timestamp
        if entry.history is not None:
            messages = [
                message
                for index, item in enumerate(entry.history)
                if item is not None
                and (
                    message := self._item(
                        item, f"L{line}.{index}", line, timestamp, None, live=False
                    )
                )
                is not None
            ]
        else:
            # Older builds log only the summary; Codex rebuilds the history as the initial
            # context, the user's messages and the summary (agent-log-formats.md §2.5, [INF]).
            kept = [
                m
                for m in state.context
                if m is not self.instructions and m.kind in ("instructions", "message")
                if m.role in ("user", "developer", "system")
            ]
            note = Message(f"L{line}", "user", [Block("text", entry.summary)], line, timestamp)
            messages = [*kept, note]
        pre = state.responses.get(self.since_compaction) if self.since_compaction else None
        # Codex does not log what started it; one in a turn that has the user's
        # message is Codex's own (a manual /compact turn carries no user message).
        trigger = "auto" if self.turn_activity else "unknown"
        promised = entry.promised
        compaction = Compaction(
            trigger=trigger if promised is None else CTXTOP_TRIGGER,
            # The summarising request's prompt is the history it compacted.
            pre_tokens=pre.usage.input_tokens_total if pre is not None else None,
            line=line,
            timestamp=timestamp,
        )
        state.keep_context()
        state.record_compaction(compaction)
        if promised is None:
            self.awaiting_after = compaction
        else:  # a past event's figure is fixed: what ctxtop promised, not the next request's
            compaction.post_tokens = promised
            compaction.post_source = "ctxtop"
        state.context[:] = [self.instructions, *messages] if self.instructions else messages
        self.unclaimed.clear()
        self.since_compaction = None


def _parent_thread(head: bytes) -> str | None:
    """A sub-agent rollout's parent thread id, from its ``session_meta`` line."""
    first = head.split(b"\n", 1)[0]
    try:
        record = json.loads(first)
    except (ValueError, UnicodeDecodeError):
        return None
    found = entry(record, 1)
    return found.parent_thread if type(found) is Meta else None


# ``source`` comes before the long ``base_instructions`` in session_meta [OBS 0.169].
_SOURCE_WINDOW = 4096
_SPAWNED_MARKER = b'"source":{"subagent":{"thread_spawn"'


class _SpawnedRollouts:
    """Whether each rollout is a spawned thread's, remembered for the rollouts the last
    discovery found (a first line never changes once written; a rollout gone is forgotten, so
    another written at its path is read again)."""

    def __init__(self) -> None:
        self._known: dict[Path, bool] = {}

    def __call__(self, path: Path) -> bool:
        known = self._known.get(path)
        if known is None:
            try:
                head = read_head(path, _SOURCE_WINDOW)
            except OSError:
                return False
            known = _SPAWNED_MARKER in head.split(b"\n", 1)[0]
            if b"\n" in head or len(head) == _SOURCE_WINDOW:
                self._known[path] = known
        return known

    def sessions(self, rollouts: Iterable[Path]) -> Iterator[Path]:
        """``rollouts`` but those of spawned threads; remembers only these rollouts."""
        found = set()
        for path in rollouts:
            found.add(path)
            if not self(path):
                yield path
        self._known = {path: known for path, known in self._known.items() if path in found}


_is_spawned = _SpawnedRollouts()


class CodexAdapter(Adapter):
    agent = "codex"
    label = "Codex CLI"
    profile = "codex"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._main = _Thread(self.state)
        self._threads: dict[Path, _Thread] = {}
        self._companions: list[Path] = []
        self._parent_of: dict[Path, str | None] = {}

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
                continue
            if record.get("type") == "session_meta":
                return CERTAIN
            if record.get("type") in ROLLOUT_TYPES and "timestamp" in record:
                score = LIKELY  # a rollout read from the middle (a quick look at the end)
        return score

    def ignores(self, raw: bytes) -> bool:
        head = raw[:_MARKER_WINDOW]
        for marker, kind in _IGNORED_MARKERS:
            if marker in head:
                self.state.ignore_type(kind)
                return True
        return False

    entry = staticmethod(entry)

    def feed(self, record: Any, line: int) -> None:
        self._main.feed(entry(record, line), line)

    def feed_entry(self, entry: Any, line: int) -> None:
        self._main.feed(entry, line)

    # -- sub-agents: rollouts of threads spawned by this one ---------------------------------

    def companions(self) -> list[Path]:
        for thread in self._threads.values():  # the spawn call's output may come after the file
            child = thread.state
            if child.parent_tool_call_id is None and child.subagent_id is not None:
                child.parent_tool_call_id = self._main.spawned.get(child.subagent_id)
        if self.state.session_id is None or not self._companion_scan_due():
            return self._companions
        found = []
        for candidate in sorted(self.path.parent.glob("rollout-*.jsonl")):
            if candidate != self.path and self._parent(candidate) == self.state.session_id:
                found.append(candidate)
        self._companions = found
        return found

    def _parent(self, candidate: Path) -> str | None:
        if candidate in self._parent_of:
            return self._parent_of[candidate]
        try:
            head = read_head(candidate, _HEAD_BYTES)
        except OSError:
            return None
        if b"\n" not in head and len(head) < _HEAD_BYTES:
            return None  # the first line is still being written: ask again later
        parent = _parent_thread(head)
        self._parent_of[candidate] = parent
        return parent

    def feed_companion(self, path: Path, record: Any, line: int) -> None:
        found = entry(record, line)
        if type(found) is NotObject:
            self.state.skip(line, "not a JSON object", str(path))
            return
        thread = self._threads.get(path)
        if thread is None:
            child = self.state.subagent("-".join(path.stem.split("-")[-5:]), path)
            thread = self._threads[path] = _Thread(child, self._main)
        if type(found) is Meta and found.description is not None:
            # (a forked child also carries its parent's session_meta, not a spawned one's)
            thread.state.description = found.description
        thread.feed(found, line, str(path))

    # -- agent facts -----------------------------------------------------------------------

    def autocompact_at(self, context_window: int) -> int | None:
        configured = configured_autocompact_limit(codex_home_of(self.path))
        # A window Codex logged is the effective one; the registry's is the model's own.
        logged = self.state.context_window == context_window
        return codex_autocompact_at(context_window, configured, effective=logged)
