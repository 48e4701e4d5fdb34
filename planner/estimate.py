"""Workload estimates: memory, the GPUs that hold it, FLOPs and GPU-hours for one training or inference job.

Pure functions over numbers and a catalog ``GpuModel``; no I/O. The memory model is ``planner.memory``;
this module adds compute (§2.1 of ``shared/reference/workloads.md``), the default MFU per task and GPU
class, and the ``Estimate`` record with ``explain`` (every number with its formula and inputs). The same
formulas apply to every input: there are no special cases for named models.

    >>> from planner.catalog import get_model
    >>> e = estimate(7e9, "pretrain", tokens=2e12, gpu=get_model("A100-80GB"))
    >>> round(e.gpu_hours, -3)
    187000.0
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from planner.errors import UsageError
from planner.memory import (
    DEFAULT_BATCH,
    DEFAULT_PRECISION,
    DEFAULT_SEQ_LEN,
    USABLE_MEMORY_FRACTION,
    ModelShape,
    check_int,
    check_positive,
    check_task,
    check_task_precision,
    checkpointing_for,
    default_shape,
    gpus_needed,
    memory_breakdown,
)
from planner.units import BYTES_PER_GB, format_count

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel

# Bounds on what a person can mean. Below 1M parameters the suffix was forgotten ("--params 7"); the
# largest published models are about 2T parameters and 36T tokens, so 100T and 1,000T leave room.
MIN_PARAMS = 1e6
MAX_PARAMS = 1e14
MAX_TOKENS = 1e15
MAX_SEQ_LEN = 10_000_000
MAX_BATCH = 100_000
MAX_GPUS = 100_000  # the quote engine's limit (planner.quote.MAX_GPUS; a test keeps them equal)

# --- Compute (§2.1) ---
TRAIN_FLOPS_PER_PARAM_TOKEN = 6  # C ≈ 6·N·D (Kaplan; Chinchilla); MFU is defined on this count (PaLM)
INFERENCE_FLOPS_PER_PARAM_TOKEN = 2  # ≈ 2·N per generated token

# Default MFU by task and GPU class (§2.1 "MFU values" and "MFU default suggestions"). MFU counts 6·N·D
# only (PaLM), so the time a run spends recomputing activations is inside these figures.
DEFAULT_MFU: dict[tuple[str, str], float] = {
    # Llama 2 7B/13B/70B on A100 imply 39.1/37.7/43.5% and Llama 3 405B 38-43% (§2.1 table): 0.40.
    ("pretrain", "datacenter"): 0.40,
    # Same computation at smaller scale, less tuned: low end of §2.1's 0.35-0.45.
    ("full", "datacenter"): 0.35,
    # Assumption: small-batch adapter training, between consumer LoRA and full training.
    ("lora", "datacenter"): 0.25,
    ("qlora", "datacenter"): 0.20,  # assumption: 4-bit dequantisation costs extra time
    ("inference", "datacenter"): 0.30,  # assumption: batched serving; decode is capped by bandwidth too
    # Consumer (GeForce) cards: no NVLink, small batches: §2.1 suggests 0.05-0.15 for LoRA.
    ("pretrain", "consumer"): 0.30,  # assumption: below data-centre for PCIe-only scaling
    ("full", "consumer"): 0.15,  # top of §2.1's consumer range
    ("lora", "consumer"): 0.10,  # middle of §2.1's 0.05-0.15
    ("qlora", "consumer"): 0.08,  # assumption: below LoRA for dequantisation
    ("inference", "consumer"): 0.20,  # assumption
}


@dataclass(frozen=True)
class Estimate:
    """One workload estimate. GB are decimal (1e9 bytes), like GPU memory as marketed."""

    task: str
    params: float
    tokens: float | None
    precision: str
    seq_len: int
    batch: int
    checkpointing: bool  # gradient checkpointing (only layer inputs kept); False for inference
    shape: ModelShape
    memory_gb: float
    breakdown: dict[str, float]  # component -> GB: weights, gradients, optimizer_states, activations,
    # kv_cache, overhead
    gpu: str | None = None
    gpu_memory_gb: float | None = None
    usable_memory_fraction: float | None = None  # share of each GPU's memory counted as usable
    gpus_needed: int | None = None
    gpus: int | None = None  # GPUs the time is computed on (the user's K, else gpus_needed)
    fits: bool | None = None  # whether `gpus` hold memory_gb
    flops: float | None = None
    peak_tflops: float | None = None
    mfu: float | None = None
    mfu_source: str | None = None  # "given" or "default for <task> on <class> GPUs"
    gpu_hours: float | None = None
    wall_hours: float | None = None
    bound: str | None = None  # "compute" or "memory bandwidth" (inference decode)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus ``formulas``: each number with its formula and inputs (``explain``)."""
        data = asdict(self)
        data["notes"] = list(self.notes)
        data["formulas"] = explain(self)
        return data


