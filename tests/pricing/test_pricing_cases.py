"""Issue 12's cases, as a new user meets them: ``planner refresh --from-raw tests/fixtures/raw``, then
quote and plan. Each answer is the one a buyer expects."""

from __future__ import annotations

import csv
import io
import json
import re
from decimal import Decimal

import pytest

from tests.helpers.cli import line_of
from tests.helpers.replay import RAW

SHEET_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}"
)  # vocab.sheet_time: UTC, as a spreadsheet reads it


@pytest.fixture
def refreshed(run_cli):
    assert run_cli("refresh", "--from-raw", str(RAW)).exit_code == 0
    return run_cli


def as_json(run_cli, *args):
    result = run_cli(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_plan_never_calls_a_sold_out_offer_cheapest(refreshed):
    args = ("plan", "--params", "7B", "--tokens", "2B", "--task", "lora")
    doc = as_json(refreshed, *args)
    h800 = next(o for o in doc["options"] if o["gpu_model"] == "H800-80GB")
    assert h800["stock_state"] == "sold_out"
    rentable = [o["stock_state"] in ("available", "unknown") for o in doc["options"]]
    assert rentable == sorted(rentable, reverse=True)  # what cannot be rented comes last
    first = doc["options"][doc["cheapest"] - 1]
    assert first["gpu_model"] != "H800-80GB" and first["stock_state"] != "sold_out"
    assert not h800["fastest"] and not h800["pareto"]  # nothing that cannot be rented is recommended
    table = refreshed(*args).stdout
    cheapest = next(line for line in table.splitlines() if line.startswith("Cheapest:"))
    assert "H800" not in cheapest and "A100-40GB" in cheapest
    assert "sold out" in next(line for line in table.splitlines() if " H800-80GB " in line)


def test_tencent_break_even_uses_the_same_tiers_as_the_total(refreshed):
    args = ("quote", "--gpu", "A100-40GB", "--provider", "tencent", "--hours", "460", "--days", "30")
    doc = as_json(refreshed, *args)
    best = doc["recommendation"]
    assert (best["billing"], best["total_cny"]) == ("on_demand", 12650.24)
    assert best["subscription_breakeven_hours_per_month"] > 460  # 470.9: so on-demand is right at 460 h
    assert best["tiers"] == [
        {"from_hour": 0, "to_hour": 96, "unit_price": 28.64},
        {"from_hour": 96, "to_hour": 460, "unit_price": 27.2},
    ]
    table = refreshed(*args).stdout
    assert "above 470.9 hours per month" in table and "(with its hourly tiers)" in table
    assert "† hourly tiers applied" in table and "#1 0-96 h at 28.64, 96-460 h at 27.20" in table
    row = next(csv.DictReader(io.StringIO(refreshed(*args, "--format", "csv").stdout)))
    assert row["tiers"] == "0-96 h at 28.64; 96-460 h at 27.20"


def test_quote_never_recommends_a_sold_out_option(refreshed):
    doc = as_json(refreshed, "quote", "--gpu", "H800", "--hours", "100")
    assert doc["recommendation"] is None
    assert "sold out" in doc["no_recommendation"]  # why there is none
    assert [o["stock_state"] for o in doc["options"]] == ["sold_out"]
    table = refreshed("quote", "--gpu", "H800", "--hours", "100").stdout
    line = next(x for x in table.splitlines() if x.startswith("Recommendation:"))
    assert line.startswith("Recommendation: none") and "sold out" in line
    assert "autodl H800 (west-B)" in line and "(0/32 idle)" in line


def test_eight_gpus_go_to_one_machine_not_four_for_half_a_yuan(refreshed):
    args = ("quote", "--gpu", "A100-80GB", "--provider", "aliyun", "--region", "cn-shenzhen", "--gpus", "8")
    doc = as_json(refreshed, *args, "--hours", "500", "--billing", "on_demand")
    shown = [(o["instance_type"], o["instances"], o["total_cny"]) for o in doc["options"]]
    assert shown[0][1] == 1 and shown[0][2] == 138966.5  # one 8-GPU machine ...
    assert ("ecs.gn7e-c16g1.8xlarge", 4, 138966.0) in shown[1:]  # ... over four 2-GPU ones, 0.50 cheaper
    assert doc["options"][0]["link"] == "NVLink 600 GB/s"
    assert {o["link"] for o in doc["options"] if o["instances"] > 1} <= {
        "NVLink 600 GB/s + network",
        "network only",
    }
    assert " link " in refreshed(*args, "--hours", "500").stdout.splitlines()[2]


def test_plan_for_70b_inference_keeps_the_gpus_on_one_instance(refreshed):
    doc = as_json(refreshed, "plan", "--params", "70B", "--tokens", "1B", "--task", "inference")
    a100 = next(o for o in doc["options"] if o["gpu_model"] == "A100-80GB")
    assert (a100["rental"]["instances"], a100["rental"]["gpus_per_instance"]) == (1, 4.0)
    assert a100["link"] == "NVLink 600 GB/s"


def test_a_tiny_job_is_ranked_on_unrounded_totals(refreshed):
    doc = as_json(refreshed, "quote", "--gpu", "A100", "--hours", "0.0001", "--top", "20")
    rentable = [Decimal(str(o["total_cny"])) for o in doc["options"] if not o["unavailable"]]
    assert all(t > 0 for t in rentable) and rentable == sorted(rentable)
    assert doc["recommendation"]["provider"] == "autodl"  # 3.68 CNY/h, the cheapest, not the first region
    table = refreshed("quote", "--gpu", "A100", "--hours", "0.0001").stdout
    assert "0.00 " not in table and "0.0003680" in table


def test_a_foreign_unit_price_shows_its_currency(run_cli, tmp_path):
    from tests.conftest import price_row, write_csv

    rows = [price_row(currency="USD", price="4", instance_type="USD1"), price_row(instance_type="CNY1")]
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", rows))).exit_code == 0
    table = run_cli("quote", "--gpu", "A100", "--hours", "10").stdout
    assert "4.00 USD/hour" in next(line for line in table.splitlines() if "USD1" in line)
    assert "28.64/hour" in next(line for line in table.splitlines() if "CNY1" in line)
    fx_note = line_of(table, "Unit prices in")
    assert fx_note.startswith("Unit prices in USD ") and "[fx]" in fx_note  # the currency, the setting


def test_the_report_cheapest_table_passes_over_what_cannot_be_rented(engine):
    """The report's `_cheapest` file takes the pricing core's choice, as `gpus --value` does."""
    import datetime as dt

    from db import store
    from planner.answers.report import cheapest_for
    from planner.config import load_config
    from reports.build import build_report

    cheap, dear, slice_ = (
        ("tencent", "ap-beijing", "CHEAP"),
        ("aliyun", "cn-beijing", "DEAR"),
        ("aliyun", "cn-beijing", "VGPU"),
    )
    now = store.utcnow()
    with engine.begin() as conn:
        run = store.start_run(conn, "tencent", "refresh")
        ids = store.upsert_instances(
            conn,
            [
                store.InstanceRow(*cheap, "A100-40GB", 1),
                store.InstanceRow(*dear, "A100-40GB", 1),
                store.InstanceRow(*slice_, "A100-40GB", 0.25),
            ],
        )
        rows = [
            store.PriceRow(key, "on_demand", Decimal(p), "CNY", "hour", Decimal(p) / Decimal(n), now)
            for key, p, n in ((cheap, "20", 1), (dear, "30", 1), (slice_, "4", "0.25"))
        ]
        store.insert_prices(conn, rows, ids, run)
        store.insert_availability(
            conn, [store.AvailabilityRow(cheap, "on_demand", now, "sold_out")], ids, run
        )
        store.finish_run(conn, run, "ok")
    fx = load_config(env={}).section("fx")
    day = dt.date(2026, 12, 1)
    plain = build_report(engine, day, chart=False).tables["cheapest"]
    assert plain.loc[0, "instance_type"] == "VGPU"  # on its own, the table took a vGPU slice
    judged = build_report(engine, day, chart=False, cheapest=cheapest_for((), (), fx)).tables["cheapest"]
    assert list(judged["instance_type"]) == ["DEAR"]  # not the sold-out one, not the slice
    assert judged.loc[0, "offers"] == 3


def test_quote_header_dates_the_options_and_counts_only_snapshot_rows(run_cli, tmp_path):
    """Issue 16's header, on the pricing core: the date range of the options shown, and how many of
    them (only those) come from the bundled snapshot; each option carries its age."""
    from tests.conftest import price_row, write_csv

    args = ("quote", "--gpu", "A100", "--hours", "500")
    doc = as_json(run_cli, *args)  # an empty database: the bundled snapshot loads
    shown = len(doc["options"])
    assert doc["snapshot_options"] == shown > 1
    assert all(o["age_days"] > 30 for o in doc["options"])  # the snapshot is months old
    rows = [price_row(instance_type="FRESH", price="1", observed_at="2026-11-30")]
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", rows))).exit_code == 0
    doc = as_json(run_cli, *args)
    fresh = next(o for o in doc["options"] if o["instance_type"] == "FRESH")
    assert fresh["from_snapshot"] is False and doc["snapshot_options"] == shown - 1
    header = run_cli(*args).stdout.splitlines()[1]
    assert header.startswith(f"Prices observed {doc['observed_from']} to 2026-11-30; ")
    assert f"; {shown - 1} of {shown} from the bundled snapshot" in header


def test_quote_header_never_says_snapshot_for_imported_prices(run_cli, tmp_path):
    from tests.conftest import price_row, write_csv

    rows = [price_row(observed_at="2026-10-01"), price_row(instance_type="B", observed_at="2026-11-01")]
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", rows))).exit_code == 0
    out = run_cli("quote", "--gpu", "A100", "--hours", "10").stdout
    assert out.splitlines()[1].endswith("observed 2026-10-01 to 2026-11-01.")
    assert "snapshot" not in out


def test_cheapest_by_model_reads_past_a_run_of_sold_out_offers(engine):
    """Six H800 offers whose five cheapest are sold out: gpus --value and the report name the sixth,
    which can be rented, not the cheapest sold-out one (stock is read a few offers at a time)."""
    from db import store
    from planner.config import load_config
    from planner.pricing.cost import STOCK_CANDIDATES, cheapest_by_model, latest_offers
    from planner.pricing.query import OfferQuery

    keys = [("autodl", f"region-{i}", f"H800-{i}") for i in range(STOCK_CANDIDATES + 1)]
    now = store.utcnow()
    with engine.begin() as conn:
        run = store.start_run(conn, "autodl", "refresh")
        ids = store.upsert_instances(conn, [store.InstanceRow(*key, "H800-80GB", 1) for key in keys])
        price = [Decimal("8.1") + Decimal(i) / 10 for i in range(len(keys))]
        store.insert_prices(
            conn,
            [
                store.PriceRow(k, "on_demand", p, "CNY", "hour", p, now)
                for k, p in zip(keys, price, strict=True)
            ],
            ids,
            run,
        )
        stock = [store.AvailabilityRow(k, "on_demand", now, "sold_out") for k in keys[:-1]]
        stock.append(store.AvailabilityRow(keys[-1], "on_demand", now, "available"))
        store.insert_availability(conn, stock, ids, run)
        store.finish_run(conn, run, "ok")
    fx = load_config(env={}).section("fx")
    with engine.connect() as conn:
        offers = latest_offers(conn, OfferQuery.build(gpus=("H800",)), fx, stock=False)
        best = cheapest_by_model(conn, offers)
    assert best["H800-80GB"].instance_type == keys[-1][2]
    assert best["H800-80GB"].availability.rentable


def test_quote_and_plan_csv_carry_stock_and_utc_times_like_their_json(refreshed):
    """A program reading CSV sees what JSON says: the stock verdict (a sold-out H800 is not an ordinary
    row) and the same UTC timestamps, spelt for a spreadsheet (``2026-11-30 02:00:00``) where JSON has
    ISO 8601 with Z (review finding: plan's CSV had no stock column)."""
    plan = list(csv.DictReader(io.StringIO(
        refreshed("plan", "--params", "7B", "--tokens", "2B", "--task", "lora", "--format", "csv").stdout
    )))  # fmt: skip
    h800 = next(row for row in plan if row["gpu_model"] == "H800-80GB")
    assert (h800["stock_state"], h800["unavailable"]) == ("sold_out", "true")
    assert all(SHEET_TIME.fullmatch(row["observed_at"]) for row in plan)
    quote = list(csv.DictReader(io.StringIO(
        refreshed("quote", "--gpu", "H800", "--hours", "10", "--format", "csv").stdout
    )))  # fmt: skip
    assert quote[0]["stock_orderable_gpus"] != "" and SHEET_TIME.fullmatch(quote[0]["observed_at"])
    doc = json.loads(refreshed("quote", "--gpu", "H800", "--hours", "10", "--format", "json").stdout)
    assert doc["as_of"].endswith("Z") and doc["options"][0]["observed_at"].endswith("Z")
    as_json = doc["options"][0]["observed_at"]
    assert quote[0]["observed_at"] == as_json.replace("T", " ").removesuffix("Z")  # one moment, two spellings


def test_eight_4090s_are_never_recommended_where_no_machine_has_eight_idle(refreshed):
    """The replay's AutoDL RTX 4090s: 40 idle over west-B's machines, 10 over beijing-A's, but never
    more than 2 (west-B) or 1 (beijing-A) on one machine (tests/fixtures/raw/autodl). A job's GPUs are
    rented on one machine, so 8 (or 3) of them cannot be rented anywhere; 2 can in west-B, 1 in both.
    (AutoDL only: the replay's Aliyun gn8t RTX 4090 states no stock, so it would be recommended.)"""
    args = ("quote", "--gpu", "RTX4090", "--hours", "100", "--provider", "autodl")
    eight = as_json(refreshed, *args, "--gpus", "8")
    assert eight["recommendation"] is None
    assert "short of idle GPUs" in eight["no_recommendation"]
    west = next(o for o in eight["options"] if o["region"] == "west-B")
    assert (west["stock_state"], west["unavailable"]) == ("short", True)
    stock = west["availability"]
    assert (
        stock["idle_gpus"],
        stock["max_idle_gpus_per_machine"],
        stock["max_orderable_gpus_per_machine"],
    ) == (
        40,
        2,
        2,
    )
    assert {o["stock_state"] for o in eight["options"]} == {"short"}
    table = refreshed(*args, "--gpus", "8").stdout
    assert "idle 40/480, ≤2 on one machine" in table and "(<8 needed)" in table
    assert next(x for x in table.splitlines() if x.startswith("Recommendation:")).startswith(
        "Recommendation: none"
    )
    three = as_json(refreshed, *args, "--gpus", "3")
    assert three["recommendation"] is None
    two = as_json(refreshed, *args, "--gpus", "2")
    assert (two["recommendation"]["region"], two["recommendation"]["stock_state"]) == ("west-B", "available")
    assert {o["region"]: o["stock_state"] for o in two["options"]} == {
        "west-B": "available",
        "beijing-A": "short",
    }
    one = as_json(refreshed, *args)
    assert (one["recommendation"]["provider"], one["recommendation"]["region"]) == ("autodl", "west-B")
    assert {o["stock_state"] for o in one["options"]} == {"available"}


def test_plan_and_gpus_value_judge_the_4090_on_one_machine_as_quote_does(refreshed):
    """plan rents 6 RTX 4090 for this job (one machine): no AutoDL machine has 6 idle, so it is short
    there as in quote; gpus --value prices one GPU, which any machine with one idle serves."""
    args = ("--tokens", "1B", "--task", "full", "--gpu", "4090", "--provider", "autodl")
    doc = as_json(refreshed, "plan", "--params", "7B", *args)
    (option,) = doc["options"]
    gpus = option["gpus"]
    assert 2 < gpus <= 8 and option["link"] == "PCIe only (one machine)"
    region = option["rental"]["region"]
    quoted = as_json(refreshed, "quote", "--gpu", "RTX4090", "--gpus", str(gpus), "--hours", "100")
    same = next(o for o in quoted["options"] if o["region"] == region)
    assert option["stock_state"] == same["stock_state"] == "short"
    assert doc["cheapest"] is None
    assert "short of idle GPUs" in refreshed("plan", "--params", "7B", *args).stdout
    value = as_json(refreshed, "gpus", "--value", "--gpu", "RTX4090")
    (ranked,) = [r for r in value["ranked"] if r["gpu_model"] == "RTX4090-24GB"]
    assert (ranked["provider"], ranked["stock_state"], ranked["sold_out"]) == ("autodl", "available", False)
