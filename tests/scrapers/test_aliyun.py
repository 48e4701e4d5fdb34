"""Aliyun: CDN price file (public), version discovery and memory, GPU table/rules, account-mode API."""

from __future__ import annotations

import copy
import json
from decimal import Decimal

import pytest
from conftest import fixture_bytes, fixture_json
from responses import matchers

from scrapers.base import RawOffer, ScrapeError
from scrapers.providers.aliyun import (
    CDN_URL,
    FALLBACK_VERSION,
    PRICING_PAGE,
    AliyunScraper,
    discover_version,
    parse_price_file,
)
from scrapers.providers.aliyun_families import gpu_count_from_name
from scrapers.registry import collect
from scrapers.types import Issue, ProviderSettings

CDN = fixture_json("aliyun", "instancePrice_2.0.300.constructed.json")
PAGE = fixture_bytes("aliyun", "pricing_page.constructed.html")
CREDS = {
    "ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAItestkey",
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "ali-secret-value-77",
}


def offers(items):
    return [i for i in items if isinstance(i, RawOffer)]


def find(items, region, itype, billing):
    return [o for o in offers(items) if (o.region, o.instance_type, o.billing) == (region, itype, billing)]


def test_naming_rule_matches_every_whole_gpu_type_in_the_priceserver_snapshot():
    snapshot = fixture_json("aliyun", "priceserver_gpu_cn_2024-10-09.verbatim.json")["data"]
    checked = 0
    for region in snapshot.values():
        for itype, row in region["instanceTypePrices"].items():
            count = gpu_count_from_name(itype)
            if "vws" in itype:
                assert count is None, itype  # vGPU slice: the snapshot's "1" is not a whole card
            else:
                assert count == row["gpu"], itype
                checked += 1
    assert checked > 60


@pytest.mark.parametrize(
    ("itype", "count"),
    [
        ("ecs.gn7e-c16g1.32xlarge", 8),
        ("ecs.gn6i-c24g1.24xlarge", 4),
        ("ecs.gn6v-c10g1.20xlarge", 8),
        ("ecs.gn7i-8x.32xlarge", 8),
        ("ecs.gn8v-2x.8xlarge", 2),
        ("ecs.gn8v.4xlarge", 1),
        ("ecs.gn8is.2xlarge", 1),
        ("ecs.gn5-c8g1.14xlarge", 8),
        ("ecs.ebmgn8v.48xlarge", None),
        ("ecs.gn7i.2xlarge", None),
        ("ecs.g6.large", None),
        ("ecs.gn8v-tee.4xlarge", None),
        ("ecs.sgn7i-vws-m2.xlarge", None),
    ],
)
def test_gpu_count_rules(itype, count):
    assert gpu_count_from_name(itype) == count


def test_discover_version_picks_newest_linked():
    assert discover_version(PAGE.decode()) == "2.0.300"
    assert discover_version("<html>nothing</html>") is None
    assert (
        discover_version(
            "g.alicdn.com/aliyun/ecs-price-info/2.0.9/ g.alicdn.com/aliyun/ecs-price-info/2.0.10/"
        )
        == "2.0.10"
    )


def test_parse_cdn_file_offers_and_skips():
    items = list(parse_price_file(CDN, "2.0.300", (), {}))
    a100 = find(items, "cn-shenzhen", "ecs.gn7e-c16g1.4xlarge", "on_demand")[0]
    assert (a100.gpu_name, a100.gpu_count, a100.gpu_memory_gb, a100.price, a100.unit) == (
        "NVIDIA A100",
        1.0,
        80,
        Decimal("34.742"),
        "hour",
    )
    assert a100.currency == "CNY" and a100.source == "aliyun:cdn ecs-price-info/2.0.300 instancePrice.json"
    assert {o.billing for o in offers(items) if o.instance_type == "ecs.gn7e-c16g1.4xlarge"} == {
        "on_demand",
        "weekly",
        "monthly",
        "yearly",
    }
    assert (
        len(find(items, "cn-shenzhen", "ecs.gn7e-c16g1.4xlarge", "yearly")) == 1
    )  # 2- and 3-year totals left out
    assert find(items, "cn-shenzhen", "ecs.gn8v-2x.8xlarge", "on_demand")[0].gpu_name == "NVIDIA H20"
    assert find(items, "cn-beijing", "ecs.gn6v-c8g1.4xlarge", "on_demand") == []  # price 0 = not sold
    assert find(items, "cn-beijing", "ecs.g6.large", "on_demand") == []  # not a GPU type
    assert not any(o.region == "ap-southeast-1" for o in offers(items))  # default: cn-* only
    assert all(o.unit != "hour" or o.billing == "on_demand" for o in offers(items))
    windows = [
        o for o in offers(items) if o.region == "cn-beijing" and o.instance_type == "ecs.gn7i-c8g1.2xlarge"
    ]
    assert [o.price for o in windows if o.billing == "on_demand"] == [Decimal("9.5326")]  # linux only
    skipped = {i.instance_type: i.message for i in items if isinstance(i, Issue)}
    assert "table" in skipped["ecs.gn8ia-2x.8xlarge"]  # a GPU family whose GPU nobody has named
    assert "count unknown" in skipped["ecs.ebmgn8v.48xlarge"]
    assert "count unknown" in skipped["ecs.sgn6i-vws-m2.xlarge"]


