"""Token counts of a tree's texts remembered between renders of the same tree.

Rendering one tree at several budgets is the common use of ``ctxtop render``; loading the BPE
encoder and encoding every text again is most of a run's time. The counts are kept in ctxtop's
token-count cache (engine/tokens/cache.py) as one entry per tree and tokenizer, keyed by a
digest of the tree, and hold only text digests and counts, never the text itself. A text whose
count is not remembered is encoded as before, so a count can never differ: the tree's digest
only finds the entry, each count is taken by its own text's digest (``text_digest``).
"""

from __future__ import annotations

import hashlib
import marshal
from array import array
from typing import Any

from ctxtop.engine.render.tokenizers import BpeTokenizer, Tokenizer
from ctxtop.engine.tokens.cache import default_disk_cache

_FORMAT = b"render-counts-2"
_DIGEST = 16  # bytes of a text digest (BpeTokenizer.text_digest)
_COUNT = array("q").itemsize


def tree_identity(data: Any) -> bytes:
    """What a parsed tree is known by: its marshal form (version 2 writes no back-references,
    so the bytes depend only on the values), in a third of the time of writing it as JSON."""
    return marshal.dumps(data, 2)


def _key(tokenizer: str, tree: bytes) -> bytes:
    # sha256: about twice blake2b's speed on megabytes where the CPU has SHA instructions
    digest = hashlib.sha256(_FORMAT)
    digest.update(tokenizer.encode() + b"\0")
    digest.update(tree)
    return digest.digest()[:16]


def _pack(counts: dict[bytes, int]) -> bytes:
    """The digests one after the other, then the counts (8-byte integers) in the same order."""
    return b"".join(counts) + array("q", counts.values()).tobytes()


def _unpack(stored: bytes) -> dict[bytes, int]:
    entries, rest = divmod(len(stored), _DIGEST + _COUNT)
    if rest:
        return {}  # a damaged entry is worked out again
    split = entries * _DIGEST
    counts = array("q")
    counts.frombytes(stored[split:])
    keys = [stored[start : start + _DIGEST] for start in range(0, split, _DIGEST)]
    return dict(zip(keys, counts, strict=True))


def recall(tokenizer: Tokenizer, tree: bytes) -> None:
    """Give a BPE tokenizer the counts remembered for this tree (if any); ``tree``: the tree
    file's bytes or ``tree_identity`` of parsed data."""
    if not isinstance(tokenizer, BpeTokenizer):
        return
    tokenizer.known, tokenizer.learned = {}, {}
    stored = default_disk_cache().get_blob(_key(tokenizer.name, tree))
    if stored is not None:
        tokenizer.known = _unpack(stored)


def remember(tokenizer: Tokenizer, tree: bytes) -> None:
    """Keep the counts this render worked out, when there are new ones."""
    if not isinstance(tokenizer, BpeTokenizer) or not tokenizer.learned:
        return
    if tokenizer.learned.keys() <= tokenizer.known.keys():
        return
    counts = {**tokenizer.known, **tokenizer.learned}
    default_disk_cache().put_blob(_key(tokenizer.name, tree), _pack(counts))
