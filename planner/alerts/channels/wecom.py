"""WeCom group robot (developer.work.weixin.qq.com/document/path/91770): ``{"msgtype": "markdown",
"markdown": {"content": ...}}`` (at most 4,096 bytes), unsigned; answers ``{"errcode": 0, "errmsg": "ok"}``.
"""

from __future__ import annotations

import json

from planner.alerts.channels.webhook import Robot


class WeCom(Robot):
    name = "wecom"
    max_bytes = 4000
    retryable_codes = frozenset({-1, 45009})  # 45009: over 20 messages a minute
    code_hints = {
        93000: "the webhook key is not valid (robot removed?): check PLANNER_WEBHOOK_{NAME}",
        45009: "WeCom takes at most 20 messages a minute per robot",
    }

    def build_request(
        self, url: str, secret: str | None, title: str, markdown: str, now_s: float
    ) -> tuple[str, bytes]:
        body = {"msgtype": "markdown", "markdown": {"content": markdown}}
        return url, json.dumps(body, ensure_ascii=False).encode("utf-8")


WECOM = WeCom()
