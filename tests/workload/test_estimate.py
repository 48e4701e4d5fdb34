import json

import pytest

from planner.catalog import get_model
from planner.errors import UsageError
from planner.workload.estimate import default_mfu, estimate, explain, gpu_class, job_flops
from planner.workload.memory import BYTES_PER_PARAM, ModelShape, default_shape, gpus_needed, kv_cache_bytes

GIB = 2**30
A100 = get_model("A100-80GB")
H100 = get_model("H100-80GB")
RTX4090 = get_model("RTX4090-24GB")
A6000 = get_model("RTXA6000-48GB")


# --- Calibration against published runs (workloads.md Part 3), default settings, no tuning ---


@pytest.mark.parametrize(
    "params, tokens, seq_len, gpu, published_gpu_hours",
    [
        (7e9, 2e12, 4096, A100, 184_320),  # Llama 2 7B model card
        (13e9, 2e12, 4096, A100, 368_640),  # Llama 2 13B
        (70e9, 2e12, 4096, A100, 1_720_320),  # Llama 2 70B
        (405e9, 15.6e12, 8192, H100, 30.84e6),  # Llama 3.1 405B model card
    ],
)
def test_params_alone_lands_near_published_gpu_hours(params, tokens, seq_len, gpu, published_gpu_hours):
    # Without --model the shape is assumed from N; the catalog cases are in test_calibration.py.
    e = estimate(params, "pretrain", tokens=tokens, seq_len=seq_len, gpu=gpu)
    assert e.overhead == 0.10
    assert abs(e.gpu_hours / published_gpu_hours - 1) < 0.3
    assert any("dense model" in a for a in e.assumed)


@pytest.mark.parametrize(
    "gpus, mfu, paper_days", [(256, 0.653, 70.86), (3072, 0.591, 6.53), (12288, 0.552, 1.75)]
)
def test_megascale_days(gpus, mfu, paper_days):
    # MegaScale Table 2: 6·175e9·300e9 FLOPs on 312 TFLOPS (A100) at the paper's MFU and GPU count.
    # MegaScale counts attention FLOPs (Megatron's formula), as we do; no restarts in its figure.
    e = estimate(175e9, "pretrain", tokens=300e9, gpu=A100, gpus=gpus, mfu=mfu, overhead=0)
    attention = 12 * e.shape.layers * e.shape.hidden * 2048
    assert e.flops == pytest.approx((6 * 175e9 + attention) * 300e9)
    assert e.wall_hours / 24 == pytest.approx(paper_days, rel=0.02)


def test_gpt3_total_compute():
    # GPT-3 paper Table D.1: 3.14e23 FLOPs for 174.6B parameters on 300B tokens.
    assert job_flops("pretrain", 174.6e9, 300e9) == pytest.approx(3.14e23, rel=0.01)


def test_inference_flops_two_per_param_token():
    assert job_flops("inference", 7e9, 1000) == 2 * 7e9 * 1000


# --- Memory examples from workloads.md §2.2-2.5 ---


def test_7b_bf16_weights_are_14_gb():
    assert estimate(7e9, "inference").breakdown["weights"] == pytest.approx(14.0)


def test_70b_weights_bf16_and_int4():
    assert estimate(70e9, "inference").breakdown["weights"] == pytest.approx(140.0)
    assert estimate(70e9, "inference", precision="int4").breakdown["weights"] == pytest.approx(35, rel=0.04)


def test_full_adam_is_16_bytes_per_param_plus_activations():
    e = estimate(7e9, "full")
    b = e.breakdown
    assert b["weights"] + b["gradients"] + b["optimizer_states"] == pytest.approx(16 * 7)
    assert b["optimizer_states"] == pytest.approx(12 * 7)
    assert b["activations"] > 0
    assert 16 < e.memory_gb / 7 < 21  # "16-18 bytes per parameter plus activations"


