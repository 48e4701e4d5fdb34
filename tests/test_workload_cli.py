"""`planner estimate`, `planner plan` and `planner models` as a user runs them (issue 15's done-when checks)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.conftest import price_row, write_csv


def test_llama_3_1_70b_bf16_inference_needs_two_a100s(run_cli):
    result = run_cli("estimate", "--model", "llama-3.1-70b", "--task", "inference", "--gpu", "A100-80GB")
    assert result.exit_code == 0, result.output
    assert "GPUs needed       2 (" in result.output
    assert "8 KV heads of 128" in result.output and "config.json" in result.output
    assert "tokens/s per GPU at batch 1 (memory bandwidth bound)" in result.output


def test_deepseek_v3_fp8_and_mixtral_fp16_memory(run_cli):
    out = json.loads(
        run_cli(
            "estimate",
            "--model",
            "deepseek-v3",
            "--task",
            "inference",
            "--precision",
            "fp8",
            "--format",
            "json",
        ).output
    )
    assert out["memory_gb"] > 671 and out["active_params"] == 37e9 and out["model"] == "deepseek-v3"
    mixtral = json.loads(
        run_cli(
            "estimate",
            "--model",
            "mixtral-8x7b",
            "--task",
            "inference",
            "--precision",
            "fp16",
            "--format",
            "json",
        ).output
    )
    assert 90 < mixtral["memory_gb"] < 100


def test_params_says_what_it_assumed(run_cli):
    result = run_cli("estimate", "--params", "7B", "--task", "lora")
    assert result.exit_code == 0
    assert "Assumed for --params: a dense model (not MoE)" in result.output


@pytest.mark.parametrize(
    "args, message, hint",
    [
        (["--task", "inference"], "give --model NAME or --params N", "planner models"),
        (["--model", "qwen25-7b", "--task", "inference"], "unknown model 'qwen25-7b'", "did you mean qwen2.5-7b"),
        (["--model", "qwen2.5-7b", "--params", "7B", "--task", "lora"], "give --model or --params, not both", "knows its parameters"),
        (["--model", "qwen3-8b", "--task", "pretrain", "--precision", "fp8", "--gpu", "A100-80GB", "--tokens", "1B"],
         "A100-80GB has no FP8 tensor cores", "use --precision bf16"),
        (["--model", "qwen3-8b", "--task", "full", "--overhead", "-1"], "--overhead must be from 0", "e.g."),
    ],
)  # fmt: skip
def test_user_mistakes_are_one_line_with_a_hint(run_cli, args, message, hint):
    result = run_cli("estimate", *args)
    assert result.exit_code == 2, result.output
    assert f"Error: {message}" in result.output and hint in result.output
    assert "Traceback" not in result.output


def test_training_options_on_the_command_line(run_cli):
    out = json.loads(
        run_cli(
            "estimate", "--params", "13B", "--task", "full", "--gpu", "A100-80GB", "--zero-stage", "2",
            "--optimizer-8bit", "--cpu-offload", "--format", "json",
        ).output
    )  # fmt: skip
    assert (
        out["zero_stage"] == 2
        and out["optimizer_8bit"] is True
        and out["cpu_offload_gb"] == pytest.approx(78)
    )
    lora = run_cli("estimate", "--model", "qwen2.5-7b", "--task", "lora", "--lora-rank", "64")
    assert "LoRA rank 64" in lora.output


def test_models_lists_the_catalog_in_every_format(run_cli):
    table = run_cli("models", "--family", "deepseek")
    assert table.exit_code == 0
    assert "deepseek-v3" in table.output and "MLA" in table.output and "latent 512+64" in table.output
    rows = json.loads(run_cli("models", "--format", "json").output)
    v3 = next(r for r in rows if r["name"] == "deepseek-v3")
    assert (v3["kv_lora_rank"], v3["qk_rope_head_dim"], v3["experts"]) == (512, 64, 256)
    assert v3["source"].startswith("huggingface.co/deepseek-ai/DeepSeek-V3")
    parsed = list(csv.DictReader(io.StringIO(run_cli("models", "--format", "csv").output)))
    assert len(parsed) == len(rows) >= 60
    bad = run_cli("models", "--family", "qwen4")
    assert bad.exit_code == 2 and "unknown model family" in bad.output
    assert "Examples:" in run_cli("models", "--help").output


def test_plan_inference_ranks_by_cny_per_million_tokens(run_cli, tmp_path):
    rows = [
        # Cheap per hour but slow (bandwidth 1008 GB/s) against dearer and faster (2039 GB/s).
        price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB", price="2"),
        price_row(provider="tencent", region="ap-beijing", instance_type="A100x1", gpu_model="A100-80GB", price="3"),
        # Monthly: a big total for a short job, but cheap per GPU-hour.
        price_row(provider="tencent", region="ap-shanghai", instance_type="L20x1", gpu_model="L20-48GB",
                  billing="monthly", price="300"),
    ]  # fmt: skip
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", rows))).exit_code == 0
    result = run_cli(
        "plan", "--model", "qwen2.5-7b", "--task", "inference", "--tokens", "10M", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    options = json.loads(result.output)["options"]
    per_m = [o["cny_per_million_tokens"] for o in options]
    assert per_m == sorted(per_m) and all(p > 0 for p in per_m)
    totals = [float(o["total_cny"]) for o in options]
    assert totals != sorted(totals)  # the monthly L20 ranks on its per-token cost, not its total
    text = run_cli("plan", "--model", "qwen2.5-7b", "--task", "inference", "--tokens", "10M").output
    assert "CNY/M tok" in text and "Ranked by CNY per million generated tokens" in text
    assert "1, 2, 4, 8 or multiples of 8" in text


def test_plan_fp8_training_leaves_out_gpus_without_fp8(run_cli, tmp_path):
    rows = [
        price_row(provider="tencent", region="ap-beijing", instance_type="A100x1", gpu_model="A100-80GB", price="10"),
        price_row(provider="aliyun", region="cn-beijing", instance_type="H800x8", gpu_model="H800-80GB", gpu_count=8, price="240"),
    ]  # fmt: skip
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", rows))).exit_code == 0
    args = ("plan", "--model", "qwen3-8b", "--task", "pretrain", "--tokens", "10B", "--precision", "fp8")
    out = json.loads(run_cli(*args, "--format", "json").output)
    assert [o["gpu_model"] for o in out["options"]] == ["H800-80GB"]
    assert out["options"][0]["peak_tflops"] == 1978
    assert {"gpu_model": "A100-80GB", "reason": "no FP8 tensor cores for --precision fp8"} in out["excluded"]
    text = run_cli(
        "estimate",
        "--model",
        "qwen3-8b",
        "--task",
        "pretrain",
        "--tokens",
        "10B",
        "--precision",
        "fp8",
        "--gpu",
        "H800",
    ).output
    assert "1978 dense FP8 TFLOPS" in text and "× 0.7 at the FP8 peak" in text
