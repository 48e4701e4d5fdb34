import datetime as dt
import json
from dataclasses import replace
from decimal import Decimal

import pytest

from planner.answers.tco import tco
from planner.catalog import get_model
from planner.errors import UsageError

RTX4090 = get_model("RTX4090-24GB")
# A round-number data-centre card for hand computation: 1 kW, 100,000 CNY.
TODAY = dt.datetime.now(dt.UTC).date()
TEST_GPU = replace(
    get_model("A100-80GB"),
    name="TEST-80GB",
    tdp_watts=1000.0,
    purchase_price_cny=Decimal(100000),
    purchase_price_date=TODAY.isoformat(),  # a price of today: no age note
)
HAND = dict(
    gpus=1,
    years=1,
    electricity_cny_per_kwh="1",
    pue="1",
    resale_fraction="0.5",
    host_cny_per_gpu="20000",
    hosting_cny_per_gpu_year="5000",
)


def test_hand_computed_full_utilisation():
    r = tco(TEST_GPU, "10", 8760, **HAND)
    # Power at 100% busy: 1 kW × 1.3 (host) × PUE 1 × 1 CNY/kWh × 8760 h = 11,388 CNY.
    assert r.buy_breakdown["power"] == Decimal("11388")
    # 100,000 + 20,000 host + 5,000 hosting − 50,000 resale + 11,388 power
    assert r.buy_total_cny == Decimal("86388")
    assert r.rent_total_cny == Decimal("87600")
    assert r.utilization == 1
    assert r.recommendation == "buy"
    assert r.buy_cny_per_gpu_hour == pytest.approx(Decimal("86388") / 8760)
    # fixed = 75,000 + idle power 1.3 × 0.2 × 8760 = 77,277.6; variable = 1.3 × 0.8 = 1.04 per busy hour
    assert r.break_even_hours == Decimal("77277.6") / Decimal("8.96")


def test_hand_computed_rtx4090_defaults():
    r = tco(RTX4090, "1.8", 10000)
    assert r.years == 3 and r.capacity_gpu_hours == 26280
    b = {k: round(v, 2) for k, v in r.buy_breakdown.items()}
    # 0.45 kW × 1.3 × PUE 1.5 × 0.64 CNY/kWh = 0.5616 CNY/h at TDP; idle 20% over 26,280 h, busy 10,000 h
    assert b["power"] == Decimal("7444.57")
    assert b["resale"] == Decimal("-5353.58")  # 17,800 (the catalog's 2026 China price) × 0.67³
    assert (b["purchase"], b["host"], b["hosting"]) == (Decimal(17800), Decimal(5000), Decimal(1500))
    assert round(r.buy_total_cny, 2) == Decimal("26390.99")
    assert r.rent_total_cny == Decimal("18000.0")
    assert r.recommendation == "rent"


def test_totals_are_equal_at_break_even():
    for gpu, rent in ((RTX4090, "1.8"), (TEST_GPU, "10"), (get_model("H20-96GB"), "8")):
        be = tco(gpu, rent, 1000).break_even_hours
        assert be is not None
        at = tco(gpu, rent, be)
        assert at.buy_total_cny == pytest.approx(at.rent_total_cny, rel=Decimal("1e-9"))
        below, above = tco(gpu, rent, be * Decimal("0.9")), tco(gpu, rent, be * Decimal("1.1"))
        assert below.recommendation == "rent" and above.recommendation == "buy"


def test_monotonic_in_hours_rent_and_inputs():
    hours = [1000, 5000, 10000, 20000]
    results = [tco(RTX4090, "1.8", h) for h in hours]
    buy = [r.buy_total_cny for r in results]
    per_hour = [r.buy_cny_per_gpu_hour for r in results]
    assert buy == sorted(buy)
    assert per_hour == sorted(per_hour, reverse=True)
    be = [tco(RTX4090, rent, 1000).break_even_hours for rent in ("1.5", "2", "3")]
    assert be == sorted(be, reverse=True)
    dear = tco(RTX4090, "2", 1000, electricity_cny_per_kwh="1.0").break_even_hours
    assert dear > tco(RTX4090, "2", 1000).break_even_hours
    assert (
        tco(RTX4090, "2", 1000, resale_fraction="0.6").buy_total_cny < tco(RTX4090, "2", 1000).buy_total_cny
    )


def test_utilisation_instead_of_hours():
    r = tco(TEST_GPU, "10", utilization=0.5, gpus=2, years=1)
    assert r.gpu_hours == 8760 and r.hours == 4380
    assert r.break_even_utilization == r.break_even_gpu_hours / 17520


