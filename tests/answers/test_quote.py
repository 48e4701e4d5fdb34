"""The quote engine's rules, on a real database (SQLite, and PostgreSQL in CI)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from planner.answers.quote import QuoteRequest, quote, validate
from planner.config import load_config
from planner.errors import UnknownNameError, UsageError
from planner.ingest.importer import import_csv
from planner.pricing.tiers import tiered_cost
from tests.conftest import price_row, write_csv

FX = load_config(env={}).section("fx")


def load(engine, tmp_path, rows):
    import_csv(engine, write_csv(tmp_path / "prices.csv", rows), FX)


def run(engine, **kwargs):
    with engine.connect() as conn:
        return quote(conn, QuoteRequest(**kwargs), FX)


def test_three_providers_ranked_by_total_tencent_first(engine, tmp_path):
    load(
        engine,
        tmp_path,
        [
            price_row(provider="tencent", instance_type="GT4.4XLARGE96", price="28.64"),
            price_row(
                provider="aliyun",
                region="cn-shenzhen",
                instance_type="ecs.gn7e-c16g1.4xlarge",
                gpu_model="A100-80GB",
                price="34.742",
            ),
            price_row(
                provider="volcengine",
                region="cn-beijing",
                instance_type="ecs.pni2.3xlarge",
                gpu_model="A100-80GB",
                price="40.39",
            ),
        ],
    )
    result = run(engine, gpu="A100", hours=500)
    assert [o.offer.provider for o in result.options] == ["tencent", "aliyun", "volcengine"]
    best = result.recommendation
    assert best.total_cny == Decimal("14320.00")
    assert best.cny_per_gpu_hour == Decimal("28.6400")
    assert result.options[1].total_cny == Decimal("17371.00")


def test_monthly_wins_for_500_hours_but_on_demand_over_60_days(engine, tmp_path):
    load(
        engine,
        tmp_path,
        [price_row(price="28.64"), price_row(billing="monthly", price="12948")],
    )
    month = run(engine, gpu="A100", hours=500)
    assert month.recommendation.offer.billing == "monthly"
    assert month.recommendation.total_cny == Decimal("12948.00")
    assert month.recommendation.subscription_breakeven_hours_per_month == Decimal("452.1")
    assert len(month.options) == 1  # one instance, shown once on its cheapest mode

    spread = run(engine, gpu="A100", hours=500, days=60)
    assert spread.recommendation.offer.billing == "on_demand"
    assert spread.recommendation.total_cny == Decimal("14320.00")


def test_whole_instances_are_paid_for(engine, tmp_path):
    load(
        engine,
        tmp_path,
        [
            price_row(instance_type="ONE", price="30"),
            price_row(instance_type="EIGHT", gpu_count=8, price="200"),
        ],
    )
    eight = run(engine, gpu="A100-40GB", hours=100, gpus=8)
    assert eight.recommendation.offer.instance_type == "EIGHT"
    assert eight.recommendation.instances == 1
    assert eight.recommendation.total_cny == Decimal("20000.00")

    four = run(engine, gpu="A100-40GB", hours=100, gpus=4)
    assert four.recommendation.offer.instance_type == "ONE"
    assert four.recommendation.instances == 4
    assert four.recommendation.total_cny == Decimal("12000.00")
    eight_for_four = next(o for o in four.options if o.offer.instance_type == "EIGHT")
    assert eight_for_four.idle_gpus == 4


@pytest.mark.parametrize(
    ("mode", "days", "periods"),
    [("daily", 3, 3), ("weekly", 8, 2), ("weekly", 7, 1), ("monthly", 31, 2), ("yearly", 400, 2)],
)
def test_subscriptions_pay_whole_periods_covering_the_days(engine, tmp_path, mode, days, periods):
    load(engine, tmp_path, [price_row(billing=mode, price="10000")])
    result = run(engine, gpu="A100", hours=24, days=days)
    assert result.recommendation.units_paid == periods
    assert result.recommendation.total_cny == Decimal(10000 * periods)


def test_spot_only_when_asked_and_flagged(engine, tmp_path):
    load(engine, tmp_path, [price_row(price="28.64"), price_row(billing="spot", price="5")])
    default = run(engine, gpu="A100", hours=10)
    assert [o.offer.billing for o in default.options] == ["on_demand"]
    spot = run(engine, gpu="A100", hours=10, billing=("spot",))
    assert spot.recommendation.offer.billing == "spot"
    assert spot.recommendation.offer.interruptible is True


def test_china_variants_only_on_request_and_labelled(engine, tmp_path):
    load(
        engine,
        tmp_path,
        [
            price_row(),
            price_row(
                provider="autodl",
                region="west-B",
                instance_type="A800-80GB",
                gpu_model="A800-80GB",
                price="4.98",
            ),
        ],
    )
    plain = run(engine, gpu="A100", hours=10)
    assert {o.offer.gpu_model for o in plain.options} == {"A100-40GB"}
    with_variants = run(engine, gpu="A100", hours=10, include_variants=True)
    first = with_variants.recommendation
    assert first.offer.gpu_model == "A800-80GB" and first.offer.china_variant is True
    asked = run(engine, gpu="A800", hours=10)
    assert asked.recommendation.offer.china_variant is False


def test_filters_provider_region_billing_and_top(engine, tmp_path):
    load(
        engine,
        tmp_path,
        [
            price_row(provider="tencent", region="ap-beijing", price="28"),
            price_row(provider="tencent", region="ap-shanghai", price="29"),
            price_row(provider="aliyun", region="cn-beijing", instance_type="x", price="30"),
            price_row(
                provider="aliyun", region="cn-beijing", instance_type="x", billing="monthly", price="9000"
            ),
        ],
    )
    assert {o.offer.provider for o in run(engine, gpu="A100", hours=10, providers=("Aliyun",)).options} == {
        "aliyun"
    }
    assert {o.offer.region for o in run(engine, gpu="A100", hours=10, regions=("ap-shanghai",)).options} == {
        "ap-shanghai"
    }
    only_monthly = run(engine, gpu="A100", hours=10, billing=("monthly",))
    assert [o.offer.billing for o in only_monthly.options] == ["monthly"]
    top = run(engine, gpu="A100", hours=10, top=1)
    assert len(top.options) == 1 and top.considered == 3


def test_latest_observation_wins_and_history_is_summarised(engine, tmp_path):
    rows = [price_row(price=str(p), observed_at=f"2026-10-{d:02d}") for d, p in [(1, 30), (10, 20), (20, 25)]]
    load(engine, tmp_path, rows)
    best = run(engine, gpu="A100", hours=10).recommendation
    assert best.unit_price == Decimal("25")
    assert best.offer.observed_at.date().isoformat() == "2026-10-20"
    assert best.history is not None
    assert (best.history.min, best.history.median, best.history.max) == (
        Decimal(20),
        Decimal(25),
        Decimal(30),
    )


def test_json_shape_has_the_documented_keys(engine, tmp_path):
    from planner.output import dumps_json

    load(engine, tmp_path, [price_row()])
    doc = json.loads(dumps_json(run(engine, gpu="A100", hours=500).to_dict()))
    assert set(doc) >= {"query", "as_of", "options"}
    option = doc["options"][0]
    for key in (
        "provider", "region", "instance_type", "gpu_model", "gpus_per_instance", "instances", "billing",
        "unit_price", "unit", "currency", "total_cny", "cny_per_gpu_hour", "observed_at", "source",
    ):  # fmt: skip
        assert key in option
    assert option["total_cny"] == 14320


def test_tiered_hourly_cost_pays_each_hour_at_its_step():
    tiers = [(96, Decimal("20")), (360, Decimal("10"))]
    assert tiered_cost(Decimal("30"), tiers, Decimal(50)) == Decimal(1500)
    assert tiered_cost(Decimal("30"), tiers, Decimal(100)) == Decimal(96 * 30 + 4 * 20)
    assert tiered_cost(Decimal("30"), tiers, Decimal(500)) == Decimal(96 * 30 + 264 * 20 + 140 * 10)
    assert tiered_cost(Decimal("30"), [], Decimal(500)) == Decimal(15000)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"hours": -5}, "hours must be a positive"),
        ({"hours": 0}, "hours must be a positive"),
        ({"hours": float("nan")}, "hours must be a positive"),
        ({"hours": 10, "gpus": 0}, "gpus must be between"),
        ({"hours": 100, "days": 2}, "do not fit in 2 days"),
        ({"hours": 10, "days": 0}, "days must be at least 1"),
        ({"hours": 10, "top": 0}, "top must be at least 1"),
        ({"hours": 1e9}, "more than ten years"),
    ],
)
def test_bad_requests_are_refused(kwargs, fragment):
    with pytest.raises(UsageError) as err:
        validate(QuoteRequest(gpu="A100", **kwargs))
    assert fragment in err.value.message


def test_unknown_names_suggest_near_ones():
    with pytest.raises(UnknownNameError) as err:
        validate(QuoteRequest(gpu="A100", hours=1, billing=("montly",)))
    assert "monthly" in err.value.suggestions
    with pytest.raises(UnknownNameError) as err:
        validate(QuoteRequest(gpu="A100", hours=1, providers=("tencnet",)))
    assert err.value.suggestions[0] == "tencent"


def test_each_option_gets_history_from_its_own_window(engine, tmp_path):
    """A stale option and a fresh one: each is summarised over the 30 days before its own latest day."""
    rows = [price_row(price=str(p), observed_at=f"2026-10-{d:02d}") for d, p in [(1, 30), (20, 20)]]
    rows += [
        price_row(instance_type="OLD", price=str(p), observed_at=day)
        for day, p in [("2024-01-01", 50), ("2024-01-10", 40), ("2024-03-01", 45)]
    ]
    load(engine, tmp_path, rows)
    options = {o.offer.instance_type: o for o in run(engine, gpu="A100", hours=10).options}
    assert options["GT4.4XLARGE96"].history.observations == 2
    old = options["OLD"]
    assert old.unit_price == Decimal(45)
    assert old.history is None  # the only observation within 30 days of 2024-03-01 is itself
