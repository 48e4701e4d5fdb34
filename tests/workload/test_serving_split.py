"""Serving GPU counts split the model's attention heads evenly, as vLLM requires, or add pipeline stages
(issue 15 review: Qwen2.5-7B, 28 heads, was said to split over 8 GPUs by tensor parallelism)."""

from __future__ import annotations

import json

import pytest

from planner.catalog import get_model
from planner.workload.estimate import estimate
from planner.workload.inference import (
    ServingLayout,
    decode_tokens_per_s,
    layout_for_count,
    serving_gpus,
    serving_layout,
    splits_heads,
)

T4 = get_model("T4-16GB")
A100 = get_model("A100-80GB")


def test_serving_split_follows_vllms_head_rule():
    # Qwen2.5-7B: 28 heads, 4 KV heads. 8 does not divide 28.
    assert [s for s in (1, 2, 4, 8) if splits_heads(s, 28, 4)] == [1, 2, 4]
    # KV heads fewer than the GPUs are replicated: 32 heads, 2 KV heads on 4 or 8 GPUs is fine ...
    assert splits_heads(4, 32, 2) and splits_heads(8, 32, 2)
    # ... but only by a whole number of replicas, and KV heads above the size must divide evenly.
    assert not splits_heads(4, 24, 3) and not splits_heads(2, 24, 3)
    assert [s for s in (1, 2, 4, 8) if splits_heads(s, 14, 2)] == [1, 2]  # Qwen2.5-0.5B


def test_serving_split_smallest_tensor_parallel_count_else_pipeline_stages():
    assert serving_layout(3, 28, 4) == ServingLayout(4)
    assert serving_layout(5, 28, 4) == ServingLayout(4, 2)
    assert serving_layout(9, 28, 4) == ServingLayout(4, 3)
    assert serving_layout(3, 14, 2) == ServingLayout(2, 2)
    assert serving_layout(12, 64, 8) == ServingLayout(8, 2)
    # Without the heads (--params), today's rule: 1, 2, 4, 8, then multiples of 8.
    assert [serving_gpus(n) for n in (1, 2, 3, 5, 8, 9, 17)] == [1, 2, 4, 8, 8, 16, 24]
    assert ServingLayout(4, 2).describe().endswith("over 4 × 2 pipeline stages")
    assert ServingLayout(2).describe() == "tensor parallelism over 2"


def test_serving_split_of_a_given_count():
    assert layout_for_count(6, 28, 4) == ServingLayout(2, 3)
    assert layout_for_count(8, 28, 4) == ServingLayout(4, 2)
    assert layout_for_count(8, 32, 8) == ServingLayout(8)
    assert layout_for_count(3) is None and layout_for_count(16) == ServingLayout(8, 2)


def test_serving_split_the_reviewers_repro_qwen25_7b_on_t4():
    e = estimate(model="qwen2.5-7b", task="inference", gpu=T4, seq_len=32768, batch=32)
    assert (e.gpus_needed, e.tensor_parallel, e.pipeline_stages) == (8, 4, 2)
    note = next(n for n in e.notes if "pipeline" in n)
    assert "28 attention heads (4 KV heads)" in note and "over 4 × 2 pipeline stages" in note
    assert not any("multiple of 8" in n for n in e.notes)
    assert "over 4 × 2 pipeline stages" in e.to_dict()["formulas"]["gpus_needed"]


def test_serving_split_for_params_keeps_todays_rule_and_says_the_assumption():
    e = estimate(7.6e9, "inference", gpu=T4, seq_len=32768, batch=32, kv_heads=4)
    assert e.gpus_needed == 8 and (e.tensor_parallel, e.pipeline_stages) == (8, 1)
    assert any("assumed: its heads divide evenly" in n for n in e.notes)


def test_serving_split_with_given_gpus():
    e = estimate(model="qwen2.5-7b", task="inference", gpu=T4, seq_len=32768, batch=32, gpus=6)
    assert (e.tensor_parallel, e.pipeline_stages, e.fits) == (2, 3, True)
    assert any("6 GPUs serve qwen2.5-7b" in n and "over 2 × 3 pipeline stages" in n for n in e.notes)
    # --params keeps refusing counts tensor parallelism cannot use
    three = estimate(70e9, "inference", gpu=A100, gpus=3)
    assert three.fits is False and any("cannot split a model over 3 GPUs" in n for n in three.notes)


def test_serving_split_keeps_the_published_cases():
    assert estimate(model="llama-3.1-70b", task="inference", gpu=A100).gpus_needed == 2
    big = estimate(model="llama-3.1-405b", task="inference", gpu=A100)
    assert big.tensor_parallel == 8 and big.gpus_needed == 8 * big.pipeline_stages


def test_serving_split_pipeline_stages_idle_without_a_sequence_for_each():
    args = dict(weight_bytes=14e9, kv_bytes=0.5e9, flops_per_token=14e9, bandwidth_gbps=320,
                peak_tflops=65, mfu=0.3, gpus=8, layers=28)  # fmt: skip
    one_stage = decode_tokens_per_s(batch=1, **args)
    two_stages = decode_tokens_per_s(batch=1, pipeline_stages=2, **args)
    # One stream: the two stages take turns (half the rate), and only 4 GPUs exchange collectives.
    assert two_stages < one_stage * 0.6
    assert decode_tokens_per_s(batch=32, pipeline_stages=2, **args) >= decode_tokens_per_s(batch=32, **args)


def test_serving_split_in_json(run_cli):
    result = run_cli(
        "estimate", "--model", "qwen2.5-7b", "--task", "inference", "--gpu", "T4",
        "--seq-len", "32768", "--batch", "32", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["gpus_needed"], doc["tensor_parallel"], doc["pipeline_stages"]) == (8, 4, 2)


@pytest.mark.parametrize(
    "model", ["qwen2.5-0.5b", "qwen2.5-7b", "mixtral-8x7b", "deepseek-v3", "llama-3.1-405b"]
)
def test_serving_split_every_count_divides_the_heads(model):
    for gpu in (T4, A100):
        e = estimate(model=model, task="inference", gpu=gpu)
        assert e.tensor_parallel is not None and e.pipeline_stages is not None
        assert splits_heads(e.tensor_parallel, e.shape.heads, e.shape.kv_heads)
        assert e.gpus_needed == e.tensor_parallel * e.pipeline_stages
