"""The encodings ctxtop counts with: o200k_base and cl100k_base through tiktoken's fast encoder."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.tokens.bpe_source import load_rank_file, parse_ranks, ranks_in_line_order

ENCODINGS = ("o200k_base", "cl100k_base")

# Aliases accepted wherever an encoding is named (CLI flags, registry, renderer tokenizers).
ALIASES = {"o200k": "o200k_base", "cl100k": "cl100k_base"}

# A first-paint guess before the encoder has run: about four characters a token in English
# prose and code (OpenAI's rule of thumb); labelled as a character estimate wherever shown.
CHARS_PER_TOKEN = 4
# BPE time grows with the square of a piece's length: a log line of 50 MB without a space (one
# piece) took a minute and 2.6 GB. Texts over LARGE_TEXT characters are counted in slices of at
# most SLICE_CHARS, cut where the encoder's pieces break anyway (before a space that starts a
# word), so the count stays exact but for cuts inside long runs without such a space.
LARGE_TEXT = 1 << 20
SLICE_CHARS = 4096


def slices(text: str) -> list[str]:
    """``text`` in pieces of at most ``SLICE_CHARS``, cut at a piece boundary where one is near."""
    if len(text) <= SLICE_CHARS:
        return [text]
    pieces = []
    start = 0
    while len(text) - start > SLICE_CHARS:
        end = start + SLICE_CHARS
        cut = _boundary(text, start + SLICE_CHARS // 2, end)
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


def _boundary(text: str, low: int, high: int) -> int:
    """The last place in ``(low, high)`` before a space between a non-space and a letter;
    ``high`` if there is none."""
    at = text.rfind(" ", low, high)
    while at > low:
        if text[at + 1].isalpha() and not text[at - 1].isspace():
            return at
        at = text.rfind(" ", low, at)
    return high


def char_estimate(text: str) -> int:
    """The fast character estimate, ``ceil(len / 4)``."""
    return -(-len(text) // CHARS_PER_TOKEN)


class Encoding:
    """A BPE encoding. Special-token text is treated as ordinary text, never as a special token.

    ``core`` is tiktoken's Rust ``CoreBPE``, used directly: tiktoken's Python ``Encoding`` would
    keep the 200,000-entry rank dict alive beside it (about 30 MB for o200k_base).
    """

    def __init__(self, name: str, core: Any, origin: str, load_seconds: float = 0.0) -> None:
        self.name = name
        self.origin = origin
        self.load_seconds = load_seconds
        self._core = core

    def _encode(self, text: str) -> list[int]:
        try:
            tokens: list[int] = self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            # A lone surrogate (a broken \ud83d escape in a log) cannot go to Rust as UTF-8: it
            # is counted as U+FFFD, as tiktoken's own Encoding does.
            repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            tokens = self._core.encode_ordinary(repaired)
        return tokens

    def encode(self, text: str) -> list[int]:
        return list(self._encode(text))

    def decode(self, tokens: Sequence[int]) -> str:
        data: bytes = self._core.decode_bytes(list(tokens))
        return data.decode("utf-8", errors="replace")

    def count(self, text: str) -> int:
        encode = self._encode
        if len(text) <= LARGE_TEXT:
            return len(encode(text))
        return sum(len(encode(piece)) for piece in slices(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Counts for many texts.

        A plain loop: tiktoken's thread-pool batch measured slower on this 2-core target
        (7.0 vs 11.4 MB/s in bench/tokens.py).
        """
        count = self.count
        return [count(text) for text in texts]

    def __repr__(self) -> str:
        return f"Encoding({self.name!r})"


_lock = threading.Lock()
_loaded: dict[str, Encoding] = {}


def _constructor(name: str) -> Callable[[], dict[str, Any]]:
    from tiktoken_ext import openai_public

    ctor: Callable[[], dict[str, Any]] | None = getattr(openai_public, name, None)
    if ctor is None:
        raise CtxtopError(f"unknown encoding {name!r}; choose one of {', '.join(ENCODINGS)}")
    return ctor


def _build(name: str) -> Encoding:
    from tiktoken._tiktoken import CoreBPE
    from tiktoken_ext import openai_public

    started = time.perf_counter()
    origins: list[str] = []

    def offline_loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is None:
            raise CtxtopError(f"tiktoken gave no hash for {url}; cannot verify {name}")
        rank_file = load_rank_file(name, url, expected_hash)  # its sha256 is checked here
        origins.append(rank_file.origin)
        return parse_ranks(rank_file.data, in_line_order=ranks_in_line_order(expected_hash))

    # tiktoken's constructor knows the regex and special tokens of each encoding; we only
    # replace how it fetches the rank file, so its definitions stay the single source.
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = offline_loader
    try:
        spec = _constructor(name)()
    finally:
        openai_public.load_tiktoken_bpe = original
    core = CoreBPE(spec.pop("mergeable_ranks"), spec["special_tokens"], spec["pat_str"])
    origin = origins[0] if origins else "unknown"
    return Encoding(name, core, origin, time.perf_counter() - started)


def get_encoding(name: str) -> Encoding:
    """The encoding called ``name`` (``o200k_base``, ``cl100k_base`` or an alias), loaded once."""
    name = ALIASES.get(name, name)
    if name not in ENCODINGS:
        raise CtxtopError(f"unknown encoding {name!r}; choose one of {', '.join(ENCODINGS)}")
    with _lock:
        encoding = _loaded.get(name)
        if encoding is None:
            encoding = _loaded[name] = _build(name)
        return encoding
