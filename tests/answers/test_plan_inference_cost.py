"""`plan --task inference`: the cost per million tokens agrees with the total (issue 15 review: a monthly
A10 showed 45.64 CNY/M tok against a total of 48,044.36 for 1B tokens)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from planner.answers.plan import Workload, plan
from planner.config import load_config
from planner.ingest.importer import import_csv
from planner.pricing.cost import OfferQuery
from planner.workload.inference import (
    cny_per_million_tokens,
    job_cny_per_million_tokens,
    paid_cny_per_gpu_hour,
)
from tests.conftest import price_row, write_csv

FX = load_config(env={}).section("fx")
ROWS = [
    price_row(provider="aliyun", region="cn-shanghai", instance_type="A10x1", gpu_model="A10-24GB",
              billing="monthly", price="3000"),
    price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB", price="2"),
]  # fmt: skip
SERVE_1B = Workload(None, "inference", 1e9, model="qwen2.5-7b")


@pytest.fixture
def priced(engine, tmp_path):
    import_csv(engine, write_csv(tmp_path / "p.csv", ROWS), FX)
    return engine


def test_plan_inference_cost_this_job_agrees_with_the_total():
    assert job_cny_per_million_tokens(Decimal("48044.36"), 1e9) == pytest.approx(48.04436)
    # One monthly period of 730 h for a 600 GPU-hour job: the steady state is the month over its hours.
    rate = paid_cny_per_gpu_hour(3000, 1, "monthly", 1)
    assert cny_per_million_tokens(rate, 600, 1e9) == pytest.approx(3000 / 730 * 600 / 1000)
    assert cny_per_million_tokens(rate, 600, 1e9) < job_cny_per_million_tokens(3000, 1e9)


def test_plan_inference_cost_ranks_on_this_job_and_shows_the_steady_state(priced):
    with priced.connect() as conn:
        result = plan(conn, SERVE_1B, FX, query=OfferQuery.build((), (), (), ()))
    assert len(result.options) == 2
    for o in result.options:
        assert o.cny_per_million_tokens_job == pytest.approx(float(o.rental.total_cny) / 1e3)
        assert o.cny_per_million_tokens_steady_state is not None
    jobs = [o.cny_per_million_tokens_job for o in result.options]
    assert jobs == sorted(jobs)
    assert result.cheapest is result.options[0]  # the top row is the cheapest job, per token and in all
    a10 = next(o for o in result.options if o.rental.offer.billing == "monthly")
    hourly = next(o for o in result.options if o.rental.offer.billing != "monthly")
    assert a10.cny_per_million_tokens_steady_state < a10.cny_per_million_tokens_job
    assert hourly.cny_per_million_tokens_steady_state == pytest.approx(hourly.cny_per_million_tokens_job)
    d = a10.to_dict()
    assert {"cny_per_million_tokens_job", "cny_per_million_tokens_steady_state"} <= d.keys()
    assert "cny_per_million_tokens" not in d


def test_plan_inference_cost_columns_in_table_csv_and_json(run_cli, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", ROWS))).exit_code == 0
    args = ("plan", "--model", "qwen2.5-7b", "--task", "inference", "--tokens", "1B")
    text = run_cli(*args).output
    header = next(line for line in text.splitlines() if line.lstrip().startswith("#"))
    assert (
        header.index("CNY/M tok (this job)")
        < header.index("CNY/M tok (steady state)")
        < header.index("total CNY")
    )
    csv_header = run_cli(*args, "--format", "csv").output.splitlines()[0].split(",")
    assert "cny_per_million_tokens_job" in csv_header and "cny_per_million_tokens_steady_state" in csv_header
    doc = json.loads(run_cli(*args, "--format", "json").output)
    for o in doc["options"]:
        assert o["cny_per_million_tokens_job"] * 1000 == pytest.approx(float(o["total_cny"]), abs=0.01)
