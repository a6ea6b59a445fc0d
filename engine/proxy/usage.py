"""The usage a model's answer reports, read from a copy of the bytes as they pass (never
holding them back): SSE ``data:`` lines that mention usage, or the whole JSON body when the
answer is not streamed. Normalised to the prompt's total, its cache reads and writes, and the
output."""

from __future__ import annotations

import json
from typing import Any

# A non-streamed answer is kept (for its usage) up to this size.
JSON_KEEP_LIMIT = 16 * 1024 * 1024
# A streamed line is kept until its end up to this size (an OpenAI ``response.completed``
# event holds the whole answer besides its usage); a longer one is skipped, its usage unread.
LINE_KEEP_LIMIT = 16 * 1024 * 1024
DATA = b"data:"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _usage_in(protocol: str, event: Any) -> dict[str, Any] | None:
    if not isinstance(event, dict):
        return None
    if protocol == "gemini":
        found = event.get("usageMetadata")
    else:
        holder = event.get("message") if protocol == "anthropic" else event.get("response")
        found = holder.get("usage") if isinstance(holder, dict) else None
        found = found or event.get("usage")
    return found if isinstance(found, dict) else None


def normalized(protocol: str, raw: dict[str, Any]) -> dict[str, int]:
    """``input_tokens`` (the whole prompt, cached parts included), ``cache_read_tokens``,
    ``cache_write_tokens``, ``output_tokens``."""
    if protocol == "anthropic":
        read, write = (
            _int(raw.get("cache_read_input_tokens")),
            _int(raw.get("cache_creation_input_tokens")),
        )
        prompt, output = (
            _int(raw.get("input_tokens")) + read + write,
            _int(raw.get("output_tokens")),
        )
    elif protocol == "gemini":
        read, write = _int(raw.get("cachedContentTokenCount")), 0
        prompt = _int(raw.get("promptTokenCount"))
        output = _int(raw.get("candidatesTokenCount")) + _int(raw.get("thoughtsTokenCount"))
    else:
        chat = protocol == "openai-chat"
        details = raw.get("prompt_tokens_details" if chat else "input_tokens_details")
        read = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        write = 0
        prompt = _int(raw.get("prompt_tokens" if chat else "input_tokens"))
        output = _int(raw.get("completion_tokens" if chat else "output_tokens"))
    return {
        "input_tokens": prompt,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
        "output_tokens": output,
    }


def reported_prompt(usage: Any) -> int | None:
    """The whole prompt a measurement line's ``usage`` (``normalized``) says the model
    received: its ``input_tokens``, which already hold the cache reads and writes."""
    prompt = usage.get("input_tokens") if isinstance(usage, dict) else None
    return prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None


class UsageScanner:
    """Fed each chunk after it was sent on; ``usage`` is what the answer reported (empty when
    it reported none).

    Linear in the answer and bounded in memory: each chunk is looked at once, and only the
    unfinished line is kept between chunks, and only while it may still be an SSE ``data:``
    line of at most ``LINE_KEEP_LIMIT`` bytes (a 63 MB answer without a newline used to be
    joined again on every chunk: 18 s through the proxy)."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self._line = bytearray()  # the unfinished line, while it may be a data: line
        self._skipping = False  # the unfinished line is not kept (not data:, or too long)
        self._whole = bytearray()  # a JSON answer (not streamed), up to JSON_KEEP_LIMIT
        self._too_big = False
        self._streamed = False
        self._raw: dict[str, Any] = {}

    def feed(self, chunk: bytes) -> None:
        if not self._streamed and not self._too_big:
            if len(self._whole) + len(chunk) <= JSON_KEEP_LIMIT:
                self._whole += chunk
            else:  # too big to be read for its usage: not kept at all
                self._too_big = True
                self._whole = bytearray()
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self._line or self._skipping:  # the line began in an earlier chunk
                self._keep(chunk[start:end])
                line = b"" if self._skipping else bytes(self._line)
                self._line.clear()
                self._skipping = False
            else:
                line = chunk[start:end]
            self._scan(line)
            start = end + 1
        if start < len(chunk):
            self._keep(chunk[start:])

    def _keep(self, piece: bytes) -> None:
        """Add ``piece`` to the unfinished line, unless the line cannot be a usage line."""
        if self._skipping:
            return
        if len(self._line) + len(piece) <= LINE_KEEP_LIMIT:
            self._line += piece
            head = bytes(self._line[:5])
            if head == DATA:
                self._stream_seen()
            if head == DATA[: len(head)]:
                return
        self._skipping = True
        self._line = bytearray()

    def _stream_seen(self) -> None:
        """An SSE ``data:`` line: the answer is streamed, not one JSON body."""
        self._streamed = True
        self._whole = bytearray()

    def _scan(self, line: bytes) -> None:
        if line.startswith(DATA):
            self._stream_seen()
            if b"sage" in line:  # usage / usageMetadata: only those lines are decoded
                self._take(line[5:])

    def _take(self, data: bytes) -> None:
        try:
            event = json.loads(data)
        except ValueError:
            return
        events = event if isinstance(event, list) else [event]  # Gemini's JSON array
        for item in events:
            found = _usage_in(self.protocol, item)
            if found:
                # Anthropic reports the prompt at the start and the output at the end.
                self._raw.update({k: v for k, v in found.items() if v is not None})

    @property
    def usage(self) -> dict[str, int]:
        if not self._streamed and self._whole:
            self._take(bytes(self._whole))
            self._whole.clear()
        return normalized(self.protocol, self._raw) if self._raw else {}
