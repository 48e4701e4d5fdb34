"""Volcengine calculator parsing, the GPU join, and whole runs replayed with ``responses``."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
import responses
from responses import matchers

from planner.ingest.normalize import normalize_offers
from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.providers.volc_openapi import OPENAPI_URL
from scrapers.providers.volcengine import (
    CALC_URL,
    ECS_TEMPLATE_CODE,
    NO_GPU_TYPES,
    PRICING_PAGE_URL,
    VolcengineScraper,
    build_offers,
    parse_get_table,
    parse_list_template,
    parse_template_codes,
)
from scrapers.types import Issue, ProviderSettings
from vocab import EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED

FIXTURES = Path(__file__).parent.parent / "fixtures" / "volcengine"
KEYS = {"VOLCENGINE_ACCESS_KEY": "AKTEST", "VOLCENGINE_SECRET_KEY": "SK-very-secret"}


def _fx(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_list_template_reads_specs_regions_and_zones():
    items = parse_list_template(_fx("list_template_gpu.json"))
    gni2 = items[("ecs.gni2.3xlarge", "cn-beijing")]
    assert (gni2.vcpus, gni2.memory_gb, gni2.zones) == (14, 56.0, ("cn-beijing-a", "cn-beijing-b"))
    assert ("ecs.g3i.large", "cn-beijing") in items  # ".month" variant merged into the same type


def test_get_table_maps_periods_and_regions_exactly():
    rows, skipped = parse_get_table(_fx("get_table_gpu.json"))
    got = {(r.instance_type, r.region, r.billing): (r.price, r.unit) for r in rows}
    assert got[("ecs.g3i.large", "cn-beijing", "monthly")] == (Decimal("253.38"), "month")
    assert got[("ecs.g3i.large", "cn-beijing", "yearly")] == (Decimal("1915.55"), "year")
    assert got[("ecs.c3a.large", "cn-shanghai", "on_demand")] == (Decimal("0.42"), "hour")
    assert ("ecs.gni2.3xlarge", "cn-beijing", "on_demand") in got
    assert not any(r.instance_type.startswith("system") for r in rows)  # disks are not instances
    assert Decimal("99999.00") not in {r.price for r in rows}  # 36-month totals are not kept
    assert skipped == {}


def _table(price):
    row = {
        "ConfigurationCode": "ecs.gni2.3xlarge",
        "ChargeItemCode": "ecs.gni2_3xlarge_cn-beijing",
        "PriceInfoList": [{"Period": "hourly", "Times": 1, "Price": price}],
    }
    return json.dumps({"Result": {"TableList": [{"Rows": [row]}]}}).encode()


def test_get_table_rejects_an_absurd_price():  # a unit change would touch every row: the table fails
    with pytest.raises(ScrapeError, match="absurd"):
        parse_get_table(_table("9999999"))


@pytest.mark.parametrize(
    "price, reason",
    [
        ("-1", "negative"),
        ("abc", "not a number"),
        (None, "no price in the calculator (null)"),
        (True, "not a number"),
    ],
)
def test_get_table_skips_one_unreadable_price_with_its_reason(price, reason):
    rows, skipped = parse_get_table(_table(price))
    assert rows == [] and reason in skipped["ecs.gni2.3xlarge cn-beijing on_demand"]


def test_get_table_reads_numbers_and_strings_alike():
    assert [r.price for r in parse_get_table(_table(12.5))[0]] == [Decimal("12.5")]
    assert [r.price for r in parse_get_table(_table("12.50"))[0]] == [Decimal("12.50")]


def test_get_table_skips_zero_and_unknown_periods_with_reasons():
    row = {
        "ConfigurationCode": "ecs.gni2.3xlarge",
        "ChargeItemCode": "ecs.gni2_3xlarge_cn-beijing",
        "PriceInfoList": [{"Period": "hourly", "Times": 1, "Price": "0"}, {"Period": "weekly", "Price": "1"}],
    }
    rows, skipped = parse_get_table(json.dumps({"Result": {"Rows": [row]}}).encode())
    assert rows == []
    assert "not sold" in skipped["ecs.gni2.3xlarge cn-beijing on_demand"]
    assert "unknown calculator period" in skipped["period 'weekly'"]


@pytest.mark.parametrize(
    "payload, parser, match",
    [
        (b"<!DOCTYPE html><html>", parse_list_template, "not JSON"),
        (b'{"Result": {"List": []}}', parse_list_template, "no Result.List"),
        (b'{"Result": {"List": [{"Templates": "{}"}]}}', parse_list_template, "no Result.List"),
        (
            b'{"Result": {"List": [{"Template": "{\\"x\\": 1}"}]}}',
            parse_list_template,
            "no ECS instance types",
        ),
        (b'{"Result": {"TableList": []}}', parse_get_table, "no PriceInfoList"),
        (b"<html>", parse_get_table, "not JSON"),
    ],
)
def test_changed_templates_fail_loudly(payload, parser, match):
    with pytest.raises(ScrapeError, match=match):
        parser(payload)


def test_template_codes_prefer_type_1_with_tables():
    assert parse_template_codes(_fx("pricing_page_gpu_server.json"), "GPU_Server")[0] == "CLT-GPU-1"
    with pytest.raises(ScrapeError, match="TemplateInfoList"):
        parse_template_codes(b'{"activeProductInfo": "x"}', "GPU_Server")


def _join(api_specs):
    items = parse_list_template(_fx("list_template_gpu.json"))
    rows, _ = parse_get_table(_fx("get_table_gpu.json"))
    return build_offers(items, rows, api_specs, "test")


def test_public_join_prices_documented_types_and_reports_the_rest():
    out = _join(None)
    assert {(o.instance_type, o.billing) for o in out.offers} == {
        ("ecs.gni2.3xlarge", "on_demand"),
        ("ecs.gni2.3xlarge", "monthly"),
        ("ecs.gni2.3xlarge", "yearly"),
    }
    hourly = next(o for o in out.offers if o.billing == "on_demand")
    assert (hourly.gpu_name, hourly.gpu_count, hourly.price, hourly.per) == (
        "NVIDIA A10",
        1,
        Decimal("8.68"),
        "instance",
    )
    assert hourly.stock_status is None and hourly.vcpus == 14  # zones sold in, not stock
    assert hourly.extra["zones"]
    assert "GPU count is unknown" in out.skipped["ecs.pni2.3xlarge"]
    assert "inferred" in out.skipped["ecs.pni2.3xlarge"]
    assert "unmapped" in out.skipped["ecs.gnx9.xlarge"]
    assert "ecs.g3i.large" not in out.skipped  # CPU types are ignored, not reported


def test_account_join_takes_gpu_facts_from_the_api():
    from scrapers.providers.volc_openapi import parse_instance_types

    specs = parse_instance_types(_fx("describe_instance_types_p1.json"))[0]
    specs |= parse_instance_types(_fx("describe_instance_types_p2.json"))[0]
    out = _join(specs)
    pni2 = next(o for o in out.offers if o.instance_type == "ecs.pni2.3xlarge")
    assert (pni2.gpu_name, pni2.gpu_count, pni2.gpu_memory_gb) == ("NVIDIA A800-SXM4-80GB", 1.0, None)
    assert pni2.extra[EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED] == "81920"  # MiB, as the pipeline will find
    (offer, *_) = normalize_offers([pni2], {}).offers
    assert (offer.gpu_model, offer.gpu_note) == ("A800-80GB", None)
    assert pni2.extra["gpu_source"] == "DescribeInstanceTypes"
    assert "ecs.pni2.3xlarge" not in out.skipped
    assert "unmapped" in out.skipped["ecs.gnx9.xlarge"]  # the API does not know it either


def _client() -> HttpClient:
    return HttpClient("volcengine", version="0", policy=HttpPolicy(max_retries=0), sleep=lambda s: None)


def _register_calculator(template_code: str, list_fx: str, table_fx: str) -> None:
    responses.get(
        CALC_URL,
        body=_fx(list_fx),
        match=[
            matchers.query_param_matcher(
                {"Action": "ListTemplate", "Version": "2020-01-01", "TemplateCode": template_code}
            )
        ],
    )
    responses.post(
        CALC_URL,
        body=_fx(table_fx),
        match=[
            matchers.query_param_matcher({"Action": "GetTable", "Version": "2020-01-01"}),
            matchers.json_params_matcher({"TemplateCode": template_code}),
        ],
    )


def _run(settings: ProviderSettings) -> tuple[list[RawOffer], list[Issue]]:
    items = list(VolcengineScraper().scrape(_client(), settings))
    return [i for i in items if isinstance(i, RawOffer)], [i for i in items if isinstance(i, Issue)]


@responses.activate
def test_public_run_without_gpu_types_says_so():
    _register_calculator(ECS_TEMPLATE_CODE, "list_template_cpu_only.json", "get_table_cpu_only.json")
    responses.get(PRICING_PAGE_URL, status=404, body="<html>not found</html>")
    offers, issues = _run(ProviderSettings())
    assert offers == []
    assert any(NO_GPU_TYPES in i.message and ECS_TEMPLATE_CODE in i.message for i in issues)
    assert sum("calculator product" in i.message for i in issues) == 2  # GPU_Server and HPC_GPU
    ecs_call = next(c.request for c in responses.calls if "ListTemplate" in c.request.url)
    assert ecs_call.headers["Origin"] == "https://www.volcengine.com"
    assert "product=ECS" in ecs_call.headers["Referer"]


@responses.activate
def test_public_run_reads_the_discovered_gpu_template():
    _register_calculator(ECS_TEMPLATE_CODE, "list_template_cpu_only.json", "get_table_cpu_only.json")
    responses.get(
        PRICING_PAGE_URL,
        body=_fx("pricing_page_gpu_server.json"),
        match=[matchers.query_param_matcher({"product": "GPU_Server"}, strict_match=False)],
    )
    responses.get(
        PRICING_PAGE_URL,
        body=b"{}",
        match=[matchers.query_param_matcher({"product": "HPC_GPU"}, strict_match=False)],
    )
    _register_calculator("CLT-GPU-1", "list_template_gpu.json", "get_table_gpu.json")
    offers, issues = _run(ProviderSettings(regions=("cn-beijing",)))
    assert {o.instance_type for o in offers} == {"ecs.gni2.3xlarge"}
    assert all(o.source == "calculator GPU_Server CLT-GPU-1" for o in offers)
    assert not any(NO_GPU_TYPES in i.message for i in issues)
    assert any(i.instance_type == "ecs.pni2.3xlarge" for i in issues)


@responses.activate
def test_account_run_signs_the_api_and_never_leaks_the_secret():
    responses.get(OPENAPI_URL, status=200, body=_fx("describe_instance_types_auth_error.json"))
    with pytest.raises(ScrapeError) as err:
        _run(ProviderSettings(credentials=KEYS, options={"pricing_products": ()}))
    assert "SignatureDoesNotMatch" in str(err.value)
    assert "SK-very-secret" not in str(err.value)
    assert responses.calls[0].request.headers["Authorization"].startswith("HMAC-SHA256 Credential=AKTEST/")


def test_mode_names_the_keys_to_set():
    public = VolcengineScraper().mode({})
    assert public.mode == "public" and public.unlock_env == ("VOLCENGINE_ACCESS_KEY", "VOLCENGINE_SECRET_KEY")
    assert VolcengineScraper().mode(KEYS).mode == "account"
    assert VolcengineScraper().mode({"VOLCENGINE_ACCESS_KEY": "x"}).mode == "public"


def test_gpu_named_in_the_template_is_priced_without_an_account():
    # The "GPU families present" outcome: if a template carries a GPU ability, it prices the type.
    obj = {"ConfigurationCode": "ecs.ini2.7xlarge", "Region": "cn-beijing",
           "AbilityAttrs": [{"Ability": "gpu", "Value": "2 * NVIDIA A30"}]}  # fmt: skip
    items = parse_list_template(json.dumps({"Result": {"List": [{"Template": json.dumps([obj])}]}}).encode())
    row = {"ConfigurationCode": "ecs.ini2.7xlarge", "ChargeItemCode": "ecs.ini2_7xlarge_cn-beijing",
           "PriceInfoList": [{"Period": "hourly", "Times": 1, "Price": "20.5"}]}  # fmt: skip
    rows, _ = parse_get_table(json.dumps({"Result": {"Rows": [row]}}).encode())
    (offer,) = build_offers(items, rows, None, "test").offers
    assert (offer.gpu_name, offer.gpu_count, offer.extra["gpu_source"]) == (
        "NVIDIA A30",
        2.0,
        "calculator template",
    )


@responses.activate
def test_account_run_reports_a_gpu_memory_size_that_fits_no_unit():
    responses.get(OPENAPI_URL, body=_fx("describe_instance_types_memory_units.constructed.json"))
    responses.get(PRICING_PAGE_URL, status=404, body="<html>not found</html>")
    _register_calculator(ECS_TEMPLATE_CODE, "list_template_gpu.json", "get_table_gpu.json")
    offers, issues = _run(ProviderSettings(regions=("cn-beijing",), credentials=KEYS))
    a10 = [o for o in offers if o.instance_type == "ecs.gni2.3xlarge"]
    assert a10 and all(o.extra[EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED] == "12345" for o in a10)
    assert not [i for i in issues if "12345" in i.message]  # the scraper judges no GPU: the pipeline does
    normalized = normalize_offers(offers, {})
    stored = [o for o in normalized.offers if o.instance_type == "ecs.gni2.3xlarge"]
    assert stored and all(o.memory_gb != 12345 for o in stored)
    assert "matches no memory size of NVIDIA A10" in stored[0].gpu_note
    (note,) = [n for n in normalized.notes if "ecs.gni2.3xlarge" in n]
    assert note.startswith("volcengine ecs.gni2.3xlarge: ") and "memory size 12345" in note