@pytest.mark.parametrize(
    ("itype", "gpu", "memory", "price"),
    [
        ("ecs.gn8t.4xlarge", "NVIDIA GeForce RTX 4090", 24, Decimal("14.49")),
        ("ecs.gn9t.6xlarge", "NVIDIA GeForce RTX 5090", 32, Decimal("20.1172")),
        ("ecs.gn9t-c8g1.2xlarge", "NVIDIA GeForce RTX 5090", 32, Decimal("6.5")),
    ],
)
def test_rtx_families_read_without_an_account_and_say_inferred(itype, gpu, memory, price):
    """gn8t (RTX 4090) and gn9t (RTX 5090) are read from the family table, the GPU marked inferred."""
    items = list(parse_price_file(CDN, "2.0.300", (), {}))
    offer = find(items, "cn-shenzhen", itype, "on_demand")[0]
    assert (offer.gpu_name, offer.gpu_count, offer.gpu_memory_gb, offer.price) == (gpu, 1.0, memory, price)
    assert offer.gpu_note is not None and "inferred" in offer.gpu_note
    assert "gn" in offer.gpu_note and itype.split(".")[1].split("-")[0] in offer.gpu_note
    assert not any(isinstance(i, Issue) and i.instance_type == itype for i in items)


def test_region_setting_filters():
    items = list(parse_price_file(CDN, "v", ("ap-southeast-1",), {}))
    assert {o.region for o in offers(items)} == {"ap-southeast-1"}


def test_verbatim_intl_sample_parses_with_its_currency():
    sample = fixture_json("aliyun", "instancePrice_intl_2.0.7.verbatim.json")["response"]
    assert list(parse_price_file(sample, "2.0.7", ("ap-southeast-1",), {})) == []  # no GPU types in it
    sample = copy.deepcopy(sample)
    sample["pricingInfo"]["ap-southeast-1::ecs.gn6i-c4g1.xlarge::vpc::linux::optimized"] = {
        "hours": [{"price": "1.2", "period": "1"}]
    }
    got = offers(parse_price_file(sample, "2.0.7", ("ap-southeast-1",), {}))
    assert [(o.currency, o.price) for o in got] == [("USD", Decimal("1.2"))]


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        (lambda d: d["pricingInfo"].__setitem__("cn-beijing::ecs.gn6i-c4g1.xlarge", {}), "region::type"),
        (lambda d: d.__setitem__("currency", 5), "currency"),
    ],
)
def test_malformed_cdn_file_raises(mutation, message):
    data = copy.deepcopy(CDN)
    mutation(data)
    with pytest.raises(ScrapeError, match=message):
        list(parse_price_file(data, "v", (), {}))


V100 = "cn-beijing::ecs.gn6v-c8g1.2xlarge::vpc::linux::optimized"


@pytest.mark.parametrize(
    ("hours", "message"),
    [
        ([{"price": "-3", "period": "1"}], "negative"),
        ([{"price": "n/a", "period": "1"}], "not a number"),
        ({"price": "3"}, "hours is not a list"),
    ],
)
def test_one_unreadable_price_is_skipped_with_its_reason(hours, message):
    data = copy.deepcopy(CDN)
    data["pricingInfo"][V100]["hours"] = hours
    items = list(parse_price_file(data, "v", (), {}))
    skipped = [i for i in items if isinstance(i, Issue) and i.instance_type == "ecs.gn6v-c8g1.2xlarge"]
    assert len(skipped) == 1 and message in skipped[0].message and skipped[0].kind == "skipped"
    kept = {(o.instance_type, o.billing) for o in offers(items) if o.region == "cn-beijing"}
    assert ("ecs.gn6v-c8g1.2xlarge", "on_demand") not in kept and ("ecs.gn6v-c8g1.2xlarge", "monthly") in kept


