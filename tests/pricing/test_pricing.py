"""The pricing core's rules, each once: stock, ties, tiers and the break-even, the filter, money shown."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal

import pytest

from planner.errors import UnknownNameError, UsageError
from planner.pricing.cost import (
    Availability,
    Job,
    Offer,
    OfferQuery,
    Stock,
    availability,
    job_cost,
    shown_total,
)
from planner.pricing.rank import is_tie, rank_costs
from planner.pricing.tiers import breakeven_hours, tier_uses

NOW = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


def offer(**changes) -> Offer:
    base = dict(
        instance_id=1, provider="aliyun", region="cn-beijing", instance_type="X", gpu_model="A100-80GB",
        gpus_per_instance=1.0, billing="on_demand", unit_price=Decimal(10), unit="hour", currency="CNY",
        cny_per_currency=Decimal(1), observed_at=NOW, source=None, from_snapshot=False,
    )  # fmt: skip
    base.update(changes)
    return Offer(**base)  # type: ignore[arg-type]


def stock(status=None, idle=None, total=None, orderable=None) -> Stock:
    return Stock(status, idle, total, NOW, orderable)


@pytest.mark.parametrize(
    ("given", "needed", "state"),
    [
        (None, 1, Availability.UNKNOWN),  # most offers state nothing: rentable
        (stock("available"), 8, Availability.AVAILABLE),
        (stock("low"), 1, Availability.AVAILABLE),
        (stock("sold_out"), 1, Availability.SOLD_OUT),
        (stock(None, 0, 32), 1, Availability.SOLD_OUT),
        (stock(None, 4, 32), 8, Availability.SHORT),
        (stock(None, 8, 32), 8, Availability.AVAILABLE),
        (stock(None, 8, 32, orderable=2), 4, Availability.NOT_ORDERABLE),  # AutoDL gpu_order_num
        (stock(None, 8, 32, orderable=4), 4, Availability.AVAILABLE),
        (stock("unknown"), 1, Availability.UNKNOWN),
    ],
)
def test_one_availability_rule(given, needed, state):
    assert availability(given, needed) is state
    assert state.rentable == (state in (Availability.AVAILABLE, Availability.UNKNOWN))


def market(idle=40, total=480, orderable=None, most_idle=None, most_orderable=None) -> Stock:
    """AutoDL's stock: counts summed over machines, and the most on any one machine where stated."""
    return Stock(None, idle, total, NOW, orderable, most_idle, most_orderable)


@pytest.mark.parametrize(
    ("given", "needed", "on_one_machine", "state"),
    [
        (market(most_idle=2, most_orderable=2), 8, 8, Availability.SHORT),  # 40 idle, never 8 on one
        (market(most_idle=2, most_orderable=2), 2, 2, Availability.AVAILABLE),
        (market(most_idle=2, most_orderable=2), 3, 3, Availability.SHORT),
        (market(idle=4, most_idle=4), 8, 8, Availability.SHORT),  # short in all, as before
        (market(orderable=40, most_idle=8, most_orderable=2), 8, 8, Availability.NOT_ORDERABLE),
        (market(orderable=40, most_idle=8, most_orderable=8), 8, 8, Availability.AVAILABLE),
        (market(orderable=40, most_idle=8), 8, 8, Availability.AVAILABLE),  # orderable per machine unknown
        (market(), 8, 8, Availability.AVAILABLE),  # per machine unknown (stored before 0005): the sums
        (market(orderable=4), 8, 8, Availability.NOT_ORDERABLE),
        (market(most_idle=2), 8, 0, Availability.AVAILABLE),  # nothing has to share one machine
        (market(idle=0, most_idle=0), 1, 1, Availability.SOLD_OUT),
    ],
)
def test_a_marketplace_job_needs_its_gpus_idle_on_one_machine(given, needed, on_one_machine, state):
    assert availability(given, needed, on_one_machine) is state


@pytest.mark.parametrize(
    ("gpus", "machines", "on_one_machine"),
    [(1, 1, 1), (3, 1, 3), (8, 1, 8), (12, 2, 6), (16, 2, 8), (17, 3, 6)],
)
def test_a_marketplace_job_spreads_evenly_over_the_fewest_machines(gpus, machines, on_one_machine):
    listing = offer(provider="autodl", instance_type="RTX 4090", gpu_model="RTX4090-24GB")
    assert (listing.machines(gpus), listing.gpus_on_one_machine(gpus)) == (machines, on_one_machine)
    cloud = offer(gpus_per_instance=8.0)  # an instance is a machine: nothing more to share one
    assert (cloud.machines(2), cloud.gpus_on_one_machine(2)) == (2, 0)


