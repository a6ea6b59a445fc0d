"""One decision per figure: a session's window, the agent's auto-compact point and ctxtop's
triggers (engine/sessions/limits.py), and the part of the context the log does not show
(engine/live/whole.py ``outside_log``) are the same in every view of one session:
``ctxtop report --json`` and its analysis, the dashboard's gauge, the sessions table, the
statusline and a fork's preview. The last test fails when a second implementation of one of
these decisions creeps back into the code."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxtop.engine.agents.strategies import simulate_file
from ctxtop.engine.cli.main import main
from ctxtop.engine.config import Thresholds
from ctxtop.engine.editing.pools import Target
from ctxtop.engine.forks.compact import compactable
from ctxtop.engine.forks.transaction import COMPACTING, load
from ctxtop.engine.live.session import AnalysisChoice, LiveSession
from ctxtop.engine.live.sessions_row import SessionRow, session_figures
from ctxtop.engine.live.sessions_text import level
from ctxtop.engine.live.view import LiveView
from ctxtop.engine.sessions.limits import CRITICAL, WARNING
from ctxtop.engine.statusline import status_line
from ctxtop.engine.tokens.short import short_tokens

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
CLAUDE = (
    SAMPLES
    / "claude-code/projects/-home-dev-demo-project/b7f51370-d8c8-469b-95e6-e7046fb8d0f3.jsonl"
)
CODEX_ROLLOUT = "rollout-2026-11-23T03-15-46-01a20667-0c69-7050-8ebb-bb746d3f79b0.jsonl"
# One session per way a window is known: the dataset (Claude Code), the log (Codex, Copilot
# CLI), the agent's own rule (Gemini CLI).
SESSIONS = {
    "claude-code": CLAUDE,
    "codex": SAMPLES / "codex/sessions/2026/11/23" / CODEX_ROLLOUT,
    "gemini-cli": SAMPLES
    / "gemini-cli/.gemini/tmp/calc-gemini/chats/session-2026-11-23T03-12-196d3f0b.jsonl",
    "copilot-cli": SAMPLES
    / "copilot-cli/session-state/244e876e-1a43-4419-88f6-972d1b6e8877/events.jsonl",
}
FORKABLE = ("claude-code", "codex")


@pytest.fixture(autouse=True)
def no_agent_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No settings of the machine's agents (a home of their own, no Claude Code variables)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)


def report_of(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["report", "--json", "--breakdown", str(path)]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def dashboard(path: Path, thresholds: Thresholds | None = None) -> tuple[LiveView, SessionRow]:
    """The dashboard's view of ``path`` and the sessions table's row of it."""
    live = LiveSession(path, thresholds=thresholds)
    live.poll()
    view = live.view()
    assert view is not None and live.reader.adapter is not None
    state = live.reader.adapter.snapshot()
    return view, session_figures(view.sample, view.analysis, state, path.parent)


def status(path: Path, thresholds: Thresholds | None = None) -> str:
    return status_line({"transcript_path": str(path), "model": {"id": "x"}}, thresholds)


@pytest.mark.parametrize("agent", SESSIONS)
def test_every_view_has_the_sessions_window_auto_compact_point_and_triggers(
    agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = SESSIONS[agent]
    report = report_of(path, capsys)
    limits = report["analysis"]["thresholds"]
    window = (report["context_window"], report["context_window_source"])
    assert window == (limits["window"], limits["window_source"])

    view, row = dashboard(path)
    for gauge in (view.gauge, view.shown_gauge):
        assert (gauge.window, gauge.window_source) == window
        assert (gauge.editing_at, gauge.compaction_at) == (
            limits["editing_at"],
            limits["compaction_at"],
        )
    assert view.gauge.autocompact_at == report["autocompact_at"]
    assert view.shown_gauge.autocompact_at == limits["autocompact_at"]
    sample = view.sample
    assert (sample.window.tokens, sample.autocompact_at) == (window[0], report["autocompact_at"])
    # The part of the context the log does not show: the dashboard's "not in the log" rows.
    outside = report["context_breakdown"]["unattributed"]
    assert sample.breakdown is not None and sample.breakdown.outside_log == outside
    assert sum(row.tokens for row in view.categories if row.source != "estimated") == outside

    assert row.window == window[0]

    line = status(path)
    tokens = report["context_tokens"]["value"]
    assert f"/{short_tokens(window[0], digits=0)}" in line
    if report["autocompact_at"] is not None:
        left = max(report["autocompact_at"] - tokens, 0)
        assert f"· {short_tokens(left, digits=0)} to auto-compact" in line

    if agent in FORKABLE:
        copy = tmp_path / path.name
        shutil.copyfile(path, copy)
        assert main(["edit", str(copy), "--target", "50%", "--dry-run", "--json"]) == 0
        outcome = json.loads(capsys.readouterr().out)
        assert outcome["target"]["target_tokens"] == Target.parse("50%").tokens(window[0])
        assert outcome["context_outside_log"] == outside
        assert compactable(load(copy, COMPACTING)).window == window[0]


@pytest.mark.parametrize("agent", SESSIONS)
def test_the_report_and_its_analysis_have_one_auto_compact_point(
    agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gemini CLI and Copilot CLI are analysed with the copilot layout (``autocompact: none``,
    Copilot Chat's): their own rule still gives the analysis's point (it had none)."""
    report = report_of(SESSIONS[agent], capsys)
    assert report["autocompact_at"] is not None
    assert report["autocompact_at"] == report["analysis"]["thresholds"]["autocompact_at"]


