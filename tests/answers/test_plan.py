"""Planning and renting for a workload, on a real database (SQLite, and PostgreSQL in CI).

The prices are round numbers so every total can be checked by hand against the formulas:
GPU-hours = 6·N·D / (peak TFLOPS · 1e12 · MFU · 3600), then the quote engine's billing rules.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from sqlalchemy import insert

from db.queries import LatestPrice, latest_prices
from db.schema import availability
from planner.answers.plan import Workload, mark, plan
from planner.answers.quote import QuoteRequest, quote
from planner.answers.rental import rental_curve, rentals
from planner.answers.tco import rent_vs_buy
from planner.catalog import get_model
from planner.config import load_config
from planner.errors import UsageError
from planner.ingest.importer import import_csv
from planner.pricing.cost import OfferQuery, offer_of
from planner.pricing.links import link_between
from planner.pricing.tiers import tiered_cost
from tests.conftest import price_row, write_csv

FX = load_config(env={}).section("fx")
LORA = Workload(params=7e9, task="lora", tokens=1e9)  # 17.3 GB with the defaults
# LoRA: 4·N·D (no weight gradients for the frozen weights, issue 27) plus attention 12·layers·seq·hidden·D
# (PaLM) for the shape --params 7B assumes (33 × 4224, seq 2048)
FLOPS = (4 * 7e9 + 12 * 33 * 2048 * 4224) * 1e9


def gpu_hours(peak_tflops: float, mfu: float) -> float:
    return FLOPS / (peak_tflops * 1e12 * mfu * 3600)


# LoRA MFU (issue 27): 0.42 on Ampere, scaled by the generation's pretraining MFU at 7B over Ampere's
# (planner.workload.estimate): Hopper 0.50 (flat from 5B to 70B) over 0.46; Volta/Turing 0.25/0.46;
# GeForce cards 0.8 × 0.42.
RTX4090_H = gpu_hours(165.2, 0.42 * 0.8)  # 157.3
A100_H = gpu_hours(312, 0.42)  # 66.6
H800_H = gpu_hours(989, round(0.42 * 0.50 / 0.46, 4))  # 19.3
T4_MFU = round(0.42 * 0.25 / 0.46, 4)
T4_H = gpu_hours(65, T4_MFU)  # 588 GPU-hours of compute, on 2 GPUs (17.3 GB > 16 GB)


def t4_slowdown(machines: int) -> float:
    """The T4s sit on 1-GPU instances, so their weights are sharded and gathered twice a step over the
    assumed 25 Gbit/s network (planner.workload.communication): 2 × 7e9 × 2 bytes × (m - 1)/m / 3.125 GB/s,
    against a step's compute of 2048 tokens."""
    comm = 2 * 7e9 * 2 * (machines - 1) / machines / (25 / 8 * 1e9)
    compute = FLOPS / 1e9 * 2048 / (65e12 * T4_MFU)
    return max(1.0, comm / compute)


T4_H2 = T4_H * t4_slowdown(2)  # 1.03x: the step waits 4.48 s for 4.34 s of compute

# Prices chosen so the ranking is T4 (600), A100 (666), RTX 4090 (786), H800 (965).
ROWS = [
    price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB", price="5"),
    price_row(provider="tencent", region="ap-beijing", instance_type="A100x1", gpu_model="A100-80GB", price="10"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="H800x8", gpu_model="H800-80GB", gpu_count=8, price="400"),
    price_row(provider="tencent", region="ap-shanghai", instance_type="T4x1", gpu_model="T4-16GB", billing="monthly", price="300"),
    price_row(provider="aliyun", region="cn-hangzhou", instance_type="T4x1-hourly", gpu_model="T4-16GB", price="5"),
    price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB", billing="spot", price="0.5"),
]  # fmt: skip


@pytest.fixture
def priced(engine, tmp_path):
    import_csv(engine, write_csv(tmp_path / "prices.csv", ROWS), FX)
    return engine


