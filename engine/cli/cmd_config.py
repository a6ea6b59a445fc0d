"""``ctxtop config``: where the settings file is, and the settings in effect."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import yaml

from ctxtop.engine.config import SHOWN_UNKNOWN, config_path, load_settings, settings_yaml
from ctxtop.engine.editing.atomic import write_new
from ctxtop.engine.errors import InputError
from ctxtop.engine.live.auto_live import load_auto_live
from ctxtop.engine.proxy.settings import load_proxy_settings
from ctxtop.engine.safety.terminal import one_line
from ctxtop.engine.words import first_lines


def run(args: argparse.Namespace) -> int:
    path = config_path()
    if args.path:
        print(path)
        return 0
    if args.init:
        if path.exists() or path.is_symlink():
            raise InputError(str(path), "already exists (edit it, or remove it first)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(str(path.parent), f"cannot create ({error.strerror})") from None
        write_new(path.parent, path.name, settings_yaml().encode("utf-8"), role=None)
        print(f"wrote {path}")
        return 0
    settings = load_settings()
    proxy, live = load_proxy_settings(), load_auto_live()  # proxy: with CTXTOP_PROXY_* applied
    state = "" if path.exists() else " (not there: the defaults apply)"
    print(f"# {path}{state}")
    print(settings_yaml(settings), end="")
    blocks = {"proxy": proxy.as_config(), "live": live.as_config()}
    print(yaml.safe_dump(blocks, sort_keys=False), end="")
    ignored = [f"unknown key {key!r} ignored" for key in settings.unknown]
    for line in first_lines(ignored, SHOWN_UNKNOWN, "unknown key", "ignored"):
        print(f"ctxtop: {path}: {line}", file=sys.stderr)
    for notice in proxy.notices:
        print(f"ctxtop: {one_line(notice)}", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "config",
        help="the settings file: its path, the settings in effect, or a fresh one",
        description="Settings (profile, theme, refresh, active_minutes, thresholds, and the"
        " llm:, proxy: and live: blocks) live in a YAML file in the config dir. Without"
        " options: the settings in effect, the file's and the defaults.",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--path", action="store_true", help="print where the settings file is")
    group.add_argument("--init", action="store_true", help="write a file with the defaults")
    parser.set_defaults(func=run)