def test_full_fp32_is_also_16_bytes_per_param():
    b = estimate(7e9, "full", precision="fp32").breakdown
    assert (b["weights"], b["gradients"], b["optimizer_states"]) == pytest.approx((28, 28, 56))


def test_65b_qlora_weights_about_33_gb():
    assert 32.6 <= 65e9 * BYTES_PER_PARAM["int4"] / 1e9 <= 33.6  # §2.2: 65B in NF4 ≈ 32.6-33.6 GB
    e = estimate(65e9, "qlora")
    assert 32.6 <= e.breakdown["weights"] <= 34.5  # plus the bf16 adapters
    assert e.breakdown["optimizer_states"] < 5  # only the adapters carry Adam states


def test_70b_qlora_fits_in_48_gb():
    e = estimate(70e9, "qlora", gpu=A6000)
    assert e.memory_gb <= 48
    assert e.gpus_needed == 1


def test_llama2_7b_kv_cache_table():
    llama2_7b = ModelShape(layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128)
    assert kv_cache_bytes(llama2_7b, 1, 1) == 0.5 * 2**20  # 0.5 MiB per token
    assert kv_cache_bytes(llama2_7b, 4096, 1) == 2.0 * GIB
    assert kv_cache_bytes(llama2_7b, 128 * 1024, 1) == 64 * GIB


@pytest.mark.parametrize(
    "layers, kv_heads, per_token_bytes",
    [(80, 8, 0.3125 * 2**20), (32, 8, 0.125 * 2**20), (28, 2, 28 * 2**10), (28, 32, 0.4375 * 2**20)],
)
def test_kv_cache_gqa_rows(layers, kv_heads, per_token_bytes):
    shape = ModelShape(layers=layers, hidden=kv_heads * 128, heads=kv_heads, kv_heads=kv_heads, head_dim=128)
    assert kv_cache_bytes(shape, 1, 1) == per_token_bytes


def test_default_shape_7b_kv_close_to_llama2():
    e = estimate(7e9, "inference", seq_len=4096)
    assert e.breakdown["kv_cache"] * 1e9 / GIB == pytest.approx(2.0, rel=0.15)
    assert e.breakdown["overhead"] == 1.5


def test_kv_heads_override_shrinks_cache():
    mha = estimate(70e9, "inference", seq_len=4096)
    gqa = estimate(70e9, "inference", seq_len=4096, kv_heads=8)
    assert gqa.shape.kv_heads == 8
    assert gqa.breakdown["kv_cache"] == pytest.approx(mha.breakdown["kv_cache"] * 8 / mha.shape.kv_heads)


def test_kv_cache_scales_with_seq_and_batch():
    one = estimate(7e9, "inference", seq_len=1024, batch=1).breakdown["kv_cache"]
    assert estimate(7e9, "inference", seq_len=2048, batch=4).breakdown["kv_cache"] == pytest.approx(8 * one)


# --- Shape, GPUs needed, MFU defaults ---


def test_default_shape_follows_the_scaling_rule():
    s = default_shape(7e9)
    assert (s.layers, s.hidden, s.heads, s.kv_heads, s.head_dim) == (33, 4224, 33, 33, 128)
    for n in (1e8, 1e9, 7e9, 70e9, 405e9, 1e12):
        shape = default_shape(n)
        assert 12 * shape.layers * shape.hidden**2 == pytest.approx(n, rel=0.15)
        assert shape.hidden == shape.heads * shape.head_dim


def test_default_shape_rejects_too_many_kv_heads():
    with pytest.raises(UsageError):
        default_shape(7e9, kv_heads=64)


@pytest.mark.parametrize(
    "memory_gb, gpu_gb, usable, expected",
    [(72, 80, 0.9, 1), (72.01, 80, 0.9, 2), (80, 80, 1.0, 1), (1, 24, 0.9, 1)],
)
def test_gpus_needed(memory_gb, gpu_gb, usable, expected):
    assert gpus_needed(memory_gb, gpu_gb, usable) == expected


