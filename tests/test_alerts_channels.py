"""Channels: each robot's documented request body and signature, checked by a real HTTP server on
loopback that answers with each platform's documented success and error bodies; retries; e-mail."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from planner.alerts.channels import (
    SendPolicy,
    build_request,
    deliver,
    dingtalk_sign,
    feishu_sign,
)
from planner.alerts.rules import Channel
from planner.config import load_config

WECOM_KEY = "693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa"
DING_TOKEN = "d5f1c0a3b2e4f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1"
DING_SECRET = "SEC7f3c2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b"
FEISHU_HOOK = "2f5b7c1e-0d3a-4b6c-9e8f-a1b2c3d4e5f6"
FEISHU_SECRET = "qT8mZ3vK1xR7pL2nW9sY4"

# The documented answers (WeCom /document/path/91770 and its error code list; DingTalk custom robot
# access and its error codes; Feishu custom bot guide).
WECOM_OK = {"errcode": 0, "errmsg": "ok"}
WECOM_BAD_KEY = {"errcode": 93000, "errmsg": "invalid webhook url, hint: [1700000000_1_abc]"}
WECOM_TOO_FAST = {"errcode": 45009, "errmsg": "api freq out of limit"}
DING_OK = {"errcode": 0, "errmsg": "ok"}
DING_BAD_SIGN = {
    "errcode": 310000,
    "errmsg": "sign not match, more: [https://ding-doc.dingtalk.com/doc#/serverapi2/qf2nxq]",
}
FEISHU_OK = {"code": 0, "data": {}, "msg": "success"}
FEISHU_OK_OLD = {"Extra": None, "StatusCode": 0, "StatusMessage": "success"}
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
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
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


@pytest.fixture
def robots() -> Iterator[RobotServer]:
    server = RobotServer()
    yield server
    server.close()


FAST = SendPolicy(attempts=3, backoff_s=0.5, connect_timeout_s=2, read_timeout_s=5)


def _env(robots: RobotServer, **extra: str) -> dict[str, str]:
    env = {
        "PLANNER_WEBHOOK_WE": robots.wecom_url,
        "PLANNER_WEBHOOK_DING": robots.dingtalk_url,
        "PLANNER_WEBHOOK_DING_SECRET": DING_SECRET,
        "PLANNER_WEBHOOK_FS": robots.feishu_url,
        "PLANNER_WEBHOOK_FS_SECRET": FEISHU_SECRET,
    }
    env.update(extra)
    return env


def _send(robots: RobotServer, channel: Channel, env: dict[str, str] | None = None, **kw: Any):
    waits: list[float] = []
    delivery = deliver(
        channel,
        "planner: 1 GPU alert(s)",
        "### planner: 1 GPU alert(s)\n\n**cheap-h800**: H800 under 9 CNY/GPU-h\n- autodl west-B H800\n",
        config=load_config(),
        env=env if env is not None else _env(robots),
        sleep=waits.append,
        policy=FAST,
        alerts=1,
        **kw,
    )
    return delivery, waits


def test_dingtalk_signature_matches_a_published_example():
    # The dingding crate's test (docs.rs/crate/dingding, src/signature.rs): timestamp 1700000000000,
    # secret "secret" -> "OuzzJR5%2BxZ4%2FEYwqtNt6sMYZQMTa%2FHEGvc9miJe7XzY%3D" once URL-encoded.
    sign = dingtalk_sign("1700000000000", "secret")
    assert urllib.parse.quote_plus(sign) == "OuzzJR5%2BxZ4%2FEYwqtNt6sMYZQMTa%2FHEGvc9miJe7XzY%3D"
    url, _ = build_request(
        "dingtalk", "https://oapi.dingtalk.com/robot/send?access_token=T", "secret", "t", "x", 1_700_000_000
    )
    assert url.endswith("&timestamp=1700000000000&sign=OuzzJR5%2BxZ4%2FEYwqtNt6sMYZQMTa%2FHEGvc9miJe7XzY%3D")


def test_feishu_signature_is_hmac_keyed_with_timestamp_and_secret_over_nothing():
    expected = base64.b64encode(hmac.new(b"1599360473\nabc", b"", hashlib.sha256).digest()).decode()
    assert feishu_sign("1599360473", "abc") == expected
    _, body = build_request("feishu", "https://x/hook/h", "abc", "title", "### title\n\nbody", 1599360473.9)
    doc = json.loads(body)
    assert doc["timestamp"] == "1599360473" and doc["sign"] == expected
    assert doc["card"]["elements"] == [{"tag": "markdown", "content": "body"}]


@pytest.mark.parametrize(
    ("name", "kind", "success"),
    [("WE", "wecom", WECOM_OK), ("DING", "dingtalk", DING_OK), ("FS", "feishu", FEISHU_OK)],
)
def test_each_robot_accepts_the_documented_request(robots, name, kind, success):
    delivery, waits = _send(robots, Channel(name, kind))
    assert delivery.ok and delivery.attempts == 1 and waits == [], delivery.error
    request = robots.requests[-1]
    assert request["kind"] == kind
    if kind == "wecom":
        assert request["body"] == {
            "msgtype": "markdown",
            "markdown": {"content": request["body"]["markdown"]["content"]},
        }
        assert "**cheap-h800**" in request["body"]["markdown"]["content"]
    if kind == "dingtalk":
        assert request["body"]["markdown"]["title"] == "planner: 1 GPU alert(s)"
        assert set(request["query"]) == {"access_token", "timestamp", "sign"}
    if kind == "feishu":
        assert request["body"]["card"]["header"]["title"]["content"] == "planner: 1 GPU alert(s)"


def test_feishu_older_success_body_counts_as_sent(robots):
    robots.script.append((200, FEISHU_OK_OLD))
    delivery, _ = _send(robots, Channel("FS", "feishu"))
    assert delivery.ok


def test_a_wrong_secret_is_a_failure_despite_http_200_and_is_not_retried(robots):
    env = _env(
        robots,
        PLANNER_WEBHOOK_DING_SECRET="SECwrong0000000000000000",
        PLANNER_WEBHOOK_FS_SECRET="wrong-secret-000",
    )
    ding, waits = _send(robots, Channel("DING", "dingtalk"), env)
    assert not ding.ok and ding.attempts == 1 and waits == []
    assert (
        "dingtalk error 310000: sign not match" in ding.error and "PLANNER_WEBHOOK_DING_SECRET" in ding.error
    )
    feishu, _ = _send(robots, Channel("FS", "feishu"), env)
    assert not feishu.ok and "feishu error 19021" in feishu.error
    unsigned, _ = _send(robots, Channel("DING", "dingtalk"), {"PLANNER_WEBHOOK_DING": robots.dingtalk_url})
    assert not unsigned.ok and "310000" in unsigned.error


def test_a_wrong_wecom_key_names_the_variable_never_the_key(robots):
    env = _env(robots, PLANNER_WEBHOOK_WE=f"{robots.base}/cgi-bin/webhook/send?key=0000-wrong-key-1111")
    delivery, _ = _send(robots, Channel("WE", "wecom"), env)
    assert not delivery.ok and "93000" in delivery.error and "PLANNER_WEBHOOK_WE" in delivery.error
    assert "0000-wrong-key-1111" not in delivery.error and robots.base not in delivery.error


def test_rate_limits_and_server_errors_are_retried_with_growing_pauses(robots):
    robots.script += [(200, WECOM_TOO_FAST), (502, b"<html>bad gateway</html>")]
    delivery, waits = _send(robots, Channel("WE", "wecom"))
    assert delivery.ok and delivery.attempts == 3
    assert waits == [0.5, 1.0]
    robots.script += [(503, b"")] * 3
    delivery, waits = _send(robots, Channel("WE", "wecom"))
    assert (
        not delivery.ok
        and delivery.attempts == 3
        and "HTTP 503" in delivery.error
        and "tried 3 times" in delivery.error
    )


def test_an_unreachable_host_is_retried_and_reported_without_the_url(robots):
    port = robots.httpd.server_address[1]
    robots.close()
    env = {"PLANNER_WEBHOOK_WE": f"http://127.0.0.1:{port}/cgi-bin/webhook/send?key={WECOM_KEY}"}
    delivery, waits = _send(robots, Channel("WE", "wecom"), env)
    assert not delivery.ok and delivery.attempts == 3 and len(waits) == 2
    assert "cannot reach the wecom webhook host 127.0.0.1" in delivery.error
    assert WECOM_KEY not in delivery.error


def test_a_missing_url_is_a_failure_naming_the_variable(robots):
    delivery, _ = _send(robots, Channel("team", "wecom"), {})
    assert not delivery.ok and delivery.attempts == 0
    assert delivery.error.startswith("PLANNER_WEBHOOK_TEAM is not set")


def test_an_echoed_secret_in_an_error_body_is_masked(robots):
    robots.script.append(
        (200, {"errcode": 310000, "errmsg": f"bad sign for {DING_TOKEN} with {DING_SECRET}"})
    )
    delivery, _ = _send(robots, Channel("DING", "dingtalk"))
    assert not delivery.ok
    assert DING_TOKEN not in delivery.error and DING_SECRET not in delivery.error and "***" in delivery.error


def test_email_channel_goes_through_the_report_mailer(tmp_path):
    from tests.test_email import Recorder, smtp_server

    handler = Recorder(busy=1)
    with smtp_server(handler) as port:
        cfg = tmp_path / "mail.toml"
        cfg.write_text(
            f'[email]\nsmtp_host = "127.0.0.1"\nsmtp_port = {port}\nstarttls = false\n'
            'recipients = ["ops@example.com"]\n',
            encoding="utf-8",
        )
        waits: list[float] = []
        delivery = deliver(
            Channel("mail", "email"),
            "planner: 1 GPU alert(s)",
            "**cheap-h800**: H800 under 9\n",
            config=load_config(cfg),
            env={},
            sleep=waits.append,
            policy=FAST,
            alerts=1,
        )
    assert delivery.ok, delivery.error
    assert waits == [0.5]  # the server's first "451 busy" was retried after the policy's pause
    assert len(handler.messages) == 1
    _sender, rcpts, raw = handler.messages[0]
    assert rcpts == ["ops@example.com"] and b"cheap-h800" in raw and b"planner: 1 GPU alert(s)" in raw