@pytest.mark.parametrize("price", [None, "", 0, "0"])
def test_null_absent_or_zero_price_is_not_sold_not_an_error(price):
    data = copy.deepcopy(CDN)
    data["pricingInfo"][V100]["hours"] = [{"period": "1"} if price == "" else {"price": price, "period": "1"}]
    items = list(parse_price_file(data, "v", (), {}))
    assert not [i for i in items if isinstance(i, Issue) and i.instance_type == "ecs.gn6v-c8g1.2xlarge"]
    kept = {(o.instance_type, o.billing) for o in offers(items) if o.region == "cn-beijing"}
    assert ("ecs.gn6v-c8g1.2xlarge", "on_demand") not in kept


def add_public(rsps, version="2.0.300", page=PAGE):
    rsps.get(PRICING_PAGE, body=page, content_type="text/html")
    rsps.get(CDN_URL.format(version=version), json=CDN)


def test_public_flow_discovers_version_and_remembers_it(rsps, make_client, tmp_path):
    add_public(rsps)
    state = tmp_path / "state" / "aliyun.json"
    settings = ProviderSettings(regions=("cn-shenzhen",), options={"state_path": str(state)})
    result = collect(AliyunScraper(), make_client("aliyun"), settings)
    assert result.status == "ok" and result.offers
    assert [c.request.url for c in rsps.calls] == [PRICING_PAGE, CDN_URL.format(version="2.0.300")]
    assert json.loads(state.read_text()) == {"cdn_version": "2.0.300"}


def test_falls_back_to_remembered_version_when_page_changes(rsps, make_client, tmp_path):
    state = tmp_path / "aliyun.json"
    state.write_text(json.dumps({"cdn_version": "2.0.250"}))
    add_public(rsps, version="2.0.250", page=b"<html>redesigned</html>")
    result = collect(
        AliyunScraper(), make_client("aliyun"), ProviderSettings(options={"state_path": str(state)})
    )
    assert result.status == "ok" and result.offers
    assert [i.kind for i in result.issues if i.kind == "warning"] == ["warning"]
    assert result.offers[0].source.startswith("aliyun:cdn ecs-price-info/2.0.250")


def test_discovered_version_404_then_builtin_fallback(rsps, make_client):
    rsps.get(PRICING_PAGE, body=PAGE)
    rsps.get(CDN_URL.format(version="2.0.300"), status=404)
    rsps.get(CDN_URL.format(version=FALLBACK_VERSION), json=CDN)
    result = collect(AliyunScraper(), make_client("aliyun"), ProviderSettings())
    assert result.status == "ok"
    assert any("HTTP 404" in i.message for i in result.issues if i.kind == "warning")


def test_no_usable_price_file_fails(rsps, make_client):
    rsps.get(PRICING_PAGE, status=500)
    rsps.get(CDN_URL.format(version=FALLBACK_VERSION), body="<html>login</html>")
    result = collect(AliyunScraper(), make_client("aliyun"), ProviderSettings())
    assert (
        result.status == "failed"
        and "no usable price file" in result.error
        and "did not return JSON" in result.error
    )


def test_pinned_version_and_base_url(rsps, make_client):
    rsps.get(
        "http://127.0.0.1:8000/aliyun/ecs-price-info/2.0.300/price/download/instancePrice.json", json=CDN
    )
    settings = ProviderSettings(base_url="http://127.0.0.1:8000", options={"cdn_version": "2.0.300"})
    result = collect(AliyunScraper(), make_client("aliyun", base_url=settings.base_url), settings)
    assert result.status == "ok" and len(rsps.calls) == 1


