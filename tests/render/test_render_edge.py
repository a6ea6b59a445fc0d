"""Edge cases rendered by the real library (tests/render/edge): ``ctxtop render --jsonl`` prints
the same lines, byte for byte."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from ctxtop.engine.cli.main import main

EDGE = Path(__file__).parent / "edge"


def test_edge_cases_print_the_library_lines(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = (EDGE / "cases.jsonl").read_text(encoding="utf-8")
    expected = (EDGE / "expected.jsonl").read_text(encoding="utf-8").split("\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO(cases))
    assert main(["render", "--jsonl"]) == 0
    printed = capsys.readouterr().out.split("\n")
    assert len(printed) == len(expected) == 109
    for got, want in zip(printed, expected, strict=True):
        assert got == want
