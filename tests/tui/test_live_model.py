"""The headless live model: views, the demo replay, settings and themes as data."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from ctxtop.engine.config import Settings, Thresholds, config_path, load_settings
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.live.demo import DEMO_SESSION, DemoReplay, demo_lines
from ctxtop.engine.live.locate import choose, searched
from ctxtop.engine.live.session import LiveSession
from ctxtop.engine.live.view import Gauge
from ctxtop.engine.sessions.limits import CRITICAL, OK, WARNING
from ctxtop.engine.sessions.report_json import build_report
from ctxtop.themes.loader import BUNDLED, ThemeFileError, all_themes, load_theme_text


def test_view_matches_ctxtop_report() -> None:
    # The sample in place, with its sub-agent's file beside it.
    session = Path(str(resources.files("ctxtop.sample_sessions").joinpath(*DEMO_SESSION)))
    live = LiveSession(session)
    assert live.poll()
    view = live.view()
    assert view is not None
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "ctxtop", "report", "--json", str(session)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert view.gauge.percent == report["fill_percent"]
    assert view.gauge.tokens == report["context_tokens"]["value"]
    assert len(view.history) == report["api_requests"]
    assert [tool.name for tool in view.tools] == [tool["name"] for tool in report["tools"]]
    assert view.compactions == len(report["compactions"])
    # The parts add up to the context figure: estimates plus the inferred rest, marked so.
    assert sum(row.tokens for row in view.categories) == view.gauge.tokens
    assert {row.source for row in view.categories} == {"estimated", "inferred"}
    assert view.subagents and [row.name for row in view.subagents] == [
        sub["description"] or sub["id"] for sub in report["subagents"]
    ]


def test_gauge_state_follows_the_thresholds() -> None:
    def gauge(tokens: int) -> Gauge:
        return Gauge(tokens, 1000, "reported", "registry", 650, 850, 900)

    assert gauge(100).state == OK
    assert gauge(700).state == WARNING
    assert gauge(860).state == CRITICAL
    assert gauge(100).reserved == 100 and gauge(100).to_autocompact == 800


def test_demo_replays_line_by_line_then_starts_over(tmp_path: Path) -> None:
    target = tmp_path / "demo.jsonl"
    lines = [b'{"a": 1}\n', b'{"a": 2}\n', b'{"a": 3}\n']
    demo = DemoReplay(target, lines, first=1)
    assert target.read_bytes() == b""
    demo.step()
    demo.step()
    assert target.read_bytes() == b"".join(lines[:2])
    demo.step()
    assert demo.finished
    demo.step()
    assert target.read_bytes() == lines[0] and demo.rounds == 1


def test_demo_opens_with_its_first_request_on_screen(tmp_path: Path) -> None:
    demo = DemoReplay(tmp_path / "demo.jsonl")
    demo.step()
    live = LiveSession(demo.target)
    live.poll()
    view = live.view()
    assert view is not None and view.api_requests == 1 and view.gauge.source != "estimated"


def test_settings_file_overrides_defaults_and_rejects_bad_values() -> None:
    assert load_settings() == Settings()
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text("theme: ctxtop-light\nthresholds: {editing: 0.5}\nrefresh: 1\ncolour: x\n")
    settings = load_settings()
    assert settings.theme == "ctxtop-light"
    assert settings.thresholds == Thresholds(editing=0.5, compaction=0.85)
    assert settings.refresh == 1.0 and settings.unknown == ("colour",)
    path.write_text("thresholds: {editing: 0.9, compaction: 0.8}\n")
    with pytest.raises(CtxtopError, match="editing must not be above"):
        load_settings()


def test_no_file_means_following_the_newest_and_naming_where_it_looked(tmp_path: Path) -> None:
    target = choose(None, "claude-code")
    assert target.follow_newest
    assert any("claude-code" in line for line in searched("claude-code"))
    with pytest.raises(CtxtopError, match="unknown agent"):
        choose(None, "no-such-agent")
    with pytest.raises(CtxtopError, match="no such session file"):
        choose(str(tmp_path / "missing.jsonl"), None)


def test_bundled_and_user_themes(isolated_dirs: Path) -> None:
    themes, errors = all_themes()
    assert [theme.name for theme in themes] == list(BUNDLED) and errors == []
    folder = isolated_dirs / "config" / "themes"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text("name: mine\nprimary: '#123456'\ndark: true\n")
    (folder / "broken.yaml").write_text("name: broken\n")
    themes, errors = all_themes()
    assert themes[-1].name == "mine"
    assert len(errors) == 1 and "broken.yaml" in errors[0]
    with pytest.raises(ThemeFileError, match="primary: not a colour"):
        load_theme_text("name: x\nprimary: blurple\n", "x.yaml")
    with pytest.raises(ThemeFileError, match="unknown keys"):
        load_theme_text("name: x\nprimary: '#000000'\ncolour: red\n", "x.yaml")


def test_categories_kept_incrementally_match_the_report_at_every_line(tmp_path: Path) -> None:
    """Appended line by line through the /compact: the live totals equal a fresh breakdown."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(b"")
    live = LiveSession(session)
    for line in demo_lines():
        with session.open("ab") as out:
            out.write(line)
        live.poll()
        view = live.view()
        if view is None:
            continue
        adapter = live.reader.adapter
        assert adapter is not None
        fresh = build_report(adapter, breakdown=True)["context_breakdown"]
        kept = view.sample.breakdown
        assert kept is not None
        assert [(entry.name, entry.tokens, entry.blocks) for entry in kept.categories] == [
            (entry["category"], entry["tokens"], entry["blocks"]) for entry in fresh["categories"]
        ]
        unattributed = kept.outside_log
        if view.gauge.source == "compaction":
            # The agent's "after" counts its messages only: the part not in the log is the
            # system prompt and tools (issue 15, case 2; the tokenizer's count, as the
            # compaction's "after" adds them), and what the agent counted that the log does
            # not show yet; with the log's part, the gauge.
            assert view.analysis is not None and view.analysis.system_counted is not None
            system = view.analysis.system_counted
            in_log = kept.estimated_total
            assert unattributed >= system and fresh["unattributed"] < system
            assert unattributed + in_log == view.gauge.tokens
        else:
            assert unattributed == fresh["unattributed"]
