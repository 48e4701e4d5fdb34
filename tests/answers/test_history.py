"""``planner history``: one GPU model's prices and availability day by day, aggregated in SQL."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal

from sqlalchemy import text

from db import queries, store
from tests.helpers.cli import line_of
from tests.helpers.history import TODAY, day, seed


def test_history_json_has_one_row_per_day_and_series(engine, run_cli):
    seed(engine)
    doc = json.loads(run_cli("history", "--gpu", "A100", "--billing", "on_demand", "--format", "json").stdout)
    assert doc["gpu_models"] == ["A100-40GB", "A100-80GB"]
    tencent = [r for r in doc["days"] if r["provider"] == "tencent"]
    assert [r["day"] for r in tencent] == [
        (TODAY - dt.timedelta(days=n)).isoformat() for n in range(6, 0, -1)
    ]
    assert [(r["instances"], r["min_cny_per_gpu_hour"], r["max_cny_per_gpu_hour"]) for r in tencent] == [
        (2, 30, 33), (2, 30, 33), (2, 30, 33), (2, 27, 33), (2, 27, 33), (2, 27, 33)
    ]  # fmt: skip
    assert tencent[-1]["availability"] == {
        "instances_with_stock": 2,
        "sold_out": 1,
        "idle_gpus": None,
        "total_gpus": None,
        "max_idle_gpus_per_machine": None,
    }
    autodl = [r for r in doc["days"] if r["provider"] == "autodl"]
    assert [(r["min_cny_per_gpu_hour"], r["median_cny_per_gpu_hour"]) for r in autodl] == [
        (3.68, 3.9),
        (3.5, 3.8),
    ]
    assert [r["availability"]["idle_gpus"] for r in autodl] == [4, 0]
    assert [r["availability"]["max_idle_gpus_per_machine"] for r in autodl] == [2, 0]
    table = run_cli("history", "--gpu", "A100", "--provider", "autodl").stdout
    assert "idle 4/32, ≤2 on one machine" in table


def test_history_table_folds_unchanged_days_and_shows_the_change(engine, run_cli):
    seed(engine)
    out = run_cli("history", "--gpu", "A100", "--provider", "tencent", "--billing", "on_demand").stdout
    lines = [line for line in out.splitlines() if line.startswith(str(TODAY.year))]
    first, cut, sold = (TODAY - dt.timedelta(days=n) for n in (6, 3, 2))
    assert lines[0].startswith(f"{first} .. {TODAY - dt.timedelta(days=4):%m-%d}")
    assert lines[1].startswith(f"{cut}") and "-10.0%" in lines[1] and "available (2)" in lines[1]
    assert lines[2].startswith(f"{sold} .. ") and "1/2 sold out" in lines[2] and lines[2].split()[-4] == "="
    assert len(lines) == 3
    assert "autodl" not in out


def test_history_filters_days_providers_and_billing(engine, run_cli):
    seed(engine)
    recent = json.loads(run_cli("history", "--gpu", "A100-40GB", "--days", "2", "--format", "json").stdout)
    # No price today: the 2 days end at yesterday's, the newest.
    assert {r["day"] for r in recent["days"]} == {(TODAY - dt.timedelta(days=n)).isoformat() for n in (2, 1)}
    assert recent["until"] == (TODAY - dt.timedelta(days=1)).isoformat() and recent["until_newest_price"]
    monthly = json.loads(
        run_cli("history", "--gpu", "A100", "--billing", "monthly", "--format", "json").stdout
    )
    assert {(r["provider"], r["billing"]) for r in monthly["days"]} == {("tencent", "monthly")}
    rows = list(
        csv.DictReader(
            io.StringIO(run_cli("history", "--gpu", "A100", "--provider", "autodl", "--format", "csv").stdout)
        )
    )
    assert [(r["day"], r["idle_gpus"], r["total_gpus"], r["max_idle_gpus_per_machine"]) for r in rows] == [
        ((TODAY - dt.timedelta(days=2)).isoformat(), "4", "32", "2"),
        ((TODAY - dt.timedelta(days=1)).isoformat(), "0", "32", "0"),
    ]
    empty = run_cli("history", "--gpu", "H800")
    assert empty.exit_code == 0 and "No prices for H800-80GB" in empty.stdout and "30 day(s)" in empty.stdout


def test_history_mistakes_are_one_line(run_cli):
    result = run_cli("history", "--gpu", "A1OO")
    assert result.exit_code == 2 and "unknown GPU 'A1OO'" in result.stderr and "A100" in result.stderr
    assert "Traceback" not in result.output


def test_history_query_runs_on_the_indexes_on_sqlite(tmp_path):
    from sqlalchemy.dialects import sqlite

    from db.engine import ensure_schema, make_engine

    eng = make_engine(f"sqlite:///{tmp_path / 'h.db'}")
    ensure_schema(eng)
    seed(eng)
    with eng.connect() as conn:
        conn.execute(text("ANALYZE"))
        wanted = queries.wanted_instances(["A100-40GB"], None)
        stmt = queries.levels_from_statement(wanted, TODAY - dt.timedelta(days=30), None)
        compiled = stmt.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True})
        plan = " | ".join(str(r[-1]) for r in conn.execute(text(f"EXPLAIN QUERY PLAN {compiled}")))
    assert "ix_instances_gpu_model" in plan, plan
    assert "SCAN prices" not in plan.replace("SCAN prices USING", ""), plan
    eng.dispose()


def test_on_data_that_ends_before_today_the_window_ends_at_the_newest_price_and_says_so(engine, run_cli):
    """The bundled snapshot ends months ago: a 30-day window ending today would show nothing."""
    old = ("aliyun", "cn-beijing", "ecs.gn7e-c16g1.4xlarge")
    with engine.begin() as conn:
        run = store.start_run(conn, "aliyun", "refresh")
        ids = store.upsert_instances(conn, [store.InstanceRow(*old, "A100-80GB", 1)])
        rows = [
            store.PriceRow(old, "on_demand", Decimal(p), "CNY", "hour", Decimal(p), day(ago))
            for ago, p in ((140, "36"), (120, "35"), (100, "34.74"))
        ]
        store.insert_prices(conn, rows, ids, run)
        store.finish_run(conn, run, "ok")
    newest = TODAY - dt.timedelta(days=100)
    out = run_cli("history", "--gpu", "A100-80GB").stdout
    assert out.startswith("History of A100-80GB ") and f"30 day(s) to {newest} " in out  # the window
    since = line_of(out, "No price since")
    assert f"since {newest} (100 day(s) ago)" in since and "newest price" in since
    assert "34.74" in out and "35.00" in out and "36.00" not in out  # 140 days ago: over 30 before the newest
    doc = json.loads(run_cli("history", "--gpu", "A100-80GB", "--days", "21", "--format", "json").stdout)
    assert [r["day"] for r in doc["days"]] == [(TODAY - dt.timedelta(days=n)).isoformat() for n in (120, 100)]
    assert doc["until"] == newest.isoformat() and doc["until_newest_price"] is True
    assert doc["since"] == (newest - dt.timedelta(days=20)).isoformat()
    result = run_cli("history", "--gpu", "A100-80GB", "--format", "csv")
    assert result.stdout.startswith("day,") and "No price since" in result.stderr
    fresh = run_cli("history", "--gpu", "A100-80GB", "--provider", "tencent")
    assert "No prices for A100-80GB" in fresh.stdout  # no price at all: today's window
    assert "30 day(s)" in fresh.stdout and "No price since" not in fresh.stdout
