"""What an analysis needs besides the session: the profile, the model and its limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from engine.analysis.profiles import CacheSpec, Profile
from engine.config import Thresholds as Triggers
from engine.models.registry import ModelInfo
from engine.models.registry import lookup as model_info
from engine.sessions.model import SessionState

AutocompactRule = Callable[[int], int | None]


@dataclass(frozen=True, slots=True)
class Setup:
    """What the analysis needs besides the session: the profile, the model and the limits."""

    profile: Profile
    model: ModelInfo
    window: int
    window_source: str
    autocompact_at: int | None
    triggers: Triggers
    window_overridden: bool = False

    @property
    def cache(self) -> CacheSpec:
        """The profile's caching as the model's provider applies it: OpenAI and Google cache
        prompt prefixes by themselves (OpenAI in steps of 128 tokens) whatever markers the agent
        sets; Anthropic caches only at the agent's breakpoints."""
        spec = self.profile.cache
        provider = self.model.provider
        if provider == "openai":
            return replace(spec, style="automatic", granularity=128)
        if provider == "google":
            return replace(spec, style="automatic", granularity=1)
        if provider == "anthropic" and spec.style == "automatic":
            return replace(spec, style="breakpoints", breakpoints=("system", "last_message"))
        return spec


def setup_for(
    state: SessionState,
    adapter_autocompact: AutocompactRule,
    profile: Profile,
    triggers: Triggers,
    window_override: int | None = None,
) -> Setup:
    """The limits of a session as the report states them (``window_override``: what if the
    window were this many tokens?)."""
    info = model_info(state.model)
    if window_override is not None:
        window, source = window_override, "override"
    elif state.context_window is not None:
        window, source = state.context_window, "logged"
    else:
        window, source = info.context_window, "assumed" if info.assumed else "registry"
    return Setup(
        profile=profile,
        model=info,
        window=window,
        window_source=source,
        autocompact_at=adapter_autocompact(window) if window else None,
        triggers=triggers,
        window_overridden=window_override is not None,
    )
