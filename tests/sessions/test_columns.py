"""The packed columns a long session keeps its settled history in (engine/sessions/columns.py):
whatever goes in comes out the same, and a key finds its rows as the buckets grow."""

from __future__ import annotations

import random

from engine.sessions.columns import KeyIndex, TextColumn


def test_texts_come_back_as_they_went_in() -> None:
    texts = ["", "toolu_01ABC", None, "ünïcödé ✓", "\ud800 lone surrogate", "", None, "x" * 5000]
    column = TextColumn()
    for text in texts:
        column.append(text)
    assert len(column) == len(texts)
    assert [column[row] for row in range(len(texts))] == texts


def test_a_key_finds_its_rows_as_the_index_grows() -> None:
    generator = random.Random(16)
    keys = [f"toolu_{generator.getrandbits(96):024x}" for _ in range(30_000)]
    index = KeyIndex()
    for row, key in enumerate(keys):
        index.add(key, row)
    assert all(row in index.rows(key) for row, key in enumerate(keys))
    assert not any(list(index.rows(f"other_{n}")) for n in range(2_000))
    index.add(keys[5], 99_999)  # the same key again: both rows, oldest first
    assert list(index.rows(keys[5])) == [5, 99_999]
    index.remove(keys[5], 5)
    assert list(index.rows(keys[5])) == [99_999]
    assert list(index.rows(keys[6])) == [6]
