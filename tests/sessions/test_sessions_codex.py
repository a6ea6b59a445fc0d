"""``ctxtop report --json`` on Codex CLI rollouts against figures derived here from the raw JSON.

The expectations follow the rules in agent-log-formats.md §2 directly: a response is a
``token_count`` whose cumulative ``total_token_usage`` changed (Codex writes each one twice), its
usage is ``last_token_usage``; Codex's ``input_tokens`` includes the cached ones; the context after
a ``compacted`` record is its ``replacement_history``.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import test_sessions_tail as tail
from sessions_expect import ENC, records, report
from test_sessions_tail import _report

from ctxtop.engine.agents.discovery import discover
from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.cli.main import main
from ctxtop.engine.live.sessions_table import SessionsTable

ROOT = Path(__file__).resolve().parents[2]
REAL = (
    Path(__file__).parent
    / "data/real/codex/generated-cli-0.169.0/sessions/2026/11/22"
    / "rollout-2026-11-22T14-09-59-01a20397-a65f-7be0-a82b-63e59b296bcb.jsonl"
)
SAMPLE_HOME = ROOT / "sample_sessions" / "codex"
ROLLOUTS = sorted(SAMPLE_HOME.glob("sessions/*/*/*/rollout-*.jsonl"))
SAMPLE = ROLLOUTS[0]  # Codex 0.169's; the tests below were written on it
# 0.120: no ``ordinal``, no ``token_usage_record`` (usage only in the doubled token_count).
GENERATED = Path(__file__).parent / "data/generated/codex"
OLDER = next((GENERATED / "exec-resume-0.120").glob("sessions/*/*/*/*.jsonl"))
FILES = [REAL, SAMPLE, OLDER]
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def token_counts(rows: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(line, info) of every token_count event that carries usage."""
    return [
        (line, row["payload"]["info"])
        for line, row in enumerate(rows, 1)
        if row["type"] == "event_msg"
        and row["payload"]["type"] == "token_count"
        and row["payload"]["info"] is not None
    ]


