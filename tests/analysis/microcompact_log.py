"""A Claude Code session with a microcompaction, written line by line in the CLI's shape.

The record layout is Claude Code's (2.1.x ``user``/``assistant``/``attachment`` lines, one line
per content block); the ``microcompact_boundary`` line has the shape Claude Code writes
(``createMicrocompactBoundaryMessage``: ``content:"Context microcompacted"``, ``level:"info"``,
``microcompactMetadata{trigger, preTokens, tokensSaved, compactedToolIds,
clearedAttachmentUUIDs}``; seen in public readers of these logs, e.g. the leapmux, agentsview
and cozempic projects) and, as some files have, a legacy ``compactMetadata`` beside it that
the reader must not take. No real log with such a line was found to copy.

Each request's usage is what the model received: a fixed system prompt and tool definitions
(``SYSTEM``, not in the log) plus the tokenizer count of the messages sent, the cleared results
as Claude Code's marker after the microcompaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxtop.engine.tokens import get_encoding

ENC = get_encoding("o200k_base")
SYSTEM = 6_000  # the system prompt and tool definitions the log does not hold
SESSION = "5b0d7a5e-3c1f-4e0a-9b7e-1f2a3b4c5d6e"
CWD = "/home/dev/micro-project"
MARKER = "[Old tool result content cleared]"  # Claude Code 2.1.332's text
TRIGGER = "auto"


def listing(name: str, lines: int) -> str:
    """A file's text as the Read tool returns it (numbered lines of code)."""
    return "\n".join(
        f"{number:>6}\tdef {name}_{number}(value):  # step {number} of {name}\n"
        f"      \t    return value * {number} + len('{name}')"
        for number in range(1, lines + 1)
    )