def run_plan(engine, workload=LORA, gpus=(), providers=(), billing=(), **kwargs):
    query = OfferQuery.build(gpus, providers, (), billing)
    with engine.connect() as conn:
        return plan(conn, workload, FX, query=query, **kwargs)


def rental_cost(row, gpu_hours, min_gpus, fx, max_gpus=None):
    """The rental of ``gpu_hours`` on the one offer ``row`` makes, or None when it cannot serve."""
    found = rentals([offer_of(row, fx)], gpu_hours, min_gpus, max_gpus)
    return found[0] if found else None


def cents(value):
    return value.quantize(Decimal("0.01"))


def by_gpu(result):
    return {o.estimate.gpu: o for o in result.options}


def test_every_priced_gpu_ranked_by_total_with_hand_computed_costs(priced):
    result = run_plan(priced)
    assert [o.estimate.gpu for o in result.options] == ["T4-16GB", "A100-80GB", "RTX4090-24GB", "H800-80GB"]
    got = by_gpu(result)
    # T4: 2 GPUs needed, 294 h = 13 days: two instances on one monthly period each.
    t4 = got["T4-16GB"].rental
    assert (t4.gpus, t4.instances, t4.offer.billing, cents(t4.total_cny)) == (
        2,
        2,
        "monthly",
        Decimal("600.00"),
    )
    assert t4.hours == pytest.approx(T4_H2 / 2)
    assert cents(got["RTX4090-24GB"].rental.total_cny) == Decimal(str(round(5 * RTX4090_H, 2)))
    assert cents(got["A100-80GB"].rental.total_cny) == Decimal(str(round(10 * A100_H, 2)))
    # H800: the 8-GPU instance runs the job on all 8 GPUs: 400 CNY/h for 19.3 / 8 h.
    h800 = got["H800-80GB"].rental
    assert (h800.gpus, h800.instances, got["H800-80GB"].gpus_needed) == (8, 1, 1)
    assert h800.hours == pytest.approx(H800_H / 8)
    assert cents(h800.total_cny) == Decimal(str(round(50 * H800_H, 2)))
    assert got["H800-80GB"].estimate.wall_hours == pytest.approx(h800.hours)
    assert result.from_snapshot is False
    assert "P100-16GB" in result.unpriced and "RTX4090-24GB" not in result.unpriced


def test_fastest_and_pareto_marks(priced):
    got = by_gpu(run_plan(priced))
    assert [g for g, o in got.items() if o.fastest] == ["H800-80GB"]
    # T4 is the cheapest, H800 the fastest, the A100 between; the 4090 is slower and dearer than the A100.
    assert {g for g, o in got.items() if o.pareto} == {"T4-16GB", "A100-80GB", "H800-80GB"}


def test_spot_only_when_asked(priced):
    assert by_gpu(run_plan(priced))["RTX4090-24GB"].rental.offer.billing == "on_demand"
    spot = run_plan(priced, billing=["spot"])
    assert [o.estimate.gpu for o in spot.options] == ["RTX4090-24GB"]
    assert spot.options[0].rental.offer.interruptible is True
    assert cents(spot.options[0].rental.total_cny) == Decimal(str(round(0.5 * RTX4090_H, 2)))


def test_budget_drops_dearer_options_and_says_so(priced):
    result = run_plan(priced, budget_cny=630)
    assert [o.estimate.gpu for o in result.options] == ["T4-16GB"]
    reasons = {e.gpu_model: e.reason for e in result.excluded}
    assert "over the budget" in reasons["RTX4090-24GB"]
    assert reasons["A100-80GB"].startswith(f"cheapest is {round(10 * A100_H, 2):,.2f} CNY")


