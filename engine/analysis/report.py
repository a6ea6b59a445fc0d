"""The analysis as ``ctxtop report`` shows it: the JSON under ``analysis`` and a short text."""

from __future__ import annotations

from ctxtop.engine.analysis.analyze import Analyzer
from ctxtop.engine.analysis.forecast import forecast_text
from ctxtop.engine.analysis.profiles import load_profile
from ctxtop.engine.analysis.setup import setup_for
from ctxtop.engine.analysis.snapshot import Analysis
from ctxtop.engine.config import Thresholds
from ctxtop.engine.sessions.adapter import Adapter
from ctxtop.engine.sessions.ledger import encoding_for
from ctxtop.engine.words import plural


def analyze_session(
    adapter: Adapter,
    *,
    profile: str | None = None,
    window: int | None = None,
    triggers: Thresholds | None = None,
    analyzer: Analyzer | None = None,
) -> Analysis:
    """The analysis of the adapter's session (``profile``: by name, else the agent's own;
    ``window``: analyse as if the model's window were this many tokens)."""
    state = adapter.snapshot()
    chosen = load_profile(profile or adapter.profile)
    setup = setup_for(
        state,
        adapter.autocompact_at,
        chosen,
        triggers or Thresholds(),
        window,
        adapter.cli_window,
        adapter.prompt_cache_ttl(),
        adapter.profile,
    )
    return (analyzer or Analyzer()).analyze(state, setup, encoding_for(state))


def _k(tokens: int | None) -> str:
    return "-" if tokens is None else f"{tokens:,}"


def _cache_text(analysis: Analysis) -> str:
    """The cache line: the live context's requests simulated, those before it as logged."""
    cache = analysis.cache
    agreement = cache.agreement_pct
    agree = f"{agreement}% of {{}} within 5% of the log" if agreement is not None else ""
    figures = f"read {_k(cache.read)}, write {_k(cache.write)}, uncached {_k(cache.uncached)}"
    simulated = len(cache.requests)
    history = len(analysis.history) - simulated
    if history <= 0:
        return f"cache      simulated {figures}" + (
            f"; {agree.format('requests')}" if agree else ""
        )
    return (
        f"cache      {figures} (simulated: the {plural(simulated, 'request')} on the live"
        f" context{', ' + agree.format('them') if agree else ''}; as logged: the"
        f" {plural(history, 'request')} before it)"
    )


def analysis_text(analysis: Analysis) -> list[str]:
    """A few lines for the text report: sections, cache, forecast and estimate accuracy."""
    limits = analysis.thresholds
    lines = [
        f"analysis   profile {analysis.profile}, budget {_k(analysis.budget)}"
        f" (window {_k(limits.window)} - output reserve {_k(limits.output_reserve)})",
    ]
    for section in analysis.sections:
        lines.append(
            f"  {section.label[:40]:<40} {_k(section.tokens):>9}"
            f" of {_k(section.budget):>9}  {section.provenance}"
        )
    lines.append(
        f"  {'residual (framing, tokenizer difference)':<40} {_k(analysis.residual_tokens):>9}"
        f"{'':13}  inferred"  # the reported total less the estimated sections
    )
    for pruned in analysis.pruned:
        lines.append(
            f"  pruned {pruned.id}: {_k(pruned.tokens)} tokens, estimated ({pruned.reason})"
        )
    lines.append(_cache_text(analysis))
    forecast = analysis.forecast
    if forecast.requests_left is not None:
        lines.append(
            f"forecast   {forecast_text(forecast)}"
            + (
                " (the growth of the last request)"
                if forecast.samples == 1
                else f" (the mean growth of the last {forecast.samples} requests)"
            )
        )
    accuracy = analysis.estimate_accuracy
    if accuracy.requests:
        lines.append(
            f"estimates  mean error {accuracy.mean_abs_error_pct}% over"
            f" {plural(accuracy.requests, 'request')},"
            f" {accuracy.calibrated_mean_abs_error_pct}%"
            " after calibration"
        )
    return lines
