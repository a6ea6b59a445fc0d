"""The context figure of a session, and the model facts it needs (window, encoding).

Context tokens, by provenance:

- ``compaction``: a compaction happened after the last request and logged its ``postTokens``;
- ``reported``: the last request's whole prompt plus its output (what the agent itself counts,
  e.g. Claude Code's ``tokenCountWithEstimation``), nothing sent since;
- ``calibrated``: that reported figure plus a tokenizer estimate of what came after the last
  request (tool results, attachments, a new prompt not yet sent);
- ``estimated``: nothing reported applies (no request with usage in the log, or a compaction
  without ``postTokens`` and no request since): every message of the context counted with the
  tokenizer. The system prompt and tool definitions are not in the logs, so this is low.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.models.registry import ModelInfo, Registry, default_registry
from engine.sessions.ledger import Ledger
from engine.sessions.model import Message, SessionState
from engine.tokens import get_encoding
from engine.tokens.encoding import Encoding

DEFAULT_ENCODING = "o200k_base"


@dataclass(frozen=True, slots=True)
class ContextTokens:
    value: int
    source: str  # reported | calibrated | estimated | compaction
    reported: int | None  # the part the log reported (None for estimated/compaction)
    estimated: int  # the part estimated with the tokenizer


class _Infos:
    """Registry answers memoised for the registry that gave them."""

    registry: Registry | None = None
    infos: dict[str | None, ModelInfo] = {}  # noqa: RUF012 - one shared memo


def model_info(model: str | None) -> ModelInfo:
    """The registry's entry for ``model``, memoised (a live report looks it up several times)."""
    registry = default_registry()
    if _Infos.registry is not registry:
        _Infos.registry, _Infos.infos = registry, {}
    info = _Infos.infos.get(model)
    if info is None:
        info = _Infos.infos[model] = registry.lookup(model)
    return info


def encoding_for(state: SessionState) -> Encoding:
    name = model_info(state.model).encoding or DEFAULT_ENCODING
    try:
        return get_encoding(name)
    except Exception:
        return get_encoding(DEFAULT_ENCODING)


def messages_after_last_response(state: SessionState) -> list[Message] | None:
    """The context after the last response's own message (None if it is not on the context)."""
    last = state.last_response
    if last is None:
        return None
    context = state.context
    for index in range(len(context) - 1, -1, -1):
        if context[index].response_key == last.key:
            return context[index + 1 :]
    return None


def context_tokens(
    state: SessionState, ledger: Ledger | None = None, encoding: Encoding | None = None
) -> ContextTokens:
    """The context figure (see the module's doc); counts with ``ledger`` (None: a new one,
    nothing kept), only the messages the log's figures do not cover."""
    compaction = state.pending_compaction
    if compaction is not None and compaction.post_tokens is not None:
        return ContextTokens(compaction.post_tokens, "compaction", None, 0)
    encoding = encoding or encoding_for(state)
    ledger = ledger or Ledger()
    tail = messages_after_last_response(state)
    last = state.last_response
    if last is None or tail is None:
        estimate = ledger.messages(state.context, encoding)
        return ContextTokens(estimate, "estimated", None, estimate)
    reported = last.usage.input_tokens_total + last.usage.output_tokens
    estimate = ledger.messages(tail, encoding)
    source = "calibrated" if estimate else "reported"
    return ContextTokens(reported + estimate, source, reported, estimate)


@dataclass(frozen=True, slots=True)
class Window:
    """The model's context window and where it comes from: ``logged`` by the agent, from the
    model ``registry``, or ``assumed`` (a model the registry does not know)."""

    tokens: int | None
    source: str


def context_window(state: SessionState, fallback_model: str | None = None) -> Window:
    """The one choice of window: the agent's own figure when it logged one, else the model's
    (``fallback_model``: for a sub-agent whose log names none, its parent's)."""
    if state.context_window is not None:
        return Window(state.context_window, "logged")
    info = model_info(state.model or fallback_model)
    return Window(info.context_window, "assumed" if info.assumed else "registry")


def fill_percent(tokens: int, window: int | None) -> float | None:
    """The fill every figure shows (report, dashboard, listing, status line): % to 0.1."""
    return round(100 * tokens / window, 1) if window else None
