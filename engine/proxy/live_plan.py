"""Live plans: what the proxy rewrites in a proxied session's requests, one file per session.

A plan is written by the dashboard's "Apply live" (or ``ctxtop edit --live`` / ``ctxtop compact
--live``) into ``<data dir>/live/<session id>.json``: a temp file renamed over the old plan, so
the proxy never reads half a plan. The proxy's rewriter looks at the file's mtime and size on
every request (one ``stat``) and parses it again only when they change. Stopping is removing
the file: the next request is the agent's own again.

The plan holds the decisions of ``ctxtop edit`` / ``ctxtop compact`` (made by engine/forks on
the session's log), never new ones: for an edit, the replacement text of each cleared tool
result (and input) by call id; for a compaction, the hand-off message (the summary) and which
rounds it replaces, by their content (``round_digest``: the model's text and call ids of each
summarised round), so that it applies only to a request that holds that history.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ctxtop.engine.errors import CtxtopError, InputError
from ctxtop.engine.files import read_bounded, replace_file
from ctxtop.engine.paths import data_dir, is_plain_name
from ctxtop.engine.proxy.tally import digest
from ctxtop.engine.safety.terminal import one_line

VERSION = 2  # 1: compactions found their rounds by counting, not by content (ignored now)
KINDS = ("edit", "compact")
# A plan holds replacement texts and a summary, far less than a request (64 MB at most): a
# plan file over this is not read at all.
PLAN_LIMIT = 64 * 1024 * 1024
# The figures a plan keeps (engine/live/apply_plan.py), each None or of its kind.
FIGURE_KINDS: dict[str, tuple[type, ...]] = {
    "tokens_before": (int,),
    "tokens_after": (int,),
    "tokens_source": (str,),  # calibrated (the session's tokenizer factor) or estimated
    "cache_rewrite_tokens": (int,),
    "cache_rewrite_cost_usd": (int, float),
    "saving_per_request_usd": (int, float),
    "break_even_requests": (int,),
    "priced_by": (str,),
}

log = logging.getLogger("ctxtop.proxy")


def round_digest(texts: Iterable[str], calls: Iterable[str]) -> str:
    """What one model response is recognised by, the same from the session's log and from a
    request: its text (whitespace aside: an agent may trim what it sends back) and its call
    ids."""
    text = "".join("".join(texts).split())
    return digest(json.dumps([text, sorted(calls)], ensure_ascii=False))


@dataclass(frozen=True, slots=True)
class CompactCut:
    """Which rounds of the conversation the summary replaces, as the requests will show them.

    ``summarised_digests``: the ``round_digest`` of each summarised round, in order: a request
    holds the plan's history when its first model responses are these; ``summarised_calls``:
    the call ids of every summarised round; ``kept_calls``: of every kept round;
    ``kept_request``: the cut fell inside a turn, whose request stays verbatim after the
    summary."""

    message: str
    summarised_digests: tuple[str, ...]
    summarised_calls: tuple[str, ...]
    kept_calls: tuple[str, ...]
    kept_request: bool

    @property
    def summarised_rounds(self) -> int:
        return len(self.summarised_digests)


@dataclass(frozen=True, slots=True)
class LivePlan:
    kind: str  # "edit" or "compact"
    session_id: str
    agent: str
    source: str  # the session log the decisions were made on
    source_sha256: str
    created: str  # ISO-8601
    results: dict[str, str] = field(default_factory=dict)  # call id -> replacement text
    inputs: dict[str, Any] = field(default_factory=dict)  # call id -> replacement input
    compact: CompactCut | None = None
    figures: dict[str, Any] = field(default_factory=dict)  # tokens before/after, cache cost

    def as_json(self) -> dict[str, Any]:
        return {"version": VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, value: Any) -> LivePlan:
        """The plan a file holds; ``ValueError`` if it is not one (another version, damaged)."""
        if not isinstance(value, dict) or value.get("version") != VERSION:
            raise ValueError("not a live plan of this ctxtop")
        if value.get("kind") not in KINDS:
            raise ValueError(f"unknown kind {value.get('kind')!r}")
        cut = value.get("compact")
        compact = None
        if isinstance(cut, dict):
            compact = CompactCut(
                str(cut["message"]),
                tuple(str(d) for d in cut["summarised_digests"]),
                tuple(str(c) for c in cut["summarised_calls"]),
                tuple(str(c) for c in cut["kept_calls"]),
                bool(cut["kept_request"]),
            )
        results = value.get("results") or {}
        inputs = value.get("inputs") or {}
        if not isinstance(results, dict) or not isinstance(inputs, dict):
            raise ValueError("results and inputs must be objects")
        return cls(
            kind=str(value["kind"]),
            session_id=str(value["session_id"]),
            agent=str(value.get("agent") or ""),
            source=str(value.get("source") or ""),
            source_sha256=str(value.get("source_sha256") or ""),
            created=str(value.get("created") or ""),
            results={str(k): str(v) for k, v in results.items()},
            inputs={str(k): v for k, v in inputs.items()},
            compact=compact,
            figures=_figures(value.get("figures")),
        )


def _figures(value: Any) -> dict[str, Any]:
    """A plan's figures, each of its kind (``ctxtop live`` formats them as numbers)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("figures must be an object")
    for name, kinds in FIGURE_KINDS.items():
        figure = value.get(name)
        if figure is not None and (isinstance(figure, bool) or not isinstance(figure, kinds)):
            kind = "text" if str in kinds else "a number" if float in kinds else "a whole number"
            raise ValueError(f"figures.{name} must be {kind}, not {figure!r:.40}")
    return dict(value)


