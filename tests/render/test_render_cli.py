"""``ctxtop render``: tree files (JSON and YAML), the table, --json with the report, --jsonl."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from ctxtop.engine.cli.main import main

HERE = Path(__file__).parent
EXAMPLES = HERE / "examples"
TREES = HERE / "trees"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["render", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def expected_output(name: str, tokenizer: str, budget: object) -> dict[str, object]:
    tree = json.loads((EXAMPLES / f"{name}.json").read_text())
    index = tree["checkBudgets"].index(budget)
    outputs = json.loads((EXAMPLES / "expected" / f"{name}.{tokenizer}.json").read_text())
    result: dict[str, object] = outputs[index]
    return result


def test_json_output_has_the_library_fields_and_a_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(EXAMPLES / "02-priority-pruning.json")
    code, out, _ = run(capsys, path, "--budget", "18", "--mode", "prompt-tsx", "--json")
    assert code == 0
    shown = json.loads(out)
    expected = expected_output("02-priority-pruning", "words", 18)
    for key, value in expected.items():
        assert shown[key] == value, key
    report = shown["report"]
    assert report["budget"] == 18 and report["fits"] is True
    rows = {row["id"]: row for row in report["elements"]}
    assert rows["a1"]["pruned"] and rows["a1"]["reason"] == "priority"
    assert rows["sys"]["reason"] == rows["q"]["reason"] == "priority"
    assert rows["ctx"]["pruned"] is False and rows["ctx"]["tokens"] == 15
    assert (
        sum(row["tokens"] for row in report["elements"] if row["depth"] == 0)
        == (shown["tokenCount"])
    )


def test_yaml_tree_renders_like_its_json_twin(capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for suffix in ("yaml", "json"):
        code, out, _ = run(capsys, str(TREES / f"agent-round.{suffix}"), "--budget", "30", "--json")
        assert code == 0
        outputs.append(json.loads(out))
    assert outputs[0] == outputs[1]
    assert outputs[0]["mode"] == "exact"
    assert [m["role"] for m in outputs[0]["messages"]] == ["system", "tool", "user"]


def test_table_says_what_was_pruned_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(TREES / "agent-round.yaml"), "--budget", "30")
    assert code == 0
    lines = out.splitlines()
    assert any(line.split()[0] == "text1" and "pruned (priority)" in line for line in lines)
    assert any(line.split()[0] == "keep2" and line.endswith("kept") for line in lines)
    assert "cache breakpoint in sys" in out
    assert lines[-1] == "total 24 of 30 tokens (fits; words, exact mode)"


def test_without_a_budget_the_table_says_no_limit(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27 item 11: each element's share of prompt-tsx's "max" was printed as a budget
    (2251799813685247 and the like)."""
    code, out, _ = run(capsys, str(TREES / "agent-round.yaml"))
    assert code == 0
    lines = out.splitlines()
    rows = [line for line in lines[1:] if not line.startswith(("cache", "total"))]
    assert rows and all(" no limit " in row for row in rows), rows
    assert lines[-1] == "total 56 tokens (no limit; words, exact mode)"


def test_budget_error_is_reported_not_raised(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "10-cache-breakpoint.json")
    code, out, _ = run(capsys, path, "--budget", "5", "--mode", "prompt-tsx")
    assert code == 0
    assert out.splitlines()[-1] == (
        "error: BudgetExceededError: No lowest priority node found (path: Root -> 1)"
    )


