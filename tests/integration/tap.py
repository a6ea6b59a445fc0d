"""For the live-mode tests: ctxtop's proxy in front of the model server, and a TCP tap in front
of the proxy that keeps every byte the agent CLI sent, so a test can compare what the CLI sent
with what the model server received (no HTTP parsing: the tap copies bytes)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from ctxtop.engine.proxy.server import ProxyServer, RunningProxy
from ctxtop.engine.proxy.settings import ProxySettings


@contextmanager
def ctxtop_proxy(model_port: int) -> Iterator[RunningProxy]:
    """The proxy on a free port, every API going to the model server on ``model_port``."""
    url = f"http://127.0.0.1:{model_port}"
    settings = ProxySettings(port=0).with_upstreams(anthropic=url, openai=url, gemini=url)
    running = ProxyServer(settings).start_in_thread()
    try:
        yield running
    finally:
        running.stop()


class Tap:
    """Listens on 127.0.0.1:<port>, relays each connection to ``target_port`` and records
    the bytes clients sent (``sent``)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._sent: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def sent(self) -> list[bytes]:
        """The client-to-server bytes of each connection, in the order they were accepted."""
        with self._lock:
            return list(self._sent)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self._lock:
                index = len(self._sent)
                self._sent.append(b"")
            threading.Thread(target=self._copy, args=(client, upstream, index), daemon=True).start()
            threading.Thread(target=self._copy, args=(upstream, client, None), daemon=True).start()

    def _copy(self, source: socket.socket, target: socket.socket, index: int | None) -> None:
        try:
            while data := source.recv(65536):
                if index is not None:
                    with self._lock:
                        self._sent[index] += data
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()
