"""The 13 oracle examples render exactly as @vscode/prompt-tsx rendered them (prompt-tsx mode).

Trees and expected outputs were produced by the real library (see examples/PROVENANCE.md); every
budget of each example's ``checkBudgets`` is compared for both the words and o200k tokenizers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxtop.engine.render.loader import document_from_data, parse_budget
from ctxtop.engine.render.output import js_value, result_json
from ctxtop.engine.render.renderer import render

EXAMPLES = Path(__file__).parent / "examples"
CASES = [
    (path, tokenizer, index)
    for path in sorted(EXAMPLES.glob("*.json"))
    for tokenizer in ("words", "o200k")
    for index in range(len(json.loads(path.read_text())["checkBudgets"]))
]


@pytest.mark.parametrize(
    ("path", "tokenizer", "index"),
    CASES,
    ids=[f"{p.stem}-{t}-{i}" for p, t, i in CASES],
)
def test_example_matches_library_output(path: Path, tokenizer: str, index: int) -> None:
    data = json.loads(path.read_text())
    budget = data["checkBudgets"][index]
    expected = json.loads((EXAMPLES / "expected" / f"{path.stem}.{tokenizer}.json").read_text())
    result = render(document_from_data(data), parse_budget(budget), tokenizer, "prompt-tsx")
    assert js_value(result_json(result)) == expected[index]


def test_every_example_has_expected_outputs() -> None:
    assert len(CASES) == 126


OPENAI = EXAMPLES / "openai"


@pytest.mark.parametrize("path", sorted(OPENAI.glob("*.o200k.json")), ids=lambda p: p.stem)
def test_openai_form_matches_library(path: Path) -> None:
    # The library's toMode(OpenAI) output (`--openai`), which is also what o200k counts walk.
    name = path.name.removesuffix(".o200k.json")
    tree = json.loads((EXAMPLES / f"{name}.json").read_text())
    for expected in json.loads(path.read_text()):
        result = render(document_from_data(tree), expected["budget"], "o200k", "prompt-tsx")
        assert js_value(result_json(result, openai=True)) == expected
