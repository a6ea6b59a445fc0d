"""A tiny model server on 127.0.0.1 for real agent CLIs: Anthropic ``/v1/messages``, the
OpenAI Responses API ``/v1/responses`` (for Codex) and Chat Completions ``/chat/completions``
(a short text answer, streamed with its usage in a last chunk when the client asks).

Every request body is recorded (``ModelServer.requests``). Responses replies come from the
``replies`` queue given to the server (``{"text": ...}`` or ``{"call": name, "arguments": json}``)
and are a short text answer once it is empty. Anthropic replies come from the ``messages``
script (``{"text": ...}`` and/or ``{"call": name, "input": {...}}``): reply *i* answers the agent's
request (one that offers tools) whose conversation holds *i* model responses after the user's
latest prompt, so side requests (titles, quota probes) and retries never shift it; past the
script's end, and for side requests, the answer is a short text. Streamed (SSE) or not, as the
client asked. Usage reports the request's size at about 4 characters a token (simulated: there
is no prompt cache). Standard library only.
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Done."


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._json(200, {"ok": True})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        with self.server.lock:
            self.server.requests.append(
                {"path": self.path, "body": body, "raw": raw, "headers": dict(self.headers.items())}
            )
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": max(len(raw) // 4, 1)})
        elif path.endswith("/v1/messages"):
            self._messages(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        else:
            self._json(404, {"type": "error", "error": {"type": "not_found", "message": path}})

    def _messages(self, body: dict[str, Any]) -> None:
        model = str(body.get("model") or "claude-sonnet-4-5")
        number = len(self.server.requests)
        reply = _scripted(self.server.messages, body)
        content: list[dict[str, Any]] = []
        if reply.get("text") or "call" not in reply:
            content.append({"type": "text", "text": str(reply.get("text") or REPLY)})
        if "call" in reply:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{self.server.tag}{number:012d}",
                    "name": reply["call"],
                    "input": reply["input"],
                }
            )
        stop = "tool_use" if "call" in reply else "end_turn"
        usage = {
            "input_tokens": _input_tokens(body),
            "output_tokens": 3,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        message = {
            "id": f"msg_{self.server.tag}{number:016d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            self._json(200, message)
            return
        start = dict(message, content=[], stop_reason=None)
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start})
        ]
        for index, block in enumerate(content):
            events.extend(_block_events(index, block))
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": usage,
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._sse(events)

    def _sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

    def _chat(self, body: dict[str, Any]) -> None:
        model = str(body.get("model") or "gpt-5")
        with self.server.lock:
            number = len(self.server.requests)
        prompt = _input_tokens(body)
        usage = {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3}
        base = {"id": f"chatcmpl-{self.server.tag}{number:012d}", "created": 0, "model": model}
        message = {"role": "assistant", "content": REPLY}
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            self._json(200, dict(base, object="chat.completion", choices=[choice], usage=usage))
            return
        chunk = dict(base, object="chat.completion.chunk")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for data in (
            dict(chunk, choices=[{"index": 0, "delta": message, "finish_reason": None}]),
            dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            dict(chunk, choices=[], usage=usage),
        ):
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _responses(self, body: dict[str, Any]) -> None:
        with self.server.lock:
            reply = self.server.replies.pop(0) if self.server.replies else {"text": REPLY}
            number = len(self.server.requests)
        item: dict[str, Any]
        if "call" in reply:
            item = {
                "type": "function_call",
                "id": f"fc_{self.server.tag}{number:012d}",
                "call_id": f"call_{self.server.tag}{number:012d}",
                "name": reply["call"],
                "arguments": reply["arguments"],
                "status": "completed",
            }
        else:
            text = str(reply["text"])
            item = {
                "type": "message",
                "id": f"msg_{self.server.tag}{number:012d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        usage = {
            "input_tokens": _input_tokens(body),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": _input_tokens(body) + 5,
        }
        base = {
            "id": f"resp_{self.server.tag}{number:012d}",
            "object": "response",
            "created_at": 0,
            "model": body.get("model", "gpt-5"),
            "status": "in_progress",
            "output": [],
            "usage": None,
            "error": None,
            "incomplete_details": None,
        }
        done = dict(base, status="completed", output=[item], usage=usage)
        if not body.get("stream"):
            self._json(200, done)
            return
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"response": base}),
            ("response.output_item.added", {"output_index": 0, "item": item}),
            ("response.output_item.done", {"output_index": 0, "item": item}),
            ("response.completed", {"response": done}),
        ]
        for sequence, (name, data) in enumerate(events):
            data.update(type=name, sequence_number=sequence)
        self._sse(events)


def _input_tokens(body: dict[str, Any]) -> int:
    """A simulated prompt size: about 4 characters a token of the request."""
    return max(len(json.dumps(body)) // 4, 1)


def _is_results(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


def _scripted(script: list[dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
    """The script's reply to this Messages request (see the module's docstring)."""
    messages = body.get("messages") or []
    if not body.get("tools") or not messages:
        return {"text": REPLY}
    prompt = max(
        (i for i, m in enumerate(messages) if m.get("role") == "user" and not _is_results(m)),
        default=-1,
    )
    answered = sum(1 for m in messages[prompt + 1 :] if m.get("role") == "assistant")
    return script[answered] if answered < len(script) else {"text": REPLY}


def _block_events(index: int, block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A content block streamed: its start (empty), one delta with all of it, its stop."""
    if block["type"] == "tool_use":
        empty = dict(block, input={})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        empty = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    return [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": empty},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict[str, Any]]
    replies: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    tag: str  # in the ids this server makes, so two servers' ids never collide in one session
    lock: threading.Lock


class ModelServer:
    """``with ModelServer() as server:`` listens on 127.0.0.1:<server.port> until the block ends.
    ``replies``: the Responses queue; ``messages``: the Anthropic script."""

    def __init__(
        self,
        replies: list[dict[str, Any]] | None = None,
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.requests = []
        self._server.replies = list(replies or [])
        self._server.messages = list(messages or [])
        self._server.tag = secrets.token_hex(4)
        self._server.lock = threading.Lock()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.requests)

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
