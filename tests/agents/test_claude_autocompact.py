"""Claude Code's own auto-compact rule (2.1.332): effective window = window − min(max output,
20k), compaction at effective − 13k, with its environment overrides and its settings files,
read from real files in a temporary home and project as the CLI reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxtop.engine.agents.claude_code.rules import claude_autocompact_at, claude_settings
from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.models.registry import lookup
from ctxtop.engine.sessions.sample import Sample, build_sample

SAMPLE = (
    Path(__file__).resolve().parents[2]
    / "sample_sessions/claude-code/projects/-home-dev-demo-project"
    / "b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)
OPUS = "claude-opus-5-5"
WINDOW = 1_000_000  # its window (the issue: what Claude Code 2.1.332 reports)
RESERVE = min(lookup(OPUS).max_output, 20_000)
BUFFER = 13_000


def report_sample(path: Path) -> Sample:
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    return build_sample(reader.adapter)


def at(
    env: dict[str, str], home: Path, cwd: Path | None = None, window: int = WINDOW
) -> int | None:
    return claude_autocompact_at(window, OPUS, env, claude_settings(env, home, cwd))


def write(path: Path, document: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


def test_default_point_is_window_less_output_reserve_less_buffer(home: Path) -> None:
    assert at({}, home) == WINDOW - RESERVE - BUFFER == 967_000


def test_a_model_with_a_small_max_output_reserves_only_that() -> None:
    small = lookup("claude-3-5-haiku-20241022")
    assert small.max_output < 20_000
    window = small.context_window
    assert claude_autocompact_at(window, small.model, {}) == window - small.max_output - BUFFER


@pytest.mark.parametrize(
    ("value", "window"),
    [
        ("400k", 400_000),
        ("400000", 400_000),
        ("0.5m", 500_000),
        ("50000", 100_000),  # under the 100k minimum: read as the minimum
        ("2m", WINDOW),  # never above the model's window
    ],
)
def test_auto_compact_window_variable_caps_the_window(home: Path, value: str, window: int) -> None:
    assert at({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": value}, home) == window - RESERVE - BUFFER


def test_an_unusable_auto_compact_window_is_ignored(home: Path) -> None:
    assert at({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "lots"}, home) == at({}, home)


def test_pct_override_only_lowers_the_point(home: Path) -> None:
    effective = WINDOW - RESERVE
    assert at({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, home) == effective // 2
    # 99 % of the effective window is above the normal point: the normal point stays.
    assert at({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "99"}, home) == effective - BUFFER
    for ignored in ("0", "150", "x"):
        assert at({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": ignored}, home) == effective - BUFFER


@pytest.mark.parametrize(
    "env",
    [{"DISABLE_AUTO_COMPACT": "1"}, {"DISABLE_COMPACT": "1"}, {"DISABLE_COMPACT": "true"}],
)
def test_disable_variables_turn_it_off(home: Path, env: dict[str, str]) -> None:
    assert at(env, home) is None


def test_disable_compact_set_to_false_leaves_it_on(home: Path) -> None:
    assert at({"DISABLE_COMPACT": "0"}, home) == at({}, home)


def test_user_settings_window(home: Path) -> None:
    write(home / ".claude/settings.json", {"autoCompactWindow": 300_000})
    assert at({}, home) == 300_000 - RESERVE - BUFFER


def test_project_settings_win_over_the_users_and_local_over_both(home: Path, project: Path) -> None:
    write(home / ".claude/settings.json", {"autoCompactWindow": 300_000})
    write(project / ".claude/settings.json", {"autoCompactWindow": 400_000})
    assert at({}, home, project) == 400_000 - RESERVE - BUFFER
    write(project / ".claude/settings.local.json", {"autoCompactWindow": "auto"})
    assert at({}, home, project) == WINDOW - RESERVE - BUFFER


def test_a_per_model_window_applies_to_that_model_only(home: Path) -> None:
    write(
        home / ".claude/settings.json",
        {"modelSettings": {OPUS: {"autoCompactWindow": 250_000}, "other": {"x": 1}}},
    )
    assert at({}, home) == 250_000 - RESERVE - BUFFER
    sonnet = lookup("claude-sonnet-4-5")
    settings = claude_settings({}, home, None)
    plain = sonnet.context_window - min(sonnet.max_output, 20_000) - BUFFER
    assert claude_autocompact_at(sonnet.context_window, sonnet.model, {}, settings) == plain


def test_the_variable_wins_over_the_settings(home: Path) -> None:
    write(home / ".claude/settings.json", {"autoCompactWindow": 300_000})
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "600k"}
    assert at(env, home) == 600_000 - RESERVE - BUFFER


def test_claude_config_dir_moves_the_user_settings(home: Path, tmp_path: Path) -> None:
    write(tmp_path / "config/settings.json", {"autoCompactWindow": 300_000})
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "config")}
    assert at(env, home) == 300_000 - RESERVE - BUFFER


def test_auto_compact_enabled_false_turns_it_off(home: Path, project: Path) -> None:
    write(home / ".claude/settings.json", {"autoCompactEnabled": False})
    assert at({}, home, project) is None
    write(project / ".claude/settings.local.json", {"autoCompactEnabled": True})
    assert at({}, home, project) == WINDOW - RESERVE - BUFFER


def test_the_legacy_global_config_counts_when_no_settings_file_says(home: Path) -> None:
    write(home / ".claude.json", {"autoCompactEnabled": False, "numStartups": 3})
    assert at({}, home) is None
    write(home / ".claude/settings.json", {"autoCompactEnabled": True})
    assert at({}, home) is not None


def test_a_broken_settings_file_is_skipped(home: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude/settings.json").write_text("{not json")
    assert at({}, home) == WINDOW - RESERVE - BUFFER


def test_the_reader_uses_the_sessions_project_settings(
    tmp_path: Path, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session of Claude Code's default model run in ``project``: its settings move the point
    ``ctxtop report`` shows, and the window is the model's 1M."""
    text = SAMPLE.read_text().replace("/home/dev/demo-project", str(project))
    session = tmp_path / "session.jsonl"
    session.write_text(text.replace('"model":"claude-sonnet-4-5"', f'"model":"{OPUS}"'))
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_AUTO_COMPACT_WINDOW", "DISABLE_AUTO_COMPACT"):
        monkeypatch.delenv(name, raising=False)
    sample = report_sample(session)
    assert (sample.window.tokens, sample.window.source) == (WINDOW, "dataset")
    assert sample.autocompact_at == WINDOW - RESERVE - BUFFER
    write(project / ".claude/settings.json", {"autoCompactWindow": 200_000})
    assert report_sample(session).autocompact_at == 200_000 - RESERVE - BUFFER


