"""Theme files → ``textual.theme.Theme``.

A theme file is YAML with the fields of ``textual.theme.Theme`` (``name``, ``primary``, ``dark``,
colours …) and an optional ``variables`` mapping of CSS variables. The bundled files sit beside
this module; users add their own as ``themes/*.yaml`` in the config dir (``ctxtop config
--path`` shows the dir), and a user theme with a bundled theme's name replaces it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from textual.color import Color
from textual.theme import Theme

from engine.paths import config_dir
from engine.yaml_text import load_yaml

BUNDLED = ("ctxtop-dark", "ctxtop-light", "ctxtop-high-contrast")
COLOURS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
FIELDS = (*COLOURS, "dark", "luminosity_spread", "text_alpha")


class ThemeFileError(ValueError):
    pass


def theme_from_data(data: Any, where: str) -> Theme:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ThemeFileError(f"{where}: a theme file is a mapping with a `name`")
    if not isinstance(data.get("primary"), str):
        raise ThemeFileError(f"{where}: `primary` (a colour) is required")
    unknown = set(data) - set(FIELDS) - {"name", "variables"}
    if unknown:
        raise ThemeFileError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    variables = data.get("variables") or {}
    if not isinstance(variables, dict):
        raise ThemeFileError(f"{where}: `variables` must be a mapping")
    fields = {key: data[key] for key in FIELDS if key in data}
    for key in COLOURS:
        if key in fields:
            try:
                Color.parse(fields[key])
            except Exception as error:
                raise ThemeFileError(f"{where}: {key}: not a colour ({fields[key]!r})") from error
    try:
        return Theme(
            name=data["name"], variables={str(k): str(v) for k, v in variables.items()}, **fields
        )
    except Exception as error:  # a bad colour string
        raise ThemeFileError(f"{where}: {error}") from error


def load_theme_text(text: str, where: str) -> Theme:
    try:
        data = load_yaml(text)
    except yaml.YAMLError as error:
        raise ThemeFileError(f"{where}: not valid YAML") from error
    return theme_from_data(data, where)


def bundled_themes() -> list[Theme]:
    folder = resources.files("themes")
    return [
        load_theme_text(folder.joinpath(f"{name}.yaml").read_text("utf-8"), f"{name}.yaml")
        for name in BUNDLED
    ]


def user_theme_dir() -> Path:
    return config_dir() / "themes"


def user_themes(folder: Path | None = None) -> tuple[list[Theme], list[str]]:
    """The user's theme files (sorted by file name) and one error line per bad file."""
    folder = folder or user_theme_dir()
    themes: list[Theme] = []
    errors: list[str] = []
    if not folder.is_dir():
        return themes, errors
    for path in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")):
        try:
            themes.append(load_theme_text(path.read_text("utf-8"), str(path)))
        except (OSError, UnicodeDecodeError, ThemeFileError) as error:
            errors.append(str(error))
    return themes, errors


def all_themes() -> tuple[list[Theme], list[str]]:
    """Bundled themes then the user's, a user theme replacing a bundled one of the same name."""
    extra, errors = user_themes()
    by_name = {theme.name: theme for theme in bundled_themes()}
    for theme in extra:
        by_name[theme.name] = theme
    return list(by_name.values()), errors