def test_deadline_adds_gpus_until_the_job_finishes_in_time(priced):
    result = run_plan(priced, deadline_hours=20)
    got = by_gpu(result)
    assert all(o.rental.hours <= 20 for o in result.options)
    assert got["RTX4090-24GB"].rental.gpus == 8  # ceil(157.3 / 20)
    assert cents(got["RTX4090-24GB"].rental.total_cny) == Decimal(
        str(round(5 * RTX4090_H, 2))
    )  # hourly: same
    assert got["A100-80GB"].rental.gpus == 4  # ceil(66.6 / 20)
    # T4 on 30 GPUs would be 19.6 h of compute, but on 30 single-GPU machines each step waits for its
    # weights over the network (2.0x): it misses the deadline and is left out, saying so.
    assert "T4-16GB" not in got
    reason = {e.gpu_model: e.reason for e in result.excluded}["T4-16GB"]
    assert reason.startswith("takes ") and "on 30 GPUs, over the 20 h deadline" in reason
    assert f"{T4_H * t4_slowdown(30) / 30:,.1f} h" in reason


def test_gpus_max_excludes_what_needs_more(priced):
    result = run_plan(priced, deadline_hours=20, gpus_max=4)
    assert [o.estimate.gpu for o in result.options] == ["A100-80GB"]
    reasons = {e.gpu_model: e.reason for e in result.excluded}
    assert "needs 8 GPUs" in reasons["RTX4090-24GB"] and "20 h" in reasons["RTX4090-24GB"]
    assert "the 4 allowed" in reasons["RTX4090-24GB"]
    assert "every instance has more GPUs" in reasons["H800-80GB"] and "the 4 allowed" in reasons["H800-80GB"]
    big = run_plan(priced, workload=Workload(70e9, "full", 1e9), gpus_max=4)
    assert (
        "to hold 1237 GB" in {e.gpu_model: e.reason for e in big.excluded}["A100-80GB"]
    )  # plain loss: 14 bytes


def test_gpu_filter_and_provider_filter(priced):
    assert [o.estimate.gpu for o in run_plan(priced, gpus=["4090", "A100"]).options] == [
        "A100-80GB",
        "RTX4090-24GB",
    ]
    assert {o.rental.offer.provider for o in run_plan(priced, providers=["AutoDL"]).options} == {"autodl"}


def test_sold_out_offer_is_passed_over(priced):
    with priced.begin() as conn:
        rows = latest_prices(conn, gpu_models=["T4-16GB"], billing=["monthly"])
        conn.execute(
            insert(availability).values(
                instance_id=rows[0].instance_id,
                billing="monthly",
                run_id=1,
                observed_at=dt.datetime(2026, 11, 1),
                observed_on=dt.date(2026, 11, 1),
                stock_status="sold_out",
            )
        )
    t4 = by_gpu(run_plan(priced))["T4-16GB"].rental
    assert (t4.offer.instance_type, t4.rentable) == ("T4x1-hourly", True)
    assert cents(t4.total_cny) == Decimal(str(round(5 * T4_H2, 2)))


def test_history_gives_median_and_trend(engine, tmp_path):
    days = [("2026-10-10", "2.2"), ("2026-10-20", "2.1"), ("2026-11-01", "2.0"), ("2026-09-01", "9")]
    rows = [ROWS[0] | {"observed_at": d, "price": p} for d, p in days]
    import_csv(engine, write_csv(tmp_path / "h.csv", rows), FX)
    rental = run_plan(engine).options[0].rental
    assert rental.unit_price == Decimal("2")  # plan costs the latest price
    recent = rental.history
    assert (recent.observations, recent.median, recent.min, recent.max) == (
        3,
        Decimal("2.1"),
        2,
        Decimal("2.2"),
    )
    assert recent.trend == "down"  # 2.2 -> 2.0; the September price is outside the 30 days
    with engine.connect() as conn:
        curve = rental_curve(conn, get_model("RTX4090-24GB"), 1, FX, basis="median")
        assert curve.cheapest(1000).unit_price == Decimal("2.1")
        assert curve.cheapest(1000).total_cny == Decimal("2100.00")
        assert rental_curve(conn, get_model("RTX4090-24GB"), 1, FX, basis="min").cheapest(10).unit_price == 2