def test_max_context_tokens_is_the_window_of_a_model_nobody_knows(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CLAUDE_CODE_MAX_CONTEXT_TOKENS`` is the window Claude Code takes for a model it does
    not recognise; a known model keeps its own."""
    text = SAMPLE.read_text()
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(text.replace('"model":"claude-sonnet-4-5"', '"model":"acme-llm-7"'))
    known = tmp_path / "known.jsonl"
    known.write_text(text.replace('"model":"claude-sonnet-4-5"', f'"model":"{OPUS}"'))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "500000")
    sample = report_sample(unknown)
    assert (sample.window.tokens, sample.window.source) == (500_000, "cli")
    reserve = min(lookup("acme-llm-7").max_output, 20_000)
    assert sample.autocompact_at == 500_000 - reserve - BUFFER
    window = report_sample(known).window
    assert (window.tokens, window.source) == (WINDOW, "dataset")


def test_disable_1m_context_gives_claude_code_a_200k_window(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / "opus.jsonl"
    text = SAMPLE.read_text()
    session.write_text(text.replace('"model":"claude-sonnet-4-5"', f'"model":"{OPUS}"'))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_1M_CONTEXT", "1")
    sample = report_sample(session)
    assert (sample.window.tokens, sample.window.source) == (200_000, "cli")
    assert sample.autocompact_at == 200_000 - RESERVE - BUFFER


def test_a_project_path_the_log_garbles_reads_no_project_settings(home: Path) -> None:
    """The session's cwd comes from its log: a NUL or a path that is not a folder is no error."""
    assert at({}, home, Path("/tmp/a\x00b")) == WINDOW - RESERVE - BUFFER
    assert at({}, home, Path("/dev/null")) == WINDOW - RESERVE - BUFFER
