"""Argument parsing and dispatch for the ``ctxtop`` command.

Sub-command modules are listed in ``COMMANDS``; each exposes ``register(subparsers)`` which adds its
parser and sets ``func`` (taking the parsed args, returning an exit code). The dashboard itself is
not here: ``tui.cli`` passes a launcher for the no-sub-command case, so the engine stays headless.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from ctxtop.engine import __version__
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.safety.terminal import one_line

COMMANDS = (
    "ctxtop.engine.cli.cmd_models",
    "ctxtop.engine.cli.cmd_count",
    "ctxtop.engine.cli.cmd_report",
    "ctxtop.engine.cli.cmd_sessions",
    "ctxtop.engine.cli.cmd_config",
    "ctxtop.engine.cli.cmd_statusline",
    "ctxtop.engine.cli.cmd_edit",
    "ctxtop.engine.cli.cmd_undo",
    "ctxtop.engine.cli.cmd_render",
    "ctxtop.engine.cli.cmd_compact",
    "ctxtop.engine.cli.cmd_compactions",
    "ctxtop.engine.cli.cmd_restore",
    "ctxtop.engine.cli.cmd_proxy",
    "ctxtop.engine.cli.cmd_live",
)
COMMAND_NAMES = frozenset(name.rpartition(".cmd_")[2] for name in COMMANDS)

Launcher = Callable[[argparse.Namespace], int]

DESCRIPTION = """top for an AI agent's context window.

Without a command, ctxtop opens the dashboard:
  ctxtop                  follow the newest session of any supported agent
  ctxtop SESSION_FILE     follow one session file
  ctxtop --demo           replay a bundled sample session
"""
USAGE = """ctxtop [-h] [--version] [--agent AGENT] [--demo] [--proxy] [SESSION_FILE]
       ctxtop COMMAND [-h] ..."""
SESSION_HELP = "a session file to follow (default: the newest session of any supported agent)"


def add_dashboard_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The dashboard's options, for its own parser and for ``ctxtop --help``."""
    parser.add_argument("--demo", action="store_true", help="replay a bundled sample session")
    parser.add_argument("--agent", help="follow the newest session of this agent only")
    parser.add_argument(
        "--proxy",
        action="store_true",
        help="live mode: run ctxtop's loopback proxy beside the dashboard (see ctxtop proxy)",
    )


def plain_help(text: str | None) -> str | None:
    """A module docstring as help text: reST's ``code`` marks are left out."""
    return None if text is None else text.replace("``", "")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone when it names one (a module
    ``cmd_<command>``): running one command then does not import the others' engines."""
    parser = argparse.ArgumentParser(
        prog="ctxtop",
        usage=USAGE,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ctxtop {__version__}")
    dashboard = parser.add_argument_group(
        "the dashboard (without a command)", f"SESSION_FILE: {SESSION_HELP}"
    )
    add_dashboard_options(dashboard)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", title="commands", prog="ctxtop"
    )
    chosen = [name for name in COMMANDS if name.rpartition(".cmd_")[2] == command]
    for module_name in chosen or COMMANDS:
        importlib.import_module(module_name).register(subparsers)
    for sub in subparsers.choices.values():
        sub.description = plain_help(sub.description)
    return parser


def build_dashboard_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctxtop", description="open the ctxtop dashboard")
    parser.add_argument("--version", action="version", version=f"ctxtop {__version__}")
    add_dashboard_options(parser)
    parser.add_argument("session", nargs="?", metavar="SESSION_FILE", help=SESSION_HELP)
    return parser


def _first_word(argv: Sequence[str]) -> str | None:
    return next((word for word in argv if not word.startswith("-")), None)


def _wants_command(argv: Sequence[str]) -> bool:
    # A session file and a sub-command share the first positional slot, which argparse cannot
    # tell apart; the first word that is not an option decides. The names come from COMMANDS
    # (module cmd_<name> adds the parser <name>): opening the dashboard or printing the version
    # imports no command's module (the proxy's server, the editing engine, ...).
    first = _first_word(argv)
    if first is None:
        return any(word in ("-h", "--help") for word in argv)
    return first in COMMAND_NAMES


def main(argv: Sequence[str] | None = None, launch_dashboard: Launcher | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        if _wants_command(args_list) or launch_dashboard is None:
            parser = build_parser(_first_word(args_list))
            args = parser.parse_args(args_list)
            func = getattr(args, "func", None)
            if func is None:
                parser.print_help()
                return 0
            return int(func(args))
        return launch_dashboard(build_dashboard_parser().parse_args(args_list))
    except CtxtopError as error:
        print(f"ctxtop: {one_line(str(error))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
