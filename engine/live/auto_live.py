"""The automatic live policy: apply an edit or a compaction to a proxied session when its fill
passes a threshold (as CodeCompanion edits at 65 % and compacts at 85 %, Copilot at about 80 %).
Off by default; the settings' ``live:`` block turns it on:

```yaml
live:
  auto: edit      # off (the default), edit or compact
  at: 0.85        # the fill (fraction of the window) that triggers it
```
It applies once: while a plan is in force nothing is applied again (stopping it re-arms it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.config import config_path, read_config_data
from engine.errors import InputError

ACTIONS = ("off", "edit", "compact")
DEFAULT_AT = 0.85


@dataclass(frozen=True, slots=True)
class AutoLive:
    action: str = "off"
    at: float = DEFAULT_AT

    def due(self, fill: float, proxied: bool, planned: bool) -> bool:
        """Whether to apply now: on, the session proxied, no plan in force, the fill past it."""
        return self.action != "off" and proxied and not planned and fill >= self.at


def parse_auto_live(raw: Any, where: str) -> AutoLive:
    if raw is None:
        return AutoLive()
    if not isinstance(raw, dict):
        raise InputError(where, "live must be a mapping (auto, at)")
    action = raw.get("auto", "off")
    if action is False:  # YAML 1.1 reads a bare `off` as false
        action = "off"
    if action not in ACTIONS:
        raise InputError(where, f"live.auto must be one of {', '.join(ACTIONS)}, not {action!r}")
    at = raw.get("at", DEFAULT_AT)
    if isinstance(at, bool) or not isinstance(at, int | float) or not 0 < at <= 1:
        raise InputError(where, "live.at must be a fraction between 0 and 1")
    return AutoLive(str(action), float(at))


def load_auto_live(path: Path | None = None) -> AutoLive:
    """The settings file's ``live:`` block (off when there is none)."""
    path = path or config_path()
    data = read_config_data(path)
    return parse_auto_live(data.get("live") if isinstance(data, dict) else None, str(path))
