"""One polite, recording HTTP client per provider, over one ``requests.Session``.

Every scraper talks HTTP only through :class:`HttpClient`:

- connect/read timeouts (:class:`HttpPolicy`), retries with exponential backoff on connection errors,
  timeouts, 429 (``Retry-After`` honoured, capped) and 5xx; a provider hook may mark more responses as
  retryable (Tencent's ``RequestLimitExceeded`` arrives as HTTP 200);
- an identifying ``User-Agent: planner/<version> (+GPU price planner)``; TLS verification always on,
  passed with every request (so a session whose ``verify`` someone set to False still verifies), and a
  redirect from https to plain http refused (it would drop the verification silently);
- a minimum interval between requests (the provider's polite rate);
- one wall-clock deadline per exchange, ``deadline_s``: connect, status line, headers and body
  (:mod:`scrapers.deadline`), so a server dripping any of them, a byte at a time, ends the attempt
  instead of resetting the read timeout for ever; every body read as it arrives and refused past
  ``max_body_bytes`` decoded (a gzip bomb), so one answer costs bounded memory and time;
- ``follow_redirects``: False for a caller that must not be redirected at all (the webhooks: a 302
  would turn the POST into a GET without its body); a 3xx is then returned, never followed;
- ``base_url``: replaces scheme and host (and prefixes its path, if any) of *every* request, for mirrors,
  proxies and tests. Requests are signed for, recorded and replayed under their *logical* URL (the
  provider's real host), so a folder recorded through a mirror replays without it;
- ``save_raw_dir``: every response (each attempt, errors included) is written to
  ``<dir>/<provider>/<seq>-<method>-<hash>.body`` plus a ``.json`` sidecar (method, logical url, status,
  params, body, match key) with credentials, signatures and tokens removed (:mod:`scrapers.recording`);
- ``from_raw_dir``: serves responses from such a folder, no network, no sleeping.

Every failure surfaces as :class:`~scrapers.base.ScrapeError` naming the URL and status, never a secret.
"""

from __future__ import annotations

import email.utils
import json
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests

from scrapers.base import ScrapeError
from scrapers.deadline import Exchange, mount

# HttpResponse lives beside the recorder that writes and serves it; it is part of this module's face.
from scrapers.recording import (
    MAX_RESPONSE_BYTES,
    HttpResponse,
    Recorder,
    Replayer,
    redact_url,
    scrub_text,
    secret_forms,
)


@dataclass(frozen=True)
class HttpPolicy:
    """Timeouts, retries and politeness for one provider."""

    connect_timeout_s: float = 10.0
    read_timeout_s: float = 60.0
    max_retries: int = 3  # retries after the first attempt
    backoff_base_s: float = 1.0  # 1, 2, 4 ... seconds
    backoff_max_s: float = 30.0
    retry_after_max_s: float = 60.0  # a provider asking for longer gets this much, then we retry
    min_interval_s: float = 0.5  # between the starts of two requests to this provider
    max_body_bytes: int = MAX_RESPONSE_BYTES  # decoded: a gzip bomb stops here, not at the memory's end
    # One exchange, connect to the body's last byte: a server dripping its status line, headers or body
    # stops here (not retried: a server that drips once drips again).
    deadline_s: float = 300.0


