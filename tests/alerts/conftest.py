"""What the alert tests share: the WeCom, DingTalk and Feishu robots on loopback, named to the alerts'
channels (team, ding, fs of ``tests.helpers.alerts.CONFIG``) through the environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.alerts import DING_SECRET, FEISHU_SECRET, RobotServer


@pytest.fixture
def robots(monkeypatch: pytest.MonkeyPatch) -> Iterator[RobotServer]:
    server = RobotServer()
    monkeypatch.setenv("PLANNER_WEBHOOK_TEAM", server.wecom_url)
    monkeypatch.setenv("PLANNER_WEBHOOK_DING", server.dingtalk_url)
    monkeypatch.setenv("PLANNER_WEBHOOK_DING_SECRET", DING_SECRET)
    monkeypatch.setenv("PLANNER_WEBHOOK_FS", server.feishu_url)
    monkeypatch.setenv("PLANNER_WEBHOOK_FS_SECRET", FEISHU_SECRET)
    yield server
    server.close()
