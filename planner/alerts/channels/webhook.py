"""What the group robots share: a JSON POST to the webhook URL, retried, and the answer read.

The URL comes from ``PLANNER_WEBHOOK_<NAME>`` (and a signing secret from ``PLANNER_WEBHOOK_<NAME>_SECRET``)
at send time; neither is ever printed, logged or stored: every error text is built here and scrubbed
of both. Every robot answers HTTP 200 with a non-zero code on failure, and that is a failure here. Rate
limits and server trouble are retried with growing pauses; a refused key, signature or keyword is not.
An error names the platform's code and message, or (an HTTP error without one) a short excerpt of its
answer: scrubbed of every webhook URL, key and secret, control characters neutralised, cut short. A
host that could not be reached is named with what happened (refused, timeout, TLS, DNS, the deadline).

The transport is strict: https only (plain http to this machine, or to a channel whose table says
``allow_plain_http = true``); a redirect is never followed (a 302 would turn the POST into a GET
without the message, a 307 would post it to another host) but is a failure naming where it pointed;
each attempt has one wall-clock deadline (connect to the answer's last byte) and all the attempts and
pauses of one message fit in ``SendPolicy.budget_s``.
"""

from __future__ import annotations

import functools
import json
import re
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from planner import __version__
from planner.alerts.channels.base import WEBHOOK_ENV_PREFIX, Channel, ChannelError, Delivery, Kind, Sending
from planner.config import is_loopback
from planner.errors import ConfigError
from planner.text import printable
from scrapers.base import ScrapeError

MAX_ERROR_CHARS = 200  # an error as shown and stored, the platform's answer included
MAX_REPLY_BYTES = 64 * 1024  # of an error answer, read for its text (scrubbed, then cut as above)