def formulas(task: str, checkpointing: bool | None = None) -> dict[str, str]:
    """The formula behind each number of an estimate for ``task``, in words (sources in planner.memory)."""
    check_task(task)
    if task in ("pretrain", "full"):
        states = "weights + gradients + optimizer = 2 + 2 + 12 bytes per parameter (fp32: 4 + 4 + 8)"
    elif task == "inference":
        states = "weights = params × bytes per parameter of the precision"
    else:
        states = "frozen base × bytes per parameter + adapters (r·18·h per layer) × 16 bytes"
    if task == "inference":
        acts = "in overhead"
    elif checkpointing_for(task, checkpointing):
        acts = "2·seq·batch·hidden·layers + 34·seq·batch·hidden (checkpointing) + vocab·seq·batch·4"
    else:
        acts = "34·seq·batch·hidden·layers (selective recomputation) + vocab·seq·batch·4"
    compute = "2·N·D" if task == "inference" else "6·N·D"
    return {
        "model_states": states,
        "activations": acts,
        "kv_cache": "2·layers·kv_heads·head_dim·seq·batch·2 bytes" if task == "inference" else "none",
        "overhead": "1.5 GB" if task == "inference" else "10% of the rest",
        "gpus_needed": "ceil(memory_gb / (GPU memory × usable fraction))",
        "flops": compute,
        "gpu_hours": "flops / (peak dense TFLOPS × 1e12 × mfu × 3600)"
        + (", or decode steps × (weights + KV bytes) / bandwidth if larger" if task == "inference" else ""),
        "wall_hours": "gpu_hours / gpus",
    }


def explain(e: Estimate) -> dict[str, str]:
    """Each number of ``e`` as "formula = inputs = result", so every printed figure can be traced."""
    f = formulas(e.task, e.checkpointing)
    s = e.shape
    b = e.breakdown
    out = {
        "shape": f"N ≈ 12·layers·hidden², hidden/layers ≈ 128, head_dim 128 → {s.layers} layers, "
        f"hidden {s.hidden}, {s.heads} heads, {s.kv_heads} KV heads",
        "model_states": f"{f['model_states']} = {b['weights'] + b['gradients'] + b['optimizer_states']:.1f} GB",
        "activations": f"{f['activations']} = {b['activations']:.2f} GB",
        "kv_cache": f"{f['kv_cache']} = {b['kv_cache']:.2f} GB",
        "overhead": f"{f['overhead']} = {b['overhead']:.2f} GB",
        "memory_gb": f"sum of the above = {e.memory_gb:.1f} GB",
    }
    if e.gpus_needed is not None and e.gpu_memory_gb is not None:
        out["gpus_needed"] = (
            f"ceil({e.memory_gb:.1f} / ({e.gpu_memory_gb:g} × {e.usable_memory_fraction:g})) = {e.gpus_needed}"
        )
    if e.flops is not None and e.tokens is not None:
        per = 2 if e.task == "inference" else 6
        out["flops"] = f"{f['flops']} = {per} × {e.params:.3g} × {e.tokens:.3g} = {e.flops:.3g}"
    if e.gpu_hours is not None and e.peak_tflops is not None and e.flops is not None:
        compute = f"{e.flops:.3g} / ({e.peak_tflops:g}e12 × {e.mfu:g} × 3600)"
        if e.bound == "memory bandwidth":
            out["gpu_hours"] = (
                f"decode steps × (weights + KV bytes) / bandwidth = {e.gpu_hours:,.1f} "
                f"(larger than compute: {compute})"
            )
        else:
            out["gpu_hours"] = f"{compute} = {e.gpu_hours:,.1f}"
        out["wall_hours"] = f"{e.gpu_hours:,.1f} / {e.gpus} = {e.wall_hours:,.1f}"
    return out


