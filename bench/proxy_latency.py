"""Benchmark of live mode's proxy: the latency it adds to an agent's request.

Starts a streaming model server (aiohttp, its own process) and ``ctxtop proxy`` (its own
process, as a user runs it, measuring every request into a temp data dir), then sends the same
Anthropic Messages request -- a body shaped like Claude Code's (system blocks, 24 tool
schemas, a conversation that grows by one message a request, cache breakpoints) -- alternately
straight to the model server and through the proxy, and prints side by side, p50 and p95:

- per request: from sending the request to the last byte of the streamed answer;
- first streamed byte: from sending the request to the first byte of the answer's body.

The model server answers at once (no think time), so the figures are the plumbing alone.

Usage: python bench/proxy_latency.py [--requests 300] [--events 20] [--history 40]
(``--history 40``: bodies of 0.3-0.8 MB; ``--history 2``: about 100 KB, a session's start)
Target (issue 18): the proxy adds at most 5 ms at p95 (per request and first byte).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_MS = 5.0
SERVER = """
import sys
from aiohttp import web

EVENTS = int(sys.argv[1])

async def messages(request):
    await request.read()
    answer = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await answer.prepare(request)
    await answer.write(b'event: message_start\\ndata: {"type":"message_start","message":'
                       b'{"usage":{"input_tokens":50000,"output_tokens":1}}}\\n\\n')
    for i in range(EVENTS):
        await answer.write(b'event: content_block_delta\\ndata: {"type":"content_block_delta",'
                           b'"delta":{"type":"text_delta","text":"word %d "}}\\n\\n' % i)
    await answer.write(b'event: message_stop\\ndata: {"type":"message_stop"}\\n\\n')
    await answer.write_eof()
    return answer

app = web.Application(client_max_size=64 * 1024 * 1024)
app.router.add_post("/v1/messages", messages)
web.run_app(app, host="127.0.0.1", port=0, print=lambda *a: None, access_log=None,
            handle_signals=True)
"""


def request_body(turn: int, history: int = 40) -> bytes:
    """A Claude Code-sized request at ``turn`` after ``history`` earlier exchanges (the
    history grows, the prefix stays)."""
    tools = [
        {"name": f"Tool{i}", "description": f"tool {i} " * 120,
         "input_schema": {"type": "object", "properties": {"arg": {"type": "string"}}}}
        for i in range(24)
    ]  # fmt: skip
    messages = []
    for i in range(history + turn):
        messages.append({"role": "user", "content": f"question {i} " + "context " * 300})
        messages.append({"role": "assistant", "content": f"answer {i} " + "reply " * 100})
    messages[-1]["content"] = [
        {"type": "text", "text": "last", "cache_control": {"type": "ephemeral"}}
    ]
    body = {
        "model": "claude-sonnet-4-5",
        "stream": True,
        "metadata": {"user_id": json.dumps({"session_id": "bench-session"})},
        "system": [
            {
                "type": "text",
                "text": "You are Claude Code. " * 400,
                "cache_control": {"type": "ephemeral"},
            },
        ],
        "tools": tools,
        "messages": messages,
    }
    return json.dumps(body).encode()


def port_of(process: subprocess.Popen[str], marker: str) -> int:
    assert process.stdout is not None
    for _ in range(20):
        line = process.stdout.readline()
        if marker in line:
            return int(line.split("127.0.0.1:")[1].split()[0].rstrip(")/"))
    raise SystemExit(f"could not start: no {marker!r} line")


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def one(port: int, body: bytes) -> tuple[float, float]:
    """(ms to the last byte, ms to the first body byte) of one streamed request."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.perf_counter()
    headers = {"content-type": "application/json", "x-api-key": "bench"}
    connection.request("POST", "/v1/messages", body=body, headers=headers)
    response = connection.getresponse()
    first = response.read1(65536)
    first_ms = (time.perf_counter() - start) * 1000
    rest = response.read()
    total_ms = (time.perf_counter() - start) * 1000
    connection.close()
    assert response.status == 200 and (first + rest).endswith(b"\n\n"), response.status
    return total_ms, first_ms


