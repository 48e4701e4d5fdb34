"""Tencent Cloud: workbench (public) and official API (TC3) flows, parsing, failures."""

from __future__ import annotations

import copy
import json
from decimal import Decimal

import pytest
from conftest import fixture_json
from responses import matchers

from scrapers.base import RawOffer, ScrapeError
from scrapers.providers.tencent import API_URL, WORKBENCH, TencentScraper
from scrapers.providers.tencent_parse import parse_quota_set
from scrapers.registry import collect
from scrapers.types import Issue, ProviderSettings

CREDS = {"TENCENTCLOUD_SECRET_ID": "AKIDtestid", "TENCENTCLOUD_SECRET_KEY": "tencent-secret-key-xyz"}
BJ = fixture_json("tencent", "DescribeZoneInstanceConfigInfos_ap-beijing.constructed.json")
GZ = fixture_json("tencent", "DescribeZoneInstanceConfigInfos_ap-guangzhou.constructed.json")


def offers(items):
    return [i for i in items if isinstance(i, RawOffer)]


def by_key(items):
    return {(o.instance_type, o.billing, o.is_list_price): o for o in offers(items)}


def zone_payload(region_payload, zone):
    response = copy.deepcopy(region_payload["Response"])
    response["InstanceTypeQuotaSet"] = [i for i in response["InstanceTypeQuotaSet"] if i["Zone"] == zone]
    return {"code": 0, "data": {"Response": response}}


def zone_is(zone):
    def match(request):
        ok = json.loads(request.body)["data"]["Filters"][1] == {"Name": "zone", "Values": [zone]}
        return ok, "" if ok else f"zone is not {zone}"

    return match


def add_workbench(rsps, zones=None):
    rsps.post(
        f"{WORKBENCH}/area/queryCvmRegion", json=fixture_json("tencent", "queryCvmRegion.constructed.json")
    )
    zones = zones or {"ap-beijing-5": BJ, "ap-beijing-7": BJ, "ap-guangzhou-6": GZ}
    for zone, payload in zones.items():
        body = payload if "code" in payload else zone_payload(payload, zone)
        rsps.post(f"{WORKBENCH}/api", json=body, match=[zone_is(zone)])


def test_parse_constructed_region_payload():
    items = list(parse_quota_set(BJ["Response"], region="ap-beijing", source="s"))
    got = by_key(items)
    t4 = got[("GN7.2XLARGE32", "on_demand", True)]
    assert (t4.gpu_name, t4.gpu_count, t4.gpu_memory_gb, t4.price, t4.unit) == (
        "NVIDIA T4",
        1.0,
        16,
        Decimal("8.68"),
        "hour",
    )
    assert t4.tiers == ((96, Decimal("8.2")), (360, Decimal("7.9")))
    assert ("GN7.2XLARGE32", "on_demand", False) not in got  # discount equal to list: not repeated
    assert got[("GN7.2XLARGE32", "monthly", True)].price == Decimal("2500")
    assert got[("GN7.2XLARGE32", "yearly", False)].price == Decimal("21250")
    spot = got[("GN7.2XLARGE32", "spot", False)]
    assert spot.price == Decimal("1.74") and spot.unit == "hour"  # UnitPriceDiscount, not UnitPrice
    vgpu = got[("GN7.LARGE20", "on_demand", True)]
    assert vgpu.gpu_count == 0.25 and vgpu.gpu_name == "NVIDIA T4"
    a100 = got[("GT4.4XLARGE96", "monthly", True)]
    assert (a100.gpu_name, a100.gpu_memory_gb, a100.price) == ("NVIDIA A100", 40, Decimal("12948"))
    v100 = got[("HCCG5v.24XLARGE384", "on_demand", False)]
    assert v100.stock_status == "sold_out" and v100.price == Decimal("93.29") and v100.gpu_count == 8
    assert v100.extra["StatusCategory"] == "WithoutStock"
    assert got[("GN7.2XLARGE32", "on_demand", True)].stock_status == "available"
    assert not any(o.instance_type.startswith("S5") for o in offers(items))  # CPU-only ignored
    skipped = [i for i in items if isinstance(i, Issue)]
    assert [(i.kind, i.instance_type) for i in skipped] == [("skipped", "PNV6.32XLARGE1280")]


def test_verbatim_tccli_example_parses_to_no_gpu_offers():
    sample = fixture_json("tencent", "DescribeZoneInstanceConfigInfos.tccli-example.verbatim.json")
    assert list(parse_quota_set(sample["Response"], region="ap-guangzhou", source="s")) == []


