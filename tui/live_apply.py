"""The dashboard's live-apply side (issue 18): whether the session's requests go through
ctxtop's proxy, the header's "edited live" mark with what the agent holds and what the model
receives, "Apply live" in the editing and compaction panels (they get the session id when it is
proxied), ``l`` to stop applying, and the automatic policy of the settings' ``live:`` block.

The status is looked at every few seconds in a worker (a ``stat`` of the plan and the end of the
session's measurement file), never on the UI thread.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.live.auto_live import AutoArming, AutoLive, apply_auto, load_auto_live
from ctxtop.engine.live.live_status import LiveStatus, live_status
from ctxtop.engine.live.view import LiveView
from ctxtop.engine.proxy.live_plan import stop_plan
from ctxtop.tui.components.header import SessionHeader
from ctxtop.tui.messages import LiveChanged

LIVE_CHECK_SECONDS = 2.0


class LiveApplyApp(App[None]):
    """Mixed into the dashboard's app (``CtxtopApp``), which sets these attributes."""

    view: LiveView | None
    path: Path | None
    header: SessionHeader
    live: LiveStatus | None = None
    auto_live: AutoLive = AutoLive()
    auto_arming: AutoArming  # the engine's rule: once, armed again when the fill drops

    def start_live_checks(self) -> None:
        try:
            self.auto_live = load_auto_live()
        except CtxtopError as error:
            self.notify(str(error), title="Settings", severity="warning", markup=False)
        self.auto_arming = AutoArming(self.auto_live)
        self.set_interval(LIVE_CHECK_SECONDS, self.check_live)

    def live_session(self) -> str | None:
        """The session's id when it is proxied (or a plan is in force): "Apply live" is
        offered then."""
        status = self.live
        if status is None or not (status.proxied or status.plan is not None):
            return None
        return status.session_id

    def check_live(self) -> None:
        view = self.view
        if view is None or not view.session_id:
            return
        session, fill, path = view.session_id, view.gauge.fill, self.path
        self.run_worker(
            lambda: self._look(session, fill, path), thread=True, exclusive=True, group="live"
        )

    def _look(self, session: str, fill: float, path: Path | None) -> None:
        status = live_status(session)
        auto = self.auto_live
        planned = status.plan is not None
        if path and self.auto_arming.due(session, fill, status.proxied, planned):
            self._apply_automatically(path, session, auto)
            status = live_status(session)
        self.call_from_thread(self.show_live, status)

    def _apply_automatically(self, path: Path, session: str, auto: AutoLive) -> None:
        try:
            done = apply_auto(path, session, auto)  # the engine's, as headless ctxtop proxy
        except CtxtopError as error:
            self.call_from_thread(
                self.notify, str(error), title="Automatic live policy", markup=False
            )
            return
        self.call_from_thread(
            self.notify, f"{done} (l stops it)", title="Automatic live policy", markup=False
        )

    def show_live(self, status: LiveStatus) -> None:
        if self.view is None or status.session_id != self.view.session_id:
            return  # the dashboard moved to another session meanwhile
        self.live = status
        self.header.live = status.summary() if self.live_session() else ""

    def action_stop_live(self) -> None:
        status = self.live
        if status is None or status.plan is None:
            self.notify("Nothing is applied live to this session.")
            return
        stop_plan(status.session_id)  # for good: the policy waits for the fill to drop
        self.notify("The next request is the agent's own again.", title="Stopped applying live")
        self.check_live()

    def on_live_changed(self, message: LiveChanged) -> None:
        self.check_live()