def test_inference_caps_gpu_memory_at_90_percent():
    e = estimate(70e9, "inference", gpu=A100, kv_heads=8)  # 140 + 0.6 + 1.5 GB
    assert e.usable_memory_fraction == 0.9
    assert e.gpus_needed == 2
    mha = estimate(70e9, "inference", gpu=A100)  # MHA cache by default: 3 would hold it
    assert mha.gpus_needed == 4  # but tensor parallelism splits over 1, 2, 4, 8, 16, ...
    assert any("tensor parallelism" in n for n in mha.notes)


def test_gpu_class_and_default_mfu():
    assert gpu_class(A100) == "datacenter"
    assert gpu_class(RTX4090) == "consumer"
    assert gpu_class(get_model("RTX4090D-24GB")) == "consumer"
    assert gpu_class(A6000) == "datacenter"
    assert gpu_class(get_model("RTX6000ADA-48GB")) == "datacenter"
    assert default_mfu("pretrain", A100) == 0.46
    # Issue 27: 0.10 had no source (a 7B LoRA on a 4090 cost 7.6x an A100's GPU-hours); 0.8 x data-centre.
    assert default_mfu("lora", RTX4090) == pytest.approx(0.42 * 0.8)
    assert default_mfu("lora", RTX4090) < default_mfu("lora", A100)


def test_mfu_override_and_time_formula():
    e = estimate(7e9, "full", tokens=1e9, gpu=A100, gpus=4, mfu=0.5)
    assert e.mfu == 0.5 and e.overhead == 0
    attention = 12 * e.shape.layers * e.shape.attention_dim * 2048
    assert e.flops == pytest.approx((6 * 7e9 + attention) * 1e9)
    assert e.gpu_hours == pytest.approx(e.flops / (312e12 * 0.5 * 3600))
    padded = estimate(7e9, "full", tokens=1e9, gpu=A100, gpus=4, mfu=0.5, overhead=0.25)
    assert padded.gpu_hours == pytest.approx(1.25 * e.gpu_hours)
    assert e.wall_hours == pytest.approx(e.gpu_hours / 4)
    assert e.bound == "compute"


def test_fp32_uses_fp32_peak():
    e = estimate(1e9, "full", tokens=1e9, gpu=A100, precision="fp32", mfu=0.4)
    assert e.peak_tflops == 19.5


def test_monotonic():
    hours = [estimate(7e9, "pretrain", tokens=d, gpu=A100).gpu_hours for d in (1e9, 1e10, 1e11)]
    assert hours == sorted(hours)
    memory = [estimate(n, "full").memory_gb for n in (1e9, 7e9, 13e9, 70e9)]
    assert memory == sorted(memory)
    seq = [estimate(7e9, "lora", seq_len=s).memory_gb for s in (512, 2048, 8192)]
    assert seq == sorted(seq)


def test_qlora_needs_less_than_lora_less_than_full():
    assert (
        estimate(7e9, "qlora").memory_gb < estimate(7e9, "lora").memory_gb < estimate(7e9, "full").memory_gb
    )


def test_too_few_gpus_is_flagged_not_raised():
    e = estimate(70e9, "full", tokens=1e9, gpu=A100, gpus=2)
    assert e.fits is False
    assert e.gpus == 2 and e.gpus_needed > 2
    assert any("cannot hold" in n for n in e.notes)


def test_default_gpus_is_gpus_needed():
    e = estimate(13e9, "full", tokens=1e9, gpu=A100)
    assert e.gpus == e.gpus_needed and e.fits
    assert e.wall_hours == pytest.approx(e.gpu_hours / e.gpus)