class Robot(Kind):
    """A group robot. Subclasses give the request and where the answer keeps its code."""

    webhook = True
    keys = ("allow_plain_http",)
    retryable_codes: frozenset[int] = frozenset()  # retrying later may help: rate limits, "system busy"
    code_hints: Mapping[int, str] = {}  # what a code means for whoever set the channel up; {NAME} filled

    def build_request(
        self, url: str, secret: str | None, title: str, markdown: str, now_s: float
    ) -> tuple[str, bytes]:
        """(URL, JSON body) of one message, signed when ``secret`` is given."""
        raise NotImplementedError

    def settings(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        allow = table.get("allow_plain_http", False)
        if not isinstance(allow, bool):
            raise ConfigError(f"{where}: allow_plain_http must be true or false")
        return {"allow_plain_http": allow}

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
        refused = plain_http_refused(channel, url)
        if refused:
            return sending.failed(channel, 0, refused)
        started = time.monotonic()
        error_text = ""
        for attempt in range(1, policy.attempts + 1):
            left_s = policy.budget_s - (time.monotonic() - started)
            deadline_s = min(policy.deadline_s, left_s)
            send = sending.post or functools.partial(_http_post, deadline_s=deadline_s)
            try:
                target, body = self.build_request(url, secret, title, markdown, sending.clock())
                status, reply = send(target, body, policy.connect_timeout_s, policy.read_timeout_s)
                self.check_reply(channel, status, reply)
                return Delivery(channel.name, channel.kind, sending.alerts, True, attempt)
            except ChannelError as err:
                hint = err.hint.replace("{VAR}", channel.url_env)
                error_text = safe_error(err.message, hidden) + (f" ({hint})" if hint else "")
                permanent = err.permanent
            except Unreachable as err:
                said = safe_error(str(err), hidden)
                error_text = f"cannot reach the {self.name} webhook host {_host(url)}: {said}"
                permanent = err.permanent
            except Exception as err:  # a transport's own text may quote the URL: only its kind is shown
                error_text = f"cannot reach the {self.name} webhook host {_host(url)}: {type(err).__name__}"
                permanent = False
            pause_s = policy.backoff_s * 2 ** (attempt - 1)
            spent_s = time.monotonic() - started
            # Another attempt needs its pause and some time to answer within what is left of the budget.
            out_of_time = spent_s + pause_s + min(policy.deadline_s, 1.0) > policy.budget_s
            if permanent or attempt == policy.attempts or out_of_time:
                if not permanent and attempt > 1:
                    error_text += f" (tried {attempt} times"
                    error_text += f" in {spent_s:.0f} s, the budget of one message)" if out_of_time else ")"
                elif not permanent and out_of_time and policy.attempts > 1:
                    error_text += f" (not retried: {policy.budget_s:g} s is the budget of one message)"
                return sending.failed(channel, attempt, error_text)
            sending.sleep(pause_s)
        raise AssertionError("unreachable")

    def check_reply(self, channel: Channel, status: int, reply: bytes) -> None:
        """Raise ChannelError unless the platform said it took the message."""
        try:
            parsed = json.loads(reply.decode("utf-8")) if reply else None
        except (UnicodeDecodeError, ValueError):
            parsed = None
        answered = f"the {self.name} webhook answered HTTP {status}" + _said(reply)
        if 300 <= status < 400:
            raise ChannelError(
                f"the {self.name} webhook answered HTTP {status}, a redirect: not followed, so nothing "
                "was delivered",
                REDIRECT_HINT,
                permanent=True,
            )
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


REDIRECT_HINT = "a robot answers where it is; check that {VAR} is the URL the platform gave, https and whole"


def plain_http_refused(channel: Channel, url: str) -> str | None:
    """Why the webhook ``url`` must not be used, or None: plain http would carry the message and the
    key in the URL readable across the network. Loopback never crosses it (a relay on this machine,
    the tests' robots: the same rule as a provider's ``base_url``); any other host needs the channel's
    own ``allow_plain_http = true``."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "http" or channel.allow_plain_http or is_loopback(parts.hostname or ""):
        return None
    return (
        f"{channel.url_env} is plain http to {parts.hostname}: the message and the webhook key would cross "
        f"the network readable, so nothing was sent (use https://, or set [channels.{channel.name}] "
        "allow_plain_http = true for a relay you trust)"
    )


class Unreachable(Exception):
    """No answer from the webhook host: the message says what happened (refused, timeout, DNS, TLS, the
    deadline, a redirect), never the URL. ``permanent`` when trying again cannot help."""

    def __init__(self, message: str, permanent: bool = False):
        super().__init__(message)
        self.permanent = permanent


MAX_ANSWER_BYTES = 1024 * 1024  # a robot's answer is a few dozen bytes; more is not a robot


def _http_post(
    url: str, body: bytes, connect_timeout_s: float, read_timeout_s: float, deadline_s: float = 30.0
) -> tuple[int, bytes]:
    """One POST through the project's HTTP client (TLS always verified, redirects not followed, one
    deadline from connect to the answer's last byte), no retries of its own: ``Robot.send`` retries,
    reading each platform's codes."""
    from scrapers.http import HttpClient, HttpPolicy, HttpStatusError, TransportError

    policy = HttpPolicy(
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
        deadline_s=max(deadline_s, 0.1),
        max_retries=0,
        min_interval_s=0,
        max_body_bytes=MAX_ANSWER_BYTES,
    )
    client = HttpClient("webhook", version=__version__, policy=policy, follow_redirects=False)
    try:
        response = client.post(url, json_body=json.loads(body))
    except HttpStatusError as err:  # its text quotes the URL: the status and the platform's answer only
        return err.status, err.content
    except TransportError as err:
        raise Unreachable(err.cause) from None
    except ScrapeError as err:  # "webhook: POST <url> <what happened>": what happened only
        said = re.sub(r"^webhook: [A-Z]+ \S+?:? ", "", str(err))
        raise Unreachable(said, permanent=True) from None
    finally:
        client.session.close()  # one POST per client: its connection is not kept for another
    if 300 <= response.status < 400:
        location = {k.lower(): v for k, v in response.headers.items()}.get("location", "")
        where = urllib.parse.urljoin(url, location)
        raise ChannelError(
            f"the webhook answered HTTP {response.status}, a redirect to {_host(where)}: not followed, "
            "so nothing was delivered",
            REDIRECT_HINT,
            permanent=True,
        )
    return response.status, response.content