@dataclass
class Log:
    """The lines of the session and what the model received, kept as they are written."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # each text the next request sends
    parent: str | None = None
    clock: int = 0

    def _base(self, kind: str, uuid: str) -> dict[str, Any]:
        self.clock += 1
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": CWD,
            "sessionId": SESSION,
            "version": "2.0.77",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": f"2026-11-27T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
        }
        self.parent = uuid
        return record

    def user(self, uuid: str, content: Any) -> None:
        record = self._base("user", uuid)
        record["message"] = {"role": "user", "content": content}
        self.lines.append(record)

    def prompt(self, uuid: str, text: str) -> None:
        self.user(uuid, text)
        self.sent.append(text)

    def result(self, uuid: str, call: str, text: str) -> None:
        self.user(uuid, [{"tool_use_id": call, "type": "tool_result", "content": text}])
        self.sent.append(text)

    def attachment(self, uuid: str, path: str, text: str) -> None:
        record = self._base("attachment", uuid)
        record["attachment"] = {
            "type": "file",
            "filename": path,
            "content": {"type": "text", "file": {"filePath": path, "content": text}},
        }
        self.lines.append(record)
        self.sent.append(json.dumps(record["attachment"], ensure_ascii=False))

    def reply(self, uuid: str, message_id: str, block: dict[str, Any]) -> int:
        """An assistant line; its usage: the system prompt and what was sent (returned)."""
        prompt = SYSTEM + sum(ENC.count(text) for text in self.sent)
        record = self._base("assistant", uuid)
        record["message"] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [block],
            "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 12,
                "cache_creation_input_tokens": 400,
                "cache_read_input_tokens": prompt - 412,
                "output_tokens": 90,
            },
        }
        record["requestId"] = f"req_{message_id}"
        self.lines.append(record)
        self.sent.append(block["text"] if block["type"] == "text" else json.dumps(block["input"]))
        return prompt

    def call(self, uuid: str, message_id: str, call: str, tool: str, args: dict[str, Any]) -> int:
        block = {"type": "tool_use", "id": call, "name": tool, "input": args}
        return self.reply(uuid, message_id, block)

    def microcompact(
        self, uuid: str, before: int, cleared: dict[str, str], attachments: dict[str, str]
    ) -> int:
        """The boundary; the cleared texts leave what the next request sends (the marker comes
        in place of each result). Returns the tokens saved, by the tokenizer."""
        saved = 0
        for text in [*cleared.values(), *attachments.values()]:
            self.sent.remove(text)
            saved += ENC.count(text)
        for _ in cleared:
            self.sent.append(MARKER)
            saved -= ENC.count(MARKER)
        record = self._base("system", uuid)
        record.update(
            {
                "subtype": "microcompact_boundary",
                "content": "Context microcompacted",
                "isMeta": False,
                "level": "info",
                # A legacy copy with other figures: microcompactMetadata wins.
                "compactMetadata": {
                    "trigger": "manual",
                    "preTokens": 1,
                    "tokensSaved": 1,
                    "compactedToolIds": ["toolu_not_this_one"],
                    "clearedAttachmentUUIDs": [],
                },
                "microcompactMetadata": {
                    "trigger": TRIGGER,
                    "preTokens": before,
                    "tokensSaved": saved,
                    "compactedToolIds": list(cleared),
                    "clearedAttachmentUUIDs": list(attachments),
                },
            }
        )
        self.lines.append(record)
        return saved

    def compact(self, uuid: str, summary_uuid: str, summary: str, before: int) -> None:
        """A /compact: the boundary starts a new chain; the summary is all that is sent."""
        last = self.parent
        self.parent = None
        record = self._base("system", uuid)
        record.update(
            {
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "logicalParentUuid": last,
                "compactMetadata": {"trigger": "manual", "preTokens": before},
            }
        )
        self.lines.append(record)
        self.user(summary_uuid, summary)
        self.lines[-1]["isCompactSummary"] = True
        self.sent = [summary]

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines)
        path.write_text(text, encoding="utf-8")
        return path


@dataclass(frozen=True)
class Written:
    path: Path
    log: Log
    before: int  # the prompt of the last request before the microcompaction
    after: int  # the prompt of the first request after it
    saved: int  # the tokenizer count of what it cleared, less the markers
    cleared: dict[str, str]  # call id -> the result text it cleared
    kept: dict[str, str]  # call id -> a result it kept
    attachment: str  # the attachment's text it cleared (as ctxtop counts it: its JSON)


def write_session(folder: Path, *, compacted: bool = False) -> Written:
    """Three tool rounds (two large results), a file attachment, the microcompaction of the
    two large results and the attachment, then a question and the answer; ``compacted``: then
    a /compact and one more round (the microcompaction is history a cold read reads lean)."""
    log = Log()
    log.prompt("u-1", "Read the two modules and the grep hits, then tell me what they do.")
    notes = listing("note", 40)
    log.attachment("a-1", f"{CWD}/NOTES.md", notes)
    attachment_json = log.sent[-1]
    first, second, third = listing("alpha", 700), listing("beta", 650), "src/a.py:3: alpha_3"
    log.call("m-1", "msg_01", "toolu_01", "Read", {"file_path": f"{CWD}/src/a.py"})
    log.result("r-1", "toolu_01", first)
    log.call("m-2", "msg_02", "toolu_02", "Read", {"file_path": f"{CWD}/src/b.py"})
    log.result("r-2", "toolu_02", second)
    log.call("m-3", "msg_03", "toolu_03", "Grep", {"pattern": "alpha_3"})
    log.result("r-3", "toolu_03", third)
    before = log.reply("m-4", "msg_04", {"type": "text", "text": "Both define arithmetic steps."})
    log.prompt("u-2", "And which one is larger?")
    cleared = {"toolu_01": first, "toolu_02": second}
    saved = log.microcompact("mc-1", before, cleared, {"a-1": attachment_json})
    after = log.reply("m-5", "msg_05", {"type": "text", "text": "The first one, alpha."})
    if compacted:
        log.compact(
            "cb-1", "s-1", "Summary: the user asked about two modules; alpha is larger.", after
        )
        log.prompt("u-3", "Thanks. Anything else?")
        log.reply("m-6", "msg_06", {"type": "text", "text": "No, that is all."})
    path = log.write(folder / "-home-dev-micro-project" / f"{SESSION}.jsonl")
    return Written(path, log, before, after, saved, cleared, {"toolu_03": third}, attachment_json)
