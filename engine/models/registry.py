"""The model registry: what ctxtop knows of each model's window, tokenizer and prices.

Where each figure comes from, first found wins:

- the user's ``models.yaml`` in the config dir (any field: window, prices, output, …);
- the window only: a Claude Code id ending "[1m]" names the 1M-token window;
- window and prices: the genai-prices dataset bundled in its wheel (``dataset.py``);
- provider, tokenizer, max output and minimum cacheable prompt: ctxtop's own ``models.yaml``
  beside this module (facts that dataset has no field for);
- otherwise the ``assumed`` defaults, marked (``assumed=True``: "window unknown") so every view
  says so. A window the agent's log or CLI states wins over all of these (``window.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.models import dataset
from ctxtop.engine.paths import config_dir
from ctxtop.engine.yaml_text import parse_yaml, read_yaml_file

USER_FILE_NAME = "models.yaml"
PER_MILLION = 1_000_000
BUNDLED = "bundled"
# Claude Code's id of the 1M-token variant ("claude-sonnet-4-5[1m]").
LONG_CONTEXT_SUFFIX = "[1m]"
LONG_CONTEXT_WINDOW = 1_000_000
# Where a figure comes from (``ModelInfo.window_source`` / ``prices_source``).
FROM_USER = "user file"
FROM_MODEL_ID = "model id"
FROM_DATASET = "dataset"
FROM_FALLBACK = "assumed"
FROM_TABLE = "ctxtop table"  # models.yaml beside this module
# The dataset's providers whose models ``ctxtop models`` lists (the agents' own).
LISTED_PROVIDERS = ("anthropic", "openai", "google")


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
    pattern: str | None  # the matching pattern of ctxtop's or the user's file
    provider: str
    encoding: str
    tokenizer_exact: bool
    context_window: int
    max_output: int
    min_cacheable_tokens: int
    prices: Prices | None
    long_context_prices: Prices | None = None
    assumed: bool = False  # no source knows the window: the assumed default
    source: str = BUNDLED  # the user file's path when an entry of it matched, else "bundled"
    window_source: str = FROM_FALLBACK  # user file | model id | dataset | assumed
    prices_source: str | None = None  # user file | dataset | None (no prices)
    max_output_source: str = FROM_FALLBACK  # user file | ctxtop table | assumed
    dataset_id: str | None = None  # the dataset's model the id matched
    dataset_provider: str | None = None

    @property
    def label(self) -> str:
        """The model id, marked when its window is the assumed default."""
        if not self.assumed:
            return self.model
        return f"{self.model} (window unknown, assuming {self.context_window // 1000}k)"

    def origin(self, source: str | None) -> str | None:
        """A figure's source spelled out: the user file's path, the dataset's version and model."""
        if source == FROM_USER:
            return f"user file {self.source}"
        if source == FROM_DATASET:
            return f"genai-prices {dataset.version()} ({self.dataset_provider}/{self.dataset_id})"
        if source == FROM_FALLBACK:
            return "no source: the assumed default"
        return source


@dataclass(frozen=True)
class _Entry:
    patterns: tuple[str, ...]
    regexes: tuple[re.Pattern[str], ...]
    fields: dict[str, Any]
    source: str

    @property
    def where(self) -> str:
        return f"{self.source} ({self.patterns[0]})"


def _glob_regex(pattern: str) -> re.Pattern[str]:
    # Only `*` and `?` are special: model ids contain brackets ("[1m]") that fnmatch would
    # read as character classes.
    parts = (".*" if char == "*" else "." if char == "?" else re.escape(char) for char in pattern)
    return re.compile("".join(parts), re.IGNORECASE)


def _scaled(base: float, multipliers: dict[str, float], name: str) -> float:
    # Rounded so that 3.0 x 0.1 prints as 0.3, not 0.30000000000000004.
    return round(base * float(multipliers[name]), 6)


def _user_prices(raw: Any, multipliers: dict[str, float], where: str) -> Prices | None:
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


def _dataset_prices(raw: dataset.DatasetPrices | None) -> Prices | None:
    """The dataset's prices; a cache price it leaves out is the plain input price (OpenAI and
    Google cache by themselves, without a write surcharge)."""
    if raw is None:
        return None
    write_5m = raw.cache_write_5m if raw.cache_write_5m is not None else raw.input
    return Prices(
        input=raw.input,
        output=raw.output,
        cache_write_5m=write_5m,
        cache_write_1h=raw.cache_write_1h if raw.cache_write_1h is not None else write_5m,
        cache_read=raw.cache_read if raw.cache_read is not None else raw.input,
    )


