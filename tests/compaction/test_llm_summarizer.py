"""The ``llm`` summariser against a model server started here on 127.0.0.1, in both protocols:
a good summary; tools refused in full mode, then simple mode; a timeout; HTTP 500; a reply
without ``<summary>``; an oversized summary. Every case ends in a usable compacted session, the
original untouched, and the API key sent to the server but written nowhere."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from llm_server import SummaryServer

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.cli.main import main
from ctxtop.engine.config import LLMSettings, config_path
from ctxtop.engine.editing import action_log
from ctxtop.engine.forks.compact import compact_session

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)
KEY = "sk-ctxtop-test-key-7f3a9c"
KEY_VARIABLE = "CTXTOP_TEST_LLM_KEY"
PROTOCOLS = ("openai", "anthropic")


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    for name in ("BASE_URL", "MODEL", "SUMMARY_MODEL", "PROTOCOL"):
        monkeypatch.delenv(f"CTXTOP_LLM_{name}", raising=False)


def settings(server: SummaryServer, protocol: str, timeout: float = 10.0) -> LLMSettings:
    return LLMSettings(
        base_url=server.url + ("/v1" if protocol == "openai" else ""),
        model="big-model",
        summary_model="cheap-model",
        api_key_env=KEY_VARIABLE,
        protocol=protocol,
        timeout=timeout,
    )


def compact(tmp_path: Path, llm: LLMSettings) -> tuple[dict[str, Any], Path, str]:
    source = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    return (
        compact_session(source, summarizer="llm", keep_rounds=2, llm=llm).as_json(),
        source,
        before,
    )


def assert_usable(outcome: dict[str, Any], source: Path, before: str) -> None:
    """The fork reads back starting at the summary; the original and the key are untouched."""
    fork = Path(outcome["fork"])
    state = read_session(fork)
    assert [m.kind for m in state.context[:2]] == ["compact_boundary", "compact_summary"]
    assert state.context[1].blocks[0].content().endswith(outcome["summary"])
    assert outcome["summary"].rstrip().splitlines()[-1].startswith("Full transcript")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before
    assert KEY not in fork.read_text("utf-8")
    assert KEY not in json.dumps(outcome)
    assert KEY not in action_log.log_path().read_text("utf-8")


def sent_key(request: dict[str, Any], protocol: str) -> str:
    headers = {k.lower(): v for k, v in request["headers"].items()}
    return headers["x-api-key"] if protocol == "anthropic" else headers["authorization"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_good_summary_is_used(tmp_path: Path, protocol: str) -> None:
    with SummaryServer("good") as server:
        outcome, source, before = compact(tmp_path, settings(server, protocol))
        requests = server.requests
    assert outcome["summarizer"] == "llm" and not outcome["warnings"]
    assert "MARKER-FROM-THE-MODEL" in outcome["summary"]
    assert "<analysis>" not in outcome["summary"] and "Went through" not in outcome["summary"]
    assert len(requests) == 1
    body = requests[0]["body"]
    assert body["model"] == "cheap-model" and body["temperature"] == 0
    assert body["tool_choice"] == ("none" if protocol == "openai" else {"type": "none"})
    assert {"Bash"} <= {t.get("name") or t["function"]["name"] for t in body["tools"]}
    system = body["system"] if protocol == "anthropic" else body["messages"][0]["content"]
    assert "<analysis>" in system and "<summary>" in system
    assert "What have we changed so far?" not in json.dumps(body)  # the kept turn is not sent
    assert KEY in sent_key(requests[0], protocol)
    assert_usable(outcome, source, before)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_full_mode_failure_falls_back_to_simple_mode(tmp_path: Path, protocol: str) -> None:
    with SummaryServer("reject_tools") as server:
        outcome, source, before = compact(tmp_path, settings(server, protocol))
        requests = server.requests
    assert outcome["summarizer"] == "llm" and "MARKER-FROM-THE-MODEL" in outcome["summary"]
    assert [bool(r["body"].get("tools")) for r in requests] == [True, False]
    assert "tool_choice" not in requests[1]["body"]
    assert_usable(outcome, source, before)


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("error", "HTTP 500"),
        ("no_summary", "no <summary> block"),
        ("oversized", "over the budget"),
    ],
)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_failed_summary_falls_back_to_structured(
    tmp_path: Path, protocol: str, behaviour: str, reason: str
) -> None:
    with SummaryServer(behaviour) as server:
        outcome, source, before = compact(tmp_path, settings(server, protocol))
        requests = server.requests
    assert outcome["summarizer"] == "structured"
    assert len(requests) == 2  # full mode, then simple mode
    [warning] = outcome["warnings"]
    assert warning.startswith("LLM summary failed") and reason in warning
    assert "used the structured summary instead" in warning
    assert "1. Conversation overview" in outcome["summary"]
    assert_usable(outcome, source, before)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_timeout_falls_back_to_structured(tmp_path: Path, protocol: str) -> None:
    with SummaryServer("slow", delay=3.0) as server:
        outcome, source, before = compact(tmp_path, settings(server, protocol, timeout=0.5))
    assert outcome["summarizer"] == "structured"
    assert "within 0.5 s" in outcome["warnings"][0]
    assert_usable(outcome, source, before)


def test_the_command_reads_the_llm_block_and_never_prints_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    with SummaryServer("good") as server:
        config_path().parent.mkdir(parents=True, exist_ok=True)
        config_path().write_text(
            f"llm:\n  base_url: {server.url}/v1\n  model: some-model\n"
            f"  api_key_env: {KEY_VARIABLE}\n  protocol: openai\n  timeout: 5\n",
            encoding="utf-8",
        )
        assert main(["compact", str(source), "--summarizer", "llm", "--json"]) == 0
        requests = server.requests
    out = capsys.readouterr().out
    outcome = json.loads(out)
    assert outcome["summarizer"] == "llm" and KEY not in out
    assert requests[0]["body"]["model"] == "some-model"


def test_no_model_configured_is_said_and_structured_is_used(tmp_path: Path) -> None:
    source = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    outcome = compact_session(source, summarizer="llm", dry_run=True, llm=LLMSettings()).as_json()
    assert outcome["summarizer"] == "structured"
    # How to set one: there is no default model (the README showed gpt-5-mini as if there were).
    warning = outcome["warnings"][0]
    assert "no model set, there is no default: add `model: NAME` under `llm:` in " in warning
    assert str(config_path()) in warning and "or set CTXTOP_LLM_MODEL" in warning


def test_a_lone_surrogate_in_the_summarised_part_is_sent_escaped(tmp_path: Path) -> None:
    """A reply holding an escaped lone surrogate ("\\ud800", which JSON allows) reaches the
    model as that escape: the request is still sent and its summary used."""
    source = tmp_path / SAMPLE.name
    first_reply = next(m.id for m in read_session(SAMPLE).context if m.role == "assistant")
    lines = SAMPLE.read_text("utf-8").splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line)
        if record.get("uuid") == first_reply:
            for part in record["message"]["content"]:
                if part.get("type") == "text":
                    part["text"] += " \ud800"
            lines[index] = json.dumps(record)
    source.write_text("\n".join(lines) + "\n", "utf-8")
    with SummaryServer("good") as server:
        llm = settings(server, "openai")
        outcome = compact_session(source, summarizer="llm", keep_rounds=2, llm=llm).as_json()
        requests = server.requests
    assert outcome["summarizer"] == "llm" and not outcome["warnings"]
    assert "\\ud800" in json.dumps(requests[0]["body"])
