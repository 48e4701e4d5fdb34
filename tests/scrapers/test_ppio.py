"""PPIO: the documented v2 example's units, cursor paging, null/missing fields, stock, failures."""

from __future__ import annotations

import copy
import json
from decimal import Decimal

import pytest
import responses
from conftest import fixture_bytes, fixture_json
from responses import matchers

from planner.ingest.normalize import normalize_offers
from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.providers.ppio import PRODUCTS_URL, PpioScraper, parse_page, parse_product
from scrapers.types import Issue, ProviderSettings

KEY = "sk_ppio-test-key-not-real"
DOC = fixture_json("ppio", "products_v2.doc-example.verbatim.json")
SETTINGS = ProviderSettings(credentials={"PPIO_API_KEY": KEY})


def _client() -> HttpClient:
    return HttpClient("ppio", version="t", policy=HttpPolicy(min_interval_s=0, max_retries=0))


def _run(settings: ProviderSettings = SETTINGS) -> tuple[list[RawOffer], list[Issue]]:
    items = list(PpioScraper().scrape(_client(), settings))
    return [i for i in items if isinstance(i, RawOffer)], [i for i in items if isinstance(i, Issue)]


def _serve(*pages: bytes) -> None:
    """Page 1 without a cursor, page n with the cursor page n-1 handed out."""
    for n, body in enumerate(pages, start=1):
        query = {"type": "gpu", "category": "instance"}
        if n > 1:
            query["cursor"] = json.loads(pages[n - 2])["next_cursor"]
        responses.get(PRODUCTS_URL, body=body, match=[matchers.query_param_matcher(query)])


def test_documented_example_units_check_out():
    product = parse_product(DOC["data"][0])
    hourly, listed, unit = product.prices["on_demand"]
    assert (hourly, listed, unit) == (Decimal("12.6"), Decimal("18"), "hour")
    monthly = product.prices["monthly"][0]
    assert monthly == Decimal("9072") == hourly * 720  # precision 3: thousandths of a yuan
    assert product.prices["spot"][0] == Decimal("6")
    assert (product.available, product.max_available, product.region_ids) == (6, 6, ("c-east-1",))


@responses.activate
def test_documented_example_becomes_per_gpu_offers_with_stock():
    _serve(fixture_bytes("ppio", "products_v2.doc-example.verbatim.json"))
    offers, issues = _run()
    assert issues == []
    by_key = {(o.instance_type, o.billing): o for o in offers}
    assert set(by_key) == {
        (f"A100-80G x{n}", b) for n in (1, 2, 4, 8) for b in ("on_demand", "spot", "monthly")
    }
    eight = by_key[("A100-80G x8", "on_demand")]
    assert (eight.per, eight.gpu_count, eight.price, eight.unit) == ("gpu", 8.0, Decimal("12.6"), "hour")
    assert (eight.stock_status, eight.idle_gpus, eight.vcpus, eight.memory_gb) == ("sold_out", 6, 128, 1024.0)
    assert by_key[("A100-80G x4", "spot")].stock_status == "available"
    assert responses.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"
    normalized = normalize_offers(offers, {})
    one = next(o for o in normalized.offers if o.instance_type == "A100-80G x8" and o.billing == "on_demand")
    assert (one.gpu_model, one.price, one.cny_per_gpu_hour) == (
        "A100-80GB",
        Decimal("100.8"),
        Decimal("12.6"),
    )