def test_zero_spot_price_is_not_an_offer():
    got = by_key(parse_quota_set(GZ["Response"], region="ap-guangzhou", source="s"))
    assert ("PNV4.7XLARGE116", "spot", False) not in got
    assert got[("PNV4.7XLARGE116", "on_demand", True)].gpu_name == "NVIDIA A10"
    assert got[("GN10Xp.2XLARGE40", "monthly", False)].price == Decimal("5456")


def test_public_workbench_flow(rsps, make_client):
    add_workbench(rsps)
    items = list(
        TencentScraper().scrape(make_client(), ProviderSettings(regions=("ap-beijing", "ap-guangzhou")))
    )
    calls = [c for c in rsps.calls if "/cgi/api" in c.request.url]
    assert len(calls) == 3  # one per zone; ap-singapore not asked for
    first = json.loads(calls[0].request.body)
    assert first["action"] == "DescribeZoneInstanceConfigInfos" and first["data"]["Version"] == "2017-03-12"
    assert first["data"]["Filters"][0] == {
        "Name": "instance-charge-type",
        "Values": ["PREPAID", "POSTPAID_BY_HOUR", "SPOTPAID"],
    }
    assert (
        "i=cvm%2FDescribeZoneInstanceConfigInfos" in calls[0].request.url
        and "region=ap-beijing" in calls[0].request.url
    )
    assert "Authorization" not in calls[0].request.headers
    got = offers(items)
    assert {o.region for o in got} == {"ap-beijing", "ap-guangzhou"}
    assert all(o.source == "tencent:workbench DescribeZoneInstanceConfigInfos" for o in got)
    assert len(got) == 13


def test_official_api_is_signed_per_region(rsps, make_client):
    rsps.post(API_URL, json=BJ, match=[matchers.header_matcher({"X-TC-Region": "ap-beijing"})])
    rsps.post(API_URL, json=GZ, match=[matchers.header_matcher({"X-TC-Region": "ap-guangzhou"})])
    settings = ProviderSettings(regions=("ap-beijing", "ap-guangzhou"), credentials=CREDS)
    items = list(TencentScraper().scrape(make_client(), settings))
    assert len(rsps.calls) == 2
    headers = rsps.calls[0].request.headers
    assert (
        headers["X-TC-Action"] == "DescribeZoneInstanceConfigInfos"
        and headers["X-TC-Version"] == "2017-03-12"
    )
    assert headers["Authorization"].startswith("TC3-HMAC-SHA256 Credential=AKIDtestid/")
    assert "/cvm/tc3_request, SignedHeaders=content-type;host, Signature=" in headers["Authorization"]
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert json.loads(rsps.calls[0].request.body)["Filters"][0]["Name"] == "instance-charge-type"
    assert len(offers(items)) == 13 and offers(items)[0].source.startswith("tencent:api")


def test_official_api_through_base_url(rsps, make_client):
    rsps.post("http://127.0.0.1:9999/", json=BJ)
    settings = ProviderSettings(regions=("ap-beijing",), credentials=CREDS, base_url="http://127.0.0.1:9999")
    assert offers(TencentScraper().scrape(make_client(base_url=settings.base_url), settings))


def test_error_envelope_in_one_region_makes_a_partial_run(rsps, make_client):
    rsps.post(API_URL, json=BJ, match=[matchers.header_matcher({"X-TC-Region": "ap-beijing"})])
    rsps.post(
        API_URL,
        json={"Response": {"Error": {"Code": "InternalError", "Message": "try later"}, "RequestId": "x"}},
        match=[matchers.header_matcher({"X-TC-Region": "ap-guangzhou"})],
    )
    settings = ProviderSettings(regions=("ap-beijing", "ap-guangzhou"), credentials=CREDS)
    result = collect(TencentScraper(), make_client(), settings)
    assert result.status == "partial" and len(result.offers) == 10
    assert "InternalError: try later" in result.error and "ap-guangzhou" in result.error


def test_auth_failure_fails_the_whole_run_once(rsps, make_client):
    rsps.post(
        API_URL, json={"Response": {"Error": {"Code": "AuthFailure.SignatureFailure", "Message": "bad"}}}
    )
    settings = ProviderSettings(regions=("ap-beijing", "ap-guangzhou"), credentials=CREDS)
    result = collect(TencentScraper(), make_client(), settings)
    assert result.status == "failed" and "AuthFailure.SignatureFailure" in result.error
    assert len(rsps.calls) == 1
    assert "tencent-secret-key-xyz" not in result.error


def test_every_region_500_fails_the_run(rsps, make_client):
    rsps.post(API_URL, status=500)
    settings = ProviderSettings(regions=("ap-beijing",), credentials=CREDS)
    result = collect(TencentScraper(), make_client(), settings)
    assert result.status == "failed" and result.offers == []
    assert "HTTP 500" in result.issues[0].message


