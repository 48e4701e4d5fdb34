"""On random databases, quote, plan and ``gpus --value`` see the same offer the same way: the same
cost per GPU-hour and the same availability (they share ``planner.pricing.cost``; this keeps it so)."""

from __future__ import annotations

import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from db import store
from db.engine import ensure_schema, make_engine
from planner.answers.plan import Workload, plan
from planner.answers.quote import QuoteRequest, quote
from planner.answers.value import value_ranking
from planner.catalog import get_model
from planner.config import load_config

FX = load_config(env={}).section("fx")
SIX = Decimal("0.000001")
LORA = Workload(params=1e9, task="lora", tokens=1e8)  # fits one GPU of either model
FULL = Workload(params=7e9, task="full", tokens=1e8)  # several GPUs: 2 A100-80GB, 6 RTX 4090

offers = st.lists(
    st.tuples(
        st.sampled_from(["A100-80GB", "RTX4090-24GB"]),
        st.sampled_from(["aliyun", "tencent", "autodl"]),
        st.sampled_from([1, 2, 4, 8]),
        st.integers(min_value=100, max_value=40_000),  # CNY cents per GPU-hour
        # stock: a status, idle GPUs, or (idle GPUs summed over machines, the most on one machine)
        st.sampled_from([None, "available", "sold_out", 0, 1, 3, 8, (40, 2), (40, 8), (12, 6), (40, 5)]),
    ),
    min_size=1,
    max_size=6,
)


def build(path: Path, drawn) -> object:
    engine = make_engine(f"sqlite:///{path}")
    ensure_schema(engine)
    now = store.utcnow()
    with engine.begin() as conn:
        run = store.start_run(conn, "aliyun", "refresh")
        keys = [(p, "cn-beijing", f"I{i}-{gpu}") for i, (gpu, p, *_rest) in enumerate(drawn)]
        ids = store.upsert_instances(
            conn,
            [store.InstanceRow(*key, gpu, n) for key, (gpu, _p, n, *_r) in zip(keys, drawn, strict=True)],
        )
        prices = []
        stock = []
        for key, (_gpu, _p, n, cents, said) in zip(keys, drawn, strict=True):
            price = Decimal(cents) * n / 100
            prices.append(store.PriceRow(key, "on_demand", price, "CNY", "hour", price / n, now))
            if isinstance(said, tuple):  # a marketplace's machines: the sums and the most on one
                idle, most = said
                stock.append(store.AvailabilityRow(key, "on_demand", now, None, idle, 48, idle, most, most))
            elif said is not None:
                status, idle = (said, None) if isinstance(said, str) else (None, said)
                stock.append(store.AvailabilityRow(key, "on_demand", now, status, idle, 8))
        store.insert_prices(conn, prices, ids, run)
        store.insert_availability(conn, stock, ids, run)
        store.finish_run(conn, run, "ok")
    return engine


def recommended(result):
    return result.recommendation.offer.key if result.recommendation else None


def quoted(conn, gpu_model: str, gpus: int, hours: float, instance_id: int):
    request = QuoteRequest(gpu=gpu_model, hours=hours, gpus=gpus, billing=("on_demand",))
    return next(o for o in quote(conn, request, FX).options if o.offer.instance_id == instance_id)


# Examples per property: each builds a database, so the fast group draws a few and the slow group
# the full count.
FAST, SLOW = 6, 25
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(PROPERTY, max_examples=FAST)
@given(drawn=offers)
def test_quote_plan_and_value_agree_on_the_same_offer(drawn):
    agree_on_the_same_offer(drawn)


@pytest.mark.slow
@settings(PROPERTY, max_examples=SLOW)
@given(drawn=offers)
def test_quote_plan_and_value_agree_on_the_same_offer_at_length(drawn):
    agree_on_the_same_offer(drawn)


def agree_on_the_same_offer(drawn) -> None:
    with tempfile.TemporaryDirectory() as folder:
        engine = build(Path(folder) / "p.db", drawn)
        try:
            with engine.connect() as conn:
                models = [get_model(name) for name in sorted({d[0] for d in drawn})]
                for row in value_ranking(conn, models, FX).ranked:
                    o = row.offer
                    assert o is not None
                    same = quoted(conn, o.gpu_model, int(o.gpus_per_instance), 10, o.instance_id)
                    assert same.cny_per_gpu_hour.quantize(SIX) == o.cny_per_gpu_hour.quantize(SIX)
                    assert same.rentable == o.availability.rentable
                for workload in (LORA, FULL):  # one GPU, and several that must share a machine
                    for option in plan(conn, workload, FX).options:
                        r = option.rental
                        same = quoted(conn, r.offer.gpu_model, r.gpus, r.hours, r.offer.instance_id)
                        assert same.cny_per_gpu_hour.quantize(SIX) == r.cny_per_gpu_hour.quantize(SIX)
                        assert same.total_cny.quantize(SIX) == r.total_cny.quantize(SIX)
                        assert same.availability is r.availability
        finally:
            engine.dispose()


TOP_DRAWS = dict(
    drawn=offers, top=st.integers(min_value=1, max_value=4), basis=st.sampled_from(["latest", "median"])
)


@settings(PROPERTY, max_examples=FAST)
@given(**TOP_DRAWS)
def test_top_reads_stock_only_as_far_as_it_must_and_shows_what_the_whole_ranking_does(drawn, top, basis):
    """``--top K`` reads stock for the cheapest instances only; what it shows is what the whole
    ranking (every offer's stock read) puts in its first K rentable places, and the cheaper ones that
    cannot be rented."""
    top_shows_what_the_whole_ranking_does(drawn, top, basis)


@pytest.mark.slow
@settings(PROPERTY, max_examples=SLOW)
@given(**TOP_DRAWS)
def test_top_reads_stock_only_as_far_as_it_must_and_shows_what_the_whole_ranking_does_at_length(
    drawn, top, basis
):
    top_shows_what_the_whole_ranking_does(drawn, top, basis)


def top_shows_what_the_whole_ranking_does(drawn, top: int, basis: str) -> None:
    from planner.answers.quote import _shown

    gpu = drawn[0][0]
    with tempfile.TemporaryDirectory() as folder:
        engine = build(Path(folder) / "p.db", drawn)
        try:
            with engine.connect() as conn:
                whole = quote(conn, QuoteRequest(gpu=gpu, hours=10, price_basis=basis), FX)
                part = quote(conn, QuoteRequest(gpu=gpu, hours=10, price_basis=basis, top=top), FX)
            expected = _shown(list(whole.options), top)
            assert [(o.offer.key, o.rentable) for o in part.options] == [
                (o.offer.key, o.rentable) for o in expected
            ]
            assert recommended(part) == recommended(whole)
        finally:
            engine.dispose()
