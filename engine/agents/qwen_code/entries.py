"""Qwen Code's typed record stream: what each line of a chat recording is (see ``reader``'s
notes on the format), made once by ``entry`` for the session reader, the fork writer and the
compaction source.

A line is a record ``{uuid, parentUuid, sessionId, timestamp, type, cwd, version}`` with, on
``user``/``assistant``/``tool_result`` records, a Gemini ``Content`` (``message``: ``role``,
``parts``); ``system`` records carry a ``subtype`` and a ``systemPayload``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from ctxtop.engine.agents.gemini_cli.reader import response_text
from ctxtop.engine.sessions.adapter import MAX_TOKENS, logs_tokens, token_count
from ctxtop.engine.sessions.fork_mark import COMPACTION_KEY, CTXTOP_TRIGGER
from ctxtop.engine.sessions.model import Usage

RECORD_TYPES = ("user", "assistant", "tool_result", "system")
USAGE_KEYS = ("promptTokenCount", "candidatesTokenCount", "totalTokenCount")
API_RESPONSE = "qwen-code.api_response"
SNAPSHOT_TAG = "<state_snapshot>"  # how Qwen's own compression summary opens
COMPRESSION = "chat_compression"
TITLE = "custom_title"  # written beside the chain, not on it
UNSENT = "realtime_message"  # a record whose message the model is not sent
# System records that carry nothing the model sees or ctxtop shows (the bundle's subtypes).
IGNORED_SUBTYPES = frozenset(
    {
        "attribution_snapshot",
        "at_command",
        "background_task_completed",
        "branch_checkpoint",
        "file_history_snapshot",
        "goal_runtime",
        "goal_state",
        "goal_turn_end",
        "omni_recall",
        "parent_session",
        "rewind",
        "session_artifact_event",
        "session_artifact_snapshot",
        "session_model",
        "session_source",
        "session_sources_snapshot",
        "slash_command",
        "turn_result",
        "ui_telemetry",
        "user_text_elements",
    }
)
_TRIGGERS = {"token_limit": "auto", "manual": "manual"}

# What a line is: not an object; of a type Qwen does not write; without a uuid or parentUuid;
# the session's title (off the chain); a chat_compression with a payload object (its ``info``
# may be missing: see ``compression``); a record carrying a message the model is sent; any
# other step of the chain.
Kind = Literal["bad_shape", "unknown_type", "unlinked", "title", "compression", "message", "step"]
PartKind = Literal["text", "thought", "call", "result", "image", "other", "none"]


def usage_from(
    prompt: int | None,
    cached: int | None,
    candidates: int | None,
    thoughts: int | None,
    total: int | None,
) -> Usage | None:
    """Qwen's counts → ``Usage``: the prompt includes the cached part; the answer is the total
    less the prompt (Qwen's own ``getUsageOutputTokenCountForPromptEstimate``), else the
    candidates, with the thoughts added when they are not in them."""
    if prompt is None or cached is None or candidates is None or thoughts is None:
        return None
    if total:
        output = max(total - prompt, 0)
    else:
        output = candidates if candidates > thoughts else candidates + thoughts
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=output,
        cache_read_tokens=min(cached, prompt),
        reasoning_tokens=thoughts,
    )


def _count(raw: Mapping[str, Any], name: str) -> int | None:
    value = raw.get(name) or 0
    if type(value) is int and value <= MAX_TOKENS:  # (the usual case, without the calls)
        return value if value >= 0 else None
    return token_count(value)


class Counts(msgspec.Struct, frozen=True, gc=False):
    """One call's token counts as Qwen logged them (None: a figure that is no count). Kept as
    counts, made a ``Usage`` by the reader: entries made up front hold no tracked objects."""

    prompt: int | None
    cached: int | None
    candidates: int | None
    thoughts: int | None
    total: int | None

    def usage(self) -> Usage | None:
        """The call's ``Usage`` (None: malformed counts)."""
        return usage_from(self.prompt, self.cached, self.candidates, self.thoughts, self.total)


class Call(msgspec.Struct, frozen=True, gc=False):
    """A ``functionCall`` part. Its id is read three ways, as the three consumers always did:
    ``id`` as text ("None" when the log gives none: the compaction source's), ``key`` the
    session model's ("" for none, an empty or null one: it registers no call), ``text_id``
    when it is a non-empty string (only such an id is replaced in a fork, so only such calls
    are offered for editing)."""

    id: str
    key: str
    text_id: bool
    name: str  # "unknown" when the log gives none
    args: Any


class Result(msgspec.Struct, frozen=True, gc=False):
    """A ``functionResponse`` part: what the model is told, and whether it is an error (any
    ``error`` for the session model; the compaction source calls a result failed only when
    it holds no ``output`` beside its ``error``). Ids as a ``Call``'s."""

    id: str
    key: str
    name: str
    text: str
    error: bool
    failed: bool


class Part(msgspec.Struct, frozen=True, gc=False):
    """One of a ``Content``'s parts. ``kind`` is what it shows as (a text first, as Gemini
    reads a part); ``call`` and ``result`` are set whenever the part holds such an object.
    ``plain``: a bare string, not a ``Part`` object (only the session model reads those)."""

    raw: Any
    kind: PartKind
    text: str = ""
    call: Call | None = None
    result: Result | None = None
    plain: bool = False

    @property
    def opens_turn(self) -> bool:
        """A ``Part`` object with a ``text`` key (of any value): in a user ``Content``, what a
        user turn starts with for ``ctxtop edit``."""
        return not self.plain and isinstance(self.raw, dict) and "text" in self.raw

    @property
    def names_call(self) -> bool:
        """A ``Part`` object with a ``functionCall`` key (of any value), or a bare string
        naming one."""
        return isinstance(self.raw, dict | str) and "functionCall" in self.raw

    @property
    def inline_image(self) -> bool:
        """An image given inline (``inlineData``), as the compaction source counts them."""
        return isinstance(self.raw, dict) and isinstance(self.raw.get("inlineData"), dict)


class Content(msgspec.Struct, frozen=True, gc=False):
    """A Gemini ``Content`` as written (``raw``, copied into forks), its ``role`` (``user`` |
    ``model``) and parts; ``at``: its index in the list it was written in."""

    raw: dict[str, Any]
    role: Any
    parts: tuple[Part, ...]
    at: int = 0

    @property
    def objects(self) -> tuple[Part, ...]:
        """The parts written as ``Part`` objects (what Qwen's own code reads)."""
        return tuple(part for part in self.parts if not part.plain and part.kind != "none")

    @property
    def starts_turn(self) -> bool:
        """A user ``Content`` with text: a user turn for ``ctxtop edit``."""
        return self.role == "user" and any(part.opens_turn for part in self.parts)

    @property
    def text(self) -> str:
        """Its text parts, thoughts left out, one per line."""
        return "\n".join(p.text for p in self.objects if p.kind == "text")

    def opens_with(self, role: str, openings: tuple[str, ...]) -> bool:
        """Whether it is a ``role`` turn whose first part is a text beginning so."""
        first = self.parts[0] if self.parts else None
        return (
            self.role == role
            and first is not None
            and not first.plain
            and first.kind in ("text", "thought")
            and first.text.lstrip().startswith(openings)
        )


class Compression(msgspec.Struct, frozen=True, gc=False):
    """A ``chat_compression``'s ``info``: its trigger (``CTXTOP_TRIGGER`` for one ctxtop
    wrote, ``ours``) and figures."""

    trigger: str
    pre_tokens: int | None
    post_tokens: int | None  # None for ctxtop's: its "after" is the fork mark's
    post_source: Literal["estimate", "logged"]
    ours: bool


class ApiResponse(Counts, frozen=True, gc=False):
    """A ``ui_telemetry`` record's ``api_response`` event: one model call, its counts, and
    ``key``: its response id (the record's uuid when it has none)."""

    key: str
    model: str | None
    subagent: bool  # a sub-agent's call (read from its own transcript)


class QwenEntry(msgspec.Struct, frozen=True, gc=False):
    """One line of a recording: the record as written (``record``) and what it is."""

    record: Any
    kind: Kind
    type: str | None = None  # the record's type when it is text
    uuid: str | None = None  # when it is text
    parent: str | None = None  # parentUuid, when it is text
    timestamp: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    version: str | None = None
    subtype: str | None = None  # when it is text
    system_type: str = ""  # "system/<subtype>" on a system record: its name in the figures
    ignored: bool = False  # a system subtype that carries nothing the model sees
    message: Content | None = None  # any ``message`` object
    unsent: bool = False  # a realtime message: the model is not sent its ``message``
    failed_call: str | None = None  # the call its ``toolCallResult`` says failed (with a message)
    title: str | None = None
    model: str | None = None
    context_window: int | None = None  # ``contextWindowSize``
    usage_metadata: bool = False  # the record has ``usageMetadata``
    counts: Counts | None = None  # its figures, when ``usageMetadata`` is an object
    usage_logged: bool = False  # it holds a figure at all (an empty one is no call)
    has_payload: bool = False  # ``systemPayload`` is an object (on a record with a subtype)
    compression: Compression | None = None  # a ``chat_compression`` with its ``info``
    compressed: tuple[Content, ...] | None = None  # its ``compressedHistory`` objects
    event: ApiResponse | None = None
    ours: bool = False  # marked as ctxtop's compression (``COMPACTION_KEY``)

    @property
    def sent(self) -> Content | None:
        """The message the model is sent, if any."""
        return None if self.unsent else self.message


def _name(raw: dict[str, Any]) -> str:
    found = raw.get("name")
    return found if type(found) is str and found else str(found or "unknown")


def _call(raw: dict[str, Any]) -> Call:
    found = raw.get("id")
    if type(found) is str:
        return Call(found, found, bool(found), _name(raw), raw.get("args"))
    text = str(found)
    return Call(text, text if found else "", False, _name(raw), raw.get("args"))


def _result(raw: dict[str, Any]) -> Result:
    found, response = raw.get("id"), raw.get("response")
    text = found if type(found) is str else str(found)
    if type(response) is dict:
        output = response.get("output")
        said = output if type(output) is str else response_text(response)
        error = "error" in response
        failed = error and "output" not in response
    else:
        said, error, failed = response_text(response), False, False
    return Result(text, text if found else "", _name(raw), said, error, failed)


def _part(raw: Any) -> Part:
    if type(raw) is not dict:
        if type(raw) is str:
            return Part(raw, "text", raw, None, None, True)
        return Part(raw, "none")
    text = raw.get("text")
    if type(text) is str and len(raw) == 1:  # (the usual text part, with nothing more)
        return Part(raw, "text", text)
    call, result = raw.get("functionCall"), raw.get("functionResponse")
    typed_call = _call(call) if type(call) is dict else None
    typed_result = _result(result) if type(result) is dict else None
    if type(text) is str:
        kind: PartKind = "thought" if raw.get("thought") else "text"
        return Part(raw, kind, text, typed_call, typed_result)
    if typed_call is not None:
        return Part(raw, "call", "", typed_call, typed_result)
    if typed_result is not None:
        return Part(raw, "result", typed_result.text, None, typed_result)
    if "inlineData" in raw or "fileData" in raw:
        return Part(raw, "image")
    return Part(raw, "other")


def content(raw: dict[str, Any], at: int = 0) -> Content:
    """A ``Content`` object typed (its ``parts``: a list, or one text)."""
    parts = raw.get("parts")
    if type(parts) is list:
        typed = (_part(parts[0]),) if len(parts) == 1 else tuple(map(_part, parts))
    elif type(parts) is str and parts:
        typed = (Part(parts, "text", parts, None, None, True),)
    else:
        typed = ()
    return Content(raw, raw.get("role"), typed, at)


def _compression(info: dict[str, Any], ours: bool) -> Compression:
    reason = info.get("triggerReason")
    trigger = _TRIGGERS.get(reason) if isinstance(reason, str) else None
    return Compression(
        CTXTOP_TRIGGER if ours else trigger or str(reason or "unknown"),
        token_count(info.get("originalTokenCount")),
        None if ours else token_count(info.get("newTokenCount")),
        "estimate" if info.get("newTokenCountIsEstimated", True) else "logged",
        ours,
    )


def _event(event: dict[str, Any], uuid: str | None) -> ApiResponse:
    found = event.get("response_id")
    model = event.get("model")
    return ApiResponse(
        _count(event, "input_token_count"),
        _count(event, "cached_content_token_count"),
        _count(event, "output_token_count"),
        _count(event, "thoughts_token_count"),
        _count(event, "total_token_count"),
        found if isinstance(found, str) else str(uuid),
        model if isinstance(model, str) else None,
        event.get("subagent_name") is not None,
    )


def entry(record: Any, line: int) -> QwenEntry:
    """What the decoded line ``record`` (any JSON value; ``line``: its 1-based number) is."""
    # (once per line of the live and cold reads: plain locals, one construction)
    if type(record) is not dict:
        return QwenEntry(record, "bad_shape")
    get = record.get
    kind_of, uuid, parent, subtype = get("type"), get("uuid"), get("parentUuid"), get("subtype")
    if type(uuid) is not str:
        uuid = None
    if type(subtype) is not str:
        subtype, raw_subtype = None, subtype
    else:
        raw_subtype = subtype
    raw_message = get("message")
    message = content(raw_message) if type(raw_message) is dict else None
    unsent = subtype == UNSENT
    kind: Kind
    if kind_of not in RECORD_TYPES:
        kind = "unknown_type"
    elif uuid is None or not (parent is None or type(parent) is str):
        kind = "unlinked"
    elif message is not None and not unsent:
        kind = "message"
    else:
        kind = "step"
    system_type, ignored, title = "", False, None
    has_payload, compression, compressed, event, ours = False, None, None, None, False
    payload = get("systemPayload") if raw_subtype is not None else None  # (none without one)
    if kind_of == "system":
        system_type = f"system/{raw_subtype}"
        ignored = subtype in IGNORED_SUBTYPES
        if subtype == TITLE and (kind == "message" or kind == "step"):
            kind = "title"
            found = payload.get("customTitle") if type(payload) is dict else None
            title = found if type(found) is str else None
    if type(payload) is dict:
        has_payload = True
        if subtype == "ui_telemetry":
            raw_event = payload.get("uiEvent")
            if type(raw_event) is dict and raw_event.get("event.name") == API_RESPONSE:
                event = _event(raw_event, uuid)
        elif subtype == COMPRESSION:
            if kind_of == "system" and (kind == "message" or kind == "step"):
                kind = "compression"
            info = payload.get("info")
            ours = get(COMPACTION_KEY) == CTXTOP_TRIGGER
            if type(info) is dict:
                compression = _compression(info, ours)
            history = payload.get("compressedHistory")
            if type(history) is list:
                compressed = tuple(
                    content(item, at) for at, item in enumerate(history) if type(item) is dict
                )
    model, window, usage_metadata, counts, usage_logged = None, None, False, None, False
    if kind_of == "assistant":
        window = token_count(get("contextWindowSize"))
        model = get("model")
        if type(model) is not str:
            model = None
        raw_usage = get("usageMetadata")
        if raw_usage is not None:
            usage_metadata = True
            if type(raw_usage) is dict:
                counts = Counts(
                    _count(raw_usage, "promptTokenCount"),
                    _count(raw_usage, "cachedContentTokenCount"),
                    _count(raw_usage, "candidatesTokenCount"),
                    _count(raw_usage, "thoughtsTokenCount"),
                    _count(raw_usage, "totalTokenCount"),
                )
                usage_logged = logs_tokens(raw_usage, USAGE_KEYS)
    failed_call = None
    result = get("toolCallResult") if message is not None else None  # (read with a message)
    if type(result) is dict and result.get("status") == "error":
        failed_call = str(result.get("callId"))
    timestamp, session_id, cwd, version = (
        get("timestamp"),
        get("sessionId"),
        get("cwd"),
        get("version"),
    )
    return QwenEntry(
        record,
        kind,
        kind_of if type(kind_of) is str else None,
        uuid,
        parent if type(parent) is str else None,
        timestamp if type(timestamp) is str else None,
        session_id if type(session_id) is str else None,
        cwd if type(cwd) is str else None,
        version if type(version) is str else None,
        subtype,
        system_type,
        ignored,
        message,
        unsent,
        failed_call,
        title,
        model,
        window,
        usage_metadata,
        counts,
        usage_logged,
        has_payload,
        compression,
        compressed,
        event,
        ours,
    )
