"""Argument types and options the subcommands share."""

from __future__ import annotations

import argparse


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