def test_single_stream_decode_is_bandwidth_bound():
    e = estimate(7e9, "inference", tokens=1e6, gpu=RTX4090, seq_len=4096)
    assert e.bound == "memory bandwidth"
    step_bytes = (e.breakdown["weights"] + e.breakdown["kv_cache"]) * 1e9
    step_s = step_bytes / (1008e9 * 0.8) + 0.003  # 80% of the bandwidth, plus 3 ms per step
    assert e.gpu_hours == pytest.approx(1e6 * step_s / 3600)
    assert e.tokens_per_gpu_s == pytest.approx(1 / step_s)
    batched = estimate(7e9, "inference", tokens=1e6, gpu=RTX4090, batch=256, seq_len=512)
    assert batched.bound == "compute"
    assert batched.gpu_hours < e.gpu_hours


def test_memory_only_without_gpu_or_tokens():
    e = estimate(7e9, "lora")
    assert e.gpus_needed is None and e.gpu_hours is None and e.flops is None
    e = estimate(7e9, "lora", tokens=1e8)  # LoRA: 4·N (no weight gradients for frozen weights), issue 27
    assert e.flops == pytest.approx((4 * 7e9 + 12 * e.shape.layers * e.shape.hidden * 2048) * 1e8)
    full = estimate(7e9, "full", tokens=1e8)
    assert full.flops == pytest.approx((6 * 7e9 + 12 * e.shape.layers * e.shape.hidden * 2048) * 1e8)


def test_gpu_without_compute_figure_gives_no_time():
    e = estimate(1e9, "inference", tokens=1e6, gpu=get_model("P100-16GB"))
    assert e.gpus_needed == 1 and e.gpu_hours is None
    assert any("no dense TFLOPS" in n for n in e.notes)


def test_to_dict_is_json_ready_with_required_keys():
    d = estimate(7e9, "pretrain", tokens=2e12, gpu=A100).to_dict()
    for key in (
        "memory_gb",
        "gpus_needed",
        "flops",
        "gpu_hours",
        "wall_hours",
        "mfu",
        "breakdown",
        "params",
        "task",
    ):
        assert key in d
    assert set(d["breakdown"]) == {
        "weights",
        "gradients",
        "optimizer_states",
        "activations",
        "kv_cache",
        "overhead",
    }
    assert d["memory_gb"] == pytest.approx(sum(d["breakdown"].values()))
    json.dumps(d)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(params=7e9, task="finetune"), "unknown task"),
        (dict(params=-7e9, task="full"), "params"),
        (dict(params=float("nan"), task="full"), "params"),
        (dict(params=7e9, task="full", precision="int4"), "cannot use precision"),
        (dict(params=7e9, task="qlora", precision="bf16"), "cannot use precision"),
        (dict(params=7e9, task="inference", precision="fp4"), "unknown precision"),
        (dict(params=7e9, task="full", tokens=0), "tokens"),
        (dict(params=7e9, task="full", mfu=1.5), "mfu"),
        (dict(params=7e9, task="full", mfu=0), "mfu"),
        (dict(params=7e9, task="full", gpus=0), "gpus"),
        (dict(params=7e9, task="full", seq_len=0), "seq len"),
        (dict(params=7e9, task="full", batch=2.5), "batch"),
    ],
)
def test_bad_inputs(kwargs, match):
    with pytest.raises(UsageError, match=match):
        estimate(**kwargs)


