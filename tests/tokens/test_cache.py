"""Counts are remembered in memory and on disk, so re-opening a session does not re-tokenize."""

from __future__ import annotations

from pathlib import Path

from ctxtop.engine.tokens import get_encoding
from ctxtop.engine.tokens.cache import CachedCounter, DiskCache, LRUCache, content_digest

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