def responses(rows: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(line, last_token_usage) of each response: a token_count whose running total changed."""
    out = []
    previous = None
    for line, info in token_counts(rows):
        if info["total_token_usage"] != previous:
            out.append((line, info["last_token_usage"]))
        previous = info["total_token_usage"]
    return out


def tools(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Tool name → (calls, result tokens), each call id once."""
    names: dict[str, str] = {}
    outputs: dict[str, str] = {}
    for row in rows:
        payload = row["payload"]
        if row["type"] != "response_item":
            continue
        if payload["type"] in CALLS:
            names.setdefault(payload["call_id"], payload["name"])
        elif payload["type"] in OUTPUTS:
            outputs[payload["call_id"]] = payload["output"]
    out: dict[str, tuple[int, int]] = {}
    for call_id, name in names.items():
        calls, tokens = out.get(name, (0, 0))
        out[name] = (calls + 1, tokens + ENC.count(outputs.get(call_id, "")))
    return out


@pytest.fixture(scope="module", params=FILES, ids=["real-0.169", "sample-0.169", "gen-0.120"])
def case(request: pytest.FixtureRequest) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
    path: Path = request.param
    return path, records(path), report(path)


def test_identity_window_and_autocompact(
    case: tuple[Path, list[dict[str, Any]], dict[str, Any]],
) -> None:
    path, rows, got = case
    meta = rows[0]["payload"]
    assert rows[0]["type"] == "session_meta"
    assert got["agent"] == "codex"
    assert got["agent_version"] == meta["cli_version"]
    assert got["session_id"] == meta["id"] and path.stem.endswith(meta["id"])
    assert got["cwd"] == meta["cwd"]
    models = [r["payload"]["model"] for r in rows if r["type"] == "turn_context"]
    assert got["model"] == models[-1]
    window = token_counts(rows)[-1][1]["model_context_window"]
    assert got["context_window"] == window and got["context_window_source"] == "logged"
    # Codex logs 95 % of the model's window and compacts at 90 % of the model's window.
    assert got["autocompact_at"] == (window * 100 // 95) * 9 // 10
    assert got["skipped_lines"] == []


def test_usage_counted_once_per_response(
    case: tuple[Path, list[dict[str, Any]], dict[str, Any]],
) -> None:
    _, rows, got = case
    found = responses(rows)
    assert len(token_counts(rows)) > len(found)  # the doubled token_count is in both files
    assert got["api_requests"] == len(found)
    usages = [usage for _, usage in found]
    assert got["totals"] == {
        "input": sum(u["input_tokens"] - u["cached_input_tokens"] for u in usages),
        "output": sum(u["output_tokens"] for u in usages),
        "cache_read": sum(u["cached_input_tokens"] for u in usages),
        "cache_write": sum(u.get("cache_write_input_tokens", 0) for u in usages),
    }
    # The same totals as Codex's own running total, and one response per token_usage_record.
    running = token_counts(rows)[-1][1]["total_token_usage"]
    assert got["totals"]["input"] + got["totals"]["cache_read"] == running["input_tokens"]
    assert got["totals"]["output"] == running["output_tokens"]
    response_ids = [r["payload"]["response_id"] for r in rows if r["type"] == "token_usage_record"]
    assert len(set(response_ids)) == (got["api_requests"] if response_ids else 0)


def test_last_request_and_context(
    case: tuple[Path, list[dict[str, Any]], dict[str, Any]],
) -> None:
    _, rows, got = case
    line, usage = responses(rows)[-1]
    last = got["last_request"]
    assert last["input_tokens_total"] == usage["input_tokens"]
    assert last["input_tokens"] == usage["input_tokens"] - usage["cached_input_tokens"]
    assert last["output_tokens"] == usage["output_tokens"]
    assert last["cache_read_tokens"] == usage["cached_input_tokens"]
    assert last["cache_write_tokens"] == usage.get("cache_write_input_tokens", 0)
    records_ = [r["payload"] for r in rows if r["type"] == "token_usage_record"]
    if records_:
        assert last["response_id"] == records_[-1]["response_id"]
    # Nothing was sent to the model after the last response: the context is its figure.
    assert not [r for r in rows[line:] if r["type"] == "response_item"]
    reported = usage["input_tokens"] + usage["output_tokens"]
    assert got["context_tokens"]["value"] == reported
    assert got["context_tokens"]["source"] == "reported"
    assert got["fill_percent"] == round(100 * reported / got["context_window"], 1)


def test_compactions(case: tuple[Path, list[dict[str, Any]], dict[str, Any]]) -> None:
    _, rows, got = case
    expected = []
    for index, row in enumerate(rows):
        if row["type"] != "compacted":
            continue
        # The prompt of the summarising request: the last response before the compaction;
        # the "after": the prompt of the first request after it (Codex's own estimate in the
        # token_count between them is only an estimate).
        summarised = [usage for line, usage in responses(rows) if line <= index][-1]
        following = next(usage for line, usage in responses(rows) if line > index + 1)
        if "latest_token_usage_record" in row["payload"]:  # 0.169 names that request
            assert row["payload"]["latest_token_usage_record"]["usage"] == summarised
        expected.append(
            {
                "trigger": "auto",  # mid-turn: Codex's own
                "pre_tokens": summarised["input_tokens"],
                "post_tokens": following["input_tokens"],
                "post_tokens_source": "request",
                "line": index + 1,
            }
        )
    assert len(expected) == 1
    assert [
        {
            key: c[key]
            for key in ("trigger", "pre_tokens", "post_tokens", "post_tokens_source", "line")
        }
        for c in got["compactions"]
    ] == expected


def test_tools(case: tuple[Path, list[dict[str, Any]], dict[str, Any]]) -> None:
    _, rows, got = case
    assert {t["name"]: (t["calls"], t["result_tokens"]) for t in got["tools"]} == tools(rows)


def test_sample_has_freeform_and_parallel_calls() -> None:
    """The sample covers apply_patch (custom_tool_call) and two calls in one response."""
    got = report(SAMPLE)
    by_name = {t["name"]: t["calls"] for t in got["tools"]}
    assert by_name["apply_patch"] == 3
    assert by_name["exec_command"] == 10


def _head(path: Path, lines: int, target: Path) -> Path:
    target.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:lines]))
    return target