def gpu_class(gpu: GpuModel) -> str:
    """``"consumer"`` for GeForce cards (RTX 20xx-50xx), else ``"datacenter"`` (incl. workstation cards)."""
    family = gpu.family.upper().replace(" ", "")
    return "consumer" if _GEFORCE.fullmatch(family) else "datacenter"


_GEFORCE = re.compile(r"RTX[2-5]0[5-9]0(TI|D|SUPER)*")  # RTX 2080 Ti ... 5090 D; not RTX A6000 / 6000 Ada


def default_mfu(task: str, gpu: GpuModel) -> float:
    """The default MFU for a task on this GPU's class (see DEFAULT_MFU for the sources)."""
    check_task(task)
    return DEFAULT_MFU[(task, gpu_class(gpu))]


def job_flops(task: str, params: float, tokens: float) -> float:
    """C ≈ 6·N·D for training, 2·N·D for inference (D = tokens processed or generated), §2.1."""
    check_task(task)
    per = INFERENCE_FLOPS_PER_PARAM_TOKEN if task == "inference" else TRAIN_FLOPS_PER_PARAM_TOKEN
    return per * params * tokens


def gpu_hours_for(flops: float, peak_tflops: float, mfu: float) -> float:
    """GPU-hours = C / (peak · MFU · 3600), §2.1."""
    return flops / (peak_tflops * 1e12 * mfu * 3600)


def estimate(
    params: float,
    task: str,
    tokens: float | None = None,
    gpu: GpuModel | None = None,
    gpus: int | None = None,
    precision: str | None = None,
    mfu: float | None = None,
    seq_len: int | None = None,
    batch: int | None = None,
    kv_heads: int | None = None,
    shape: ModelShape | None = None,
    checkpointing: bool | None = None,
) -> Estimate:
    """Estimate memory, GPUs and time for ``task`` on a model of ``params`` parameters.

    ``tokens`` is D: training tokens, or tokens generated for inference; without it there is no
    FLOP or time answer. Without ``gpu`` only the memory is answered. ``gpus`` (K) defaults to the
    fewest that hold the memory. ``shape`` overrides the shape derived from ``params``;
    ``checkpointing`` the task's default activation strategy (see planner.memory).
    """
    check_task(task)
    _check_range(params, "--params", MIN_PARAMS, MAX_PARAMS, "e.g. 7B or 6.7e9")
    precision = (precision or DEFAULT_PRECISION[task]).lower()
    check_task_precision(task, precision)
    seq_len = DEFAULT_SEQ_LEN if seq_len is None else check_int(seq_len, "--seq-len")
    batch = DEFAULT_BATCH if batch is None else check_int(batch, "--batch")
    _check_range(seq_len, "--seq-len", 1, MAX_SEQ_LEN, "e.g. 4096")
    _check_range(batch, "--batch", 1, MAX_BATCH, "e.g. 8")
    if tokens is not None:
        _check_range(tokens, "--tokens", 1, MAX_TOKENS, "e.g. 2B or 1.4T")
    if gpus is not None:
        check_int(gpus, "--gpus")
        _check_range(gpus, "--gpus", 1, MAX_GPUS, "e.g. 8")
    if mfu is not None and not (isinstance(mfu, int | float) and 0 < mfu <= 1):
        raise UsageError(f"--mfu must be in (0, 1], got {mfu}", "e.g. --mfu 0.4")
    if shape is None:
        shape = default_shape(params, kv_heads)
    elif kv_heads is not None:
        shape = replace(shape, kv_heads=kv_heads)
    checkpointing = checkpointing_for(task, checkpointing)
    breakdown = memory_breakdown(task, params, precision, seq_len, batch, shape, checkpointing)
    memory_gb = sum(breakdown.values())
    result = Estimate(
        task, params, tokens, precision, seq_len, batch, checkpointing, shape, memory_gb, breakdown
    )
    flops = job_flops(task, params, tokens) if tokens is not None else None
    if gpu is None:
        return replace(result, flops=flops, mfu=mfu, mfu_source="given" if mfu is not None else None)
    return _on_gpu(result, gpu, gpus, flops, mfu)


