"""Rendering a tree file again reuses the token counts of the first render (kept in ctxtop's
token-count cache): the second process loads no BPE encoder, and its output is the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / "tests/render/examples/03-flex.json"
PROBE = """
import sys
from ctxtop.engine.cli.main import main
code = main(sys.argv[1:])
import ctxtop.engine.tokens.encoding as encoding
print("ENCODERS", sorted(encoding._loaded), file=sys.stderr)
sys.exit(code)
"""


def render_in_a_new_process(tree: Path, *extra: str) -> tuple[str, str]:
    argv = ["render", str(tree), "--budget", "120", "--tokenizer", "o200k", "--json", *extra]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True
    )
    loaded = next(line for line in done.stderr.splitlines() if line.startswith("ENCODERS"))
    return done.stdout, loaded


@pytest.mark.parametrize(
    "example", [TREE, ROOT / "tests/render/examples/07-keepwith-toolcalls.json"]
)
def test_a_second_render_of_the_same_tree_encodes_nothing(tmp_path: Path, example: Path) -> None:
    tree = tmp_path / example.name
    tree.write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
    first, loaded_first = render_in_a_new_process(tree)
    again, loaded_again = render_in_a_new_process(tree)
    assert loaded_first == "ENCODERS ['o200k_base']"
    assert loaded_again == "ENCODERS []"  # every count came from the first render
    assert json.loads(again) == json.loads(first)
    # Another tree (one text changed) is counted afresh, not served from the first one.
    data = json.loads(tree.read_text(encoding="utf-8"))
    changed = json.dumps(data).replace("a", "b", 1)
    tree.write_text(changed, encoding="utf-8")
    _, loaded_other = render_in_a_new_process(tree)
    assert loaded_other == "ENCODERS ['o200k_base']"


def test_listed_texts_are_remembered_by_place_the_others_by_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree's TextChunk texts and tool call fields are counted again from their place in the
    tree's list, without a digest each; other texts by digest; a list that is not the one
    remembered (another number or length of texts) is not taken."""
    from ctxtop.engine.render import count_memory
    from ctxtop.engine.render.tokenizers import BpeTokenizer
    from ctxtop.engine.tokens.cache import DiskCache

    cache = DiskCache(tmp_path / "counts.sqlite3")
    monkeypatch.setattr(count_memory, "default_disk_cache", lambda: cache)
    texts = ["the first chunk of text", "call_1", '{"path": "a.py"}']
    first = BpeTokenizer("o200k")
    count_memory.recall(first, b"tree", texts)
    counts = [first.text_tokens(text) for text in [*texts, "a joined message"]]
    count_memory.remember(first, b"tree", texts)

    again = BpeTokenizer("o200k")
    count_memory.recall(again, b"tree", texts)
    assert again.counts_of(texts) == counts[:3]  # preset by place
    assert again.text_tokens("a joined message") == counts[3]  # found by its digest
    assert again.learned == {}  # nothing encoded

    longer = [*texts[:2], texts[2] + " "]
    other = BpeTokenizer("o200k")
    count_memory.recall(other, b"tree", longer)
    assert other.counts_of(longer) == [-1, -1, -1]
    assert other.text_tokens("a joined message") == counts[3]
