""" "New offers" and "back in stock" compare refresh runs, not the times their prices carry: two replays
of the recorded folders (``tests/fixtures/alerts/before``, then ``tests/fixtures/raw``) as recorded,
a replay of an old recording after a newer one, an import of old prices, and runs made before the
run lists were kept (``db.run_offers``)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select

from db import store
from tests.conftest import price_row, write_csv
from tests.helpers.alerts import AFTER, BEFORE, recorded_now

CONFIG = """
[[alerts]]
name = "h20-back"
gpu = "H20"
back_in_stock = true
channels = ["team"]

[[alerts]]
name = "anything-new"
new_offers = true
channels = ["team"]

[channels.team]
kind = "wecom"
"""
V100 = ["autodl/beijing-A/V100-32GB/on_demand"]  # three machines, one offer
H20 = ["autodl/west-B/H20-NVLink/on_demand"]
DAY1 = dt.datetime(2026, 12, 1, 2, 0)  # both folders were recorded on 2026-11-30, before either day
DAY2 = dt.datetime(2026, 12, 2, 2, 0)


@pytest.fixture
def config(tmp_path) -> Path:
    path = tmp_path / "alerts.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def at(monkeypatch, when: dt.datetime) -> None:
    monkeypatch.setattr(store, "utcnow", lambda: when)


def replay(run_cli, config: Path, folder: Path, *, as_recorded: bool = True) -> None:
    """Replay ``folder``'s AutoDL recording: at its recorded time, or (``as_recorded`` False) as if
    recorded at the test's clock."""
    copy = folder if as_recorded else recorded_now(folder)
    result = run_cli(
        "--config", str(config), "refresh", "--from-raw", str(copy), "--provider", "autodl", "--no-alerts"
    )
    if not as_recorded:
        shutil.rmtree(copy.parent, ignore_errors=True)
    assert result.exit_code == 0, result.output


def would_fire(run_cli, config: Path) -> dict[str, list[str]]:
    result = run_cli("--config", str(config), "alerts", "check", "--dry-run", "--format", "json")
    assert result.exit_code == 0, result.output
    out: dict[str, list[str]] = {}
    for f in json.loads(result.stdout)["fired"]:
        out.setdefault(f["rule"], []).append(f["key"])
    return out


def test_two_replays_as_recorded_fire_new_and_back_in_stock(run_cli, config, monkeypatch):
    # Both recordings carry the same recorded time: the second stores no price for what the first
    # stored that day, and nothing in it is later than the first by time. By run it is news.
    at(monkeypatch, DAY2)
    replay(run_cli, config, BEFORE)
    assert would_fire(run_cli, config) == {}  # a first refresh calls nothing new
    replay(run_cli, config, AFTER)
    assert would_fire(run_cli, config) == {"h20-back": H20, "anything-new": V100}
    replay(run_cli, config, AFTER)  # the same listing again: no news
    assert would_fire(run_cli, config) == {}


def test_an_offer_that_went_away_and_came_back_is_not_new(run_cli, config, monkeypatch):
    # "New" is never seen before at that provider: the V100 listed by the second run, gone at the
    # third and back at the fourth was seen (its price history says so), whatever the run before says.
    at(monkeypatch, DAY2)
    replay(run_cli, config, BEFORE)
    replay(run_cli, config, AFTER)
    assert would_fire(run_cli, config)["anything-new"] == V100
    replay(run_cli, config, BEFORE)  # the V100 is not listed
    assert would_fire(run_cli, config) == {}
    replay(run_cli, config, AFTER)  # back: in stock again, but no news
    assert would_fire(run_cli, config) == {"h20-back": H20}


