"""The automatic live policy: apply an edit or a compaction to a proxied session when its fill
passes a threshold (as CodeCompanion edits at 65 % and compacts at 85 %, Copilot at about 80 %).
Off by default; the settings' ``live:`` block turns it on:

```yaml
live:
  auto: edit      # off (the default), edit or compact
  at: 0.85        # the fill (fraction of the window) that triggers it
```
It applies once per session, and is armed again only when the fill is seen under `at` with no plan
in force: stopping a plan (`l`, `ctxtop live --stop`) past `at` does not bring it straight back.

The dashboard looks at the session it shows every few seconds (tui/live_apply.py); headless
``ctxtop proxy`` looks at each proxied session after each of its requests was measured
(``AutoLiveWatch``): it finds the session's log by the id the agent sent, follows it as the
dashboard does (the gauge's fill) and applies the same plan with ``apply_auto``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxtop.engine.config import config_path, read_config_data
from ctxtop.engine.errors import CtxtopError, InputError
from ctxtop.engine.tokens.short import provenance_mark

if TYPE_CHECKING:
    from ctxtop.engine.live.session import LiveSession
    from ctxtop.engine.live.view import Gauge

ACTIONS = ("off", "edit", "compact")
DEFAULT_AT = 0.85


@dataclass(frozen=True, slots=True)
class AutoLive:
    action: str = "off"
    at: float = DEFAULT_AT

    def due(self, fill: float, proxied: bool, planned: bool) -> bool:
        """Whether to apply now: on, the session proxied, no plan in force, the fill past it."""
        return self.action != "off" and proxied and not planned and fill >= self.at

    def as_config(self) -> dict[str, Any]:
        """The ``live:`` block that gives this policy (``ctxtop config`` shows it)."""
        return {"auto": self.action, "at": self.at}


class AutoArming:
    """When the automatic policy applies, for the dashboard and headless ``ctxtop proxy`` alike:
    once per session when its fill passes ``at`` with no plan in force; armed again only when
    the fill is seen under ``at`` with no plan in force (the agent compacted, or a plan made
    it fit). So stopping a plan while the fill is still past ``at`` gives the agent its own
    requests back for good, instead of the policy applying it again on the next look."""

    def __init__(self, auto: AutoLive) -> None:
        self.auto = auto
        self.applied: set[str] = set()

    def due(self, session_id: str, fill: float, proxied: bool, planned: bool) -> bool:
        """Whether to apply now; when True, the session counts as applied from here on."""
        if session_id in self.applied:
            if fill < self.auto.at and not planned:
                self.applied.discard(session_id)
            return False
        if not self.auto.due(fill, proxied, planned):
            return False
        self.applied.add(session_id)
        return True


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


def apply_auto(path: str | Path, session_id: str, auto: AutoLive) -> str:
    """Put the policy's default edit (keep the last 3 tool uses) or compaction (keep the last 3
    rounds) in force for the session, as a live plan; what was done, in a few words.
    ``CtxtopError`` when there is nothing to apply (e.g. no old tool result to clear)."""
    from ctxtop.engine.editing.policy import Policy
    from ctxtop.engine.live.apply_plan import apply_compact, apply_edit

    if auto.action == "edit":
        apply_edit(path, Policy(), session_id)
    else:
        apply_compact(path, session_id)
    return f"the fill passed {auto.at:.0%}: {auto.action} applied live"


def session_log(session_id: str) -> Path | None:
    """The log of the session the agent names ``session_id`` in its requests, among every
    agent's sessions: Claude Code's ``<id>.jsonl``, Codex's ``rollout-<time>-<id>.jsonl``."""
    from ctxtop.engine.agents.discovery import discover

    for found in discover():
        stem = found.path.stem
        if stem == session_id or stem.endswith("-" + session_id):
            return found.path
    return None


