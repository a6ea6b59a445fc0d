"""The ctxtop command as a user runs it: a real process, real files, stdout and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ctxtop.engine import __version__
from ctxtop.engine.config import config_path


def ctxtop(
    *args: str, stdin: str | None = None, module: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``ctxtop`` script (or ``python -m tui``) from an unrelated directory."""
    script = Path(sys.executable).parent / "ctxtop"
    command = [sys.executable, "-m", "ctxtop"] if module or not script.exists() else [str(script)]
    with tempfile.TemporaryDirectory() as elsewhere:
        return subprocess.run(
            [*command, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=os.environ.copy(),
            cwd=elsewhere,
        )


def test_version_from_the_console_script_and_python_dash_m() -> None:
    for module in (False, True):
        result = ctxtop("--version", module=module)
        assert result.returncode == 0
        assert result.stdout.strip() == f"ctxtop {__version__}"


def test_count_a_file_prints_the_encoders_count(tmp_path: Path) -> None:
    source = tmp_path / "f.js"
    source.write_text("function foo() { return x + y; }")
    result = ctxtop("count", str(source), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["tokens"], data["encoding"], data["model"]) == (10, "o200k_base", None)


def test_count_from_stdin_with_an_encoding() -> None:
    result = ctxtop("count", "-", "--encoding", "cl100k_base", "--json", stdin="日本語テキスト")
    assert json.loads(result.stdout)["tokens"] == 7


def test_count_with_a_model_uses_its_encoding_and_says_when_it_is_an_estimate() -> None:
    result = ctxtop("count", "--model", "gpt-4o", "--json", stdin="日本語テキスト")
    data = json.loads(result.stdout)
    assert (data["tokens"], data["encoding"], data["model"], data["exact"]) == (
        5,
        "o200k_base",
        "gpt-4o",
        True,
    )
    text = ctxtop("count", "--model", "claude-sonnet-4-5", stdin="hello world")
    assert (
        text.stdout.strip()
        == "2 tokens (o200k_base) (estimate: claude-sonnet-4-5 uses another tokenizer)"
    )


def test_count_messages_applies_the_chat_rules(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            [
                {"role": "system", "content": "hello world"},
                {"role": "user", "content": "function foo() { return x + y; }"},
            ]
        )
    )
    data = json.loads(ctxtop("count", str(chat), "--messages", "--json").stdout)
    assert data["per_message"] == [3 + 2, 3 + 10]
    assert data["tokens"] == 18


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("count", "/no/such/file"), None, "ctxtop: /no/such/file: cannot read"),
        (("count", "-", "--messages"), '[{"role": "user"},\n oops]', "ctxtop: -:2: invalid JSON"),
        (("count", "-", "--encoding", "p50k"), "x", "ctxtop: unknown encoding 'p50k'"),
    ],
)
def test_errors_are_one_line_with_a_nonzero_exit(
    args: tuple[str, ...], stdin: str | None, message: str
) -> None:
    result = ctxtop(*args, stdin=stdin)
    assert result.returncode != 0
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_models_lists_the_registry_and_resolves_one_id() -> None:
    table = ctxtop("models")
    assert table.returncode == 0
    rows = {line.split()[0]: line.split() for line in table.stdout.splitlines() if line}
    # Claude Code 2.1.332's default model, from the dataset.
    assert rows["claude-opus-5-5"][2:4] == ["1,000,000", "dataset"]
    one = json.loads(ctxtop("models", "no-such-model", "--json").stdout)
    assert (one[0]["known"], one[0]["context_window_source"]) == (False, "assumed")
    assert one[0]["note"] == "window unknown, assuming 200k"
    opus = json.loads(ctxtop("models", "claude-opus-5-5", "--json").stdout)[0]
    assert opus["context_window"] == 1_000_000
    assert opus["context_window_from"].startswith("genai-prices ")
    assert opus["prices_source"] == "dataset" and opus["prices_per_mtok"]["cache_read"] == 0.2
    words = ctxtop("models", "claude-opus-5-5").stdout
    assert "window      1,000,000  from genai-prices" in words


def test_models_names_the_user_file_a_figure_comes_from(isolated_dirs: Path) -> None:
    config = isolated_dirs / "config"
    config.mkdir(parents=True)
    entry = "{match: claude-opus-5-5, context_window: 1}"
    (config / "models.yaml").write_text(f"models:\n  - {entry}\n")
    row = json.loads(ctxtop("models", "claude-opus-5-5", "--json").stdout)[0]
    assert (row["context_window"], row["context_window_source"]) == (1, "user file")
    assert row["context_window_from"] == f"user file {config / 'models.yaml'}"
    assert row["prices_source"] == "dataset"


def test_sessions_says_where_each_context_figure_comes_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = Path(__file__).resolve().parents[2] / "sample_sessions/claude-code/projects"
    sample = projects / "-home-dev-demo-project/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
    home = tmp_path / ".claude" / "projects" / "p"
    home.mkdir(parents=True)
    (home / sample.name).write_bytes(sample.read_bytes())
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    shown = ctxtop("sessions", "--agent", "claude-code")
    listed = json.loads(ctxtop("sessions", "--agent", "claude-code", "--json").stdout)
    assert shown.returncode == 0, shown.stderr
    header, row = shown.stdout.splitlines()
    assert "(source)" in header
    assert f"{listed[0]['context_tokens']:,} ({listed[0]['context_source']})" in row


