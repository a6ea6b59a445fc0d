"""``ctxtop statusline`` and ``ctxtop config`` run as a user runs them."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from dashboard_support import write_lines

from ctxtop.engine.cli.main import main
from ctxtop.engine.config import config_path
from ctxtop.engine.live.demo import demo_lines
from ctxtop.engine.tokens.short import provenance_mark


def ctxtop(
    *args: str, stdin: str = "", config_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if config_dir is not None:
        env["CTXTOP_CONFIG_DIR"] = str(config_dir)
    return subprocess.run(
        [sys.executable, "-m", "ctxtop", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
    )


def report_in_process(session: Path) -> dict[str, Any]:
    """``ctxtop report --json SESSION`` in this process: for finding a case, not the check."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "--json", str(session)]) == 0
    report: dict[str, Any] = json.loads(out.getvalue())
    return report


def test_statusline_shows_fill_distance_to_autocompact_and_largest_part(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    write_lines(session, 10_000)
    report = json.loads(ctxtop("report", "--json", str(session)).stdout)
    status = {"transcript_path": str(session), "model": {"id": report["model"]}}
    result = ctxtop("statusline", stdin=json.dumps(status))
    assert result.returncode == 0
    line = result.stdout.strip()
    assert "\n" not in line
    assert line.startswith(f"ctx {round(report['fill_percent'])}% ")
    left = (report["autocompact_at"] - report["context_tokens"]["value"]) / 1000
    assert f"{left:.0f}k to auto-compact" in line
    assert "largest " in line


def test_statusline_marks_a_context_the_api_did_not_report(tmp_path: Path) -> None:
    """Between a response and the next one, the context is the last report plus the new lines'
    estimate: the status line marks it as the dashboard does, and the largest part (a
    tokenizer estimate) too."""
    lines = demo_lines()
    session = tmp_path / "s.jsonl"
    for end in range(len(lines), 0, -1):  # a process start each time cost a second or more
        session.write_bytes(b"".join(lines[:end]))
        report = report_in_process(session)
        source = report["context_tokens"]["source"]
        if source not in ("reported", "compaction"):
            break
    else:
        raise AssertionError("no prefix of the demo session ends between two responses")
    status = {"transcript_path": str(session), "model": {"id": report["model"]}}
    line = ctxtop("statusline", stdin=json.dumps(status)).stdout.strip()
    figure = line.split(" · ")[0].split()[2]  # ctx 11% 23k~/200k
    assert figure.split("/")[0].endswith(provenance_mark(source)) and provenance_mark(source)
    largest = [part for part in line.split(" · ") if part.startswith("largest ")]
    assert largest and largest[0].endswith("≈")


def test_statusline_without_a_transcript_uses_the_json_or_says_so() -> None:
    usage = {"input_tokens": 1000, "cache_read_input_tokens": 49000, "output_tokens": 0}
    status = {"context_window": {"context_window_size": 200000, "current_usage": usage}}
    assert ctxtop("statusline", stdin=json.dumps(status)).stdout.strip() == "ctx 25% 50k/200k"
    assert ctxtop("statusline", stdin="{}").stdout == "ctx: no transcript yet\n"


def test_statusline_errors_go_to_stderr_and_the_bar_keeps_a_line(tmp_path: Path) -> None:
    """Errors were printed on stdout with exit 0. Claude Code shows the line only on exit 0
    (stderr goes to its debug log): input that is not its status JSON is an error, stderr and
    exit 2; a problem with ctxtop's own settings is said on stderr and the bar keeps its line."""
    result = ctxtop("statusline", stdin="not json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("ctxtop: stdin: not a status JSON object")
    assert result.stderr.count("\n") == 1
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "config.yaml").write_text("thresholds: [1, 2\n", encoding="utf-8")
    usage = {"input_tokens": 1000, "cache_read_input_tokens": 49000, "output_tokens": 0}
    status = {"context_window": {"context_window_size": 200000, "current_usage": usage}}
    result = ctxtop("statusline", stdin=json.dumps(status), config_dir=config_dir)
    assert (result.returncode, result.stdout) == (0, "ctx 25% 50k/200k\n")
    assert result.stderr.startswith(f"ctxtop: {config_dir / 'config.yaml'}")


def test_config_path_init_and_show() -> None:
    assert ctxtop("config", "--path").stdout.strip() == str(config_path())
    assert ctxtop("config", "--init").returncode == 0
    assert "editing: 0.65" in config_path().read_text()
    assert ctxtop("config", "--init").returncode != 0  # never overwrites
    config_path().write_text("theme: ctxtop-light\n")
    shown = ctxtop("config").stdout
    assert "theme: ctxtop-light" in shown and "compaction: 0.85" in shown


def test_dashboard_arguments_are_checked_before_the_screen_opens(tmp_path: Path) -> None:
    result = ctxtop("--agent", "no-such-agent")
    assert result.returncode == 2 and "unknown agent 'no-such-agent'" in result.stderr
    missing = tmp_path / "missing.jsonl"
    result = ctxtop(str(missing))
    assert result.returncode == 2 and f"{missing}: no such session file" in result.stderr