@responses.activate
def test_pages_follow_the_cursor_and_bad_products_are_counted():
    _serve(
        fixture_bytes("ppio", "products_v2_page1.constructed.json"),
        fixture_bytes("ppio", "products_v2_page2.constructed.json"),
    )
    offers, issues = _run()
    assert len(responses.calls) == 2
    skipped = sorted(i.message for i in issues if i.kind == "skipped")
    why = [
        ("prod-a800-no-precision", "pricing.precision None"),
        ("prod-l40s-null-pricing", "pricing missing"),
    ]
    assert len(skipped) == len(why)
    for message, (product, value) in zip(skipped, why, strict=True):
        assert message.startswith("PPIO product ") and product in message and value in message, message
    assert "[0, 6]" in skipped[0]  # the range a precision must be in
    notes = [i.message for i in issues if i.kind == "note"]
    assert any("4 x prepaid 3 months" in n for n in notes)
    models = {o.gpu_name: o for o in offers}
    assert set(models) == {"RTX 4090", "RTX 4090 48GB", "H100", "RTX 3090", "L20", "RTX 5090"}
    normalized = normalize_offers(offers, {})
    assert {o.gpu_model for o in normalized.offers} == {
        "RTX4090-24GB",
        "RTX4090-48GB",
        "H100-80GB",
        "RTX3090-24GB",
        "L20-48GB",
        "RTX5090-32GB",
    }
    sold_out = {o.stock_status for o in offers if o.gpu_name == "RTX 4090 48GB"}
    assert sold_out == {"sold_out"}
    assert not any(o.billing == "spot" for o in offers if o.gpu_name == "RTX 4090 48GB")  # spot: null
    # A product in two regions: one offer per region, and no per-region idle count we could not know.
    h100 = [o for o in offers if o.gpu_name == "H100" and o.billing == "on_demand" and o.gpu_count == 1]
    assert sorted(o.region for o in h100) == ["c-east-1", "c-north-1"]
    assert {o.idle_gpus for o in h100} == {None}
    yearly = next(o for o in offers if o.instance_type == "RTX 4090 24GB x1" and o.billing == "yearly")
    assert (yearly.price, yearly.unit) == (Decimal("11880"), "year")


@responses.activate
def test_an_offer_that_cannot_be_created_is_stored_sold_out_with_its_reason():
    """``deployable: false`` (v1 availableDeploy: "whether an instance can be created"): idle cards or
    not, every offer is stored sold out, the source says why and the summary counts it."""
    _serve(fixture_bytes("ppio", "products_v2_page2.constructed.json"))
    offers, issues = _run()
    l20 = [o for o in offers if o.gpu_name == "L20"]
    assert {(o.instance_type, o.billing) for o in l20} == {
        (f"L20 48GB x{n}", b) for n in (1, 2, 4, 8) for b in ("on_demand", "monthly")
    }  # stored, not dropped
    assert {o.stock_status for o in l20} == {"sold_out"}  # although max_available is 8
    assert all("not deployable" in o.source and "not deployable" in o.extra["not_rentable"] for o in l20)
    assert next(o for o in l20 if o.billing == "on_demand").price == Decimal("2.99")
    assert any("not deployable" in i.message and "prod-l20-48g" in i.message for i in issues)
    # A deployable product beside it keeps its verdict from the inventory.
    assert {o.stock_status for o in offers if o.gpu_name == "RTX 3090" and o.gpu_count <= 4} == {"available"}


@responses.activate
def test_a_promotion_nobody_can_buy_falls_back_to_the_regular_price():
    """``activity.purchasable: false`` during an activity: the regular ``base_price`` is stored, never the
    promotion's ``final_price``; a mode with no regular price is stored sold out with the reason."""
    _serve(fixture_bytes("ppio", "products_v2_page2.constructed.json"))
    offers, issues = _run()
    promo = {(o.gpu_count, o.billing): o for o in offers if o.gpu_name == "RTX 5090"}
    hourly = promo[(1.0, "on_demand")]
    assert hourly.price == Decimal("2.49")  # base_price 2490, not the promotion's 990
    assert hourly.stock_status == "available" and "not_rentable" not in hourly.extra
    assert "list_price_per_gpu" not in hourly.extra
    assert "promotion not purchasable" in hourly.source and "0.99 not stored" in hourly.source
    spot = promo[(1.0, "spot")]  # a promotion price with no regular price beside it
    assert spot.stock_status == "sold_out" and "no regular price" in spot.extra["not_rentable"]
    assert any("promotion not purchasable" in i.message and "prod-5090" in i.message for i in issues)
    normalized = normalize_offers(offers, {})
    best = min(
        (o for o in normalized.offers if o.gpu_model == "RTX5090-32GB" and o.billing == "on_demand"),
        key=lambda o: o.cny_per_gpu_hour,
    )
    assert best.cny_per_gpu_hour == Decimal("2.49")


