"""What the group robots share: a JSON POST to the webhook URL, retried, and the answer read.

The URL comes from ``PLANNER_WEBHOOK_<NAME>`` (and a signing secret from ``PLANNER_WEBHOOK_<NAME>_SECRET``)
at send time; neither is ever printed, logged or stored: every error text is built here and scrubbed
of both. Every robot answers HTTP 200 with a non-zero code on failure, and that is a failure here. Rate
limits and server trouble are retried with growing pauses; a refused key, signature or keyword is not.
An error names the platform's code and message, or (an HTTP error without one) a short excerpt of its
answer: scrubbed of every webhook URL, key and secret, control characters neutralised, cut short.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from planner import __version__
from planner.alerts.channels.base import WEBHOOK_ENV_PREFIX, Channel, ChannelError, Delivery, Kind, Sending
from planner.text import printable
from scrapers.base import ScrapeError

MAX_ERROR_CHARS = 200  # an error as shown and stored, the platform's answer included
MAX_REPLY_BYTES = 64 * 1024  # of an error answer, read for its text (scrubbed, then cut as above)


class Robot(Kind):
    """A group robot. Subclasses give the request and where the answer keeps its code."""

    webhook = True
    retryable_codes: frozenset[int] = frozenset()  # retrying later may help: rate limits, "system busy"
    code_hints: Mapping[int, str] = {}  # what a code means for whoever set the channel up; {NAME} filled

    def build_request(
        self, url: str, secret: str | None, title: str, markdown: str, now_s: float
    ) -> tuple[str, bytes]:
        """(URL, JSON body) of one message, signed when ``secret`` is given."""
        raise NotImplementedError

    def reply_code(self, reply: Mapping[str, Any]) -> tuple[Any, Any]:
        """(code, message) of the platform's JSON answer."""
        return reply.get("errcode"), reply.get("errmsg")

    def send(self, channel: Channel, title: str, markdown: str, sending: Sending) -> Delivery:
        env, policy = sending.env, sending.policy
        url = env.get(channel.url_env, "").strip()
        secret = env.get(channel.secret_env, "").strip() or None
        hidden = _secret_pieces(env)
        if not url:
            error = f"{channel.url_env} is not set (the webhook URL comes from the environment only)"
            return sending.failed(channel, 0, error)
        if not url.lower().startswith(("https://", "http://")):
            return sending.failed(channel, 0, f"{channel.url_env} is not an http(s) URL")
        if problem := _url_problem(url):  # never the URL itself: it holds the key
            return sending.failed(channel, 0, f"{channel.url_env} is not a valid URL: {problem}")
        send = sending.post or _http_post
        error_text = ""
        for attempt in range(1, policy.attempts + 1):
            try:
                target, body = self.build_request(url, secret, title, markdown, sending.clock())
                status, reply = send(target, body, policy.connect_timeout_s, policy.read_timeout_s)
                self.check_reply(channel, status, reply)
                return Delivery(channel.name, channel.kind, sending.alerts, True, attempt)
            except ChannelError as err:
                error_text = safe_error(err.message, hidden) + (f" ({err.hint})" if err.hint else "")
                permanent = err.permanent
            except Unreachable as err:
                error_text = f"cannot reach the {self.name} webhook host {_host(url)}: {err}"
                permanent = False
            except Exception as err:  # a transport's own text may quote the URL: only its kind is shown
                error_text = f"cannot reach the {self.name} webhook host {_host(url)}: {type(err).__name__}"
                permanent = False
            if permanent or attempt == policy.attempts:
                if not permanent and policy.attempts > 1:
                    error_text += f" (tried {attempt} times)"
                return sending.failed(channel, attempt, error_text)
            sending.sleep(policy.backoff_s * 2 ** (attempt - 1))
        raise AssertionError("unreachable")

    def check_reply(self, channel: Channel, status: int, reply: bytes) -> None:
        """Raise ChannelError unless the platform said it took the message."""
        try:
            parsed = json.loads(reply.decode("utf-8")) if reply else None
        except (UnicodeDecodeError, ValueError):
            parsed = None
        answered = f"the {self.name} webhook answered HTTP {status}" + _said(reply)
        if not isinstance(parsed, dict):
            if status >= 500 or status == 429:
                raise ChannelError(answered)
            if status >= 400:
                raise ChannelError(answered, permanent=True)
            raise ChannelError(f"the {self.name} webhook answered HTTP {status} without a JSON body")
        code, text = self.reply_code(parsed)
        if code == 0 and status < 400:
            return
        if not isinstance(code, int):
            retry = status >= 500 or status == 429
            raise ChannelError(answered, permanent=not retry)
        hint = self.code_hints.get(code, "").replace("{NAME}", channel.url_env[len(WEBHOOK_ENV_PREFIX) :])
        retry = code in self.retryable_codes or status >= 500 or status == 429
        said = str(text) if text is not None else ""  # cut only once scrubbed: a cut secret escapes scrubbing
        raise ChannelError(f"{self.name} error {code}: {said}".rstrip(": "), hint, permanent=not retry)


