"""planner.ingest.store's pure half: what a provider's result is worth, judged without a database."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from db.store import PriceChange
from planner.ingest.normalize import normalize_offers
from planner.ingest.runs import Scraped
from planner.ingest.store import LastGoodRun, assess, flagged_moves, returned_nothing
from scrapers.base import RawOffer
from scrapers.registry import Issue, ScrapeResult
from vocab import RunStatus

T4 = RawOffer(
    provider="tencent",
    region="ap-guangzhou",
    instance_type="GN7.2XLARGE32",
    gpu_name="NVIDIA T4",
    gpu_count=1,
    billing="on_demand",
    price=Decimal("8.68"),
    unit="hour",
)


def _scraped(result: ScrapeResult, raw: list[RawOffer]) -> Scraped:
    return Scraped("tencent", result, normalize_offers(raw, {}))


def test_a_good_run_passes_its_offers_on():
    judged = assess("tencent", _scraped(ScrapeResult("tencent", RunStatus.OK, [T4]), [T4]))
    assert judged.failure is None and judged.offers_seen == 1 and len(judged.offers) == 1


def test_a_crash_or_a_failed_run_stores_nothing_and_says_why():
    crashed = assess("tencent", Scraped("tencent", crash="unexpected KeyError"))
    assert (crashed.failure, crashed.offers, crashed.notes) == ("unexpected KeyError", (), ())
    lost = Issue("region_failed", "ap-beijing: HTTP 500", "ap-beijing")
    failed = ScrapeResult("tencent", RunStatus.FAILED, [], [lost], "every region failed")
    judged = assess("tencent", Scraped("tencent", failed))
    assert judged.failure == "every region failed"
    (note,) = judged.notes
    assert note.startswith("1 region/zone call(s) failed") and note.endswith("ap-beijing: HTTP 500")


def test_no_offers_fails_only_where_the_last_good_run_had_some():
    empty = _scraped(ScrapeResult("tencent", RunStatus.OK, []), [])
    assert returned_nothing(empty)
    assert assess("tencent", empty).failure is None
    judged = assess("tencent", empty, LastGoodRun(42, dt.datetime(2026, 11, 30, 2)))
    assert judged.failure and "(2026-11-30) returned 42" in judged.failure  # the last good run's day, count


def test_offers_that_all_fail_normalisation_fail_the_run():
    odd = RawOffer(**{**T4.__dict__, "gpu_name": "Mystery 9000"})
    judged = assess("tencent", _scraped(ScrapeResult("tencent", RunStatus.OK, [odd]), [odd]))
    assert judged.failure and "none of the 1 offers could be stored" in judged.failure
    assert judged.unknown_gpus == ("Mystery 9000",) and judged.skipped == 1


def test_many_tenfold_moves_at_once_are_refused_a_few_are_flagged():
    def move(n: int) -> PriceChange:
        return PriceChange(
            ("tencent", "ap-guangzhou", f"T{n}"), "on_demand", dt.date(2026, 11, 30), Decimal(1), Decimal(20)
        )

    flagged, refused = flagged_moves("tencent", [move(1)], stored=10)
    assert len(flagged) == 1 and refused is None
    flagged, refused = flagged_moves("tencent", [move(n) for n in range(4)], stored=5)
    assert len(flagged) == 4 and refused and "4 of 5 prices moved more than tenfold" in refused
