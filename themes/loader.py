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

from textual.color import Color, ColorParseError
from textual.css.stylesheet import Stylesheet, StylesheetParseError
from textual.css.tokenizer import TokenError
from textual.theme import Theme

from ctxtop.engine.errors import InputError
from ctxtop.engine.paths import config_dir
from ctxtop.engine.yaml_text import parse_yaml, read_yaml_file

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
SWITCHES = ("dark",)  # not `ansi`: Textual then drops variables the widgets use
FRACTIONS = ("luminosity_spread", "text_alpha")
FIELDS = (*COLOURS, *SWITCHES, *FRACTIONS)


class ThemeFileError(ValueError):
    pass


def _quoted(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _check_fields(data: dict[str, Any], where: str) -> None:
    """Every field as ``Theme`` needs it: Textual takes any value and fails only when the
    theme is applied (a crash on selecting it, or at start)."""
    for key in COLOURS:
        if key in data:
            try:
                Color.parse(data[key])
            except (ColorParseError, TypeError, ValueError):
                raise ThemeFileError(
                    f"{where}: {key}: not a colour ({_quoted(data[key])})"
                ) from None
    for key in SWITCHES:
        if key in data and not isinstance(data[key], bool):
            raise ThemeFileError(f"{where}: {key}: true or false, not {_quoted(data[key])}")
    for key in FRACTIONS:
        value = data.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ThemeFileError(f"{where}: {key}: a number from 0 to 1, not {_quoted(value)}")


def _check_variables(theme: Theme, where: str) -> None:
    """Each CSS variable parsed as Textual will when the theme is applied: a style variable
    in ``text-style``, any other in ``color`` (a colour, ``auto 87%``, ``#fff 40%``)."""
    defaults = theme.to_color_system().generate()
    for name, value in theme.variables.items():
        if name not in defaults:
            raise ThemeFileError(f"{where}: variables: {_quoted(name)} is not a Textual variable")
        rule = "text-style" if "style" in name else "color"
        sheet = Stylesheet(variables={**defaults, **theme.variables})
        sheet.add_source(f"Widget {{ {rule}: ${name}; }}", read_from=(where, ""))
        try:
            sheet.parse()
        except (StylesheetParseError, TokenError, ValueError):
            raise ThemeFileError(
                f"{where}: variables: {name}: not a {rule} value ({_quoted(value)})"
            ) from None


def theme_from_data(data: Any, where: str) -> Theme:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        raise ThemeFileError(f"{where}: a theme file is a mapping with a `name`")
    if not isinstance(data.get("primary"), str):
        raise ThemeFileError(f"{where}: `primary` (a colour) is required")
    unknown = set(data) - set(FIELDS) - {"name", "variables"}
    if unknown:
        raise ThemeFileError(f"{where}: unknown keys {', '.join(sorted(map(str, unknown)))}")
    variables = data.get("variables") or {}
    if not isinstance(variables, dict) or not all(
        isinstance(value, str | int | float) and not isinstance(value, bool)
        for value in variables.values()
    ):
        raise ThemeFileError(f"{where}: `variables` must map names to values")
    _check_fields(data, where)
    fields = {key: data[key] for key in FIELDS if key in data}
    theme = Theme(
        name=data["name"], variables={str(k): str(v) for k, v in variables.items()}, **fields
    )
    _check_variables(theme, where)
    return theme


def load_theme_text(text: str, where: str) -> Theme:
    try:
        return theme_from_data(parse_yaml(text, where), where)
    except InputError as error:
        raise ThemeFileError(str(error)) from None


def bundled_themes() -> list[Theme]:
    folder = resources.files("ctxtop.themes")
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
            themes.append(theme_from_data(read_yaml_file(path), str(path)))  # a FIFO: refused
        except (InputError, ThemeFileError) as error:
            errors.append(str(error))
    return themes, errors


def all_themes() -> tuple[list[Theme], list[str]]:
    """Bundled themes then the user's, a user theme replacing a bundled one of the same name."""
    extra, errors = user_themes()
    by_name = {theme.name: theme for theme in bundled_themes()}
    for theme in extra:
        by_name[theme.name] = theme
    return list(by_name.values()), errors