@pytest.mark.parametrize(("profile", "compacts"), [("copilot", False), ("codex", True)])
def test_another_agents_layout_says_whether_the_session_compacts_by_itself(
    profile: str, compacts: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """A what-if with another agent's layout profile (``--profile``, ``p``): under Copilot
    Chat's (``autocompact: none``: it prunes instead) the Claude Code session has no auto-compact
    point, in the report's analysis and on the gauge alike; under Codex's (``agent``) it keeps
    Claude Code's. The session's own figure is Claude Code's either way."""
    assert main(["report", "--json", "--profile", profile, str(CLAUDE)]) == 0
    report = json.loads(capsys.readouterr().out)
    own = report["autocompact_at"]
    assert own is not None
    limits = report["analysis"]["thresholds"]
    assert limits["autocompact_at"] == (own if compacts else None)
    live = LiveSession(CLAUDE)
    live.poll()
    view = live.view(AnalysisChoice(profile=profile))
    assert view is not None and view.foreign_profile == profile
    assert view.gauge.autocompact_at == own
    assert view.shown_gauge.autocompact_at == limits["autocompact_at"]


# The demo session's context is 22,773 tokens of a 200,000-token window: 11.4 %.
DEMO_TOKENS = 22_773


def test_the_table_and_the_statusline_colour_a_fill_as_the_gauge_does() -> None:
    """A fill shown as 11.4 % is short of a compaction trigger at 11.4 % (22,800 tokens): the
    gauge is yellow, and so are the sessions table and the statusline (they compared the
    rounded % with the fraction and said red)."""
    thresholds = Thresholds(editing=0.11, compaction=0.114)
    view, row = dashboard(CLAUDE, thresholds)
    assert view.gauge.tokens == DEMO_TOKENS and view.gauge.compaction_at == 22_800
    assert row.fill_percent == 11.4
    assert view.gauge.state == level(row, thresholds) == WARNING
    assert status(CLAUDE, thresholds).startswith("! ctx 11% ")


def test_the_statusline_marks_a_fill_past_the_auto_compact_point_as_the_gauge_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Claude Code compacting at 12 % of its effective window (21,600 tokens): the gauge is red
    past that point far below ctxtop's triggers, and the statusline says so (it said nothing)."""
    monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "12")
    view, _ = dashboard(CLAUDE)
    assert view.gauge.autocompact_at == 21_600 < view.gauge.tokens == DEMO_TOKENS
    assert view.gauge.state == CRITICAL
    assert status(CLAUDE).startswith("!! ctx 11% 23k/200k · 0 to auto-compact")