def test_job_cost_judges_a_marketplace_job_on_one_machine_and_a_cloud_one_on_the_sums():
    listing = offer(provider="autodl", instance_type="RTX 4090", gpu_model="RTX4090-24GB")
    spread = replace(listing, stock=market(most_idle=2, most_orderable=2))
    assert job_cost(spread, Job.check(8, 10)).availability is Availability.SHORT
    assert job_cost(spread, Job.check(2, 10)).availability is Availability.AVAILABLE
    assert spread.availability is Availability.AVAILABLE  # one GPU: any machine with one idle serves
    full = replace(listing, stock=market(most_idle=8, most_orderable=8))
    assert job_cost(full, Job.check(16, 10)).availability is Availability.AVAILABLE  # 8 + 8
    assert job_cost(replace(listing, stock=market(most_idle=7)), Job.check(16, 10)).availability is (
        Availability.SHORT
    )
    old = replace(listing, stock=market())  # stored before the per-machine figure: judged as before
    assert job_cost(old, Job.check(8, 10)).availability is Availability.AVAILABLE
    cloud = offer(gpus_per_instance=8.0, stock=market(most_idle=2))  # not a marketplace: the sums
    assert job_cost(cloud, Job.check(8, 10)).availability is Availability.AVAILABLE


def test_an_offer_is_judged_for_one_instance_and_a_job_for_its_gpus():
    eight = offer(gpus_per_instance=8.0, stock=stock(None, 4, 32))
    assert eight.availability is Availability.SHORT  # one instance needs 8 idle GPUs
    four = job_cost(offer(stock=stock(None, 4, 32)), Job.check(4, 10))
    assert four.availability is Availability.AVAILABLE and four.rentable


def test_a_small_job_on_a_whole_instance_needs_every_gpu_of_it_idle():
    """A 1-GPU job on an 8-GPU instance rents all 8: 5 idle cards in the pool are not enough (a review
    found the rule compared the job's GPUs, so a PPIO x8 with 5 idle looked rentable)."""
    whole = offer(gpus_per_instance=8.0, stock=stock("available", 5, 40))
    assert job_cost(whole, Job.check(1, 10)).availability is Availability.SHORT
    assert job_cost(whole, Job.check(1, 10)).availability is whole.availability
    two = job_cost(offer(gpus_per_instance=2.0, stock=stock("available", 3, 40)), Job.check(3, 10))
    assert (two.instances, two.availability) == (2, Availability.SHORT)  # 2 x 2 = 4 idle needed, 3 there


def test_tiers_are_paid_like_tax_brackets_and_named():
    tiers = [(96, Decimal(20)), (360, Decimal(10))]
    total, used = tier_uses(Decimal(30), tiers, Decimal(500))
    assert total == 96 * 30 + 264 * 20 + 140 * 10
    assert [str(t) for t in used] == ["0-96 h at 30.00", "96-360 h at 20.00", "360-500 h at 10.00"]
    cost = job_cost(offer(unit_price=Decimal(30), tiers=tuple(tiers)), Job.check(1, 50))
    assert cost.tiers_used == ()  # one step only: nothing to explain


def test_tier_aware_breakeven_agrees_with_the_tiered_total():
    """Tencent's A100-40GB: 28.64/h, 27.20/h after 96 h, 12,948 a month."""
    hourly = offer(provider="tencent", unit_price=Decimal("28.64"), tiers=((96, Decimal("27.20")),))
    monthly = offer(provider="tencent", billing="monthly", unit="month", unit_price=Decimal(12948))
    hours = breakeven_hours(hourly, monthly)
    assert hours == Decimal("470.9")  # the flat ratio would say 452.1, below a 460 h job the tiers win
    at = job_cost(hourly, Job.check(1, float(hours))).total_cny
    assert abs(at - 12948) < 3  # the tiered cost at the break-even is the monthly price
    assert (
        job_cost(hourly, Job.check(1, 460, 30)).total_cny < job_cost(monthly, Job.check(1, 460, 30)).total_cny
    )
    assert breakeven_hours(offer(unit_price=Decimal(10)), replace(monthly, unit_price=Decimal(3650))) == 365


def test_a_foreign_price_is_costed_at_its_rate():
    usd = offer(currency="USD", unit_price=Decimal(2), cny_per_currency=Decimal("7.1"))
    assert usd.cny_per_gpu_hour == Decimal("14.2")
    assert job_cost(usd, Job.check(1, 10)).total_cny == Decimal("142.0")


def cost_of(total: str, instances: int, gpus_per_instance: float, name: str, provider: str = "aliyun"):
    gpus = int(instances * gpus_per_instance)
    price = Decimal(total) / instances
    o = offer(instance_type=name, gpus_per_instance=gpus_per_instance, unit_price=price, provider=provider)
    return job_cost(o, Job.check(gpus, 1))


def test_near_equal_totals_go_to_fewer_machines_then_nvlink():
    four_pairs = cost_of("138966.00", 4, 2, "2x4")
    one_eight = cost_of("138966.50", 1, 8, "8x1")
    assert [c.offer.instance_type for c in rank_costs([four_pairs, one_eight])] == ["8x1", "2x4"]
    far = cost_of("130000", 4, 2, "2x4-cheap")  # 6% cheaper: the price decides
    assert rank_costs([one_eight, far])[0] is far
    assert is_tie(Decimal(1000), Decimal(1005)) and not is_tie(Decimal(1000), Decimal("1005.01"))
    assert is_tie(Decimal("0.004"), Decimal("0.9"))  # within 1 CNY


