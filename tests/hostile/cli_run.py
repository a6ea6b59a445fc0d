"""Running ctxtop on hostile input and checking how it ended: a report (exit 0) or one line
``ctxtop: <file>[:<line>]: <what>`` (exit 2) on stderr; never a traceback."""

from __future__ import annotations

import contextlib
import io
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ctxtop.engine.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = {
    "claude-code": next(
        (ROOT / "sample_sessions/claude-code/projects/-path-to-Demo").glob("1af7*")
    ),
    "codex": sorted((ROOT / "sample_sessions/codex/sessions").rglob("rollout-*.jsonl"))[0],
    "gemini-cli": next((ROOT / "sample_sessions/gemini-cli").rglob("session-*.jsonl")),
    "copilot-cli": next((ROOT / "sample_sessions/copilot-cli").rglob("events.jsonl")),
    "openai-messages": ROOT / "sample_sessions/openai-messages/agent-loop.jsonl",
    "openai-document": ROOT / "sample_sessions/openai-messages/demo-chat.json",
}


@dataclass(frozen=True, slots=True)
class Ended:
    code: int
    out: str
    err: str


def run_cli(*argv: str) -> Ended:
    """``ctxtop ARGV`` in this process (an escaping exception fails the calling test)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return Ended(code, out.getvalue(), err.getvalue())


SUBPROCESS_MAIN = (
    "import sys; from ctxtop.engine.cli.main import main; sys.exit(main(sys.argv[1:]))"
)
# The child reports its own peak memory, measured after ctxtop returned, on stderr's last line:
# the high-water mark of its own address space (VmHWM). getrusage's ru_maxrss is not used: Linux
# carries it across exec from the forked copy of the parent, so a big pytest process showed.
MEASURED_MAIN = (
    "import sys\n"
    "from ctxtop.engine.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
    "print(f'peak-kb {status}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def run_subprocess(
    *argv: str,
    timeout: float = 120,
    file_size_limit: int | None = None,
    measure: bool = False,
    stdin: str | None = None,
    memory_limit: int | None = None,
) -> Ended:
    """``ctxtop ARGV`` in a child process (for hangs, memory and file-size limits). ``stdin``:
    a path read as standard input (default: none). ``memory_limit``: the child's address space
    in bytes, so that reading without bound ends in a MemoryError instead of filling the
    machine."""

    def limit() -> None:
        if memory_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        if file_size_limit is not None:
            import signal

            # A full disk, as far as ctxtop can tell: writes past the limit fail with EFBIG.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    with open(stdin or os.devnull, "rb") as given:
        done = subprocess.run(
            [sys.executable, "-c", MEASURED_MAIN if measure else SUBPROCESS_MAIN, *argv],
            stdin=given,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=limit,
            env=dict(os.environ),
            cwd=ROOT,
        )
    return Ended(done.returncode, done.stdout, done.stderr)


def assert_clean_end(ended: Ended, path: Path | str) -> None:
    """A report, or one ``ctxtop:`` line naming the file; no traceback either way."""
    assert "Traceback" not in ended.err, ended.err
    if ended.code == 0:
        return
    assert ended.code == 2, (ended.code, ended.err)
    lines = ended.err.splitlines()
    assert len(lines) == 1, ended.err
    assert lines[0].startswith(f"ctxtop: {path}"), ended.err


def run_offload_edit(source: Path, results: Path, limit: str, *extra: str) -> Ended:
    """``ctxtop edit --offload`` of every result over ``limit`` tokens, old results kept."""
    return run_cli(
        "edit", str(source), "--offload", "--truncate-at", limit, "--mode", "none",
        "--large-results-dir", str(results), *extra,
    )  # fmt: skip