def test_costs_match_the_quote_engine_when_gpus_fill_instances(priced):
    with priced.connect() as conn:
        rows = {r.instance_type: r for r in latest_prices(conn)}
        cases = [
            ("A100x1", "A100-80GB", 1, 149.5),
            ("H800x8", "H800-80GB", 8, 30.25),
            ("T4x1", "T4-16GB", 2, 400),
        ]
        for instance, gpu, gpus, hours in cases:
            ours = rental_cost(rows[instance], hours * gpus, gpus, FX)
            theirs = quote(
                conn, QuoteRequest(gpu=gpu, hours=hours, gpus=gpus, billing=(rows[instance].billing,)), FX
            )
            match = next(o for o in theirs.options if o.offer.instance_type == instance)
            assert (ours.total_cny, ours.cny_per_gpu_hour) == (match.total_cny, match.cny_per_gpu_hour)
            assert ours.hours == hours and ours.instances == match.instances


def _row(**changes) -> LatestPrice:
    base = dict(
        instance_id=1, provider="tencent", region="ap-beijing", instance_type="GN7", gpu_model="T4-16GB",
        gpu_count=1.0, vcpus=8, memory_gb=32.0, gpu_note=None, billing="on_demand", price=Decimal("30"),
        currency="CNY", unit="hour", cny_per_gpu_hour=Decimal("30"), tiers=None,
        observed_at=dt.datetime(2026, 11, 1), source="test", run_kind="import",
    )  # fmt: skip
    return LatestPrice(**(base | changes))


LINK_CASES = [
    # (model, GPUs per instance, instances) -> (label, NVLink GB/s the option's GPUs use)
    ("H800-80GB", 1, 1, None, None),  # one GPU: nothing to link
    ("H800-80GB", 8, 1, "NVLink (cut) 400 GB/s", 400),
    ("A800-80GB", 8, 2, "NVLink (cut) 400 GB/s + network", 400),
    ("A100-80GB", 2, 8, "NVLink 600 GB/s + network", 600),
    ("H100-80GB", 8, 1, "NVLink 900 GB/s", 900),
    ("RTX4090-24GB", 4, 1, "PCIe only", None),
    ("RTX4090-24GB", 4, 3, "PCIe only + network", None),
    ("H800-80GB", 1, 16, "network only", None),  # 1-GPU instances: the card's NVLink goes unused
    ("RTX3090-24GB", 2, 1, "NVLink bridge 112.5 GB/s", 112.5),
    ("P100-16GB", 4, 1, "unknown", None),
    ("P100-16GB", 4, 2, "unknown + network", None),
]


@pytest.mark.parametrize(("gpu", "per_instance", "instances", "label", "nvlink"), LINK_CASES)
def test_link_between(gpu, per_instance, instances, label, nvlink):
    assert link_between(get_model(gpu), per_instance, instances) == (label, nvlink)


@pytest.mark.parametrize(
    ("gpu", "gpus", "label", "nvlink"),
    [
        ("RTX4090-24GB", 4, "PCIe only (one machine)", None),
        ("A800-80GB", 8, "NVLink (cut) 400 GB/s (one machine)", 400),
        ("A800-80GB", 16, "NVLink (cut) 400 GB/s + network", 400),  # no market machine holds 16
        ("H20-96GB", 1, None, None),
    ],
)
def test_a_marketplaces_per_gpu_listings_can_share_one_machine(gpu, gpus, label, nvlink):
    """AutoDL's 'instance' is one GPU of a machine of up to 8: up to 8 rented together sit on one."""
    assert link_between(get_model(gpu), 1, gpus, per_gpu_listing=True) == (label, nvlink)


def test_options_say_how_their_gpus_talk(priced):
    got = {o.estimate.gpu: o for o in run_plan(priced).options}
    assert {g: o.link for g, o in got.items()} == {
        "T4-16GB": ("network only", None),  # 2 GPUs on two 1-GPU instances
        "RTX4090-24GB": (None, None),
        "H800-80GB": ("NVLink (cut) 400 GB/s", 400),  # all 8 GPUs of one instance
        "A100-80GB": (None, None),
    }
    doc = got["H800-80GB"].to_dict()
    assert (doc["link"], doc["nvlink_gbps_bidir"]) == ("NVLink (cut) 400 GB/s", 400)
    assert got["A100-80GB"].to_dict()["link"] is None
    big = run_plan(priced, workload=Workload(70e9, "full", 1e9), gpus=["H800"])
    assert (big.options[0].rental.instances, big.options[0].rental.offer.gpus_per_instance) == (2, 8)
    assert big.options[0].link == ("NVLink (cut) 400 GB/s + network", 400)


