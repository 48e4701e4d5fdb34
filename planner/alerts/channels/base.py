"""What every kind of channel shares: the configured channel, a kind's record, how one sending ended.

A kind (``Kind``) is one module of this package: its name as ``kind = ...`` takes it, the bytes a
message may take, the keys its ``[channels.NAME]`` table may hold, whether it reads a webhook URL and a
signing secret from the environment, and how it sends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.config import Config

WEBHOOK_ENV_PREFIX = "PLANNER_WEBHOOK_"

# (status, body) of one POST of ``body`` to ``url``; raises OSError-like exceptions when unreachable.
Post = Callable[[str, bytes, float, float], tuple[int, bytes]]


@dataclass(frozen=True)
class Channel:
    """Where messages go. Webhook URL and secret are read from the environment when sending."""

    name: str
    kind: str  # a key of planner.alerts.channels.CHANNELS
    recipients: tuple[str, ...] = ()  # e-mail only; empty = [email] recipients
    allow_plain_http: bool = False  # webhooks only: a plain-http URL to another machine is accepted

    @property
    def url_env(self) -> str:
        return f"{WEBHOOK_ENV_PREFIX}{self.name.upper().replace('-', '_')}"

    @property
    def secret_env(self) -> str:
        return f"{self.url_env}_SECRET"


class ChannelError(Exception):
    """One attempt failed. ``permanent`` when retrying will not help. Never carries a secret."""

    def __init__(self, message: str, hint: str = "", permanent: bool = False):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.permanent = permanent


# One POST to a robot, connect to the answer's last byte: a robot answers in well under a second.
WEBHOOK_DEADLINE_MAX_S = 30.0


@dataclass(frozen=True)
class SendPolicy:
    attempts: int = 4
    backoff_s: float = 1.0
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 30.0
    deadline_s: float = WEBHOOK_DEADLINE_MAX_S  # one attempt, however slowly the robot's host answers
    budget_s: float = 60.0  # every attempt and pause of one message to one webhook, all told


def policy_from(config: Config) -> SendPolicy:
    """Retries, pauses and timeouts from [http], as the providers use them; each attempt's deadline at
    most ``WEBHOOK_DEADLINE_MAX_S`` and all of them within [http] webhook_budget_s."""
    http = config.section("http")
    return SendPolicy(
        attempts=1 + int(http.get("retries", 3)),
        backoff_s=float(http.get("backoff_s", 1.0)),
        connect_timeout_s=float(http.get("connect_timeout_s", 10)),
        read_timeout_s=min(float(http.get("read_timeout_s", 60)), 60.0),
        deadline_s=min(float(http.get("deadline_s", 300)), WEBHOOK_DEADLINE_MAX_S),
        budget_s=float(http.get("webhook_budget_s", 60)),
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


@dataclass(frozen=True)
class Sending:
    """What one ``deliver`` call gives the kind that sends: the settings, the environment the URL and
    secret are read from, the clock and pauses (tests pass their own), the transport and the retries."""

    config: Config
    alerts: int
    env: Mapping[str, str]
    policy: SendPolicy
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    post: Post | None = field(default=None)

    def failed(self, channel: Channel, attempts: int, error: str) -> Delivery:
        return Delivery(channel.name, channel.kind, self.alerts, False, attempts, error)


class Kind:
    """One kind of channel. Subclasses set the class attributes and ``send``."""

    name: str  # as written in kind = "..."
    max_bytes: int  # of UTF-8 a message may take, a margin under the platform's documented cap
    keys: tuple[str, ...] = ()  # what its [channels.NAME] table may hold besides kind
    webhook: bool = False  # reads its URL from PLANNER_WEBHOOK_<NAME>
    signed: bool = False  # reads a signing secret from PLANNER_WEBHOOK_<NAME>_SECRET (optional)
    sends_through: str = ""  # the config section it sends through ("[email]"), when not a webhook

    def settings(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        """The ``Channel`` fields its checked ``[channels.NAME]`` table gives; ConfigError when wrong."""
        return {}

    def send(self, channel: Channel, title: str, markdown: str, sending: Sending) -> Delivery:
        """Send the message, retrying transient failures; never raises for the channel's failure."""
        raise NotImplementedError
