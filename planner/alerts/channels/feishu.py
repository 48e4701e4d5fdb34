"""Feishu/Lark custom bot (open.feishu.cn/document/client-docs/bot-v3/add-custom-bot): an
``interactive`` card with a markdown element (at most 30 KB); signed mode adds ``"timestamp": "<s>"``
and ``"sign"`` to the body, sign = base64 of HMAC-SHA256 keyed with "<timestamp>\\n<secret>" over an
empty message; answers ``{"code": 0, "msg": "success"}`` (older bots: ``{"StatusCode": 0}``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

from planner.alerts.channels.webhook import Robot


class Feishu(Robot):
    name = "feishu"
    max_bytes = 28_000
    signed = True
    retryable_codes = frozenset({11232})  # 11232: frequency limited
    code_hints = {
        19021: "signature check failed (or the clock is off by over an hour): check "
        "PLANNER_WEBHOOK_{NAME}_SECRET",
        19022: "the bot only accepts listed IP addresses",
        19024: "the message lacks the bot's keyword: add it to the bot or remove the check",
        9499: "the bot refused the request body",
    }

    def build_request(
        self, url: str, secret: str | None, title: str, markdown: str, now_s: float
    ) -> tuple[str, bytes]:
        # the card's header shows the title: the markdown's own heading line would repeat it
        content = markdown.split("\n", 1)[1].lstrip("\n") if markdown.startswith("### ") else markdown
        body: dict[str, Any] = {
            "msg_type": "interactive",
            "card": {
                "header": {"title": {"tag": "plain_text", "content": title}},
                "elements": [{"tag": "markdown", "content": content}],
            },
        }
        if secret:
            timestamp = str(int(now_s))
            body = {"timestamp": timestamp, "sign": sign(timestamp, secret), **body}
        return url, json.dumps(body, ensure_ascii=False).encode("utf-8")

    def reply_code(self, reply: Mapping[str, Any]) -> tuple[Any, Any]:
        return reply.get("code", reply.get("StatusCode")), reply.get("msg", reply.get("StatusMessage"))


def sign(timestamp_s: str, secret: str) -> str:
    """Base64 HMAC-SHA256 keyed with "<timestamp>\\n<secret>" over an empty message."""
    digest = hmac.new(f"{timestamp_s}\n{secret}".encode(), b"", hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


FEISHU = Feishu()