def add_account(rsps, spot_status=200):
    add_public(rsps)
    page1 = fixture_json("aliyun", "DescribeInstanceTypes_page1.constructed.json")
    page2 = fixture_json("aliyun", "DescribeInstanceTypes_page2.constructed.json")
    rsps.get(
        "https://ecs.aliyuncs.com/",
        json=page2,
        match=[matchers.query_param_matcher({"MaxResults": "100", "NextToken": "page2token"})],
    )
    rsps.get(
        "https://ecs.aliyuncs.com/", json=page1, match=[matchers.query_param_matcher({"MaxResults": "100"})]
    )
    rsps.get(
        "https://ecs.cn-shenzhen.aliyuncs.com/",
        json=fixture_json("aliyun", "DescribeAvailableResource_cn-shenzhen.constructed.json"),
        match=[matchers.header_matcher({"x-acs-action": "DescribeAvailableResource"})],
    )
    spot = fixture_json("aliyun", "DescribeSpotPriceHistory_gn7i.constructed.json")
    empty = {"RequestId": "S2", "SpotPrices": {"SpotPriceType": []}}

    def spot_for(request):
        if request.headers.get("x-acs-action") != "DescribeSpotPriceHistory":
            return False, "not spot"
        return True, ""

    rsps.get(
        "https://ecs.cn-shenzhen.aliyuncs.com/",
        json=spot,
        status=spot_status,
        match=[
            spot_for,
            matchers.query_param_matcher({"InstanceType": "ecs.gn7i-c8g1.2xlarge"}, strict_match=False),
        ],
    )
    rsps.get("https://ecs.cn-shenzhen.aliyuncs.com/", json=empty, match=[spot_for])


def test_account_mode_specs_stock_and_spot(rsps, make_client):
    add_account(rsps)
    settings = ProviderSettings(regions=("cn-shenzhen",), credentials=CREDS)
    result = collect(AliyunScraper(), make_client("aliyun", secrets=CREDS.values()), settings)
    assert result.status == "ok", result.error
    signed = [c.request for c in rsps.calls if "aliyuncs.com" in c.request.url]
    assert all(
        r.headers["Authorization"].startswith("ACS3-HMAC-SHA256 Credential=LTAItestkey,") for r in signed
    )
    assert all(r.headers["x-acs-version"] == "2014-05-26" for r in signed)
    assert all("ali-secret-value-77" not in str(r.headers) + r.url for r in signed)
    a100 = find(result.offers, "cn-shenzhen", "ecs.gn7e-c16g1.4xlarge", "on_demand")[0]
    assert (a100.stock_status, a100.vcpus, a100.memory_gb) == ("sold_out", 16, 125)
    a10 = find(result.offers, "cn-shenzhen", "ecs.gn7i-c8g1.2xlarge", "on_demand")[0]
    assert a10.stock_status == "available"
    spot = find(result.offers, "cn-shenzhen", "ecs.gn7i-c8g1.2xlarge", "spot")
    assert {(o.zone, o.price) for o in spot} == {
        ("cn-shenzhen-a", Decimal("2.1")),
        ("cn-shenzhen-b", Decimal("1.9")),
    }
    h20 = find(result.offers, "cn-shenzhen", "ecs.ebmgn8v.48xlarge", "on_demand")[0]  # count from the API
    assert (h20.gpu_count, h20.gpu_name) == (8.0, "NVIDIA H20")
    # With an account the GPU is stated by DescribeInstanceTypes, so no "inferred" note; a type the API
    # does not list (gn9t here) still falls back to the family table and says so.
    rtx4090 = find(result.offers, "cn-shenzhen", "ecs.gn8t.4xlarge", "on_demand")[0]
    assert (rtx4090.gpu_name, rtx4090.vcpus, rtx4090.memory_gb) == ("NVIDIA GeForce RTX 4090", 16, 128)
    assert rtx4090.gpu_note is None
    rtx5090 = find(result.offers, "cn-shenzhen", "ecs.gn9t.6xlarge", "on_demand")[0]
    assert rtx5090.gpu_note is not None and "inferred" in rtx5090.gpu_note


def test_account_mode_spot_failure_is_partial(rsps, make_client):
    add_account(rsps, spot_status=403)
    settings = ProviderSettings(regions=("cn-shenzhen",), credentials=CREDS)
    result = collect(AliyunScraper(), make_client("aliyun"), settings)
    assert result.status == "partial" and result.offers
    assert any("HTTP 403" in i.message for i in result.issues)


def test_mode():
    assert AliyunScraper().mode({}).mode == "public"
    assert AliyunScraper().mode({"ALIBABA_CLOUD_ACCESS_KEY_ID": "x"}).mode == "public"  # both needed
    assert AliyunScraper().mode(CREDS).mode == "account"


