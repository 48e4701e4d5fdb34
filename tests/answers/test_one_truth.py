"""What the latest refresh says is true: a provider's latest complete refresh is its catalogue, a price's
age counts from its last confirmation, export -> import loses no provenance, a history change is like
for like, stock is the hardware's, and counts nobody means are refused. Each case failed before."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

from sqlalchemy import delete, func, select

from db import run_offers, store
from db.schema import instances, prices, scrape_runs
from db.schema import run_offers as run_offers_table

TODAY = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
OLD = ("tencent", "ap-beijing", "GT4.OLD")
NEW = ("tencent", "ap-beijing", "GT4.NEW")


def _store(engine, kind: str, rows: list[tuple[tuple[str, str, str], str, str, dt.datetime]], listed=True):
    """One run of ``kind`` storing (instance key, billing, price, when) rows of A100-40GB, 1 GPU each; a
    refresh records what it listed (and at what price) as the refresh pipeline does."""
    with engine.begin() as conn:
        run = store.start_run(conn, "tencent" if kind == "refresh" else "*", kind)
        ids = store.upsert_instances(conn, [store.InstanceRow(*key, "A100-40GB", 1) for key, *_ in rows])
        price_rows = [
            store.PriceRow(key, billing, Decimal(p), "CNY", "hour", Decimal(p), when)
            for key, billing, p, when in rows
        ]
        store.insert_prices(conn, price_rows, ids, run)
        if kind == "refresh" and listed:
            seen = {(ids[key], billing): Decimal(p) for key, billing, p, _ in rows}
            run_offers.record(conn, "tencent", run, seen)
        store.finish_run(conn, run, "ok")
    return run


def quote(run_cli, *args: str) -> dict:
    result = run_cli("quote", "--gpu", "A100-40GB", "--hours", "500", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_an_offer_the_latest_refresh_did_not_list_is_never_recommended(engine, run_cli):
    ago = TODAY - dt.timedelta(days=105)
    _store(engine, "snapshot", [(OLD, "on_demand", "3.45", ago)])
    _store(engine, "refresh", [(NEW, "on_demand", "3.68", TODAY)])
    doc = quote(run_cli)
    assert doc["recommendation"]["instance_type"] == "GT4.NEW"  # not the cheaper snapshot row
    (old,) = [o for o in doc["options"] if o["instance_type"] == "GT4.OLD"]
    assert old["stock_state"] == "not_listed" and old["unlisted_at"].startswith(TODAY.date().isoformat())
    text = run_cli("quote", "--gpu", "A100-40GB", "--hours", "500").stdout
    assert "GT4.NEW" in text and "not listed at the last refresh" in text


def test_a_partial_refresh_judges_only_the_regions_it_covered(engine, run_cli):
    elsewhere = ("tencent", "ap-shanghai", "GT4.SH")
    _store(engine, "refresh", [(OLD, "on_demand", "3.45", TODAY), (elsewhere, "on_demand", "3.50", TODAY)])
    with engine.begin() as conn:  # a later partial run that reached ap-beijing only, listing NEW there
        run = store.start_run(conn, "tencent", "refresh")
        ids = store.upsert_instances(conn, [store.InstanceRow(*NEW, "A100-40GB", 1)])
        row = store.PriceRow(NEW, "on_demand", Decimal("3.68"), "CNY", "hour", Decimal("3.68"), TODAY)
        store.insert_prices(conn, [row], ids, run)
        run_offers.record(conn, "tencent", run, {(ids[NEW], "on_demand"): Decimal("3.68")})
        store.finish_run(conn, run, "partial")
    states = {o["instance_type"]: o["stock_state"] for o in quote(run_cli, "--top", "10")["options"]}
    assert states["GT4.OLD"] == "not_listed"  # ap-beijing: judged by the partial run
    assert states["GT4.SH"] != "not_listed"  # ap-shanghai: the partial run said nothing of it


def test_a_price_confirmed_today_has_age_0_and_keeps_its_first_seen_date(engine, run_cli):
    first = TODAY - dt.timedelta(days=1065)
    _store(engine, "refresh", [(OLD, "on_demand", "8.68", first)])
    _store(engine, "refresh", [(OLD, "on_demand", "8.68", TODAY)])
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(prices)).scalar_one() == 1  # one level
    option = quote(run_cli)["recommendation"]
    assert option["age_days"] == 0
    assert option["first_seen_at"].startswith(first.date().isoformat())
    assert option["last_confirmed_at"].startswith(TODAY.date().isoformat())
    assert "(old)" not in run_cli("quote", "--gpu", "A100-40GB", "--hours", "500").stdout


def test_export_then_import_changes_no_quote_and_keeps_the_snapshot_mark(engine, run_cli, tmp_path):
    ago = TODAY - dt.timedelta(days=105)
    _store(engine, "snapshot", [(OLD, "on_demand", "3.45", ago), (OLD, "monthly", "2000", ago)])
    _store(engine, "refresh", [(NEW, "on_demand", "3.68", TODAY - dt.timedelta(days=3))])
    _store(engine, "refresh", [(NEW, "on_demand", "3.68", TODAY)])  # confirms it
    before = quote(run_cli, "--top", "10")
    out = tmp_path / "all.csv"
    assert run_cli("export", "--out", str(out)).exit_code == 0
    with engine.begin() as conn:
        for table in (run_offers_table, prices, instances, scrape_runs):
            conn.execute(delete(table))
    result = run_cli("import", str(out))
    assert result.exit_code == 0, result.output
    after = quote(run_cli, "--top", "10")
    assert after["options"] == before["options"] and after["recommendation"] == before["recommendation"]
    assert after["snapshot_options"] == before["snapshot_options"] >= 1
    with engine.connect() as conn:
        kinds = conn.execute(select(scrape_runs.c.kind).order_by(scrape_runs.c.id)).scalars().all()
    assert kinds == ["import", "snapshot"]


def test_a_history_change_is_like_for_like_and_says_when_the_set_changed(engine, run_cli):
    day1, day2 = TODAY - dt.timedelta(days=2), TODAY - dt.timedelta(days=1)
    _store(engine, "refresh", [(OLD, "on_demand", "10", day1), (NEW, "on_demand", "12", day1)])
    _store(engine, "refresh", [(NEW, "on_demand", "12", day2)])  # the cheap one is gone, no price moved
    doc = json.loads(run_cli("history", "--gpu", "A100-40GB", "--format", "json").stdout)
    (second,) = [d for d in doc["days"] if d["day"] == day2.date().isoformat()]
    assert Decimal(str(second["min_cny_per_gpu_hour"])) == 12  # the cheapest moved from 10 to 12 ...
    assert Decimal(str(second["change_percent"])) == 0 and second["set_changed"] is True  # ... by mix
    text = run_cli("history", "--gpu", "A100-40GB").stdout
    assert "+20.0%" not in text and "=*" in text and "the set of instances changed" in text


def test_sold_out_on_demand_is_sold_out_on_a_subscription_of_the_same_instance(engine, run_cli):
    run = _store(engine, "refresh", [(OLD, "on_demand", "30", TODAY), (OLD, "weekly", "3000", TODAY)])
    with engine.begin() as conn:
        iid = conn.execute(select(instances.c.id)).scalar_one()
        store.insert_availability(
            conn, [store.AvailabilityRow(OLD, "on_demand", TODAY, "sold_out")], {OLD: iid}, run
        )
    states = {o["billing"]: o["stock_state"] for o in quote(run_cli, "--top", "10")["options"]}
    assert states["weekly"] == "sold_out"  # "unknown" before: the subscription rents the same machines


def test_a_count_nobody_means_is_refused_naming_the_limit(run_cli):
    result = run_cli("quote", "--gpu", "A100", "--hours", "500", "--gpus", "100000")
    assert result.exit_code == 2 and "50000" in result.stderr and "Traceback" not in result.output