def test_a_replay_of_an_old_recording_is_judged_as_the_latest_run(run_cli, config, monkeypatch):
    at(monkeypatch, DAY1)
    replay(run_cli, config, BEFORE, as_recorded=False)  # recorded "now": 2026-12-01
    at(monkeypatch, DAY2)
    replay(run_cli, config, AFTER)  # recorded 2026-11-30, a day before the run before it
    assert would_fire(run_cli, config) == {"h20-back": H20, "anything-new": V100}

    # And the other way round: the old recording lists less and has the H20s busy: nothing is news.
    at(monkeypatch, DAY2 + dt.timedelta(hours=1))
    replay(run_cli, config, AFTER, as_recorded=False)
    replay(run_cli, config, BEFORE)
    assert would_fire(run_cli, config) == {}


def test_an_import_of_old_prices_makes_nothing_new(run_cli, config, monkeypatch, tmp_path):
    at(monkeypatch, DAY2)
    replay(run_cli, config, AFTER, as_recorded=False)  # the provider's first refresh: nothing is new
    old = write_csv(
        tmp_path / "old.csv",
        [
            price_row(
                provider="autodl",
                region="beijing-A",
                instance_type="RTX 3090",
                gpu_model="RTX3090",
                price="1.58",
                observed_at="2026-10-01",
            )
        ],
    )
    assert run_cli("import", str(old)).exit_code == 0
    assert would_fire(run_cli, config) == {}  # an import is not a run of the provider


def test_runs_without_a_kept_list_call_nothing_new_and_only_the_compared_lists_are_kept(
    run_cli, config, monkeypatch, db_url
):
    from db.engine import make_engine
    from db.schema import run_offers, scrape_runs

    at(monkeypatch, DAY1)
    replay(run_cli, config, BEFORE, as_recorded=False)
    engine = make_engine(db_url)
    with engine.begin() as conn:
        conn.execute(delete(run_offers))  # as a database migrated from 0004 holds it
    at(monkeypatch, DAY2)
    replay(run_cli, config, AFTER, as_recorded=False)
    assert would_fire(run_cli, config) == {"h20-back": H20}  # stock is kept per run since 0002

    for hours in (1, 2, 3):
        at(monkeypatch, DAY2 + dt.timedelta(hours=hours))
        replay(run_cli, config, AFTER, as_recorded=False)
    with engine.connect() as conn:
        kept = conn.execute(select(run_offers.c.run_id, func.count()).group_by(run_offers.c.run_id)).all()
        runs = conn.execute(select(scrape_runs.c.id).order_by(scrape_runs.c.id)).scalars().all()
    engine.dispose()
    assert sorted(run_id for run_id, _ in kept) == runs[-2:]  # the latest run and the one it is compared with
    assert {count for _, count in kept} == {9}  # the recording's nine AutoDL offers, once per run


def test_a_partial_run_is_compared_as_the_latest_never_as_the_complete_one_before(engine):
    from db import run_offers
    from db.schema import instances
    from vocab import RunStatus

    with engine.begin() as conn:
        conn.execute(
            instances.insert(),
            [
                dict(provider="tencent", region=r, instance_type="GN7", gpu_model="T4-16GB", gpu_count=1)
                for r in "ab"
            ],
        )
        made = []
        for status, listed in ((RunStatus.OK, {1, 2}), (RunStatus.PARTIAL, {1}), (RunStatus.FAILED, set())):
            run_id = store.start_run(conn, "tencent", "refresh")
            if status != RunStatus.FAILED:
                run_offers.record(conn, "tencent", run_id, {(iid, "on_demand") for iid in listed})
            store.finish_run(conn, run_id, status)
            made.append(run_id)
        ok, partial, _failed = made
        assert run_offers.compared_runs(conn, "tencent") == run_offers.ComparedRuns(partial, ok, ok)
        assert run_offers.listed(conn, partial) == {(1, "on_demand")}
        again = store.start_run(conn, "tencent", "refresh")  # region b is back: not new against run 1
        run_offers.record(conn, "tencent", again, {(1, "on_demand"), (2, "on_demand")})
        store.finish_run(conn, again, RunStatus.OK)
        assert run_offers.compared_runs(conn, "tencent") == run_offers.ComparedRuns(again, partial, ok)
        assert run_offers.compared_runs(conn, "aliyun") is None
