"""Token counts of a tree's texts remembered between renders of the same tree file.

Rendering one tree at several budgets is the common use of ``ctxtop render``; loading the BPE
encoder and encoding every text again is most of a run's time. The counts are kept in ctxtop's
token-count cache (engine/tokens/cache.py) as one entry per tree file and tokenizer, keyed by a
digest of the file's text, and hold only text digests and counts, never the text itself. A text
whose count is not remembered is encoded as before, so a count can never differ.
"""

from __future__ import annotations

import msgspec

from engine.render.tokenizers import BpeTokenizer, Tokenizer
from engine.tokens.cache import content_digest, default_disk_cache

_FORMAT = "render-counts-1"


def _key(tokenizer: str, tree: str) -> bytes:
    return content_digest(_FORMAT, tokenizer, tree)


def recall(tokenizer: Tokenizer, tree: str) -> None:
    """Give a BPE tokenizer the counts remembered for this tree file (if any)."""
    if not isinstance(tokenizer, BpeTokenizer):
        return
    tokenizer.known, tokenizer.learned = {}, {}
    stored = default_disk_cache().get_blob(_key(tokenizer.name, tree))
    if stored is None:
        return
    try:
        pairs = msgspec.msgpack.decode(stored, type=list[tuple[bytes, int]])
    except msgspec.DecodeError:
        return  # a damaged entry is worked out again
    tokenizer.known = dict(pairs)


def remember(tokenizer: Tokenizer, tree: str) -> None:
    """Keep the counts this render worked out, when there are new ones."""
    if not isinstance(tokenizer, BpeTokenizer) or not tokenizer.learned:
        return
    if tokenizer.learned.keys() <= tokenizer.known.keys():
        return
    counts = {**tokenizer.known, **tokenizer.learned}
    default_disk_cache().put_blob(
        _key(tokenizer.name, tree), msgspec.msgpack.encode(list(counts.items()))
    )
