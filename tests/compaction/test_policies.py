"""When each known compaction strategy fires on a session, for the dashboard: Copilot (warm and
cold cache, per-session jitter), CodeCompanion (editing, compaction, the 10,000-token minimum),
Claude Code's auto-compact point and Codex's configured limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ctxtop.engine.agents.strategies import copilot_jitter, schedule, simulate
from ctxtop.engine.sessions.model import Message, SessionState, Usage

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
WINDOW = 200_000


def session(
    fill: int, idle_seconds: float, session_id: str = "s-1", agent: str = "openai-messages"
) -> SessionState:
    """A session of Claude Sonnet 4.5 whose last request's prompt was ``fill`` tokens, ``idle``
    seconds ago; by default of an agent with no rule of its own, so every agent's row is its
    rule's."""
    state = SessionState(agent=agent, path=Path("/x.jsonl"), session_id=session_id)
    when = (NOW - timedelta(seconds=idle_seconds)).isoformat()
    state.record_response("r1", Usage(input_tokens=fill), model="claude-sonnet-4-5", timestamp=when)
    state.context.append(Message("m1", "assistant", [], response_key="r1"))
    return state


def by_name(result: dict[str, object]) -> dict[str, dict[str, object]]:
    strategies = result["strategies"]
    assert isinstance(strategies, list)
    return {entry["strategy"]: entry for entry in strategies}


def run(
    state: SessionState, tmp_path: Path, own: int | None = None, **kwargs: object
) -> dict[str, dict[str, object]]:
    """The strategies, ``own`` being the session's auto-compact point."""
    env = {"CODEX_HOME": str(tmp_path / "codex")}
    return by_name(simulate(state, own, now=NOW, env=env, home=tmp_path, **kwargs))  # type: ignore[arg-type]


def test_copilot_fires_near_80_percent_warm_and_90_percent_cold(tmp_path: Path) -> None:
    jitter = copilot_jitter("s-1")
    assert 0.78 <= jitter <= 0.82 and copilot_jitter("s-1") == jitter
    assert len({copilot_jitter(f"s-{n}") for n in range(20)}) > 1  # it varies per session
    warm = run(session(int(WINDOW * 0.85), idle_seconds=30), tmp_path)["copilot"]
    assert warm["cache"] == "warm" and warm["fires"]
    assert warm["at_tokens"] == int(WINDOW * jitter)
    cold = run(session(int(WINDOW * 0.85), idle_seconds=3600), tmp_path)["copilot"]
    assert cold["cache"] == "cold" and not cold["fires"]
    assert cold["at_tokens"] == int(WINDOW * 0.90)
    assert cold["drop_summary_below_tokens"] == int(WINDOW * 0.65)


def test_codecompanion_edits_at_65_and_compacts_at_85_unless_saving_little(
    tmp_path: Path,
) -> None:
    at_70 = run(session(int(WINDOW * 0.70), 30), tmp_path, saving=50_000)
    assert at_70["codecompanion-editing"]["fires"]
    assert not at_70["codecompanion-compaction"]["fires"]
    at_90 = run(session(int(WINDOW * 0.90), 30), tmp_path, saving=50_000)
    assert at_90["codecompanion-compaction"]["fires"]
    small = run(session(int(WINDOW * 0.90), 30), tmp_path, saving=9_999)
    assert not small["codecompanion-compaction"]["fires"]
    assert small["codecompanion-compaction"]["skipped"]


@pytest.mark.parametrize("fill", [160_000, 170_000])
def test_claude_code_fires_at_its_auto_compact_point(tmp_path: Path, fill: int) -> None:
    # window 200,000 − min(max output, 20,000) − 13,000 = 167,000 for Sonnet 4.5
    claude = run(session(fill, 30), tmp_path)["claude-code"]
    assert claude["at_tokens"] == 167_000
    assert claude["fires"] == (fill >= 167_000)


def test_codex_uses_its_configured_limit_else_90_percent(tmp_path: Path) -> None:
    state = session(150_000, 30)
    default = run(state, tmp_path)["codex"]
    assert default["at_tokens"] == 180_000 and not default["fires"]
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text(
        'model = "gpt-5"\nmodel_auto_compact_token_limit = 120000\n', encoding="utf-8"
    )
    configured = run(state, tmp_path)["codex"]
    assert configured["at_tokens"] == 120_000 and configured["fires"]
    assert configured["source"] == "config.toml"


def test_the_sessions_own_agent_is_at_the_sessions_point_not_its_rule_again(
    tmp_path: Path,
) -> None:
    """A Claude Code session whose project's settings move its point (the sample's 117,000):
    its row says that point; Codex's row is still Codex's rule on that window."""
    rows = run(session(120_000, 30, agent="claude-code"), tmp_path, own=117_000)
    assert rows["claude-code"]["at_tokens"] == 117_000 and rows["claude-code"]["fires"]
    assert rows["claude-code"]["source"] == "session"
    assert rows["codex"]["at_tokens"] == 180_000
    off = run(session(120_000, 30, agent="claude-code"), tmp_path, own=None)["claude-code"]
    assert (off["at_tokens"], off["fires"], off["does"]) == (None, False, "never: auto-compact off")


def test_the_schedule_says_how_far_each_strategy_is_in_tokens_and_requests(
    tmp_path: Path,
) -> None:
    env = {"CODEX_HOME": str(tmp_path / "codex")}
    state = session(150_000, 3600)
    simulation = simulate(state, None, now=NOW, env=env, home=tmp_path, saving=5_000)
    rows = {row["strategy"]: row for row in schedule(simulation, growth_per_request=2_000.0)}
    # Claude Code compacts at 167,000: 17,000 tokens away, 8.5 requests at 2,000 a request.
    assert rows["claude-code"]["tokens_away"] == 17_000
    assert rows["claude-code"]["requests_away"] == 8.5
    assert rows["claude-code"]["does"] == "compact"
    # Already past CodeCompanion's editing point (130,000): it fires now.
    assert rows["codecompanion-editing"]["tokens_away"] == 0
    assert rows["codecompanion-editing"]["does"] == "edit"
    assert rows["codecompanion-compaction"]["does"] == "skip: saves < 10k"
    assert rows["copilot"]["label"] == "Copilot (cold)"
    assert rows["codex"]["tokens_away"] == 30_000 and rows["codex"]["requests_away"] == 15.0
    # No growth (or a shrinking context): no request count, the tokens still.
    for growth in (None, 0.0, -500.0):
        flat = {row["strategy"]: row for row in schedule(simulation, growth)}
        assert flat["codex"]["requests_away"] is None and flat["codex"]["tokens_away"] == 30_000
