"""With ``[locale] language = "zh"`` the team reads Chinese: the alert message a WeCom robot on loopback
receives (decoded from the request it got), a late message, and the digest; the JSON of ``alerts
check`` stays English for scripts."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from tests.alerts.test_alerts_replay import DAY1, DAY2, at, check, refresh
from tests.helpers.alerts import (
    AFTER,
    BEFORE,
    CONFIG,
    DING_SECRET,
    recorded_now,
)


@pytest.fixture
def chinese(tmp_path) -> Path:
    path = tmp_path / "alerts.toml"
    path.write_text('[locale]\nlanguage = "zh"\n' + CONFIG, encoding="utf-8")
    return path


def test_a_wecom_alert_arrives_in_chinese(run_cli, chinese, robots, monkeypatch):
    at(monkeypatch, DAY1)
    refresh(run_cli, chinese, BEFORE)
    at(monkeypatch, DAY2)
    refresh(run_cli, chinese, AFTER)
    request = next(r for r in robots.requests if r["kind"] == "wecom")
    raw = request["raw"]
    content = json.loads(raw.decode("utf-8"))["markdown"]["content"]  # as WeCom decodes it
    assert "按量付费".encode() in raw  # UTF-8 on the wire, not \\u escapes
    lines = content.splitlines()
    assert lines[0] == "### planner：4 条 GPU 提醒规则触发，涉及 4 个报价"
    assert "**cheap-4090-beijing**：4090 AutoDL beijing-A 低于 2.2 元/卡时" in lines
    rtx = next(line for line in lines if "beijing-A RTX 4090：" in line)
    assert "1.98 元/卡时（按量付费，按小时）" in rtx and "低于 2.2" in rtx
    h20 = next(line for line in lines if "west-B H20-NVLink：" in line)
    assert "库存：空闲 4/48" in h20 and "空闲 4 张卡（要求至少 4 张）" in h20
    assert "CNY/GPU-h" not in content and "on_demand" not in content
    feishu = next(r for r in robots.requests if r["kind"] == "feishu")
    assert "新上架" in json.dumps(feishu["body"], ensure_ascii=False)


def test_scripts_still_read_english_json(run_cli, chinese, robots, monkeypatch):
    at(monkeypatch, DAY1)
    refresh(run_cli, chinese, BEFORE, "--no-alerts")
    at(monkeypatch, DAY2)
    refresh(run_cli, chinese, AFTER, "--no-alerts")
    doc = check(run_cli, chinese, "--dry-run")
    cheap = next(f for f in doc["fired"] if f["rule"] == "cheap-4090-beijing")
    assert cheap["description"] == "4090 autodl beijing-A under 2.2 CNY/GPU-h"
    assert cheap["reason"].endswith("CNY/GPU-h, under 2.2") and cheap["billing"] == "on_demand"


def test_a_late_alert_says_so_in_chinese(run_cli, chinese, robots, monkeypatch):
    at(monkeypatch, DAY1)
    refresh(run_cli, chinese, BEFORE)
    at(monkeypatch, DAY2)
    monkeypatch.setenv("PLANNER_WEBHOOK_DING_SECRET", "SECnot-the-right-secret-at-all")
    refresh(run_cli, chinese, AFTER)
    monkeypatch.setenv("PLANNER_WEBHOOK_DING_SECRET", DING_SECRET)
    robots.requests.clear()
    at(monkeypatch, DAY2 + dt.timedelta(hours=1))
    check(run_cli, chinese)
    text = robots.requests[0]["body"]["markdown"]["text"]
    assert "补发，首次触发于 2026-12-02" in text and "重新有货" in text


def test_lang_flag_beats_the_setting_for_one_command(run_cli, chinese, robots, monkeypatch):
    at(monkeypatch, DAY1)
    refresh(run_cli, chinese, BEFORE)
    at(monkeypatch, DAY2)
    folder = recorded_now(AFTER)
    result = run_cli(
        "--lang", "en", "--config", str(chinese), "refresh", "--from-raw", str(folder), "--provider", "autodl"
    )
    shutil.rmtree(folder.parent, ignore_errors=True)
    assert result.exit_code == 0, result.output
    content = next(r for r in robots.requests if r["kind"] == "wecom")["body"]["markdown"]["content"]
    assert content.startswith("### planner: 4 GPU alert(s), 4 offer(s)") and "按量付费" not in content