def test_after_a_compaction_the_context_is_codexs_count_of_the_new_history(
    tmp_path: Path,
) -> None:
    rows = records(REAL)
    compacted = next(i for i, r in enumerate(rows, 1) if r["type"] == "compacted")
    counted = next(
        i
        for i, r in enumerate(rows, 1)
        if i > compacted and r["type"] == "event_msg" and r["payload"]["type"] == "token_count"
    )
    got = report(_head(REAL, counted, tmp_path / "a.jsonl"))
    post = rows[counted - 1]["payload"]["info"]["last_token_usage"]["total_tokens"]
    assert got["context_tokens"]["value"] == post
    assert got["context_tokens"]["source"] == "compaction"
    assert got["compactions"][0]["post_tokens"] == post
    assert got["compactions"][0]["post_tokens_source"] == "estimate"


def test_right_after_a_compaction_the_new_history_is_estimated(tmp_path: Path) -> None:
    rows = records(REAL)
    compacted = next(i for i, r in enumerate(rows, 1) if r["type"] == "compacted")
    got = report(_head(REAL, compacted, tmp_path / "a.jsonl"))
    # The system prompt Codex logged plus every text of the replacement history.
    texts = [rows[0]["payload"]["base_instructions"]["text"]]
    for item in rows[compacted - 1]["payload"]["replacement_history"]:
        texts += [part["text"] for part in item.get("content", []) if "text" in part]
    assert got["context_tokens"]["source"] == "estimated"
    assert got["context_tokens"]["value"] == sum(ENC.count(text) for text in texts)
    assert got["compactions"][0]["post_tokens"] is None


def test_a_tool_output_not_yet_sent_is_estimated_on_top(tmp_path: Path) -> None:
    rows = records(REAL)
    # The big output follows its response's token_usage_record; cut right after it.
    output_line = next(
        i
        for i, r in enumerate(rows, 1)
        if r["type"] == "response_item"
        and r["payload"]["type"] == "function_call_output"
        and "19500" in r["payload"]["output"]
    )
    got = report(_head(REAL, output_line, tmp_path / "a.jsonl"))
    record = next(r for r in reversed(rows[:output_line]) if r["type"] == "token_usage_record")
    usage = record["payload"]["usage"]
    reported = usage["input_tokens"] + usage["output_tokens"]
    estimated = ENC.count(rows[output_line - 1]["payload"]["output"])
    assert got["context_tokens"]["source"] == "calibrated"
    assert got["context_tokens"]["reported"] == reported
    assert got["context_tokens"]["estimated"] == estimated
    assert got["context_tokens"]["value"] == reported + estimated


