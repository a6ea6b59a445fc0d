"""Shared fixtures: every test runs with ctxtop's own directories in a temp dir; ``watch``
records the files a piece of work opens and the texts it counts."""

from __future__ import annotations

import builtins
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


class Watch:
    """What a piece of work touches: every file opened (by name or descriptor) and every text
    the tokenizer counts, recorded only while ``on`` is set in the thread doing the work."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.counted: list[str] = []
        self._thread = threading.local()

    @property
    def on(self) -> bool:
        return bool(getattr(self._thread, "on", False))

    @contextmanager
    def active(self) -> Iterator[None]:
        self._thread.on = True
        try:
            yield
        finally:
            self._thread.on = False

    def clear(self) -> None:
        self.opened.clear()
        self.counted.clear()


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch) -> Watch:
    """A ``Watch`` on ``open``, ``os.open`` and the tokenizer's ``Encoding.count``."""
    from ctxtop.engine.tokens.encoding import Encoding

    seen = Watch()
    real_open, real_os_open, real_count = builtins.open, os.open, Encoding.count

    def open_(file: Any, *args: Any, **kwargs: Any) -> Any:
        if seen.on:
            seen.opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        if seen.on:
            seen.opened.append(str(path))
        return real_os_open(path, *args, **kwargs)

    def count(self: Encoding, text: str) -> int:
        if seen.on:
            seen.counted.append(text)
        return real_count(self, text)

    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(Encoding, "count", count)
    return seen
