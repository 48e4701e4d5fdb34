"""Sending one message to one channel. ``CHANNELS`` is every kind a ``[channels.NAME]`` table may name,
each one module of this package (``base.Kind``): e-mail, or a WeCom, DingTalk or Feishu group robot
(``webhook.Robot``). A new kind is a module and a line here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

from planner.alerts.channels.base import Channel, Delivery, Kind, Post, Sending, SendPolicy, policy_from
from planner.alerts.channels.dingtalk import DINGTALK
from planner.alerts.channels.email import EMAIL
from planner.alerts.channels.feishu import FEISHU
from planner.alerts.channels.wecom import WECOM
from planner.config import Config

# In the order errors and hints list them: the first is the example.
CHANNELS: dict[str, Kind] = {kind.name: kind for kind in (WECOM, DINGTALK, FEISHU, EMAIL)}


def deliver(
    channel: Channel,
    title: str,
    markdown: str,
    *,
    config: Config,
    alerts: int = 0,
    env: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    post: Post | None = None,
    policy: SendPolicy | None = None,
) -> Delivery:
    """Send the message, retrying transient failures; never raises for the channel's failure."""
    sending = Sending(
        config=config,
        alerts=alerts,
        env=os.environ if env is None else env,
        policy=policy or policy_from(config),
        clock=clock,
        sleep=sleep,
        post=post,
    )
    return CHANNELS[channel.kind].send(channel, title, markdown, sending)


def add_channel_hint(name: str) -> str:
    """How to add the missing channel ``name``."""
    first, *others = CHANNELS
    return f'add [channels.{name}] with kind = "{first}" (or {", ".join(others)})'
