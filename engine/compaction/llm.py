"""The ``llm`` summariser: the 8-section hand-off written by a model, through an OpenAI-compatible
Chat Completions endpoint or the Anthropic Messages API (standard library HTTP only).

"full" mode sends the conversation as native messages with the session's tools (tool choice
none); if that fails, "simple" mode sends it as one text without tools. The reply must hold a
``<summary>`` block within the budget; any failure raises ``LLMFailure`` and the caller falls
back to the structured summary. The API key is read from the environment and never logged,
written, or put into an error message.

The exchange runs in a worker thread so that the caller can give up at any time: at the
timeout (for the whole reply, however slowly it drips in), or when ``cancel`` is set (the
dashboard's cancel key). A failure of the endpoint itself (refused, TLS, 429, timeout,
cancelled, not HTTP) is ``EndpointFailure``: the simple mode is not tried against it.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxtop.engine.compaction.items import Cut
from ctxtop.engine.compaction.prompt import (
    INSTRUCTION,
    anthropic_messages,
    openai_messages,
    system_prompt,
    tool_names,
    transcript,
)
from ctxtop.engine.compaction.structured import TITLES, earlier_transcript, pointer_line
from ctxtop.engine.config import LLMSettings, config_path, url_problem
from ctxtop.engine.editing.writer import encoded
from ctxtop.engine.models.registry import lookup as model_info
from ctxtop.engine.safety.secrets import SecretMasker
from ctxtop.engine.safety.terminal import without_controls

Count = Callable[[str], int]
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
DEFAULT_KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
ANTHROPIC_VERSION = "2023-06-01"
MAX_OUTPUT = 32_000
PROMPT_RESERVE = 8_000  # tokens for the system prompt, the tools and the instruction
CHARS_PER_TOKEN = 3  # a cautious estimate (code and logs tokenize densely)
_SUMMARY = re.compile(r"<summary>(.*?)(?:</summary>|$)", re.DOTALL)
MAX_REPLY_BYTES = 16 << 20  # a summary reply is a few KB; an endless one must not fill memory
READ_BYTES = 64 << 10
POLL_SECONDS = 0.05  # how often the waiting caller looks at the cancel event and the clock


class LLMFailure(Exception):
    """The model did not give a usable summary (the message says why, without the key)."""


class EndpointFailure(LLMFailure):
    """The endpoint itself failed (unreachable, TLS, rate limit, timeout, cancelled): asking
    again in another mode would fail the same way."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    protocol: str
    base_url: str
    model: str
    key: str | None
    timeout: float

    def url(self) -> str:
        base = self.base_url.rstrip("/")
        if self.protocol == "anthropic":
            return base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        return base + "/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.protocol == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
            if self.key:
                headers["x-api-key"] = self.key
        elif self.key:
            headers["authorization"] = f"Bearer {self.key}"
        return headers


def endpoint(settings: LLMSettings, env: Mapping[str, str]) -> Endpoint:
    """The settings' ``llm:`` block, with ``CTXTOP_LLM_*`` variables over it."""
    protocol = env.get("CTXTOP_LLM_PROTOCOL") or settings.protocol
    if protocol not in DEFAULT_URLS:
        raise LLMFailure(f"unknown protocol {protocol!r} (openai or anthropic)")
    model = (
        env.get("CTXTOP_LLM_SUMMARY_MODEL")
        or settings.summary_model
        or env.get("CTXTOP_LLM_MODEL")
        or settings.model
    )
    if not model:
        raise LLMFailure(
            "no model set, there is no default: add `model: NAME` under `llm:` in "
            f"{config_path()} (ctxtop config --init writes the file), or set CTXTOP_LLM_MODEL"
        )
    base_url = env.get("CTXTOP_LLM_BASE_URL") or settings.base_url or DEFAULT_URLS[protocol]
    if problem := url_problem(base_url):  # CTXTOP_LLM_BASE_URL is checked only here
        raise LLMFailure(f"the llm base_url {problem}")
    key_variable = settings.api_key_env or DEFAULT_KEYS[protocol]
    return Endpoint(protocol, base_url, model, env.get(key_variable) or None, settings.timeout)