@dataclass
class Registry:
    entries: list[_Entry] = field(default_factory=list)
    assumed: dict[str, Any] = field(default_factory=dict)
    multipliers: dict[str, float] = field(default_factory=dict)
    use_dataset: bool = True
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

    def _first(self, name: str, *, user: bool) -> _Entry | None:
        for entry in self.entries:
            if (entry.source != BUNDLED) == user and any(r.fullmatch(name) for r in entry.regexes):
                return entry
        return None

    def _info(self, name: str) -> ModelInfo:
        user = self._first(name, user=True)
        facts = self._first(name, user=False)
        found = dataset.find(name) if self.use_dataset and name else None
        mine = user.fields if user else {}
        ours = facts.fields if facts else {}
        where = user.where if user else facts.where if facts else "assumed defaults"

        def pick(key: str, default: Any = None) -> Any:
            for fields in (mine, ours, self.assumed):
                if key in fields:
                    return fields[key]
            return default

        try:
            if "context_window" in mine:
                window, window_source = int(mine["context_window"]), FROM_USER
            elif name.lower().endswith(LONG_CONTEXT_SUFFIX):
                window, window_source = LONG_CONTEXT_WINDOW, FROM_MODEL_ID
            elif found is not None and found.context_window is not None:
                window, window_source = found.context_window, FROM_DATASET
            else:
                window, window_source = int(self.assumed["context_window"]), FROM_FALLBACK
            prices = _user_prices(mine.get("prices"), self.multipliers, where)
            long_prices = _user_prices(mine.get("long_context_prices"), self.multipliers, where)
            prices_source = FROM_USER if prices is not None else None
            if prices is None and found is not None and found.prices is not None:
                prices, prices_source = _dataset_prices(found.prices), FROM_DATASET
                long_prices = _dataset_prices(found.long_context_prices)
            provider = mine.get("provider") or ours.get("provider")
            if provider is None:
                provider = found.provider if found is not None else self.assumed["provider"]
            return ModelInfo(
                model=name or "unknown",
                pattern=entry.patterns[0] if (entry := user or facts) is not None else None,
                provider=str(provider),
                encoding=str(pick("encoding", "o200k_base")),
                tokenizer_exact=bool(pick("tokenizer_exact", False)),
                context_window=window,
                max_output=int(pick("max_output")),
                min_cacheable_tokens=int(pick("min_cacheable_tokens", 1024)),
                prices=prices,
                long_context_prices=long_prices,
                assumed=window_source == FROM_FALLBACK,
                source=user.source if user else BUNDLED,
                window_source=window_source,
                prices_source=prices_source,
                max_output_source=FROM_USER
                if "max_output" in mine
                else FROM_TABLE
                if "max_output" in ours
                else FROM_FALLBACK,
                dataset_id=found.id if found is not None else None,
                dataset_provider=found.provider if found is not None else None,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise CtxtopError(f"{where}: bad or missing field {error}") from None

    def lookup(self, model: str | None) -> ModelInfo:
        """What is known of ``model``; an id no source knows gets the labelled assumed window."""
        known = self._looked_up.get(model)
        if known is None:
            known = self._looked_up[model] = self._info((model or "").strip())
        return known

    def all_models(self) -> list[ModelInfo]:
        """The user file's entries (named by their first pattern), then the dataset's models of
        the agents' providers."""
        rows = [self.lookup(e.patterns[0]) for e in self.entries if e.source != BUNDLED]
        if self.use_dataset:
            rows.extend(self.lookup(name) for name in dataset.model_ids(LISTED_PROVIDERS))
        return rows


def load_registry(user_file: Path | None = None) -> Registry:
    """The dataset and ctxtop's facts with the user's file (if any) taking precedence."""
    registry = Registry()
    bundled = resources.files("ctxtop.engine.models").joinpath("models.yaml").read_text("utf-8")
    registry.add_document(parse_yaml(bundled, "engine/models/models.yaml"), BUNDLED)
    path = user_file if user_file is not None else config_dir() / USER_FILE_NAME
    if path.is_file():
        registry.add_document(read_yaml_file(path), str(path), first=True)
    return registry


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    return load_registry()


def lookup(model: str | None) -> ModelInfo:
    """Look ``model`` up in the default registry (user file, dataset, ctxtop's facts)."""
    return default_registry().lookup(model)