def test_hours_are_per_gpu_like_quote():
    one = tco(TEST_GPU, "10", 1000, **HAND)
    eight = tco(TEST_GPU, "10", 1000, **{**HAND, "gpus": 8})
    assert eight.gpu_hours == 8000 and eight.hours == 1000
    assert eight.rent_total_cny == 8 * one.rent_total_cny
    assert eight.buy_total_cny == 8 * one.buy_total_cny
    assert eight.break_even_hours == pytest.approx(one.break_even_hours)  # per GPU, the unit of --hours
    assert eight.break_even_gpu_hours == pytest.approx(8 * one.break_even_gpu_hours)


def test_break_even_follows_a_rental_price_that_changes_with_hours():
    # A subscription-like curve: 12 CNY per GPU-hour up to 5,000 GPU-hours, 9 beyond.
    def rate_at(gpu_hours):
        return Decimal(12) if gpu_hours <= 5000 else Decimal(9)

    two_years = {**HAND, "years": 2}
    # fixed = 100,000 + 20,000 + 2 × 5,000 − 50,000 + idle power 1.3 × 0.2 × 17,520 = 84,555.2
    flat = tco(TEST_GPU, "12", 1000, **two_years)
    assert flat.break_even_gpu_hours == Decimal("84555.2") / Decimal("10.96")  # 7,715 h at 12 CNY
    curve = tco(TEST_GPU, "12", 1000, rent_rate_at=rate_at, **two_years)
    # At 7,715 h the rate is 9, so the crossing is at 84,555.2 / (9 − 1.04) = 10,622 h.
    assert curve.break_even_gpu_hours == Decimal("84555.2") / Decimal("7.96")
    assert curve.break_even_rent_cny_per_gpu_hour == 9
    at = tco(TEST_GPU, str(rate_at(curve.break_even_hours)), curve.break_even_hours, **two_years)
    assert at.buy_total_cny == pytest.approx(at.rent_total_cny, rel=Decimal("1e-9"))
    assert not curve.notes


def test_break_even_that_never_settles_is_flagged():
    def flip(gpu_hours):  # a rate that jumps whichever side of 7,000 h it is asked about
        return Decimal(9) if gpu_hours < 7000 else Decimal(20)

    r = tco(TEST_GPU, "12", 1000, rent_rate_at=flip, **HAND)
    assert r.break_even_gpu_hours is not None
    assert "approximate" in r.notes[0]
    unknown = tco(TEST_GPU, "12", 1000, rent_rate_at=lambda h: None, **HAND)
    assert unknown.break_even_gpu_hours == Decimal("77277.6") / Decimal("10.96")
    assert "unknown" in unknown.notes[0]


def test_origins_label_the_assumptions():
    r = tco(RTX4090, "1.8", 1000, pue="1.3", electricity_cny_per_kwh="1.0", origins={"pue": "--pue"})
    sources = {a.name: a.source for a in r.assumptions}
    assert sources["PUE"] == "--pue"
    assert sources["electricity"] == "given"
    assert sources["host share per GPU"].startswith("assumption: a 4-GPU workstation")


def test_never_breaks_even_when_rent_is_below_power():
    r = tco(TEST_GPU, "0.5", 100, **HAND)
    assert r.break_even_hours is None and r.break_even_utilization is None
    assert r.recommendation == "rent"
    assert "never" in r.summary


def test_break_even_beyond_capacity_is_reported():
    r = tco(RTX4090, "0.7", 1000, years=1)
    assert r.break_even_utilization > 1
    assert r.recommendation == "rent"
    assert "more than" in r.summary


def test_server_included_price_has_no_host_share():
    r = tco(get_model("H100-80GB"), "15", utilization=0.6, gpus=8)
    assert r.buy_breakdown["host"] == 0
    host = next(a for a in r.assumptions if a.name == "host share per GPU")
    assert "includes the server" in host.source


def test_datacentre_host_share_default():
    r = tco(get_model("H800-80GB"), "6", 1000)  # a card price (the H20's is an 8-GPU server's share)
    assert r.buy_breakdown["host"] == Decimal(40000)


def test_usd_price_converted_only_when_rate_given():
    # the RTX 6000 Ada has only a USD list price (the A100 80GB now has a China figure)
    with pytest.raises(UsageError, match="no purchase price"):
        tco(get_model("RTX6000ADA-48GB"), "8", 1000)
    r = tco(get_model("RTX6000ADA-48GB"), "8", 1000, cny_per_usd="7.10")
    assert r.buy_breakdown["purchase"] == Decimal("48280")
    assert "7.10 CNY/USD" in r.assumptions[0].source


