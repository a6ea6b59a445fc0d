"""The system prompt and tools Claude Code logs for its requests (2.1.330+), read into
``PromptParts`` (engine/sessions/prompt_parts.py).

Three records hold them [OBS realagents 2.1.332, agent-log-formats.md §1.3]:

- ``api-request-shape``: ``shape:{system:[blocks], tools:[definitions]}`` exactly as sent (less
  the billing header block), once per ``shapeHash``;
- ``api-request``: one per request, naming its ``shapeHash`` (and, in some releases, carrying
  ``params.system`` / ``params.tools`` itself);
- the ``prompt_snapshot`` attachment: ``systemPrompt`` (a list of sections, sent joined by blank
  lines after ``cliPrefix``) and ``tools`` (``{name, description, schema}``); a snapshot holds only
  the fields that changed, so each one updates the last.

A snapshot is never a message: it is how the CLI remembers what it sent. A value ``collect.py``
redacted ("[redacted]") tells nothing: the parts stay unknown (inferred from the figures).
Tools sent with ``defer_loading`` are not rendered into the model's prompt (the API loads them
when the model searches for them), so they are left out; their names reach the model in the
``deferred_tools_delta`` attachment, a message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxtop.engine.sessions.prompt_parts import PromptParts

SHAPE = "api-request-shape"
REQUEST = "api-request"
SNAPSHOT = "prompt_snapshot"
SECTION_SEPARATOR = "\n\n"  # between the snapshot's systemPrompt sections, as sent
# A request's own system prompt, as a key (the cache-control paths name "system" too).
SYSTEM_KEY = b'"system":'


def _system_texts(blocks: Any) -> tuple[str, ...] | None:
    if isinstance(blocks, str):
        return (blocks,)
    if not isinstance(blocks, list):
        return None
    texts = []
    for block in blocks:
        text = block.get("text") if isinstance(block, dict) else None
        if not isinstance(text, str):
            return None
        texts.append(text)
    return tuple(texts)


def _sent_tools(tools: Any) -> tuple[Any, ...] | None:
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        return None
    return tuple(tool for tool in tools if not tool.get("defer_loading"))


def _snapshot_tool(tool: Any) -> Any:
    """A snapshot's ``{name, description, schema}`` as the API's tool definition."""
    if not isinstance(tool, dict) or "schema" not in tool:
        return tool
    sent = {key: value for key, value in tool.items() if key != "schema"}
    sent["input_schema"] = tool["schema"]
    return sent


class PromptLog:
    """One conversation's logged prompt parts: the shapes by hash, the snapshot's fields so far,
    and the parts of its latest request (``current``)."""

    def __init__(self) -> None:
        self.shapes: dict[str, PromptParts] = {}
        self.current: PromptParts | None = None
        self.current_hash: str | None = None
        self._prefix: str | None = None  # the snapshot's cliPrefix
        self._sections: tuple[str, ...] | None = None  # its systemPrompt
        self._tools: tuple[Any, ...] | None = None

    def feed(self, record: Mapping[str, Any], line: int) -> bool:
        """Take a shape, request or snapshot record; whether ``current`` changed."""
        kind = record.get("type")
        before = self.current
        if kind == SHAPE:
            self._shape(record, line)
        elif kind == REQUEST:
            self._request(record, line)
        elif kind == "attachment":
            attachment = record.get("attachment")
            if isinstance(attachment, Mapping) and attachment.get("type") == SNAPSHOT:
                self._snapshot(attachment, line)
        return self.current is not before

    def _shape(self, record: Mapping[str, Any], line: int) -> None:
        shape = record.get("shape")
        if not isinstance(shape, Mapping):
            return  # (redacted)
        system, tools = _system_texts(shape.get("system")), _sent_tools(shape.get("tools"))
        if system is None or tools is None:
            return
        parts = PromptParts(system, tools, SHAPE, line)
        digest = record.get("shapeHash")
        if isinstance(digest, str):
            self.shapes[digest] = parts
        if self.current is None or self.current.source == SNAPSHOT:
            # The request naming it follows; without one, the newest shape is the best guess.
            self._use(parts, digest if isinstance(digest, str) else None)

    def _request(self, record: Mapping[str, Any], line: int) -> None:
        params = record.get("params")
        if isinstance(params, Mapping) and "system" in params and "tools" in params:
            system, tools = _system_texts(params["system"]), _sent_tools(params["tools"])
            if system is not None and tools is not None:
                self._use(PromptParts(system, tools, REQUEST, line), None)
                return
        digest = record.get("shapeHash")
        parts = self.shapes.get(digest) if isinstance(digest, str) else None
        if parts is not None and digest != self.current_hash:
            self._use(parts, digest)

    def _use(self, parts: PromptParts, digest: str | None) -> None:
        """The parts of the main loop's requests: a side request offering no tools (a title,
        a summary) leaves them as they were (as ctxtop's proxy measures the main loop's)."""
        if parts.tools or self.current is None or not self.current.tools:
            self.current = parts
            self.current_hash = digest

    def _snapshot(self, attachment: Mapping[str, Any], line: int) -> None:
        if self.current is not None and self.current.source != SNAPSHOT:
            return  # the requests' own record is exact
        sections = attachment.get("systemPrompt")
        if isinstance(sections, list) and all(isinstance(text, str) for text in sections):
            self._sections = (SECTION_SEPARATOR.join(sections),)
        elif sections is not None:
            self._sections = None if sections == "[redacted]" else _system_texts(sections)
        prefix = attachment.get("cliPrefix")
        if prefix is not None:
            self._prefix = prefix if isinstance(prefix, str) and prefix != "[redacted]" else None
        tools = attachment.get("tools")
        if tools is not None:
            sent = _sent_tools(tools)
            self._tools = None if sent is None else tuple(_snapshot_tool(tool) for tool in sent)
        if self._sections is None or self._tools is None:
            return
        system = (self._prefix, *self._sections) if self._prefix else self._sections
        self.current = PromptParts(system, self._tools, SNAPSHOT, line)

    def names_other_shape(self, raw: bytes) -> bool:
        """Whether an ``api-request`` line (raw) names a shape other than the current one (one
        that carries its own system prompt, ``SYSTEM_KEY``, changes ``current`` too)."""
        digest = self.current_hash
        return b'"shapeHash"' in raw and (digest is None or digest.encode() not in raw)
