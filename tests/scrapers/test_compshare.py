"""CompShare: UCloud signing (the documented worked example), the four calls, key-name drift, stock."""

from __future__ import annotations

import json
from decimal import Decimal
from urllib.parse import parse_qsl, urlsplit

import pytest
import responses
from conftest import fixture_json, serve_compshare
from responses import matchers

from planner.ingest.normalize import normalize_offers
from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.providers.compshare import (
    API_URL,
    PRICE_CHARGE_TYPES,
    CompshareScraper,
    parse_inventory,
    parse_price,
    sign,
)
from scrapers.registry import collect
from scrapers.types import Issue, ProviderSettings

PUBLIC, PRIVATE = "compshare-public-not-real", "compshare-private-not-real-0123456789"
KEYS = {"COMPSHARE_PUBLIC_KEY": PUBLIC, "COMPSHARE_PRIVATE_KEY": PRIVATE}
SETTINGS = ProviderSettings(credentials=KEYS)


def _client() -> HttpClient:
    return HttpClient("compshare", version="t", policy=HttpPolicy(min_interval_s=0, max_retries=0))


def _run(settings: ProviderSettings = SETTINGS) -> tuple[list[RawOffer], list[Issue]]:
    items = list(CompshareScraper().scrape(_client(), settings))
    return [i for i in items if isinstance(i, RawOffer)], [i for i in items if isinstance(i, Issue)]


def test_signature_matches_ucloud_documented_worked_example():
    # docs.ucloud.cn/api/summary/signature: these keys and parameters give this signature.
    params = {
        "Action": "DescribeUHostInstance",
        "Region": "cn-bj2",
        "Limit": 10,
        "PublicKey": "someone@example.com1296235120854146120",
    }
    signature = sign(params, "46f09bb9fab4f12dfc160dae12273d5332b5debe")
    assert signature == "4201919d267504385deb93af19e0197870fed36b"


def test_signature_encodes_bools_and_whole_floats_like_ucloud():
    assert sign({"A": True, "B": 42.0}, "k") == sign({"A": "true", "B": "42"}, "k")
    assert sign({"A": 1}, "k") != sign({"A": 1}, "other")


@responses.activate
def test_every_request_is_signed_and_never_carries_the_private_key():
    serve_compshare()
    _run()
    assert responses.calls
    for call in responses.calls:
        query = dict(parse_qsl(urlsplit(call.request.url).query))
        signature = query.pop("Signature")
        assert query["PublicKey"] == PUBLIC and sign(query, PRIVATE) == signature
        assert PRIVATE not in call.request.url


@responses.activate
def test_full_scrape_prices_every_mode_and_reads_stock():
    serve_compshare()
    offers, issues = _run()
    by_key = {(o.zone, o.instance_type, o.billing): o for o in offers}
    one = by_key[("cn-wlcb-01", "4090 x1", "on_demand")]
    assert (one.price, one.unit, one.per, one.gpu_count) == (Decimal("1.69"), "hour", "instance", 1.0)
    assert (one.vcpus, one.memory_gb, one.gpu_memory_gb) == (16, 64.0, 24.0)  # the smallest memory
    assert (one.stock_status, one.idle_gpus) == ("available", 37)
    assert "whole machine" in one.source
    modes = {b for (z, t, b) in by_key if (z, t) == ("cn-wlcb-01", "4090 x1")}
    assert modes == {"on_demand", "spot", "daily", "monthly", "yearly"}
    spot = by_key[("cn-wlcb-01", "4090 x2", "spot")]
    assert (spot.price, spot.idle_gpus, spot.stock_status) == (Decimal("1.98"), 12, "available")
    assert by_key[("cn-wlcb-01", "4090 x2", "yearly")].price == Decimal("23180")
    # 4090_48G: SpotUnsupportedGpuTypes drops its spot row; 3090 is Soldout and not in the inventory.
    assert ("cn-wlcb-01", "4090_48G x1", "spot") not in by_key
    assert by_key[("cn-wlcb-01", "4090_48G x1", "monthly")].idle_gpus == 5
    soldout = by_key[("cn-wlcb-01", "3090 x1", "on_demand")]
    assert (soldout.stock_status, soldout.idle_gpus) == ("sold_out", 0)
    # cn-sh2: GpuInventory (not ...ByZone) and PriceDetails (not PriceDetail), a null spot Instance.
    sh2 = by_key[("cn-sh2-02", "4090 x1", "on_demand")]
    assert (sh2.price, sh2.idle_gpus, sh2.region) == (Decimal("1.79"), 1, "cn-sh2")
    assert ("cn-sh2-02", "4090 x1", "spot") not in by_key
    skipped = sorted(i.message for i in issues if i.kind == "skipped")
    # each skip: the count, the item, and the value that made it unusable
    why = [
        ("4090 x1", "Spot Instance price 'None'"),
        ("A800", "status 'Offline'"),
        ("H20", "no MachineSizes"),
    ]
    assert len(skipped) == len(why)
    for message, (item, value) in zip(skipped, why, strict=True):
        assert message.startswith("CompShare: 1 x ") and item in message and value in message, message
    (note,) = [i.message for i in issues if i.kind != "skipped"]
    # Modes a type/size's answers carried no row for: said once, not counted as skipped.
    assert "no price row (not sold that way)" in note and "Dynamic in 7" in note


