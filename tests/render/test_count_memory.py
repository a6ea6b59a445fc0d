"""Rendering a tree file again reuses the token counts of the first render (kept in ctxtop's
token-count cache): the second process loads no BPE encoder, and its output is the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_a_second_render_of_the_same_tree_encodes_nothing(tmp_path: Path) -> None:
    tree = tmp_path / TREE.name
    tree.write_text(TREE.read_text(encoding="utf-8"), encoding="utf-8")
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