def test_user_purchase_price_wins():
    r = tco(RTX4090, "1.8", 1000, purchase_price_cny="20000")
    assert r.buy_breakdown["purchase"] == Decimal(20000)
    assert r.assumptions[0].source == "given"


def test_assumptions_listed_with_values_and_sources():
    r = tco(RTX4090, "1.8", 1000, rent_note="on_demand, autodl 2026-11-29")
    names = {a.name for a in r.assumptions}
    assert {
        "purchase price per GPU",
        "VAT",
        "electricity",
        "PUE",
        "resale at the end",
        "rental price",
    } <= names
    assert all(a.value and a.source for a in r.assumptions)
    rent = next(a for a in r.assumptions if a.name == "rental price")
    assert rent.source == "on_demand, autodl 2026-11-29"


def test_money_is_decimal_and_to_dict_rounds_for_json():
    r = tco(RTX4090, "1.8", 1234)
    assert isinstance(r.buy_total_cny, Decimal) and isinstance(r.rent_total_cny, Decimal)
    d = r.to_dict()
    for key in ("rent_total_cny", "buy_total_cny", "break_even_hours", "recommendation"):
        assert key in d
    assert d["recommendation"] in ("rent", "buy")
    assert d["rent_total_cny"] == 2221.2
    json.dumps(d, ensure_ascii=False)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(hours=-1), "hours must be more than 0"),
        (dict(hours=0), "hours must be more than 0"),
        (dict(utilization=1.2), "between 0 and 1"),
        (dict(utilization=0), "between 0 and 1"),
        (dict(utilization=-0.1), "between 0 and 1"),
        (dict(hours=100, resale_fraction=1.5), "between 0 and 1"),
        (dict(hours=100, resale_fraction=-0.1), "between 0 and 1"),
        (dict(hours=100, utilization=0.5), "exactly one"),
        (dict(), "exactly one"),
        (dict(hours=30000, years=3), "at most 26,280 hours in 3 years"),
        (dict(hours=100, rent="0"), "rental price .* must be more than 0"),
        (dict(hours=100, rent="abc"), "not a number"),
        (dict(hours=100, rent="1e9"), "at most 10000"),
        (dict(hours=100, gpus=0), "gpus"),
        (dict(hours=100, gpus=True), "gpus"),
        (dict(hours=100, years=0), "years"),
        (dict(hours=100, years=11), "years must be at most 10"),
        (dict(hours=100, pue=0.9), "pue must be at least 1"),
        (dict(hours=100, pue=5), "pue must be at most 3"),
        (dict(hours=100, electricity_cny_per_kwh=-1), "electricity cannot be negative"),
        (dict(hours=100, purchase_price_cny=0), "purchase price must be more than 0"),
        (dict(hours=100, purchase_price_cny="1e12"), "purchase price must be at most"),
        (dict(hours=float("inf")), "finite"),
    ],
)
def test_bad_inputs(kwargs, match):
    rent = kwargs.pop("rent", "1.8")
    with pytest.raises(UsageError, match=match):
        tco(RTX4090, rent, **kwargs)


def test_gpu_without_tdp():
    with pytest.raises(UsageError, match="TDP"):
        tco(get_model("P100-16GB"), "1", 100, purchase_price_cny=5000)


def test_a_catalog_price_over_a_year_old_is_warned_about_with_its_date():
    old = replace(TEST_GPU, purchase_price_date="2023-10")
    r = tco(old, "12", 1000, today=dt.date(2026, 12, 1))
    (note,) = r.notes
    assert "TEST-80GB" in note and "from 2023-10, 3 year(s) ago" in note  # the model, the date, the age
    assert "purchase price" in note  # what to give
    price = r.assumptions[0]
    assert price.name == "purchase price per GPU" and price.source.startswith("catalog, 2023-10 (")
    recent = tco(replace(old, purchase_price_date="2026-05-24"), "12", 1000, today=dt.date(2026, 12, 1))
    assert not recent.notes  # 191 days: recent enough
    assert not tco(old, "12", 1000, purchase_price_cny=90000, today=dt.date(2026, 12, 1)).notes  # the user's
    undated = tco(replace(old, purchase_price_date=None), "12", 1000)
    assert "is undated" in undated.notes[0]