def test_throttle_in_http_200_is_retried(rsps, make_client, clock):
    rsps.post(API_URL, json={"Response": {"Error": {"Code": "RequestLimitExceeded", "Message": "slow"}}})
    rsps.post(API_URL, json=BJ)
    items = list(
        TencentScraper().scrape(make_client(), ProviderSettings(regions=("ap-beijing",), credentials=CREDS))
    )
    assert len(offers(items)) == 10 and clock.sleeps == [1.0]


def mutate(fn):
    payload = copy.deepcopy(BJ)
    fn(payload["Response"])
    return payload["Response"]


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (mutate(lambda r: r.pop("InstanceTypeQuotaSet")), "no InstanceTypeQuotaSet"),
        (mutate(lambda r: r.__setitem__("InstanceTypeQuotaSet", {"a": 1})), "no InstanceTypeQuotaSet"),
        (
            mutate(lambda r: r.__setitem__("Error", {"Code": "InvalidParameter", "Message": "m"})),
            "InvalidParameter",
        ),
        ("not an object", "not an object"),
    ],
)
def test_unreadable_responses_fail_the_region(broken, message):
    with pytest.raises(ScrapeError, match=message):
        list(parse_quota_set(broken, region="ap-beijing", source="s"))


FIRST = BJ["Response"]["InstanceTypeQuotaSet"][0]["InstanceType"]


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (mutate(lambda r: r["InstanceTypeQuotaSet"][0].pop("Price")), "lacks Price"),
        (
            mutate(
                lambda r: r["InstanceTypeQuotaSet"][0].__setitem__(
                    "Prices", r["InstanceTypeQuotaSet"][0].pop("Price")
                )
            ),
            "lacks Price",
        ),
        (
            mutate(lambda r: r["InstanceTypeQuotaSet"][0]["Price"].__setitem__("UnitPrice", "abc")),
            "not a number",
        ),
        (mutate(lambda r: r["InstanceTypeQuotaSet"][0]["Price"].__setitem__("UnitPrice", -1)), "negative"),
        (mutate(lambda r: r["InstanceTypeQuotaSet"][0].__setitem__("GpuCount", "one")), "GpuCount 'one'"),
    ],
)
def test_one_unreadable_item_is_skipped_with_its_reason_and_the_rest_kept(broken, message):
    items = list(parse_quota_set(broken, region="ap-beijing", source="s"))
    skipped = [i for i in items if isinstance(i, Issue) and i.instance_type == FIRST]
    assert len(skipped) == 1 and skipped[0].kind == "skipped" and message in skipped[0].message
    whole = offers(parse_quota_set(BJ["Response"], region="ap-beijing", source="s"))
    assert 0 < len(offers(items)) < len(whole)  # that one item's offers gone, the others kept


def test_empty_list_is_no_offers_not_an_error():
    assert list(parse_quota_set({"InstanceTypeQuotaSet": [], "RequestId": "r"}, region="r", source="s")) == []


@pytest.mark.parametrize(
    "body",
    [{"code": 403, "msg": "login required"}, {"data": {}}, {"code": 0, "data": {"nothing": 1}}],
)
def test_workbench_envelope_problems_fail(rsps, make_client, body):
    rsps.post(f"{WORKBENCH}/area/queryCvmRegion", json=body)
    result = collect(TencentScraper(), make_client(), ProviderSettings(regions=("ap-beijing",)))
    assert result.status == "failed" and "queryCvmRegion" in result.error


def test_workbench_html_answer_for_one_zone_is_a_region_failure(rsps, make_client):
    add_workbench(rsps, zones={"ap-beijing-5": BJ, "ap-beijing-7": BJ})
    rsps.post(f"{WORKBENCH}/api", body="<html>captcha</html>", match=[zone_is("ap-guangzhou-6")])
    result = collect(
        TencentScraper(), make_client(), ProviderSettings(regions=("ap-beijing", "ap-guangzhou"))
    )
    assert result.status == "partial"
    assert [i.region for i in result.issues if i.kind == "region_failed"] == ["ap-guangzhou"]
    assert "did not return JSON" in result.error


def test_mode_reports_presence_only():
    scraper = TencentScraper()
    public = scraper.mode({})
    assert public.mode == "public" and not public.credentials_present
    assert public.unlock_env == ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY")
    account = scraper.mode(CREDS)
    assert account.mode == "account" and account.credentials_present
    assert "tencent-secret-key-xyz" not in repr(account)


# --- documented shapes: nullable ItemPrice fields, prices as strings, GPU named in Externals ----------

DOC = fixture_json("tencent", "DescribeZoneInstanceConfigInfos_nulls_strings.constructed.json")


