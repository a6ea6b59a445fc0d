"""VS Code Copilot Chat sessions: the mutation log replayed (sets, pushes with and without a cut,
deletes, a new snapshot), the turns' figures, a live tail against a cold read, and discovery in
every VS Code user directory (sample: sample_sessions/vscode-copilot-chat, written from VS Code's
serializer source)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from ctxtop.engine.agents import AGENTS
from ctxtop.engine.agents.session_reader import SessionReader, read_session, read_session_data
from ctxtop.engine.agents.strategies import simulate
from ctxtop.engine.agents.vscode_copilot.mutation_log import MutationError, MutationLog
from ctxtop.engine.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
WORKSPACE = ROOT / "sample_sessions/vscode-copilot-chat/User/workspaceStorage"
SAMPLE = (
    WORKSPACE / "5f3c8e1a9b2d4c6e8f0a1b2c3d4e5f60/chatSessions/"
    "3b8c2f1e-7d4a-4c9b-a1e2-5f6d7c8b9a01.jsonl"
)
PLUGIN = AGENTS["vscode-copilot-chat"]


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def as_bytes(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def figures(path: Path, data: bytes | None = None) -> dict[str, object]:
    state = read_session(path) if data is None else read_session_data(path, data)
    last = state.last_response
    return {
        "requests": list(state.responses),
        "input": state.totals.input_tokens,
        "output": state.totals.output_tokens,
        "last": None if last is None else (last.key, last.usage.input_tokens_total),
        "tools": sorted((c.name, c.result_chars) for c in state.tools.live.values()),
        "context": [(m.role, m.kind) for m in state.context],
        "compactions": len(state.compactions),
    }


def test_the_sample_reads_turn_by_turn() -> None:
    state = read_session(SAMPLE)
    assert state.agent == "vscode-copilot-chat"
    # The undone turn (request_2: the array cut back to one) is gone; its figures with it.
    assert list(state.responses) == ["request_1", "request_3"]
    assert (state.totals.input_tokens, state.totals.output_tokens) == (21_406 + 24_118, 57 + 66)
    assert state.last_response is not None
    assert state.last_response.usage.input_tokens_total == 24_118
    assert state.model == "gpt-4.1-2025-04-14"  # result.metadata.resolvedModel
    assert state.context_window == 111_616  # the selected model's maxInputTokens
    assert state.title == "Server log cache warning"  # a set after the requests
    assert state.cwd == "/home/dev/app"  # workspace.json beside chatSessions/
    calls = {call.name: call for call in state.tools.live.values()}
    assert set(calls) == {"read_file", "insert_edit_into_file"}
    assert calls["read_file"].result_text is not None
    assert calls["read_file"].result_text.startswith("   0: log line 0")
    # Each turn: the user's message, then per model call the assistant and its tool results.
    assert [m.role for m in state.context] == [
        *("user", "assistant", "tool", "assistant"),
        *("user", "assistant", "tool", "assistant"),
    ]
    assert state.context[-1].response_key == "request_3"
    assert state.context[-1].blocks[-1].text == "Added the comment."


def test_a_new_snapshot_line_starts_over(tmp_path: Path) -> None:
    records = lines_of(SAMPLE)
    snapshot = json.loads(json.dumps(records[0]))
    snapshot["v"]["requests"] = [
        {
            "requestId": "request_9",
            "timestamp": 1_795_000_200_000,
            "message": {"text": "hi"},
            "response": [{"value": "hello"}],
            "promptTokens": 900,
            "completionTokens": 4,
        }
    ]
    path = tmp_path / SAMPLE.name
    state = read_session_data(path, as_bytes([*records, snapshot]))
    assert list(state.responses) == ["request_9"]
    assert (state.totals.input_tokens, state.totals.output_tokens) == (900, 4)
    assert [m.role for m in state.context] == ["user", "assistant"]
    assert not state.tools.live


def test_a_live_tail_gives_the_cold_reads_figures(tmp_path: Path) -> None:
    """Fed line by line as VS Code appends them, the session ends where a cold read starts."""
    data = SAMPLE.read_bytes()
    path = tmp_path / SAMPLE.name
    reader = SessionReader(path, data=b"")
    seen = []
    for line in data.splitlines(keepends=True):
        reader.grow(reader._data + line if reader._data is not None else line)
        reader.poll(as_it_stands=True)
        if reader.state is not None:
            seen.extend(m.id for m in reader.state.context if m.role == "user")
    assert reader.state is not None
    live = reader.state
    cold = read_session_data(path, data)
    assert list(live.responses) == list(cold.responses)
    # Each request is dated by the line its token figures appeared on, read live or cold.
    lines = [cold.responses.get(key).line for key in cold.responses]  # type: ignore[union-attr]
    assert [live.responses.get(key).line for key in live.responses] == lines == [7, 19]  # type: ignore[union-attr]
    assert live.totals == cold.totals
    assert live.agent_shares == cold.agent_shares
    assert [(m.id, m.role) for m in live.context] == [(m.id, m.role) for m in cold.context]
    # The undone turn was on the context while it stood, and is off it now.
    assert "request_2:user" in seen
    assert "request_2:user" not in [m.id for m in live.context]


def test_mutations_as_vscode_applies_them() -> None:
    log = MutationLog()
    log.apply({"kind": 0, "v": {"requests": [{"a": 1}, {"a": 2}, {"a": 3}], "x": {"y": 1}}})
    log.apply({"kind": 2, "k": ["requests"], "v": [{"a": 9}], "i": 1})  # cut, then push
    log.apply({"kind": 1, "k": ["requests", 1, "b"], "v": [1]})
    log.apply({"kind": 2, "k": ["requests", 1, "b"], "v": [2, 3]})
    log.apply({"kind": 2, "k": ["requests", 1, "new"], "v": [5]})  # onto a missing array
    log.apply({"kind": 3, "k": ["x", "y"]})
    assert log.doc == {"requests": [{"a": 1}, {"a": 9, "b": [1, 2, 3], "new": [5]}], "x": {}}
    with pytest.raises(MutationError):
        log.apply({"kind": 1, "k": ["requests", 7, "a"], "v": 1})


def test_a_bad_line_is_skipped_with_its_line(tmp_path: Path) -> None:
    records = lines_of(SAMPLE)
    bad = {"kind": 1, "k": ["requests", 42, "promptTokens"], "v": 1}
    state = read_session_data(tmp_path / SAMPLE.name, as_bytes([*records[:3], bad, *records[3:]]))
    assert [(s.line, s.reason) for s in state.skipped] == [(4, "no .requests[42] to change")]
    assert list(state.responses) == ["request_1", "request_3"]


def test_the_older_json_document_is_read(tmp_path: Path) -> None:
    """Before VS Code 1.109 a session was one JSON document, with the usage in the result's
    metadata (older Copilot Chat)."""
    document = {
        "version": 3,
        "requesterUsername": "dev",
        "responderUsername": "GitHub Copilot",
        "sessionId": "old-1",
        "creationDate": 1_760_000_000_000,
        "requests": [
            {
                "requestId": "request_a",
                "timestamp": 1_760_000_001_000,
                "message": {"text": "explain main.py", "parts": []},
                "modelId": "copilot/gpt-4o",
                "response": [{"value": "It serves the app."}],
                "result": {"metadata": {"promptTokens": 3_100, "outputTokens": 12}},
            }
        ],
    }
    path = tmp_path / "old-1.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    state = read_session(path)
    assert state.agent == "vscode-copilot-chat"
    assert state.last_response is not None and state.last_response.model == "gpt-4o"
    assert (state.totals.input_tokens, state.totals.output_tokens) == (3_100, 12)


def test_copilots_summary_is_a_compaction(tmp_path: Path) -> None:
    records = lines_of(SAMPLE)
    result = records[5]["v"]  # request_1's result
    result["metadata"]["summary"] = {"toolCallRoundId": "round_1a", "text": "<summary>…"}
    state = read_session_data(tmp_path / SAMPLE.name, as_bytes(records))
    assert len(state.compactions) == 1
    assert [(m.role, m.kind) for m in state.context[:3]] == [
        ("user", "compact_summary"),
        ("user", "message"),
        ("assistant", "message"),
    ]


def place(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLE, path)
    return path


def test_discovery_covers_every_vscode_user_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    found = [
        place(home / ".config/Code/User/workspaceStorage/a/chatSessions/s1.jsonl"),
        place(home / ".config/Code - Insiders/User/workspaceStorage/b/chatSessions/s2.jsonl"),
        place(home / ".config/VSCodium/User/globalStorage/emptyWindowChatSessions/s3.jsonl"),
        place(
            home / "Library/Application Support/Code/User/workspaceStorage/c/chatSessions/s4.json"
        ),
        place(tmp_path / "appdata/Code/User/workspaceStorage/d/chatSessions/s5.jsonl"),
        place(tmp_path / "portable/user-data/User/workspaceStorage/e/chatSessions/s6.jsonl"),
    ]
    # The .json VS Code leaves beside a session it moved to .jsonl is not a second session.
    place(home / ".config/Code/User/workspaceStorage/a/chatSessions/s1.json")
    place(home / ".config/Code/User/workspaceStorage/a/state.vscdb.jsonl")  # not a session
    env = {"APPDATA": str(tmp_path / "appdata"), "VSCODE_PORTABLE": str(tmp_path / "portable")}
    assert sorted(PLUGIN.discover(env, home)) == sorted(found)


def test_vscodes_own_split_of_the_prompt_is_in_the_report() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(SAMPLE), "--json"]) == 0
    last = json.loads(out.getvalue())["last_request"]
    assert last["response_id"] == "request_3"
    split = {part["label"]: part for part in last["agent_prompt_breakdown"]}
    assert split["Tool Results"] == {
        "category": "User Context",
        "label": "Tool Results",
        "percent_of_prompt": 54.1,
        "tokens": round(24_118 * 0.541),
        "provenance": "inferred",
    }
    assert list(split) == ["System Instructions", "Tool Definitions", "Messages", "Tool Results"]


def test_the_autocompact_point_is_copilots_warm_cache_point() -> None:
    """The dashboard's auto-compaction point is the one `policies` gives Copilot with a warm
    cache (this conversation's jittered fraction of the prompt budget)."""
    state = read_session(SAMPLE)
    assert state.last_activity is not None
    just_after = datetime.fromisoformat(state.last_activity.replace("Z", "+00:00"))
    copilot = next(
        p for p in simulate(state, None, now=just_after)["strategies"] if p["strategy"] == "copilot"
    )
    assert copilot["cache"] == "warm"
    reader = AGENTS["vscode-copilot-chat"].reader(SAMPLE)
    reader.state = state
    assert reader.autocompact_at(111_616) == copilot["at_tokens"]
    assert 0.78 <= copilot["at_tokens"] / 111_616 <= 0.82


def test_ctxtop_sessions_lists_it_in_aligned_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The longest agent name yet (19 characters) keeps the table's columns in line."""
    place(tmp_path / "config/Code/User/workspaceStorage/a/chatSessions" / SAMPLE.name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sessions", "--agent", "vscode-copilot-chat"]) == 0
    header, row = out.getvalue().splitlines()
    assert row.startswith("vscode-copilot-chat ")
    assert header.index("last activity") == row.index("2026-11-18T11:08:40") == 20


def test_the_text_report_shows_vscodes_split_under_the_last_request() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(SAMPLE)]) == 0
    lines = out.getvalue().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("last req"))
    assert lines[at + 4] == "  agent's split: Tool Results              54.1%  13,048*"