def test_detected_from_content_not_the_name(tmp_path: Path) -> None:
    renamed = tmp_path / "foo.jsonl"
    shutil.copy(REAL, renamed)
    got = report(renamed)
    assert got["agent"] == "codex"
    assert got["api_requests"] == len(responses(records(REAL)))
    # Read from the middle (no session_meta in sight), it is still a Codex rollout.
    reader = SessionReader(REAL, tail_bytes=REAL.stat().st_size // 3)
    quick = _report(reader)
    assert reader.partial and quick["agent"] == "codex"
    assert quick["last_request"]["response_id"] == report(REAL)["last_request"]["response_id"]


def test_bad_lines_are_skipped_and_located(tmp_path: Path) -> None:
    lines = REAL.read_bytes().splitlines(keepends=True)
    broken = b'{"timestamp": "2026-11-22T14:10:00.000Z", "type": "response_item", "payload": 7}\n'
    damaged = [*lines[:10], b'{"type": "event_msg", \n', *lines[10:20], broken, *lines[20:]]
    target = tmp_path / "rollout.jsonl"
    target.write_bytes(b"".join(damaged))
    got = report(target)
    assert [(s["file"], s["line"]) for s in got["skipped_lines"]] == [
        (str(target), 11),
        (str(target), 22),
    ]
    assert "JSON" in got["skipped_lines"][0]["reason"]
    assert "payload" in got["skipped_lines"][1]["reason"]
    clean = report(REAL)
    for key in ("api_requests", "totals", "tools", "context_tokens", "compactions"):
        if key == "compactions":
            assert [c["post_tokens"] for c in got[key]] == [c["post_tokens"] for c in clean[key]]
        else:
            assert got[key] == clean[key]


def test_written_in_pieces_reads_like_the_whole(tmp_path: Path) -> None:
    """The sample appended in random pieces (as Codex writes it) reports like the whole file."""
    tail.test_any_file_written_in_random_pieces_reads_like_the_whole(tmp_path, SAMPLE)
    assert _report(SessionReader(tmp_path / SAMPLE.name))["api_requests"] == len(
        responses(records(SAMPLE))
    )


def test_sessions_lists_rollouts_under_codex_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(SAMPLE_HOME))
    monkeypatch.setenv("HOME", str(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sessions", "--agent", "codex", "--json"]) == 0
    rows = json.loads(out.getvalue())
    assert sorted((row["agent"], row["file"]) for row in rows) == [
        ("codex", str(rollout)) for rollout in ROLLOUTS
    ]
    for row in rows:
        assert row["session_id"] == records(Path(row["file"]))[0]["payload"]["id"]


def test_sessions_lists_spawned_sub_agents_under_their_parent_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A dashboard following the newest session must not jump to a sub-agent's rollout."""
    day = tmp_path / "sessions" / "2026" / "11" / "23"
    day.mkdir(parents=True)
    files = sorted(GENERATED.glob("subagent-*/sessions/*/*/*/*.jsonl"))
    for path in files:
        shutil.copy(path, day / path.name)
    parents = {str(day / f.name) for f in files if records(f)[0]["payload"]["source"] == "exec"}
    assert len(parents) == 2 < len(files)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sessions", "--agent", "codex", "--json"]) == 0
    assert {row["file"] for row in json.loads(out.getvalue())} == parents


def test_a_rollout_written_again_at_a_spawned_ones_path_is_listed(tmp_path: Path) -> None:
    """Whether a rollout is a sub-agent's is remembered only while it exists: a session's
    rollout written where a sub-agent's was (removed since) is listed."""
    day = tmp_path / "sessions" / "2026" / "11" / "23"
    day.mkdir(parents=True)
    files = sorted(GENERATED.glob("subagent-*/sessions/*/*/*/*.jsonl"))
    child = next(f for f in files if records(f)[0]["payload"]["source"] != "exec")
    parent = next(f for f in files if records(f)[0]["payload"]["source"] == "exec")
    target = day / child.name
    env = {"CODEX_HOME": str(tmp_path)}

    def listed() -> list[Path]:
        return [found.path for found in discover("codex", env, tmp_path)]

    shutil.copy(child, target)
    assert listed() == []
    target.unlink()
    assert listed() == []
    shutil.copy(parent, target)
    assert listed() == [target]


def test_the_live_table_leaves_out_spawned_sub_agents_as_discovery_does(tmp_path: Path) -> None:
    """One rule: a spawned thread's rollout is read with its parent, not a row of its own, when
    it is written while the table watches (even created empty first) as when the table starts."""
    day = tmp_path / "sessions" / "2026" / "11" / "23"
    day.mkdir(parents=True)
    files = sorted(GENERATED.glob("subagent-*/sessions/*/*/*/*.jsonl"))
    parents = {day / f.name for f in files if records(f)[0]["payload"]["source"] == "exec"}
    env = {"CODEX_HOME": str(tmp_path)}
    watching = SessionsTable(agent="codex", env=env, home=tmp_path)
    watching.start()
    for path in files:
        copy = day / path.name
        copy.touch()  # the agent creates the file, then writes its first line
        watching.changed([copy])
        shutil.copy(path, copy)
        watching.changed([copy])
    started = SessionsTable(agent="codex", env=env, home=tmp_path)
    started.start()
    assert len(parents) == 2 < len(files)
    assert set(watching.tracked) == set(started.tracked) == parents


def test_the_configured_autocompact_limit_lowers_codexs_default(tmp_path: Path) -> None:
    day = tmp_path / "codex" / "sessions" / "2026" / "11" / "22"
    day.mkdir(parents=True)
    shutil.copy(REAL, day / REAL.name)
    (tmp_path / "codex" / "config.toml").write_text("model_auto_compact_token_limit = 5000\n")
    assert report(day / REAL.name)["autocompact_at"] == 5000
    (tmp_path / "codex" / "config.toml").write_text("model_auto_compact_token_limit = 900000\n")
    assert report(day / REAL.name)["autocompact_at"] == 190_000 * 100 // 95 * 9 // 10


def _rollout_line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-11-22T14:11:00.000Z", "type": kind, "payload": payload})


def test_a_spawned_sub_agents_rollout_is_a_sub_agent(tmp_path: Path) -> None:
    """A thread spawned by the session writes its own rollout (``source.subagent.thread_spawn``,
    §2.2); it starts by replaying the parent's token counts, which are not its own."""
    parent_rows = records(REAL)
    parent_id = parent_rows[0]["payload"]["id"]
    shutil.copy(REAL, tmp_path / REAL.name)
    child_id = "01a20397-ffff-7000-8000-000000000001"
    replayed = [
        next(r for r in parent_rows if r["type"] == "token_usage_record"),
        next(r for r in parent_rows if r["type"] == "event_msg" and r["payload"].get("info")),
    ]
    own = {"input_tokens": 800, "cached_input_tokens": 0, "output_tokens": 20, "total_tokens": 820}
    child_lines = [
        _rollout_line(
            "session_meta",
            {
                "id": child_id,
                "cli_version": "0.169.0",
                "source": {
                    "subagent": {
                        "thread_spawn": {"parent_thread_id": parent_id, "agent_role": "explorer"}
                    }
                },
            },
        ),
        *(json.dumps(row) for row in replayed),
        _rollout_line(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": own,
                    "last_token_usage": own,
                    "model_context_window": 190000,
                },
            },
        ),
    ]
    child = tmp_path / f"rollout-2026-11-22T14-11-00-{child_id}.jsonl"
    child.write_text("\n".join(child_lines) + "\n")
    got = report(tmp_path / REAL.name)
    alone = report(REAL)
    assert got["api_requests"] == alone["api_requests"] and got["totals"] == alone["totals"]
    assert [(s["id"], s["description"], s["api_requests"]) for s in got["subagents"]] == [
        (child_id, "explorer", 1)
    ]
    assert got["subagents"][0]["last_input_tokens_total"] == 800