def test_a_buyable_promotion_and_an_unstated_flag_change_nothing():
    raw = copy.deepcopy(DOC["data"][0])
    raw["activity"] = {"is_activity_product": True, "active": True, "purchasable": True}
    assert parse_product(raw).prices["on_demand"][0] == Decimal("12.6")  # the promotion can be bought
    for value in (None, "no", 0):
        raw = copy.deepcopy(DOC["data"][0])
        raw["deployable"], raw["activity"] = value, value
        product = parse_product(raw)
        assert (product.deployable, product.not_rentable, product.price_notes) == (None, {}, {})
    raw = copy.deepcopy(DOC["data"][0])
    raw["activity"] = {"is_activity_product": False, "active": False, "purchasable": False}
    assert parse_product(raw).prices["on_demand"][0] == Decimal("12.6")  # no promotion to fall back from


@responses.activate
def test_regions_filter_offers():
    _serve(
        fixture_bytes("ppio", "products_v2_page1.constructed.json"),
        fixture_bytes("ppio", "products_v2_page2.constructed.json"),
    )
    offers, _ = _run(ProviderSettings(regions=("c-north-1",), credentials={"PPIO_API_KEY": KEY}))
    assert offers and {o.region for o in offers} == {"c-north-1"}


def test_without_a_key_nothing_is_requested():
    offers, issues = _run(ProviderSettings())
    assert offers == [] and [i.kind for i in issues] == ["note"] and "PPIO_API_KEY" in issues[0].message
    scraper = PpioScraper()
    assert scraper.mode({}).mode == "public" and scraper.mode({}).unlock_env == ("PPIO_API_KEY",)
    assert scraper.mode({"PPIO_API_KEY": "x"}).mode == "account"


@responses.activate
def test_a_refused_key_is_a_clear_failure_without_the_key():
    responses.get(PRODUCTS_URL, status=401, json={"code": 401, "message": f"invalid key {KEY}"})
    with pytest.raises(ScrapeError) as excinfo:
        _run()
    assert "PPIO_API_KEY" in str(excinfo.value) and KEY not in str(excinfo.value)


@pytest.mark.parametrize(
    "body", [b"<html>login</html>", b"[]", b'{"products": []}', b'{"data": {"list": []}}']
)
def test_an_unknown_shape_fails_loudly(body):
    with pytest.raises(ScrapeError):
        parse_page(body)


def test_a_misread_precision_fails_the_run():
    product = copy.deepcopy(DOC["data"][0])
    product["pricing"]["precision"] = 0  # 12600 CNY per GPU-hour: the scale is wrong, not the card
    with pytest.raises(ScrapeError, match="absurd"):
        parse_product(product)


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        (("pricing", "postpaid", "final_price"), None, "final_price None is not an integer price"),
        (("pricing", "postpaid", "final_price"), "12.6", "is not an integer price"),
        (("pricing", "postpaid", "unit"), "per_day", "is not per_hour"),
        (("resource_spec", "gpu"), None, "resource_spec.gpu missing"),
        (("resource_spec", "gpu", "max"), 0, "gpu.max 0"),
    ],
)
def test_one_null_or_odd_field_skips_one_product(path, value, reason):
    product = copy.deepcopy(DOC["data"][0])
    target = product
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(Exception, match=reason) as excinfo:
        parse_product(product)
    assert type(excinfo.value).__name__ == "SkipProduct"
