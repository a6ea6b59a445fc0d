"""Shared fixtures: every test runs with ctxtop's own directories in a temp dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point ctxtop's config, cache and data dirs at a fresh temp dir per test."""
    root = tmp_path_factory.mktemp("ctxtop-home")
    for name in ("CONFIG", "CACHE", "DATA"):
        monkeypatch.setenv(f"CTXTOP_{name}_DIR", str(root / name.lower()))
    yield root
