"""Pi (``@mariozechner/pi-coding-agent``) sessions: ``~/.pi/agent/sessions/--<cwd>--/*.jsonl``.

The rules followed here are Pi's own (0.73.1: ``docs/session-format.md`` and
``dist/core/session-manager.js`` in the npm package; badlogic/pi-mono
``packages/coding-agent/src/core/session-manager.ts``), checked against sessions the real 0.73.1
CLI wrote (sample_sessions/pi):

- the first line is the header ``{type: "session", version, id, timestamp, cwd}``
  (``parentSession`` on a fork); every other line is an entry with an 8-hex ``id`` and the
  ``parentId`` of the entry before it on its branch (a tree: ``/tree`` branches in place);
- the model sees the path from the newest entry (the leaf) back to the root: ``message``
  entries (``user``, ``assistant``, ``toolResult``, ``bashExecution``, ``custom``,
  ``branchSummary``, ``compactionSummary``), ``custom_message`` and ``branch_summary`` entries;
- an assistant message is one model call: ``usage {input, output, cacheRead, cacheWrite,
  totalTokens}``, ``input`` already without the cached part (both wire APIs), ``output``
  with reasoning;
- a ``compaction`` entry replaces what comes before ``firstKeptEntryId`` with its ``summary``;
  ``tokensBefore`` is the context it compacted. Its summarisation calls are not logged (their
  usage is missing from every total Pi's log can give), and nor is whether it was automatic.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxtop.engine.agents.pi.entries import (
    Answer,
    BashRun,
    BranchSummary,
    CallPart,
    CompactionEntry,
    CustomMessage,
    Header,
    MessageEntry,
    ModelChange,
    Part,
    PiEntry,
    SessionInfo,
    ToolResult,
    entry,
)
from ctxtop.engine.agents.pi.settings import agent_dir, compaction_settings, session_dir_setting
from ctxtop.engine.sessions.adapter import (
    CERTAIN,
    LIKELY,
    NOT_MINE,
    Adapter,
)
from ctxtop.engine.sessions.entry_tree import Effect, EntryTree, Rewrite
from ctxtop.engine.sessions.fork_mark import CTXTOP_TRIGGER
from ctxtop.engine.sessions.model import Block, Compaction, Message, Usage

SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


def _blocks(parts: Sequence[Part]) -> list[Block]:
    """The blocks of a content's parts: text, thinking, tool calls (with a text id), images,
    other objects (a bare string or another value is none)."""
    blocks: list[Block] = []
    for part in parts:
        kind = part.kind
        if kind == "text" or kind == "thinking":
            blocks.append(Block(kind, part.text))
        elif isinstance(part, CallPart) and part.id is not None:
            blocks.append(Block("tool_use", "", part.id, part.name, raw=part.arguments))
        elif kind == "image":
            blocks.append(Block("image"))
        elif kind == "other" or kind == "tool_call":
            blocks.append(Block("other", raw=part.raw))
    return blocks


class PiAdapter(Adapter):
    agent = "pi"
    label = "Pi"
    entry = staticmethod(entry)

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._tree = EntryTree(self.state.context)
        self._awaiting_after: Compaction | None = None

    @classmethod
    def detect(cls, head: Sequence[Any]) -> int:
        score = NOT_MINE
        for record in head:
            if not isinstance(record, dict):
                continue
            if (
                record.get("type") == "session"
                and isinstance(record.get("cwd"), str)
                and isinstance(record.get("version"), int)
            ):
                return CERTAIN
            message = record.get("message")
            if (
                record.get("type") == "message"
                and "parentId" in record
                and isinstance(message, dict)
                and message.get("role") in ("user", "assistant", "toolResult")
            ):
                score = LIKELY
        return score

    # -- feeding -------------------------------------------------------------------------------

    def feed(self, record: Any, line: int) -> None:
        self.feed_entry(self.entry(record, line), line)

    def feed_entry(self, entry: PiEntry, line: int) -> None:
        state = self.state
        timestamp = entry.timestamp
        if isinstance(entry, Header):
            if entry.session_id is not None and state.session_id is None:
                state.session_id = entry.session_id
            if entry.cwd is not None:
                state.cwd = entry.cwd
            state.touch(timestamp)
            return
        if entry.fault is not None:
            if entry.linked:
                state.touch(timestamp)
            state.skip(line, entry.fault)
            return
        entry_id = entry.id
        assert entry_id is not None  # (linked)
        state.touch(timestamp)
        effect: Effect | None = None
        if isinstance(entry, Answer):  # (the two kinds of most lines first)
            effect = self._answer(entry_id, entry, line, timestamp)
        elif isinstance(entry, ToolResult):
            effect = self._tool_result(entry_id, entry, line, timestamp)
        elif isinstance(entry, MessageEntry):
            effect = self._message(entry_id, entry, line, timestamp)
        elif isinstance(entry, CustomMessage):
            effect = Message(entry_id, "user", _blocks(entry.parts), line, timestamp)
        elif isinstance(entry, BranchSummary):
            effect = Message(entry_id, "user", [Block("text", entry.summary)], line, timestamp)
            effect.kind = "branch_summary"
        elif isinstance(entry, CompactionEntry):
            effect = self._compaction(entry_id, entry, line, timestamp)
        elif isinstance(entry, ModelChange):
            if entry.model is not None:
                state.model = entry.model
        elif isinstance(entry, SessionInfo):
            if entry.title is not None:
                state.title = entry.title
        elif entry.kind == "ignored":
            state.ignore_type(entry.type)
        else:
            state.unknown_type(entry.type)
        self._tree.add(entry_id, entry.parent, effect)

    def _message(
        self, entry_id: str, entry: MessageEntry, line: int, timestamp: str | None
    ) -> Message | None:
        """A message other than an answer or a tool result."""
        role = entry.role
        message: Message | None
        if isinstance(entry, BashRun):
            message = None if entry.excluded else self._bash(entry_id, entry, line)
        elif role in ("user", "custom"):
            message = Message(entry_id, "user", _blocks(entry.parts), line, timestamp)
        elif role in ("branchSummary", "compactionSummary"):
            message = Message(entry_id, "user", [Block("text", entry.summary)], line, timestamp)
        else:
            self.state.unknown_type(f"message/{role}")
            message = None
        return message

    def _answer(self, entry_id: str, entry: Answer, line: int, timestamp: str | None) -> Message:
        state = self.state
        blocks = _blocks(entry.parts)
        for block in blocks:
            if block.kind == "tool_use":
                assert block.tool_call_id is not None and block.tool_name is not None
                state.record_tool_call(
                    block.tool_call_id, block.tool_name, line=line, raw_input=block.raw
                )
        message = Message(entry_id, "assistant", blocks, line, timestamp)
        if entry.usage_fault is not None:
            state.skip(line, entry.usage_fault)
        if entry.tokens is None:
            return message
        usage = Usage(*entry.tokens)
        message.response_key = entry_id
        state.record_response(entry_id, usage, model=entry.model, line=line, timestamp=timestamp)
        if self._awaiting_after is not None:
            self._awaiting_after.settle(usage.input_tokens_total)
            self._awaiting_after = None
        return message

    def _tool_result(
        self, entry_id: str, entry: ToolResult, line: int, timestamp: str | None
    ) -> Message:
        text = entry.text()
        call_id = entry.call_id
        error = entry.is_error
        if call_id is not None:
            if call_id not in self.state.tools:
                self.state.record_tool_call(call_id, entry.tool_name)
            self.state.record_tool_result(call_id, text, is_error=error)
        result = Block("tool_result", text, call_id, is_error=error)
        parts = entry.parts
        if len(parts) == 1 and parts[0].kind == "text":  # (most results)
            return Message(entry_id, "tool", [result], line, timestamp)
        images = [block for block in _blocks(parts) if block.kind != "text"]
        return Message(entry_id, "tool", [result, *images], line, timestamp)

    def _bash(self, entry_id: str, bash: BashRun, line: int) -> Message:
        """A ``!command`` the user ran: the model gets the command and its output as text."""
        text = f"Ran `{bash.command}`\n```\n{bash.output}\n```"
        return Message(entry_id, "user", [Block("text", text)], line)

    def _compaction(
        self, entry_id: str, entry: CompactionEntry, line: int, timestamp: str | None
    ) -> Rewrite:
        """Recorded now; on the context, the summary then the entries from the first kept."""
        kept = entry.first_kept
        compaction = Compaction(
            entry.trigger, pre_tokens=entry.tokens_before, line=line, timestamp=timestamp
        )
        summary = Message(entry_id, "user", [Block("text", entry.summary)], line, timestamp)
        summary.kind = "compact_summary"
        self.state.keep_context()
        self.state.record_compaction(compaction)
        # One ctxtop wrote: its "after" is what the preview promised (the fork mark), fixed.
        self._awaiting_after = None if entry.trigger == CTXTOP_TRIGGER else compaction

        def rewrite(context: list[Message]) -> list[Message]:
            start = next((i for i, m in enumerate(context) if m.id == kept), len(context))
            return [summary, *context[start:]]

        return rewrite

    # -- agent facts ---------------------------------------------------------------------------

    def autocompact_at(self, context_window: int) -> int | None:
        """Pi compacts when the last answer's ``totalTokens`` exceeds the window less
        ``compaction.reserveTokens`` (default 16,384) of its settings (``enabled: false``:
        never)."""
        settings = compaction_settings(self.path, self.state.cwd)
        if not settings.enabled:
            return None
        return max(context_window - settings.reserve_tokens, 0)

    @classmethod
    def discover(cls, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        if env.get(SESSION_DIR_ENV):
            yield from _jsonl(Path(env[SESSION_DIR_ENV]).expanduser())
            return
        root = agent_dir(env, home)
        configured = session_dir_setting(root, home)
        if configured is not None:
            yield from _jsonl(configured)
            return
        sessions = root / "sessions"
        if sessions.is_dir():
            yield from sessions.glob("*/*.jsonl")


def _jsonl(directory: Path) -> Iterator[Path]:
    if directory.is_dir():
        yield from directory.glob("*.jsonl")


__all__ = ["PiAdapter"]
