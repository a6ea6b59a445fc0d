"""Layout profiles: how an agent lays a session out in its prompt (sections, flex, caching).

Bundled profiles live in ``profiles/*.yaml`` beside this module (each agent names its own:
``Adapter.profile`` in ``engine/agents/<agent>/reader.py``); a file ``profiles/NAME.yaml`` in
the user config dir (``ctxtop config --path``) replaces the bundled profile of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ctxtop.engine.errors import InputError
from ctxtop.engine.paths import config_dir
from ctxtop.engine.yaml_text import parse_yaml, read_yaml_file

# Which session content a section holds (see engine/analysis/sections.py).
CONTENTS = (
    "system",  # system prompt + tool definitions: not in the log, inferred from the API's figures
    "instructions",  # system / developer messages, memory and instruction files
    "attachments",  # files and reminders the agent attached
    "messages",  # the whole conversation
    "history",  # the conversation before the current user message
    "current_user",  # the newest user message
    "current_rounds",  # the tool-call rounds after the newest user message
)
BREAKPOINT_RULES = ("system", "last_message", "user_messages", "round_results", "stable_prefix")


@dataclass(frozen=True, slots=True)
class Truncation:
    """Each tool result is cut to ``max_fraction`` of the prompt budget, keeping a head and a
    tail share of that limit around a marker (Copilot's tool-result truncation)."""

    max_fraction: float
    head: float
    tail: float


@dataclass(frozen=True, slots=True)
class SectionSpec:
    name: str
    label: str
    content: str
    flex_grow: float | None = None  # None: prompt-tsx's "no flexGrow", rendered first
    flex_basis: float = 1.0
    flex_reserve: int | str | None = None  # tokens, or "/N" of the remaining budget
    priority: int | None = None
    token_limit: int | str | None = None  # tokens, or "/N" of the budget
    truncate_results: Truncation | None = None
    prioritized_list: bool = False

    def limit(self, budget: int) -> int | None:
        return _amount(self.token_limit, budget)

    def reserve(self, remaining: int) -> int:
        return _amount(self.flex_reserve, remaining) or 0


@dataclass(frozen=True, slots=True)
class CacheSpec:
    style: str  # "breakpoints" (Anthropic cache_control) | "automatic" (OpenAI prefix caching)
    breakpoints: tuple[str, ...] = ()
    max_breakpoints: int = 4
    ttl_seconds: float = 300.0
    granularity: int = 1  # cached prefixes are counted in steps of this many tokens
    # The last request before a compaction is the agent's summarising request, sent without the
    # tool definitions, so it shares no cached prefix with the session's requests (Codex).
    summary_request_uncached: bool = False
    # After a compaction the agent's system prefix is not the one cached before (Claude Code).
    compaction_changes_system: bool = False
    # The agent marks the tool result that arrived last and sends a round's results in call
    # order: results of calls after that one follow the breakpoint, uncached (Claude Code).
    marks_last_arrived_result: bool = False
    # A new agent process (``state.process_starts``) sends a system prompt unlike the one cached
    # before when the process before ran one of these tools (Claude Code: a file edit changes the
    # git status its system prompt holds).
    process_start_new_system_after: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    description: str
    sections: tuple[SectionSpec, ...]
    cache: CacheSpec
    output_reserve: int | str = 0  # tokens, or "max_output" (the model's, from the registry)
    output_reserve_cap: int | None = None
    # As another agent's profile (a what-if): "agent", the session reader's rule; "none", no
    # auto-compaction. The agent's own profile always keeps its rule (sessions/limits.py).
    autocompact: str = "agent"
    source: str = "bundled"

    def reserve_for(self, max_output: int) -> int:
        reserve = max_output if self.output_reserve == "max_output" else int(self.output_reserve)
        return min(reserve, self.output_reserve_cap) if self.output_reserve_cap else reserve


def _amount(value: int | str | None, base: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        return base // int(value[1:])
    return value


def _fail(source: str, message: str) -> InputError:
    return InputError(source, message)


def _number_or_fraction(raw: Any, key: str, source: str) -> int | str | None:
    if raw is None:
        return None
    if isinstance(raw, bool):
        raise _fail(source, f"{key} must be a number of tokens or '/N'")
    if isinstance(raw, int) and raw >= 0:
        return raw
    if isinstance(raw, str) and raw.startswith("/") and raw[1:].isdigit() and int(raw[1:]) > 0:
        return raw
    raise _fail(source, f"{key} must be a number of tokens or '/N', not {raw!r}")


def _section(raw: Any, index: int, source: str) -> SectionSpec:
    where = f"sections[{index}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise _fail(source, f"{where} needs a name")
    content = raw.get("content")
    if content not in CONTENTS:
        raise _fail(source, f"{where}.content must be one of {', '.join(CONTENTS)}")
    truncation = None
    if raw.get("truncate_results") is not None:
        cut = raw["truncate_results"]
        try:
            truncation = Truncation(
                float(cut["max_fraction"]), float(cut["head"]), float(cut["tail"])
            )
        except (KeyError, TypeError, ValueError):
            raise _fail(
                source, f"{where}.truncate_results needs max_fraction, head, tail"
            ) from None
    grow = raw.get("flex_grow")
    priority = raw.get("priority")
    if grow is not None and (isinstance(grow, bool) or not isinstance(grow, int | float)):
        raise _fail(source, f"{where}.flex_grow must be a number")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise _fail(source, f"{where}.priority must be an integer")
    return SectionSpec(
        name=raw["name"],
        label=str(raw.get("label") or raw["name"]),
        content=content,
        flex_grow=None if grow is None else float(grow),
        flex_basis=float(raw.get("flex_basis", 1)),
        flex_reserve=_number_or_fraction(raw.get("flex_reserve"), f"{where}.flex_reserve", source),
        priority=priority,
        token_limit=_number_or_fraction(raw.get("token_limit"), f"{where}.token_limit", source),
        truncate_results=truncation,
        prioritized_list=bool(raw.get("prioritized_list", False)),
    )


def parse_profile(document: Any, source: str) -> Profile:
    """A profile from its decoded YAML; a bad one is an ``InputError`` naming ``source``."""
    if not isinstance(document, dict) or not isinstance(document.get("name"), str):
        raise _fail(source, "a profile is a mapping with a name")
    sections = document.get("sections")
    if not isinstance(sections, list) or not sections:
        raise _fail(source, "a profile needs a list of sections")
    raw_cache = document.get("cache") or {}
    style = raw_cache.get("style", "breakpoints")
    if style not in ("breakpoints", "automatic"):
        raise _fail(source, "cache.style must be breakpoints or automatic")
    rules = tuple(raw_cache.get("breakpoints") or ())
    unknown = [rule for rule in rules if rule not in BREAKPOINT_RULES]
    if unknown:
        raise _fail(source, f"unknown cache breakpoint rule {unknown[0]!r}")
    reserve = document.get("output_reserve", 0)
    if reserve != "max_output" and (isinstance(reserve, bool) or not isinstance(reserve, int)):
        raise _fail(source, "output_reserve must be a number of tokens or max_output")
    return Profile(
        name=document["name"],
        description=str(document.get("description") or ""),
        sections=tuple(_section(raw, index, source) for index, raw in enumerate(sections)),
        cache=CacheSpec(
            style=style,
            breakpoints=rules,
            max_breakpoints=int(raw_cache.get("max_breakpoints", 4)),
            ttl_seconds=float(raw_cache.get("ttl_seconds", 300)),
            granularity=int(raw_cache.get("granularity", 1)),
            summary_request_uncached=bool(raw_cache.get("summary_request_uncached", False)),
            compaction_changes_system=bool(raw_cache.get("compaction_changes_system", False)),
            marks_last_arrived_result=bool(raw_cache.get("marks_last_arrived_result", False)),
            process_start_new_system_after=tuple(
                str(name) for name in raw_cache.get("process_start_new_system_after") or ()
            ),
        ),
        output_reserve=reserve,
        output_reserve_cap=document.get("output_reserve_cap"),
        autocompact=str(document.get("autocompact", "agent")),
        source=source,
    )


def user_profiles_dir() -> Path:
    return config_dir() / "profiles"


def bundled_names() -> list[str]:
    folder = resources.files("ctxtop.engine.analysis").joinpath("profiles")
    return sorted(item.name[:-5] for item in folder.iterdir() if item.name.endswith(".yaml"))


def available_profiles() -> list[str]:
    names = set(bundled_names())
    folder = user_profiles_dir()
    if folder.is_dir():
        names.update(path.stem for path in folder.glob("*.yaml"))
    return sorted(names)


# By profile file: its modification time when parsed (None: no user file) and the profile.
_loaded: dict[str, tuple[float | None, Profile]] = {}


def load_profile(name: str) -> Profile:
    """The named profile: the user's file if there is one, else the bundled one (parsed once
    per file version: a live session asks on every update)."""
    user_file = user_profiles_dir() / f"{name}.yaml"
    try:
        stamp: float | None = user_file.stat().st_mtime
    except OSError:
        stamp = None
    known = _loaded.get(str(user_file))
    if known is None or known[0] != stamp:  # an edit replaces the version parsed before
        known = _loaded[str(user_file)] = (
            stamp,
            _load(name, user_file if stamp is not None else None),
        )
    return known[1]


def _load(name: str, user_file: Path | None) -> Profile:
    if user_file is not None:
        return parse_profile(read_yaml_file(user_file), str(user_file))
    if name not in bundled_names():
        raise InputError(name, f"no such profile (known: {', '.join(available_profiles())})")
    text = (
        resources.files("ctxtop.engine.analysis").joinpath("profiles", f"{name}.yaml").read_text()
    )
    return parse_profile(parse_yaml(text, f"engine/analysis/profiles/{name}.yaml"), "bundled")
