"""Tokenizer benchmark: cold throughput, and re-counting a 1M-token chat through the disk cache.

Prints figures; it asserts nothing. Run: python bench/tokens.py

The chat is counted twice, each time in a fresh process as when ctxtop re-opens a session: the
first with empty caches (the encoder loads and every message is encoded), the second with the
persistent cache the first one left behind.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxtop.engine.tokens import get_encoding

WORDS = [
    "the",
    "context",
    "window",
    "holds",
    "every",
    "message",
    "tool",
    "result",
    "and",
    "schema",
    "the",
    "model",
    "reads",
    "so",
    "a",
    "long",
    "session",
    "fills",
    "it",
    "until",
    "the",
    "agent",
    "compacts",
    "what",
    "came",
    "before",
    "into",
    "a",
    "summary",
]
CODE = '''def handle_{n}(request, *, retries=3):
    """Fetch {n} and retry on timeouts."""
    for attempt in range(retries):
        try:
            return client.get(f"/items/{{request.id}}/{n}", timeout=2.5)
        except TimeoutError as error:
            log.warning("attempt %d failed: %s", attempt, error)
    raise RuntimeError("gave up on {n}")
'''

COUNT_ONCE = """
import json, sys, time
start = time.perf_counter()
from ctxtop.engine.tokens.cache import CachedCounter, default_disk_cache
from ctxtop.engine.tokens.chat import count_chat
messages = json.load(open(sys.argv[1]))
loaded = time.perf_counter()
counter = CachedCounter("o200k_base", default_disk_cache())
total = count_chat(messages, counter.count, (), "openai", counter.count_batch).total
done = time.perf_counter()
load = counter.encoding.load_seconds if counter._encoding is not None else 0.0
print(json.dumps({"total": total, "seconds": done - loaded, "encoded": counter.encoded_texts,
                  "encoder_load": load}))
"""


def sample_text(rng: random.Random, approx_chars: int) -> str:
    chunks: list[str] = []
    size = 0
    while size < approx_chars:
        if rng.random() < 0.5:
            chunk = CODE.format(n=rng.randrange(10**6))
        else:
            chunk = " ".join(rng.choice(WORDS) for _ in range(60)) + ".\n"
        chunks.append(chunk)
        size += len(chunk)
    return "".join(chunks)


def chat_of_tokens(target_tokens: int, rng: random.Random) -> list[dict[str, object]]:
    encoding = get_encoding("o200k_base")
    messages: list[dict[str, object]] = [{"role": "system", "content": sample_text(rng, 8000)}]
    total = 0
    index = 0
    while total < target_tokens:
        index += 1
        call_id = f"call_{index}"
        args = json.dumps({"path": f"src/module_{index}.py", "limit": 400})
        body = sample_text(rng, 1800)
        messages.append({"role": "user", "content": sample_text(rng, 200)})
        function = {"name": "read_file", "arguments": args}
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": body})
        total += encoding.count(body) + 60
    return messages


def count_in_fresh_process(chat: Path, cache: Path) -> dict[str, float]:
    env = {**os.environ, "CTXTOP_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", COUNT_ONCE, str(chat)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    result: dict[str, float] = json.loads(out)
    return result


def main() -> None:
    rng = random.Random(7)
    encoding = get_encoding("o200k_base")
    text = sample_text(rng, 8_000_000)
    mb = len(text.encode()) / 1e6
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        tokens = encoding.count(text)
        runs.append(time.perf_counter() - start)
    print(
        f"cold tokenization (o200k_base): {mb:.1f} MB -> {tokens:,} tokens, "
        f"{mb / min(runs):.1f} MB/s best of 3, {mb / statistics.median(runs):.1f} MB/s median"
    )

    messages = chat_of_tokens(1_000_000, rng)
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / "chat.json"
        chat.write_text(json.dumps(messages))
        cache = Path(tmp) / "cache"
        first = count_in_fresh_process(chat, cache)
        seconds = [count_in_fresh_process(chat, cache) for _ in range(3)]
    second = min(seconds, key=lambda r: r["seconds"])
    assert first["total"] == second["total"]
    print(f"1M-token chat: {len(messages):,} messages, {int(first['total']):,} tokens")
    for label, result in (
        ("first count, empty caches", first),
        ("second count, persistent cache", second),
    ):
        print(
            f"  {label:<31} {result['seconds'] * 1000:8.1f} ms "
            f"({int(result['encoded']):,} texts encoded)"
        )
    print(f"  (the first includes loading the encoder: {first['encoder_load'] * 1000:.0f} ms)")
    print(
        f"  speed-up: {first['seconds'] / second['seconds']:.0f}x (target >= 50x); "
        f"{(first['seconds'] - first['encoder_load']) / second['seconds']:.0f}x "
        "against the encoding work alone"
    )


if __name__ == "__main__":
    main()
