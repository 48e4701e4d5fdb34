"""`planner quote --price-basis latest|median|min` and the trend beside each option, on a real database
(SQLite, and PostgreSQL in CI)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal

import pytest

from db.queries import LatestPrice
from planner.answers.quote import QuoteRequest, quote
from planner.catalog import get_model
from planner.config import load_config
from planner.ingest.importer import import_csv
from planner.pricing.cost import Job, job_cost, offer_of, shown_total
from planner.pricing.recent import Recent, summarise
from tests.conftest import price_row, write_csv

FX = load_config(env={}).section("fx")


def load(engine, tmp_path, rows):
    import_csv(engine, write_csv(tmp_path / "prices.csv", rows), FX)


def run(engine, **kwargs):
    with engine.connect() as conn:
        return quote(conn, QuoteRequest(gpu="A100", **kwargs), FX)


def series(instance_type, prices_by_day, **overrides):
    """One instance's on-demand prices on the given days of October 2026."""
    return [
        price_row(instance_type=instance_type, price=str(p), observed_at=f"2026-10-{d:02d}", **overrides)
        for d, p in prices_by_day
    ]


# RISING: 20 -> 30 -> 25 (latest 25, median 25, min 20, trend up); STEADY: one price of 24, no history.
RISING = series("RISING", [(1, 20), (10, 30), (20, 25)])
STEADY = series("STEADY", [(20, 24)])


@pytest.mark.parametrize(
    ("basis", "order", "totals"),
    [
        ("latest", ["STEADY", "RISING"], {"STEADY": "2400.00", "RISING": "2500.00"}),
        ("median", ["STEADY", "RISING"], {"STEADY": "2400.00", "RISING": "2500.00"}),
        ("min", ["RISING", "STEADY"], {"STEADY": "2400.00", "RISING": "2000.00"}),
    ],
)
def test_the_basis_decides_the_price_and_the_ranking(engine, tmp_path, basis, order, totals):
    load(engine, tmp_path, RISING + STEADY)
    result = run(engine, hours=100, price_basis=basis)
    assert [o.offer.instance_type for o in result.options] == order
    by_type = {o.offer.instance_type: o for o in result.options}
    assert {k: str(shown_total(o.total_cny)) for k, o in by_type.items()} == totals
    rising, steady = by_type["RISING"], by_type["STEADY"]
    assert rising.price_basis == basis
    assert rising.offer.unit_price == Decimal(25)
    # One observation is not a history: STEADY is costed on its latest price whatever the basis.
    assert steady.price_basis == "latest" and steady.history is None
    assert rising.history.trend == "up"
    assert (rising.history.min, rising.history.median, rising.history.max) == (
        Decimal(20),
        Decimal(25),
        Decimal(30),
    )


def test_median_of_an_even_window_is_the_mean_of_the_middle_two(engine, tmp_path):
    load(engine, tmp_path, series("EVEN", [(1, 20), (5, 22), (10, 30), (20, 40)]))
    option = run(engine, hours=10, price_basis="median").options[0]
    assert option.unit_price == Decimal(26)
    assert option.total_cny == Decimal("260.00")


def test_prices_older_than_the_window_are_left_out(engine, tmp_path):
    rows = [price_row(instance_type="X", price="5", observed_at="2026-08-01")]
    rows += series("X", [(10, 30), (20, 40)])
    load(engine, tmp_path, rows)
    option = run(engine, hours=10, price_basis="min").options[0]
    assert option.unit_price == Decimal(30)  # the 5 of 1 August is 80 days before the latest price
    assert option.history.observations == 2


def test_top_is_applied_after_costing_on_the_basis(engine, tmp_path):
    load(engine, tmp_path, RISING + STEADY)
    assert run(engine, hours=100, price_basis="min", top=1).options[0].offer.instance_type == "RISING"
    assert run(engine, hours=100, price_basis="latest", top=1).options[0].offer.instance_type == "STEADY"


def test_subscription_break_even_uses_the_basis_prices(engine, tmp_path):
    rows = series("SUB", [(1, 10), (20, 20)])  # on-demand: min 10, latest 20
    rows += series("SUB", [(1, 7200), (20, 7200)], billing="monthly")
    load(engine, tmp_path, rows)
    latest = run(engine, hours=100).options[0]
    cheapest = run(engine, hours=100, price_basis="min").options[0]
    assert latest.subscription_breakeven_hours_per_month == Decimal("360.0")
    assert cheapest.subscription_breakeven_hours_per_month == Decimal("720.0")


