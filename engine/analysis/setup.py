"""What an analysis needs besides the session: the profile, the model and its limits."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxtop.engine.analysis.profiles import CacheSpec, Profile
from ctxtop.engine.config import Thresholds as Triggers
from ctxtop.engine.models.registry import ModelInfo
from ctxtop.engine.models.registry import lookup as model_info
from ctxtop.engine.models.window import WHAT_IF
from ctxtop.engine.sessions.limits import (
    AutocompactRule,
    WindowRule,
    autocompact_point,
    session_window,
)
from ctxtop.engine.sessions.model import SessionState


@dataclass(frozen=True, slots=True)
class Setup:
    """What the analysis needs besides the session: the profile, the model and the limits."""

    profile: Profile
    model: ModelInfo
    window: int
    window_source: str
    autocompact_at: int | None
    triggers: Triggers
    # The prompt cache's lifetime the agent's settings choose (None: the profile's).
    cache_ttl: float | None = None

    @property
    def cache(self) -> CacheSpec:
        """The profile's caching as the model's provider applies it: OpenAI and Google cache
        prompt prefixes by themselves (OpenAI in steps of 128 tokens) whatever markers the agent
        sets; Anthropic caches only at the agent's breakpoints."""
        spec = self.profile.cache
        if self.cache_ttl is not None:
            spec = replace(spec, ttl_seconds=self.cache_ttl)
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
    what_if: int | None = None,
    window_rule: WindowRule | None = None,
    cache_ttl: float | None = None,
    own_profile: str | None = None,
) -> Setup:
    """The limits of a session as the report states them (``what_if``: the what-if window, in
    tokens; ``window_rule``: the agent's own window for a model, see ``session_window``;
    ``cache_ttl``: the prompt cache's lifetime the agent's settings choose; ``own_profile``: the
    name of the agent's layout profile, when ``profile`` may be another agent's: a what-if, see
    ``autocompact_point``)."""
    what_if_profile = own_profile is not None and profile.name != own_profile
    if what_if is not None:
        window, source = what_if, WHAT_IF
    else:
        resolved = session_window(state, window_rule)
        window, source = resolved.tokens, resolved.source
    return Setup(
        profile=profile,
        model=model_info(state.model),
        window=window,
        window_source=source,
        autocompact_at=autocompact_point(
            adapter_autocompact, window, profile.autocompact if what_if_profile else None
        ),
        triggers=triggers,
        cache_ttl=cache_ttl,
    )
