"""Context windows and prices from genai-prices (Pydantic's maintained dataset of LLM prices).

Only the snapshot bundled in the installed wheel is read (``genai_prices.data``): never the
library's auto-update path (``UpdatePrices`` fetches a newer file over the network and installs
it as a "custom snapshot"). ctxtop loads the data and its types without the package's
``__init__``, which imports that updater and its HTTP client (and asyncio: a third of a second
at every start of ``ctxtop report`` or the status line), and reads the bundled list directly,
so a snapshot some other code installed is not used either. Prices are those in force today (the
dataset dates launch prices and price changes); a tiered price is its base, the first tier above
it the long-context price.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import sys
import types
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctxtop.engine.files import replace_file
from ctxtop.engine.paths import cache_dir

# Claude Code writes "[1m]" after the id of the 1M-window variant; the dataset names the model.
_VARIANT_SUFFIXES = ("[1m]",)
# Searched first, in this order, then every other provider of the dataset.
_FIRST_PARTY = ("anthropic", "openai", "google")
ANSWERS_PREFIX = "genai-prices-answers-"


@dataclass(frozen=True, slots=True)
class DatasetPrices:
    """USD per million tokens; a cache price is None when the dataset gives none."""

    input: float
    output: float
    cache_write_5m: float | None
    cache_write_1h: float | None
    cache_read: float | None


@dataclass(frozen=True, slots=True)
class DatasetModel:
    """What the dataset says of one model."""

    id: str  # the dataset's id of the model the name matched
    provider: str  # the dataset's provider id
    context_window: int | None
    prices: DatasetPrices | None
    long_context_prices: DatasetPrices | None
    long_context_from: int | None  # input tokens from which the long-context prices apply


def version() -> str:
    """The installed genai-prices version (its data is the wheel's snapshot)."""
    from importlib.metadata import version as package_version

    return package_version("genai-prices")


@lru_cache(maxsize=1)
def _providers() -> list[Any]:
    """The wheel's provider list (``genai_prices.data.providers``)."""
    if "genai_prices" in sys.modules:  # imported for real already: use it as it is
        return list(importlib.import_module("genai_prices.data").providers)
    spec = importlib.util.find_spec("genai_prices")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("genai_prices")
    # A bare package object for the submodules' relative imports; dropped afterwards, so a
    # later ``import genai_prices`` runs the real ``__init__`` (reusing the loaded submodules).
    package = types.ModuleType("genai_prices")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    sys.modules["genai_prices"] = package
    try:
        data = importlib.import_module("genai_prices.data")
    finally:
        if sys.modules.get("genai_prices") is package:
            del sys.modules["genai_prices"]
    return list(data.providers)


def _search_order(name: str) -> list[Any]:
    providers = _providers()
    first = [p for p in providers if p.model_match is not None and p.model_match.is_match(name)]
    party = [p for name_ in _FIRST_PARTY for p in providers if p.id == name_]
    seen: set[str] = set()
    ordered = []
    for provider in [*first, *party, *providers]:
        if provider.id not in seen:
            seen.add(provider.id)
            ordered.append(provider)
    return ordered


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, Decimal | int | float) else None


def _base(value: Any) -> float | None:
    return _number(getattr(value, "base", value))


def _tier(value: Any) -> tuple[int, float] | None:
    tiers = getattr(value, "tiers", None)
    if not tiers:
        return None
    return int(tiers[0].start), float(tiers[0].price)


def _prices(price: Any, pick: Any) -> DatasetPrices | None:
    values = [
        pick(getattr(price, key, None))
        for key in (
            "input_mtok",
            "output_mtok",
            "cache_write_mtok",
            "cache_write_1h_mtok",
            "cache_read_mtok",
        )
    ]
    input_, output, write_5m, write_1h, read = values
    if input_ is None or output is None:
        return None
    return DatasetPrices(input_, output, write_5m, write_1h, read)