def test_a_what_if_window_has_one_name_in_the_report_and_on_the_gauge(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--budget 64000`` and ``b`` on the dashboard: the window's source is ``what-if`` in
    both (the report's analysis said ``override``)."""
    assert main(["report", "--json", "--budget", "64000", str(CLAUDE)]) == 0
    limits = json.loads(capsys.readouterr().out)["analysis"]["thresholds"]
    live = LiveSession(CLAUDE)
    live.poll()
    view = live.view(AnalysisChoice(window=64_000))
    assert view is not None
    gauge = view.shown_gauge
    assert (limits["window"], limits["window_source"]) == (64_000, "what-if")
    assert (gauge.window, gauge.window_source) == (64_000, "what-if")
    assert (gauge.editing_at, gauge.compaction_at, gauge.autocompact_at) == (
        limits["editing_at"],
        limits["compaction_at"],
        limits["autocompact_at"],
    )


def own_row(path: Path, agent: str) -> dict[str, Any]:
    """The compact screen's strategies row of ``agent``, the session's own."""
    simulation = simulate_file(path)
    assert simulation is not None
    row: dict[str, Any] = {row["strategy"]: row for row in simulation["strategies"]}[agent]
    return row


def claude_in_project(tmp_path: Path, settings: dict[str, Any]) -> Path:
    """The demo session as run in a project whose ``.claude/settings.json`` is ``settings``."""
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude/settings.json").write_text(json.dumps(settings), encoding="utf-8")
    session = tmp_path / CLAUDE.name
    session.write_text(
        CLAUDE.read_text("utf-8").replace("/home/dev/demo-project", str(project)), "utf-8"
    )
    return session


def test_the_compact_screens_row_of_the_sessions_own_agent_is_its_auto_compact_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Codex sample's window is the effective one Codex logged: it compacts at 244,800 (the
    row said 232,560, 90 % of the logged window). A Claude Code project whose settings cap the
    auto-compact window at 150,000 compacts at 117,000 (the row said 167,000: the user's
    settings only)."""
    codex = SESSIONS["codex"]
    assert own_row(codex, "codex")["at_tokens"] == report_of(codex, capsys)["autocompact_at"]
    assert report_of(codex, capsys)["autocompact_at"] == 244_800
    claude = claude_in_project(tmp_path, {"autoCompactWindow": 150_000})
    row = own_row(claude, "claude-code")
    assert row["at_tokens"] == report_of(claude, capsys)["autocompact_at"] == 117_000
    assert (row["does"], row["source"]) == ("compact", "session")
    off = claude_in_project(tmp_path / "off", {"autoCompactEnabled": False})
    row = own_row(off, "claude-code")
    assert (row["at_tokens"], row["does"]) == (None, "never: auto-compact off")
    assert report_of(off, capsys)["autocompact_at"] is None


# Each decision and the only files that make it: anywhere else, a second implementation.
LIMITS = "engine/sessions/limits.py"
DECISIONS = {
    # The window: the log's, else the agent's rule, else the registry's.
    r"\bresolve_window\(": {"engine/models/window.py", LIMITS},
    r"\.cli_window\(": set(),
    # The auto-compact point: the agent's rule applied to the window.
    r"\.autocompact_at\(": set(),
    # The triggers in tokens, and a fill compared with them (config.py checks the fractions).
    r"(thresholds|triggers)\.(editing|compaction)\s*[*<>/]": {LIMITS, "engine/config.py"},
    r"[*<>]=?\s*[\w.]*(thresholds|triggers)\.(editing|compaction)\b": {LIMITS, "engine/config.py"},
    r"[<>]=?\s*[\w.]*\b(editing_at|compaction_at|autocompact_at)\b": {LIMITS},
    r"\b(editing_at|compaction_at|autocompact_at)\s*[<>]": {LIMITS},
    # The part of the context the log does not show.
    r"\.system_counted\b": {"engine/live/whole.py"},
}


def test_each_decision_is_made_in_one_place() -> None:
    sources = sorted([*ROOT.glob("engine/**/*.py"), *ROOT.glob("tui/**/*.py")])
    found: list[str] = []
    for path in sources:
        name = path.relative_to(ROOT).as_posix()
        for number, text in enumerate(path.read_text("utf-8").splitlines(), 1):
            code = text.split("#", 1)[0]
            found.extend(
                f"{name}:{number}: {text.strip()}"
                for pattern, places in DECISIONS.items()
                if name not in places and re.search(pattern, code)
            )
    assert not found, "\n".join(found)
