"""Speed work must not change the context by category either: `ctxtop report --json --breakdown`
of every sample and test session gives the breakdown that 066eed6 (the commit of the golden
reports, before the cold-path work of issue 16) gave. The plain report's goldens leave it out."""

from __future__ import annotations

import json

from report_goldens import BREAKDOWNS, breakdowns


def test_every_sessions_breakdown_matches_its_golden() -> None:
    expected = json.loads(BREAKDOWNS.read_text(encoding="utf-8"))
    found = breakdowns()
    assert len(found) > 50
    assert found.keys() == expected.keys()
    assert found == expected
