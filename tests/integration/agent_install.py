"""Install (once, into a cache dir) a pinned agent CLI from npm for the resume tests."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest


def npm_cli(package: str, version: str, command: str) -> Path:
    """The CLI's path, installing ``package@version`` first if needed; skips (saying why) only
    when npm or the package cannot be installed. Cache: ``CTXTOP_TEST_AGENTS`` or
    ``~/.cache/ctxtop-test-agents``. Test processes running at once (pytest-xdist workers) take
    turns on a lock file: one installs, the others wait and find it installed."""
    cache = Path(
        os.environ.get("CTXTOP_TEST_AGENTS", Path.home() / ".cache" / "ctxtop-test-agents")
    )
    prefix = cache / f"{package.rsplit('/', 1)[-1]}-{version}"
    binary = prefix / "node_modules" / ".bin" / command
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.with_name(prefix.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not binary.exists():
            _install(package, version, prefix, binary)
    return binary


def _install(package: str, version: str, prefix: Path, binary: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed: cannot install {package}")
    done = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            f"{package}@{version}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not binary.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"cannot install {package}@{version}: {tail[0]}")