def test_the_trend_is_flat_within_two_percent():
    day = dt.date(2026, 10, 20)

    def trend(first, last):
        return summarise([(day - dt.timedelta(days=9), Decimal(first)), (day, Decimal(last))], day, 30).trend

    assert trend("100", "102") == "flat"
    assert trend("100", "98") == "flat"
    assert trend("100", "102.01") == "up"
    assert trend("100", "97.99") == "down"
    assert summarise([(day, Decimal(1))], day, 30) is None


def test_tencent_tiers_keep_their_ratio_on_another_basis():
    row = LatestPrice(
        instance_id=1, provider="tencent", region="ap-beijing", instance_type="GT4", gpu_model="A100-40GB",
        gpu_count=1, vcpus=None, memory_gb=None, gpu_note=None, billing="on_demand", price=Decimal(30),
        currency="CNY", unit="hour", cny_per_gpu_hour=Decimal(30), tiers='[[96, "20"], [360, "10"]]',
        observed_at=dt.datetime(2026, 10, 20, tzinfo=dt.UTC), source=None, run_kind="refresh",
    )  # fmt: skip
    recent = Recent(30, 3, Decimal(15), Decimal(24), Decimal(30), Decimal(15), Decimal(30))
    option = job_cost(offer_of(row, FX), Job.check(1, 100, 5, "min"), recent)
    # Half the base price on the min basis: every step halves too (96 h at 15, then 4 h at 10).
    assert option.total_cny == Decimal(96 * 15 + 4 * 10)
    assert option.price_basis == "min" and option.offer.unit_price == Decimal(30)
    assert [str(t) for t in option.tiers_used] == ["0-96 h at 15.00", "96-100 h at 10.00"]


def test_quote_and_rental_agree_on_the_median_basis(engine, tmp_path):
    """planner.answers.rental costs whole instances the same way; on a median basis both give one total."""
    from planner.answers import rental

    load(engine, tmp_path, series("EIGHT", [(1, 160), (10, 240), (20, 200)], gpu_count=8))
    quoted = run(engine, hours=50, gpus=8, price_basis="median").options[0]
    with engine.connect() as conn:
        curve = rental.rental_curve(conn, get_model("A100-40GB"), 8, FX, basis="median")
    rented = curve.cheapest(400)
    assert quoted.total_cny == rented.total_cny == Decimal("10000.00")


def test_table_shows_the_trend_and_says_which_basis(run_cli, tmp_path):
    path = write_csv(tmp_path / "p.csv", RISING + STEADY)
    assert run_cli("import", str(path)).exit_code == 0
    result = run_cli("quote", "--gpu", "A100", "--hours", "100", "--price-basis", "min")
    assert result.exit_code == 0, result.output
    assert "30-day min price" in result.output  # the basis asked for
    header = next(line for line in result.output.splitlines() if line.lstrip().startswith("#"))
    assert "30d min-med-max" in header and "trend" in header
    rising = next(line for line in result.output.splitlines() if "RISING" in line)
    steady = next(line for line in result.output.splitlines() if "STEADY" in line)
    assert "20.00-25.00-30.00" in rising and " up " in rising
    assert "(latest)" in steady and "(latest)" not in rising


