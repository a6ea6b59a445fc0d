"""Records ctxtop leaves out are counted by type: those of types it does not know apart from those
it knows carry nothing it shows, in ``ctxtop report`` (text and JSON), for every reader."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_sessions_tail import EVERY_JSONL

from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.cli.main import main
from ctxtop.engine.sessions.model import MAX_TYPES, OTHER_TYPES
from ctxtop.engine.sessions.report_json import build_report
from ctxtop.engine.tokens import get_encoding

DATA = Path(__file__).parent / "data"
CLAUDE = next((DATA / "real" / "claude-code" / "generated-cli-2.1.330").rglob("b7f51370-*.jsonl"))
CODEX = sorted((DATA / "real" / "codex").rglob("rollout-*.jsonl"))[0]
GEMINI = next((DATA / "generated" / "gemini-cli").rglob("session-*.jsonl"))
COPILOT = next((DATA / "generated" / "copilot-cli").rglob("events.jsonl"))
SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
OPENAI = SAMPLES / "openai-messages" / "agent-loop.jsonl"
ENC = get_encoding("o200k_base")

Record = dict[str, Any]
# Per reader: a log, records of types no release of that agent wrote, and the names the report
# gives them.
NEW: dict[str, tuple[Path, list[Record], dict[str, int]]] = {
    "claude-code": (
        CLAUDE,
        [
            {"type": "context-ledger", "sessionId": "s", "tokens": 900},
            {"type": "context-ledger", "sessionId": "s", "tokens": 950},
            {"type": "system", "subtype": "prompt_rewrite", "uuid": "u-rewrite", "content": ""},
            {"type": "attachment", "uuid": "u-digest", "attachment": {"type": "context_digest"}},
        ],
        {"context-ledger": 2, "system:prompt_rewrite": 1, "attachment:context_digest": 1},
    ),
    "codex": (
        CODEX,
        [
            {"timestamp": "2026-11-22T14:10:09Z", "type": "thread_budget", "payload": {}},
            {
                "timestamp": "2026-11-22T14:10:09Z",
                "type": "response_item",
                "payload": {"type": "context_snippet", "text": "x"},
            },
        ],
        {"thread_budget": 1, "response_item:context_snippet": 1},
    ),
    "gemini-cli": (
        GEMINI,
        [{"id": "c-1", "timestamp": "2026-11-23T03:13:00Z", "type": "checkpoint", "content": ""}],
        {"checkpoint": 1},
    ),
    "copilot-cli": (
        COPILOT,
        [
            {
                "type": "session.context_budget",
                "data": {"tokens": 5},
                "id": f"e-{index}",
                "timestamp": "2026-11-23T03:14:00Z",
                "parentId": None,
            }
            for index in range(3)
        ],
        {"session.context_budget": 3},
    ),
    "openai-messages": (OPENAI, [{"type": "usage_summary", "tokens": 5}], {"usage_summary": 1}),
}


def _rows(path: Path) -> list[Record]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _with(tmp_path: Path, source: Path, extra: list[Record]) -> Path:
    target = tmp_path / source.name
    rows = [*_rows(source), *extra]
    target.write_text("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows))
    return target


def _report(path: Path) -> dict[str, Any]:
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    return build_report(reader.adapter)


@pytest.mark.parametrize("agent", NEW, ids=str)
def test_records_of_unknown_types_are_counted_by_type(tmp_path: Path, agent: str) -> None:
    source, extra, expected = NEW[agent]
    assert _report(source)["record_types"]["unknown"] == {}
    report = _report(_with(tmp_path, source, extra))
    assert report["agent"] == agent
    assert report["record_types"]["unknown"] == expected


def test_known_types_left_out_are_counted_apart(tmp_path: Path) -> None:
    kinds = Counter(row["type"] for row in _rows(CLAUDE))
    ignored = _report(_with(tmp_path, CLAUDE, NEW["claude-code"][1]))["record_types"]["ignored"]
    for kind in ("cost-state", "last-prompt", "atis-latch", "api-request-blob", "tools-used"):
        assert ignored[kind] == kinds[kind] > 0
    assert "context-ledger" not in ignored


def test_the_text_report_lists_them(tmp_path: Path) -> None:
    source, extra, expected = NEW["claude-code"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(_with(tmp_path, source, extra))]) == 0
    lines = out.getvalue().splitlines()
    (unknown,) = [line for line in lines if line.startswith("unknown ")]
    count = sum(expected.values())
    assert f"{count} records of types ctxtop does not know (figures may be incomplete)" in unknown
    for kind, number in expected.items():
        assert f"{kind} {number}" in unknown
    (ignored,) = [line for line in lines if line.startswith("ignored ")]
    assert "cost-state 3" in ignored


@pytest.mark.parametrize("source", EVERY_JSONL, ids=lambda path: path.name[:8])
def test_the_logs_of_the_real_clis_hold_no_unknown_type(source: Path) -> None:
    """Every log here was written by a real CLI (or is a sample of the generic format)."""
    assert _report(source)["record_types"]["unknown"] == {}


def test_a_flood_of_made_up_types_is_summed_past_a_few(tmp_path: Path) -> None:
    extra = [{"type": f"made-up-{index}"} for index in range(MAX_TYPES * 4)]
    unknown = _report(_with(tmp_path, CLAUDE, extra))["record_types"]["unknown"]
    assert len(unknown) == MAX_TYPES + 1
    assert sum(unknown.values()) == MAX_TYPES * 4
    assert unknown[OTHER_TYPES] == MAX_TYPES * 3


def test_an_attachment_of_an_unknown_type_is_still_counted_in_the_context(tmp_path: Path) -> None:
    """Shown as not understood, and what the model sees of it still counted (its rendered
    text): the context grows by about that text's tokens."""
    rows = _rows(CLAUDE)
    last = [row for row in rows if row.get("type") in ("user", "assistant", "attachment")][-1]
    text = "a digest of the context so far, " * 60
    digest = {
        "type": "attachment",
        "uuid": "u-digest",
        "parentUuid": last["uuid"],
        "sessionId": last.get("sessionId"),
        "timestamp": last.get("timestamp"),
        "isSidechain": False,
        "attachment": {"type": "context_digest", "summary": "so far"},
        "rendered": [{"content": text}],
    }
    before = _report(CLAUDE)["context_tokens"]["value"]
    report = _report(_with(tmp_path, CLAUDE, [digest]))
    assert report["record_types"]["unknown"] == {"attachment:context_digest": 1}
    grown = report["context_tokens"]["value"] - before
    assert ENC.count(text) <= grown <= ENC.count(text) * 1.2 + 10
