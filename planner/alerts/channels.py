"""Sending one message to one channel: e-mail, or a WeCom, DingTalk or Feishu group robot.

Each robot takes a JSON POST to its webhook URL, read from ``PLANNER_WEBHOOK_<NAME>`` (and a signing
secret from ``PLANNER_WEBHOOK_<NAME>_SECRET``) at send time; neither is ever printed, logged or stored:
every error text is built here and scrubbed of both. The platforms' documented formats:

- WeCom group robot (developer.work.weixin.qq.com/document/path/91770): ``{"msgtype": "markdown",
  "markdown": {"content": ...}}`` (at most 4,096 bytes); answers ``{"errcode": 0, "errmsg": "ok"}``.
- DingTalk custom robot (open.dingtalk.com/document/robots/custom-robot-access): ``{"msgtype":
  "markdown", "markdown": {"title", "text"}}``; signed mode adds ``&timestamp=<ms>&sign=<s>`` to the
  URL, s = URL-encoded base64 of HMAC-SHA256(key=secret, "<timestamp>\\n<secret>"); answers
  ``{"errcode": 0, "errmsg": "ok"}``.
- Feishu/Lark custom bot (open.feishu.cn/document/client-docs/bot-v3/add-custom-bot): an
  ``interactive`` card with a markdown element; signed mode adds ``"timestamp": "<s>"`` and ``"sign"``
  to the body, sign = base64 of HMAC-SHA256 keyed with "<timestamp>\\n<secret>" over an empty message;
  answers ``{"code": 0, "msg": "success"}`` (older bots: ``{"StatusCode": 0}``).

All three answer HTTP 200 with a non-zero code on failure, and that is a failure here. Rate limits
and server trouble are retried with growing pauses; a refused key, signature or keyword is not. An
error names the platform's code and message, or (an HTTP error without one) a short excerpt of its
answer: scrubbed of every webhook URL, key and secret, control characters neutralised, cut short.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from planner.alerts.rules import Channel
from planner.text import printable

# (status, body) of one POST of ``body`` to ``url``; raises OSError-like exceptions when unreachable.
Post = Callable[[str, bytes, float, float], tuple[int, bytes]]

# Codes a platform answers when retrying later may help: rate limits and "system busy".
RETRYABLE_CODES = {
    "wecom": {-1, 45009},  # 45009: over 20 messages a minute
    "dingtalk": {-1, 130101},  # 130101: sending too fast
    "feishu": {11232},  # 11232: frequency limited
}
# What a documented error code means for the person who set the channel up.
CODE_HINTS = {
    ("wecom", 93000): "the webhook key is not valid (robot removed?): check PLANNER_WEBHOOK_{NAME}",
    ("wecom", 45009): "WeCom takes at most 20 messages a minute per robot",
    ("dingtalk", 310000): "keyword, signature or IP check failed: check the robot's security settings "
    "and PLANNER_WEBHOOK_{NAME}_SECRET (a signed robot needs it)",
    ("dingtalk", 300001): "the access_token is not valid: check PLANNER_WEBHOOK_{NAME}",
    ("dingtalk", 400102): "the robot is switched off in the group settings",
    ("dingtalk", 130101): "DingTalk takes at most 20 messages a minute per robot",
    ("feishu", 19021): "signature check failed (or the clock is off by over an hour): check "
    "PLANNER_WEBHOOK_{NAME}_SECRET",
    ("feishu", 19022): "the bot only accepts listed IP addresses",
    ("feishu", 19024): "the message lacks the bot's keyword: add it to the bot or remove the check",
    ("feishu", 9499): "the bot refused the request body",
}
MAX_ERROR_CHARS = 200  # an error as shown and stored, the platform's answer included
MAX_REPLY_BYTES = 64 * 1024  # of an error answer, read for its text (scrubbed, then cut as above)
WEBHOOK_ENV_PREFIX = "PLANNER_WEBHOOK_"


class ChannelError(Exception):
    """One attempt failed. ``permanent`` when retrying will not help. Never carries a secret."""

    def __init__(self, message: str, hint: str = "", permanent: bool = False):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.permanent = permanent


@dataclass(frozen=True)
class SendPolicy:
    attempts: int = 4
    backoff_s: float = 1.0
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 30.0


def policy_from(config: Any) -> SendPolicy:
    """Retries, pauses and timeouts from [http], as the providers use them."""
    http = config.section("http")
    return SendPolicy(
        attempts=1 + int(http.get("retries", 3)),
        backoff_s=float(http.get("backoff_s", 1.0)),
        connect_timeout_s=float(http.get("connect_timeout_s", 10)),
        read_timeout_s=min(float(http.get("read_timeout_s", 60)), 60.0),
    )


@dataclass(frozen=True)
class Delivery:
    """How sending one message to one channel ended."""

    channel: str
    kind: str
    alerts: int
    ok: bool
    attempts: int
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def deliver(
    channel: Channel,
    title: str,
    markdown: str,
    *,
    config: Any,
    alerts: int = 0,
    env: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    post: Post | None = None,
    policy: SendPolicy | None = None,
) -> Delivery:
    """Send the message, retrying transient failures; never raises for the channel's failure."""
    import os

    env = os.environ if env is None else env
    policy = policy or policy_from(config)
    if channel.kind == "email":
        return _deliver_email(channel, title, markdown, config, alerts, env, sleep, policy)
    url = env.get(channel.url_env, "").strip()
    secret = env.get(channel.secret_env, "").strip() or None
    hidden = _secret_pieces(env)
    if not url:
        error = f"{channel.url_env} is not set (the webhook URL comes from the environment only)"
        return Delivery(channel.name, channel.kind, alerts, False, 0, error)
    if not url.lower().startswith(("https://", "http://")):
        error = f"{channel.url_env} is not an http(s) URL"
        return Delivery(channel.name, channel.kind, alerts, False, 0, error)
    send = post or _http_post
    error_text = ""
    for attempt in range(1, policy.attempts + 1):
        try:
            target, body = build_request(channel.kind, url, secret, title, markdown, clock())
            status, reply = send(target, body, policy.connect_timeout_s, policy.read_timeout_s)
            check_reply(channel, status, reply)
            return Delivery(channel.name, channel.kind, alerts, True, attempt)
        except ChannelError as err:
            error_text = safe_error(err.message, hidden) + (f" ({err.hint})" if err.hint else "")
            permanent = err.permanent
        except Unreachable as err:
            error_text = f"cannot reach the {channel.kind} webhook host {_host(url)}: {err}"
            permanent = False
        except Exception as err:  # a transport's own text may quote the URL: only its kind is shown
            error_text = f"cannot reach the {channel.kind} webhook host {_host(url)}: {type(err).__name__}"
            permanent = False
        if permanent or attempt == policy.attempts:
            if not permanent and policy.attempts > 1:
                error_text += f" (tried {attempt} times)"
            return Delivery(channel.name, channel.kind, alerts, False, attempt, error_text)
        sleep(policy.backoff_s * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def build_request(
    kind: str, url: str, secret: str | None, title: str, markdown: str, now_s: float
) -> tuple[str, bytes]:
    """(URL, JSON body) of one robot message, signed when ``secret`` is given."""
    if kind == "wecom":
        body: dict[str, Any] = {"msgtype": "markdown", "markdown": {"content": markdown}}
    elif kind == "dingtalk":
        body = {"msgtype": "markdown", "markdown": {"title": title, "text": markdown}}
        if secret:
            timestamp = str(int(now_s * 1000))
            query = urllib.parse.urlencode({"timestamp": timestamp, "sign": dingtalk_sign(timestamp, secret)})
            url = f"{url}{'&' if '?' in url else '?'}{query}"
    elif kind == "feishu":
        content = markdown.split("\n", 1)[1].lstrip("\n") if markdown.startswith("### ") else markdown
        body = {
            "msg_type": "interactive",
            "card": {
                "header": {"title": {"tag": "plain_text", "content": title}},
                "elements": [{"tag": "markdown", "content": content}],
            },
        }
        if secret:
            timestamp = str(int(now_s))
            body = {"timestamp": timestamp, "sign": feishu_sign(timestamp, secret), **body}
    else:
        raise ValueError(f"not a webhook kind: {kind!r}")
    return url, json.dumps(body, ensure_ascii=False).encode("utf-8")


def dingtalk_sign(timestamp_ms: str, secret: str) -> str:
    """DingTalk: base64 HMAC-SHA256 keyed with the secret over "<timestamp>\\n<secret>" (not yet
    URL-encoded: ``urlencode`` does that once, as the docs' ``quote_plus`` does)."""
    digest = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def feishu_sign(timestamp_s: str, secret: str) -> str:
    """Feishu: base64 HMAC-SHA256 keyed with "<timestamp>\\n<secret>" over an empty message."""
    digest = hmac.new(f"{timestamp_s}\n{secret}".encode(), b"", hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def check_reply(channel: Channel, status: int, reply: bytes) -> None:
    """Raise ChannelError unless the platform said it took the message."""
    try:
        parsed = json.loads(reply.decode("utf-8")) if reply else None
    except (UnicodeDecodeError, ValueError):
        parsed = None
    answered = f"the {channel.kind} webhook answered HTTP {status}" + _said(reply)
    if not isinstance(parsed, dict):
        if status >= 500 or status == 429:
            raise ChannelError(answered)
        if status >= 400:
            raise ChannelError(answered, permanent=True)
        raise ChannelError(f"the {channel.kind} webhook answered HTTP {status} without a JSON body")
    if channel.kind == "feishu":
        code = parsed.get("code", parsed.get("StatusCode"))
        text = parsed.get("msg", parsed.get("StatusMessage"))
    else:
        code, text = parsed.get("errcode"), parsed.get("errmsg")
    if code == 0 and status < 400:
        return
    if not isinstance(code, int):
        retry = status >= 500 or status == 429
        raise ChannelError(answered, permanent=not retry)
    hint = CODE_HINTS.get((channel.kind, code), "").replace(
        "{NAME}", channel.url_env[len("PLANNER_WEBHOOK_") :]
    )
    retry = code in RETRYABLE_CODES.get(channel.kind, set()) or status >= 500 or status == 429
    said = str(text) if text is not None else ""  # cut only once scrubbed: a cut secret escapes scrubbing
    raise ChannelError(f"{channel.kind} error {code}: {said}".rstrip(": "), hint, permanent=not retry)


def _said(reply: bytes) -> str:
    """``: <the answer's text>``, whole: ``deliver`` scrubs the secrets out of it before cutting it
    short (a secret cut in half would escape the scrubbing) and neutralises its control characters."""
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
        if not name.endswith("_SECRET"):
            parts = urllib.parse.urlsplit(value)
            query = urllib.parse.parse_qs(parts.query)
            pieces += [v for values in query.values() for v in values if len(v) >= 6]
            pieces += [s for s in parts.path.split("/") if len(s) >= 16]
    return tuple(pieces)


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).hostname or "?"


class Unreachable(Exception):
    """The webhook host could not be reached (refused, timed out, TLS): ``reason`` is the kind only."""


def _http_post(url: str, body: bytes, connect_timeout_s: float, read_timeout_s: float) -> tuple[int, bytes]:
    """One POST through the project's HTTP client (TLS always verified, no https-to-http redirect), no
    retries of its own: ``deliver`` retries, reading each platform's codes."""
    import re

    from planner import __version__
    from scrapers.base import ScrapeError
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


def _deliver_email(
    channel: Channel,
    title: str,
    markdown: str,
    config: Any,
    alerts: int,
    env: Mapping[str, str],
    sleep: Callable[[float], None],
    policy: SendPolicy,
) -> Delivery:
    """The message as plain text (and the same in <pre> as HTML) through reports.mail, to the channel's
    recipients or [email] recipients."""
    import html

    from planner.answers.report import smtp_settings
    from planner.errors import PlannerError
    from reports.mail import MailError, compose, send

    recipients = list(channel.recipients) or list(config.section("email").get("recipients", []))
    if not recipients:
        error = "no recipients: set [email] recipients or recipients in the channel"
        return Delivery(channel.name, channel.kind, alerts, False, 0, error)
    try:
        settings = smtp_settings(config, dict(env))
    except PlannerError as err:
        return Delivery(channel.name, channel.kind, alerts, False, 0, err.message)
    page = f"<html><body><pre>{html.escape(markdown)}</pre></body></html>"
    message = compose(title, markdown, page, settings.sender, recipients, [])
    try:
        refused = send(message, settings, attempts=policy.attempts, backoff_s=policy.backoff_s, sleep=sleep)
    except MailError as err:
        return Delivery(
            channel.name, channel.kind, alerts, False, policy.attempts, f"{err.message} ({err.hint})"
        )
    if refused:  # others got it: resending would repeat it to them
        return Delivery(channel.name, channel.kind, alerts, True, 1, f"refused: {', '.join(sorted(refused))}")
    return Delivery(channel.name, channel.kind, alerts, True, 1)