def _on_gpu(
    result: Estimate, gpu: GpuModel, gpus: int | None, flops: float | None, mfu: float | None
) -> Estimate:
    usable = USABLE_MEMORY_FRACTION[result.task]
    needed = gpus_needed(result.memory_gb, gpu.memory_gb, usable)
    k = gpus or needed
    notes: list[str] = []
    if k < needed:
        notes.append(f"{k} × {gpu.name} cannot hold {result.memory_gb:.1f} GB; at least {needed} are needed")
    source = "given" if mfu is not None else f"default for {result.task} on {gpu_class(gpu)} GPUs"
    mfu = mfu if mfu is not None else default_mfu(result.task, gpu)
    peak = gpu.fp32_tflops if result.precision == "fp32" else gpu.dense_tflops
    fields: dict[str, Any] = dict(
        gpu=gpu.name,
        gpu_memory_gb=gpu.memory_gb,
        usable_memory_fraction=usable,
        gpus_needed=needed,
        gpus=k,
        fits=k >= needed,
        mfu=mfu,
        mfu_source=source,
    )
    fields.update(flops=flops, peak_tflops=peak)
    if result.precision == "bf16" and not gpu.has_bf16:
        notes.append(f"{gpu.name} has no BF16: it runs FP16 (same memory); its FP16 peak is used")
    if flops is not None and peak is None:
        notes.append(f"the catalog has no dense TFLOPS figure for {gpu.name}: no time estimate")
    elif flops is not None and peak is not None:
        hours = gpu_hours_for(flops, peak, mfu)
        bound = "compute"
        bw_hours = _decode_gpu_hours(result, gpu)
        if bw_hours is not None and bw_hours > hours:
            hours, bound = bw_hours, "memory bandwidth"
            notes.append("decode is limited by memory bandwidth, not compute (§2.6): raise --batch")
        fields.update(gpu_hours=hours, wall_hours=hours / k, bound=bound)
    return replace(result, notes=tuple(notes), **fields)


def _decode_gpu_hours(result: Estimate, gpu: GpuModel) -> float | None:
    """Inference: each decode step reads all weights and the KV cache once (§2.6), one step per
    ``batch`` tokens; spread over K GPUs the GPU-seconds stay the same. KV at full context (upper bound)."""
    if result.task != "inference" or result.tokens is None or not gpu.bandwidth_gbps:
        return None
    step_bytes = (result.breakdown["weights"] + result.breakdown["kv_cache"]) * BYTES_PER_GB
    steps = result.tokens / result.batch
    return steps * step_bytes / (gpu.bandwidth_gbps * 1e9) / 3600


def _check_range(value: float, name: str, low: float, high: float, example: str) -> None:
    check_positive(value, name)
    if value < low:
        hint = f"{example}; a suffix is needed for large counts" if name == "--params" else example
        raise UsageError(f"{name} {format_count(value)} is less than {format_count(low)}", hint)
    if value > high:
        raise UsageError(f"{name} {format_count(value)} is more than {format_count(high)}", example)