def _scrub(text: str, key: str | None) -> str:
    # The key goes before the text is shortened: a cut inside it would leave a prefix behind.
    text = text.replace(key, "[key]") if key else text
    return " ".join(text.split())[:200]


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """urllib follows 301/302/303 with the request's headers, the API key among them, to any
    host the reply names; an API endpoint has no reason to redirect, so none is followed."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        where = " ".join(newurl.split())[:200]
        raise EndpointFailure(
            f"{req.full_url} redirects (HTTP {code}) to {where}: not followed, so that the key "
            "goes nowhere else; set llm.base_url to the endpoint itself"
        )


_OPENER = urllib.request.build_opener(_NoRedirects)


def _read_reply(request: urllib.request.Request, point: Endpoint, stop: threading.Event) -> bytes:
    """The reply's body, read a piece at a time (``stop`` ends the read between pieces)."""
    with _OPENER.open(request, timeout=point.timeout) as response:
        chunks: list[bytes] = []
        size = 0
        while not stop.is_set():
            chunk = response.read1(READ_BYTES)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise EndpointFailure(
                    f"the reply from {point.url()} is over {MAX_REPLY_BYTES >> 20} MB"
                )
            chunks.append(chunk)
    return b""


def _failure(error: BaseException, point: Endpoint) -> LLMFailure:
    """What went wrong in the exchange, said for a person (and without the key)."""
    url = point.url()
    if isinstance(error, LLMFailure):
        return error
    if isinstance(error, urllib.error.HTTPError):
        detail = error.read().decode("utf-8", "replace") if error.fp else ""
        if error.code == 429:
            wait = error.headers.get("retry-after") if error.headers else None
            after = f"; retry after {_scrub(wait, point.key)} s" if wait else ""
            return EndpointFailure(f"rate limited (HTTP 429) by {url}{after}")
        return LLMFailure(f"HTTP {error.code} from {url}: {_scrub(detail, point.key)}")
    reason = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(reason, TimeoutError):
        return EndpointFailure(f"no answer from {url} within {point.timeout:g} s")
    if isinstance(reason, ssl.SSLError):
        return EndpointFailure(
            f"TLS with {url} failed ({_scrub(str(reason), point.key)}); "
            "does the server speak https?"
        )
    if isinstance(reason, ConnectionRefusedError):
        return EndpointFailure(f"cannot reach {url}: connection refused")
    if isinstance(reason, http.client.BadStatusLine):
        return EndpointFailure(f"{url} sent something that is not an HTTP reply")
    if isinstance(reason, http.client.HTTPException):
        return EndpointFailure(f"the reply from {url} broke off ({type(reason).__name__})")
    if isinstance(reason, OSError):
        return EndpointFailure(f"cannot reach {url}: {_scrub(str(reason), point.key)}")
    return EndpointFailure(f"the exchange with {url} failed ({type(reason).__name__})")


def post(point: Endpoint, body: dict[str, Any], cancel: threading.Event | None = None) -> Any:
    """Send ``body``; the decoded JSON reply. Gives up at ``point.timeout`` for the whole
    exchange, or as soon as ``cancel`` is set."""
    data = encoded(body)
    request = urllib.request.Request(point.url(), data, point.headers(), method="POST")
    stop = threading.Event()
    result: dict[str, Any] = {}

    def exchange() -> None:
        try:
            result["raw"] = _read_reply(request, point, stop)
        except Exception as error:  # reported by the waiting caller
            result["error"] = error

    worker = threading.Thread(target=exchange, name="ctxtop-llm", daemon=True)
    deadline = time.monotonic() + point.timeout
    worker.start()
    try:
        while worker.is_alive():
            if cancel is not None and cancel.is_set():
                raise EndpointFailure("cancelled")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EndpointFailure(f"no answer from {point.url()} within {point.timeout:g} s")
            worker.join(min(POLL_SECONDS, remaining))
    finally:
        stop.set()  # an abandoned worker ends at its next read (or the socket timeout)
    if "error" in result:
        raise _failure(result["error"], point)
    try:
        return json.loads(result["raw"])
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise LLMFailure(f"the reply from {point.url()} is not JSON") from None


def prompt_limit(model: str, budget: int) -> int:
    """Characters of conversation the summarising model can take: its window (from the model
    registry) less the summary, the analysis and the instructions, at 3 characters a token."""
    window = model_info(model).context_window
    return max(window - 2 * budget - PROMPT_RESERVE, 1000) * CHARS_PER_TOKEN


