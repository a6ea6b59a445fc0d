"""Token counts cached by content digest: an in-memory LRU and a persistent on-disk table.

Re-opening a session must not re-tokenize messages that did not change. Counts are keyed by a
digest of (encoding, text), so a cached count can never be served for other text or another
encoding. The disk table lives in the user cache dir; if it cannot be opened or written, counting
goes on in memory only.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from ctxtop.engine.paths import cache_dir
from ctxtop.engine.tokens.encoding import Encoding, get_encoding

LRU_ENTRIES = 5000
# Encoding a short text is cheaper than a disk look-up (about 5 us either way at 64 chars on
# the 2-core target), so only longer texts go to disk.
DISK_MIN_CHARS = 64
# SQLite's default limit on host parameters per statement is 999 on older builds.
DISK_BATCH = 900
DISK_FILE_NAME = "token-counts.sqlite3"


def content_digest(*parts: str) -> bytes:
    """A 16-byte digest of the parts (joined unambiguously)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.digest()


class LRUCache:
    """A small least-recently-used map from digest to count."""

    def __init__(self, capacity: int = LRU_ENTRIES) -> None:
        self.capacity = capacity
        self._items: OrderedDict[bytes, int] = OrderedDict()

    def get(self, key: bytes) -> int | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: bytes, value: int) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class DiskCache:
    """A persistent digest -> count table in SQLite."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, check_same_thread=False, timeout=2.0)
            db.execute(
                "CREATE TABLE IF NOT EXISTS counts (key BLOB PRIMARY KEY, tokens INTEGER NOT NULL)"
                " WITHOUT ROWID"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS blobs (key BLOB PRIMARY KEY, value BLOB NOT NULL)"
            )
            db.commit()
            self._db = db
        except (OSError, sqlite3.Error):
            self._db = None

    @property
    def available(self) -> bool:
        return self._db is not None

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, int]:
        found: dict[bytes, int] = {}
        if self._db is None or not keys:
            return found
        with self._lock:
            try:
                for start in range(0, len(keys), DISK_BATCH):
                    chunk = keys[start : start + DISK_BATCH]
                    marks = ",".join("?" * len(chunk))
                    rows = self._db.execute(
                        f"SELECT key, tokens FROM counts WHERE key IN ({marks})", chunk
                    )
                    found.update((bytes(key), int(tokens)) for key, tokens in rows)
            except sqlite3.Error:
                return {}
        return found

    def put_many(self, items: Sequence[tuple[bytes, int]]) -> None:
        if self._db is None or not items:
            return
        with self._lock:
            try:
                self._db.executemany("INSERT OR REPLACE INTO counts VALUES (?, ?)", items)
                self._db.commit()
            except sqlite3.Error:
                self._db.rollback()

    def get_blob(self, key: bytes) -> bytes | None:
        if self._db is None:
            return None
        with self._lock:
            try:
                row = self._db.execute("SELECT value FROM blobs WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error:
                return None
        return None if row is None else bytes(row[0])

    def put_blob(self, key: bytes, value: bytes) -> None:
        if self._db is None:
            return
        with self._lock:
            try:
                self._db.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?)", (key, value))
                self._db.commit()
            except sqlite3.Error:
                self._db.rollback()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class CachedCounter:
    """Counts text with an encoding, remembering counts in memory and on disk.

    The encoding is loaded only when a count is not cached: re-opening a session whose messages
    are all on disk never pays the encoder's start-up cost.
    """

    def __init__(
        self,
        encoding: Encoding | str,
        disk: DiskCache | None = None,
        lru: LRUCache | None = None,
    ) -> None:
        self._encoding = encoding if isinstance(encoding, Encoding) else None
        self.encoding_name = encoding.name if isinstance(encoding, Encoding) else encoding
        self.disk = disk
        self.lru = lru if lru is not None else LRUCache()
        self.encoded_texts = 0  # how many texts really went through the encoder

    @property
    def encoding(self) -> Encoding:
        if self._encoding is None:
            self._encoding = get_encoding(self.encoding_name)
        return self._encoding

    def _key(self, text: str) -> bytes:
        return content_digest(self.encoding_name, text)

    def count(self, text: str) -> int:
        return self.count_batch([text])[0]

    def __call__(self, text: str) -> int:
        return self.count(text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        keys = [self._key(text) for text in texts]
        results: list[int | None] = [self.lru.get(key) for key in keys]
        missing = [i for i, value in enumerate(results) if value is None]
        if missing and self.disk is not None:
            wanted = [keys[i] for i in missing if len(texts[i]) >= DISK_MIN_CHARS]
            stored = self.disk.get_many(wanted)
            for i in missing:
                results[i] = stored.get(keys[i])
            missing = [i for i in missing if results[i] is None]
        if missing:
            counts = self.encoding.count_batch([texts[i] for i in missing])
            self.encoded_texts += len(missing)
            to_disk = []
            for i, tokens in zip(missing, counts, strict=True):
                results[i] = tokens
                if len(texts[i]) >= DISK_MIN_CHARS:
                    to_disk.append((keys[i], tokens))
            if self.disk is not None:
                self.disk.put_many(to_disk)
        out = [int(value) for value in results if value is not None]
        for key, value in zip(keys, out, strict=True):
            self.lru.put(key, value)
        return out


_disk_lock = threading.Lock()
_default_disk: DiskCache | None = None


def default_disk_cache() -> DiskCache:
    """The shared on-disk cache in the user cache dir (opened once per process)."""
    global _default_disk
    with _disk_lock:
        if _default_disk is None:
            _default_disk = DiskCache(cache_dir() / DISK_FILE_NAME)
        return _default_disk
