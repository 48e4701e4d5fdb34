"""Alerts never stop for good: an ``alert_state`` row whose JSON cannot be read, or a dropped table, is
rebuilt with a warning (an alert may repeat, none is lost for ever); a malformed ``PLANNER_WEBHOOK_*``
variable is one error naming it, and the other channels still get their message."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import text, update

from db import store
from tests.helpers.alerts import AFTER, BEFORE, CONFIG, recorded_now

DAY1 = dt.datetime(2026, 12, 1, 2, 0)
DAY2 = dt.datetime(2026, 12, 2, 2, 0)


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


def check(run_cli, config: Path, *extra: str):
    return run_cli("--config", str(config), "alerts", "check", "--format", "json", *extra)


def two_days(run_cli, config: Path, monkeypatch) -> None:
    """Two refreshes that make five rules fire (``tests/helpers/alerts.CONFIG``), their state stored."""
    at(monkeypatch, DAY1)
    refresh(run_cli, config, BEFORE)
    at(monkeypatch, DAY2)
    refresh(run_cli, config, AFTER)


@pytest.mark.parametrize("column", ["pending", "detail"])
def test_an_unreadable_state_row_is_dropped_with_a_warning_and_alerts_go_on(
    run_cli, config, robots, monkeypatch, engine, column
):
    from db.schema import alert_state

    two_days(run_cli, config, monkeypatch)
    with engine.begin() as conn:
        conn.execute(
            update(alert_state).where(alert_state.c.rule == "h20-idle").values({column: '["team", '})
        )
    robots.requests.clear()
    dry = check(run_cli, config, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "could not be read: the next check drops it" in dry.stderr

    at(monkeypatch, DAY2 + dt.timedelta(hours=1))
    again = refresh(run_cli, config, AFTER)  # the refresh's own check heals it
    assert "not checked" not in again.stderr
    assert (
        "alerts: the alert state of rule 'h20-idle' for autodl/west-B/H20-NVLink/on_demand could not be "
        "read: dropped; its offer is judged afresh" in again.stderr
    )
    assert "alerts: 1 fired (h20-idle)" in again.stderr  # it holds: told again, never lost
    assert [r["kind"] for r in robots.requests] == ["wecom"]

    later = check(run_cli, config)
    assert later.exit_code == 0, later.output
    assert json.loads(later.stdout)["warnings"] == [] and json.loads(later.stdout)["fired"] == []


def test_a_dropped_state_table_is_created_again_with_a_warning(run_cli, config, robots, monkeypatch, engine):
    two_days(run_cli, config, monkeypatch)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE alert_state"))

    listed = run_cli("--config", str(config), "alerts", "list")
    assert listed.exit_code == 0, listed.output
    dry = check(run_cli, config, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "the alert state table is missing: the next check creates it again" in dry.stderr

    robots.requests.clear()
    first = check(run_cli, config)
    assert first.exit_code == 0, first.output
    assert "Warning: the alert state table was missing: created again" in first.stderr
    doc = json.loads(first.stdout)
    assert doc["warnings"] and len({f["rule"] for f in doc["fired"]}) == 5  # all that hold
    assert all(d["ok"] for d in doc["deliveries"])

    second = check(run_cli, config)  # the state is back: nothing fires twice
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["fired"] == [] and "Warning" not in second.stderr


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("https://[::1/cgi-bin/webhook/send?key=693a91f6", "it cannot be parsed"),
        ("https://qyapi.weixin.qq.com:99999/cgi-bin/webhook/send?key=693a91f6", "its port is not a number"),
        (
            "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a 91f6",
            "it holds a space or a control character",
        ),
    ],
)
def test_a_malformed_webhook_variable_is_one_error_naming_it_and_the_others_still_send(
    run_cli, config, robots, monkeypatch, value, problem
):
    at(monkeypatch, DAY1)
    refresh(run_cli, config, BEFORE, "--no-alerts")
    at(monkeypatch, DAY2)
    refresh(run_cli, config, AFTER, "--no-alerts")
    monkeypatch.setenv("PLANNER_WEBHOOK_TEAM", value)
    result = check(run_cli, config)
    assert result.exit_code == 1, result.output  # a channel failed; no traceback
    assert result.exception is None or isinstance(result.exception, SystemExit)
    deliveries = {d["channel"]: d for d in json.loads(result.stdout)["deliveries"]}
    assert deliveries["ding"]["ok"] and deliveries["fs"]["ok"]
    assert deliveries["team"]["error"].startswith(f"PLANNER_WEBHOOK_TEAM is not a valid URL: {problem}")
    assert "693a" not in result.output
    assert sorted(r["kind"] for r in robots.requests) == ["dingtalk", "feishu"]

    tested = run_cli("--config", str(config), "alerts", "test", "team")
    assert tested.exit_code == 2  # a variable to fix: nothing was tried
    [line] = tested.stderr.splitlines()
    assert line.startswith(f"Error: team (wecom): PLANNER_WEBHOOK_TEAM is not a valid URL: {problem}")