def test_jsonl_prints_the_oracle_lines(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = json.loads((EXAMPLES / "07-keepwith-toolcalls.json").read_text())
    cases = [
        {"id": f"case-{budget}", "tree": tree, "budget": budget, "tokenizer": "words"}
        for budget in (45, 28, 10)
    ]
    lines = [json.dumps(case) for case in cases]
    lines.insert(1, "{not json")
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n\n"))
    code, out, _ = run(capsys, "--jsonl")
    assert code == 0
    printed = out.splitlines()
    assert len(printed) == 4
    assert set(json.loads(printed[1])) == {"usageError"}
    for line, budget in zip((printed[0], *printed[2:]), (45, 28, 10), strict=True):
        result = json.loads(line)
        assert result == {
            "id": f"case-{budget}",
            **expected_output("07-keepwith-toolcalls", "words", budget),
        }
        # compact JSON, keys in the oracle's order
        assert line.startswith('{"id":"case-') and ',"library":' in line


def jsonl_lines(capsys: pytest.CaptureFixture[str], lines: list[str]) -> list[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
        code, out, _ = run(capsys, "--jsonl")
    assert code == 0
    return out.splitlines()


def test_jsonl_a_tree_repeated_or_changed_renders_as_on_its_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Consecutive lines share a parsed tree only while its text is the same; lines read by
    json.loads (NaN, which msgspec refuses) and by msgspec alternate without mixing trees up."""
    first = json.loads((EXAMPLES / "07-keepwith-toolcalls.json").read_text())
    second = json.loads((EXAMPLES / "02-priority-pruning.json").read_text())
    cases = [
        (first, 28, '"a"'),
        (first, 45, '"b"'),
        (first, 10, "NaN"),  # json.loads reads this line
        (first, 28, '"c"'),
        (second, 18, '"d"'),
        (first, 28, "NaN"),
        (second, 18, "NaN"),
        (second, 18, '"e"'),
    ]
    lines = [
        f'{{"id": {ident}, "budget": {budget}, "tokenizer": "words", "tree": {json.dumps(tree)}}}'
        for tree, budget, ident in cases
    ]
    together = jsonl_lines(capsys, lines)
    alone = [jsonl_lines(capsys, [line])[0] for line in lines]
    assert together == alone
    assert [json.loads(line)["tokenCount"] for line in together] == [
        json.loads(alone[index])["tokenCount"] for index in range(len(cases))
    ]
    assert together[2].startswith('{"id":NaN,') and together[4].startswith('{"id":"d",')
    assert "usageError" not in "".join(together)


def test_number_ids_are_named_as_javascript_prints_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # JSON numbers become ids through JavaScript String(): 1e400 is Infinity, 1e21 is "1e+21"
    tree = [
        {"type": "user", "id": number, "children": [{"type": "textchunk", "text": "hi"}]}
        for number in ("1e400", "1e21", "2.0")
    ]
    line = json.dumps({"tree": tree, "budget": 1}).replace('"1e400"', "1e400")
    line = line.replace('"1e21"', "1e21").replace('"2.0"', "2.0")
    monkeypatch.setattr(sys, "stdin", io.StringIO(line + "\n"))
    code, out, _ = run(capsys, "--jsonl")
    assert code == 0
    result = json.loads(out)
    assert "usageError" not in result
    assert {"Infinity", "1e+21", "2"} <= set(result["budgets"])


def test_bad_tree_file_is_one_line_naming_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "tree.json"
    bad.write_text('{"root": [\n  {"type": "user",}\n]}')
    code, _, err = run(capsys, str(bad))
    assert code == 2
    assert err.strip().startswith(f"ctxtop: {bad}:2: invalid JSON")
    unknown = tmp_path / "tree.yaml"
    unknown.write_text("root:\n  - type: usr\n")
    code, _, err = run(capsys, str(unknown))
    assert code == 2
    assert err.strip() == f'ctxtop: {unknown}: unknown node type "usr" at root[0]'
    typed = tmp_path / "typed.json"
    typed.write_text('[{"type": "user", "children": [{"type": "elem", "priority": "5"}]}]')
    code, _, err = run(capsys, str(typed))
    assert code == 2
    assert err.strip() == (
        f'ctxtop: {typed}: priority at root[0]/user[0] must be a number, not "5"'
    )
    node: dict[str, object] = {"type": "user", "children": ["deep"]}
    for _ in range(150):
        node = {"type": "elem", "children": [node]}
    deep = tmp_path / "deep.json"
    deep.write_text(json.dumps([node]))
    code, _, err = run(capsys, str(deep))
    assert code == 2
    assert err.startswith(f"ctxtop: {deep}: tree nested deeper than 100 levels at root[0]/elem[0]")


def test_cli_choices_match_the_renderer() -> None:
    from ctxtop.engine.cli import cmd_render
    from ctxtop.engine.render.renderer import MODES
    from ctxtop.engine.render.tokenizers import TOKENIZERS

    assert cmd_render.MODES == MODES and cmd_render.TOKENIZERS == TOKENIZERS
