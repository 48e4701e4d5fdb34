"""Alerts end to end: two replayed refreshes (``tests/fixtures/alerts/before``, then
``tests/fixtures/raw``, a day apart) make each rule kind fire exactly once, to WeCom, DingTalk and Feishu
robots on loopback; a failing or killed channel loses no alert."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from db import store
from tests.helpers.alerts import AFTER, BEFORE, CONFIG, DING_SECRET, recorded_now
from tests.helpers.cli import line_of

FIXTURES = Path(__file__).parents[1] / "fixtures"
DAY1 = dt.datetime(2026, 12, 1, 2, 0)
DAY2 = dt.datetime(2026, 12, 2, 2, 0)

EXPECTED = {
    "cheap-4090-beijing": ["autodl/beijing-A/RTX 4090/on_demand"],
    "4090-drop": ["autodl/beijing-A/RTX 4090/on_demand"],
    "h20-idle": ["autodl/west-B/H20-NVLink/on_demand"],
    "h20-back": ["autodl/west-B/H20-NVLink/on_demand"],
    "anything-new": ["autodl/beijing-A/V100-32GB/on_demand"],
}


@pytest.fixture
def config(tmp_path) -> Path:
    path = tmp_path / "alerts.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def at(monkeypatch, when: dt.datetime) -> None:
    monkeypatch.setattr(store, "utcnow", lambda: when)


def refresh(run_cli, config: Path, folder: Path, *extra: str):
    folder = recorded_now(folder)
    result = run_cli(
        "--config", str(config), "refresh", "--from-raw", str(folder), "--provider", "autodl", *extra
    )
    shutil.rmtree(folder.parent, ignore_errors=True)
    assert result.exit_code == 0, result.output
    return result


def check(run_cli, config: Path, *extra: str) -> dict:
    result = run_cli("--config", str(config), "alerts", "check", "--format", "json", *extra)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def fired(doc: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in doc["fired"]:
        out.setdefault(f["rule"], []).append(f["key"])
    return out


def test_each_rule_kind_fires_exactly_once_over_a_replayed_pair_of_refreshes(
    run_cli, config, robots, monkeypatch
):
    at(monkeypatch, DAY1)
    first = refresh(run_cli, config, BEFORE)
    assert "alerts: 0 fired" in first.stderr
    assert robots.requests == []

    at(monkeypatch, DAY2)
    second = refresh(run_cli, config, AFTER)
    assert "alerts: 5 fired" in second.stderr
    assert "alerts: sent 4 alert(s) to team (wecom)" in second.stderr
    # One message per channel, listing every alert that fired for it.
    assert sorted(r["kind"] for r in robots.requests) == ["dingtalk", "feishu", "wecom"]
    wecom = next(r for r in robots.requests if r["kind"] == "wecom")["body"]["markdown"]["content"]
    for rule in ("cheap-4090-beijing", "4090-drop", "h20-idle", "anything-new"):
        assert f"**{rule}**" in wecom
    assert "h20-back" not in wecom
    rtx = next(line for line in wecom.splitlines() if "autodl beijing-A RTX 4090:" in line)
    assert "1.98 CNY/GPU-h (on_demand, per hour)" in rtx  # the figure names its basis
    h20 = next(line for line in wecom.splitlines() if "autodl west-B H20-NVLink:" in line)
    assert "6.98 CNY/GPU-h" in h20 and "stock 4/48 idle" in h20
    ding = next(r for r in robots.requests if r["kind"] == "dingtalk")["body"]["markdown"]["text"]
    assert "**h20-back**" in ding and "**cheap-4090-beijing**" in ding and "4090-drop" not in ding

    # Nothing new: neither a check nor a later refresh the same day sends anything again.
    robots.requests.clear()
    again = check(run_cli, config)
    assert again["fired"] == [] and again["deliveries"] == []
    at(monkeypatch, DAY2 + dt.timedelta(hours=1))
    refresh(run_cli, config, AFTER)
    assert robots.requests == []

    listed = json.loads(run_cli("--config", str(config), "alerts", "list", "--format", "json").stdout)
    # Events (back in stock, new) held at the refresh that saw them; prices and idle GPUs still hold.
    holding = {r["name"]: r["holding_offers"] for r in listed["rules"]}
    assert holding == {
        "cheap-4090-beijing": 1,
        "4090-drop": 1,
        "h20-idle": 1,
        "h20-back": 0,
        "anything-new": 0,
    }
    assert all(c["url_set"] for c in listed["channels"])


def test_dry_run_shows_what_would_fire_and_records_nothing(run_cli, config, robots, monkeypatch):
    at(monkeypatch, DAY1)
    refresh(run_cli, config, BEFORE, "--no-alerts")
    at(monkeypatch, DAY2)
    refresh(run_cli, config, AFTER, "--no-alerts")
    assert robots.requests == []
    dry = check(run_cli, config, "--dry-run")
    assert fired(dry) == EXPECTED and dry["dry_run"] is True and dry["deliveries"] == []
    assert robots.requests == []
    table = run_cli("--config", str(config), "alerts", "check", "--dry-run")
    assert "5 alert(s) would fire" in table.stdout and "Dry run: nothing recorded" in table.stdout
    real = check(run_cli, config)
    assert fired(real) == EXPECTED and len(robots.requests) == 3
    csv_out = run_cli("--config", str(config), "alerts", "check", "--format", "csv").stdout
    assert csv_out.splitlines()[0].startswith("rule,provider,region,instance_type")


def test_a_failing_channel_keeps_its_alerts_and_blocks_neither_the_others_nor_the_refresh(
    run_cli, config, robots, monkeypatch
):
    at(monkeypatch, DAY1)
    refresh(run_cli, config, BEFORE)
    at(monkeypatch, DAY2)
    monkeypatch.setenv("PLANNER_WEBHOOK_DING_SECRET", "SECnot-the-right-secret-at-all")
    second = refresh(run_cli, config, AFTER)  # exit 0 all the same
    failed = next(line for line in second.stderr.splitlines() if "ding (dingtalk) failed" in line)
    assert "error 310000" in failed  # the robot's own error code
    assert sorted(r["kind"] for r in robots.requests) == ["dingtalk", "feishu", "wecom"]

    runs = json.loads(run_cli("runs", "--format", "json").stdout)["runs"]
    alert_runs = {r["source"]: r for r in runs if r["kind"] == "alert"}
    assert alert_runs["channel ding (dingtalk)"]["status"] == "failed"
    assert "310000" in alert_runs["channel ding (dingtalk)"]["error"]
    assert alert_runs["channel team (wecom)"]["status"] == "ok"
    assert alert_runs["channel team (wecom)"]["offers_seen"] == 4
    assert "SECnot-the-right" not in json.dumps(runs)
    listed = run_cli("--config", str(config), "alerts", "list").stdout
    assert "unsent" in listed

    # Fixed: the next check sends DingTalk what it missed (marked late), and nobody else anything.
    monkeypatch.setenv("PLANNER_WEBHOOK_DING_SECRET", DING_SECRET)
    robots.requests.clear()
    later = check(run_cli, config)
    assert later["fired"] == []
    assert [(d["channel"], d["ok"], d["alerts"]) for d in later["deliveries"]] == [("ding", True, 2)]
    text = robots.requests[0]["body"]["markdown"]["text"]
    assert "**h20-back**" in text and "late: fired 2026-12-02" in text
    robots.requests.clear()
    assert check(run_cli, config)["deliveries"] == [] and robots.requests == []


def test_a_process_killed_while_sending_loses_no_alert(db_url, config, robots, monkeypatch, run_cli):
    from db.engine import make_engine
    from planner.alerts.check import check_alerts
    from planner.config import load_config

    at(monkeypatch, DAY1)
    refresh(run_cli, config, BEFORE, "--no-alerts")
    at(monkeypatch, DAY2)
    refresh(run_cli, config, AFTER, "--no-alerts")
    settings = load_config(config)
    engine = make_engine(db_url)

    def killed(url, body, connect_s, read_s):
        raise KeyboardInterrupt  # as if the process died in the middle of the first POST

    with pytest.raises(KeyboardInterrupt):
        check_alerts(engine, settings, post=killed)
    assert robots.requests == []
    result = check_alerts(engine, settings)
    assert result.fired == []  # judged already: not news again ...
    assert sorted(d.channel for d in result.deliveries) == ["ding", "fs", "team"]  # ... but still owed
    assert all(d.ok for d in result.deliveries)
    assert sum(d.alerts for d in result.deliveries) == 4 + 2 + 1
    assert check_alerts(engine, settings).deliveries == []
    engine.dispose()


def test_an_offer_fires_again_only_after_its_condition_stopped(run_cli, config, robots, monkeypatch):
    at(monkeypatch, DAY1)
    refresh(run_cli, config, BEFORE)
    at(monkeypatch, DAY2)
    refresh(run_cli, config, AFTER)
    robots.requests.clear()
    at(monkeypatch, DAY2 + dt.timedelta(hours=2))
    # H20 busy, the V100s unlisted again, the 4090 back at its old price (the day's price is the
    # latest run's): every condition stops holding, nothing fires.
    refresh(run_cli, config, BEFORE)
    assert robots.requests == []
    at(monkeypatch, DAY2 + dt.timedelta(hours=3))
    third = refresh(run_cli, config, AFTER)
    # Back, idle, cheap again and 20 % under the run before on the same day: each fires a second time.
    # The V100s listed again were seen before: not new (tests/alerts/test_alerts_runs.py).
    assert "(4090-drop, cheap-4090-beijing, h20-back, h20-idle)" in third.stderr
    assert sorted(r["kind"] for r in robots.requests) == ["dingtalk", "wecom"]


def test_the_nightly_job_checks_alerts_and_sends_the_report_summary_to_its_channels(
    db_url, config, robots, monkeypatch, caplog
):
    import logging

    from planner.app import App
    from planner.ingest.refresh import run_refresh
    from planner.ops.scheduler import run_job

    config.write_text(
        CONFIG.replace("[http]", '[schedule]\nreport_channels = ["fs"]\n\n[http]'), encoding="utf-8"
    )
    app = App(config_file=str(config), db_url=db_url)

    def replay(folder: Path):
        return lambda app: run_refresh(app.engine(), app.config, ["autodl"], from_raw=recorded_now(folder))

    at(monkeypatch, DAY1)
    with caplog.at_level(logging.INFO):
        assert run_job(app, refresh=replay(BEFORE), report=lambda app: 0) == 0
    assert [r["kind"] for r in robots.requests] == ["feishu"]  # the summary only: no alert yet
    summary = robots.requests[0]["body"]["card"]["elements"][0]["content"]
    cheapest = line_of(summary, "- RTX4090D-24GB:")
    assert "**Cheapest per GPU-hour**" in summary and "1.78 CNY/GPU-h" in cheapest
    assert "autodl RTX 4090D" in cheapest
    assert "every provider's last refresh succeeded" in summary
    robots.requests.clear()

    at(monkeypatch, DAY2)
    with caplog.at_level(logging.INFO):
        assert run_job(app, refresh=replay(AFTER), report=lambda app: 0) == 0
    kinds = [r["kind"] for r in robots.requests]
    assert sorted(kinds) == ["dingtalk", "feishu", "feishu", "wecom"]  # alerts first, then the summary
    titles = [
        r["body"]["card"]["header"]["title"]["content"] for r in robots.requests if r["kind"] == "feishu"
    ]
    assert titles[0] == "planner: 1 GPU alert(s), 1 offer(s)" and titles[1].startswith(
        "planner: GPU prices 20"
    )
    assert "alerts: 5 fired" in caplog.text and "summary: sent to fs (feishu)" in caplog.text
