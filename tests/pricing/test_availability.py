"""Availability: stored per run (migration 0002), shown by quote and prices, steering the recommendation;
and the quote stays light (no requests, no scrapers) and on indexes."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from db import queries, store
from db.engine import current_revision, ensure_schema, make_engine, upgrade
from db.schema import HEAD_REVISION
from planner.answers.quote import QuoteRequest, quote
from planner.config import load_config
from tests.helpers.replay import RAW, refresh

FX = load_config(env={}).section("fx")
ROOT = Path(__file__).resolve().parents[2]


def options_by_type(doc):
    return {(o["provider"], o["region"], o["instance_type"]): o for o in doc["options"]}


def test_quote_shows_idle_gpus_and_sold_out_from_the_replay(run_cli):
    assert run_cli("refresh", "--from-raw", str(RAW)).exit_code == 0
    h800 = json.loads(run_cli("quote", "--gpu", "H800", "--hours", "10", "--format", "json").stdout)
    (only,) = h800["options"]
    assert only["availability"] == {
        "stock_status": "sold_out",
        "idle_gpus": 0,
        "total_gpus": 32,
        "orderable_gpus": 0,
        "max_idle_gpus_per_machine": 0,
        "max_orderable_gpus_per_machine": 0,
        "observed_at": only["availability"]["observed_at"],
    }
    assert only["availability"]["observed_at"].endswith("Z")
    assert only["stock_state"] == "sold_out" and h800["recommendation"] is None
    assert h800["no_recommendation"].startswith("every option is sold out")
    assert only["unavailable"] is True and only["idle_gpus"] == 0  # idle_gpus: unused paid GPUs, not stock
    v100 = json.loads(
        run_cli("quote", "--gpu", "V100", "--hours", "10", "--format", "json", "--top", "20").stdout
    )
    got = options_by_type(v100)
    assert got[("tencent", "ap-beijing", "HCCG5v.24XLARGE384")]["availability"]["stock_status"] == "sold_out"
    assert got[("autodl", "beijing-A", "V100-32GB")]["availability"]["idle_gpus"] == 1
    table = run_cli("quote", "--gpu", "4090", "--hours", "10").stdout
    assert "stock" in table.splitlines()[2]
    assert "idle 40/480, ≤2 on one machine" in table and "idle 10/240, ≤1 on one machine" in table
    rows = list(
        csv.DictReader(
            io.StringIO(run_cli("quote", "--gpu", "H800", "--hours", "10", "--format", "csv").stdout)
        )
    )
    assert (rows[0]["stock_status"], rows[0]["stock_idle_gpus"], rows[0]["stock_total_gpus"]) == (
        "sold_out",
        "0",
        "32",
    )
    assert "sold out (0/32 idle)" in run_cli("quote", "--gpu", "H800", "--hours", "10").stdout


def test_prices_show_availability_too(run_cli):
    run_cli("refresh", "--from-raw", str(RAW))
    doc = json.loads(run_cli("prices", "--gpu", "V100", "--format", "json").stdout)
    hcc = next(r for r in doc if r["instance_type"] == "HCCG5v.24XLARGE384")
    assert hcc["availability"]["stock_status"] == "sold_out"
    assert hcc["availability"]["observed_at"].endswith("Z")  # UTC, written like every other time
    assert "sold out" in run_cli("prices", "--gpu", "V100").stdout


def _two_a100s(engine, cheap_stock: list[store.AvailabilityRow | None]):
    """Two A100-40GB instances; the cheap one gets one availability row per run in ``cheap_stock``."""
    cheap, dear = ("tencent", "ap-beijing", "CHEAP"), ("aliyun", "cn-beijing", "DEAR")
    now = store.utcnow()
    with engine.begin() as conn:
        run = store.start_run(conn, "tencent", "refresh")
        ids = store.upsert_instances(
            conn, [store.InstanceRow(*cheap, "A100-40GB", 1), store.InstanceRow(*dear, "A100-40GB", 1)]
        )
        rows = [
            store.PriceRow(key, "on_demand", Decimal(p), "CNY", "hour", Decimal(p), now)
            for key, p in ((cheap, "20"), (dear, "30"))
        ]
        store.insert_prices(conn, rows, ids, run)
        store.finish_run(conn, run, "ok")
    for stock in cheap_stock:
        with engine.begin() as conn:
            run = store.start_run(conn, "tencent", "refresh")
            store.insert_availability(conn, [stock], ids, run)
            store.finish_run(conn, run, "ok")
    return cheap


def test_recommendation_passes_over_a_cheaper_sold_out_option(engine, run_cli):
    key = ("tencent", "ap-beijing", "CHEAP")
    now = store.utcnow()
    _two_a100s(
        engine,
        [
            store.AvailabilityRow(key, "on_demand", now, "available"),
            store.AvailabilityRow(key, "on_demand", now + dt.timedelta(minutes=5), "sold_out"),  # latest
        ],
    )
    with engine.connect() as conn:
        result = quote(conn, QuoteRequest(gpu="A100", hours=10), FX)
    assert [o.offer.instance_type for o in result.options] == ["DEAR", "CHEAP"]  # still listed, after
    assert result.options[1].offer.stock.stock_status == "sold_out"
    assert result.passed_over == (result.options[1],)
    assert result.recommendation.offer.instance_type == "DEAR"
    table = run_cli("quote", "--gpu", "A100", "--hours", "10").stdout
    assert "1 cheaper option(s) sold out" in table  # the count passed over
    assert "Recommendation: aliyun DEAR" in table


def test_enough_idle_gpus_now_is_what_counts(engine):
    key = ("tencent", "ap-beijing", "CHEAP")
    _two_a100s(engine, [store.AvailabilityRow(key, "on_demand", store.utcnow(), "available", 3, 16)])
    with engine.connect() as conn:
        three = quote(conn, QuoteRequest(gpu="A100", hours=10, gpus=3), FX)
        four = quote(conn, QuoteRequest(gpu="A100", hours=10, gpus=4), FX)
    assert three.recommendation.offer.instance_type == "CHEAP"
    assert four.recommendation.offer.instance_type == "DEAR" and four.options[-1].rentable is False


def test_without_any_availability_the_quote_is_unchanged(run_cli, tmp_path):
    from tests.conftest import price_row, write_csv

    run_cli("import", str(write_csv(tmp_path / "p.csv", [price_row()])))
    doc = json.loads(run_cli("quote", "--gpu", "A100", "--hours", "10", "--format", "json").stdout)
    assert doc["options"][0]["availability"] is None and doc["options"][0]["unavailable"] is False
    assert "stock" not in run_cli("quote", "--gpu", "A100", "--hours", "10").stdout.splitlines()[1]


@pytest.mark.unmigrated
def test_migration_0002_keeps_0001_data(db_url):
    eng = make_engine(db_url)
    upgrade(eng, "0001")
    assert current_revision(eng) == "0001"
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO scrape_runs (provider, kind, started_at, status, offers_seen, prices_stored, "
                "prices_changed) VALUES ('tencent', 'import', '2026-11-01 00:00:00', 'ok', 1, 1, 0)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO instances (provider, region, instance_type, gpu_model, gpu_count) "
                "VALUES ('tencent', 'ap-beijing', 'GT4', 'A100-40GB', 1)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO prices (instance_id, billing, price, currency, unit, cny_per_gpu_hour, "
                "observed_at, observed_on, run_id) SELECT i.id, 'on_demand', 28.64, 'CNY', 'hour', 28.64, "
                "'2026-11-01 00:00:00', '2026-11-01', r.id FROM instances i, scrape_runs r"
            )
        )
    assert ensure_schema(eng) is True and current_revision(eng) == HEAD_REVISION
    assert "availability" in inspect(eng).get_table_names()
    with eng.connect() as conn:
        (latest,) = queries.latest_prices(conn, ["A100-40GB"])
        run = queries.recent_runs(conn)[0]
    assert latest.price == Decimal("28.64") and latest.median_price is None
    assert (run.provider, run.mode, run.notes) == ("tencent", None, None)
    eng.dispose()


@pytest.mark.unmigrated
def test_migration_0005_leaves_older_stock_without_a_per_machine_figure_and_judged_as_before(
    db_url, tmp_path
):
    """Stock stored at 0004 (AutoDL's sums only) survives 0005 with the new columns NULL: a job is still
    judged on the sums, as before; a refresh after it records the most idle on one machine."""
    eng = make_engine(db_url)
    upgrade(eng, "0004")
    with eng.begin() as conn:
        run = store.start_run(conn, "autodl", "refresh")
        key = ("autodl", "west-B", "RTX 4090")
        ids = store.upsert_instances(conn, [store.InstanceRow(*key, "RTX4090-24GB", 1)])
        now = dt.datetime(2026, 11, 29)  # before the replay's day, so its price and stock are the latest
        # The prices table as 0004 had it (the code of today writes columns added since).
        conn.execute(
            text(
                "INSERT INTO prices (instance_id, billing, price, currency, unit, cny_per_gpu_hour, "
                "observed_at, observed_on, run_id) VALUES "
                "(:iid, 'on_demand', 1.88, 'CNY', 'hour', 1.88, :at, :on, :run)"
            ),
            {"iid": ids[key], "run": run, "at": now, "on": now.date()},
        )
        conn.execute(
            text(
                "INSERT INTO availability (instance_id, billing, run_id, observed_at, observed_on, "
                "stock_status, idle_gpus, total_gpus, orderable_gpus) VALUES "
                "(:iid, 'on_demand', :run, :at, :on, 'available', 40, 480, 40)"
            ),
            {"iid": ids[key], "run": run, "at": now, "on": now.date()},
        )
        store.finish_run(conn, run, "ok")
    assert ensure_schema(eng) is True and current_revision(eng) == HEAD_REVISION
    columns = {c["name"] for c in inspect(eng).get_columns("availability")}
    assert {"max_idle_gpus_per_machine", "max_orderable_gpus_per_machine"} <= columns
    with eng.connect() as conn:
        (old,) = queries.latest_availability(conn, [(ids[key], "on_demand")]).values()
        assert (old.idle_gpus, old.max_idle_gpus_per_machine, old.max_orderable_gpus_per_machine) == (
            40,
            None,
            None,
        )
        eight = quote(conn, QuoteRequest(gpu="RTX4090", hours=10, gpus=8), FX)
    assert eight.recommendation is not None and eight.recommendation.availability.value == "available"
    refresh(eng, tmp_path, from_raw=RAW, providers=["autodl"])
    with eng.connect() as conn:
        (new,) = queries.latest_availability(conn, [(ids[key], "on_demand")]).values()
        assert (new.idle_gpus, new.max_idle_gpus_per_machine, new.max_orderable_gpus_per_machine) == (
            40,
            2,
            2,
        )
        eight = quote(conn, QuoteRequest(gpu="RTX4090", hours=10, gpus=8), FX)
    assert eight.recommendation is None
    eng.dispose()


def test_latest_availability_reads_the_unique_index_on_sqlite(tmp_path):
    eng = make_engine(f"sqlite:///{tmp_path / 'a.db'}")
    ensure_schema(eng)
    refresh(eng, tmp_path, from_raw=RAW, providers=["autodl"])
    with eng.connect() as conn:
        conn.execute(text("ANALYZE"))
        keys = [(row.instance_id, row.billing) for row in queries.latest_prices(conn, ["RTX4090-24GB"])]
        found = queries.latest_availability(conn, keys)
        plan = " | ".join(
            str(r[-1])
            for r in conn.execute(
                text(
                    "EXPLAIN QUERY PLAN SELECT instance_id, billing, max(run_id) FROM availability "
                    "WHERE instance_id IN (1, 2) GROUP BY instance_id, billing"
                )
            )
        )
    assert {(a.idle_gpus, a.total_gpus) for a in found.values()} == {(40, 480), (10, 240)}
    assert "uq_availability_instance_billing_run" in plan or "sqlite_autoindex_availability" in plan, plan
    eng.dispose()


@pytest.mark.slow  # a real Python process
def test_quote_imports_neither_requests_nor_the_scrapers(tmp_path):
    code = (
        "import sys\n"
        "from planner.cli import cli\n"
        f"cli.main(['--db', 'sqlite:///{tmp_path / 'q.db'}', 'quote', '--gpu', 'A100', '--hours', '5'],"
        " standalone_mode=False)\n"
        "heavy = {'requests', 'scrapers', 'pandas', 'planner.ingest.refresh', 'planner.ingest.runs',"
        " 'planner.ingest.store', 'planner.ingest.run_text', 'planner.ingest.manifest', 'sqlalchemy.orm'}"
        " & set(sys.modules)\n"
        "print('HEAVY', sorted(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PLANNER_DATA_DIR": str(tmp_path)},
    ).stdout  # fmt: skip
    assert "HEAVY []" in out, out
    assert "Recommendation:" in out


def test_stock_stated_before_the_prices_own_day_is_not_shown(engine, run_cli):
    """A scraper that stops claiming stock (Volcengine's zone list, 2026-11) must not leave its last
    claim beside every later price; stock from the price's own day still shows."""

    def refresh_day(day: int, stock: str | None) -> None:
        with engine.begin() as conn:
            run_id = store.start_run(conn, "volcengine", "refresh")
            row = store.InstanceRow(
                "volcengine", "cn-beijing", "ecs.gni3.xlarge", "A100-80GB", 1, 16, 128, None
            )
            ids = store.upsert_instances(conn, [row])
            (key,) = ids
            at = dt.datetime(2026, 11, day, 3)
            price = store.PriceRow(key, "on_demand", Decimal(30), "CNY", "hour", Decimal(30), at)
            store.insert_prices(conn, [price], ids, run_id)
            if stock:
                store.insert_availability(
                    conn, [store.AvailabilityRow(key, "on_demand", at, stock)], ids, run_id
                )
            store.finish_run(conn, run_id, "ok")

    args = ("--gpu", "A100-80GB", "--format", "json")
    refresh_day(1, "available")
    assert json.loads(run_cli("quote", *args, "--hours", "10").stdout)["options"][0]["availability"]
    refresh_day(29, None)
    (option,) = json.loads(run_cli("quote", *args, "--hours", "10").stdout)["options"]
    assert option["observed_at"].startswith("2026-11-29") and option["availability"] is None
    (row,) = json.loads(run_cli("prices", *args).stdout)
    assert row["availability"] is None
    assert "available" not in run_cli("quote", "--gpu", "A100-80GB", "--hours", "10").stdout
    refresh_day(30, "sold_out")
    (option,) = json.loads(run_cli("quote", *args, "--hours", "10").stdout)["options"]
    assert option["availability"]["stock_status"] == "sold_out" and option["unavailable"] is True


def test_idle_but_not_orderable_is_stored_and_read_back(engine):
    """AutoDL: gpu_idle_num 3 beside gpu_order_num 0 is stored as sold_out, idle 3, orderable 0."""
    key = ("tencent", "ap-beijing", "CHEAP")
    row = store.AvailabilityRow(key, "on_demand", store.utcnow(), "sold_out", 3, 8, orderable_gpus=0)
    _two_a100s(engine, [row])
    with engine.connect() as conn:
        result = quote(conn, QuoteRequest(gpu="A100", hours=10), FX)
    cheap = result.options[-1]  # what cannot be rented comes last
    stock = cheap.offer.stock
    assert (stock.idle_gpus, stock.orderable_gpus) == (3, 0) and stock.to_dict()["orderable_gpus"] == 0
    assert cheap.availability.value == "not_orderable" and not cheap.rentable  # pricing's one rule
    assert result.recommendation.offer.instance_type == "DEAR"  # the rule passes over it
