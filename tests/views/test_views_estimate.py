"""Golden output of ``planner.views.estimate``: the estimate of a fixed workload, rendered."""

from __future__ import annotations

from planner import catalog
from planner.views.estimate import render_estimate
from planner.workload.estimate import estimate


def test_a_lora_estimate_on_one_gpu_renders_as_before():
    e = estimate(
        None, "lora", tokens=2_000_000_000, gpu=catalog.get_model("RTX4090-24GB"), model="qwen2.5-7b"
    )
    assert render_estimate(e) == ESTIMATE


def test_a_memory_only_estimate_asks_for_the_tokens():
    e = estimate(7_000_000_000, "inference", batch=8, seq_len=4096)
    assert render_estimate(e) == ESTIMATE_MEMORY


# What the views printed before they moved out of planner/commands/, byte for byte; the FLOPs, MFU and
# hours lines since issue 27 (LoRA at 4·N, GeForce LoRA at 0.8 × the data-centre 0.42), and the published
# runs the estimate was checked against.
ESTIMATE = """\
Workload: lora of qwen2.5-7b, 7.6B parameters on 2.0B tokens (bf16, seq 2048 × batch 1, gradient checkpointing, LoRA rank 16)
Architecture: 28 layers, hidden 3584, 28 heads, 4 KV heads of 128, vocabulary 152,064 (from huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json (131072 with YaRN))

memory (all GPUs)     GB
-----------------  -----
weights            15.28
gradients           0.06
optimizer states    0.35
activations         5.02
KV cache               -
overhead            2.07
total               22.8

FLOPs: 6.58e+19 ((4·N_active + attention)·D; attention 7% at 2048 tokens)

On RTX4090-24GB (24 GB, 165.2 dense TFLOPS):
  GPUs needed       1 (22.8 of 24 GB)
  MFU               0.336 (default for lora on a consumer GPU (0.8 × data-centre Ampere); --mfu to change)
  GPU-hours         329.3
  Wall-clock hours  329.3 on 1 GPU(s) (13.7 days)
Checked against (estimate ÷ published, docs/calibration.md):
  Llama 3 8B LoRA (1 × H100-80GB, NeMo AutoModel perf. summary (2025-10), DGX-H100): ×1.07
  Qwen2.5 7B LoRA (1 × H100-80GB, NeMo AutoModel perf. summary (2025-10), DGX-H100): ×1.11
  Qwen2.5 32B LoRA (8 × H100-80GB, NeMo AutoModel perf. summary (2025-10), DGX-H100): ×0.63"""


ESTIMATE_MEMORY = """\
Workload: inference of a 7.0B-parameter model (bf16, context 4096 × batch 8)
Assumed for --params: a dense model (not MoE) of 7.0B parameters shaped by N ≈ 12·layers·hidden² with hidden/layers = 128: 33 layers, hidden 4224, 33 KV heads of 128 (one per attention head, MHA); for an MoE give active params

memory (all GPUs)     GB
-----------------  -----
weights            14.00
gradients              -
optimizer states       -
activations            -
KV cache           18.27
overhead            1.50
total               33.8
Give --tokens D (and --gpu) for FLOPs, GPU-hours and wall-clock hours."""
