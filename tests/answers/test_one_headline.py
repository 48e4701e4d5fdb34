"""One number per question (issue 25): the same offer and hours give the same CNY per GPU-hour in every
command, and every figure names its basis (billing mode, hours). Each case failed before
``planner.pricing.headline``."""

from __future__ import annotations

import csv
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

from db import run_offers, store
from planner.alerts.digest import digest
from planner.answers.report import produce_report
from planner.app import App
from reports.summary import summarise

TODAY = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
AGO = TODAY - dt.timedelta(days=2)
HOURS = {"hour": 1, "month": 730, "year": 8760}
GN7 = ("tencent", "ap-beijing", "GN7.2XLARGE32")
GN6I = ("aliyun", "cn-beijing", "ecs.gn6i-c4g1.xlarge")
GONE = ("tencent", "ap-beijing", "GN10X.GONE")
WEST = ("autodl", "west-B", "RTX 4090")
MONTH = ("tencent", "ap-guangzhou", "GN4090.MONTH")


def _refresh(engine, provider: str, rows, when: dt.datetime, gpu: str, listed: bool = True) -> None:
    """One refresh of ``provider`` at ``when`` storing (instance key, billing, price, unit) rows of one-GPU
    ``gpu`` instances; it lists what it stored (its catalogue) unless ``listed`` is False."""
    with engine.begin() as conn:
        run = store.start_run(conn, provider, "refresh")
        ids = store.upsert_instances(conn, [store.InstanceRow(*key, gpu, 1) for key, *_ in rows])
        price_rows = [
            store.PriceRow(key, billing, Decimal(p), "CNY", unit, Decimal(p) / HOURS[unit], when)
            for key, billing, p, unit in rows
        ]
        store.insert_prices(conn, price_rows, ids, run)
        if listed:
            run_offers.record(conn, provider, run, {(ids[k], b): Decimal(p) for k, b, p, _ in rows})
        store.finish_run(conn, run, "ok")


def _t4(engine) -> None:
    """T4: Tencent's on-demand 8.68 and yearly 21,250 (2.43 a GPU-hour), last listed two days ago;
    Aliyun's on-demand 11.84 confirmed today."""
    _refresh(
        engine,
        "tencent",
        [(GN7, "on_demand", "8.68", "hour"), (GN7, "yearly", "21250", "year")],
        AGO,
        "T4-16GB",
    )
    _refresh(engine, "aliyun", [(GN6I, "on_demand", "11.84", "hour")], TODAY, "T4-16GB")


