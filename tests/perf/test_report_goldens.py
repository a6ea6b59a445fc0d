"""Speed work must not change a figure: `ctxtop report --json` of every sample and test session
equals its golden file (computed before the cold-path work of issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_goldens import AGENT_VARIABLES, ROOT, golden_path, report_of, session_files

SESSIONS = session_files()


def test_every_session_has_a_golden() -> None:
    assert len(SESSIONS) > 50
    missing = [str(path) for path in SESSIONS if not golden_path(path).exists()]
    assert not missing


@pytest.mark.parametrize("session", SESSIONS, ids=lambda path: str(path.relative_to(ROOT)))
def test_report_matches_its_golden(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The agents' own settings (Claude Code's ~/.claude/settings.json moves its auto-compact
    # point) are not the machine's.
    for name, value in (("HOME", tmp_path), ("CLAUDE_CONFIG_DIR", tmp_path / ".claude")):
        monkeypatch.setenv(name, str(value))
    for name in AGENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    expected = json.loads(golden_path(session).read_text(encoding="utf-8"))
    assert report_of(session) == expected
