"""Per tool: calls, result tokens and share of the window, the largest results, and what the
JSON results would save minified without null fields (audited once per result)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from ctxtop.engine.analysis.json_audit import compact_json
from ctxtop.engine.analysis.snapshot import LargeResult, ToolStat
from ctxtop.engine.sessions.model import Block, Message, SessionState
from ctxtop.engine.sessions.tool_calls import RESULTS_WITHOUT_CALL
from ctxtop.engine.tokens.encoding import Encoding

LARGEST = 3


class ToolAudit:
    """Audits each result once while it stays on the context (the last call's results are
    kept, not every result the session ever had)."""

    def __init__(self) -> None:
        self._json: dict[str, tuple[int, int, bool]] = {}  # call id -> (text length, saving, json)
        self._used: dict[str, tuple[int, int, bool]] = {}  # by this call

    def stats(
        self,
        state: SessionState,
        context: Sequence[Message],
        window: int,
        encoding: Encoding,
        tokens_of: Callable[[Block], int],
    ) -> tuple[ToolStat, ...]:
        """``tokens_of``: a block's token count (the session's ledger)."""
        self._used = {}
        per_tool: dict[str, list[tuple[str, int]]] = {}
        savings: Counter[str] = Counter()
        json_results: Counter[str] = Counter()
        for message in context:
            for block in message.blocks:
                if block.kind != "tool_result" or not block.tool_call_id:
                    continue
                call = state.tools.get(block.tool_call_id)
                name = call.name if call else (block.tool_name or RESULTS_WITHOUT_CALL)
                tokens = tokens_of(block)
                per_tool.setdefault(name, []).append((block.tool_call_id, tokens))
                saving, is_json = self._json_saving(
                    block.tool_call_id, block.content(), tokens, encoding
                )
                savings[name] += saving
                json_results[name] += is_json
        self._json, self._used = self._used, {}
        rows = []
        for name, results in per_tool.items():
            total = sum(tokens for _, tokens in results)
            largest = sorted(results, key=lambda item: -item[1])[:LARGEST]
            rows.append(
                ToolStat(
                    name=name,
                    calls=len(results),
                    result_tokens=total,
                    share=round(total / window, 4) if window else 0.0,
                    json_results=json_results[name],
                    json_savings=savings[name],
                    largest=tuple(LargeResult(call_id, tokens) for call_id, tokens in largest),
                )
            )
        return tuple(sorted(rows, key=lambda row: (-row.result_tokens, row.name)))

    def _json_saving(
        self, call_id: str, text: str, tokens: int, encoding: Encoding
    ) -> tuple[int, bool]:
        known = self._used.get(call_id) or self._json.get(call_id)
        if known is None or known[0] != len(text):
            compact = compact_json(text)
            saving = max(tokens - encoding.count(compact), 0) if compact is not None else 0
            known = (len(text), saving, compact is not None)
        self._used[call_id] = known
        return known[1], known[2]
