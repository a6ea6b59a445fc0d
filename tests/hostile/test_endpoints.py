"""The summarising endpoint misbehaves: refused, dripping, cut short, not HTTP, TLS spoken to a
plain port, 429 with Retry-After, an endless reply, the key echoed back, and the user cancelling
from another thread. Each ends in a clear warning and the structured summary, the compacted
session written, and the key nowhere in what ctxtop prints or writes."""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cli_run import ROOT
from raw_server import (
    RawServer,
    cut_short,
    drip,
    echo_key,
    huge,
    not_http,
    recording,
    redirect_to,
    refused_port,
    too_many_requests,
)

from ctxtop.engine.config import LLMSettings
from ctxtop.engine.editing import action_log
from ctxtop.engine.forks.compact import compact_session

sys.path.insert(0, str(ROOT / "tests/compaction"))
from llm_server import SummaryServer

SAMPLE = (
    ROOT / "tests/sessions/data/generated/claude-code/calc-main/"
    "e6da809c-ea6a-48e8-8ca6-02bf23adae92.jsonl"
)
KEY = "sk-hostile-endpoint-key-0123456789abcdef"
KEY_VARIABLE = "CTXTOP_HOSTILE_LLM_KEY"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    for name in ("BASE_URL", "MODEL", "SUMMARY_MODEL", "PROTOCOL"):
        monkeypatch.delenv(f"CTXTOP_LLM_{name}", raising=False)


def llm(url: str, protocol: str = "openai", timeout: float = 5.0) -> LLMSettings:
    return LLMSettings(
        base_url=url,
        model="cheap-model",
        api_key_env=KEY_VARIABLE,
        protocol=protocol,
        timeout=timeout,
    )


def compact_with(
    tmp_path: Path, settings: LLMSettings, cancel: threading.Event | None = None
) -> dict[str, Any]:
    """compact_session in a thread: a hang fails the test instead of stalling the suite."""
    source = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, source)
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["outcome"] = compact_session(
                source, summarizer="llm", keep_rounds=1, llm=settings, cancel=cancel
            ).as_json()
        except BaseException as error:
            result["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "compact_session hung"
    if "error" in result:
        raise result["error"]
    outcome: dict[str, Any] = result["outcome"]
    assert outcome["summarizer"] == "structured"
    assert outcome["fork"] and Path(outcome["fork"]).is_file()
    assert KEY not in json.dumps(outcome)
    assert KEY not in Path(outcome["fork"]).read_text("utf-8")
    assert KEY not in action_log.log_path().read_text("utf-8")
    [warning] = outcome["warnings"]
    assert warning.startswith("LLM summary failed") and "structured summary instead" in warning
    return outcome


def warning_of(outcome: dict[str, Any]) -> str:
    return str(outcome["warnings"][0])


def test_connection_refused(tmp_path: Path) -> None:
    outcome = compact_with(tmp_path, llm(f"http://127.0.0.1:{refused_port()}/v1"))
    assert "connection refused" in warning_of(outcome).lower()
    # The simple mode would meet the same closed port: it is not tried.
    assert "simple mode" not in warning_of(outcome)


def test_a_slow_drip_reply_ends_at_the_timeout(tmp_path: Path) -> None:
    with RawServer(drip) as server:
        outcome = compact_with(tmp_path, llm(server.url + "/v1", timeout=1.0))
    assert "within 1 s" in warning_of(outcome)


def test_a_reply_cut_short(tmp_path: Path) -> None:
    with RawServer(cut_short) as server:
        outcome = compact_with(tmp_path, llm(server.url + "/v1"))
    assert "reply" in warning_of(outcome) and server.url in warning_of(outcome)


def test_a_server_that_does_not_speak_http(tmp_path: Path) -> None:
    with RawServer(not_http) as server:
        outcome = compact_with(tmp_path, llm(server.url + "/v1"))
    assert "not an HTTP reply" in warning_of(outcome)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_tls_spoken_to_a_plain_http_port(tmp_path: Path, protocol: str) -> None:
    with SummaryServer("good") as server:
        url = server.url.replace("http://", "https://")
        outcome = compact_with(tmp_path, llm(url, protocol))
    assert "TLS" in warning_of(outcome) and "https://" in warning_of(outcome)


def test_429_with_retry_after(tmp_path: Path) -> None:
    with RawServer(too_many_requests) as server:
        outcome = compact_with(tmp_path, llm(server.url + "/v1"))
        connections = server.connections
    assert "rate limited (HTTP 429)" in warning_of(outcome)
    assert "retry after 30 s" in warning_of(outcome)
    assert connections == 1  # asking again at once would only be refused again


def test_an_endless_reply_is_cut_at_the_size_limit(tmp_path: Path) -> None:
    with RawServer(huge) as server:
        outcome = compact_with(tmp_path, llm(server.url + "/v1", timeout=30))
    assert "over 16 MB" in warning_of(outcome)


@pytest.mark.parametrize(
    ("protocol", "header"), [("openai", b"authorization"), ("anthropic", b"x-api-key")]
)
def test_the_key_echoed_in_an_error_is_not_shown(
    tmp_path: Path, protocol: str, header: bytes
) -> None:
    with RawServer(echo_key(header)) as server:
        outcome = compact_with(tmp_path, llm(server.url, protocol))
    text = warning_of(outcome)
    assert "HTTP 401" in text
    # Not even a prefix of it: error texts are shortened, and the cut may fall inside the key.
    assert not any(KEY[:n] in text for n in range(8, len(KEY) + 1))


def test_cancelled_from_another_thread(tmp_path: Path) -> None:
    cancel = threading.Event()
    with SummaryServer("slow", delay=30) as server:
        timer = threading.Timer(0.5, cancel.set)
        timer.start()
        started = time.monotonic()
        outcome = compact_with(tmp_path, llm(server.url + "/v1", timeout=60), cancel=cancel)
        waited = time.monotonic() - started
        timer.cancel()
    assert "cancelled" in warning_of(outcome)
    assert waited < 20  # a hang check (the server would answer after 30 s), not a speed target


@pytest.mark.parametrize("status", [302, 307])
@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_redirect_to_another_host_gets_no_key(tmp_path: Path, protocol: str, status: int) -> None:
    """The endpoint redirects to another server: following it would hand that server the API
    key (urllib keeps the authorization headers on a redirect). It is not followed."""
    seen: list[bytes] = []
    with RawServer(recording(seen)) as elsewhere:
        target = elsewhere.url + "/v1/chat/completions"
        with RawServer(redirect_to(target, status)) as server:
            outcome = compact_with(tmp_path, llm(server.url + "/v1", protocol))
    assert seen == []
    assert "redirect" in warning_of(outcome) and "not followed" in warning_of(outcome)


@pytest.mark.parametrize("url", ["file:///etc/hostname", "ftp://127.0.0.1/v1", "data:,{}"])
def test_only_http_endpoints_are_asked(tmp_path: Path, url: str) -> None:
    """urllib opens file:, ftp: and data: URLs too: a local file must never become the reply."""
    outcome = compact_with(tmp_path, llm(url))
    assert "must be an http:// or https:// URL" in warning_of(outcome)
