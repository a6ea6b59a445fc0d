"""How much of a context's growth is per tool call, not per token of what the log holds.

The tokenizer factor (engine/sessions/tokenizer_factor.py) is one ratio: reported growth over
counted growth. For each conversation of a session (its main context and each sub-agent), this
fits the growth between consecutive requests instead as ``factor * counted + per_call * calls``
(least squares, each request weighted by 1/sqrt of its growth), where ``calls`` are the tool
calls the growth holds: a ratio that depends on how many calls carry how much content would show
as a ``per_call`` figure well above zero, the same across sessions of one agent release.

Usage: python bench/call_framing.py FILE_OR_FOLDER ...  (the real logs of
bench/calibration_accuracy.py; sub-agent files under ``<session>/subagents/`` on their own)
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calibration_accuracy import session_files  # noqa: E402

from ctxtop.engine.agents.session_reader import SessionReader, read_all  # noqa: E402
from ctxtop.engine.sessions.ledger import Ledger, encoding_for  # noqa: E402
from ctxtop.engine.sessions.model import SessionState  # noqa: E402
from ctxtop.engine.sessions.tokenizer_factor import HIGHEST, LOWEST, Growth, call_fit  # noqa: E402


def growths(state: SessionState, ledger: Ledger) -> list[Growth]:
    """Each request's growth over the one before it on the context, of one model."""
    encoding = encoding_for(state)
    starts: list[tuple[int, int, str | None]] = []  # index, prompt, model
    seen: set[str] = set()  # one answer's records may have its tool results between them
    for index, message in enumerate(state.context):
        key = message.response_key
        response = None if key is None or key in seen else state.responses.get(key)
        if response is not None:
            seen.add(key)
            starts.append((index, response.usage.input_tokens_total, response.model))
    out = []
    for (start, prompt, model), (end, after, then) in itertools.pairwise(starts):
        added = state.context[start:end]
        counted = ledger.messages(added, encoding)
        calls = sum(block.kind == "tool_use" for message in added for block in message.blocks)
        reported = after - prompt
        if model == then and counted > 0 and LOWEST <= reported / counted <= HIGHEST:
            out.append((reported, counted, calls))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    heads = f"{'req':>4} {'ratio':>6} {'factor':>7} {'per call':>9}"
    print(f"{'conversation':<44} {'model':<18} {heads}")
    for path in session_files(args.paths):
        reader = SessionReader(path, lean_history=False)
        state = read_all(reader)
        if state is None:
            continue
        ledger = Ledger()
        subs = ((f"sub {key[:8]}", sub) for key, sub in state.subagents.items())
        parts = [("main", state), *subs]
        for name, part in parts:
            rows = growths(part, ledger)
            if not rows:
                continue
            ratio = sum(row[0] for row in rows) / sum(row[1] for row in rows)
            fitted = call_fit(rows) if len(rows) >= 4 else None
            figures = f"{fitted[0]:7.3f} {fitted[1]:9.1f}" if fitted else f"{'':7} {'':9}"
            label = f"{path.name[:30]} {name}"
            model = (part.model or "?").removeprefix("claude-")[:18]
            print(f"{label:<44} {model:<18} {len(rows):>4} {ratio:6.3f} {figures}")


if __name__ == "__main__":
    main()
