"""Counts are remembered in memory and on disk, so re-opening a session does not re-tokenize."""

from __future__ import annotations

from pathlib import Path

from engine.tokens import get_encoding
from engine.tokens.cache import CachedCounter, DiskCache, LRUCache, content_digest

LONG = "def handler(event):\n    return process(event)\n" * 20


def test_lru_keeps_the_most_recently_used_entries() -> None:
    lru = LRUCache(capacity=3)
    for i in range(3):
        lru.put(bytes([i]), i)
    assert lru.get(bytes([0])) == 0  # touch 0 so 1 is now the oldest
    lru.put(bytes([9]), 9)
    assert lru.get(bytes([1])) is None
    assert lru.get(bytes([0])) == 0
    assert len(lru) == 3


def test_default_lru_holds_5000_entries() -> None:
    assert LRUCache().capacity == 5000


def test_a_second_counter_reads_counts_from_disk_without_encoding(tmp_path: Path) -> None:
    encoding = get_encoding("o200k_base")
    texts = [LONG + str(i) for i in range(50)]
    first = CachedCounter(encoding, DiskCache(tmp_path / "c.sqlite3"))
    counts = first.count_batch(texts)
    assert first.encoded_texts == 50
    assert counts == [encoding.count(t) for t in texts]

    reopened = CachedCounter(encoding, DiskCache(tmp_path / "c.sqlite3"))
    assert reopened.count_batch(texts) == counts
    assert reopened.encoded_texts == 0


def test_cache_keys_separate_encodings(tmp_path: Path) -> None:
    disk = DiskCache(tmp_path / "c.sqlite3")
    o200k = CachedCounter(get_encoding("o200k_base"), disk)
    cl100k = CachedCounter(get_encoding("cl100k_base"), disk)
    text = "日本語テキスト" * 60
    assert o200k.count(text) == get_encoding("o200k_base").count(text)
    assert cl100k.count(text) == get_encoding("cl100k_base").count(text)
    assert o200k.count(text) != cl100k.count(text)


def test_an_unusable_cache_dir_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    disk = DiskCache(blocker / "c.sqlite3")
    assert not disk.available
    counter = CachedCounter(get_encoding("o200k_base"), disk)
    assert counter.count(LONG) == get_encoding("o200k_base").count(LONG)


def test_digest_is_unambiguous() -> None:
    assert content_digest("ab", "c") != content_digest("a", "bc")


def _chat(n: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = []
    for i in range(n):
        messages.append({"role": "user", "content": f"please read module {i}. " + LONG})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "read", "arguments": f'{{"path": "m{i}.py"}}'},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": LONG * (i + 1)})
    return messages


def test_cached_chat_count_equals_the_plain_count(tmp_path: Path) -> None:
    from engine.tokens.chat import count_chat, count_chat_cached

    encoding = get_encoding("o200k_base")
    messages = _chat(5)
    cached = count_chat_cached(messages, CachedCounter(encoding, DiskCache(tmp_path / "c")))
    assert cached == count_chat(messages, encoding.count)


def test_reopening_an_unchanged_chat_neither_encodes_nor_loads_the_encoder(tmp_path: Path) -> None:
    from engine.tokens.chat import count_chat_cached

    messages = _chat(5)
    first = count_chat_cached(messages, CachedCounter("o200k_base", DiskCache(tmp_path / "c")))
    reopened = CachedCounter("o200k_base", DiskCache(tmp_path / "c"))
    assert count_chat_cached(messages, reopened) == first
    assert reopened.encoded_texts == 0
    assert reopened._encoding is None  # the encoder was never needed


def test_a_grown_chat_encodes_only_its_new_messages(tmp_path: Path) -> None:
    from engine.tokens.chat import chat_texts, count_chat, count_chat_cached

    messages = _chat(6)
    count_chat_cached(messages[:9], CachedCounter("o200k_base", DiskCache(tmp_path / "c")))
    grown = CachedCounter("o200k_base", DiskCache(tmp_path / "c"))
    result = count_chat_cached(messages, grown)
    assert result == count_chat(messages, get_encoding("o200k_base").count)
    # Only the texts of the nine new messages went through the encoder.
    assert grown.encoded_texts == len(chat_texts(messages[9:])) == 12


def test_an_edited_message_is_counted_afresh(tmp_path: Path) -> None:
    from engine.tokens.chat import count_chat_cached

    messages = _chat(3)
    count_chat_cached(messages, CachedCounter("o200k_base", DiskCache(tmp_path / "c")))
    messages[2] = {"role": "tool", "tool_call_id": "c0", "content": "short now"}
    again = CachedCounter("o200k_base", DiskCache(tmp_path / "c"))
    result = count_chat_cached(messages, again)
    assert result.messages[2] == 3 + get_encoding("o200k_base").count("short now")
