"""Fake WeCom, DingTalk and Feishu robots, and the recorded alerts replay with its config."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import shutil
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from db import store
from tests.helpers.replay import FIXTURES

WECOM_KEY = "693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa"
DING_TOKEN = "d5f1c0a3b2e4f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1"
DING_SECRET = "SEC7f3c2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b"
FEISHU_HOOK = "2f5b7c1e-0d3a-4b6c-9e8f-a1b2c3d4e5f6"
FEISHU_SECRET = "qT8mZ3vK1xR7pL2nW9sY4"

# The documented answers (WeCom /document/path/91770 and its error code list; DingTalk custom robot
# access and its error codes; Feishu custom bot guide).
WECOM_OK = {"errcode": 0, "errmsg": "ok"}
WECOM_BAD_KEY = {"errcode": 93000, "errmsg": "invalid webhook url, hint: [1700000000_1_abc]"}
DING_OK = {"errcode": 0, "errmsg": "ok"}

DING_BAD_SIGN = {
    "errcode": 310000,
    "errmsg": "sign not match, more: [https://ding-doc.dingtalk.com/doc#/serverapi2/qf2nxq]",
}

FEISHU_OK = {"code": 0, "data": {}, "msg": "success"}

FEISHU_BAD_SIGN = {
    "code": 19021,
    "data": {},
    "msg": "sign match fail or timestamp is not within one hour from current time",
}


class RobotServer:
    """WeCom, DingTalk and Feishu robots in one loopback server. Each request is checked against the
    platform's documented format and signature (recomputed here from the documented algorithm) and
    answered as the platform would; ``script`` forces the next answers (status, body)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[tuple[int, Any]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                status, answer = server.answer(self.path, self.headers.get("Content-Type", ""), raw)
                data = json.dumps(answer).encode() if not isinstance(answer, bytes) else answer
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.httpd.server_close()
            self.thread.join()

    @property
    def wecom_url(self) -> str:
        return f"{self.base}/cgi-bin/webhook/send?key={WECOM_KEY}"

    @property
    def dingtalk_url(self) -> str:
        return f"{self.base}/robot/send?access_token={DING_TOKEN}"

    @property
    def feishu_url(self) -> str:
        return f"{self.base}/open-apis/bot/v2/hook/{FEISHU_HOOK}"

    def answer(self, path: str, content_type: str, raw: bytes) -> tuple[int, Any]:
        parts = urllib.parse.urlsplit(path)
        query = urllib.parse.parse_qs(parts.query)
        body = json.loads(raw.decode("utf-8"))
        kind = (
            "wecom"
            if parts.path.startswith("/cgi-bin")
            else "dingtalk"
            if parts.path.startswith("/robot")
            else "feishu"
        )
        self.requests.append({"kind": kind, "path": parts.path, "query": query, "body": body, "raw": raw})
        assert content_type.startswith("application/json")
        if self.script:
            return self.script.pop(0)
        if kind == "wecom":
            return 200, self.wecom(query, body)
        if kind == "dingtalk":
            return 200, self.dingtalk(query, body)
        return 200, self.feishu(parts.path, body)

    def wecom(self, query: dict[str, list[str]], body: dict[str, Any]) -> dict[str, Any]:
        if query.get("key") != [WECOM_KEY]:
            return WECOM_BAD_KEY
        ok = body.get("msgtype") == "markdown" and isinstance(body["markdown"].get("content"), str)
        if not ok or len(body["markdown"]["content"].encode()) > 4096:
            return {"errcode": 40008, "errmsg": "invalid message type"}
        return WECOM_OK

    def dingtalk(self, query: dict[str, list[str]], body: dict[str, Any]) -> dict[str, Any]:
        if query.get("access_token") != [DING_TOKEN]:
            return {"errcode": 300001, "errmsg": "token is not exist"}
        timestamp, sign = query.get("timestamp", [""])[0], query.get("sign", [""])[0]
        expected = base64.b64encode(
            hmac.new(DING_SECRET.encode(), f"{timestamp}\n{DING_SECRET}".encode(), hashlib.sha256).digest()
        ).decode()
        if sign != expected or abs(time.time() * 1000 - int(timestamp or 0)) > 3_600_000:
            return DING_BAD_SIGN
        markdown = body.get("markdown") or {}
        if body.get("msgtype") != "markdown" or not markdown.get("title") or not markdown.get("text"):
            return {"errcode": 40035, "errmsg": "缺少参数 json"}
        return DING_OK

    def feishu(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if not path.endswith(FEISHU_HOOK):
            return {"code": 19001, "data": {}, "msg": "param invalid: incoming webhook access token invalid"}
        timestamp = body.get("timestamp", "")
        expected = base64.b64encode(
            hmac.new(f"{timestamp}\n{FEISHU_SECRET}".encode(), b"", hashlib.sha256).digest()
        ).decode()
        if not isinstance(timestamp, str) or body.get("sign") != expected:
            return FEISHU_BAD_SIGN
        if abs(time.time() - int(timestamp)) > 3600:
            return FEISHU_BAD_SIGN
        card = body.get("card") or {}
        elements = card.get("elements") or []
        ok = body.get("msg_type") == "interactive" and elements and elements[0].get("tag") == "markdown"
        if not ok or not card["header"]["title"]["content"]:
            return {"code": 9499, "data": {}, "msg": "Bad Request"}
        return FEISHU_OK


BEFORE = FIXTURES / "alerts" / "before"
AFTER = FIXTURES / "raw"

CONFIG = """
[http]
retries = 1
backoff_s = 0

[[alerts]]
name = "cheap-4090-beijing"
gpu = "4090"
provider = "autodl"
region = "beijing-A"
below_cny_per_gpu_hour = 2.2
channels = ["team", "ding"]

[[alerts]]
name = "4090-drop"
gpu = "RTX4090"
drop_percent = 20
window_days = 7
channels = ["team"]

[[alerts]]
name = "h20-idle"
gpu = "H20"
idle_gpus_at_least = 4
channels = ["team"]

[[alerts]]
name = "h20-back"
gpu = "H20"
back_in_stock = true
channels = ["ding"]

[[alerts]]
name = "anything-new"
new_offers = true
channels = ["team", "fs"]

[channels.team]
kind = "wecom"

[channels.ding]
kind = "dingtalk"

[channels.fs]
kind = "feishu"
"""


def recorded_now(folder: Path) -> Path:
    """A copy of ``folder``'s AutoDL recording, recorded at the test's clock (``store.utcnow``): a
    replay stores its prices as of their recording."""
    copy = Path(tempfile.mkdtemp(prefix="alerts-replay-")) / folder.name
    shutil.copytree(folder / "autodl", copy / "autodl")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["providers"] = {"autodl": manifest["providers"]["autodl"]}
    manifest["providers"]["autodl"]["recorded_at"] = store.utcnow().isoformat() + "Z"
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return copy