def _said(reply: bytes) -> str:
    """``: <the answer's text>``, whole: ``send`` scrubs the secrets out of it before cutting it short
    (a secret cut in half would escape the scrubbing) and neutralises its control characters."""
    text = " ".join(reply[:MAX_REPLY_BYTES].decode("utf-8", errors="replace").split())
    return f": {text}" if text else ""


def safe_error(text: str, pieces: tuple[str, ...]) -> str:
    """An error text fit to show and store: secrets scrubbed, control and invisible characters
    neutralised (``planner.text``), then cut to ``MAX_ERROR_CHARS``."""
    return _cut(" ".join(printable(scrub(text, pieces)).split()))


def scrub(text: str, pieces: tuple[str, ...]) -> str:
    """``text`` with every secret piece (and its URL-encoding) replaced by ***."""
    for piece in sorted(pieces, key=len, reverse=True):
        for form in {piece, urllib.parse.quote(piece, safe=""), urllib.parse.quote_plus(piece)}:
            text = text.replace(form, "***")
    return text


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def _secret_pieces(env: Mapping[str, str]) -> tuple[str, ...]:
    """Every webhook's URL, its query values and long path segments (keys, tokens), and every secret:
    of all channels, as an answer may quote another's."""
    pieces: list[str] = []
    for name, value in env.items():
        if not name.startswith(WEBHOOK_ENV_PREFIX) or not value.strip():
            continue
        value = value.strip()
        pieces.append(value)
        if not name.endswith("_SECRET") and _url_problem(value) is None:  # a malformed one is hidden whole
            parts = urllib.parse.urlsplit(value)
            query = urllib.parse.parse_qs(parts.query)
            pieces += [v for values in query.values() for v in values if len(v) >= 6]
            pieces += [s for s in parts.path.split("/") if len(s) >= 16]
    return tuple(pieces)


def _url_problem(url: str) -> str | None:
    """What makes ``url`` unusable as a webhook URL, in words that quote none of it; None when usable."""
    if any(c.isspace() or not c.isprintable() for c in url):
        return "it holds a space or a control character"
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number up to 65535
    except ValueError as err:
        return "its port is not a number up to 65535" if "Port" in str(err) else "it cannot be parsed"
    if not parts.hostname:
        return "it names no host"
    return None


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).hostname or "?"


class Unreachable(Exception):
    """The webhook host could not be reached (refused, timed out, TLS): ``reason`` is the kind only."""


def _http_post(url: str, body: bytes, connect_timeout_s: float, read_timeout_s: float) -> tuple[int, bytes]:
    """One POST through the project's HTTP client (TLS always verified, no https-to-http redirect), no
    retries of its own: ``Robot.send`` retries, reading each platform's codes."""
    from scrapers.http import HttpClient, HttpPolicy, HttpStatusError

    policy = HttpPolicy(
        connect_timeout_s=connect_timeout_s, read_timeout_s=read_timeout_s, max_retries=0, min_interval_s=0
    )
    client = HttpClient("webhook", version=__version__, policy=policy)
    try:
        response = client.post(url, json_body=json.loads(body))
    except HttpStatusError as err:  # its text quotes the URL: the status and the platform's answer only
        return err.status, err.content
    except ScrapeError as err:
        reason = re.search(r"attempts?: (\w+)$", str(err))
        raise Unreachable(reason.group(1) if reason else "no answer") from None
    return response.status, response.content
