"""YAML parsing for ctxtop's data files (registry, profiles, settings, themes, prompt trees).

Uses libyaml's parser when PyYAML was built with it: the pure-Python one took about 0.2 s for the
model registry alone, a noticeable part of opening a session. Errors are ``yaml.YAMLError`` either
way, with the same line marks.
"""

from __future__ import annotations

from typing import Any

import yaml

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """The YAML document in ``text`` (safe types only)."""
    return yaml.load(text, Loader=_Loader)