def measured_lines(data: Path) -> int:
    return sum(path.read_bytes().count(b"\n") for path in data.rglob("*.jsonl"))


def cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU time of process ``pid`` (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--events", type=int, default=20, help="SSE events per answer")
    parser.add_argument(
        "--history", type=int, default=40, help="exchanges before the first request (size)"
    )
    args = parser.parse_args()
    data = tempfile.mkdtemp(prefix="ctxtop-bench-proxy-")
    server_port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.replace("port=0", f"port={server_port}"), str(args.events)],
    )  # fmt: skip
    env = dict(
        os.environ,
        CTXTOP_DATA_DIR=data,
        CTXTOP_PROXY_PORT="0",
        CTXTOP_PROXY_ANTHROPIC_URL=f"http://127.0.0.1:{server_port}",
    )
    proxy = subprocess.Popen(
        [sys.executable, "-m", "ctxtop", "proxy"], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        proxy_port = port_of(proxy, "ctxtop proxy on")
        for _ in range(100):  # the model server is up when it answers
            try:
                one(server_port, request_body(0))
                break
            except (ConnectionRefusedError, http.client.HTTPException):
                time.sleep(0.1)
        bodies = [request_body(turn, args.history) for turn in range(args.requests)]
        for body in bodies[:10]:  # warm-up: connections, the tokenizer, the count cache
            one(proxy_port, body)
        while measured_lines(Path(data)) < 10:  # the tokenizer loads with the first (~1.5 s)
            time.sleep(0.1)
        direct: list[tuple[float, float]] = []
        proxied: list[tuple[float, float]] = []
        cpu_before = cpu_seconds(proxy.pid)
        for body in bodies:  # alternate, so both see the same background load
            direct.append(one(server_port, body))
            proxied.append(one(proxy_port, body))
        deadline = time.monotonic() + 30  # the last lines are written after the answers
        while measured_lines(Path(data)) < 10 + len(bodies) and time.monotonic() < deadline:
            time.sleep(0.1)
        user, system = (b - a for a, b in zip(cpu_before, cpu_seconds(proxy.pid), strict=True))
        report(direct, proxied, (len(bodies[0]), len(bodies[-1])), Path(data))
        per_request = [value * 1000 / len(bodies) for value in (user + system, user, system)]
        # CPU time is less noisy than wall time on a shared machine; system time is the
        # kernel's copying of the bodies through the sockets.
        print("proxy CPU per request (forwarding and measuring): {:.2f} ms"
              " (user {:.2f} ms, system {:.2f} ms)".format(*per_request))  # fmt: skip
    finally:
        for process in (proxy, server):
            process.terminate()
            process.wait(10)
        shutil.rmtree(data, ignore_errors=True)


def report(
    direct: list[tuple[float, float]],
    proxied: list[tuple[float, float]],
    sizes: tuple[int, int],
    data: Path,
) -> None:
    lines = measured_lines(data)
    print(f"{len(direct)} streamed requests each way, bodies {sizes[0] / 1024:.0f}-"
          f"{sizes[1] / 1024:.0f} KB, "
          f"{lines} measurement lines written; load {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores (figures on a shared machine are noisy)")  # fmt: skip
    print(f"{'':22} {'direct':>9} {'proxied':>9} {'added':>9}   goal")
    for label, index in (("per request", 0), ("first streamed byte", 1)):
        for name, share in (("p50", 0.5), ("p95", 0.95)):
            d = percentile([pair[index] for pair in direct], share)
            p = percentile([pair[index] for pair in proxied], share)
            goal = f"<= {GOAL_MS:.0f} ms" if name == "p95" else ""
            verdict = ("met" if p - d <= GOAL_MS else "MISSED") if goal else ""
            print(
                f"{label + ' ' + name:22} {d:7.2f}ms {p:7.2f}ms {p - d:7.2f}ms   {goal} {verdict}"
            )
    added = sorted(p[0] - d[0] for d, p in zip(direct, proxied, strict=True))
    print(f"per-pair added latency (per request): p50 {percentile(added, 0.5):.2f} ms, "
          f"p95 {percentile(added, 0.95):.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