def test_null_price_fields_mean_not_applicable_and_strings_are_read():
    items = list(parse_quota_set(DOC["Response"], region="ap-beijing", source="s"))
    got = by_key(items)
    t4 = got[("GN7.2XLARGE32", "on_demand", True)]
    assert (t4.price, t4.tiers, t4.stock_status) == (Decimal("8.68"), (), "available")
    assert ("GN7.2XLARGE32", "on_demand", False) not in got  # UnitPriceDiscount null: no discounted offer
    a10 = got[("PNV4.7XLARGE116", "monthly", True)]
    assert (a10.price, a10.gpu_name, a10.stock_status) == (Decimal("5200.00"), "NVIDIA A10", "low")
    assert got[("PNV4.7XLARGE116", "monthly", False)].price == Decimal("4680.00")
    assert ("PNV4.7XLARGE116", "yearly", True) not in got  # OriginalPriceOneYear null


def test_a_junk_price_skips_that_item_only_with_a_counted_reason():
    items = list(parse_quota_set(DOC["Response"], region="ap-beijing", source="s"))
    skipped = {i.instance_type: i.message for i in items if isinstance(i, Issue)}
    assert "Price.UnitPrice" in skipped["GT4.4XLARGE96"]
    assert "price 'n/a' is not a number" in skipped["GT4.4XLARGE96"]
    assert {o.instance_type for o in offers(items)} >= {
        "GN7.2XLARGE32",
        "PNV4.7XLARGE116",
        "PNV6.32XLARGE1280",
    }


def test_status_category_beside_status_decides_stock():
    got = by_key(parse_quota_set(DOC["Response"], region="ap-beijing", source="s"))
    v100 = got[("HCCG5v.24XLARGE384", "on_demand", True)]
    assert (v100.price, v100.stock_status) == (Decimal("155.48"), "sold_out")  # SELL + WithoutStock
    assert got[("HCCG5v.24XLARGE384", "on_demand", False)].price == Decimal("93.29")


def test_gpu_read_from_externals_before_remark_and_family_table():
    items = list(parse_quota_set(DOC["Response"], region="ap-beijing", source="s"))
    got = by_key(items)
    h20 = got[("PNV6.32XLARGE1280", "on_demand", True)]
    # Gpu and GpuCount are null: the count comes from "8 * NVIDIA H20" as well
    assert (h20.gpu_name, h20.gpu_count, h20.extra["gpu_source"]) == ("NVIDIA H20", 8.0, "Externals.GPUDesc")
    slice_ = got[("PNV6s.4XLARGE160", "on_demand", True)]
    assert (slice_.gpu_name, slice_.extra["gpu_source"]) == ("NVIDIA H20", "Externals.GpuAttr.Type")
    t4 = got[("GN7.2XLARGE32", "on_demand", True)]
    assert t4.extra["gpu_source"] == "Remark" and t4.gpu_note is None
    unknown = [i for i in items if isinstance(i, Issue) and i.instance_type == "GC50sg.12XLARGE192"]
    assert len(unknown) == 1  # it names every field it looked in
    assert all(f in unknown[0].message for f in ("Externals.GPUDesc", "Externals.GpuAttr.Type", "Remark"))


def test_family_table_fallback_says_what_could_not_be_read():
    got = by_key(parse_quota_set(BJ["Response"], region="ap-beijing", source="s"))
    a100 = got[("GT4.4XLARGE96", "on_demand", True)]
    assert a100.extra["gpu_source"] == "family table"
    assert "Externals.GPUDesc" in a100.gpu_note and "name no GPU" in a100.gpu_note


def test_public_workbench_mode_reads_gpudesc(rsps, make_client):
    zone = copy.deepcopy(DOC["Response"])
    zone["InstanceTypeQuotaSet"] = [i for i in zone["InstanceTypeQuotaSet"] if i["Zone"] == "ap-beijing-7"]
    rsps.post(
        f"{WORKBENCH}/area/queryCvmRegion",
        json={
            "code": 0,
            "data": {
                "Response": {"RegionSet": [{"region": "ap-beijing", "zones": [{"zone": "ap-beijing-7"}]}]}
            },
        },
    )
    rsps.post(f"{WORKBENCH}/api", json={"code": 0, "data": {"Response": zone}})
    result = collect(TencentScraper(), make_client(), ProviderSettings(regions=("ap-beijing",)))
    assert result.status == "ok"
    assert {(o.instance_type, o.gpu_name, o.gpu_count) for o in result.offers} == {
        ("PNV6.32XLARGE1280", "NVIDIA H20", 8.0),
        ("PNV6s.4XLARGE160", "NVIDIA H20", 1.0),
    }
    assert [i.instance_type for i in result.skipped] == ["GC50sg.12XLARGE192"]