LOOK_AGAIN_SECONDS = 30.0  # a session whose log was not found is looked for again after this
SETTLE_SECONDS = 1.0  # the agent writes the answer's usage to its log as the answer ends
# A session with no request for this long is let go (its log is read again from the start if
# it comes back): a proxy left running for days does not keep every session it ever saw.
FORGET_SECONDS = 1800.0


class AutoLiveWatch:
    """The automatic policy for headless ``ctxtop proxy``: ``seen(session_id)`` after each of a
    session's requests was measured; in a thread of its own, the session's log is followed
    (the dashboard's gauge) and, once its fill passes ``at`` with no plan in force, the plan is
    applied, once. It is armed again when the fill is seen under ``at`` with no plan in force
    (the agent compacted by itself): stopping a plan while the fill is still past ``at`` does
    not bring it straight back. ``report`` gets one line per plan applied or refused."""

    def __init__(self, auto: AutoLive, report: Callable[[str], None]) -> None:
        self.auto = auto
        self.report = report
        self.sessions: dict[str, LiveSession] = {}
        self.missing: dict[str, float] = {}  # session id -> when its log was looked for
        self.last_seen: dict[str, float] = {}  # session id -> its latest request (monotonic)
        self.arming = AutoArming(auto)
        self.queued: set[str] = set()
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="ctxtop-auto-live")

    def seen(self, session_id: str | None) -> None:
        """A request of ``session_id`` was measured (from any thread; returns at once)."""
        if self.auto.action == "off" or not session_id or session_id == "unknown":
            return
        with self.lock:
            self.last_seen[session_id] = time.monotonic()
            if session_id in self.queued:
                return  # a look is already due: it reads the log as it is then
            self.queued.add(session_id)
        self.pool.submit(self._look_twice, session_id)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def _look_twice(self, session_id: str) -> None:
        """Now, and once more when the agent has had time to log the answer's usage."""
        try:
            if not self.look(session_id):
                time.sleep(SETTLE_SECONDS)
                self.look(session_id)
            self.forget_quiet(time.monotonic())
        finally:
            with self.lock:
                self.queued.discard(session_id)

    def forget_quiet(self, now: float) -> None:
        """Let go of the sessions with no request in the last ``FORGET_SECONDS``."""
        with self.lock:
            quiet = [sid for sid, at in self.last_seen.items() if now - at > FORGET_SECONDS]
            for session_id in quiet:
                del self.last_seen[session_id]
        for session_id in quiet:
            self.sessions.pop(session_id, None)
            self.missing.pop(session_id, None)

    def look(self, session_id: str) -> bool:
        """Apply the policy to the session if it is due; True when a plan was applied."""
        from ctxtop.engine.live.live_status import live_status

        gauge = self.gauge(session_id)
        if gauge is None:
            return False
        fill = gauge.fill
        planned = live_status(session_id).plan is not None
        if not self.arming.due(session_id, fill, proxied=True, planned=planned):
            return False
        live = self.sessions[session_id]
        try:
            done = apply_auto(live.path, session_id, self.auto)
        except CtxtopError as error:
            self.report(f"automatic live policy: {session_id}: {error}")
            return False
        self.report(
            f"automatic live policy: {session_id} at {fill:.1%}{provenance_mark(gauge.source)}"
            f" of its window, {done} "
            f"(ctxtop live --stop {session_id} gives the agent its own requests back)"
        )
        return True

    def gauge(self, session_id: str) -> Gauge | None:
        """The session's gauge as the dashboard has it, its fill and where its figure comes
        from (None: no log found, or not one ctxtop can read)."""
        from ctxtop.engine.live.session import LiveSession

        live = self.sessions.get(session_id)
        if live is None:
            looked = self.missing.get(session_id)
            if looked is not None and time.monotonic() - looked < LOOK_AGAIN_SECONDS:
                return None
            path = session_log(session_id)
            if path is None:
                self.missing[session_id] = time.monotonic()
                return None
            live = self.sessions[session_id] = LiveSession(path, analysis=False)
        live.poll()
        view = live.figures()
        return view.gauge if view is not None else None
