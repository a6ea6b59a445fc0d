"""Tokenizers of the renderer, with the counting rules of ptsx-oracle FORMAT.md.

``words``: tokens are runs of non-whitespace; a message costs 3 plus its parts, name and tool calls
(Raw output mode). ``o200k`` / ``cl100k``: BPE counts; a message costs 3 plus the tokens of every
non-empty string in its OpenAI form plus 1 per ``name`` key (OpenAI output mode). Messages are the
library's Raw shape as plain dicts (see materialized.py ``to_raw_message``).
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import blake2b
from typing import Any, Protocol

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.render.jstext import js_truthy, word_count
from ctxtop.engine.render.openai_form import ROLE_NAMES, to_openai_message

TEXT, IMAGE, OPAQUE, BREAKPOINT, DOCUMENT = 1, 0, 2, 3, 4  # Raw.ChatCompletionContentPartKind
TOKENIZERS = ("words", "o200k", "cl100k")
# Per-text counts are kept for the whole process; past this many entries the table starts over.
TEXT_CACHE_LIMIT = 500_000
CALL_KEYS = {"name", "arguments"}  # a tool call's function, as the phase builds it


class Tokenizer(Protocol):
    name: str
    openai_mode: bool

    def text_tokens(self, text: str) -> int: ...

    def part_tokens(self, part: dict[str, Any]) -> int: ...

    def message_tokens(self, message: dict[str, Any]) -> int: ...


class WordsTokenizer:
    name = "words"
    openai_mode = False
    per_image = 10
    per_document = 10

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def text_tokens(self, text: str) -> int:
        counts = self._counts
        found = counts.get(text)
        if found is None:
            if len(counts) >= TEXT_CACHE_LIMIT:
                counts.clear()
            found = counts[text] = word_count(text)
        return found

    def part_tokens(self, part: dict[str, Any]) -> int:
        kind = part["type"]
        if kind == TEXT:
            return self.text_tokens(part["text"])
        if kind == IMAGE:
            return self.per_image
        if kind == DOCUMENT:
            return self.per_document
        return 0

    def message_tokens(self, message: dict[str, Any]) -> int:
        total = 3
        for part in message["content"]:
            kind = part["type"]
            if kind == TEXT:
                total += self.text_tokens(part["text"])
            elif kind == IMAGE:
                total += self.per_image
            elif kind == DOCUMENT:
                total += self.per_document
            elif kind == OPAQUE:
                total += part.get("tokenUsage") or 0
        if message.get("name"):
            total += 1 + word_count(message["name"])
        for call in message.get("toolCalls") or ():
            function = call["function"]
            total += 3 + word_count(function.get("name") or "")
            total += word_count(function.get("arguments") or "")
        if message.get("toolCallId"):
            total += 1
        return total


class BpeTokenizer:
    """o200k / cl100k with a per-text count table (literals, chunks and messages recur)."""

    openai_mode = True

    def __init__(self, name: str) -> None:
        self.name = name
        self._encoding: Any = None  # loaded on the first text no count is known for
        self._counts: dict[str, int] = {}
        # Counts remembered from an earlier render of the same tree by a digest of the text
        # (those of the tree's listed texts are preset instead), and the texts this render had
        # to encode (see engine/render/count_memory.py).
        self.known: dict[bytes, int] = {}
        self.learned: dict[str, int] = {}

    @staticmethod
    def text_digest(text: str) -> bytes:
        """What a text's remembered count is found by (the entry names the tokenizer)."""
        return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def _encode_count(self, text: str) -> int:
        found = self.known.get(self.text_digest(text)) if self.known else None
        if found is None:
            if self._encoding is None:
                from ctxtop.engine.tokens.encoding import get_encoding

                self._encoding = get_encoding(self.name)
            found = self.learned[text] = self._encoding.count(text)
        return int(found)

    def preset(self, texts: list[str], counts: Sequence[int]) -> None:
        """Counts known for ``texts`` (-1: not known), taken as if counted."""
        table = self._counts
        for text, count in zip(texts, counts, strict=True):
            if count >= 0:
                table[text] = count

    def counts_of(self, texts: list[str]) -> list[int]:
        """The counts of ``texts`` this process knows (-1 where none)."""
        table = self._counts
        return [table.get(text, -1) for text in texts]

    def text_tokens(self, text: str) -> int:
        if not text:
            return 0
        counts = self._counts
        found = counts.get(text)
        if found is None:
            if len(counts) >= TEXT_CACHE_LIMIT:
                counts.clear()
            found = counts[text] = self._encode_count(text)
        return found

    def part_tokens(self, part: dict[str, Any]) -> int:
        return self.text_tokens(part["text"]) if part["type"] == TEXT else 0

    def message_tokens(self, message: dict[str, Any]) -> int:
        texts: list[str] = []
        for part in message["content"]:
            if part["type"] != TEXT:
                return self._openai_tokens(to_openai_message(message))
            texts.append(part["text"])
        # Text only (the usual message): every role's OpenAI content is the joined text, so
        # the form is not built; counted as _openai_tokens counts it (same sum as the walk).
        text = self.text_tokens
        content = "".join(texts)
        role = message["role"]
        if role == 2:
            if js_truthy(message.get("name")):
                return self._openai_tokens(to_openai_message(message))
            total = 3 + text("assistant") + text(content)
            for call in message.get("toolCalls") or ():
                total += self._call_tokens(call)
            return total
        if role == 0 or role == 1:
            total = 3 + text(ROLE_NAMES[role]) + text(content)
            name = message.get("name")
            if js_truthy(name):
                total += self._value_tokens(name) + 1
            return total
        total = 3 + text("tool") + text(content)  # any other role is a tool message's
        call_id = message.get("toolCallId")
        if js_truthy(call_id):
            total += self._value_tokens(call_id)
        return total

    def _openai_tokens(self, openai: dict[str, Any]) -> int:
        """A message in OpenAI form: 3, plus FORMAT.md's count of its strings and names."""
        content = openai["content"]
        if isinstance(content, str) and openai["role"] != "assistant":
            # the common shape, counted directly (same sum as the generic walk)
            text = self.text_tokens
            total = 3 + text(openai["role"]) + text(content)
            name = openai.get("name")
            if js_truthy(name):
                total += self._value_tokens(name) + 1
            call_id = openai.get("tool_call_id")
            if js_truthy(call_id):
                total += self._value_tokens(call_id)
            return total
        if openai["role"] == "assistant" and not js_truthy(openai["name"]):
            # an agent's tool-calling message, counted directly (same sum as the generic walk)
            text = self.text_tokens
            total = 3 + text("assistant") + text(content)
            calls = openai["tool_calls"]
            if calls is not None:
                for call in calls:
                    total += self._call_tokens(call)
            return total
        return 3 + self._walk(openai)

    def _call_tokens(self, call: dict[str, Any]) -> int:
        """One tool call ``{id, function: {name, arguments}, type}`` as the OpenAI form has it
        (``type`` "function"; a Raw call's other keys are not read): strings counted, plus one
        for the function's non-empty ``name`` key (as ``_walk`` counts it)."""
        call_id, function = call["id"], call["function"]
        if not (
            isinstance(call_id, str)
            and type(function) is dict
            and function.keys() == CALL_KEYS
            and isinstance(function["name"], str)
            and isinstance(function["arguments"], str)
        ):
            return self._walk([{"id": call_id, "function": function, "type": "function"}])
        name, arguments = function["name"], function["arguments"]
        text = self.text_tokens
        return text(call_id) + (text(name) + 1 if name else 0) + text(arguments) + text("function")

    def _value_tokens(self, value: Any) -> int:
        """A JSON value as ``_walk`` counts its items: a string's tokens, an object's or array's
        strings, nothing for a number or boolean."""
        if isinstance(value, str):
            return self.text_tokens(value)
        return self._walk(value) if isinstance(value, dict | list) else 0

    def _walk(self, value: Any) -> int:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        total = 0
        for key, item in items:
            if not js_truthy(item):
                continue
            if isinstance(item, str):
                total += self.text_tokens(item)
            elif isinstance(item, dict | list):
                total += self._walk(item)
            if key == "name":
                total += 1
        return total


_shared: dict[str, Tokenizer] = {}
_bare: dict[tuple[str, int], int] = {}


def bare_message_tokens(tokenizer: Tokenizer, role: int) -> int:
    """Tokens of a message of ``role`` with no text, name, tool calls or call id: the same
    for every such message (a user message's share before its text), so counted once."""
    key = (tokenizer.name, role)
    found = _bare.get(key)
    if found is None:
        found = _bare[key] = tokenizer.message_tokens({"role": role, "content": []})
    return found


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called ``name`` (words, o200k, cl100k), one instance per process."""
    found = _shared.get(name)
    if found is None:
        if name == "words":
            found = WordsTokenizer()
        elif name in ("o200k", "cl100k"):
            found = BpeTokenizer(name)
        else:
            raise CtxtopError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")
        _shared[name] = found
    return found