@responses.activate
def test_gpu_names_reach_the_catalog_and_the_48_gb_card_is_its_own_model():
    serve_compshare()
    offers, _ = _run()
    normalized = normalize_offers(offers, {})
    models = {o.instance_type: o.gpu_model for o in normalized.offers}
    assert models["4090 x1"] == "RTX4090-24GB" and models["4090_48G x1"] == "RTX4090-48GB"
    assert models["3090 x1"] == "RTX3090-24GB"
    assert normalized.unknown_gpus == {"V100S": 1}  # not in the catalog: counted, not stored
    two = next(o for o in normalized.offers if o.instance_type == "4090 x2" and o.billing == "on_demand")
    assert (two.price, two.cny_per_gpu_hour) == (Decimal("3.38"), Decimal("1.69"))
    hourly = {
        o.region: o for o in normalized.offers if o.instance_type == "4090 x1" and o.billing == "on_demand"
    }
    assert (hourly["cn-wlcb"].price, hourly["cn-sh2"].price) == (Decimal("1.69"), Decimal("1.79"))
    assert (hourly["cn-wlcb"].idle_gpus, hourly["cn-wlcb"].stock_status) == (37, "available")


def test_without_both_keys_nothing_is_requested():
    for credentials in ({}, {"COMPSHARE_PUBLIC_KEY": PUBLIC}):
        offers, issues = _run(ProviderSettings(credentials=credentials))
        assert offers == [] and [i.kind for i in issues] == ["note"]
    scraper = CompshareScraper()
    assert scraper.mode({"COMPSHARE_PUBLIC_KEY": "x"}).mode == "public"
    assert scraper.mode(KEYS).mode == "account"
    assert scraper.mode({}).unlock_env == ("COMPSHARE_PUBLIC_KEY", "COMPSHARE_PRIVATE_KEY")


@responses.activate
def test_refused_keys_fail_the_run_without_the_keys():
    responses.get(API_URL, json={"RetCode": 171, "Message": f"Signature VerifyAC Error {PUBLIC}"})
    result = collect(CompshareScraper(), _client(), SETTINGS)
    assert result.status == "failed" and "COMPSHARE_PRIVATE_KEY" in result.error
    assert PUBLIC not in result.error and PRIVATE not in result.error


@responses.activate
def test_one_region_answering_an_error_makes_a_partial_run():
    query = {"Action": "DescribeCompShareSupportZone", "Region": "cn-sh2"}
    responses.get(  # registered first: it wins over the fixture answer for the same call
        API_URL,
        json={"RetCode": 8000, "Message": "server busy"},
        match=[matchers.query_param_matcher(query, strict_match=False)],
    )
    serve_compshare()
    result = collect(CompshareScraper(), _client(), SETTINGS)
    assert result.status == "partial" and "cn-sh2" in result.error and "RetCode 8000" in result.error
    assert result.offers and {o.region for o in result.offers} == {"cn-wlcb"}


def _asked_modes() -> dict[tuple[str, str, str], list[str | None]]:
    asked: dict[tuple[str, str, str], list[str | None]] = {}
    for call in responses.calls:
        query = dict(parse_qsl(urlsplit(call.request.url).query))
        if query.get("Action") == "GetCompShareInstancePrice":
            key = (query["Zone"], query["GpuType"], query["Gpu"])
            asked.setdefault(key, []).append(query.get("ChargeType"))
    return asked