class Signer(Protocol):
    """Adds authentication headers for one attempt (called again on each retry: fresh nonce and time)."""

    def __call__(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> dict[str, str]: ...


RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


class TransportError(ScrapeError):
    """No answer could be had: ``cause`` names what happened (``timeout: ...``, ``refused: ...``,
    ``deadline: ...``, ``TLS: ...``) without the URL, for a caller that words its own error."""

    def __init__(self, message: str, cause: str):
        super().__init__(message)
        self.cause = cause


class DeadlinePassed(Exception):
    """The exchange's wall-clock deadline passed (or the job it ran for was abandoned)."""


class HttpStatusError(ScrapeError):
    """The last answer had an error status (4xx, or a retryable one after every retry). The message
    names the URL (redacted) and a scrubbed snippet; ``status`` and ``content`` (the whole body, as
    received: it may quote a caller's secrets) are for a caller that reads the platform's own error
    (the alert channels), which scrubs what it shows."""

    def __init__(self, message: str, status: int, content: bytes):
        super().__init__(message)
        self.status = status
        self.content = content


def user_agent(version: str) -> str:
    """The identifying User-Agent; the caller passes planner's version (scrapers never import planner)."""
    return f"planner/{version} (+GPU price planner)"


class HttpClient:
    """HTTP for one provider. Not shared between providers; safe to use from one thread at a time."""

    def __init__(
        self,
        provider: str,
        *,
        version: str,
        base_url: str | None = None,
        policy: HttpPolicy | None = None,
        save_raw_dir: Path | str | None = None,
        from_raw_dir: Path | str | None = None,
        secrets: Iterable[str] = (),
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        request_log: Callable[[str], None] | None = None,
        follow_redirects: bool = True,
    ) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", provider):
            raise ValueError(f"bad provider name {provider!r}")
        self.provider = provider
        self.policy = policy or HttpPolicy()
        self.base_url = base_url.rstrip("/") if base_url else None
        if self.base_url and urlsplit(self.base_url).scheme not in ("http", "https"):
            raise ScrapeError(f"{provider}: base_url must start with http:// or https://")
        self.secrets = secret_forms(tuple(s for s in secrets if s))  # as sent: stripped, unprefixed...
        self.session = session or requests.Session()
        self.session.verify = True  # never turned off: prices from a spoofed host are worse than none
        self.session.headers["User-Agent"] = user_agent(version)
        mount(self.session)  # its connections report to each exchange's deadline
        self.follow_redirects = follow_redirects
        self._sleep, self._clock = sleep, clock
        # ``-v``: one line per attempt (method, URL, status, bytes, time), secrets removed.
        self.request_log = request_log
        self._last_start: float | None = None
        self._lock = threading.Lock()
        self.recorder = Recorder(Path(save_raw_dir) / provider, self.secrets) if save_raw_dir else None
        self.replayer = Replayer(Path(from_raw_dir) / provider) if from_raw_dir else None

    def physical_url(self, url: str) -> str:
        """The URL actually requested: ``url`` with scheme and host replaced by ``base_url``."""
        if not self.base_url:
            return url
        base, parts = urlsplit(self.base_url), urlsplit(url)
        return urlunsplit((base.scheme, base.netloc, base.path + parts.path, parts.query, ""))

    def requested_url(self, url: str) -> str:
        """What a request for ``url`` really goes to: the mirror's URL, or ``url`` itself in a replay."""
        return url if self.replayer else self.physical_url(url)

    def get(self, url: str, **kw: Any) -> HttpResponse:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw: Any) -> HttpResponse:
        return self.request("POST", url, **kw)

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        signer: Signer | None = None,
        retry_if: Callable[[HttpResponse], bool] | None = None,
    ) -> HttpResponse:
        """Send one logical request (with retries); return a 2xx/3xx response or raise ScrapeError."""
        method = method.upper()
        prepared = requests.Request(method, url, params=dict(params or {})).prepare()
        full_url = str(prepared.url)
        body = b"" if json_body is None else json.dumps(json_body, ensure_ascii=False).encode()
        base_headers = dict(headers or {})
        if json_body is not None:
            base_headers.setdefault("Content-Type", "application/json; charset=utf-8")
        # Errors name the URL actually requested: a base_url mirror's, not the provider's real host.
        where = f"{self.provider}: {method} {redact_url(self.requested_url(full_url))}"
        attempts = self.policy.max_retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            started = time.monotonic()
            try:
                resp = self._send(method, full_url, base_headers, body, signer)
            except DeadlinePassed as exc:
                self._log(method, full_url, f"failed: {exc}", None, time.monotonic() - started)
                raise TransportError(scrub_text(f"{where}: {exc}", self.secrets), str(exc)) from None
            except requests.RequestException as exc:
                cause = network_cause(exc)
                self._log(method, full_url, f"failed: {cause}", None, time.monotonic() - started)
                if last:
                    raise TransportError(
                        scrub_text(f"{where} failed after {attempts} attempts: {cause}", self.secrets), cause
                    ) from None
                self._pause(self._backoff_s(attempt))
                continue
            self._log(method, full_url, f"HTTP {resp.status}", len(resp.content), time.monotonic() - started)
            if self.recorder:
                try:
                    self.recorder.record(method, full_url, body, resp)
                except OSError as err:  # a full disk: the run fails and says where it could not write
                    raise ScrapeError(
                        f"cannot save the raw response in {self.recorder.folder}: {err.strerror or err}"
                    ) from None
            retryable = resp.status in RETRYABLE_STATUS or bool(retry_if and retry_if(resp))
            if retryable and not last:
                self._pause(self._retry_delay_s(resp, attempt))
                continue
            if retryable or resp.status >= 400:
                # scrub, then cut: a secret cut in half would no longer match the scrubbing
                snippet = re.sub(r"\s+", " ", scrub_text(resp.text[:2000], self.secrets))[:160]
                tries = f" after {attempts} attempts" if retryable else ""
                raise HttpStatusError(
                    f"{where} returned HTTP {resp.status}{tries}: {snippet}", resp.status, resp.content
                )
            return replace(resp, secrets=self.secrets)
        raise AssertionError("unreachable")

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes, signer: Signer | None):
        if self.replayer:
            return self.replayer.serve(method, url, body)
        all_headers = dict(headers)
        if signer:
            all_headers.update(signer(method, url, all_headers, body))
        self._wait_turn()
        with Exchange(self.policy.deadline_s) as exchange:
            if exchange.fired:  # started by a job already abandoned
                raise DeadlinePassed(_deadline_words(exchange))
            try:
                raw = self.session.request(
                    method,
                    self.physical_url(url),
                    headers=all_headers,
                    data=body or None,
                    timeout=(
                        min(self.policy.connect_timeout_s, self.policy.deadline_s),
                        min(self.policy.read_timeout_s, self.policy.deadline_s),
                    ),
                    allow_redirects=self.follow_redirects,
                    verify=True,  # per request: wins over anything set on the session
                    hooks={"response": [self._refuse_downgrade]},
                    stream=True,  # read below, decoded piece by piece, up to the cap
                )
                with raw:
                    content = self._read_capped(raw, method, url)
            except (requests.RequestException, OSError):
                if exchange.fired:  # the watchdog cut the socket: say why, not what the cut looked like
                    raise DeadlinePassed(_deadline_words(exchange)) from None
                raise
            if exchange.fired:  # a body without a length reads as complete once its socket is cut
                raise DeadlinePassed(_deadline_words(exchange))
        keep = {
            k: v
            for k, v in raw.headers.items()
            if k.lower() in ("content-type", "retry-after", "date", "location")
        }
        return HttpResponse(raw.status_code, url, keep, content)

    def _read_capped(self, raw: requests.Response, method: str, url: str) -> bytes:
        """The decoded body, refused (a ScrapeError, not retried) once it passes ``max_body_bytes`` (1 MB
        of gzip can decode to gigabytes, and would otherwise be held and saved whole). Read as it
        arrives, in decoded pieces of at most ``_PIECE_BYTES``; the exchange's deadline bounds the time."""
        cap = self.policy.max_body_bytes
        where = f"{self.provider}: {method} {redact_url(url)}"
        chunks: list[bytes] = []
        size = 0
        while piece := _read_piece(raw):
            size += len(piece)
            if size > cap:
                # Freed now, not when the traceback that references this frame is: a caller that keeps
                # the error (one per region, say) would otherwise keep up to the cap of bytes with it.
                chunks.clear()
                raise ScrapeError(
                    f"{where} answered more than {cap / 2**20:g} MB (decoded): refused, it is not a price "
                    "list (a compressed bomb, or the wrong URL)"
                )
            chunks.append(piece)
        return b"".join(chunks)

    def _refuse_downgrade(self, resp: requests.Response, *args: Any, **kwargs: Any) -> None:
        """A response hook, run on every hop: an https URL redirecting to plain http is refused."""
        if resp.is_redirect and urlsplit(resp.url).scheme == "https":
            target = urljoin(resp.url, resp.headers.get("location", ""))
            if urlsplit(target).scheme != "https":
                resp.close()
                raise ScrapeError(
                    f"{self.provider}: {redact_url(resp.url)} redirected to {redact_url(target)}, "
                    "which is not https: refused (the answer could not be verified)"
                )

    def _log(self, method: str, url: str, outcome: str, size_bytes: int | None, seconds: float) -> None:
        if self.request_log is not None:
            line = request_line(
                method, self.requested_url(url), outcome, size_bytes, seconds, replay=bool(self.replayer)
            )
            self.request_log(f"{self.provider}: {scrub_text(line, self.secrets)}")

    def _wait_turn(self) -> None:
        with self._lock:
            now = self._clock()
            if self._last_start is not None:
                wait = self._last_start + self.policy.min_interval_s - now
                if wait > 0:
                    self._sleep(wait)
                    now += wait
            self._last_start = now

    def _pause(self, seconds: float) -> None:
        if not self.replayer and seconds > 0:
            self._sleep(seconds)

    def _backoff_s(self, attempt: int) -> float:
        return min(self.policy.backoff_base_s * 2**attempt, self.policy.backoff_max_s)

    def _retry_delay_s(self, resp: HttpResponse, attempt: int) -> float:
        header = {k.lower(): v for k, v in resp.headers.items()}.get("retry-after")
        if header is None:
            return self._backoff_s(attempt)
        return min(max(parse_retry_after_s(header, time.time()), 0.0), self.policy.retry_after_max_s)