def test_right_after_a_compaction_statusline_and_sessions_give_the_reports_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code logs the context after a /compact as the messages only (postTokens); until
    the next request reports it, the quick looks (status line, sessions listing) add the system
    prompt as ``ctxtop report`` and the dashboard do, instead of showing a fill 8x too low."""
    projects = Path(__file__).resolve().parents[2] / "sample_sessions/claude-code/projects"
    sample = projects / "-home-dev-demo-project/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
    lines = sample.read_bytes().splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if b'"compact_boundary"' in line)
    home = tmp_path / ".claude" / "projects" / "p"
    home.mkdir(parents=True)
    session = home / sample.name
    session.write_bytes(b"".join(lines[: boundary + 2]))  # the boundary and its summary
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    report = json.loads(ctxtop("report", "--json", str(session)).stdout)
    context = report["context_tokens"]
    assert context["source"] == "compaction"
    assert context["value"] > 5 * report["compactions"][-1]["post_tokens"]  # system prompt in
    listed = json.loads(ctxtop("sessions", "--agent", "claude-code", "--json").stdout)
    assert [row["context_tokens"] for row in listed] == [context["value"]]
    status = {"transcript_path": str(session), "model": {"id": report["model"]}}
    line = ctxtop("statusline", stdin=json.dumps(status)).stdout
    shown = f"{round(report['fill_percent'])}% {round(context['value'] / 1000)}k/"
    assert line.startswith(f"ctx {shown}")


def test_a_settings_file_that_is_not_utf8_is_a_one_line_error_naming_its_line() -> None:
    path = config_path()  # in this test's own config dir (conftest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"refresh_seconds: 1\ntheme: \xff\xfe\n")
    result = ctxtop("config")
    assert result.returncode == 2
    assert result.stderr == f"ctxtop: {path}:2: not valid UTF-8\n"


def test_models_of_a_session_names_the_window_its_agent_states() -> None:
    root = Path(__file__).resolve().parents[2] / "tests/sessions/data"
    rollout = next((root / "real/codex/generated-cli-0.169.0").rglob("rollout-*.jsonl"))
    logged = [
        line["payload"]["info"]["model_context_window"]
        for line in map(json.loads, rollout.read_text().splitlines())
        if line.get("type") == "event_msg"
        and line["payload"].get("type") == "token_count"
        and line["payload"].get("info")
    ]
    row = json.loads(ctxtop("models", "--session", str(rollout), "--json").stdout)[0]
    assert (row["context_window"], row["context_window_source"]) == (logged[-1], "logged")
    assert row["context_window_from"] == "the session's log"
    chat = next((root / "generated/gemini-cli").rglob("session-*.jsonl"))
    words = ctxtop("models", "--session", str(chat)).stdout
    # Gemini CLI 0.61.0's tokenLimit: its log states no window.
    assert "window      1,048,576  from the agent's own rule (its CLI)" in words


def test_an_empty_log_in_a_claude_code_project_is_an_empty_session(tmp_path: Path) -> None:
    """Claude Code 2.0 leaves empty .jsonl files in its project folders: they were "not a
    session log of any supported agent"."""
    project = tmp_path / ".claude/projects/-home-dev-app"
    project.mkdir(parents=True)
    empty = project / "0b5d6b2c-6a65-4f0e-9d1e-5f0e6c3a9a11.jsonl"
    empty.write_bytes(b"")
    for command in ("report", "edit", "compact"):
        result = ctxtop(command, str(empty))
        assert result.returncode == 2
        assert result.stderr == f"ctxtop: {empty}: empty session (no records yet)\n"
    other = tmp_path / "other.jsonl"
    other.write_text('{"a": 1}\n')
    assert "not a session log of any supported agent" in ctxtop("report", str(other)).stderr


def test_edit_live_on_a_session_no_proxy_saw_says_nothing_is_applied_yet(
    tmp_path: Path, isolated_dirs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "applied live" with no word that the session's requests never went through
    ctxtop's proxy, nor that no proxy was running."""
    import socket

    from ctxtop.engine.cli.main import main

    session = tmp_path / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
    sample = Path(__file__).resolve().parents[2] / "sample_sessions/claude-code/projects"
    session.write_bytes((sample / "-path-to-Demo" / session.name).read_bytes())
    settings = isolated_dirs / "config" / "config.yaml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    with socket.create_server(("127.0.0.1", 0)) as listening:
        port = listening.getsockname()[1]
        settings.write_text(f"proxy:\n  port: {port}\n", encoding="utf-8")
        assert main(["edit", str(session), "--live", "--keep-cycles", "0"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"planned live (not applied yet) for session {session.stem}")
        assert "warning: no request of this session has gone through ctxtop's proxy" in out
        assert "the agent must be started through it" in out
    # Nothing listens on the port now.
    assert main(["edit", str(session), "--live", "--keep-cycles", "0"]) == 0
    out = capsys.readouterr().out
    assert f"nothing listens on http://127.0.0.1:{port}: start ctxtop proxy" in out
    assert "applied live" not in out