def test_rank_puts_what_cannot_be_rented_last():
    cheap = job_cost(offer(instance_type="cheap", stock=stock("sold_out")), Job.check(1, 10))
    dear = job_cost(offer(instance_type="dear", unit_price=Decimal(50)), Job.check(1, 10))
    assert rank_costs([cheap, dear]) == [dear, cheap]


def test_tiny_totals_are_ranked_unrounded_and_shown_with_places():
    totals = [Decimal("0.003474"), Decimal("0.002864"), Decimal("0.000368")]
    costs = [
        job_cost(offer(instance_id=i, unit_price=t * 10000), Job.check(1, 0.0001))
        for i, t in enumerate(totals)
    ]
    assert [c.total_cny for c in rank_costs(costs)] == sorted(totals)
    assert [str(shown_total(t)) for t in sorted(totals)] == ["0.0003680", "0.002864", "0.003474"]
    assert str(shown_total(Decimal("12650.2399"))) == "12650.24"


def test_the_filter_is_checked_once_with_near_names():
    query = OfferQuery.build(["A100"], ["Aliyun", "autodl"], [" cn-beijing "], ["payg", "monthly"])
    assert query.gpu_models == ("A100-40GB", "A100-80GB") and not query.variants
    assert (query.providers, query.regions, query.billing) == (
        ("aliyun", "autodl"),
        ("cn-beijing",),
        ("on_demand", "monthly"),
    )
    assert OfferQuery.build(["A100"], include_variants=True).variants == {"A800-80GB"}
    with pytest.raises(UnknownNameError, match="tencnet"):
        OfferQuery.build(providers=["tencnet"])
    with pytest.raises(UnknownNameError):
        OfferQuery.build(billing=["montly"])


def test_the_filter_admits_spot_and_vgpu_only_when_asked():
    assert not OfferQuery().admits(offer(billing="spot"))
    assert OfferQuery(billing=("spot",)).admits(offer(billing="spot"))
    assert not OfferQuery().admits(offer(gpus_per_instance=0.5))
    assert OfferQuery(vgpu=True).admits(offer(gpus_per_instance=0.5))


def test_the_filter_scopes_regions_by_planner_regions():
    beijing, hongkong = offer(region="cn-beijing"), offer(region="cn-hongkong")
    assert [OfferQuery(scope="mainland").admits(o) for o in (beijing, hongkong)] == [True, False]
    assert [OfferQuery(scope="overseas").admits(o) for o in (beijing, hongkong)] == [False, True]
    assert all(OfferQuery().admits(o) for o in (beijing, hongkong))  # "all" until issue 16 says otherwise
    assert OfferQuery.build(scope=" Mainland ").scope == "mainland"
    with pytest.raises(UnknownNameError):
        OfferQuery.build(scope="mainlnd")


def test_a_job_is_checked_once():
    assert Job.check(8, 300, 30) == Job(8, 300.0, 30)
    assert Job.check(1, 25).days == 2
    for bad in (dict(gpus=1, hours=0), dict(gpus=0, hours=1), dict(gpus=1, hours=49, days=2)):
        with pytest.raises(UsageError):
            Job.check(**bad)  # type: ignore[arg-type]
    assert Job.of_work(offer(gpus_per_instance=8.0), 800, 3) == Job(8, 100.0, 5)
    assert Job.of_work(offer(gpus_per_instance=0.5), 10, 1) is None  # a vGPU slice


def test_the_link_comes_from_the_instance_where_it_says_more_than_the_model():
    """An instance named PCIe has no NVLink, and a bridge joins pairs only (review findings: an
    AutoDL A100-PCIE-40GB showed NVLink 600 GB/s, and 8 bridged RTX 3090s one NVLink domain)."""
    from planner import catalog
    from planner.pricing.links import link_between

    a100, rtx3090 = catalog.get_model("A100-40GB"), catalog.get_model("RTX3090-24GB")
    assert link_between(a100, 1, 3, True, "A100-PCIE-40GB") == ("PCIe only (one machine)", None)
    assert link_between(a100, 8, 1, False, "gn7-c12g1.24xlarge")[1] == a100.nvlink_gbps_bidir
    two, eight = link_between(rtx3090, 1, 2, True), link_between(rtx3090, 1, 8, True)
    assert two[1] == rtx3090.nvlink_gbps_bidir and "(pairs)" not in str(two[0])
    assert eight == (catalog.interconnect_label(rtx3090) + " (pairs) + PCIe (one machine)", None)
    pcie = job_cost(offer(instance_type="A100-PCIE-40GB", provider="autodl"), Job.check(2, 10))
    assert pcie.link == ("PCIe only (one machine)", None) and not pcie.one_nvlink_domain
