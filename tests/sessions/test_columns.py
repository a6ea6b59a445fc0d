"""The packed columns a long session keeps its settled history in (engine/sessions/columns.py):
whatever goes in comes out the same, and a key finds its rows as the buckets grow."""

from __future__ import annotations

import random

from ctxtop.engine.sessions.columns import KeyedRows, TextColumn


def test_texts_come_back_as_they_went_in() -> None:
    texts = ["", "toolu_01ABC", None, "ünïcödé ✓", "\ud800 lone surrogate", "", None, "x" * 5000]
    column = TextColumn()
    for text in texts:
        column.append(text)
    assert len(column) == len(texts)
    assert [column[row] for row in range(len(texts))] == texts


def test_a_key_finds_its_rows_as_the_table_grows() -> None:
    generator = random.Random(16)
    keys = [f"toolu_{generator.getrandbits(96):024x}" for _ in range(30_000)]
    column, index = TextColumn(), KeyedRows()
    for start in range(0, len(keys), 997):  # in batches (responses) and one by one (calls)
        batch = keys[start : start + 997]
        column.extend(batch)
        if start % 2:
            index.extend(batch)
        else:
            for key in batch:
                index.append(key)
    assert all(index.rows(key, column) == [row] for row, key in enumerate(keys))
    assert not any(index.rows(f"other_{n}", column) for n in range(2_000))
    column.append(keys[5])  # the same key again: both rows, oldest first
    index.append(keys[5])
    assert index.rows(keys[5], column) == [5, 30_000]
    assert index.rows(keys[6], column) == [6]