@responses.activate
def test_every_price_call_names_its_charge_type_once_per_mode():
    """Without ChargeType the docs say the monthly price comes back alone: every call names its mode,
    each mode is asked once per GPU type and size, and spot not for a type CompShare sells no spot of."""
    serve_compshare()
    _run()
    asked = _asked_modes()
    assert asked and all(None not in modes for modes in asked.values())
    assert asked[("cn-wlcb-01", "4090", "1")] == list(PRICE_CHARGE_TYPES)
    assert set(PRICE_CHARGE_TYPES) == {"Dynamic", "Postpay", "Spot", "Day", "Month", "Year"}
    no_spot = asked[("cn-wlcb-01", "4090_48G", "1")]  # in SpotUnsupportedGpuTypes
    assert "Spot" not in no_spot and len(no_spot) == len(PRICE_CHARGE_TYPES) - 1


@responses.activate
def test_a_call_without_charge_type_would_have_read_the_monthly_price_only():
    """The replay answers as the docs read: no ChargeType, Month's row alone (what the old single call got)."""
    serve_compshare()
    base = {"Action": "GetCompShareInstancePrice", "Zone": "cn-wlcb-01", "GpuType": "4090", "Gpu": "1"}
    body = _client().get(API_URL, params=base).json()
    assert parse_price(body)[0] == {"Month": Decimal("1099")}
    body = _client().get(API_URL, params={**base, "ChargeType": "Postpay"}).json()
    assert parse_price(body, "Postpay")[0] == {"Postpay": Decimal("1.69")}


@pytest.mark.parametrize("reading", ["docs", "cli"])
def test_every_mode_arrives_under_either_reading_of_the_price_call(reading):
    """Answered with the asked row only (docs) or with every row (the CLI's reading), the same offers."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        serve_compshare(mock, reading=reading)
        offers, _ = _run()
    got = {(o.zone, o.instance_type, o.billing, o.price) for o in offers}
    modes = {b for (z, t, b, _) in got if (z, t) == ("cn-wlcb-01", "4090 x1")}
    assert modes == {"on_demand", "spot", "daily", "monthly", "yearly"}
    assert ("cn-wlcb-01", "4090 x1", "monthly", Decimal("1099")) in got
    assert ("cn-wlcb-01", "4090 x1", "on_demand", Decimal("1.69")) in got
    assert len(got) == 21  # 18 offers before, and the public-beta 5090 in three modes


def test_a_price_answer_is_read_for_the_mode_asked_only():
    rows = [{"ChargeType": "Month", "Instance": 1099}, {"ChargeType": "Postpay", "Instance": 1.69}]
    assert parse_price({"PriceDetail": rows}, "Postpay") == ({"Postpay": Decimal("1.69")}, {})
    assert parse_price({"PriceDetail": rows}, "Day") == ({}, {})
    assert parse_price({"PriceDetail": rows})[0] == {"Month": Decimal("1099"), "Postpay": Decimal("1.69")}


@responses.activate
def test_a_public_beta_type_is_stored_and_marked():
    """公测 (Status Beta) types are rentable: priced, stored, and marked public beta in the source."""
    serve_compshare()
    offers, issues = _run()
    beta = [o for o in offers if o.instance_type == "5090 x1"]
    assert {o.billing for o in beta} == {"on_demand", "daily", "monthly"}
    assert all("公测 public beta" in o.source and o.extra["status"] == "Beta" for o in beta)
    assert {(o.stock_status, o.idle_gpus) for o in beta} == {("available", 4)}
    assert not any("5090" in i.message for i in issues if i.kind == "skipped")
    assert all("public beta" not in o.source for o in offers if o.gpu_name != "5090")
    normalized = normalize_offers(beta, {})
    assert {o.gpu_model for o in normalized.offers} == {"RTX5090-32GB"}


def test_price_without_either_detail_list_fails_loudly():
    with pytest.raises(ScrapeError, match="neither PriceDetail nor PriceDetails"):
        parse_price({"RetCode": 0, "PriceSet": [{"ChargeType": "Postpay", "Price": 1.5}]})


def test_inventory_accepts_documented_and_drifted_keys_and_a_json_string():
    doc = fixture_json("compshare", "DescribeCompShareGpuInventory.doc-example.verbatim.json")
    assert parse_inventory(doc) == {}
    pools = {"Exclusive": {"10027": {"2080": 10}}}  # the docs' own description of the shape
    assert parse_inventory({"GpuInventoryByZone": pools}) == pools
    assert parse_inventory({"GpuInventory": pools}) == pools
    assert parse_inventory({"GpuInventoryByZone": json.dumps(pools)}) == pools
    assert parse_inventory({"RetCode": 0}) is None