DEBUG_LOG = ROOT / "sample_sessions/vscode-copilot-chat/debug-log.main.jsonl.sample"
SESSION_ID = SAMPLE.stem


def session_with_debug_log(tmp_path: Path, storage: str = "GitHub.copilot-chat") -> Path:
    """The sample session in a VS Code user directory of its own; its debug log where Copilot
    Chat writes it (``storage``: the workspace's, or ``globalStorage/...`` with no workspace
    storage)."""
    user = tmp_path / "User"
    shutil.copytree(ROOT / "sample_sessions/vscode-copilot-chat/User", user)
    session = tmp_path / SAMPLE.relative_to(WORKSPACE.parent.parent)
    base = session.parent.parent / storage
    log = base / "debug-logs" / SESSION_ID / "main.jsonl"
    log.parent.mkdir(parents=True)
    shutil.copy(DEBUG_LOG, log)
    return session


def test_the_debug_log_s_model_calls_are_the_requests_with_their_cache_reads(
    tmp_path: Path,
) -> None:
    """Two turns of two model calls each: four requests, each call's cache reads apart from
    its uncached input (the log's ``inputTokens`` holds both); without the debug log, the two
    turns' own figures and no cache reads."""
    without = read_session(SAMPLE)
    assert list(without.responses) == ["request_1", "request_3"]
    assert (without.totals.input_tokens, without.totals.cache_read_tokens) == (45_524, 0)
    state = read_session(session_with_debug_log(tmp_path))
    # The cancelled call (no usage) is no request.
    assert list(state.responses) == ["c1a", "c1b", "c3a", "c3b"]
    prompts = [(15_020, 0), (21_406, 14_848), (21_980, 21_248), (24_118, 21_888)]
    assert [
        (r.usage.input_tokens_total, r.usage.cache_read_tokens) for r in state.responses.values()
    ] == prompts
    totals = state.totals
    assert (totals.input_tokens, totals.cache_read_tokens, totals.output_tokens) == (
        sum(p - c for p, c in prompts),
        14_848 + 21_248 + 21_888,
        31 + 26 + 40 + 26,
    )
    # The turn's last prompt is its last call's: the same figure VS Code logged for the turn,
    # and VS Code's split of it goes with that call.
    last = state.last_response
    assert last is not None and last.key == "c3b"
    assert last.usage.input_tokens_total == without.last_response.usage.input_tokens_total  # type: ignore[union-attr]
    assert state.agent_shares is not None and state.agent_shares.response_key == "c3b"


