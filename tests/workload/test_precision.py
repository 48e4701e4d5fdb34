"""Precision capability per GPU (issue 27): no plan runs FP8 on a GPU without it, BF16 is never run on
a GPU without BF16, and a precision asked of a GPU that lacks it is refused with the nearest it has."""

from __future__ import annotations

import json

import pytest

from planner import catalog
from planner.workload.estimate import estimate
from planner.workload.memory import PRECISIONS, TASK_PRECISIONS
from planner.workload.precision import (
    PrecisionError,
    has_bf16,
    has_fp8,
    nearest_precision,
    precisions_of,
)

GPUS = catalog.all_models()


def test_the_bf16_table_agrees_with_the_gpu_catalogue():
    assert {g.name for g in GPUS if not has_bf16(g)} == {g.name for g in GPUS if not g.has_bf16}


@pytest.mark.parametrize(
    ("gpu", "fp8"),
    [("H100-80GB", True), ("H800-80GB", True), ("H20-96GB", True), ("L20-48GB", True), ("RTX4090-24GB", True),
     ("B200-180GB", True), ("A100-80GB", False), ("A800-80GB", False), ("A10-24GB", False),
     ("V100-32GB", False), ("T4-16GB", False), ("RTX3090-24GB", False)],
)  # fmt: skip
def test_fp8_only_on_hopper_ada_and_blackwell(gpu, fp8):
    assert has_fp8(catalog.get_model(gpu)) is fp8


@pytest.mark.parametrize("task", list(TASK_PRECISIONS))
def test_no_estimate_runs_a_precision_its_gpu_lacks(task):
    """Every GPU × every precision the task takes: a run in a precision the GPU has, or a refusal."""
    for gpu in GPUS:
        for precision in [None, *TASK_PRECISIONS[task]]:
            try:
                e = estimate(model="qwen2.5-7b", task=task, tokens=1e6, gpu=gpu, precision=precision)
            except PrecisionError as err:
                assert precision is not None  # a default is replaced, never refused
                assert nearest_precision(gpu, precision, task) in str(err.hint)
                continue
            assert e.precision in precisions_of(gpu), (gpu.name, precision)


def test_a_default_the_gpu_lacks_is_replaced_and_said():
    e = estimate(model="qwen2.5-7b", task="inference", tokens=1e6, gpu=catalog.get_model("T4-16GB"))
    assert e.precision == "fp16"
    assert any("T4-16GB has no BF16: it runs FP16" in n for n in e.notes)


@pytest.mark.parametrize(
    ("gpu", "task", "near"),
    [("A100-80GB", "inference", "int8"), ("A100-80GB", "pretrain", "bf16"), ("V100-32GB", "full", "fp16")],
)
def test_fp8_asked_of_a_gpu_without_it_is_refused_with_the_nearest(gpu, task, near):
    with pytest.raises(PrecisionError) as err:
        estimate(model="qwen2.5-7b", task=task, tokens=1e6, gpu=catalog.get_model(gpu), precision="fp8")
    assert f"{gpu} has no FP8 tensor cores" in err.value.message
    assert near in str(err.value.hint)


def test_int_weight_formats_run_everywhere():
    assert all({"int8", "int4"} <= set(precisions_of(g)) for g in GPUS)
    assert set(PRECISIONS) >= set(precisions_of(GPUS[0]))


def test_plan_deepseek_v3_fp8_offers_only_gpus_with_fp8(run_cli):
    """Issue 27: this plan offered A100, A800, A10, V100, T4 and 32 × RTX 3090 (bundled snapshot)."""
    out = run_cli("plan", "--model", "deepseek-v3", "--task", "inference", "--precision", "fp8", "--tokens",
                  "1B", "--format", "json")  # fmt: skip
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["options"]
    for o in doc["options"]:
        assert has_fp8(catalog.get_model(o["gpu_model"])), o["gpu_model"]
        assert o["precision"] == "fp8"
    left = {e["gpu_model"]: e["reason"] for e in doc["excluded"]}
    assert "nearest it has: int8" in left["A100-80GB"]


def test_plan_runs_fp16_on_v100_and_says_so(run_cli):
    out = run_cli("plan", "--model", "qwen2.5-7b", "--task", "inference", "--tokens", "10M", "--gpu", "V100")
    assert out.exit_code == 0, out.output
    assert "No BF16 on V100" in out.output and "run in FP16" in out.output
    doc = json.loads(run_cli("plan", "--model", "qwen2.5-7b", "--task", "inference", "--tokens", "10M", "--gpu",
                             "V100", "--format", "json").output)  # fmt: skip
    assert {o["precision"] for o in doc["options"]} == {"fp16"}
