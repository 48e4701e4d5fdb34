"""DingTalk custom robot (open.dingtalk.com/document/robots/custom-robot-access): ``{"msgtype":
"markdown", "markdown": {"title", "text"}}`` (at most 20,000 bytes); signed mode adds
``&timestamp=<ms>&sign=<s>`` to the URL, s = URL-encoded base64 of HMAC-SHA256(key=secret,
"<timestamp>\\n<secret>"); answers ``{"errcode": 0, "errmsg": "ok"}``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import urllib.parse
from typing import Any

from planner.alerts.channels.webhook import Robot


class DingTalk(Robot):
    name = "dingtalk"
    max_bytes = 19_000
    signed = True
    retryable_codes = frozenset({-1, 130101})  # 130101: sending too fast
    code_hints = {
        310000: "keyword, signature or IP check failed: check the robot's security settings "
        "and PLANNER_WEBHOOK_{NAME}_SECRET (a signed robot needs it)",
        300001: "the access_token is not valid: check PLANNER_WEBHOOK_{NAME}",
        400102: "the robot is switched off in the group settings",
        130101: "DingTalk takes at most 20 messages a minute per robot",
    }

    def build_request(
        self, url: str, secret: str | None, title: str, markdown: str, now_s: float
    ) -> tuple[str, bytes]:
        body: dict[str, Any] = {"msgtype": "markdown", "markdown": {"title": title, "text": markdown}}
        if secret:
            timestamp = str(int(now_s * 1000))
            query = urllib.parse.urlencode({"timestamp": timestamp, "sign": sign(timestamp, secret)})
            url = f"{url}{'&' if '?' in url else '?'}{query}"
        return url, json.dumps(body, ensure_ascii=False).encode("utf-8")


def sign(timestamp_ms: str, secret: str) -> str:
    """Base64 HMAC-SHA256 keyed with the secret over "<timestamp>\\n<secret>" (not yet URL-encoded:
    ``urlencode`` does that once, as the docs' ``quote_plus`` does)."""
    digest = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


DINGTALK = DingTalk()
