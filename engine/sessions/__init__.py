"""The session model and what every agent's reader shares: a live ``SessionState``, the
``Adapter`` contract (``adapter.py``), tailing files (``tail.py``) and the figures shown of it
(``sample.py``: a typed ``Sample``, counted with a ``Ledger`` kept beside the state, never in
it). The agents' own readers, and ``SessionReader`` that detects which one reads a file, are in
``engine.agents`` (which builds on this package, never the other way round).

- ``build_report(adapter)``: the figures of ``ctxtop report --json``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxtop.engine.sessions.model import SessionState
    from ctxtop.engine.sessions.report_json import build_report
    from ctxtop.engine.sessions.sample import context_tokens

# Loaded on first use: importing a submodule (e.g. the adapters, for a CLI parser) stays cheap.
_HOMES = {
    "SessionState": "ctxtop.engine.sessions.model",
    "build_report": "ctxtop.engine.sessions.report_json",
    "context_tokens": "ctxtop.engine.sessions.sample",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ctxtop.engine.sessions' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "SessionState",
    "build_report",
    "context_tokens",
]
