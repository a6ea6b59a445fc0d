"""``ctxtop models``: what ctxtop knows of each model, and where each figure comes from."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import Any

from ctxtop.engine.models.registry import ModelInfo, Prices, default_registry
from ctxtop.engine.models.window import Window

SOURCES_NOTE = (
    "Windows and prices: the genai-prices dataset bundled with ctxtop (offline), unless your\n"
    "models.yaml sets them; max output and caching minimums: ctxtop's own table. In a session a\n"
    "window the agent's log or CLI states wins (`ctxtop report` names the source)."
)


def _price(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _prices(prices: Prices | None) -> dict[str, float] | None:
    if prices is None:
        return None
    return {
        "input": prices.input,
        "output": prices.output,
        "cache_write_5m": prices.cache_write_5m,
        "cache_write_1h": prices.cache_write_1h,
        "cache_read": prices.cache_read,
    }


def _row(info: ModelInfo) -> dict[str, Any]:
    return {
        "model": info.model,
        "known": not info.assumed,
        "note": None if not info.assumed else info.label.removeprefix(info.model).strip(" ()"),
        "provider": info.provider,
        "encoding": info.encoding,
        "tokenizer_exact": info.tokenizer_exact,
        "context_window": info.context_window,
        "context_window_source": info.window_source,
        "context_window_from": _origin(info, info.window_source),
        "max_output": info.max_output,
        "max_output_source": info.max_output_source,
        "min_cacheable_tokens": info.min_cacheable_tokens,
        "prices_per_mtok": _prices(info.prices),
        "long_context_prices_per_mtok": _prices(info.long_context_prices),
        "prices_source": info.prices_source,
        "prices_from": info.origin(info.prices_source),
        "dataset_model": info.dataset_id,
        "source": info.source,
    }


# Where a session's window comes from when the agent states it (``engine/models/window.py``).
STATED = {"logged": "the session's log", "cli": "the agent's own rule (its CLI)"}


def _in_session(info: ModelInfo, window: Window) -> ModelInfo:
    """``info`` with the session's window, when the agent's log or CLI states it."""
    if window.source not in STATED or window.tokens is None:
        return info
    return replace(info, context_window=window.tokens, window_source=window.source, assumed=False)


def _origin(info: ModelInfo, source: str | None) -> str | None:
    return STATED.get(source or "") or info.origin(source)


def _details(info: ModelInfo) -> list[str]:
    """One model, figure by figure, each with where it comes from."""
    p = info.prices
    prices = (
        "none known"
        if p is None
        else f"in {_price(p.input)}, out {_price(p.output)}, cache write {_price(p.cache_write_5m)}"
        f" (1h {_price(p.cache_write_1h)}), cache read {_price(p.cache_read)} $/M tokens"
    )
    return [
        f"model       {info.label}",
        f"provider    {info.provider}",
        f"window      {info.context_window:,}  from {_origin(info, info.window_source)}",
        f"max output  {info.max_output:,}  from {info.max_output_source}",
        f"prices      {prices}"
        + (f"  from {info.origin(info.prices_source)}" if info.prices_source else ""),
        f"tokenizer   {info.encoding}" + ("" if info.tokenizer_exact else " (an estimate)"),
    ]


def run(args: argparse.Namespace) -> int:
    registry = default_registry()
    infos = [registry.lookup(args.model)] if args.model else registry.all_models()
    if args.session:
        from ctxtop.engine.agents.agent_window import agent_window
        from ctxtop.engine.agents.session_reader import read_session

        state = read_session(args.session)
        model = args.model or state.model
        infos = [_in_session(registry.lookup(model), agent_window(state, model))]
        args.model = infos[0].model
    if args.json:
        print(json.dumps([_row(info) for info in infos], indent=2))
        return 0
    if args.model:
        print("\n".join(_details(infos[0])))
        print(f"\n{SOURCES_NOTE}")
        return 0
    header = ("model", "provider", "window", "from", "max out", "in $/M", "out $/M")
    rows: list[tuple[str, ...]] = [(*header, "write", "read")]
    for info in infos:
        p = info.prices
        rows.append(
            (
                info.label,
                info.provider,
                f"{info.context_window:,}",
                info.window_source,
                f"{info.max_output:,}",
                _price(p.input if p else None),
                _price(p.output if p else None),
                _price(p.cache_write_5m if p else None),
                _price(p.cache_read if p else None),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [
            cell.ljust(width) if i in (0, 1, 3) else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
    print("\nPrices are USD per million tokens; 'write' is a 5-minute cache write.")
    print(SOURCES_NOTE)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("models", help="what ctxtop knows of each model, and from where")
    parser.add_argument("model", nargs="?", help="show the figures this model id resolves to")
    parser.add_argument(
        "--session",
        metavar="FILE",
        help="the model of this session log, with the window its agent states (log or CLI)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)