def _json(run_cli, *args: str) -> dict:
    result = run_cli(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _value(run_cli, gpu: str) -> dict:
    (row,) = [r for r in _json(run_cli, "gpus", "--value")["ranked"] if r["gpu_model"] == gpu]
    return row


def _report(db_url: str, out: Path):
    outcome = produce_report(App(db_url=db_url), out_dir=out)
    return outcome, summarise(outcome.report, outcome.files, chart=outcome.chart).text


def _cheapest_csv(out: Path) -> dict[str, dict[str, str]]:
    (path,) = out.glob("*_cheapest.csv")
    with path.open(encoding="utf-8-sig", newline="") as f:
        return {row["gpu_model"]: row for row in csv.DictReader(f)}


def test_one_report_email_gives_one_cheapest_on_demand_figure_and_it_is_gpus_values(
    engine, db_url, run_cli, tmp_path
):
    """Was: the chart's "latest" on-demand T4 11.84 (only prices confirmed on the report's day) beside a
    cheapest row of 2.43 (yearly, unlabelled), while ``gpus --value`` said 8.68."""
    _t4(engine)
    assert Decimal(str(_value(run_cli, "T4-16GB")["cny_per_gpu_hour"])) == Decimal("8.68")
    outcome, text = _report(db_url, tmp_path / "out")
    (line,) = [line for line in outcome.chart.trend.lines if line.gpu_model == "T4-16GB"]
    assert line.cny_per_gpu_hour[-1] == 8.68  # the chart's latest point is the on-demand headline
    row = _cheapest_csv(tmp_path / "out")["T4-16GB"]
    assert float(row["on_demand_cny_per_gpu_hour"]) == 8.68
    assert row["billing"] == "yearly" and row["cny_per_gpu_hour_basis"] == "yearly, 8,760 h a year"
    t4 = [line for line in text.splitlines() if "T4-16GB" in line]
    assert t4 and "11.84" not in text
    assert any("CNY 2.43/GPU-h (yearly, 8,760 h a year)" in x and "on_demand CNY 8.68/GPU-h" in x for x in t4)
    # the digest for the group chat says the same, with the same basis
    (line,) = [x for x in digest(outcome.report)[1].splitlines() if x.startswith("- T4-16GB:")]
    assert "2.43 CNY/GPU-h (yearly, 8,760 h a year; on_demand 8.68)" in line


def test_an_offer_its_provider_no_longer_lists_is_never_the_cheapest(engine, run_cli):
    """Was: ``gpus --value`` ranked a V100 by the price of an offer Tencent's last refresh did not list."""
    _refresh(engine, "tencent", [(GONE, "on_demand", "1.00", "hour")], AGO, "V100-32GB")
    _refresh(engine, "tencent", [(GN7, "on_demand", "8.68", "hour")], TODAY, "T4-16GB")  # V100 not listed
    doc = _json(run_cli, "gpus", "--value")
    assert "V100-32GB" not in [r["gpu_model"] for r in doc["ranked"]]
    assert "V100-32GB" in [r["gpu_model"] for r in doc["not_ranked"]]


def test_the_same_offer_and_hours_give_one_figure_and_each_names_its_basis(engine, db_url, run_cli, tmp_path):
    """Was: one RTX 4090 was 1.44 (report), 1.46 (quote, 720 h), 1.98 (gpus --value), no label saying
    which was a list price per hour of a month, which a 720-hour job's cost, which on-demand only."""
    _refresh(engine, "autodl", [(WEST, "on_demand", "1.98", "hour")], TODAY, "RTX4090-24GB")
    _refresh(engine, "tencent", [(MONTH, "monthly", "1051.20", "month")], TODAY, "RTX4090-24GB")
    gpu = ("--gpu", "RTX4090")
    # the list price per GPU-hour: the report (monthly, 730 h a month) and gpus --value (on-demand only)
    _report(db_url, tmp_path / "out")
    row = _cheapest_csv(tmp_path / "out")["RTX4090-24GB"]
    assert (
        round(float(row["cny_per_gpu_hour"]), 2) == 1.44
        and row["cny_per_gpu_hour_basis"] == "monthly, 730 h a month"
    )
    assert (
        float(row["on_demand_cny_per_gpu_hour"])
        == 1.98
        == _value(run_cli, "RTX4090-24GB")["cny_per_gpu_hour"]
    )
    assert "CNY/GPU-h (list" in run_cli("gpus", "--value").stdout
    assert _value(run_cli, "RTX4090-24GB")["cny_per_gpu_hour_basis"] == "on_demand, per hour"
    # a job's cost per GPU-hour: quote and tco give one figure for the same hours, and say the hours
    # (730 h would take 31 days, two months: a month's list price per GPU-hour is no job's cost)
    for hours, figure in (("720", Decimal("1.46")), ("24", Decimal("1.98"))):
        best = _json(run_cli, "quote", *gpu, "--hours", hours)["recommendation"]
        assert best["cny_per_gpu_hour_basis"] == f"{best['billing']}, for {hours} h"
        rent = _json(run_cli, "tco", *gpu, "--hours", hours, "--price-basis", "latest")[
            "rent_cny_per_gpu_hour"
        ]
        assert round(Decimal(str(best["cny_per_gpu_hour"])), 2) == figure == round(Decimal(str(rent)), 2)
        assert f"CNY/GPU-h for {hours} h" in run_cli("quote", *gpu, "--hours", hours).stdout
        assert f"CNY per GPU-hour for {hours} h" in run_cli("tco", *gpu, "--hours", hours).stdout
    # tco's default rental basis is the 30-day median (the 1.47): its column says which price it is
    rental = _json(run_cli, "tco", *gpu, "--hours", "720")["rental"]
    assert f"rent ({rental['price_basis']} price)" in run_cli("tco", *gpu, "--hours", "720").stdout
