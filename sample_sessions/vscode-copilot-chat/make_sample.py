"""Writes the VS Code Copilot Chat sample session the way VS Code 1.110's serializer does.

VS Code cannot run here, so this follows its source line by line: the document's shape is
``storageSchema`` (microsoft/vscode ``chat/common/model/chatSessionOperationLog.ts``) with the
usage fields of ``ChatResponseModel.toJSON`` (``chatModel.ts``: ``promptTokens``,
``completionTokens``, ``promptTokenDetails``, ``elapsedMs``...), the lines are what
``ObjectMutationLog.write`` emits for each change (``objectMutationLog.ts``: ``kind`` 0 the first
write, then a ``kind`` 2 push for a new request or response part, ``kind`` 1 for a changed value,
``kind`` 2 with ``i`` for an array cut, ``kind`` 3 for a value gone), and ``result.metadata`` is
the Copilot Chat extension's ``IResultMetadata`` (``toolCallRounds``, ``toolCallResults``).
Ids, texts and token figures are made up.
Run: python sample_sessions/vscode-copilot-chat/make_sample.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
WORKSPACE = HERE / "User/workspaceStorage/5f3c8e1a9b2d4c6e8f0a1b2c3d4e5f60"
SESSION = "3b8c2f1e-7d4a-4c9b-a1e2-5f6d7c8b9a01"
MODEL = {
    "identifier": "copilot/gpt-4.1",
    "metadata": {
        "extension": {"value": "GitHub.copilot-chat"},
        "id": "gpt-4.1",
        "name": "GPT-4.1",
        "vendor": "copilot",
        "family": "gpt-4.1",
        "maxInputTokens": 111_616,
        "maxOutputTokens": 16_384,
        "isDefault": True,
    },
}
BIG = "\n".join(
    f"{n:>4}: log line {n} of the server, level INFO, nothing to see" for n in range(400)
)


def request(rid: str, ts: int, text: str) -> dict:
    return {
        "requestId": rid,
        "timestamp": ts,
        "message": {"text": text, "parts": [{"kind": "text", "text": text}]},
        "variableData": {"variables": []},
        "response": [],
        "agent": {"id": "github.copilot.editsAgent", "name": "agent"},
        "modelId": "copilot/gpt-4.1",
        "modeInfo": {"kind": "agent", "isBuiltin": True},
        "responseId": f"response_{rid}",
        "modelState": {"value": 0},
        "contentReferences": [],
        "codeCitations": [],
        "timeSpentWaiting": 0,
    }


def details(system: float, tools: float, messages: float, results: float) -> list[dict]:
    return [
        {"category": "System", "label": "System Instructions", "percentageOfPrompt": system},
        {"category": "System", "label": "Tool Definitions", "percentageOfPrompt": tools},
        {"category": "User Context", "label": "Messages", "percentageOfPrompt": messages},
        {"category": "User Context", "label": "Tool Results", "percentageOfPrompt": results},
    ]


def lines() -> list[dict]:
    out: list[dict] = []
    add = out.append
    add(
        {
            "kind": 0,
            "v": {
                "version": 3,
                "creationDate": 1_795_000_000_000,
                "initialLocation": "panel",
                "inputState": {
                    "attachments": [],
                    "mode": {"id": "agent", "kind": "agent"},
                    "selectedModel": MODEL,
                    "inputText": "",
                    "selections": [],
                },
                "responderUsername": "GitHub Copilot",
                "sessionId": SESSION,
                "requests": [],
                "hasPendingEdits": False,
                "pendingRequests": [],
            },
        }
    )
    # Turn 1: a question answered in two model calls (one tool call in between).
    add(
        {
            "kind": 2,
            "k": ["requests"],
            "v": [
                request(
                    "request_1", 1_795_000_010_000, "Why does the server log warn about the cache?"
                )
            ],
        }
    )
    add(
        {
            "kind": 2,
            "k": ["requests", 0, "response"],
            "v": [
                {
                    "kind": "toolInvocationSerialized",
                    "toolCallId": "call_read_1",
                    "toolId": "copilot_readFile",
                    "invocationMessage": {"value": "Reading server.log"},
                    "isComplete": True,
                }
            ],
        }
    )
    add(
        {
            "kind": 2,
            "k": ["requests", 0, "response"],
            "v": [{"value": "The log shows no cache warning; ", "supportThemeIcons": False}],
        }
    )
    add(
        {
            "kind": 2,
            "k": ["requests", 0, "response"],
            "v": [{"value": "every line is INFO.", "supportThemeIcons": False}],
        }
    )
    add(
        {
            "kind": 1,
            "k": ["requests", 0, "result"],
            "v": {
                "timings": {"firstProgress": 900, "totalElapsed": 4100},
                "details": "GPT-4.1 • 0x",
                "metadata": {
                    "modelMessageId": "m1",
                    "responseId": "response_request_1",
                    "sessionId": SESSION,
                    "agentId": "github.copilot.editsAgent",
                    "resolvedModel": "gpt-4.1-2025-04-14",
                    "toolCallRounds": [
                        {
                            "id": "round_1a",
                            "response": "Let me read the log.",
                            "toolInputRetry": 0,
                            "toolCalls": [
                                {
                                    "id": "call_read_1",
                                    "name": "read_file",
                                    "arguments": '{"filePath":"/home/dev/app/server.log"}',
                                }
                            ],
                        },
                        {
                            "id": "round_1b",
                            "response": "The log shows no cache warning; every line is INFO.",
                            "toolInputRetry": 0,
                            "toolCalls": [],
                        },
                    ],
                    "toolCallResults": {
                        "call_read_1": {"$mid": 20, "content": [{"$mid": 21, "value": BIG}]}
                    },
                },
            },
        }
    )
    add({"kind": 1, "k": ["requests", 0, "promptTokens"], "v": 21_406})
    add({"kind": 1, "k": ["requests", 0, "completionTokens"], "v": 57})
    add({"kind": 1, "k": ["requests", 0, "promptTokenDetails"], "v": details(7.9, 41.2, 1.4, 49.5)})
    add({"kind": 1, "k": ["requests", 0, "elapsedMs"], "v": 4100})
    add(
        {
            "kind": 1,
            "k": ["requests", 0, "modelState"],
            "v": {"value": 1, "completedAt": 1_795_000_014_100},
        }
    )
    add({"kind": 1, "k": ["requests", 0, "editedFileEvents"], "v": []})
    # Turn 2: asked, then undone by the user (the requests array cut back to one).
    add(
        {
            "kind": 2,
            "k": ["requests"],
            "v": [request("request_2", 1_795_000_060_000, "Delete the log file.")],
        }
    )
    add(
        {
            "kind": 1,
            "k": ["requests", 1, "modelState"],
            "v": {"value": 2, "completedAt": 1_795_000_061_000},
        }
    )
    add({"kind": 2, "k": ["requests"], "i": 1})
    # Turn 3: a tool that edits a file, two model calls.
    add(
        {
            "kind": 2,
            "k": ["requests"],
            "v": [
                request(
                    "request_3",
                    1_795_000_120_000,
                    "Add a comment on top of main.py saying what it does.",
                )
            ],
        }
    )
    add(
        {
            "kind": 2,
            "k": ["requests", 1, "response"],
            "v": [
                {
                    "kind": "toolInvocationSerialized",
                    "toolCallId": "call_edit_3",
                    "toolId": "copilot_insertEdit",
                    "invocationMessage": {"value": "Editing main.py"},
                    "isComplete": True,
                },
                {"value": "Added the comment.", "supportThemeIcons": False},
            ],
        }
    )
    add(
        {
            "kind": 1,
            "k": ["requests", 1, "result"],
            "v": {
                "details": "GPT-4.1 • 0x",
                "metadata": {
                    "modelMessageId": "m3",
                    "responseId": "response_request_3",
                    "sessionId": SESSION,
                    "agentId": "github.copilot.editsAgent",
                    "resolvedModel": "gpt-4.1-2025-04-14",
                    "toolCallRounds": [
                        {
                            "id": "round_3a",
                            "response": "",
                            "toolInputRetry": 0,
                            "toolCalls": [
                                {
                                    "id": "call_edit_3",
                                    "name": "insert_edit_into_file",
                                    "arguments": json.dumps(
                                        {"filePath": "/home/dev/app/main.py", "code": "# Serves.\n"}
                                    ),
                                }
                            ],
                        },
                        {
                            "id": "round_3b",
                            "response": "Added the comment.",
                            "toolInputRetry": 0,
                            "toolCalls": [],
                        },
                    ],
                    "toolCallResults": {
                        "call_edit_3": {"content": [{"value": "The file was edited."}]}
                    },
                },
            },
        }
    )
    add({"kind": 1, "k": ["requests", 1, "promptTokens"], "v": 24_118})
    add({"kind": 1, "k": ["requests", 1, "completionTokens"], "v": 66})
    add({"kind": 1, "k": ["requests", 1, "promptTokenDetails"], "v": details(7.0, 36.6, 2.3, 54.1)})
    add(
        {
            "kind": 1,
            "k": ["requests", 1, "editedFileEvents"],
            "v": [
                {
                    "uri": {"$mid": 1, "scheme": "file", "path": "/home/dev/app/main.py"},
                    "eventKind": 1,
                }
            ],
        }
    )
    add(
        {
            "kind": 1,
            "k": ["requests", 1, "modelState"],
            "v": {"value": 1, "completedAt": 1_795_000_126_000},
        }
    )
    # The edit kept, its pending-edit list gone (a value that became undefined: a delete).
    add({"kind": 3, "k": ["requests", 1, "editedFileEvents"]})
    add({"kind": 1, "k": ["customTitle"], "v": "Server log cache warning"})
    return out


def entry(ts: int, kind: str, name: str, span: str, attrs: dict, **more: object) -> dict:
    """A line of the Copilot Chat debug log (``IDebugLogEntry`` in the extension's
    ``chatDebugFileLoggerService.ts``)."""
    dur, status = more.pop("dur", 0), more.pop("status", "ok")
    head = {"ts": ts, "dur": dur, "sid": SESSION, "type": kind, "name": name, "spanId": span}
    return {**head, **more, "status": status, "attrs": attrs}


def call(ts: int, span: str, tokens: tuple[int, int, int], **attrs: object) -> dict:
    """An ``llm_request``: one model call (its span's ``gen_ai.usage.*`` as the file writes
    them: ``inputTokens`` the whole prompt, cached part included, ``cachedTokens`` that part)."""
    prompt, output, cached = tokens
    usage = {"inputTokens": prompt, "outputTokens": output, "cachedTokens": cached}
    return entry(
        ts,
        "llm_request",
        "chat:gpt-4.1",
        span,
        {"model": "gpt-4.1", **usage, "ttft": 700, **attrs},
        dur=1800,
        parentSpanId="a1b2c3d4e5f60718",
    )


def debug_log() -> list[dict]:
    """The session's ``debug-logs/<session>/main.jsonl``: each model call of the two answered
    turns (the last one of each the turn's own ``promptTokens``), the undone turn's call
    cancelled (no usage), tool calls and the session's first lines between them."""
    versions = {"copilotVersion": "0.38.2", "vscodeVersion": "1.110.0"}
    start = entry(1_795_000_009_000, "session_start", "session_start", "session-start", versions)
    return [
        {"v": 1, **start},
        entry(1_795_000_010_000, "user_message", "user_message", "e1", {"content": "Why …"}),
        call(1_795_000_010_100, "c1a", (15_020, 31, 0), maxTokens=16_384),
        entry(1_795_000_012_000, "tool_call", "read_file", "t1", {"args": "{}"}, dur=40),
        call(1_795_000_012_100, "c1b", (21_406, 26, 14_848), maxTokens=16_384),
        entry(1_795_000_060_000, "user_message", "user_message", "e2", {"content": "Delete …"}),
        entry(
            1_795_000_060_100,
            "llm_request",
            "chat:gpt-4.1",
            "c2",
            {"model": "gpt-4.1", "error": "Canceled"},
            status="error",
        ),
        entry(1_795_000_120_000, "user_message", "user_message", "e3", {"content": "Add …"}),
        call(1_795_000_120_100, "c3a", (21_980, 40, 21_248), maxTokens=16_384),
        entry(1_795_000_123_000, "tool_call", "insert_edit_into_file", "t3", {"args": "{}"}),
        call(1_795_000_123_100, "c3b", (24_118, 26, 21_888), maxTokens=16_384),
    ]


def main() -> None:
    # Beside the sample, not in its place (``GitHub.copilot-chat/debug-logs/<session>/``): the
    # tests put it there; the suffix keeps it out of the sample sessions' listings.
    log = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in debug_log())
    (HERE / "debug-log.main.jsonl.sample").write_text(log, encoding="utf-8")
    target = WORKSPACE / "chatSessions" / f"{SESSION}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines())
    target.write_text(text, encoding="utf-8")
    (WORKSPACE / "workspace.json").write_text(
        json.dumps({"folder": "file:///home/dev/app"}) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