def test_a_token_count_before_its_usage_record_is_the_same_response(tmp_path: Path) -> None:
    """Whatever order Codex writes them in, a record and its token_count are one response."""
    lines = REAL.read_bytes().splitlines(keepends=True)
    kinds = [json.loads(line)["type"] for line in lines]
    swapped = list(lines)
    for index, kind in enumerate(kinds):
        if kind == "token_usage_record":
            after = next(i for i in range(index + 1, len(lines)) if b'"token_count"' in lines[i])
            swapped.insert(after, swapped.pop(index))  # the record now follows its token_count
    assert swapped != lines
    target = tmp_path / "rollout.jsonl"
    target.write_bytes(b"".join(swapped))
    got, clean = report(target), report(REAL)
    for key in ("api_requests", "totals", "last_request", "context_tokens"):
        if key == "last_request":
            got[key].pop("line"), clean[key].pop("line")
        assert got[key] == clean[key]


@pytest.mark.parametrize("run", ["subagent-0.169", "subagent-fork-0.169"])
def test_real_spawned_sub_agents(run: str) -> None:
    """Codex 0.169 ran ``spawn_agent`` (fresh, and with ``fork_context``): the child thread's own
    rollout beside the parent's is its sub-agent, linked to the spawn call, apart in the totals."""
    files = sorted((GENERATED / run).glob("sessions/*/*/*/*.jsonl"))
    by_source = {str(records(f)[0]["payload"]["source"]) == "exec": f for f in files}
    parent, child = by_source[True], by_source[False]
    parent_rows, child_rows = records(parent), records(child)
    spawn = next(
        r["payload"]
        for r in parent_rows
        if r["type"] == "response_item" and r["payload"].get("name") == "spawn_agent"
    )
    answer = next(
        json.loads(r["payload"]["output"])
        for r in parent_rows
        if r["type"] == "response_item"
        and r["payload"]["type"] == "function_call_output"
        and r["payload"]["call_id"] == spawn["call_id"]
    )
    meta = child_rows[0]["payload"]
    assert answer["agent_id"] == meta["id"]
    got = report(parent)
    assert got["api_requests"] == len(responses(parent_rows))
    assert got["totals"]["output"] == sum(u["output_tokens"] for _, u in responses(parent_rows))
    child_responses = responses(child_rows)
    assert [
        (s["id"], s["description"], s["parent_tool_call_id"], s["api_requests"], s["file"])
        for s in got["subagents"]
    ] == [
        (
            meta["id"],
            meta["source"]["subagent"]["thread_spawn"]["agent_nickname"],
            spawn["call_id"],
            len(child_responses),
            str(child),
        )
    ]
    assert got["subagents"][0]["last_input_tokens_total"] == child_responses[-1][1]["input_tokens"]
    assert got["skipped_lines"] == []
