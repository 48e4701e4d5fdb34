"""AutoDL: 厘 conversion, catalogue, market paging and pacing, min/median aggregation, failures."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import responses

from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient
from scrapers.providers.autodl import (
    GPU_TYPE_URL,
    PAGE_PAUSE_S,
    REGION_URL,
    SEARCH_URL,
    AutodlScraper,
    aggregate,
    li_to_cny,
    parse_gpu_types,
    parse_regions,
    parse_search_page,
)
from scrapers.types import Issue, ProviderSettings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "autodl"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.secret-session.jwt"
ITEM = json.loads((FIXTURES / "search_item_documented.json").read_text(encoding="utf-8"))


def _fx(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _item(**changes) -> dict:
    item = copy.deepcopy(ITEM)
    item.update(changes)
    return item


def _page(items: list[dict], total: int) -> bytes:
    return json.dumps({"code": "Success", "msg": "", "data": {"list": items, "result_total": total}}).encode()


@pytest.mark.parametrize("li, cny", [(2720, "2.72"), (2510, "2.51"), (1, "0.001"), (10000, "10"), (0, "0")])
def test_li_to_cny_is_exact(li, cny):
    assert li_to_cny(li) == Decimal(cny)
    assert str(li_to_cny(li)) == cny


def test_catalogue_and_regions():
    gpus = {g.name: g.memory_gb for g in parse_gpu_types(_fx("gpu_type.json"))}
    assert gpus["RTX 4090"] == 24.0 and gpus["H20-NVLink"] == 96.0 and len(gpus) == 14
    assert parse_regions(_fx("region_list.json")) == {"west-B": "西北B区", "beijing-A": "北京A区"}


def test_documented_item_uses_the_current_sku_price():
    machines, total, _ = parse_search_page(_page([ITEM], 3194), "payg")
    (m,) = machines
    assert (m.gpu_name, m.region, m.gpus, m.idle, m.price_li, total) == (
        "RTX 4090",
        "west-B",
        8,
        3,
        2510,
        3194,
    )
    no_sku = _item(machine_sku_info=[])
    assert parse_search_page(_page([no_sku], 1), "payg")[0][0].price_li == 2720  # falls back to payg_price
    assert parse_search_page(_page([no_sku], 1), "daily")[0][0].price_li is None  # no daily price
    for junk in (True, "payg", {"type": "payg"}, 7):  # not the documented list: as if it were absent
        odd = _item(machine_sku_info=junk)
        assert parse_search_page(_page([odd], 1), "payg")[0][0].price_li == 2720


@pytest.mark.parametrize(
    "price, match",
    [
        ("2720", "not an integer"),
        (2.72, "not an integer"),
        (-5, "negative"),
        (900_000, "absurd"),
        (True, "integer"),
    ],
)
def test_bad_prices_fail_the_page(price, match):
    item = _item(machine_sku_info=[{"type": "payg", "current_price": price}])
    with pytest.raises(ScrapeError, match=match):
        parse_search_page(_page([item], 1), "payg")


@pytest.mark.parametrize(
    "payload, match",
    [
        (b"<html><body>login</body></html>", "not JSON"),
        (_fx("authorize_failed.json"), "log in again and refresh AUTODL_TOKEN"),
        (b'{"code": "Success", "data": {"items": []}}', "no data.list"),
        (b'{"code": "InternalError", "msg": "busy", "data": null}', "InternalError"),
    ],
)
def test_changed_or_refused_search_answers(payload, match):
    with pytest.raises(ScrapeError, match=match):
        parse_search_page(payload, "payg")


def test_aggregate_min_median_and_availability_per_gpu_and_region():
    items = [
        _item(
            machine_sku_info=[{"type": "daily", "current_price": li}],
            gpu_idle_num=idle,
            gpu_order_num=idle,
            gpu_number=8,
        )
        for li, idle in ((60000, 0), (48000, 2), (52000, 0), (70000, 1))
    ]
    items.append(_item(region_sign="beijing-A", region_name="北京A区", gpu_idle_num=0, gpu_number=4,
                       machine_sku_info=[{"type": "daily", "current_price": 50000}]))  # fmt: skip
    offers = aggregate(parse_search_page(_page(items, 5), "daily")[0], "daily")
    west = {o.instance_type: o for o in offers if o.region == "west-B"}
    assert west["RTX 4090"].price == Decimal("48")
    assert west["RTX 4090 (median)"].price == Decimal("56")  # (52 + 60) / 2
    for offer in west.values():
        assert (offer.billing, offer.unit, offer.per, offer.gpu_count) == ("daily", "day", "gpu", 1.0)
        assert (offer.idle_gpus, offer.total_gpus, offer.stock_status) == (3, 32, "available")
        assert offer.extra["machines"] == "4"
    beijing = [o for o in offers if o.region == "beijing-A"]
    assert {o.stock_status for o in beijing} == {"sold_out"} and beijing[0].price == Decimal("50")


def _client(clock: Any = None) -> HttpClient:
    """AutoDL's own policy (its pacing) without retries; ``clock``: the ``clock`` fixture, to see the
    pauses (else they are not slept)."""
    policy = replace(AutodlScraper.http_policy, max_retries=0)
    if clock is None:
        return HttpClient("autodl", version="0", policy=policy, secrets=(TOKEN,), sleep=lambda _s: None)
    return HttpClient("autodl", version="0", policy=policy, secrets=(TOKEN,), sleep=clock.sleep, clock=clock)


def _public_endpoints() -> None:
    responses.get(GPU_TYPE_URL, body=_fx("gpu_type.json"))
    responses.get(REGION_URL, body=_fx("region_list.json"))


def _run(settings: ProviderSettings, clock: Any = None) -> tuple[list[RawOffer], list[Issue]]:
    items = list(AutodlScraper().scrape(_client(clock), settings))
    return [i for i in items if isinstance(i, RawOffer)], [i for i in items if isinstance(i, Issue)]


@responses.activate
def test_market_pages_until_a_short_page_paced_and_authorised_raw(clock):
    _public_endpoints()
    many = [_item(machine_id=f"m{i}", gpu_idle_num=1) for i in range(150)]
    responses.post(SEARCH_URL, body=_page(many[:100], 150))
    responses.post(SEARCH_URL, body=_page(many[100:], 150))
    responses.post(SEARCH_URL, body=_page(many[:1], 1))  # the weekly sweep
    settings = ProviderSettings(
        credentials={"AUTODL_TOKEN": f"Bearer {TOKEN}"}, options={"charge_types": ["payg", "weekly"]}
    )
    offers, issues = _run(settings, clock)
    searches = [c.request for c in responses.calls if c.request.url == SEARCH_URL]
    bodies = [json.loads(r.body) for r in searches]
    assert [(b["charge_type"], b["page_index"], b["page_size"]) for b in bodies] == [
        ("payg", 1, 100),
        ("payg", 2, 100),
        ("weekly", 1, 100),
    ]
    assert all(r.headers["Authorization"] == TOKEN for r in searches)  # raw token, "Bearer " stripped
    # the client paces every request (two public lists, three searches): 0.2 s before all but the first
    assert clock.sleeps == pytest.approx([PAGE_PAUSE_S] * 4)
    payg = [o for o in offers if o.billing == "on_demand"]
    assert {o.instance_type for o in payg} == {"RTX 4090", "RTX 4090 (median)"}
    assert payg[0].idle_gpus == 150 and payg[0].total_gpus == 1200 and payg[0].price == Decimal("2.51")
    assert any("1 weekly machines" in i.message and "without a weekly price" in i.message for i in issues)


@responses.activate
def test_market_stops_at_result_total_even_on_full_pages():
    _public_endpoints()
    responses.post(SEARCH_URL, body=_page([_item(machine_id=f"m{i}") for i in range(100)], 100))
    offers, _ = _run(ProviderSettings(credentials={"AUTODL_TOKEN": TOKEN}))
    assert len([c for c in responses.calls if c.request.url == SEARCH_URL]) == 1
    assert len(offers) == 2


@responses.activate
def test_expired_token_is_a_clear_failure_without_the_token():
    _public_endpoints()
    responses.post(SEARCH_URL, body=_fx("authorize_failed.json"))
    with pytest.raises(ScrapeError) as err:
        _run(ProviderSettings(credentials={"AUTODL_TOKEN": TOKEN}))
    assert "log in again and refresh AUTODL_TOKEN" in str(err.value)
    assert TOKEN not in str(err.value)


@responses.activate
def test_http_401_is_an_expired_token_too():
    _public_endpoints()
    responses.post(SEARCH_URL, status=401, body=json.dumps({"msg": f"bad token {TOKEN}"}))
    with pytest.raises(ScrapeError, match="refresh AUTODL_TOKEN") as err:
        _run(ProviderSettings(credentials={"AUTODL_TOKEN": TOKEN}))
    assert TOKEN not in str(err.value)


@responses.activate
def test_without_token_only_the_catalogue_is_read_and_the_run_says_so():
    _public_endpoints()
    scraper = AutodlScraper()
    items = list(scraper.scrape(_client(), ProviderSettings()))
    assert not any(isinstance(i, RawOffer) for i in items)
    (issue,) = items
    assert "no AUTODL_TOKEN" in issue.message and "RTX 4090" in issue.message
    assert [g.name for g in scraper.catalog][:2] == ["RTX 5090", "RTX 5090 D"]
    assert not any(c.request.url == SEARCH_URL for c in responses.calls)


@responses.activate
def test_empty_market_and_unknown_charge_type():
    _public_endpoints()
    responses.post(SEARCH_URL, body=_page([], 0))
    offers, issues = _run(ProviderSettings(credentials={"AUTODL_TOKEN": TOKEN}))
    assert offers == [] and any("lists no priced payg machines" in i.message for i in issues)
    with pytest.raises(ScrapeError, match="unknown charge_types"):
        _run(ProviderSettings(credentials={"AUTODL_TOKEN": TOKEN}, options={"charge_types": ["hourly"]}))


def test_mode():
    assert AutodlScraper().mode({}).unlock_env == ("AUTODL_TOKEN",)
    assert AutodlScraper().mode({"AUTODL_TOKEN": TOKEN}).mode == "account"
    assert TOKEN not in repr(AutodlScraper().mode({"AUTODL_TOKEN": TOKEN}))


def test_idle_but_not_orderable_is_sold_out_and_stored_as_such():
    """The documented item: gpu_idle_num 3, gpu_order_num 0 (providers.md §4.1: order_num = rentable now)."""
    (m,), _, _ = parse_search_page(_page([ITEM], 1), "payg")
    assert (m.idle, m.orderable) == (3, 0)
    offers = aggregate([m], "payg")
    assert {(o.stock_status, o.idle_gpus, o.orderable_gpus) for o in offers} == {("sold_out", 3, 0)}


def test_orderable_counts_sum_per_group_and_missing_counts_fall_back_to_idle():
    items = [
        _item(gpu_idle_num=3, gpu_order_num=1),
        _item(gpu_idle_num=2, gpu_order_num="2"),  # a numeric string is read
        {
            k: v
            for k, v in _item(region_sign="beijing-A", region_name="北京A区", gpu_idle_num=2).items()
            if k != "gpu_order_num"
        },
        _item(region_sign="beijing-B", region_name="北京B区", gpu_idle_num=0, gpu_order_num=None),
    ]
    offers = {o.region: o for o in aggregate(parse_search_page(_page(items, 4), "payg")[0], "payg")}
    assert (offers["west-B"].orderable_gpus, offers["west-B"].idle_gpus, offers["west-B"].stock_status) == (
        3,
        5,
        "available",
    )
    assert (offers["beijing-A"].orderable_gpus, offers["beijing-A"].stock_status) == (None, "available")
    assert offers["beijing-B"].stock_status == "sold_out"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"gpu_order_num": "many"}, "gpu_order_num 'many' is not a GPU count"),
        ({"gpu_idle_num": -1}, "gpu_idle_num '-1' is not a GPU count"),
        ({"gpu_name": None}, "lacks gpu_name"),
    ],
)
def test_one_unreadable_machine_is_left_out_with_its_reason(change, reason):
    machines, total, skipped = parse_search_page(_page([_item(**change), _item()], 2), "payg")
    assert len(machines) == 1 and total == 2
    assert len(skipped) == 1 and reason in skipped[0]


def test_the_most_idle_and_orderable_on_one_machine_are_recorded_beside_the_sums():
    """A job's GPUs are rented on one machine: 2 + 2 + 1 idle is 5 in all but never 3 on one."""
    items = [
        _item(gpu_idle_num=2, gpu_order_num=2),
        _item(gpu_idle_num=2, gpu_order_num=1),
        _item(gpu_idle_num=1, gpu_order_num=5),  # orderable above idle counts as idle (as the sum does)
        _item(region_sign="beijing-A", region_name="北京A区", gpu_idle_num=3, gpu_order_num=None),
        _item(region_sign="beijing-B", region_name="北京B区", gpu_idle_num=None, gpu_order_num=None),
    ]
    offers = aggregate(parse_search_page(_page(items, 5), "payg")[0], "payg")
    said = {
        (o.region, o.instance_type): (
            o.idle_gpus,
            o.orderable_gpus,
            o.max_idle_gpus_per_machine,
            o.max_orderable_gpus_per_machine,
        )
        for o in offers
    }
    assert said[("west-B", "RTX 4090")] == said[("west-B", "RTX 4090 (median)")] == (5, 4, 2, 2)
    assert said[("beijing-A", "RTX 4090")] == (3, None, 3, None)  # no gpu_order_num: not stated
    assert said[("beijing-B", "RTX 4090")] == (0, None, 0, None)  # a null idle count reads as none idle


def test_the_recorded_replay_has_no_machine_with_more_than_two_idle_4090s_in_west_b():
    """The payloads the CLI tests replay (tests/fixtures/raw/autodl): 40 idle RTX 4090 over 60 machines
    in west-B, at most 2 on any one of them."""
    raw = FIXTURES.parent / "raw" / "autodl"
    machines = [
        m
        for page in sorted(raw.glob("*-POST-*.body"))
        for m in parse_search_page(page.read_bytes(), "payg")[0]
    ]
    offers = {(o.region, o.instance_type): o for o in aggregate(machines, "payg")}
    west = offers[("west-B", "RTX 4090")]
    assert (west.idle_gpus, west.max_idle_gpus_per_machine, west.max_orderable_gpus_per_machine) == (40, 2, 2)
