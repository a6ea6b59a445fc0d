"""Token counts of a tree's texts remembered between renders of the same tree.

Rendering one tree at several budgets is the common use of ``ctxtop render``; loading the BPE
encoder and encoding every text again is most of a run's time. The counts are kept in ctxtop's
token-count cache (engine/tokens/cache.py) as one entry per tree and tokenizer, keyed by a
digest of the tree, and hold only counts and text digests, never the text itself:

- the counts of the tree's listed texts (``TreeDocument.texts``: TextChunk texts, tool call ids
  and arguments) by their place in the list: the entry is the exact tree's, so the same texts
  come in the same order (their number and length are checked too);
- the count of any other text (messages joined, role names) by a digest of the text
  (``text_digest``).

A text whose count is not remembered is encoded as before, so a count can never differ.
"""

from __future__ import annotations

import hashlib
import marshal
from array import array
from typing import Any

from ctxtop.engine.render.tokenizers import BpeTokenizer, Tokenizer
from ctxtop.engine.tokens.cache import default_disk_cache

# Bump when TreeDocument.texts lists other texts or another order.
_FORMAT = b"render-counts-3"
_DIGEST = 16  # bytes of a text digest (BpeTokenizer.text_digest)
_COUNT = array("q").itemsize
_HEADER = 2  # counts before the listed texts' counts: how many texts, their characters


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


def _pack(texts: list[str], counts: list[int], others: dict[bytes, int]) -> bytes:
    """How many listed texts and their characters, their counts (-1: none), then the other
    texts' digests one after the other and their counts in the same order (8-byte integers)."""
    listed = array("q", [len(texts), sum(map(len, texts)), *counts])
    return listed.tobytes() + b"".join(others) + array("q", others.values()).tobytes()


def _unpack(stored: bytes, texts: list[str]) -> tuple[array[int] | None, dict[bytes, int]]:
    """The listed texts' counts (None unless stored for these texts) and the others'."""
    header = array("q")
    header.frombytes(stored[: _HEADER * _COUNT])
    if len(header) < _HEADER or header[0] < 0:
        return None, {}  # a damaged entry is worked out again
    split = (_HEADER + header[0]) * _COUNT
    listed = array("q")
    listed.frombytes(stored[_HEADER * _COUNT : split])
    entries, rest = divmod(len(stored) - split, _DIGEST + _COUNT)
    if len(listed) != header[0] or rest:
        return None, {}
    middle = split + entries * _DIGEST
    counts = array("q")
    counts.frombytes(stored[middle:])
    keys = [stored[start : start + _DIGEST] for start in range(split, middle, _DIGEST)]
    same = header[0] == len(texts) and header[1] == sum(map(len, texts))
    return (listed if same else None), dict(zip(keys, counts, strict=True))


def recall(tokenizer: Tokenizer, tree: bytes, texts: list[str]) -> None:
    """Give a BPE tokenizer the counts remembered for this tree (if any); ``tree``: the tree
    file's bytes, its JSON text or ``tree_identity`` of parsed data; ``texts``: its document's
    listed texts."""
    if not isinstance(tokenizer, BpeTokenizer):
        return
    tokenizer.known, tokenizer.learned = {}, {}
    stored = default_disk_cache().get_blob(_key(tokenizer.name, tree))
    if stored is not None:
        listed, tokenizer.known = _unpack(stored, texts)
        if listed is not None:
            tokenizer.preset(texts, listed)


def remember(tokenizer: Tokenizer, tree: bytes, texts: list[str]) -> None:
    """Keep the counts this render worked out, when there are new ones."""
    if not isinstance(tokenizer, BpeTokenizer) or not tokenizer.learned:
        return
    listed = set(texts)
    others = dict(tokenizer.known)
    for text, count in tokenizer.learned.items():
        if text not in listed:
            others[tokenizer.text_digest(text)] = count
    stored = _pack(texts, tokenizer.counts_of(texts), others)
    default_disk_cache().put_blob(_key(tokenizer.name, tree), stored)