def plans_dir() -> Path:
    return data_dir() / "live"


def plan_path(session_id: str) -> Path:
    """Where the plan of ``session_id`` lives; an id that is not a plain name is refused (ids
    come from request headers and bodies, which any local client writes)."""
    if not is_plain_name(session_id):
        raise CtxtopError(f"refusing unsafe session id {session_id!r}")
    return plans_dir() / f"{session_id}.json"


def save_plan(plan: LivePlan) -> Path:
    """Write (or replace) the session's plan atomically: complete and flushed in a temp file of
    the same directory before it takes the plan's name."""
    target = plan_path(plan.session_id)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = json.dumps(plan.as_json(), ensure_ascii=False, indent=1).encode("utf-8")
    try:
        replace_file(target, data)
    except OSError as error:
        raise CtxtopError(f"{target}: not written ({error.strerror or error})") from None
    return target


def stop_plan(session_id: str) -> bool:
    """Stop applying: remove the session's plan. False if there was none."""
    try:
        plan_path(session_id).unlink()
    except FileNotFoundError:
        return False
    except OSError as error:
        raise CtxtopError(f"{plan_path(session_id)}: not removed ({error.strerror})") from None
    return True


def live_sessions() -> list[str]:
    """The session ids that have a plan applied."""
    try:
        names = os.listdir(plans_dir())
    except OSError:
        return []
    return sorted(name[: -len(".json")] for name in names if name.endswith(".json"))


class PlanCache:
    """The plans the proxy applies, read again only when a plan file's mtime or size changes
    (one ``stat`` per request otherwise). Thread-safe: the proxy rewrites requests in worker
    threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[tuple[int, int], LivePlan | None]] = {}
        # Once, when the proxy starts: finding the data dir costs more than the stat.
        self.directory = plans_dir()

    def _stamp(self, session_id: str) -> tuple[Path, tuple[int, int]] | None:
        """The plan file and its (mtime, size), or None when there is none (one ``stat``)."""
        try:
            if not is_plain_name(session_id):
                raise CtxtopError(f"refusing unsafe session id {session_id!r}")
            path = self.directory / f"{session_id}.json"
            info = os.stat(path)
        except (CtxtopError, OSError):
            with self._lock:
                self._seen.pop(session_id, None)
            return None
        return path, (info.st_mtime_ns, info.st_size)

    def may_apply(self, session_id: str) -> bool:
        """Whether ``get`` may find a plan in force: a ``stat`` only, never a read (the proxy
        asks on its event loop). False when there is no plan file, or it is the one already
        found unreadable."""
        found = self._stamp(session_id)
        if found is None:
            return False
        with self._lock:
            known = self._seen.get(session_id)
        return known is None or known[0] != found[1] or known[1] is not None

    def get(self, session_id: str) -> LivePlan | None:
        """The plan in force for ``session_id``, or None (none, or one that cannot be read:
        then the agent's requests pass unchanged, and one line says why)."""
        found = self._stamp(session_id)
        if found is None:
            return None
        path, stamp = found
        with self._lock:
            known = self._seen.get(session_id)
        if known is not None and known[0] == stamp:
            return known[1]
        try:
            plan = load_plan(path)
        except InputError as error:  # once per change of the file: the stamp is kept
            log.warning("ctxtop proxy: %s; it is not applied", one_line(str(error)))
            plan = None
        with self._lock:
            self._seen[session_id] = (stamp, plan)
        return plan


def load_plan(path: Path) -> LivePlan | None:
    """The plan in ``path``, None when there is no such file; ``InputError`` naming the file
    when it is not a readable plan: a named pipe or a device (never waited on or read), a file
    over ``PLAN_LIMIT``, damaged JSON, a figure of the wrong kind."""
    try:
        data = read_bounded(path, PLAN_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InputError(str(path), f"live plan not read ({error.strerror or error})") from None
    try:
        return LivePlan.from_json(json.loads(data))
    except (ValueError, RecursionError) as error:  # a JSONDecodeError is a ValueError
        raise InputError(str(path), f"damaged live plan ({error})") from None
    except KeyError as error:
        raise InputError(str(path), f"damaged live plan (no {error})") from None
    except TypeError as error:
        raise InputError(str(path), f"damaged live plan ({error})") from None