def test_explicit_shape_and_formulas():
    llama2_7b = ModelShape(layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128)
    e = estimate(6.7e9, "inference", seq_len=4096, shape=llama2_7b)
    assert e.breakdown["kv_cache"] * 1e9 == 2.0 * GIB
    assert estimate(6.7e9, "inference", shape=llama2_7b, kv_heads=8).shape.kv_heads == 8
    assert "flops" not in e.to_dict()["formulas"]  # no tokens, no FLOPs to explain
    with_tokens = estimate(6.7e9, "inference", tokens=1000, shape=llama2_7b).to_dict()
    flops = with_tokens["formulas"]["flops"]  # inference: 2·N, attention 4·layers·seq·width, its values
    terms = ("(2·N_active + 4·layers·seq·", "(2 × 6.7e+09 + 1.07e+09) × 1e+03", "= 1.45e+13")
    assert all(t in flops for t in terms), flops
    qlora = estimate(7e9, "qlora", tokens=1e9).to_dict()["formulas"]["flops"]  # adapters: 4·N, 12·...
    assert qlora.startswith("(4·N_active + 12·layers·seq·") and "(4 × 7e+09 + " in qlora, qlora
    full = estimate(7e9, "full", tokens=1e9).to_dict()["formulas"]["flops"]  # full training: 6·N
    assert full.startswith("(6·N_active + 12·layers·seq·") and "(6 × 7e+09 + " in full, full


# --- Checkpointing, bounds and the explanation ---


def test_fine_tuning_checkpoints_by_default_and_7b_lora_fits_one_24gb_card():
    lora = estimate(7e9, "lora", gpu=RTX4090)
    assert lora.checkpointing is True
    assert lora.gpus_needed == 1  # how 7B LoRA is run on a 4090 in practice
    sbh = 2048 * lora.shape.hidden
    # the plain loss (issue 27): bf16 logits, fp32 upcast, log-softmax and its gradient, 14 bytes
    expected = (2 * sbh * lora.shape.layers + 34 * sbh + 32_000 * 2048 * 14) / 1e9
    assert lora.breakdown["activations"] == pytest.approx(expected)
    no_ckpt = estimate(7e9, "lora", gpu=RTX4090, checkpointing=False)
    assert no_ckpt.breakdown["activations"] > 5 * lora.breakdown["activations"]
    assert no_ckpt.gpus_needed == 2
    assert estimate(7e9, "pretrain").checkpointing is False
    assert estimate(7e9, "inference", checkpointing=True).checkpointing is False


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(params=7, task="lora"), "params 7 is less than 1.0M"),
        (dict(params=1e15, task="lora"), "params 1000.0T is more than 100.0T"),
        (dict(params=7e9, task="lora", tokens=1e16), "tokens .* is more than"),
        (dict(params=7e9, task="lora", seq_len=10**8), "seq len"),
        (dict(params=7e9, task="lora", batch=10**6), "batch"),
        (dict(params=7e9, task="lora", gpu=A100, gpus=10**6), "gpus"),
        (dict(params=True, task="lora"), "params"),
    ],
)
def test_out_of_range_inputs(kwargs, match):
    with pytest.raises(UsageError, match=match):
        estimate(**kwargs)


def test_unknown_task_and_precision_suggest_near_names():
    from planner.errors import UnknownNameError

    with pytest.raises(UnknownNameError) as err:
        estimate(7e9, "lroa")
    assert err.value.suggestions[0] == "lora"
    with pytest.raises(UnknownNameError) as err:
        estimate(7e9, "inference", precision="bf61")
    assert "bf16" in err.value.suggestions


def test_explain_traces_every_number():
    e = estimate(7e9, "full", tokens=1e9, gpu=A100, gpus=4, mfu=0.5)
    lines = explain(e)
    assert lines["gpus_needed"] == f"ceil({e.memory_gb:.1f} / (80 × 1)) = 2"
    assert lines["gpu_hours"] == f"{e.flops:.3g} / (312e12 × 0.5 × 3600) × 1 = {e.gpu_hours:,.1f}"
    assert lines["wall_hours"].endswith(f"/ 4 = {e.wall_hours:,.1f}")
    assert lines["memory_gb"] == f"sum of the above = {e.memory_gb:.1f} GB"
    assert e.mfu_source == "given"
    source = estimate(7e9, "full", tokens=1e9, gpu=A100).mfu_source  # the default's task, arch and size
    assert source.startswith("default") and all(f in source for f in (" full ", " ampere ", " 7.0B ")), source
