"""One wall-clock deadline per HTTP exchange: connect, status line, headers and body.

A socket's read timeout is reset by every byte, so a server that answers ``HTTP/1.1 200 O`` and then
one byte a second never trips it. An :class:`Exchange` is a watchdog instead: the connections used
while it is current (``with exchange:`` in the thread that sends) are noted as they connect and send,
and when the deadline passes (or :func:`cancel_all` is called: the scheduler abandoned the job) their
sockets are shut down. Whatever the client was waiting for then fails at once, and
:attr:`Exchange.fired` tells the caller that the deadline, not the server, ended it.

A job that may be abandoned (the scheduler's nightly run) runs under a :class:`Job` (``job.run(fn)``;
threads it starts carry it along when started in a copy of its context, as the refresh starts its
providers): :meth:`Job.abandon` cuts the job's exchanges going on and refuses those it starts later,
and nothing else in the process is touched.

:func:`mount` puts the connection classes that report to the current exchange under a
``requests.Session`` (both schemes; other pools are left alone).
"""

from __future__ import annotations

import contextlib
import contextvars
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import requests
import urllib3.connection
import urllib3.connectionpool

_current = threading.local()
_live: set[Exchange] = set()
_live_lock = threading.Lock()
T = TypeVar("T")


class Job:
    """One run that may be abandoned: the exchanges made under it (``run``) can be cut together."""

    def __init__(self) -> None:
        self.abandoned = False

    def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` with this job current (in this thread, and in threads started in a copy of its
        context)."""
        token = _job.set(self)
        try:
            return fn()
        finally:
            _job.reset(token)

    def abandon(self) -> int:
        """Cut every exchange of this job going on now and refuse any it starts later; returns how many
        were cut."""
        self.abandoned = True
        with _live_lock:
            live = [e for e in _live if e.job is self]
        for exchange in live:
            exchange.fire(cancelled=True)
        return len(live)


_job: contextvars.ContextVar[Job | None] = contextvars.ContextVar("planner_job", default=None)


class Exchange:
    """A deadline of ``deadline_s`` seconds from now over everything one request does."""

    def __init__(self, deadline_s: float, clock: Any = time.monotonic):
        self.deadline_s = deadline_s
        self.job = _job.get()
        self._clock = clock
        self.ends = clock() + deadline_s
        self.fired = False
        self.cancelled = False
        self._connections: list[Any] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def left_s(self) -> float:
        return max(0.0, self.ends - self._clock())

    def watch(self, connection: Any) -> None:
        """Note a connection this exchange uses; one seen after the deadline is cut at once."""
        with self._lock:
            self._connections.append(connection)
            fired = self.fired
        if fired:
            _shut(connection)

    def fire(self, cancelled: bool = False) -> None:
        """The deadline passed (or the job was abandoned): shut every socket this exchange used."""
        with self._lock:
            if self.fired:
                return
            self.fired, self.cancelled = True, cancelled
            connections = list(self._connections)
        for connection in connections:
            _shut(connection)

    def __enter__(self) -> Exchange:
        if self.job is not None and self.job.abandoned:
            self.fire(cancelled=True)
        self._timer = threading.Timer(self.left_s(), self.fire)
        self._timer.daemon = True
        self._timer.start()
        _current.exchange = self
        with _live_lock:
            _live.add(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        _current.exchange = None
        with _live_lock:
            _live.discard(self)

    def __hash__(self) -> int:
        return id(self)


def _shut(connection: Any) -> None:
    # A socket, or a connection whose socket may still be coming (a TLS handshake under way).
    sock = connection if isinstance(connection, socket.socket) else getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _note(connection: Any) -> None:
    exchange = getattr(_current, "exchange", None)
    if exchange is not None:
        exchange.watch(connection)
        sock = getattr(connection, "sock", None)
        if sock is not None:
            # The socket itself too: http.client lets go of a connection's socket once an answer
            # without a length starts (the response reads it to the end), so ``connection.sock`` is
            # None by the time a dripping body needs cutting.
            exchange.watch(sock)


class _Watched:
    """A urllib3 connection that reports itself to the current exchange when it connects (before:
    the TLS handshake is cut too; after: its socket) and on every request (a kept-alive one too)."""

    def connect(self) -> None:
        _note(self)
        super().connect()  # type: ignore[misc]
        _note(self)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _note(self)
        super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_Watched, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_Watched, urllib3.connection.HTTPSConnection):
    pass


class _HTTPPool(urllib3.connectionpool.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class _Adapter(requests.adapters.HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


def mount(session: requests.Session) -> None:
    """Make every http and https request of ``session`` report its connections to the current
    exchange. An adapter a caller mounted itself (a test's transport) is left in place."""
    adapter = _Adapter()
    for prefix in ("http://", "https://"):
        if type(session.get_adapter(prefix)) is requests.adapters.HTTPAdapter:
            session.mount(prefix, adapter)
