"""Normalisation of scraped offers, as a table of cases: GPU names, per-GPU prices, units, tiers, merges,
marketplace medians and every reason a price is refused."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal

import pytest

from planner.ingest.normalize import MAX_CNY_PER_GPU_HOUR, is_suspicious_move, normalize_offers
from planner.pricing.tiers import tiered_cost, tiers_of
from scrapers.base import RawOffer
from tests.helpers.offers import T4

FX = {"USD": 7.1}
AUTODL = RawOffer(
    provider="autodl",
    region="west-B",
    instance_type="RTX 4090",
    gpu_name="RTX 4090",
    gpu_count=1.0,
    billing="on_demand",
    price=Decimal("1.88"),
    unit="hour",
    per="gpu",
    gpu_memory_gb=24.0,
    stock_status="available",
    idle_gpus=40,
    total_gpus=480,
    extra={"stat": "min"},
)


def one(raw: RawOffer):
    result = normalize_offers([raw], FX)
    assert not result.rejected and not result.unknown_gpus, result
    (offer,) = result.offers
    return offer


@pytest.mark.parametrize(
    "raw, gpu_model, gpu_count, price, cny_per_gpu_hour",
    [
        (T4, "T4-16GB", 1.0, "8.68", "8.68"),
        # AutoDL: one GPU per "instance", the per-GPU price is the instance price.
        (AUTODL, "RTX4090-24GB", 1.0, "1.88", "1.88"),
        # A per-GPU price on a 2-GPU offer becomes the whole instance's price.
        (replace(AUTODL, gpu_count=2.0, price=Decimal("2.5")), "RTX4090-24GB", 2.0, "5.0", "2.5"),
        # 8 GPUs for 7,300 a month: 7300 / 730 h / 8.
        (
            replace(T4, gpu_count=8.0, billing="monthly", unit="month", price=Decimal("7300")),
            "T4-16GB",
            8.0,
            "7300",
            "1.25",
        ),
        # A quarter-card vGPU slice keeps its fraction; per GPU-hour it is four times dearer.
        (
            replace(T4, instance_type="GN7.LARGE20", gpu_count=0.25, price=Decimal("2.37")),
            "T4-16GB",
            0.25,
            "2.37",
            "9.48",
        ),
        # Provider words for billing modes; a foreign currency is kept and converted for comparison.
        (
            replace(T4, billing="POSTPAID_BY_HOUR", currency="usd", price=Decimal("1")),
            "T4-16GB",
            1.0,
            "1",
            "7.1",
        ),
        (replace(T4, gpu_name="A100-SXM4-80GB"), "A100-80GB", 1.0, "8.68", "8.68"),
        (replace(T4, gpu_name="NVIDIA A100", gpu_memory_gb=40.0), "A100-40GB", 1.0, "8.68", "8.68"),
    ],
)
def test_offers_become_whole_instance_prices_in_cny_per_gpu_hour(
    raw, gpu_model, gpu_count, price, cny_per_gpu_hour
):
    offer = one(raw)
    assert (offer.gpu_model, offer.gpu_count) == (gpu_model, gpu_count)
    assert offer.price == Decimal(price)
    assert offer.cny_per_gpu_hour == Decimal(cny_per_gpu_hour)


def test_usd_price_keeps_its_currency():
    offer = one(replace(T4, currency="USD", price=Decimal("2")))
    assert (offer.currency, offer.price, offer.cny_per_gpu_hour) == ("USD", Decimal("2"), Decimal("14.2"))


def test_tencent_tiers_are_stored_as_json_the_quote_reads():
    offer = one(replace(T4, tiers=((360, Decimal("7.9")), (96, Decimal("8.2")))))
    assert json.loads(offer.tiers_json) == [[96, "8.2"], [360, "7.9"]]
    # 400 hours: 96 at 8.68, 264 at 8.2, 40 at 7.9
    expected = Decimal("96") * Decimal("8.68") + 264 * Decimal("8.2") + 40 * Decimal("7.9")
    assert tiered_cost(offer.price, tiers_of(offer.tiers_json), Decimal(400)) == expected
    monthly = one(
        replace(T4, billing="monthly", unit="month", price=Decimal("3000"), tiers=((96, Decimal("1")),))
    )
    assert monthly.tiers_json is None  # tiers only mean something for hourly prices


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"price": Decimal(0)}, "must be greater than zero (zero means not sold, never free)"),
        ({"price": Decimal("-3")}, "must be greater than zero"),
        ({"price": Decimal("NaN")}, "not a finite number"),
        ({"price": MAX_CNY_PER_GPU_HOUR + 1}, "which is absurd"),
        ({"unit": "month"}, "price per 'month', but on_demand is priced per hour"),
        ({"billing": "whenever"}, "billing mode 'whenever' unknown"),
        ({"currency": "EUR"}, "currency 'EUR' has no rate in [fx]"),
        ({"gpu_count": 0.0}, "gpu_count 0.0 must be above 0"),
        ({"gpu_count": 100.0}, "at most 64"),
        ({"per": "machine"}, "price per 'machine'"),
        ({"region": "x" * 65}, "region 'xxxx"),
        ({"instance_type": ""}, "instance type '' is empty"),
        ({"tiers": ((96, Decimal(0)),)}, "must be greater than zero"),
    ],
)
def test_refused_prices_are_named_never_stored(change, reason):
    result = normalize_offers([replace(T4, **change)], FX)
    assert result.offers == ()
    (line,) = result.rejected
    assert reason in line, line


def test_unknown_and_ambiguous_gpus_are_counted_by_name():
    raws = [
        replace(T4, gpu_name="vGPU-32GB"),
        replace(T4, gpu_name="vGPU-32GB", instance_type="other"),
        replace(T4, gpu_name="NVIDIA A100"),  # 40 or 80 GB? not guessed
        T4,
    ]
    result = normalize_offers(raws, FX)
    assert result.unknown_gpus == {"NVIDIA A100 (ambiguous)": 1, "vGPU-32GB": 2}
    assert [o.instance_type for o in result.offers] == ["GN7.2XLARGE32"]


def test_one_price_per_instance_and_billing_the_cheapest_with_stock_merged_over_zones():
    raws = [
        replace(T4, stock_status="sold_out"),
        replace(T4, price=Decimal("5.68"), is_list_price=False, stock_status="sold_out"),
        replace(T4, zone="ap-beijing-7", stock_status="available"),
    ]
    result = normalize_offers(raws, FX)
    (offer,) = result.offers
    assert (offer.price, offer.is_list_price, offer.stock_status) == (Decimal("5.68"), False, "available")
    assert offer.source == "s (discounted; list 8.68)"
    assert result.merged == 2
    all_out = normalize_offers(
        [replace(T4, stock_status="sold_out"), replace(T4, zone="z2", stock_status="sold_out")], FX
    )
    assert all_out.offers[0].stock_status == "sold_out"
    partly_known = normalize_offers([replace(T4, stock_status="sold_out"), replace(T4, zone="z2")], FX)
    assert partly_known.offers[0].stock_status is None  # one zone unknown: not claimed sold out


def test_idle_gpus_add_up_over_zones_but_not_over_duplicate_offers():
    raws = [
        replace(AUTODL, zone="a", idle_gpus=2, total_gpus=8),
        replace(AUTODL, zone="a", idle_gpus=2, total_gpus=8, price=Decimal("2")),
        replace(AUTODL, zone="b", idle_gpus=3, total_gpus=16),
    ]
    (offer,) = normalize_offers(raws, FX).offers
    assert (offer.idle_gpus, offer.total_gpus) == (5, 24)


def test_the_most_idle_on_one_machine_is_the_most_of_any_zone_never_their_sum():
    raws = [
        replace(AUTODL, zone="a", idle_gpus=4, max_idle_gpus_per_machine=2, max_orderable_gpus_per_machine=1),
        replace(AUTODL, zone="b", idle_gpus=3, max_idle_gpus_per_machine=3),
        replace(AUTODL, zone="c", idle_gpus=0),  # a zone that states no per-machine figure
    ]
    (offer,) = normalize_offers(raws, FX).offers
    assert (offer.idle_gpus, offer.max_idle_gpus_per_machine, offer.max_orderable_gpus_per_machine) == (
        7,
        3,
        1,
    )
    (bare,) = normalize_offers([replace(AUTODL, idle_gpus=4, max_idle_gpus_per_machine=-1)], FX).offers
    assert (bare.idle_gpus, bare.max_idle_gpus_per_machine) == (4, None)  # not a count: not stated


def test_marketplace_median_rides_on_the_cheapest_offer_never_as_an_instance():
    median = replace(
        AUTODL, instance_type="RTX 4090 (median)", price=Decimal("2.293"), extra={"stat": "median"}
    )
    result = normalize_offers([AUTODL, median], FX)
    (offer,) = result.offers
    assert (offer.instance_type, offer.price, offer.median_price) == (
        "RTX 4090",
        Decimal("1.88"),
        Decimal("2.293"),
    )
    assert (offer.idle_gpus, offer.total_gpus, offer.stock_status) == (40, 480, "available")
    unknown = replace(AUTODL, gpu_name="vGPU-32GB", instance_type="vGPU-32GB")
    unknown_median = replace(unknown, instance_type="vGPU-32GB (median)", extra={"stat": "median"})
    assert normalize_offers([unknown, unknown_median], FX).unknown_gpus == {"vGPU-32GB": 1}  # counted once


def test_an_instance_relabelled_within_one_run_keeps_its_first_gpu():
    result = normalize_offers(
        [
            T4,
            replace(
                T4,
                billing="monthly",
                unit="month",
                price=Decimal("3000"),
                gpu_name="NVIDIA V100",
                gpu_memory_gb=32,
            ),
        ],
        FX,
    )
    assert [o.billing for o in result.offers] == ["on_demand"]
    assert "1x V100-32GB here" in result.rejected[0] and "1x T4-16GB elsewhere" in result.rejected[0]


@pytest.mark.parametrize(
    "old, new, flagged",
    [("10", "101", True), ("10", "100", False), ("10", "0.99", True), ("10", "1", False), ("0", "5", False)],
)
def test_tenfold_moves_are_suspicious(old, new, flagged):
    assert is_suspicious_move(Decimal(old), Decimal(new)) is flagged
