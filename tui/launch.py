"""Opening the dashboard.

The Textual dashboard is not built yet; until it is, ``ctxtop --demo`` prints a text report of a
bundled sample chat and ``ctxtop SESSION`` says what to run instead.
"""

from __future__ import annotations

import argparse
import json
from importlib import resources

from engine.tokens import get_encoding
from engine.tokens.chat import count_chat

DEMO_SESSION = ("openai-messages", "demo-chat.json")


def _demo_report() -> str:
    text = resources.files("sample_sessions").joinpath(*DEMO_SESSION).read_text("utf-8")
    messages = json.loads(text)
    encoding = get_encoding("o200k_base")
    counts = count_chat(messages, encoding.count)
    lines = [f"ctxtop demo: {'/'.join(DEMO_SESSION)} ({encoding.name}, estimated)", ""]
    for message, tokens in zip(messages, counts.messages, strict=True):
        role = message["role"]
        calls = ", ".join(c["function"]["name"] for c in message.get("tool_calls") or [])
        label = f"{role} -> {calls}" if calls else role
        lines.append(f"  {tokens:>6,}  {label}")
    lines.append(f"  {counts.total:>6,}  total (estimated)")
    reported = [m["usage"]["prompt_tokens"] for m in messages if m.get("usage")]
    if reported:
        lines.append(f"  {reported[-1]:>6,}  last prompt size reported by the API")
    return "\n".join(lines)


def run_dashboard(args: argparse.Namespace) -> int:
    if args.demo:
        print(_demo_report())
        return 0
    print("The live dashboard is not built yet: try `ctxtop --demo` or `ctxtop count FILE`.")
    return 0
