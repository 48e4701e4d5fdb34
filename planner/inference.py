"""Inference economics: how fast a model decodes on a GPU, and what a million tokens cost.

Decoding one token for every sequence of a batch reads the weights the batch touches and the whole KV
cache once (Pope et al. 2022, workloads.md §2.6), so at small batches a step takes bytes ÷ memory
bandwidth; at large batches it takes the batch's FLOPs ÷ (peak × MFU). The step time is the larger of
the two plus a fixed latency (and, on several GPUs, the collectives between them). Prefill (reading the prompt) is compute-bound. Pure functions over numbers; no I/O.

    >>> round(decode_tokens_per_s(weight_bytes=14e9, kv_bytes=0.5e9, batch=1, flops_per_token=14e9,
    ...                           bandwidth_gbps=2039, peak_tflops=312, mfu=0.3, gpus=1, layers=32), 1)
    84.1
"""

from __future__ import annotations

import math
from decimal import Decimal

from planner.billing import hours_per_unit

# Calibrated on the Qwen2.5 speed benchmark (QwenLM/Qwen2.5 docs/source/benchmark/speed_benchmark.rst:
# vLLM 0.6.3, one stream, A100-80GB, 0.5B-72B on 1-4 GPUs; docs/calibration.md lists the cases):
# - Share of the datasheet memory bandwidth a decode step reaches: 0.8 (memory-bound kernels such as
#   paged attention and GEMV reach 70-90% of HBM peak).
DECODE_BANDWIDTH_EFFICIENCY = 0.8
# - A fixed cost per decode step (scheduling, sampling, kernel launches): the 0.5B-14B models all decode
#   about 3 ms slower per token than their bandwidth allows.
DECODE_STEP_OVERHEAD_S = 0.003
# - Tensor (or expert) parallelism adds two collectives per layer per step (attention and MLP all-reduce,
#   or MoE all-to-all); 72B on 2 and 4 GPUs decodes ~6.4 ms slower again: 40 µs per collective.
COLLECTIVES_PER_LAYER = 2
COLLECTIVE_LATENCY_S = 40e-6
# Tensor parallelism splits attention heads and MLP columns evenly, so a serving group is 1, 2, 4 or 8
# GPUs (one machine) and then whole 8-GPU machines (heads and KV heads are multiples of 8 in every
# catalog model that needs more than 8 GPUs).
TENSOR_PARALLEL_SIZES = (1, 2, 4, 8)


def serving_gpus(needed: int) -> int:
    """The fewest GPUs tensor parallelism can split a model over that is at least ``needed``:
    1, 2, 4, 8, then multiples of 8."""
    for size in TENSOR_PARALLEL_SIZES:
        if needed <= size:
            return size
    return 8 * math.ceil(needed / 8)


def is_serving_count(gpus: int) -> bool:
    """Whether ``gpus`` is a count tensor parallelism can use (see ``serving_gpus``)."""
    return serving_gpus(gpus) == gpus


def weight_bytes_read(total_params: float, active_params: float, batch: int, bytes_per_param: float) -> float:
    """Weight bytes one decode step reads. Dense models read every weight; an MoE token reads only its
    active experts, and a batch touches at most every expert: min(total, active × batch)."""
    return min(total_params, active_params * batch) * bytes_per_param


def decode_step_seconds(
    weight_bytes: float,
    kv_bytes: float,
    batch: int,
    flops_per_token: float,
    bandwidth_gbps: float,
    peak_tflops: float,
    mfu: float,
    gpus: int,
    layers: int,
) -> tuple[float, str]:
    """(seconds per decode step of ``batch`` tokens on ``gpus`` tensor-parallel GPUs, what bounds it).

    The larger of the memory time (bytes ÷ usable bandwidth) and the compute time (FLOPs ÷ peak × MFU),
    plus the fixed per-step latency and, on several GPUs, two collectives per layer. The bound named is
    the largest of the three parts ("memory bandwidth", "compute" or "latency")."""
    memory_s = (weight_bytes + kv_bytes) / (bandwidth_gbps * 1e9 * DECODE_BANDWIDTH_EFFICIENCY * gpus)
    compute_s = batch * flops_per_token / (peak_tflops * 1e12 * mfu * gpus)
    latency_s = DECODE_STEP_OVERHEAD_S + (
        COLLECTIVES_PER_LAYER * layers * COLLECTIVE_LATENCY_S if gpus > 1 else 0.0
    )
    parts = {"memory bandwidth": memory_s, "compute": compute_s, "latency": latency_s}
    return max(memory_s, compute_s) + latency_s, max(parts, key=lambda k: parts[k])


def decode_tokens_per_s(
    weight_bytes: float,
    kv_bytes: float,
    batch: int,
    flops_per_token: float,
    bandwidth_gbps: float,
    peak_tflops: float,
    mfu: float,
    gpus: int,
    layers: int,
) -> float:
    """Generated tokens per second per GPU: batch ÷ step time ÷ GPUs."""
    step, _ = decode_step_seconds(
        weight_bytes, kv_bytes, batch, flops_per_token, bandwidth_gbps, peak_tflops, mfu, gpus, layers
    )
    return batch / step / gpus


def prefill_tokens_per_s(flops_per_token: float, peak_tflops: float, mfu: float) -> float:
    """Prompt tokens per second per GPU: prefill is a large matrix multiply, bound by compute."""
    return peak_tflops * 1e12 * mfu / flops_per_token


def paid_cny_per_gpu_hour(
    total_cny: float | Decimal, units_paid: float | Decimal, billing: str, gpus: int
) -> float:
    """What a rental costs per GPU-hour it pays for: total ÷ (periods paid × hours per period × GPUs).
    A month rented for a 60-hour job costs its total over 730 hours here, not over 60: the rate a
    server kept busy all month pays."""
    paid_hours = float(units_paid) * hours_per_unit(billing) * gpus
    return float(total_cny) / paid_hours if paid_hours else math.inf


def cny_per_million_tokens(cny_per_gpu_hour: float | Decimal, gpu_hours: float, tokens: float) -> float:
    """Steady-state serving cost: the paid GPU-hour rate (``paid_cny_per_gpu_hour``) × the GPU-hours a
    million tokens take. Unlike a plan's total it ignores the unused part of whole billing periods, so
    options rented by the hour and by the month compare on what serving costs per token."""
    return float(cny_per_gpu_hour) * gpu_hours / tokens * 1e6
