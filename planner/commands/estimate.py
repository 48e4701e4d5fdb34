"""``planner estimate``: from a workload to memory, GPUs and hours.

A thin shell over ``planner.workload.estimate``; the workload options are ``workload_options.py``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from planner import catalog
from planner.answers.plan import Workload, check_serving
from planner.commands.arguments import Count
from planner.commands.emit import emit
from planner.commands.options import format_option, single_gpu_option
from planner.commands.workload_options import SERVING_KEYS, workload_options
from planner.errors import UsageError
from planner.views.estimate import render_estimate, render_serving
from planner.workload.estimate import estimate as run_estimate
from planner.workload.serving import size_serving

if TYPE_CHECKING:  # pragma: no cover
    from planner.workload.estimate import Estimate


@click.command()
@workload_options(tokens_required=False)
@single_gpu_option("GPU model, e.g. RTX4090 or A100-80GB: GPUs needed and hours.", required=False)
@click.option(
    "--gpus",
    type=Count("8", whole=True),
    metavar="K",
    help="Compute the wall-clock time on K GPUs (default: the fewest that hold the job).",
)
@click.option("--explain", is_flag=True, help="Show each number's formula with its inputs.")
@format_option
def estimate(workload, gpu, gpus, explain, fmt) -> None:  # noqa: ANN001
    """Memory, GPUs and GPU-hours for a training or inference job.

    Memory by component (weights, gradients, optimizer states, activations, KV cache, overhead), the
    fewest GPUs of the chosen model that hold it, FLOPs ((6·N_active + attention)·D training, 4·N_active for LoRA/QLoRA,
    (2·N_active + attention)·D inference), GPU-hours at the GPU's dense BF16/FP16 (or FP8) peak × MFU,
    and the wall-clock hours on K GPUs. Inference adds tokens/s per GPU (decode bound by memory
    bandwidth or compute, prefill by compute). Without --tokens, memory only; without --gpu, no GPU
    count or hours. --model takes a catalog model (`planner models`); --params any other.

    With --concurrency N or --requests-per-s R (serving, instead of --tokens): the replicas of --gpu
    that hold and keep up with the load, each stream's speed, and the tokens a month.

    \b
    Examples:
      planner estimate --model qwen2.5-72b --task inference --concurrency 20 --hours-per-day 8 --gpu A100-80GB
      planner estimate --model llama-3.1-70b --task inference --gpu A100-80GB
      planner estimate --model qwen2.5-7b --tokens 2B --task lora --gpu RTX4090
      planner estimate --model deepseek-v3 --task inference --precision fp8 --gpu H20
      planner estimate --model llama-2-7b --task pretrain --tokens 2T --gpu A100-80GB --gpus 512 --explain
      planner estimate --model qwen3-8b --task pretrain --tokens 1T --gpu H800 --precision fp8
      planner estimate --params 13B --task full --gpu A100-80GB --zero-stage 2 --optimizer-8bit
    """
    if gpus is not None and gpu is None:
        raise UsageError("--gpus needs --gpu", "e.g. --gpu A100-80GB --gpus 8")
    mfu = workload["mfu"]
    missing = {
        f: e for f, e, v in (("--tokens", "2B", workload["tokens"]), ("--gpu", "A100-80GB", gpu)) if v is None
    }
    if mfu is not None and 0 < mfu <= 1 and missing:  # a value out of range is the library's one error
        raise UsageError(
            f"--mfu changes only the hours, which need {' and '.join(missing)}",
            "e.g. " + " ".join(f"{flag} {example}" for flag, example in missing.items()),
        )
    gpu_model = catalog.get_model(catalog.canonical_name(gpu)) if gpu else None
    serving = {k: workload.pop(k) for k in SERVING_KEYS}
    if any(v is not None for v in serving.values()):
        _serve(workload, serving, gpu_model, gpus, fmt)
        return
    result = run_estimate(gpu=gpu_model, gpus=gpus, **workload)
    emit(
        result,
        fmt,
        table=lambda r: render_estimate(r, explain),
        csv=lambda r: ([_estimate_row(r)], ESTIMATE_COLUMNS),
    )


def _serve(workload: dict[str, Any], serving: dict[str, Any], gpu: Any, gpus: int | None, fmt: str) -> None:
    """``estimate`` of a serving load: the replicas and GPUs of ``gpu`` that serve it (no prices: see plan)."""
    if gpu is None:
        raise UsageError(
            "a serving estimate needs --gpu", "e.g. --gpu A100-80GB; `planner plan` compares every GPU"
        )
    if gpus is not None:
        raise UsageError("a serving estimate finds the GPUs itself", "drop --gpus")
    load = Workload(**workload, **serving)
    check_serving(load, None)
    size = size_serving(lambda batch: load.replica(gpu, batch), load.serving, gpu.name)  # type: ignore[arg-type]
    if isinstance(size, str):
        raise UsageError(f"{gpu.name} cannot serve this load: {size}", "try another --gpu, or `planner plan`")
    emit(size, fmt, table=render_serving, csv=lambda s: ([s.to_dict()], tuple(s.to_dict())))


ESTIMATE_COLUMNS = (
    "model", "task", "params", "active_params", "tokens", "precision", "seq_len", "batch", "checkpointing",
    "memory_gb", "weights_gb", "gradients_gb", "optimizer_states_gb", "activations_gb", "kv_cache_gb",
    "overhead_gb", "cpu_offload_gb", "gpu", "gpus_needed", "gpus", "fits", "flops", "peak_tflops", "mfu",
    "overhead", "gpu_hours", "wall_hours", "bound", "tokens_per_gpu_s", "prefill_tokens_per_gpu_s",
)  # fmt: skip


def _estimate_row(e: Estimate) -> dict[str, Any]:
    row = {k: getattr(e, k) for k in ESTIMATE_COLUMNS if hasattr(e, k)}
    row.update({f"{k}_gb": v for k, v in e.breakdown.items()})
    return row
