"""The ``ctxtop`` script: sub-commands go to the engine; no sub-command opens the dashboard."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def launch_dashboard(args: argparse.Namespace) -> int:
    from ctxtop.tui.launch import run_dashboard

    return run_dashboard(args)


def main(argv: Sequence[str] | None = None) -> int:
    from ctxtop.engine.cli.main import main as engine_main

    return engine_main(argv, launch_dashboard=launch_dashboard)


if __name__ == "__main__":
    sys.exit(main())