class _Answers:
    """A stand-in client: every GET answers ``body`` (AliyunApi only calls ``get``)."""

    def __init__(self, body):
        self.body = body

    def get(self, url, **kw):
        from scrapers.http import HttpResponse

        return HttpResponse(200, url, {}, json.dumps(self.body).encode())


def test_status_category_beside_status_decides_stock():
    from scrapers.providers.aliyun_api import AliyunApi

    body = fixture_json("aliyun", "DescribeAvailableResource_status_category.constructed.json")
    stock, left_out = AliyunApi(_Answers(body), "id", "secret").availability("cn-shenzhen")
    assert stock == {
        "ecs.gn7i-c8g1.2xlarge": "sold_out",  # Available + WithoutStock in a, SoldOut in b
        "ecs.gn7e-c16g1.4xlarge": "available",  # ClosedWithStock: stock left
        "ecs.gn6i-c4g1.xlarge": "sold_out",  # ClosedWithoutStock
        "ecs.gn7-c12g1.3xlarge": "available",  # StatusCategory null: Status alone decides
        "ecs.gn6v-c8g1.2xlarge": "available",  # an unknown category is no verdict; Status decides
        "ecs.gn8is.2xlarge": "unknown",  # both null
    }
    assert left_out == ["a SupportedResource without Value"]


@pytest.mark.parametrize(
    ("html", "version"),
    [
        ('<script src="//g.alicdn.com/aliyun/ecs-price-info/2.0.301"></script>', "2.0.301"),
        ("var base = 'https://g.alicdn.com/aliyun/ecs-price-info/2.0.302';", "2.0.302"),
        ('{"priceBase":"aliyun/ecs-price-info/2.0.303"}', "2.0.303"),
        ("ecs-price-info/2.0.304 and ecs-price-info-intl/9.9.9/", "2.0.304"),
        ("ecs-price-info/2.0.305/price/download/instancePrice.json", "2.0.305"),
    ],
)
def test_version_found_whatever_follows_it(html, version):
    assert discover_version(html) == version


def test_instance_type_fields_null_string_or_junk_leave_one_item_out():
    from scrapers.providers.aliyun_api import AliyunApi

    body = {
        "RequestId": "r",
        "InstanceTypes": {
            "InstanceType": [
                {"InstanceTypeId": "ecs.gn7i-c8g1.2xlarge", "GPUAmount": "1", "GPUSpec": "NVIDIA A10",
                 "GPUMemorySize": None, "CpuCoreCount": 8, "MemorySize": 30.0},
                {"InstanceTypeId": "ecs.g7.large", "GPUAmount": None, "GPUSpec": None},
                {"InstanceTypeId": "ecs.gn7-c12g1.3xlarge", "GPUAmount": "many", "GPUSpec": "NVIDIA A100"},
                {"GPUAmount": 1, "GPUSpec": "NVIDIA T4"},
            ]
        },
    }  # fmt: skip
    api = AliyunApi(_Answers(body), "id", "secret")
    specs = api.gpu_specs()
    assert list(specs) == ["ecs.gn7i-c8g1.2xlarge"]
    assert (specs["ecs.gn7i-c8g1.2xlarge"].gpu_count, specs["ecs.gn7i-c8g1.2xlarge"].gpu_memory_gb) == (
        1,
        None,
    )
    assert len(api.left_out) == 2 and "GPUAmount 'many'" in api.left_out[0]


def test_spot_rows_with_null_or_string_prices():
    from scrapers.providers.aliyun_api import AliyunApi

    rows = [
        {"ZoneId": "cn-shenzhen-a", "Timestamp": "2026-11-30T01:00:00Z", "SpotPrice": "2.10"},
        {"ZoneId": "cn-shenzhen-b", "Timestamp": "2026-11-30T01:00:00Z", "SpotPrice": None},
        {"ZoneId": "cn-shenzhen-c", "Timestamp": "2026-11-30T01:00:00Z", "SpotPrice": "soon"},
        {"Timestamp": "2026-11-30T01:00:00Z", "SpotPrice": 1.0},
    ]
    api = AliyunApi(_Answers({"SpotPrices": {"SpotPriceType": rows}}), "id", "secret")
    assert api.spot_prices("cn-shenzhen", "ecs.gn7i-c8g1.2xlarge") == {"cn-shenzhen-a": Decimal("2.10")}
    assert len(api.left_out) == 2 and "SpotPrice: price 'soon' is not a number" in api.left_out[0]