def test_without_history_the_table_says_so_once(run_cli, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", STEADY))).exit_code == 0
    result = run_cli("quote", "--gpu", "A100", "--hours", "100", "--price-basis", "median")
    assert result.exit_code == 0, result.output
    assert "No option has 2 or more prices" in result.output and "30 days" in result.output
    assert "trend" not in result.output and "(latest)" not in result.output


def test_json_and_csv_carry_basis_latest_price_and_trend(run_cli, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", RISING + STEADY))).exit_code == 0
    args = ("quote", "--gpu", "A100", "--hours", "100", "--price-basis", "median")
    doc = json.loads(run_cli(*args, "--format", "json").output)
    assert doc["query"]["price_basis"] == "median" and doc["query"]["history_days"] == 30
    rising = next(o for o in doc["options"] if o["instance_type"] == "RISING")
    assert (
        rising["price_basis"] == "median" and rising["unit_price"] == 25 and rising["latest_unit_price"] == 25
    )
    assert rising["trend"] == "up"
    assert rising["history"] == {
        "days": 30, "observations": 3, "min": 20, "median": 25, "max": 30, "first": 20, "last": 25, "trend": "up"
    }  # fmt: skip
    steady = next(o for o in doc["options"] if o["instance_type"] == "STEADY")
    assert steady["price_basis"] == "latest" and steady["trend"] is None and steady["history"] is None

    table = list(csv.DictReader(io.StringIO(run_cli(*args, "--format", "csv").output.lstrip("\ufeff"))))
    row = next(r for r in table if r["instance_type"] == "RISING")
    assert (row["history_first"], row["history_last"]) == ("20", "25")
    assert (row["price_basis"], row["trend"], row["history_median"], row["history_observations"]) == (
        "median",
        "up",
        "25",
        "3",
    )


def test_the_default_basis_comes_from_config(run_cli, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", RISING + STEADY))).exit_code == 0
    config = tmp_path / "config.toml"
    config.write_text('[quote]\nprice_basis = "min"\n', encoding="utf-8")
    doc = json.loads(
        run_cli(
            "--config", str(config), "quote", "--gpu", "A100", "--hours", "100", "--format", "json"
        ).output
    )
    assert doc["query"]["price_basis"] == "min"
    assert doc["recommendation"]["instance_type"] == "RISING"


@pytest.mark.parametrize("basis", ["mean", "", "avg"])
def test_an_unknown_basis_is_one_line_and_exit_2(run_cli, basis):
    result = run_cli("quote", "--gpu", "A100", "--hours", "100", "--price-basis", basis)
    assert result.exit_code == 2
    assert f"{basis!r} is not one of" in result.output and "'latest', 'median', 'min'" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("seed", range(4))
def test_top_k_on_a_basis_equals_the_first_k_of_the_whole_ranking(engine, tmp_path, seed):
    """Instances that cannot reach the top are left out before their series is read
    (quote._can_reach_top); what is shown must not change. Prices come from a small set, so ties
    in cents are common and the other sort keys settle them."""
    import random

    rng = random.Random(seed)
    rows = []
    for n in range(30):
        gpus = rng.choice([1, 2, 8])
        for billing, scale in (("on_demand", 1), ("monthly", 400)):
            if billing == "monthly" and rng.random() < 0.5:
                continue
            days = rng.sample(range(1, 31), rng.randint(1, 6))
            rows += [
                price_row(
                    instance_type=f"I{n:02d}",
                    gpu_count=gpus,
                    billing=billing,
                    price=str(rng.choice([20, 21, 22, 25, 30]) * gpus * scale),
                    observed_at=f"2026-10-{d:02d}",
                )
                for d in days
            ]
    load(engine, tmp_path, rows)
    for basis in ("median", "min"):
        whole = run(engine, hours=300, gpus=4, price_basis=basis)
        for k in (1, 3, 10):
            top = run(engine, hours=300, gpus=4, price_basis=basis, top=k)
            assert top.options == whole.options[:k], (basis, k)
            assert top.considered == whole.considered == 30


def test_a_price_stored_as_zero_neither_crashes_quote_nor_gpus_value(engine, tmp_path, run_cli):
    """Prices are NUMERIC(18, 6); a database written before smaller ones were refused may hold 0."""
    from sqlalchemy import update

    from db.schema import prices

    load(engine, tmp_path, [price_row(instance_type="ZERO"), price_row(instance_type="REAL", price="30")])
    with engine.begin() as conn:
        conn.execute(update(prices).where(prices.c.price == Decimal("28.64")).values(price=0))
    assert [o.total_cny for o in run(engine, hours=10).options] == [Decimal("0.00"), Decimal("300.00")]
    result = run_cli("gpus", "--value", "--gpu", "A100", "--format", "json")
    assert result.exit_code == 0, result.output
    (ranked,) = json.loads(result.stdout)["ranked"]
    assert ranked["instance_type"] == "REAL"


def test_a_price_that_rounds_to_zero_is_refused_on_import(run_cli, tmp_path):
    path = write_csv(tmp_path / "p.csv", [price_row(price="0.0000001")])
    result = run_cli("import", str(path))
    assert result.exit_code == 2
    assert "rounds to zero" in result.output and "six decimal places" in result.output


def test_a_bad_basis_in_the_config_names_the_setting(run_cli, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[quote]\nprice_basis = "mean"\n', encoding="utf-8")
    result = run_cli("--config", str(config), "quote", "--gpu", "A100", "--hours", "10")
    assert result.exit_code == 2
    assert "[quote] price_basis" in result.output and "unknown price basis 'mean'" in result.output