_PIECE_BYTES = 256 * 1024


def _deadline_words(exchange: Exchange) -> str:
    if exchange.cancelled:
        return "deadline: cut short, the job it ran for was abandoned"
    return (
        f"deadline: no whole answer within {round(exchange.deadline_s, 1):g} s (connect, status line, headers and "
        "body): gave up, not retried"
    )


def _read_piece(raw: requests.Response) -> bytes:
    """The next decoded piece of ``raw``'s body as soon as some arrives (``read1``: one read from the
    socket, never waiting to fill a buffer), with urllib3's errors as requests names them (the
    retries count on those)."""
    import urllib3.exceptions as u3

    try:
        return raw.raw.read1(_PIECE_BYTES, decode_content=True) or b""
    except u3.ProtocolError as exc:
        raise requests.exceptions.ChunkedEncodingError(exc) from None
    except u3.DecodeError as exc:
        raise requests.exceptions.ContentDecodingError(exc) from None
    except u3.ReadTimeoutError as exc:
        raise requests.exceptions.ConnectionError(exc) from None
    except u3.SSLError as exc:
        raise requests.exceptions.SSLError(exc) from None


def parse_retry_after_s(value: str, now_epoch_s: float) -> float:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date; garbage means 1 s."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 1.0
    return when.timestamp() - now_epoch_s


