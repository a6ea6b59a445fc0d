"""Deterministic synthetic coding-agent prompt tree in the ptsx oracle's JSON format.

The shape follows how an agent prompt is written with prompt-tsx: a system message, the history
of rounds in an ascending PrioritizedList (older rounds get lower priorities, so they are pruned
first), and the current request. A round is a user message, an assistant message with one or two
tool calls, and one tool message per call; every call is tied to its result with a KeepWith group,
so dropping a result drops its call. Inside a round, tool results are pruned before the assistant
text and the user message. Text is code, grep output, test logs and diffs, sized so that the
default 2,000 rounds come to 6,702 messages and 978,666 o200k tokens (as prompt-tsx counts them).

    python bench/agent_tree.py [--rounds N] [--seed S] > tree.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

Node = dict[str, Any]

MODULES = ("billing", "ledger", "auth", "sessions", "search", "export", "reports", "queue")
VERBS = ("load", "parse", "merge", "flush", "render", "validate", "apply", "resolve")
NOUNS = ("invoice", "entry", "token", "batch", "record", "cursor", "payload", "window")
# Tool-result size factor, tuned so 2,000 rounds make about 980k o200k tokens.
SIZE = 1.1
TOOLS = ("read_file", "grep_search", "run_tests", "git_diff")
SYSTEM_RULES = (
    "You are a coding agent working in the user's repository.",
    "Read files before editing them and keep changes small and reviewed.",
    "Run the tests after each change and report failures with their output.",
    "Never invent file contents; quote the lines you rely on.",
    "Prefer the project's existing helpers over new code.",
)


def identifier(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"


def module_path(rng: random.Random) -> str:
    return f"src/{rng.choice(MODULES)}/{rng.choice(NOUNS)}_{rng.randrange(40)}.py"


def python_source(rng: random.Random, functions: int) -> str:
    lines = [f"from {rng.choice(MODULES)}.core import {identifier(rng)}, Settings", ""]
    for _ in range(functions):
        name, arg = identifier(rng), rng.choice(NOUNS)
        lines += [
            f"def {name}({arg}s: list[dict], *, limit: int = {rng.randrange(10, 500)}) -> int:",
            f'    """{name.replace("_", " ").capitalize()} up to limit {arg}s."""',
            "    total = 0",
            f"    for {arg} in {arg}s[:limit]:",
            f"        if {arg}.get('state') == '{rng.choice(NOUNS)}':",
            f"            total += {identifier(rng)}({arg}, retries={rng.randrange(1, 5)})",
            "    return total",
            "",
        ]
    return "\n".join(lines)


def grep_output(rng: random.Random, hits: int) -> str:
    return "\n".join(
        f"{module_path(rng)}:{rng.randrange(1, 900)}:    result = {identifier(rng)}"
        f"({rng.choice(NOUNS)}, limit={rng.randrange(100)})"
        for _ in range(hits)
    )


def test_log(rng: random.Random, tests: int) -> str:
    lines = [f"============ test session starts (seed {rng.randrange(10**6)}) ============"]
    for index in range(tests):
        outcome = "FAILED" if rng.random() < 0.08 else "PASSED"
        percent = (index + 1) * 100 // tests
        name = f"tests/test_{rng.choice(MODULES)}.py::test_{identifier(rng)}"
        lines.append(f"{name} {outcome} [{percent:3d}%]")
        if outcome == "FAILED":
            lines.append(
                f"E   AssertionError: assert {rng.randrange(1000)} == {rng.randrange(1000)}"
            )
    lines.append(f"======= {tests} tests in {rng.uniform(0.5, 30):.2f}s =======")
    return "\n".join(lines)


def git_diff(rng: random.Random, hunks: int) -> str:
    lines = [f"diff --git a/{(path := module_path(rng))} b/{path}"]
    for _ in range(hunks):
        start = rng.randrange(1, 800)
        lines.append(f"@@ -{start},6 +{start},7 @@ def {identifier(rng)}(")
        lines.append(f"-    total = {identifier(rng)}(items)")
        lines.append(f"+    total = {identifier(rng)}(items, limit=limit)")
        lines.append(f"+    log.debug('total %d for %s', total, {rng.choice(NOUNS)!r})")
        lines.append("     return total")
    return "\n".join(lines)


def tool_result(rng: random.Random, tool: str) -> str:
    # Long-tailed sizes: most results are small, a few are whole files or long logs.
    scale = rng.paretovariate(1.6)
    if tool == "read_file":
        return python_source(rng, min(round(SIZE * 1.5 * scale), 60))
    if tool == "grep_search":
        return grep_output(rng, min(round(SIZE * 4 * scale), 200))
    if tool == "run_tests":
        return test_log(rng, min(round(SIZE * 6 * scale), 300))
    return git_diff(rng, min(round(SIZE * 2 * scale), 80))


def tool_arguments(rng: random.Random, tool: str) -> str:
    if tool == "read_file":
        return json.dumps({"path": module_path(rng), "start": 1, "end": rng.randrange(50, 400)})
    if tool == "grep_search":
        return json.dumps({"pattern": identifier(rng), "include": "src/**/*.py"})
    if tool == "run_tests":
        return json.dumps({"path": f"tests/test_{rng.choice(MODULES)}.py", "verbose": True})
    return json.dumps({"path": module_path(rng)})


def text_node(node_id: str, text: str) -> Node:
    return {"type": "textchunk", "id": node_id, "text": text}


def round_node(rng: random.Random, index: int) -> Node:
    prefix = f"r{index}"
    target = identifier(rng)
    user = {
        "type": "user",
        "id": f"{prefix}.user",
        "priority": 30,
        "children": [
            text_node(
                f"{prefix}.ask",
                f"Step {index}: make {target} in {module_path(rng)} respect the new limit "
                f"setting and keep the {rng.choice(NOUNS)} totals unchanged for old callers.",
            )
        ],
    }
    calls: list[Node] = []
    results: list[Node] = []
    for call in range(2 if rng.random() < 0.35 else 1):
        tool = rng.choice(TOOLS)
        call_id = f"call_{index}_{call}"
        group = f"{prefix}.k{call}"
        calls.append(
            {
                "id": call_id,
                "name": tool,
                "arguments": tool_arguments(rng, tool),
                "keepWith": group,
            }
        )
        body = text_node(f"{prefix}.out{call}", tool_result(rng, tool))
        results.append(
            {
                "type": "tool",
                "id": f"{prefix}.tool{call}",
                "priority": 10,
                "toolCallId": call_id,
                "children": [
                    {"type": "keepwith", "id": f"{group}.keep", "group": group, "children": [body]}
                ],
            }
        )
    assistant = {
        "type": "assistant",
        "id": f"{prefix}.assistant",
        "priority": 20,
        "toolCalls": calls,
        "children": [
            text_node(
                f"{prefix}.plan",
                f"I will look at how {target} is called before changing it, "
                f"then check the {rng.choice(MODULES)} tests.",
            )
        ],
    }
    return {"type": "elem", "id": prefix, "children": [user, assistant, *results]}


def agent_tree(rounds: int = 2000, seed: int = 2024) -> Node:
    rng = random.Random(seed)
    system_text = "\n".join(rng.choice(SYSTEM_RULES) for _ in range(120))
    return {
        "description": f"synthetic coding-agent prompt: {rounds} rounds of tool use (seed {seed})",
        "root": [
            {
                "type": "system",
                "id": "system",
                "priority": 1000,
                "children": [text_node("system.text", system_text)],
            },
            {
                "type": "prioritizedlist",
                "id": "history",
                "priority": 500,
                "descending": False,
                "children": [round_node(rng, index) for index in range(rounds)],
            },
            {
                "type": "user",
                "id": "request",
                "priority": 1000,
                "children": [
                    text_node("request.text", "Now run the whole test suite and summarise.")
                ],
            },
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    json.dump(agent_tree(args.rounds, args.seed), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