def request_body(point: Endpoint, cut: Cut, mode: str, budget: int) -> dict[str, Any]:
    system = system_prompt(budget)
    names = tool_names(cut) if mode == "full" else []
    limit = prompt_limit(point.model, budget)
    simple = [{"role": "user", "content": f"{transcript(cut, limit)}\n\n{INSTRUCTION}"}]
    if point.protocol == "anthropic":
        messages = anthropic_messages(cut, limit) if mode == "full" else simple
        body: dict[str, Any] = {
            "model": point.model,
            "max_tokens": min(budget * 2 + 4096, MAX_OUTPUT),
            "temperature": 0,
            "system": system,
            "messages": messages,
        }
        if names:
            body["tools"] = [
                {"name": name, "description": f"The agent's {name} tool.",
                 "input_schema": {"type": "object", "properties": {}}}
                for name in names
            ]  # fmt: skip
            body["tool_choice"] = {"type": "none"}
        return body
    chat = openai_messages(cut, limit) if mode == "full" else simple
    body = {
        "model": point.model,
        "temperature": 0,
        "messages": [{"role": "system", "content": system}, *chat],
    }
    if names:
        body["tools"] = [
            {"type": "function", "function": {"name": name,
             "description": f"The agent's {name} tool.",
             "parameters": {"type": "object", "properties": {}}}}
            for name in names
        ]  # fmt: skip
        body["tool_choice"] = "none"
    return body


def reply_text(protocol: str, reply: Any) -> str:
    """The text of a Chat Completions or Messages reply."""
    try:
        if protocol == "anthropic":
            return "".join(
                block["text"] for block in reply["content"] if block.get("type") == "text"
            )
        content = reply["choices"][0]["message"]["content"]
        if isinstance(content, list):
            return "".join(str(part.get("text", "")) for part in content)
        return str(content or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise LLMFailure("the reply has no message text") from None


def extract_summary(text: str) -> str:
    """The reply's one ``<summary>`` block, control characters removed. It goes into the agent's
    context as ctxtop's own text: a reply with several blocks (one may be text the model quoted
    from the log) is not used."""
    found = _SUMMARY.findall(text)
    if len(found) > 1:
        raise LLMFailure(f"the reply has {len(found)} <summary> blocks, not one")
    summary = without_controls(found[0]).strip() if found else ""
    if not summary:
        raise LLMFailure("the reply has no <summary> block")
    return summary


def check_sections(summary: str) -> None:
    """``LLMFailure`` unless the summary has every section of the hand-off note."""
    missing = [title for title in TITLES if title.lower() not in summary.lower()]
    if missing:
        raise LLMFailure(f"the summary lacks the section(s) {', '.join(missing)}")


def llm_summary(
    cut: Cut,
    budget: int,
    count: Count,
    source: str,
    cwd: str | None = None,
    model: str | None = None,
    *,
    settings: LLMSettings,
    env: Mapping[str, str] | None = None,
    cancel: threading.Event | None = None,
    masker: SecretMasker | None = None,
) -> str:
    """The model's summary (ending with the transcript pointer), or ``LLMFailure``.
    ``cancel``: set it (from any thread) to stop waiting; the failure then says "cancelled".
    Every string of the request goes through ``masker`` (secret shapes and the endpoint's own
    key masked); its count is that of the last request sent."""
    point = endpoint(settings, os.environ if env is None else env)
    masker = masker if masker is not None else SecretMasker()
    masker.exact = (point.key,) if point.key else ()
    counted = masker.count
    pointer = pointer_line(source, earlier_transcript(cut.previous_summary))
    room = budget - count(pointer) - 2
    if room <= 0:
        raise LLMFailure(f"a budget of {budget} tokens leaves no room for a summary")
    failures: list[str] = []
    for mode in ("full", "simple"):
        try:
            masker.count = counted  # both modes send the same conversation: count it once
            body = masker.mask_json(request_body(point, cut, mode, room))
            reply = post(point, body, cancel)
            summary = extract_summary(reply_text(point.protocol, reply))
            size = count(summary)
            if size > room:
                raise LLMFailure(f"the summary has {size} tokens, over the budget of {room}")
            check_sections(summary)
            return f"{summary}\n\n{pointer}"
        except EndpointFailure as failure:
            failures.append(f"{mode} mode: {failure}")
            break  # the other mode would meet the same endpoint
        except LLMFailure as failure:
            failures.append(f"{mode} mode: {failure}")
    raise LLMFailure("; ".join(failures))
