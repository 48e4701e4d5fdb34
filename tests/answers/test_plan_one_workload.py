"""Issue 25: one workload computation under plan, estimate and the serving cost. Each test here failed
before: ``plan --model llama-3-70b --task inference --tokens 100M --gpu A10`` said 643.7 h on 16 A10
with JSON ``gpu_hours`` 24,775.8 (16 × 643.7 = 10,299) and a steady-state cost per million tokens above
this job's; ``estimate … --gpus 16`` said 1,548.5 h; ``plan --help`` described a ranking the output did
not use; ``plan --deadline-hours 0.001`` planned tens of thousands of GPUs for seconds."""

from __future__ import annotations

import json

import pytest

from planner.answers.plan import Workload, plan
from planner.catalog import get_model
from planner.config import load_config
from planner.ingest.importer import import_csv
from planner.pricing.cost import OfferQuery
from tests.conftest import price_row, write_csv

FX = load_config(env={}).section("fx")
# One A10 machine of 16 GPUs, billed monthly (the bundled snapshot's tencent BMGNV4), and one of 8.
ROWS = [
    price_row(provider="tencent", region="ap-shanghai", instance_type="BMGNV4", gpu_model="A10-24GB",
              gpu_count=16, billing="monthly", price="73980"),
    price_row(provider="aliyun", region="cn-shanghai", instance_type="A10x8", gpu_model="A10-24GB",
              gpu_count=8, billing="on_demand", price="70"),
]  # fmt: skip
SERVE = Workload(None, "inference", 100e6, model="llama-3-70b")
TRAIN = Workload(None, "lora", 2e9, model="qwen2.5-7b")


@pytest.fixture
def priced(engine, tmp_path):
    import_csv(engine, write_csv(tmp_path / "p.csv", ROWS), FX)
    return engine


@pytest.mark.parametrize("workload", [SERVE, TRAIN], ids=["inference", "lora"])
def test_every_option_is_the_estimate_on_the_gpus_it_rents(priced, workload):
    with priced.connect() as conn:
        result = plan(conn, workload, FX, query=OfferQuery.build(("A10",), (), (), ()))
    assert result.options
    for o in result.options:
        e = workload.on(get_model("A10-24GB"), o.rental.gpus)
        assert o.estimate.gpus == o.rental.gpus
        assert o.rental.hours == pytest.approx(e.wall_hours)
        assert o.estimate.gpu_hours == pytest.approx(o.rental.gpus * o.rental.hours)
        assert o.to_dict()["gpu_hours"] == pytest.approx(o.to_dict()["gpus"] * o.to_dict()["wall_hours"])


def test_the_16_gpu_machine_takes_as_long_as_estimate_says(priced):
    """The 16-GPU rental is costed on estimate's 16-GPU hours (TP 8 × 2 stages), not 8 GPUs' work ÷ 16."""
    with priced.connect() as conn:
        result = plan(conn, SERVE, FX, query=OfferQuery.build(("A10",), ("tencent",), (), ()))
    (o,) = result.options
    assert o.rental.gpus == 16
    e16 = SERVE.on(get_model("A10-24GB"), 16)
    assert o.rental.hours == pytest.approx(e16.wall_hours)
    assert o.rental.hours > SERVE.on(get_model("A10-24GB"), 8).gpu_hours / 16  # the old, linear answer


def test_steady_state_never_above_this_job(priced):
    with priced.connect() as conn:
        result = plan(conn, SERVE, FX, query=OfferQuery.build(("A10",), (), (), ()))
    for o in result.options:
        assert o.cny_per_million_tokens_steady_state is not None and o.cny_per_million_tokens_job is not None
        assert o.cny_per_million_tokens_steady_state <= o.cny_per_million_tokens_job * (1 + 1e-9)


def test_plan_and_estimate_agree_in_the_cli(run_cli, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", ROWS))).exit_code == 0
    args = ("--model", "llama-3-70b", "--task", "inference", "--tokens", "100M", "--gpu", "A10")
    doc = json.loads(run_cli("plan", *args, "--format", "json").output)
    for o in doc["options"]:
        est = json.loads(run_cli("estimate", *args, "--gpus", str(o["gpus"]), "--format", "json").output)
        assert o["wall_hours"] == pytest.approx(est["wall_hours"])
        assert o["gpu_hours"] == pytest.approx(est["gpu_hours"])
        assert est["gpu_hours"] == pytest.approx(est["gpus"] * est["wall_hours"])


def test_plan_help_describes_the_ranking_it_uses(run_cli):
    text = " ".join(run_cli("plan", "--help").output.split())
    assert "ranked by CNY per million generated tokens (the GPU-hour price" not in text
    assert "ranked by total CNY" in text
    assert "GPUs x hours" in text


@pytest.mark.parametrize(
    ("args", "limit"),
    [
        (("plan", "--model", "qwen2.5-7b", "--task", "pretrain", "--tokens", "1T", "--deadline-hours", "0.001"),
         "from 1"),
        (("estimate", "--model", "llama-3-70b", "--task", "inference", "--tokens", "100M", "--gpu", "A10",
          "--gpus", "20000"), "at most 8 × 80 = 640"),
    ],
    ids=["deadline", "gpus-beyond-layers"],
)  # fmt: skip
def test_counts_a_user_cannot_mean_are_refused_in_one_line(run_cli, args, limit):
    result = run_cli(*args)
    assert result.exit_code == 2
    assert limit in result.output
    assert "Traceback" not in result.output
    assert result.output.startswith("Error: ")


def test_plan_output_says_how_it_ranks_and_what_its_hours_are(run_cli, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", ROWS))).exit_code == 0
    text = " ".join(
        run_cli("plan", "--model", "llama-3-70b", "--task", "inference", "--tokens", "100M").stdout.split()
    )
    assert "Ranked by total CNY, the same order as CNY per million generated tokens in this job" in text
    assert "never more than this job's" in text and "`planner estimate --gpus` on the GPUs it rents" in text