def request_line(
    method: str, url: str, outcome: str, size_bytes: int | None, seconds: float, *, replay: bool = False
) -> str:
    """``GET https://host/path?Signature=*** -> HTTP 200, 5,120 bytes, 0.31 s`` for ``-v``.

    Sensitive query values are replaced (``redact_url``); headers, where signatures and tokens travel,
    are never printed.
    """
    size = "" if size_bytes is None else f", {size_bytes:,} bytes"
    where = " (replayed)" if replay else ""
    return f"{method} {redact_url(url)} -> {outcome}{size}, {seconds:.2f} s{where}"


# Words in the text of an exception chain that name the root cause (urllib3 and OpenSSL wording).
_DNS_WORDS = ("NameResolutionError", "Failed to resolve", "Name or service not known", "nodename nor servname",
              "getaddrinfo failed", "Temporary failure in name resolution", "No address associated")  # fmt: skip


def network_cause(exc: BaseException) -> str:
    """The root cause of a failed request, for people: ``DNS``, ``refused``, ``TLS``, ``timeout``,
    ``reset`` or ``connection``, with the detail that tells them apart (host, port, phase)."""
    chain = list(_exception_chain(exc))
    text = " ".join(f"{type(e).__name__}: {e}" for e in chain)
    if isinstance(exc, requests.exceptions.SSLError) or any(isinstance(e, ssl.SSLError) for e in chain):
        reason = next((str(e) for e in chain if isinstance(e, ssl.SSLError)), "") or text
        return f"TLS: the secure connection failed ({type(exc).__name__}: {_short(reason)})"
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "timeout: no connection within the connect timeout"
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return "timeout: connected, but no answer within the read timeout"
    if any(isinstance(e, socket.gaierror) for e in chain) or any(w in text for w in _DNS_WORDS):
        return "DNS: the host name could not be resolved"
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "Connection refused" in text:
        return "refused: nothing accepted the connection at that host and port"
    if any(isinstance(e, TimeoutError | socket.timeout) for e in chain) or "timed out" in text:
        return "timeout: the connection timed out"
    if any(isinstance(e, ConnectionResetError) for e in chain) or "reset by peer" in text:
        return "reset: the connection was closed by the other side"
    return f"connection: {_short(text) or type(exc).__name__}"


def _exception_chain(exc: BaseException) -> Iterable[BaseException]:
    """``exc``, its causes and contexts, and the ``reason``/first argument urllib3 wraps them in."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen or len(seen) > 20:
            continue
        seen.add(id(current))
        yield current
        nested = [current.__cause__, current.__context__, getattr(current, "reason", None)]
        nested += [a for a in current.args if isinstance(a, BaseException)]
        todo += [n for n in nested if isinstance(n, BaseException)]


def _short(text: str) -> str:
    # Object addresses ("at 0x7f...") make messages differ between runs and say nothing to a person.
    return re.sub(r"\s+", " ", re.sub(r" at 0x[0-9a-f]+", "", text)).strip()[:160]
