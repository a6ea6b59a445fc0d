"""The model registry: what ctxtop knows of each model's window, tokenizer and prices.

Bundled data lives in ``models.yaml`` beside this module; a user file ``models.yaml`` in the
config dir is read first, so it overrides or extends the bundled entries. An unknown model gets
the ``assumed`` defaults, marked ``assumed=True`` so every view can say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from engine.errors import CtxtopError
from engine.paths import config_dir
from engine.yaml_text import load_yaml

USER_FILE_NAME = "models.yaml"
PER_MILLION = 1_000_000
_OPTIONAL_FIELDS = ("encoding", "tokenizer_exact", "min_cacheable_tokens")


@dataclass(frozen=True)
class Prices:
    """USD per million tokens."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float

    def cost(
        self,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_write_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_ttl_1h: bool = False,
    ) -> float:
        """The price in USD of one request's token counts (``input_tokens`` is uncached input)."""
        write_price = self.cache_write_1h if cache_ttl_1h else self.cache_write_5m
        return (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_write_tokens * write_price
            + cache_read_tokens * self.cache_read
        ) / PER_MILLION


@dataclass(frozen=True)
class ModelInfo:
    model: str
    pattern: str | None
    provider: str
    encoding: str
    tokenizer_exact: bool
    context_window: int
    max_output: int
    min_cacheable_tokens: int
    prices: Prices | None
    long_context_prices: Prices | None = None
    assumed: bool = False
    source: str = "bundled"

    @property
    def label(self) -> str:
        """The model id, marked when the figures are assumed defaults."""
        return f"{self.model} (unknown model: assumed defaults)" if self.assumed else self.model


@dataclass(frozen=True)
class _Entry:
    patterns: tuple[str, ...]
    regexes: tuple[re.Pattern[str], ...]
    fields: dict[str, Any]
    source: str


def _glob_regex(pattern: str) -> re.Pattern[str]:
    # Only `*` and `?` are special: model ids contain brackets ("[1m]") that fnmatch would
    # read as character classes.
    parts = (".*" if char == "*" else "." if char == "?" else re.escape(char) for char in pattern)
    return re.compile("".join(parts), re.IGNORECASE)


def _scaled(base: float, multipliers: dict[str, float], name: str) -> float:
    # Rounded so that 3.0 x 0.1 prints as 0.3, not 0.30000000000000004.
    return round(base * float(multipliers[name]), 6)


def _prices(raw: Any, multipliers: dict[str, float], where: str) -> Prices | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or "input" not in raw or "output" not in raw:
        raise CtxtopError(f"{where}: prices need at least input and output")
    base = float(raw["input"])
    return Prices(
        input=base,
        output=float(raw["output"]),
        cache_write_5m=float(
            raw.get("cache_write_5m", _scaled(base, multipliers, "cache_write_5m"))
        ),
        cache_write_1h=float(
            raw.get("cache_write_1h", _scaled(base, multipliers, "cache_write_1h"))
        ),
        cache_read=float(raw.get("cache_read", _scaled(base, multipliers, "cache_read"))),
    )


@dataclass
class Registry:
    entries: list[_Entry] = field(default_factory=list)
    assumed: dict[str, Any] = field(default_factory=dict)
    multipliers: dict[str, float] = field(default_factory=dict)
    # Answers so far (a live session looks the same model up on every update).
    _looked_up: dict[str | None, ModelInfo] = field(default_factory=dict, repr=False)

    def add_document(self, document: Any, source: str, *, first: bool = False) -> None:
        if not isinstance(document, dict) or not isinstance(document.get("models", []), list):
            raise CtxtopError(f"{source}: expected a mapping with a 'models' list")
        self.multipliers.update(document.get("cache_multipliers") or {})
        self.assumed.update(document.get("assumed") or {})
        new_entries = []
        for index, raw in enumerate(document.get("models") or []):
            match = raw.get("match") if isinstance(raw, dict) else None
            if isinstance(match, str):
                match = [match]
            if not match or not all(isinstance(item, str) for item in match):
                raise CtxtopError(f"{source}: models[{index}] needs 'match' (a pattern or list)")
            new_entries.append(
                _Entry(tuple(match), tuple(_glob_regex(p) for p in match), dict(raw), source)
            )
        self.entries = new_entries + self.entries if first else self.entries + new_entries
        self._looked_up.clear()

    def _info(self, model: str, entry: _Entry | None) -> ModelInfo:
        # An entry must state its own provider, window and output; only the optional fields
        # (encoding, tokenizer_exact, min_cacheable_tokens) fall back to the assumed defaults.
        optional = {k: self.assumed[k] for k in _OPTIONAL_FIELDS if k in self.assumed}
        fields = {**optional, **entry.fields} if entry else dict(self.assumed)
        where = f"{entry.source} ({entry.patterns[0]})" if entry else "assumed defaults"
        try:
            return ModelInfo(
                model=model,
                pattern=entry.patterns[0] if entry else None,
                provider=str(fields["provider"]),
                encoding=str(fields.get("encoding", "o200k_base")),
                tokenizer_exact=bool(fields.get("tokenizer_exact", False)),
                context_window=int(fields["context_window"]),
                max_output=int(fields["max_output"]),
                min_cacheable_tokens=int(fields.get("min_cacheable_tokens", 1024)),
                prices=_prices(fields.get("prices"), self.multipliers, where),
                long_context_prices=_prices(
                    fields.get("long_context_prices"), self.multipliers, where
                ),
                assumed=entry is None,
                source=entry.source if entry else "assumed default",
            )
        except (KeyError, TypeError, ValueError) as error:
            raise CtxtopError(f"{where}: bad or missing field {error}") from None

    def lookup(self, model: str | None) -> ModelInfo:
        """The entry for ``model``; unknown or missing ids get the labelled assumed defaults."""
        known = self._looked_up.get(model)
        if known is None:
            known = self._looked_up[model] = self._lookup(model)
        return known

    def _lookup(self, model: str | None) -> ModelInfo:
        name = (model or "").strip()
        for entry in self.entries:
            if any(regex.fullmatch(name) for regex in entry.regexes):
                return self._info(name, entry)
        return self._info(name or "unknown", None)

    def all_models(self) -> list[ModelInfo]:
        """One row per entry (named by its first pattern), in match order."""
        return [self._info(entry.patterns[0], entry) for entry in self.entries]


def _read_yaml(path: Path | None, text: str | None, source: str) -> Any:
    try:
        return load_yaml(text if text is not None else path.read_text("utf-8"))  # type: ignore[union-attr]
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise CtxtopError(
            f"{source}{line}: invalid YAML ({getattr(error, 'problem', error)})"
        ) from None
    except OSError as error:
        raise CtxtopError(f"{source}: cannot read ({error.strerror})") from None


def load_registry(user_file: Path | None = None) -> Registry:
    """The bundled registry with the user's file (if any) taking precedence."""
    registry = Registry()
    bundled = resources.files("engine.models").joinpath("models.yaml").read_text("utf-8")
    registry.add_document(_read_yaml(None, bundled, "engine/models/models.yaml"), "bundled")
    path = user_file if user_file is not None else config_dir() / USER_FILE_NAME
    if path.is_file():
        registry.add_document(_read_yaml(path, None, str(path)), str(path), first=True)
    return registry


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    return load_registry()


def lookup(model: str | None) -> ModelInfo:
    """Look ``model`` up in the default registry (bundled + user file)."""
    return default_registry().lookup(model)
