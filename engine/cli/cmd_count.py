"""``ctxtop count``: tokens of a text file, or of a JSON list of chat messages."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ctxtop.engine.errors import CtxtopError, InputError
from ctxtop.engine.models.registry import lookup
from ctxtop.engine.safety.input_limits import read_text
from ctxtop.engine.tokens.chat import count_chat
from ctxtop.engine.tokens.encoding import ALIASES, ENCODINGS, get_encoding


def _messages(text: str, path: str) -> tuple[list[Any], list[Any]]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(path, f"invalid JSON ({error.msg})", error.lineno) from None
    except RecursionError:
        raise InputError(path, "invalid JSON (nested too deeply)") from None
    tools: list[Any] = []
    if isinstance(document, dict):
        tools = document.get("tools") or []
        document = document.get("messages")
        if not isinstance(tools, list):
            raise InputError(path, '"tools" must be a list of tool definitions')
    if not isinstance(document, list) or not all(isinstance(m, dict) for m in document):
        raise InputError(path, 'expected a JSON list of messages or {"messages": [...]}')
    return document, tools


def run(args: argparse.Namespace) -> int:
    model_info = lookup(args.model) if args.model else None
    if args.encoding:
        encoding_name = ALIASES.get(args.encoding, args.encoding)
    elif model_info is not None:
        encoding_name = model_info.encoding
    else:
        encoding_name = "o200k_base"
    if encoding_name not in ENCODINGS:
        raise CtxtopError(f"unknown encoding {args.encoding!r}; use {' or '.join(ENCODINGS)}")
    encoding = get_encoding(encoding_name)
    text = read_text(args.file)
    result: dict[str, Any] = {
        "encoding": encoding_name,
        "model": model_info.model if model_info else None,
        "model_known": None if model_info is None else not model_info.assumed,
        "exact": model_info.tokenizer_exact if model_info else True,
    }
    if args.messages:
        messages, tools = _messages(text, args.file)
        provider = model_info.provider if model_info else "openai"
        try:
            chat = count_chat(messages, encoding.count, tools, provider)
        except RecursionError:
            raise InputError(args.file, "a message is nested too deeply to count") from None
        result.update(
            tokens=chat.total,
            messages=len(messages),
            per_message=list(chat.messages),
            tool_definitions=chat.tools,
        )
    else:
        result["tokens"] = encoding.count(text)
    if args.json:
        print(json.dumps(result))
    else:
        note = "" if result["exact"] else f" (estimate: {result['model']} uses another tokenizer)"
        print(f"{result['tokens']} tokens ({encoding_name}){note}")
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("count", help="count the tokens of a file or chat")
    parser.add_argument("file", nargs="?", default="-", help="a text file, or - for stdin")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--model", help="count with this model's encoding (see ctxtop models)")
    group.add_argument("--encoding", help="o200k_base or cl100k_base")
    parser.add_argument(
        "--messages", action="store_true", help="the file is a JSON list of chat messages"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)
