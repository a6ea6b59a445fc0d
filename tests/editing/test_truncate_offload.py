"""Copilot-style caps on large tool results: head 40 % / tail 60 % with a marker, or the whole
result moved to a new file (JSON with its schema) and a pointer left in its place."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.agents import names_fork
from ctxtop.engine.cli.main import main
from ctxtop.engine.editing.json_schema import schema_of
from ctxtop.engine.editing.offload import OFFLOADED_MARK, Offloader
from ctxtop.engine.editing.policy import Policy
from ctxtop.engine.editing.size_limit import Limit
from ctxtop.engine.editing.truncate import TRUNCATED_MARK, truncate
from ctxtop.engine.editing.undo import undo
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.edit import edit_session
from ctxtop.engine.tokens.encoding import get_encoding

COUNT = get_encoding("o200k_base").count
BUILD_LOG = "".join(
    f"[{n:05d}] compiling module_{n % 97}.c ... ok ({n * 7 % 1000} ms)\n" for n in range(3000)
)
RECORDS = [
    {"id": n, "name": f"item {n}", "tags": ["a", "b"], "price": n * 1.5, "owner": {"id": n % 7}}
    for n in range(400)
]
RECORDS[3]["discontinued"] = True


def _split(cut: str) -> tuple[str, str, str]:
    start = cut.index("\n" + TRUNCATED_MARK)
    end = cut.index("]\n", start) + 2
    return cut[:start], cut[start:end], cut[end:]


def test_over_the_limit_keeps_40_percent_head_and_60_percent_tail() -> None:
    cut = truncate(BUILD_LOG, 500, COUNT, "To see it again, run the command again: make")
    assert COUNT(cut) <= 500 < COUNT(BUILD_LOG)
    head, marker, tail = _split(cut)
    assert BUILD_LOG.startswith(head) and BUILD_LOG.endswith(tail)
    assert abs(len(head) / (len(head) + len(tail)) - 0.4) < 0.005
    assert f"it had {COUNT(BUILD_LOG)} tokens" in marker and "run the command again: make" in marker
    assert COUNT(cut) > 400  # the room is used, not thrown away


def test_under_the_limit_is_unchanged() -> None:
    assert truncate(BUILD_LOG, COUNT(BUILD_LOG), COUNT) is BUILD_LOG


def test_limits_parse_tokens_and_percentages() -> None:
    assert Limit.parse("50%").of(200_000) == 100_000
    assert Limit.parse("1200").of(200_000) == 1200
    for bad in ("0", "-5", "150%", "lots", "nan%"):
        with pytest.raises(CtxtopError):
            Limit.parse(bad)


def test_schema_of_an_array_of_records() -> None:
    schema = schema_of(RECORDS)
    assert schema["type"] == "array"
    items = schema["items"]
    assert items["type"] == "object"
    assert items["required"] == ["id", "name", "tags", "price", "owner"]  # not "discontinued"
    assert items["properties"]["discontinued"] == {"type": "boolean"}
    assert items["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert items["properties"]["owner"]["properties"]["id"] == {"type": "integer"}
    assert schema_of([1, "a", None])["items"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]
    }


def _session(tmp_path: Path, results: dict[str, tuple[str, dict[str, Any], str]]) -> Path:
    messages: list[dict[str, Any]] = []
    for call, (tool, arguments, content) in results.items():
        messages += [
            {"role": "user", "content": f"please run {call}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps(arguments)},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call, "content": content},
            {"role": "assistant", "content": "done"},
        ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"model": "gpt-4o", "messages": messages}), encoding="utf-8")
    return path


def _fork_results(outcome: dict[str, Any]) -> dict[str, str]:
    data = json.loads(Path(outcome["fork"]).read_text(encoding="utf-8"))
    return {m["tool_call_id"]: m["content"] for m in data["messages"] if m["role"] == "tool"}


def test_edit_truncates_every_large_result_even_in_kept_cycles(tmp_path: Path) -> None:
    source = _session(
        tmp_path,
        {
            "build": ("shell", {"command": "make"}, BUILD_LOG),
            "small": ("shell", {"command": "ls"}, "a\nb\n"),
            "memory": ("memory_view", {}, BUILD_LOG),
            "last": ("shell", {"command": "make test"}, BUILD_LOG),
        },
    )
    before = source.read_bytes()
    policy = Policy(keep_turns=3, mode="none", truncate_at=Limit(400, percent=False))
    outcome = edit_session(source, policy).as_json()
    assert source.read_bytes() == before
    results = _fork_results(outcome)
    assert [c["tool_call_id"] for c in outcome["changed"]] == ["build", "last"]
    for call in ("build", "last"):
        assert COUNT(results[call]) <= 400 and TRUNCATED_MARK in results[call]
    assert results["small"] == "a\nb\n" and results["memory"] == BUILD_LOG  # memory: excluded
    assert "Do not call shell again to see it" in results["last"]  # make test: not a read
    # 50 % of gpt-4o's window is far above these results: nothing to cut
    default = edit_session(
        source, Policy(mode="none", truncate_at=Limit(50, True)), dry_run=True
    ).as_json()
    assert default["changed"] == []


def test_offload_writes_the_whole_result_to_a_new_file_with_its_schema(tmp_path: Path) -> None:
    payload = json.dumps(RECORDS, separators=(",", ":"))
    source = _session(
        tmp_path,
        {
            "../../escape\nme": ("http_get", {"url": "https://api/items"}, payload),
            "log": ("shell", {"command": "make"}, BUILD_LOG),
        },
    )
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    results_dir = tmp_path / "large"
    policy = Policy(mode="none", truncate_at=Limit(300, percent=False), offload=True)
    outcome = edit_session(source, policy, results_dir=results_dir).as_json()
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before
    files = [Path(name) for name in outcome["offloaded"]]
    directory = results_dir / outcome["session_id"]
    assert {path.parent for path in files} == {directory}  # the odd call id stayed inside
    assert sorted(os.listdir(directory)) == sorted(path.name for path in files)  # no temp files
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in files)

    results = _fork_results(outcome)
    pointer = results["../../escape\nme"]
    assert pointer.startswith(OFFLOADED_MARK) and COUNT(pointer) <= 300
    data_file = next(
        path for path in files if path.name.endswith(".json") and ".schema" not in path.name
    )
    assert f"Read it at: {data_file}" in pointer
    assert json.loads(data_file.read_text(encoding="utf-8")) == RECORDS
    assert data_file.read_text(encoding="utf-8").startswith("[\n  {")  # pretty, for line reads
    schema_file = next(path for path in files if path.name.endswith(".schema.json"))
    assert json.loads(schema_file.read_text(encoding="utf-8")) == schema_of(RECORDS)
    assert f"Its JSON schema is at: {schema_file}" in pointer and '"discontinued"' in pointer
    text_file = next(path for path in files if path.suffix == ".txt")
    assert text_file.read_text(encoding="utf-8") == BUILD_LOG
    assert str(text_file) in results["log"]

    # undo removes the fork and the files it pointed to
    done = undo(outcome["action_id"], fork_named=names_fork)
    assert done["removed"] and sorted(done["removed_files"]) == sorted(map(str, files))
    assert not directory.exists()


def test_offloader_never_overwrites_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    offloader = Offloader(tmp_path / "out")
    offloader.pointer("call", "x" * 100, 30)
    (written,) = offloader.write()
    again = Offloader(tmp_path / "out")
    again.pointer("call", "y" * 100, 30)
    with pytest.raises(CtxtopError, match="already exists"):
        again.write()
    assert written.read_text() == "x" * 100

    source = _session(tmp_path, {"log": ("shell", {"command": "make"}, BUILD_LOG)})
    policy = Policy(mode="none", truncate_at=Limit(300, percent=False), offload=True)
    outcome = edit_session(source, policy, dry_run=True, results_dir=tmp_path / "dry").as_json()
    assert outcome["changed"] and outcome["offloaded"] == [] and not (tmp_path / "dry").exists()


def test_command_line_truncate_and_offload(tmp_path: Path, capsys: Any) -> None:
    source = _session(tmp_path, {"log": ("shell", {"command": "make"}, BUILD_LOG)})
    assert main(["edit", str(source), "--mode", "none", "--truncate-at", "350", "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["policy"]["truncate_at"] == "350" and not outcome["policy"]["offload"]
    assert TRUNCATED_MARK in _fork_results(outcome)["log"]
    target = tmp_path / "big-results"
    args = ["edit", str(source), "--mode", "none", "--large-results-dir", str(target)]
    assert main([*args, "--truncate-at", "350"]) == 0
    text = capsys.readouterr().out
    assert f"large result written to: {target}" in text
    with pytest.raises(SystemExit):
        main(["edit", str(source), "--truncate-at", "lots"])
    assert "--truncate-at: not a token count or a percentage: 'lots'" in capsys.readouterr().err


def test_a_percentage_limit_is_of_the_prompt_budget(tmp_path: Path) -> None:
    from ctxtop.engine.models.registry import lookup as model_info

    info = model_info("gpt-4o")
    limit = (info.context_window - info.max_output) // 100  # 1 % of what a request may send
    source = _session(tmp_path, {"log": ("shell", {"command": "make"}, BUILD_LOG)})
    policy = Policy(mode="none", truncate_at=Limit(1, percent=True))
    outcome = edit_session(source, policy, dry_run=True).as_json()
    (change,) = outcome["changed"]
    assert limit - 60 <= change["tokens_after"] <= limit
