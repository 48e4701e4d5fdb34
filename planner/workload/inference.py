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
from dataclasses import dataclass
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
# Tensor parallelism splits attention heads and MLP columns evenly over the GPUs of one machine: 1, 2, 4
# or 8. vLLM's rule (QKVParallelLinear): the attention heads must divide by the tensor-parallel size;
# the KV heads must too, except that with more GPUs than KV heads each KV head is replicated on
# size ÷ KV heads GPUs, so the size must then be a multiple of the KV heads. A model that needs more GPUs
# than its largest such size gets pipeline stages (consecutive layers on each group of GPUs).
TENSOR_PARALLEL_SIZES = (1, 2, 4, 8)


@dataclass(frozen=True)
class ServingLayout:
    """How a model is split for serving: ``tensor_parallel`` GPUs per stage × ``pipeline_stages``."""

    tensor_parallel: int
    pipeline_stages: int = 1

    @property
    def gpus(self) -> int:
        return self.tensor_parallel * self.pipeline_stages

    def describe(self) -> str:
        """ "tensor parallelism over 4" or "tensor parallelism over 4 × 2 pipeline stages"."""
        tp = f"tensor parallelism over {self.tensor_parallel}"
        return tp if self.pipeline_stages == 1 else f"{tp} × {self.pipeline_stages} pipeline stages"


def splits_heads(size: int, heads: int, kv_heads: int) -> bool:
    """Whether ``size`` tensor-parallel GPUs can split ``heads`` attention heads with ``kv_heads`` KV
    heads (vLLM's rule: heads divide evenly; KV heads divide evenly or are replicated evenly)."""
    if heads % size:
        return False
    return kv_heads % size == 0 if size <= kv_heads else size % kv_heads == 0


def tensor_parallel_sizes(heads: int | None = None, kv_heads: int | None = None) -> tuple[int, ...]:
    """The tensor-parallel sizes within a machine that split the heads (all of 1, 2, 4, 8 when the heads
    are not known)."""
    if heads is None or kv_heads is None:
        return TENSOR_PARALLEL_SIZES
    return tuple(s for s in TENSOR_PARALLEL_SIZES if splits_heads(s, heads, kv_heads))


def serving_layout(needed: int, heads: int | None = None, kv_heads: int | None = None) -> ServingLayout:
    """The smallest split of a model over at least ``needed`` GPUs: the smallest tensor-parallel size
    that splits the heads and reaches ``needed``; else the largest such size × enough pipeline stages.
    Without the heads, every size splits them: 1, 2, 4, 8, then 8 × stages (multiples of 8)."""
    sizes = tensor_parallel_sizes(heads, kv_heads)
    for size in sizes:
        if needed <= size:
            return ServingLayout(size)
    return ServingLayout(sizes[-1], math.ceil(needed / sizes[-1]))


def serving_gpus(needed: int, heads: int | None = None, kv_heads: int | None = None) -> int:
    """The GPUs of ``serving_layout``: the fewest at least ``needed`` a model can be split over."""
    return serving_layout(needed, heads, kv_heads).gpus


def layout_for_count(
    gpus: int, heads: int | None = None, kv_heads: int | None = None
) -> ServingLayout | None:
    """How ``gpus`` given GPUs serve a model: the largest tensor-parallel size that splits the heads and
    divides ``gpus``, × the pipeline stages that make up the rest. Without the heads, only today's counts
    (1, 2, 4, 8, multiples of 8) are usable; None for any other."""
    if heads is None or kv_heads is None:
        layout = serving_layout(gpus)
        return layout if layout.gpus == gpus else None
    size = max(s for s in tensor_parallel_sizes(heads, kv_heads) if gpus % s == 0)
    return ServingLayout(size, gpus // size)


def is_serving_count(gpus: int, heads: int | None = None, kv_heads: int | None = None) -> bool:
    """Whether ``gpus`` is a count a model can be split over (see ``layout_for_count``)."""
    return layout_for_count(gpus, heads, kv_heads) is not None


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
    pipeline_stages: int = 1,
) -> tuple[float, str]:
    """(seconds per decode step of ``batch`` tokens on ``gpus`` GPUs, what bounds it).

    The larger of the memory time (bytes ÷ usable bandwidth) and the compute time (FLOPs ÷ peak × MFU),
    plus the fixed per-step latency and, with tensor parallelism (``gpus`` ÷ ``pipeline_stages`` > 1),
    two collectives per layer. The bound named is the largest of the three parts ("memory bandwidth",
    "compute" or "latency")."""
    memory_s = (weight_bytes + kv_bytes) / (bandwidth_gbps * 1e9 * DECODE_BANDWIDTH_EFFICIENCY * gpus)
    compute_s = batch * flops_per_token / (peak_tflops * 1e12 * mfu * gpus)
    latency_s = DECODE_STEP_OVERHEAD_S + (
        COLLECTIVES_PER_LAYER * layers * COLLECTIVE_LATENCY_S if gpus > pipeline_stages else 0.0
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
    pipeline_stages: int = 1,
) -> float:
    """Generated tokens per second per GPU: batch ÷ step time ÷ GPUs. With pipeline stages a step
    passes through them in turn; they all work only with a sequence in flight for each, so with fewer
    sequences than stages the rate falls by batch ÷ stages (one stream on 2 stages: half)."""
    step, _ = decode_step_seconds(
        weight_bytes, kv_bytes, batch, flops_per_token, bandwidth_gbps, peak_tflops, mfu, gpus, layers,
        pipeline_stages,
    )  # fmt: skip
    return batch / step / gpus * min(1.0, batch / pipeline_stages)


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


def job_cny_per_million_tokens(total_cny: float | Decimal, tokens: float) -> float:
    """What a million tokens cost in this job: the rental's total (whole billing periods included) ÷
    the tokens × 1e6. It agrees with the total, so ranking on it is ranking on the total."""
    return float(total_cny) / tokens * 1e6


def cny_per_million_tokens(cny_per_gpu_hour: float | Decimal, gpu_hours: float, tokens: float) -> float:
    """Steady-state serving cost: the paid GPU-hour rate (``paid_cny_per_gpu_hour``) × the GPU-hours a
    million tokens take. Unlike the job's figure (``job_cny_per_million_tokens``) it ignores the unused
    part of whole billing periods: what a million tokens cost on a server kept busy all period."""
    return float(cny_per_gpu_hour) * gpu_hours / tokens * 1e6
