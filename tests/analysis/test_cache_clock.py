"""The cache clock on real logs: how long the prompt cache stays warm (5 minutes, or an hour where
the log shows 1-hour writes or Claude Code's settings ask for one), what the next request costs
now and after expiry, and Claude Code's own status-line figures winning over ctxtop's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.agents.claude_code.rules import claude_cache_ttl, read_settings
from ctxtop.engine.agents.session_reader import SessionReader, read_all
from ctxtop.engine.models.registry import lookup
from ctxtop.engine.sessions.cache_clock import (
    CLAUDE_CODE,
    CachedPrefix,
    action_timing,
    agent_cache,
    cache_clock,
    countdown,
    state_text,
)
from ctxtop.engine.sessions.sample import build_sample

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "sample_sessions/claude-code/projects"
# Claude Code 2.1.330, every write an hour's (``ephemeral_1h_input_tokens``); last request
# 2026-11-22T14:04:41.330Z, read 22,547 + wrote 193.
ONE_HOUR = PROJECTS / "-home-dev-demo-project/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
# Claude Code 2.1.332 with 5-minute writes.
FIVE_MINUTES = PROJECTS / "-home-dev-projects-calc-main/ff656323-5d3c-47d4-a01f-e8bc70c19faf.jsonl"
LAST_REQUEST = datetime(2026, 11, 22, 14, 4, 41, 330000, tzinfo=UTC).timestamp()


@pytest.fixture(autouse=True)
def no_agent_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's settings and variables are the test's, never the machine's."""
    config = tmp_path / ".claude"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    for name in ("ENABLE_PROMPT_CACHING_1H", "FORCE_PROMPT_CACHING_5M"):
        monkeypatch.delenv(name, raising=False)
    return config


def warm_of(path: Path) -> CachedPrefix:
    reader = SessionReader(path)
    read_all(reader)
    assert reader.adapter is not None
    warm = build_sample(reader.adapter).cache_prefix
    assert warm is not None
    return warm


def test_one_hour_writes_keep_the_cache_warm_an_hour_from_the_last_request() -> None:
    warm = warm_of(ONE_HOUR)
    assert (warm.ttl_seconds, warm.ttl_source) == (3600, "log")
    assert warm.used_at == pytest.approx(LAST_REQUEST)
    assert warm.tokens == 22_547 + 193  # what the last request read and wrote
    clock = cache_clock(warm, LAST_REQUEST + 42)
    assert clock is not None and clock.warm
    assert state_text(clock, LAST_REQUEST + 42) == "cache warm 59:18"
    prices = lookup("claude-sonnet-4-5").prices
    assert prices is not None
    assert clock.read_cost == pytest.approx(warm.tokens * prices.cache_read / 1e6)
    assert clock.rewrite_cost == pytest.approx(warm.tokens * prices.cache_write_1h / 1e6)
    cold = cache_clock(warm, LAST_REQUEST + 3601)
    assert cold is not None and not cold.warm and cold.seconds_left == 0
    assert state_text(cold, LAST_REQUEST + 3601, UTC) == "cache cold since 15:04"
    assert state_text(cold, LAST_REQUEST + 86_400, UTC) == "cache cold since Nov 22 15:04"


def test_five_minute_writes_and_the_settings_that_ask_for_an_hour(no_agent_settings: Path) -> None:
    warm = warm_of(FIVE_MINUTES)
    assert (warm.ttl_seconds, warm.ttl_source) == (300, "default")
    no_agent_settings.mkdir()
    (no_agent_settings / "settings.json").write_text('{"promptCacheTtl": "1h"}')
    warm = warm_of(FIVE_MINUTES)
    assert (warm.ttl_seconds, warm.ttl_source) == (3600, "settings")
    (no_agent_settings / "settings.json").write_text(
        '{"promptCacheTtl": "1h", "env": {"FORCE_PROMPT_CACHING_5M": "1"}}'
    )
    assert warm_of(FIVE_MINUTES).ttl_seconds == 300


