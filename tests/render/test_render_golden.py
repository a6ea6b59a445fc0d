"""`ctxtop render --jsonl` reproduces the real @vscode/prompt-tsx on the golden cases.

The golden files were rendered once by the prompt-tsx oracle (see golden/PROVENANCE.md); each
group is fed to the command in one in-process run, and every result line is compared with the
oracle's on the fields a user of the renderer sees: messages, tokenCount, pruned ids, per-element
budgets, Expandable calls and the error type.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.cli.main import main

GOLDEN = Path(__file__).parent / "golden"
GROUPS = sorted(p.name.removesuffix(".cases.jsonl.gz") for p in GOLDEN.glob("*.cases.jsonl.gz"))
MANIFEST = json.loads((GOLDEN / "manifest.json").read_text())
# Fields compared on every case; the first three only exist when the render did not fail.
RESULT_FIELDS = ("tokenCount", "messages", "pruned")
ALWAYS_FIELDS = ("budgets", "expandableCalls")
SHOWN_CASES = 5


def read_gzip_lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [line for line in lines.read().splitlines() if line.strip()]


def run_render_jsonl(case_lines: list[str], tokenizer: str) -> tuple[int, list[str], str]:
    """Runs `ctxtop render --jsonl` in this process with the cases on stdin."""
    stdin = io.TextIOWrapper(io.BytesIO(("\n".join(case_lines) + "\n").encode()), "utf-8")
    stdout = io.TextIOWrapper(io.BytesIO(), "utf-8")
    stderr = io.StringIO()
    argv = ["render", "--jsonl", "--mode", "prompt-tsx", "--tokenizer", tokenizer]
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse: unknown command or option
        code = exit_.code if isinstance(exit_.code, int) else 2
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    stdout.flush()
    out = stdout.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    return code, [line for line in out.splitlines() if line.strip()], stderr.getvalue()


def short(value: Any, limit: int = 240) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def message_diff(expected: list[dict[str, Any]], actual: Any) -> str:
    if not isinstance(actual, list):
        return f"messages: expected a list, got {short(actual)}"
    if len(expected) != len(actual):
        roles = [m.get("role") for m in expected], [m.get("role") for m in actual]
        return f"messages: {len(expected)} expected {roles[0]}, got {len(actual)} {roles[1]}"
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        for key in sorted(set(want) | set(got)):
            if want.get(key) != got.get(key):
                return (
                    f"messages[{index}].{key}: expected {short(want.get(key))}, "
                    f"got {short(got.get(key))}"
                )
    return ""


def case_diffs(expected: dict[str, Any], actual: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, one-line description) for every compared field that differs."""
    diffs: list[tuple[str, str]] = []
    if actual.get("id") != expected["id"]:
        diffs.append(("id", f"id: expected {expected['id']!r}, got {actual.get('id')!r}"))
    if "usageError" in actual:
        diffs.append(("usageError", f"usageError: {short(actual['usageError'])}"))
        return diffs
    want_error = expected.get("error", {}).get("type")
    got_error = (actual.get("error") or {}).get("type")
    if want_error != got_error:
        message = (actual.get("error") or {}).get("message", "")
        diffs.append(("error", f"error type: expected {want_error}, got {got_error} {message}"))
    fields = ALWAYS_FIELDS if want_error else RESULT_FIELDS + ALWAYS_FIELDS
    for field in fields:
        want, got = expected.get(field), actual.get(field)
        if want == got:
            continue
        if field == "messages":
            diffs.append((field, message_diff(want, got)))
        elif field == "pruned" and isinstance(got, list):
            missing = [i for i in want if i not in got]
            extra = [i for i in got if i not in want]
            order = "" if missing or extra else " (same ids, other order)"
            diffs.append((field, f"pruned: missing {short(missing)}, extra {short(extra)}{order}"))
        elif isinstance(want, dict) and isinstance(got, dict):
            keys = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
            shown = {k: [want.get(k), got.get(k)] for k in keys[:6]}
            diffs.append((field, f"{field} [expected, got]: {short(shown)}"))
        else:
            diffs.append((field, f"{field}: expected {short(want)}, got {short(got)}"))
    return diffs


def test_golden_data_covers_issue_4() -> None:
    groups = MANIFEST["groups"]
    assert set(groups) == set(GROUPS)
    examples = {
        json.loads(line)["id"].split(".")[0]
        for line in read_gzip_lines(GOLDEN / "examples-words.cases.jsonl.gz")
    }
    assert len(examples) == 13
    assert groups["examples-words"]["cases"] == groups["examples-o200k"]["cases"]
    random_cases = sum(g["cases"] for name, g in groups.items() if name.startswith("random-"))
    assert random_cases >= 3000
    tokenizers = {t for g in groups.values() for t in g["tokenizers"]}
    assert tokenizers == {"words", "o200k", "cl100k"}


@pytest.mark.parametrize("group", GROUPS)
def test_render_jsonl_matches_prompt_tsx(group: str) -> None:
    case_lines = read_gzip_lines(GOLDEN / f"{group}.cases.jsonl.gz")
    expected = [json.loads(line) for line in read_gzip_lines(GOLDEN / f"{group}.expected.jsonl.gz")]
    assert len(case_lines) == len(expected) == MANIFEST["groups"][group]["cases"]
    tokenizer = json.loads(case_lines[0])["tokenizer"]

    code, out_lines, stderr = run_render_jsonl(case_lines, tokenizer)
    assert code == 0, f"ctxtop render --jsonl exited with {code}: {stderr.strip()[-2000:]}"
    assert len(out_lines) == len(expected), (
        f"{len(out_lines)} result lines for {len(expected)} cases; stderr: {stderr.strip()[-500:]}"
    )

    failing: list[str] = []
    per_field: dict[str, int] = {}
    for want, line in zip(expected, out_lines, strict=True):
        diffs = case_diffs(want, json.loads(line))
        for field, _ in diffs:
            per_field[field] = per_field.get(field, 0) + 1
        if diffs:
            failing.append(f"{want['id']}: " + "\n    ".join(text for _, text in diffs))
    assert not failing, (
        f"{len(failing)}/{len(expected)} cases of {group} differ from prompt-tsx "
        f"(cases per field: {per_field}); first {min(SHOWN_CASES, len(failing))}:\n  "
        + "\n  ".join(failing[:SHOWN_CASES])
    )
