"""The parent's tokenizer factor for a sub-agent's file opened on its own.

A sub-agent has nothing to learn a factor from before its second request; within its session it
starts from its parent's (engine/sessions/tokenizer_factor.py). Opened on its own, its parent's
file (found beside it by the reader) is read up to the sub-agent's first record, so that it
starts from what the parent had learnt then, as it does within the session.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxtop.engine.agents.session_reader import SessionReader
from ctxtop.engine.errors import InputError
from ctxtop.engine.files import open_regular
from ctxtop.engine.sessions.ledger import Ledger, encoding_for
from ctxtop.engine.sessions.model import SessionState
from ctxtop.engine.sessions.tokenizer_factor import TokenizerFactor, learn

_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([^"]+)"')


def parent_factor(state: SessionState) -> TokenizerFactor | None:
    """The factor of ``state``'s parent when ``state`` started (None: no parent found, or it
    learnt nothing by then)."""
    path, since = state.parent_path, state.first_activity
    if path is None or since is None:
        return None
    data = _lines_until(path, since.encode())
    if not data:
        return None
    try:
        parent = SessionReader(path, data=data).require_state()
    except InputError:
        return None
    factor = learn(parent, Ledger(), encoding_for(parent))
    return factor if factor.learned else None


def _lines_until(path: Path, since: bytes) -> bytes:
    """``path``'s lines up to the first one logged after ``since`` (ISO timestamps)."""
    kept: list[bytes] = []
    try:
        with open(open_regular(path), "rb") as handle:
            for line in handle:
                found = _TIMESTAMP.search(line)
                if found and found.group(1) > since:
                    break
                kept.append(line)
    except OSError:
        return b""
    return b"".join(kept)
