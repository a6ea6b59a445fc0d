"""Argument types and options the subcommands share."""

from __future__ import annotations

import argparse

from engine.tokens.amount import positive_amount


def count_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def add_count_option(
    parser: argparse.ArgumentParser, flag: str, default: int | None, help: str, metavar: str = "N"
) -> None:
    """``flag`` takes a whole number of 0 or more (``count_arg``)."""
    parser.add_argument(flag, type=count_arg, default=default, metavar=metavar, help=help)


def tokens_arg(text: str) -> int:
    """A positive number of tokens: 64000, 64k, 1.5M (the dashboard's ``b`` takes the same)."""
    tokens = positive_amount(text)
    if tokens is None:
        raise argparse.ArgumentTypeError(
            f"not a positive number of tokens: {text!r} (e.g. 64000, 64k or 1.5M)"
        )
    return tokens