def test_tiered_hourly_prices_and_rows_that_cannot_serve():
    tiers = json.dumps([[96, "20"], [360, "10"]])
    r = rental_cost(_row(tiers=tiers), 500, 1, FX)
    assert r.total_cny == tiered_cost(Decimal(30), [(96, Decimal(20)), (360, Decimal(10))], Decimal(500))
    assert rental_cost(_row(gpu_count=0.5), 10, 1, FX) is None  # a vGPU slice
    assert rental_cost(_row(gpu_count=8.0), 10, 1, FX, max_gpus=4) is None
    assert rental_cost(_row(), 1e9, 1, FX) is None  # more than ten years on one GPU
    usd = rental_cost(_row(currency="USD", price=Decimal("1")), 10, 1, FX)
    assert usd.total_cny == Decimal("71.00") and usd.offer.currency == "USD"


def test_mark_handles_ties():
    from planner.answers.plan import PlanOption

    def opt(total, hours):
        rental = rental_cost(_row(price=Decimal(total)), hours, 1, FX)
        return PlanOption(estimate=LORA.on(get_model("T4-16GB")), rental=rental, gpus_needed=1)

    same = mark([opt(10, 5), opt(10, 5), opt(100, 1)])  # 50 CNY in 5 h twice; 100 CNY in 1 h
    assert [o.pareto for o in same] == [True, True, True]
    assert [o.fastest for o in same] == [False, False, True]
    assert mark([]) == []


def test_rent_vs_buy_uses_the_cheapest_rental_and_a_consistent_break_even(priced):
    gpu = get_model("RTX4090-24GB")
    with priced.connect() as conn:
        curve = rental_curve(conn, gpu, 1, FX, basis="latest")
    result, rental = rent_vs_buy(curve, gpu, 3000, None, None)
    assert (rental.offer.provider, rental.offer.billing, rental.unit_price) == (
        "autodl",
        "on_demand",
        Decimal("5"),
    )
    assert result.rent_total_cny == 15000
    assert result.rent_cny_per_gpu_hour == 5
    at_be, _ = rent_vs_buy(curve, gpu, result.break_even_hours, None, None)
    assert at_be.buy_total_cny == pytest.approx(at_be.rent_total_cny, rel=Decimal("1e-4"))
    rental = result.assumptions[-1].source  # the offer the rent side costs, and its price
    assert "autodl RTX 4090 (west-B)" in rental and "on_demand at 5 CNY/hour" in rental


def test_rent_vs_buy_without_prices_is_a_clear_error(engine):
    gpu = get_model("RTXA6000-48GB")
    with engine.connect() as conn:
        curve = rental_curve(conn, gpu, 1, FX)
    with pytest.raises(UsageError, match="no rental price for RTXA6000-48GB") as err:
        rent_vs_buy(curve, gpu, 1000, None, None, cny_per_usd="7.1")
    assert "give one with rent price" in err.value.hint  # the library names no flag


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(budget_cny=0), "budget"),
        (dict(budget_cny=-1), "budget"),
        (dict(deadline_hours=0), "deadline hours"),
        (dict(deadline_hours=1e6), "ten years"),
        (dict(gpus_max=0), "gpus max"),
    ],
)
def test_bad_filters(priced, kwargs, match):
    with pytest.raises(UsageError, match=match):
        run_plan(priced, **kwargs)


def test_plan_needs_tokens(priced):
    with pytest.raises(UsageError, match="tokens"):
        run_plan(priced, workload=Workload(7e9, "lora", None))
