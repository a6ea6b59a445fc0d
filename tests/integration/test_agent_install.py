"""Test processes running at once (pytest-xdist workers) install a pinned agent CLI once: the
others wait for it instead of running npm into the same directory at the same time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Stands in for npm: logs its run, takes a while, then links the CLI where npm would.
FAKE_NPM = """#!{python}
import os, sys, time
prefix = sys.argv[sys.argv.index("--prefix") + 1]
with open(os.environ["FAKE_NPM_LOG"], "a") as log:
    log.write("install\\n")
time.sleep(1)
bin_dir = os.path.join(prefix, "node_modules", ".bin")
os.makedirs(bin_dir, exist_ok=True)
open(os.path.join(bin_dir, "fake-agent"), "w").close()
"""

CALL = (
    "import sys; sys.path.insert(0, sys.argv[1]); from agent_install import npm_cli; "
    "print(npm_cli('@example/fake-agent', '1.0.0', 'fake-agent'))"
)


def test_two_processes_install_an_agent_cli_once(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    npm = tools / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable))
    npm.chmod(0o755)
    log = tmp_path / "npm.log"
    env = {
        **os.environ,
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "CTXTOP_TEST_AGENTS": str(tmp_path / "agents"),
        "FAKE_NPM_LOG": str(log),
    }
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", CALL, str(HERE)], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    found = {run.communicate(timeout=60)[0].strip() for run in runs}
    assert [run.returncode for run in runs] == [0, 0]
    assert found == {str(tmp_path / "agents/fake-agent-1.0.0/node_modules/.bin/fake-agent")}
    assert log.read_text().splitlines() == ["install"]
