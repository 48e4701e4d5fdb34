"""Channels: each robot's documented request body and signature, checked by a real HTTP server on
loopback that answers with each platform's documented success and error bodies; retries; e-mail."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from planner.alerts.channels import deliver
from planner.alerts.channels.base import Channel, SendPolicy
from planner.alerts.channels.dingtalk import DINGTALK
from planner.alerts.channels.dingtalk import sign as dingtalk_sign
from planner.alerts.channels.feishu import FEISHU
from planner.alerts.channels.feishu import sign as feishu_sign
from planner.config import load_config
from tests.helpers.alerts import (
    DING_OK,
    DING_SECRET,
    DING_TOKEN,
    FEISHU_OK,
    FEISHU_SECRET,
    WECOM_KEY,
    WECOM_OK,
    RobotServer,
)

WECOM_TOO_FAST = {"errcode": 45009, "errmsg": "api freq out of limit"}
FEISHU_OK_OLD = {"Extra": None, "StatusCode": 0, "StatusMessage": "success"}


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
    url, _ = DINGTALK.build_request(
        "https://oapi.dingtalk.com/robot/send?access_token=T", "secret", "t", "x", 1_700_000_000
    )
    assert url.endswith("&timestamp=1700000000000&sign=OuzzJR5%2BxZ4%2FEYwqtNt6sMYZQMTa%2FHEGvc9miJe7XzY%3D")


def test_feishu_signature_is_hmac_keyed_with_timestamp_and_secret_over_nothing():
    expected = base64.b64encode(hmac.new(b"1599360473\nabc", b"", hashlib.sha256).digest()).decode()
    assert feishu_sign("1599360473", "abc") == expected
    _, body = FEISHU.build_request("https://x/hook/h", "abc", "title", "### title\n\nbody", 1599360473.9)
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
    assert "cannot reach the wecom webhook" in delivery.error and "127.0.0.1" in delivery.error
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
    from tests.helpers.smtp import Recorder, smtp_server

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
