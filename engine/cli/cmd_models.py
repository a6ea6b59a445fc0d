"""``ctxtop models``: the model registry as a table (or JSON)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine.models.registry import ModelInfo, Prices, default_registry


def _price(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _row(info: ModelInfo) -> dict[str, Any]:
    prices: Prices | None = info.prices
    return {
        "model": info.model,
        "provider": info.provider,
        "encoding": info.encoding,
        "tokenizer_exact": info.tokenizer_exact,
        "context_window": info.context_window,
        "max_output": info.max_output,
        "min_cacheable_tokens": info.min_cacheable_tokens,
        "prices_per_mtok": None
        if prices is None
        else {
            "input": prices.input,
            "output": prices.output,
            "cache_write_5m": prices.cache_write_5m,
            "cache_write_1h": prices.cache_write_1h,
            "cache_read": prices.cache_read,
        },
        "source": info.source,
    }


def run(args: argparse.Namespace) -> int:
    registry = default_registry()
    infos = [registry.lookup(args.model)] if args.model else registry.all_models()
    if args.json:
        print(json.dumps([_row(info) for info in infos], indent=2))
        return 0
    header = ("model", "provider", "window", "max out", "in $/M", "out $/M", "write", "read")
    rows = [header]
    for info in infos:
        p = info.prices
        rows.append(
            (
                info.label,
                info.provider,
                f"{info.context_window:,}",
                f"{info.max_output:,}",
                _price(p.input if p else None),
                _price(p.output if p else None),
                _price(p.cache_write_5m if p else None),
                _price(p.cache_read if p else None),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        cells = [
            cell.ljust(width) if i < 2 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
    print("\nPrices are USD per million tokens; 'write' is a 5-minute cache write.")
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("models", help="list the model registry")
    parser.add_argument("model", nargs="?", help="show the entry this model id resolves to")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)