def test_the_debug_log_in_global_storage_is_found_too(tmp_path: Path) -> None:
    session = session_with_debug_log(tmp_path, "../../globalStorage/github.copilot-chat")
    assert len(read_session(session).responses) == 4


def test_a_debug_log_read_live_gives_the_cold_reads_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turns' own figures first (no debug log yet), then the calls as Copilot Chat flushes
    them: never both counted, and the figures a cold read gives at the end."""
    monkeypatch.setattr("ctxtop.engine.sessions.adapter.COMPANION_RESCAN", 0.0)
    session = session_with_debug_log(tmp_path)
    log = session.parent.parent / "GitHub.copilot-chat/debug-logs" / SESSION_ID / "main.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.unlink()  # (file logging turned on in the middle of the session)
    reader = SessionReader(session)
    reader.poll(as_it_stands=True)
    assert reader.state is not None
    assert list(reader.state.responses) == ["request_1", "request_3"]
    for end in (5, len(lines)):  # turn 1's calls, then the rest
        log.write_bytes(b"".join(lines[:end]))
        reader.poll(as_it_stands=True)
    live, cold = reader.state, read_session(session)
    assert list(live.responses) == list(cold.responses) == ["c1a", "c1b", "c3a", "c3b"]
    assert live.totals == cold.totals
    assert live.agent_shares == cold.agent_shares
