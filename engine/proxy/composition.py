"""What one model request holds, measured from its bytes: the system prompt's blocks, each
tool's schema, the messages by kind, images, and the cache breakpoints as sent (where, and the
tokens of the prefix they close). Figures and hashes only: no text of the request is kept.
"""

from __future__ import annotations

from typing import Any

from ctxtop.engine.proxy import measure_anthropic, measure_gemini, measure_openai
from ctxtop.engine.proxy.tally import Tally, TextCounts


def measure(protocol: str, body: Any, counts: TextCounts | None = None) -> dict[str, Any]:
    """The composition of a decoded request body of ``protocol``; ``counts``: the token
    counts of texts seen before (None: none)."""
    counts = counts or TextCounts()
    if not isinstance(body, dict):
        return Tally("openai", counts).figures()
    if protocol == "anthropic":
        return measure_anthropic.measure(body, Tally("anthropic", counts))
    if protocol == "gemini":
        return measure_gemini.measure(body, Tally("gemini", counts))
    if protocol == "openai-chat":
        return measure_openai.measure_chat(body, Tally("openai", counts))
    return measure_openai.measure_responses(body, Tally("openai", counts))