def test_claude_code_settings_and_variables_choose_the_ttl(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{}")
    assert claude_cache_ttl({}, read_settings([settings])) is None
    assert claude_cache_ttl({"ENABLE_PROMPT_CACHING_1H": "1"}, read_settings([settings])) == 3600
    settings.write_text('{"env": {"ENABLE_PROMPT_CACHING_1H": "true"}}')
    assert claude_cache_ttl({}, read_settings([settings])) == 3600
    settings.write_text('{"promptCacheTtl": "5m", "env": {"ENABLE_PROMPT_CACHING_1H": "1"}}')
    assert claude_cache_ttl({}, read_settings([settings])) == 300


def test_claude_codes_own_figures_win() -> None:
    warm = CachedPrefix(20_000, LAST_REQUEST, 300, "default", "claude-sonnet-4-5")
    status = {
        "prompt_cache": {
            "warm": True,
            "ttl": "1h",
            "expires_at": "2026-11-22T15:00:00Z",
            "hit_ratio": 0.93,
            "last_miss_cause": "ttl expired",
        }
    }
    agent = agent_cache(status)
    assert agent is not None and agent.ttl_seconds == 3600 and agent.hit_ratio == 0.93
    now = datetime(2026, 11, 22, 14, 50, tzinfo=UTC).timestamp()
    clock = cache_clock(warm, now, agent=agent)
    assert clock is not None
    # ctxtop alone says cold (5 minutes after 14:04:41); Claude Code says warm until 15:00.
    assert not cache_clock(warm, now).warm  # type: ignore[union-attr]
    assert clock.warm and clock.source == CLAUDE_CODE and clock.ttl_source == CLAUDE_CODE
    assert state_text(clock, now) == "cache warm 10:00"
    assert clock.hit_ratio == 0.93 and clock.last_miss_cause == "ttl expired"
    # Its TTL prices the rewrite: an hour's writes.
    prices = lookup("claude-sonnet-4-5").prices
    assert prices is not None
    assert clock.rewrite_cost == pytest.approx(20_000 * prices.cache_write_1h / 1e6)
    assert agent_cache({"prompt_cache": {"warm": "yes"}}) is None
    assert agent_cache({}) is None
    assert agent_cache({"prompt_cache": {"ttl": 300, "hit_ratio": 87}}).hit_ratio == 0.87  # type: ignore[union-attr]


def test_countdown_and_action_timing() -> None:
    assert [countdown(s) for s in (0.2, 59, 192, 3599, 3600)] == [
        "0:01",
        "0:59",
        "3:12",
        "59:59",
        "1:00:00",
    ]
    warm = CachedPrefix(100_000, LAST_REQUEST, 300, "default", "claude-sonnet-4-5")
    now = cache_clock(warm, LAST_REQUEST + 108)
    assert now is not None
    prices = lookup("claude-sonnet-4-5").prices
    assert prices is not None
    # After expiry the 60,000 tokens left are written again: $0.207 (3.75 - 0.30 per million).
    assert action_timing(now, 0.05, 40_000) == (
        "cache warm 3:12: cheaper now ($0.050) than after expiry ($0.207)"
    )
    assert action_timing(now, 0.5, 40_000) == (
        "cache warm 3:12: cheaper after expiry ($0.207) than now ($0.500)"
    )
    later = cache_clock(warm, LAST_REQUEST + 301)
    assert later is not None
    assert action_timing(later, 0.05, 40_000) == (
        "cache cold: the prefix is rewritten anyway ($0.207), acting is free"
    )


# -- the commands --------------------------------------------------------------------------------


def ctxtop(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CTXTOP_CONFIG_DIR": str(home / "config"),
        "CTXTOP_CACHE_DIR": str(home / "cache"),
        "CTXTOP_DATA_DIR": str(home / "data"),
        "TZ": "UTC",
    }
    return subprocess.run(
        [sys.executable, "-m", "ctxtop", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )


def recent_copy(tmp_path: Path, ago: float) -> Path:
    """The 1-hour session with its times moved so that its last request was ``ago`` seconds
    before now (the log's own shape; only the clock moves)."""
    shift = datetime.now(UTC) - timedelta(seconds=ago) - datetime.fromtimestamp(LAST_REQUEST, UTC)

    def moved(match: re.Match[str]) -> str:
        when = datetime.fromisoformat(match.group(1).replace("Z", "+00:00")) + shift
        return '"timestamp":"' + when.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    path = tmp_path / ONE_HOUR.name
    text = ONE_HOUR.read_text(encoding="utf-8")
    path.write_text(re.sub(r'"timestamp":"([^"]+)', moved, text), encoding="utf-8")
    return path


def report(home: Path, session: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ctxtop(home, "report", "--json", str(session)).stdout)
    return data


def test_report_text_and_json(tmp_path: Path) -> None:
    cold = report(tmp_path, ONE_HOUR)["cache_clock"]
    assert cold["warm"] is False and cold["seconds_left"] == 0
    assert cold["expires_at"] == "2026-11-22T15:04:41Z"
    assert (cold["ttl_seconds"], cold["ttl_source"], cold["source"]) == (3600, "log", "ctxtop")
    text = ctxtop(tmp_path, "report", str(ONE_HOUR)).stdout
    line = next(line for line in text.splitlines() if line.startswith("clock "))
    assert line.startswith("clock      cache cold since Nov 22 15:04; next request writes")
    assert f"{cold['prefix_tokens']:,} tokens again: ${cold['rewrite_cost_usd']:.3f}" in line
    assert "TTL 1 h (the log's 1-hour writes)" in line

    session = recent_copy(tmp_path, 100)
    warm = report(tmp_path, session)["cache_clock"]
    assert warm["warm"] is True and 3400 < warm["seconds_left"] <= 3500
    assert warm["prefix_tokens"] == cold["prefix_tokens"]
    assert warm["waiting_cost_usd"] == pytest.approx(
        warm["rewrite_cost_usd"] - warm["read_cost_usd"], abs=1e-6
    )
    text = ctxtop(tmp_path, "report", str(session)).stdout
    assert re.search(r"^clock      cache warm 5\d:\d\d; next request \$0\.007 now,", text, re.M)


def test_statusline_with_and_without_claude_codes_prompt_cache(tmp_path: Path) -> None:
    session = recent_copy(tmp_path, 100)
    clock = report(tmp_path, session)["cache_clock"]
    status: dict[str, Any] = {"transcript_path": str(session), "model": {"id": "x"}}
    line = ctxtop(tmp_path, "statusline", stdin=json.dumps(status)).stdout.strip()
    part = line.split(" · ")[-2:]
    assert re.fullmatch(r"cache warm 5\d:\d\d\*", part[0]), line
    assert part[1] == f"+${clock['waiting_cost_usd']:.3f} after*"

    expires = (datetime.now(UTC) + timedelta(minutes=3)).isoformat()
    status["prompt_cache"] = {
        "warm": True,
        "ttl": 300,
        "expires_at": expires,
        "hit_ratio": 0.91,
        "last_miss_cause": "model changed",
    }
    line = ctxtop(tmp_path, "statusline", stdin=json.dumps(status)).stdout.strip()
    assert re.search(
        r" · cache warm [23]:\d\d \(Claude Code, hit ratio 91%, last miss: model changed\) · \+\$",
        line,
    ), line
    status["prompt_cache"] = {"warm": False}
    line = ctxtop(tmp_path, "statusline", stdin=json.dumps(status)).stdout.strip()
    # Claude Code says cold where ctxtop's clock says warm: its word, without ctxtop's time.
    assert " · cache cold (Claude Code) · " in line
    assert line.endswith(f"next ${clock['rewrite_cost_usd']:.3f}*")


@pytest.mark.parametrize(
    ("command", "log"),
    [
        (("edit", "--keep-tool-uses", "0"), ONE_HOUR),
        (("compact", "--keep-rounds", "1"), ONE_HOUR),
        (("edit", "--keep-tool-uses", "0"), FIVE_MINUTES),
    ],
)
def test_edit_and_compact_price_the_rewrite_at_the_logs_write_price(
    tmp_path: Path, command: tuple[str, ...], log: Path
) -> None:
    """The 1-hour session's rewrite is written for an hour, as the clock prices its expiry."""
    outcome = json.loads(ctxtop(tmp_path, *command, str(log), "--dry-run", "--json").stdout)
    prices = lookup(outcome.get("priced_by") or "claude-sonnet-4-5").prices
    assert prices is not None
    write = prices.cache_write_1h if log == ONE_HOUR else prices.cache_write_5m
    tokens = outcome["cache_rewrite_tokens"]
    assert tokens > 0
    assert outcome["cache_rewrite_cost_usd"] == pytest.approx(
        tokens * (write - prices.cache_read) / 1e6
    )