def _model(provider: Any, model: Any, when: datetime) -> DatasetModel:
    price = model.get_prices(when)
    tiered = _tier(getattr(price, "input_mtok", None))
    long_context = None
    if tiered is not None:

        def above(value: Any) -> float | None:
            tier = _tier(value)
            return tier[1] if tier is not None else _base(value)

        long_context = _prices(price, above)
    window = model.context_window
    return DatasetModel(
        id=model.id,
        provider=provider.id,
        context_window=int(window) if isinstance(window, int) and window > 0 else None,
        prices=_prices(price, _base),
        long_context_prices=long_context,
        long_context_from=tiered[0] if tiered is not None else None,
    )


def _search(name: str) -> DatasetModel | None:
    now = datetime.now(UTC)
    for provider in _search_order(name):
        # No fall-back hop to other providers: each provider is searched in its turn.
        found = provider.find_model(name)
        if found is not None:
            return _model(provider, found, now)
    return None


def _answers_file() -> Path | None:
    """Where this dataset's answers of today are kept: named by the size and time of the wheel's
    data file (another genai-prices install is another file) and the day (prices change on
    dates the dataset gives)."""
    spec = importlib.util.find_spec("genai_prices")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        stat = (Path(next(iter(spec.submodule_search_locations))) / "data.py").stat()
    except OSError:
        return None
    day = datetime.now(UTC).date().isoformat()
    return cache_dir() / f"{ANSWERS_PREFIX}{stat.st_size}-{stat.st_mtime_ns}-{day}.json"


def _load_answers(path: Path) -> dict[str, Any]:
    try:
        answers = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return answers if isinstance(answers, dict) else {}


def _answer(raw: Any) -> DatasetModel | None:
    if not isinstance(raw, dict):
        return None

    def prices(value: Any) -> DatasetPrices | None:
        if value is None:
            return None
        figures = DatasetPrices(**value)
        if not all(isinstance(x, float | int | None) for x in dataclasses.astuple(figures)):
            raise TypeError("a price is not a number")
        return figures

    window = raw["context_window"]
    if not (window is None or isinstance(window, int)) or isinstance(window, bool):
        raise TypeError("the window is not a number")
    return DatasetModel(
        id=raw["id"],
        provider=raw["provider"],
        context_window=raw["context_window"],
        prices=prices(raw["prices"]),
        long_context_prices=prices(raw["long_context_prices"]),
        long_context_from=raw["long_context_from"],
    )


def _save_answers(path: Path, answers: dict[str, Any]) -> None:
    """Written whole to a temp file, then renamed over the old one; older days' files go."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, json.dumps(answers).encode("utf-8"))
        for old in path.parent.glob(f"{ANSWERS_PREFIX}*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a cache: the next run asks the dataset again


@lru_cache(maxsize=256)
def find(model: str) -> DatasetModel | None:
    """The dataset's entry for a model id (None: the dataset does not know it). The answers are
    kept in ctxtop's cache dir, so a later run (the status line, after every message) does not
    load the whole dataset again."""
    name = model.strip().lower()
    for suffix in _VARIANT_SUFFIXES:
        name = name.removesuffix(suffix)
    if not name:
        return None
    path = _answers_file()
    answers = _load_answers(path) if path is not None else {}
    if name in answers:
        try:
            return _answer(answers[name])
        except (KeyError, TypeError):
            pass  # an answer of another layout: asked again below
    found = _search(name)
    if path is not None:
        answers[name] = dataclasses.asdict(found) if found is not None else None
        _save_answers(path, answers)
    return found


def model_ids(providers: tuple[str, ...]) -> list[str]:
    """The ids of the dataset's current (not deprecated) models of ``providers``, in order."""
    ids: list[str] = []
    for provider in _providers():
        if provider.id in providers:
            ids.extend(m.id for m in provider.models if not m.deprecated and m.id not in ids)
    return ids
