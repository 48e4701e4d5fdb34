"""A robot's HTTP error keeps the platform's reason: WeCom, DingTalk and Feishu robots on loopback
answer 4xx with their documented error bodies (or a gateway's page), and the channel's error names
the code and message, or a short excerpt: bounded, control characters neutralised, no secret."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from planner.alerts.channels import deliver
from planner.alerts.channels.base import Channel, SendPolicy
from planner.alerts.channels.webhook import MAX_ERROR_CHARS
from planner.config import load_config
from tests.helpers.alerts import (
    DING_SECRET,
    DING_TOKEN,
    FEISHU_BAD_SIGN,
    FEISHU_SECRET,
    WECOM_BAD_KEY,
    WECOM_KEY,
    RobotServer,
)

# The platforms' documented error answers (WeCom error code list, DingTalk custom robot error codes,
# Feishu custom bot guide), as they come with an HTTP 4xx status.
DOCUMENTED = {
    "wecom": (
        WECOM_BAD_KEY,
        "wecom error 93000: invalid webhook url, hint: [1700000000_1_abc]",
    ),
    "dingtalk": (
        {"errcode": 300001, "errmsg": "token is not exist"},
        "dingtalk error 300001: token is not exist",
    ),
    "feishu": (
        FEISHU_BAD_SIGN,
        "feishu error 19021: sign match fail or timestamp is not within one hour from current time",
    ),
}
CHANNELS = {
    "wecom": Channel("WE", "wecom"),
    "dingtalk": Channel("DING", "dingtalk"),
    "feishu": Channel("FS", "feishu"),
}
FAST = SendPolicy(attempts=3, backoff_s=0, connect_timeout_s=2, read_timeout_s=5)


@pytest.fixture
def robots() -> Iterator[RobotServer]:
    server = RobotServer()
    yield server
    server.close()


def env_of(robots: RobotServer) -> dict[str, str]:
    return {
        "PLANNER_WEBHOOK_WE": robots.wecom_url,
        "PLANNER_WEBHOOK_DING": robots.dingtalk_url,
        "PLANNER_WEBHOOK_DING_SECRET": DING_SECRET,
        "PLANNER_WEBHOOK_FS": robots.feishu_url,
        "PLANNER_WEBHOOK_FS_SECRET": FEISHU_SECRET,
    }


def send(robots: RobotServer, kind: str):
    return deliver(
        CHANNELS[kind],
        "planner: 1 GPU alert(s)",
        "### planner: 1 GPU alert(s)\n\n**cheap-h800**: H800 under 9 CNY/GPU-h\n",
        config=load_config(),
        env=env_of(robots),
        sleep=lambda s: None,
        policy=FAST,
        alerts=1,
    )


@pytest.mark.parametrize("kind", sorted(DOCUMENTED))
def test_a_4xx_answer_names_the_platforms_code_and_message(robots, kind):
    body, said = DOCUMENTED[kind]
    robots.script.append((400, body))
    delivery = send(robots, kind)
    assert not delivery.ok and delivery.attempts == 1  # refused: not retried
    assert delivery.error.startswith(said), delivery.error
    assert "HTTP 400" not in delivery.error


@pytest.mark.parametrize("kind", sorted(DOCUMENTED))
def test_a_4xx_page_without_a_code_is_quoted_short_and_safe(robots, kind):
    page = (
        "<html><title>403 Forbidden</title>\x1b[2J\x1b]0;owned\x07 \u202eblocked by gateway policy\n"
        f"for {robots.wecom_url} {robots.dingtalk_url} {robots.feishu_url} {DING_SECRET} {FEISHU_SECRET}"
        + " padding" * 5000
        + "</html>"
    )
    robots.script.append((403, page.encode()))
    delivery = send(robots, kind)
    assert not delivery.ok and delivery.attempts == 1
    error = delivery.error
    assert error.startswith(f"the {kind} webhook ") and "HTTP 403: " in error  # whose, the status
    assert "<title>403 Forbidden</title>" in error  # the answer, quoted
    assert "blocked by gateway policy" in error
    assert len(error) <= MAX_ERROR_CHARS
    assert not any(c in error for c in "\x1b\x07\u202e\n")
    for secret in (WECOM_KEY, DING_TOKEN, DING_SECRET, FEISHU_SECRET, robots.base, "127.0.0.1"):
        assert secret not in error


def test_a_json_4xx_without_a_platform_code_is_quoted(robots):
    robots.script.append((404, {"error": "no such bot", "status": 404}))
    delivery = send(robots, "feishu")
    assert delivery.error.startswith("the feishu webhook ") and "HTTP 404: " in delivery.error
    assert delivery.error.endswith('{"error": "no such bot", "status": 404}')  # the body, quoted


def test_a_server_error_is_retried_and_its_last_answer_quoted(robots):
    robots.script += [(502, b"<html>bad gateway</html>")] * 3
    delivery = send(robots, "wecom")
    assert not delivery.ok and delivery.attempts == 3
    assert delivery.error.startswith("the wecom webhook ") and "HTTP 502: " in delivery.error
    assert "<html>bad gateway</html>" in delivery.error and delivery.error.endswith("(tried 3 times)")


def test_alerts_test_prints_the_reason_feishu_gave(run_cli, robots, tmp_path, monkeypatch):
    config = tmp_path / "alerts.toml"
    config.write_text('[channels.fs]\nkind = "feishu"\n', encoding="utf-8")
    monkeypatch.setenv("PLANNER_WEBHOOK_FS", robots.feishu_url)
    monkeypatch.setenv("PLANNER_WEBHOOK_FS_SECRET", FEISHU_SECRET)
    robots.script.append((400, DOCUMENTED["feishu"][0]))
    result = run_cli("--config", str(config), "alerts", "test", "fs")
    assert result.exit_code == 1
    assert "feishu error 19021" in result.output and "sign match fail" in result.output  # code, reason
    assert FEISHU_SECRET not in result.output and robots.feishu_url not in result.output
    runs = json.loads(run_cli("runs", "--format", "json").stdout)["runs"]
    assert "19021" in runs[0]["error"]
