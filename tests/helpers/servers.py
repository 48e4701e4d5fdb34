"""Loopback HTTP servers: a fixed answer, or a provider's recording with a fault applied."""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

from scrapers.base import ScrapeError
from scrapers.recording import Replayer
from tests.helpers.replay import RAW


@contextlib.contextmanager
def http_server(body: bytes, headers: dict[str, str]) -> Iterator[str]:
    """A loopback HTTP server answering every GET and POST with ``body``; yields its base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)
        protocol_version = "HTTP/1.1"

        def answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            with contextlib.suppress(OSError):  # the client hangs up once it has seen enough
                self.wfile.write(body)

        do_GET = do_POST = answer

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


READ_TIMEOUT_S = 0.4
LOGIN_PAGE = b"<!DOCTYPE html><html><head><title>Log in</title></head><body><form>...</form></body></html>"


def _hosts(provider: str) -> list[str]:
    from urllib.parse import urlsplit

    urls = [json.loads(p.read_text(encoding="utf-8"))["url"] for p in sorted((RAW / provider).glob("*.json"))]
    return list(dict.fromkeys(urlsplit(u).netloc for u in urls))


class FaultServer:
    """A loopback HTTP server answering as ``provider`` did in the recording, with ``fault`` applied.

    ``fault`` names what to do instead of the recorded answer; ``first`` limits it to the first N
    requests (None: every request). ``log`` keeps (monotonic time, method, path, what was done).
    """

    def __init__(
        self,
        provider: str,
        fault: str | None = None,
        first: int | None = None,
        retry_after: str = "0",
        delay_s: float = 0.0,
    ):
        self.provider, self.fault, self.first, self.retry_after = provider, fault, first, retry_after
        self.delay_s = delay_s  # for the "slow" fault: answer correctly, this much later
        if fault == "gzipbomb":
            gzip_bomb()  # made now: made inside an answer, it would take longer than the read timeout
        self.hosts = _hosts(provider)
        self.replayer = Replayer(RAW / provider)
        self.log: list[tuple[float, str, str, str]] = []
        self._lock = threading.Lock()
        self._count = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                owner._answer(self, b"")

            def do_POST(self) -> None:
                owner._answer(self, self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def log_message(self, *args: Any) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up on a hanging answer is expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def recorded(self, method: str, path: str, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        for host in self.hosts:
            try:
                resp = self.replayer.serve(method, f"https://{host}{path}", body)
            except ScrapeError:
                continue
            return resp.status, resp.content, dict(resp.headers)
        return 404, b"<html>404 Not Found</html>", {"Content-Type": "text/html"}

    def _answer(self, handler: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        path = handler.path
        if path.startswith("/login"):
            self._send(handler, 200, LOGIN_PAGE, {"Content-Type": "text/html"})
            return
        with self._lock:
            self._count += 1
            faulty = self.fault is not None and (self.first is None or self._count <= self.first)
        action = self.fault if faulty else "answer"
        self.log.append((time.monotonic(), handler.command, path, action))
        status, content, headers = self.recorded(handler.command, path, body)
        if action == "slow":
            time.sleep(self.delay_s)
            action = "answer"
        if action == "answer":
            self._send(handler, status, content, headers)
        elif action == "timeout":
            time.sleep(READ_TIMEOUT_S * 4)  # the client has given up by now
            handler.close_connection = True
        elif action == "reset":
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(content)))
            handler.end_headers()
            handler.wfile.write(content[: len(content) // 2])
            handler.wfile.flush()
            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            handler.connection.close()  # RST, mid-body
            handler.close_connection = True
        elif action == "429":
            self._send(handler, 429, b"Too Many Requests", {"Retry-After": self.retry_after})
        elif action in ("500", "503"):
            self._send(handler, int(action), b"<html><body>Internal Server Error</body></html>", {})
        elif action == "redirect":
            self._send(handler, 302, b"", {"Location": "/login?next=" + path.split("?")[0]})
        elif action == "truncated":
            self._send(handler, 200, content[: max(1, len(content) // 3)], headers)
        elif action == "text":
            self._send(
                handler, 200, b"Service temporarily unavailable, please retry", {"Content-Type": "text/plain"}
            )
        elif action == "html":
            self._send(
                handler, 200, LOGIN_PAGE.replace(b"Log in", b"Maintenance"), {"Content-Type": "text/html"}
            )
        elif action == "empty":
            self._send(handler, 200, b"", headers)
        elif action == "gzipbomb":
            self._send(handler, 200, gzip_bomb(), {**headers, "Content-Encoding": "gzip"})
        else:
            raise AssertionError(action)

    @staticmethod
    def _send(
        handler: http.server.BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]
    ) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "date", "server"):
                handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


@functools.cache
def gzip_bomb() -> bytes:
    """128 MB of zeros gzip-compressed to about 130 KB: past the 64 MB cap of a decoded answer."""
    return gzip.compress(bytes(128 * 2**20), compresslevel=9)


@contextlib.contextmanager
def dripping_server(start: bytes = b"HTTP/1.1 200 O", every_s: float = 0.05) -> Iterator[str]:
    """A loopback server that reads a request, sends ``start`` (a status line cut short, by default),
    then one more byte every ``every_s`` for as long as the client listens: each byte arrives well
    inside any read timeout, so only a deadline over the whole exchange ends it. Yields its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    stop = threading.Event()

    def drip(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            conn.sendall(start)
            while not stop.is_set():
                conn.sendall(b"K")
                time.sleep(every_s)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        listener.close()
