"""The Sections panel shows the agent's own split of the last prompt beside the layout
profile's sections, for a session whose agent logged one (VS Code Copilot Chat's
``promptTokenDetails``), and nothing more for the others."""

from __future__ import annotations

import shutil
from pathlib import Path

from dashboard_support import frozen_clock, synchronous, wait_until, write_lines

from ctxtop.engine.sessions.report_json import to_json
from ctxtop.tui import format as fmt
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.components.sections_panel import AGENT_SPLIT

ROOT = Path(__file__).resolve().parents[2]
VSCODE = ROOT / (
    "sample_sessions/vscode-copilot-chat/User/workspaceStorage/"
    "5f3c8e1a9b2d4c6e8f0a1b2c3d4e5f60/chatSessions/3b8c2f1e-7d4a-4c9b-a1e2-5f6d7c8b9a01.jsonl"
)


async def sections_text(session: Path) -> tuple[str, CtxtopApp]:
    app = CtxtopApp(session, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot,
            lambda: (
                app.view is not None
                and app.view.analysis is not None
                and not app.sections.has_class("lagging")
            ),
        )
        await pilot.pause()
        # What is on screen: the panel's first lines, as many as it has rows.
        shown = app.sections.render().plain.splitlines()[: app.sections.content_size.height]
        return "\n".join(shown), app


@synchronous
async def test_vscode_s_own_split_is_shown_under_the_copilot_profile_s_sections(
    tmp_path: Path,
) -> None:
    session = tmp_path / VSCODE.name
    shutil.copy(VSCODE, session)
    text, app = await sections_text(session)
    assert app.sections.border_title.startswith("Sections · copilot profile")
    assert text.startswith(AGENT_SPLIT)
    # The report's figures for the same prompt: each part's tokens and percent.
    assert app.view is not None
    report = to_json(app.view.sample)["last_request"]["agent_prompt_breakdown"]
    assert [row["label"] for row in report] == [
        "System Instructions",
        "Tool Definitions",
        "Messages",
        "Tool Results",
    ]
    for part in report:
        shown = f"{part['label']} {fmt.tokens(part['tokens'])}* ({part['percent_of_prompt']:g}%)"
        assert shown in text
    assert "Tool Results 13.0k* (54.1%)" in text  # 54.1 % of the 24,118-token prompt: 13,048
    # Beside the profile's sections, not instead of them: the panel grows by the split's lines,
    # so the sections shown without it (all but "free space" at this size) are still there.
    for section in ("system prompt and tool definitions", "history", "kept free for model output"):
        assert section in text


@synchronous
async def test_a_session_without_the_agent_s_split_shows_only_the_sections(
    tmp_path: Path,
) -> None:
    session = tmp_path / "session.jsonl"
    write_lines(session, 40)
    text, _ = await sections_text(session)
    assert AGENT_SPLIT not in text
