"""Argument types and options the subcommands share."""

from __future__ import annotations

import argparse
from argparse import ArgumentParser, Namespace
from collections.abc import Callable
from typing import Any

from ctxtop.engine.tokens.amount import positive_amount


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


def fork_command(subparsers: Any, name: str, help: str, description: str) -> ArgumentParser:
    """The parser of a command that writes a fork of a session (edit, compact, restore), with
    its SESSION argument; ``add_fork_outputs`` ends it."""
    parser: ArgumentParser = subparsers.add_parser(name, help=help, description=description)
    parser.add_argument("session", metavar="SESSION", help="a session log file")
    return parser


def add_fork_outputs(
    parser: ArgumentParser, run: Callable[[Namespace], int], dry_run: str, live: str | None = None
) -> None:
    """The options a fork command ends with: ``--dry-run`` (``dry_run``: what it shows),
    ``--live`` when the ``live`` action can go through ctxtop's proxy instead, ``--json``."""
    parser.add_argument("--dry-run", action="store_true", help=dry_run)
    if live is not None:
        parser.add_argument(
            "--live",
            action="store_true",
            help=f"apply the {live} to the running agent through ctxtop's proxy instead of a fork",
        )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)
