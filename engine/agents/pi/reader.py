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

from ctxtop.engine.agents.pi.settings import agent_dir, compaction_settings, session_dir_setting
from ctxtop.engine.sessions.adapter import (
    CERTAIN,
    LIKELY,
    NOT_MINE,
    Adapter,
    logs_tokens,
    token_count,
)
from ctxtop.engine.sessions.entry_tree import Effect, EntryTree, Rewrite
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER
from ctxtop.engine.sessions.model import Block, Compaction, Message, Usage

SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"
_TOKEN_KEYS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
# Entry types that carry nothing the model sees or ctxtop shows (session-manager.ts).
_IGNORED = frozenset({"thinking_level_change", "custom", "label"})
# A failed call Pi logs with zero usage: no tokens were counted for it. (A tuple: a log may
# hold a list there, which no set can look up.)
_FAILED = ("error", "aborted")


def usage_from(raw: Mapping[str, Any]) -> Usage | None:
    """Pi ``usage`` → ``Usage`` (None if a count is not a number)."""
    counts = []
    for name in ("input", "output", "cacheRead", "cacheWrite"):
        value = token_count(raw.get(name) or 0)
        if value is None:
            return None
        counts.append(value)
    uncached, output, read, write = counts
    return Usage(
        input_tokens=uncached,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def _text_blocks(content: Any) -> list[Block]:
    """A user-side ``content`` (a string, or text and image parts) as blocks."""
    if isinstance(content, str):
        return [Block("text", content)] if content else []
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            blocks.append(Block("text", part["text"]))
        elif part.get("type") == "image":
            blocks.append(Block("image"))
        else:
            blocks.append(Block("other", raw=part))
    return blocks


def _plain(blocks: list[Block]) -> str:
    return "\n".join(block.text for block in blocks if block.kind == "text")


class PiAdapter(Adapter):
    agent = "pi"
    label = "Pi"

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
        state = self.state
        if not isinstance(record, dict):
            state.skip(line, "not a JSON object")
            return
        kind = record.get("type")
        timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        if kind == "session":
            self._header(record, timestamp)
            return
        entry_id, parent = record.get("id"), record.get("parentId")
        if not isinstance(entry_id, str) or not (parent is None or isinstance(parent, str)):
            state.skip(line, f"{kind} entry without an id or parentId")
            return
        state.touch(timestamp)
        effect: Effect | None = None
        if kind == "message":
            raw = record.get("message")
            if not isinstance(raw, dict) or not isinstance(raw.get("role"), str):
                state.skip(line, f"message entry {entry_id} without a message role")
                return
            effect = self._message(entry_id, raw, line, timestamp)
        elif kind == "custom_message":
            blocks = _text_blocks(record.get("content"))
            effect = Message(entry_id, "user", blocks, line, timestamp)
        elif kind == "branch_summary":
            text = str(record.get("summary") or "")
            effect = Message(entry_id, "user", [Block("text", text)], line, timestamp)
            effect.kind = "branch_summary"
        elif kind == "compaction":
            if not isinstance(record.get("summary"), str):
                state.skip(line, f"compaction {entry_id} without a summary")
                return
            effect = self._compaction(entry_id, record, line, timestamp)
        elif kind == "model_change":
            if isinstance(record.get("modelId"), str):
                state.model = record["modelId"]
        elif kind == "session_info":
            if isinstance(record.get("name"), str):
                state.title = record["name"]
        elif isinstance(kind, str) and kind in _IGNORED:
            state.ignore_type(kind)
        else:
            state.unknown_type(kind)
        self._tree.add(entry_id, parent, effect)

    def _header(self, record: Mapping[str, Any], timestamp: str | None) -> None:
        state = self.state
        if isinstance(record.get("id"), str) and state.session_id is None:
            state.session_id = record["id"]
        if isinstance(record.get("cwd"), str):
            state.cwd = record["cwd"]
        state.touch(timestamp)

    def _message(
        self, entry_id: str, raw: Mapping[str, Any], line: int, timestamp: str | None
    ) -> Message | None:
        role = raw["role"]
        message: Message | None
        if role == "assistant":
            message = self._assistant(entry_id, raw, line, timestamp)
        elif role == "toolResult":
            message = self._tool_result(entry_id, raw, line, timestamp)
        elif role == "bashExecution":
            message = None if raw.get("excludeFromContext") else self._bash(entry_id, raw, line)
        elif role in ("user", "custom"):
            message = Message(entry_id, "user", _text_blocks(raw.get("content")), line, timestamp)
        elif role in ("branchSummary", "compactionSummary"):
            text = str(raw.get("summary") or "")
            message = Message(entry_id, "user", [Block("text", text)], line, timestamp)
        else:
            self.state.unknown_type(f"message/{role}")
            message = None
        return message

    def _assistant(
        self, entry_id: str, raw: Mapping[str, Any], line: int, timestamp: str | None
    ) -> Message:
        state = self.state
        blocks: list[Block] = []
        content = raw.get("content")
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                blocks.append(Block("text", part["text"]))
            elif kind == "thinking" and isinstance(part.get("thinking"), str):
                blocks.append(Block("thinking", part["thinking"]))
            elif kind == "toolCall" and isinstance(part.get("id"), str):
                name = str(part.get("name") or "unknown")
                state.record_tool_call(part["id"], name, line=line, raw_input=part.get("arguments"))
                blocks.append(Block("tool_use", "", part["id"], name, raw=part.get("arguments")))
            else:
                blocks.append(Block("other", raw=part))
        message = Message(entry_id, "assistant", blocks, line, timestamp)
        model = raw.get("model") if isinstance(raw.get("model"), str) else None
        raw_usage = raw.get("usage")
        if raw_usage is None:
            return message
        usage = usage_from(raw_usage) if isinstance(raw_usage, dict) else None
        if usage is None:
            state.skip(line, f"assistant message {entry_id} with malformed usage")
            return message
        if not logs_tokens(raw_usage, _TOKEN_KEYS) or (
            raw.get("stopReason") in _FAILED and usage.total == 0
        ):
            return message
        message.response_key = entry_id
        state.record_response(entry_id, usage, model=model, line=line, timestamp=timestamp)
        if self._awaiting_after is not None:
            self._awaiting_after.settle(usage.input_tokens_total)
            self._awaiting_after = None
        return message

    def _tool_result(
        self, entry_id: str, raw: Mapping[str, Any], line: int, timestamp: str | None
    ) -> Message:
        blocks = _text_blocks(raw.get("content"))
        text = _plain(blocks)
        call_id = raw.get("toolCallId")
        error = raw.get("isError") is True
        if isinstance(call_id, str):
            if call_id not in self.state.tools:
                self.state.record_tool_call(call_id, str(raw.get("toolName") or "unknown"))
            self.state.record_tool_result(call_id, text, is_error=error)
        result = Block(
            "tool_result", text, call_id if isinstance(call_id, str) else None, is_error=error
        )
        images = [block for block in blocks if block.kind != "text"]
        return Message(entry_id, "tool", [result, *images], line, timestamp)

    def _bash(self, entry_id: str, raw: Mapping[str, Any], line: int) -> Message:
        """A ``!command`` the user ran: the model gets the command and its output as text."""
        text = f"Ran `{raw.get('command')}`\n```\n{raw.get('output') or ''}\n```"
        return Message(entry_id, "user", [Block("text", text)], line)

    def _compaction(
        self, entry_id: str, record: Mapping[str, Any], line: int, timestamp: str | None
    ) -> Rewrite:
        """Recorded now; on the context, the summary then the entries from the first kept."""
        kept = record.get("firstKeptEntryId")
        before = token_count(record.get("tokensBefore"))
        ctxtops = record.get(COMPACTION_KEY) == CTXTOP_TRIGGER
        trigger = (
            CTXTOP_TRIGGER if ctxtops else "extension" if record.get("fromHook") else "unknown"
        )
        compaction = Compaction(trigger, pre_tokens=before, line=line, timestamp=timestamp)
        summary = Message(entry_id, "user", [Block("text", record["summary"])], line, timestamp)
        summary.kind = "compact_summary"
        self.state.keep_context()
        self.state.record_compaction(compaction)
        # One ctxtop wrote: its "after" is what the preview promised (the fork mark), fixed.
        self._awaiting_after = None if ctxtops else compaction

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


__all__ = ["PiAdapter", "usage_from"]
