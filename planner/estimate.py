"""Workload estimates: memory, GPUs that hold it, FLOPs and GPU-hours for one training or inference job.

Pure functions over numbers and a catalog ``GpuModel``; no I/O. Every formula and default below names its
source in ``shared/reference/workloads.md`` (the "§" numbers) or says it is our assumption. The same
formulas apply to every input: there are no special cases for named models.

    >>> from planner.catalog import get_model
    >>> e = estimate(7e9, "pretrain", tokens=2e12, gpu=get_model("A100-80GB"))
    >>> round(e.gpu_hours, -3)
    187000.0
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from planner.errors import UsageError
from planner.units import BYTES_PER_GB

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel

TASKS: tuple[str, ...] = ("pretrain", "full", "lora", "qlora", "inference")
TRAINING_TASKS: tuple[str, ...] = ("pretrain", "full", "lora", "qlora")

# Bytes per parameter (§2.2). int4 is NF4 plus QLoRA's double-quantised constants, 0.127 bits per
# parameter (§2.2, QLoRA), so 65B -> 33.5 GB, inside the 32.6-33.6 GB of §2.2.
BYTES_PER_PARAM: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": (4 + 0.127) / 8,
}
PRECISIONS: tuple[str, ...] = tuple(BYTES_PER_PARAM)
DEFAULT_PRECISION: dict[str, str] = {
    "pretrain": "bf16",
    "full": "bf16",
    "lora": "bf16",
    "qlora": "int4",
    "inference": "bf16",
}
# Precisions each task can run in. Full training needs 16-bit or fp32 master weights (ZeRO §3.1);
# QLoRA is 4-bit by definition (an 8-bit base is --task lora --precision int8).
TASK_PRECISIONS: dict[str, tuple[str, ...]] = {
    "pretrain": ("bf16", "fp16", "fp32"),
    "full": ("bf16", "fp16", "fp32"),
    "lora": ("bf16", "fp16", "fp32", "fp8", "int8"),
    "qlora": ("int4",),
    "inference": PRECISIONS,
}

# Model states per parameter for full training with Adam (§2.3, ZeRO §3.1): 16-bit weights 2 +
# 16-bit gradients 2 + fp32 master, momentum, variance 12 = 16 bytes. Pure fp32: 4 + 4 + 8 (no master).
ADAM_STATE_BYTES: dict[str, tuple[float, float, float]] = {  # (weights, gradients, optimizer)
    "bf16": (2.0, 2.0, 12.0),
    "fp16": (2.0, 2.0, 12.0),
    "fp32": (4.0, 4.0, 8.0),
}

# --- Model shape derived from N (the user gives only N) ---
# Kaplan et al. 2020 §2.1: non-embedding N ≈ 12·n_layer·d_model² (d_attn = d_model, d_ff = 4·d_model).
# Aspect ratio d_model / n_layer = 128: Llama 2 7B is 32 layers × 32 heads × 128 (§2.5 table), i.e.
# 4096 / 32 = 128, and Kaplan Fig. 5 finds loss nearly flat in aspect ratio over ~20-200.
ASPECT_RATIO = 128
HEAD_DIM = 128  # every model in the §2.5 KV-cache table uses head_dim 128
VOCAB_SIZE = 32_000  # Llama 1/2 tokenizer size; only used for the logits buffer (assumption)

DEFAULT_SEQ_LEN = 2048  # a common fine-tuning context (QLoRA, Llama 1); --seq-len overrides (assumption)
DEFAULT_BATCH = 1  # micro-batch in flight; --batch overrides

# --- Activations, Korthikanti et al. 2022 (§2.3), bytes per layer with 16-bit activations ---
# Selective recomputation (FlashAttention does the same: no 5·a·s/h attention-score term): 34·s·b·h.
SELECTIVE_ACT_BYTES_PER_SBH = 34
# Full recomputation (gradient checkpointing, what QLoRA uses): only each layer's input, 2·s·b·h, plus
# one layer's full 34·s·b·h while it is recomputed.
CHECKPOINT_ACT_BYTES_PER_SBH = 2
LOGIT_BYTES = 4  # fp32 logits, vocab × seq × batch × 4 bytes (§2.3 says reserve 2-4 bytes)
ACTIVATION_MODE: dict[str, str] = {
    "pretrain": "selective",
    "full": "selective",
    "lora": "selective",
    "qlora": "checkpoint",
}

# --- LoRA adapters (§2.4) ---
LORA_RANK = 16  # assumption: a common choice between PEFT's default 8 and QLoRA's 64
# Adapters on every linear layer (QLoRA's finding that all layers are needed to match full tuning):
# q, k, v, o (h×h, r·2h each) and the two MLP matrices (h×4h, r·5h each) = r·18h per layer.
LORA_PARAMS_PER_RANK_HIDDEN = 18
LORA_STATE_BYTES = (2.0, 2.0, 12.0)  # adapters train like full Adam: 16 bytes per adapter parameter (§2.4)

# --- Overheads and the per-GPU cap (§2.6) ---
TRAINING_OVERHEAD_FRACTION = 0.10  # fragmentation and buffers: "add 10-20%", lower end
INFERENCE_OVERHEAD_GB = 1.5  # CUDA context and activations: "about 1-2 GB"
KV_CACHE_BYTES = 2  # bf16 K and V (§2.5 table); fp32 precision stores them in 4
# Memory usable per GPU, as §2.6 suggests: inference is "capped at 90% of VRAM" (vLLM
# gpu_memory_utilization and TensorRT-LLM free_gpu_memory_fraction both default to 0.9); training
# instead carries its headroom in the 10% overhead line above, so counting a cap too would charge it
# twice. Several GPUs are assumed to split the total evenly: ZeRO-3 / FSDP for model states
# (16Ψ/Nd, §2.3) and tensor + sequence parallelism for activations (34·s·b·h/t, §2.3).
USABLE_MEMORY_FRACTION: dict[str, float] = {
    "pretrain": 1.0,
    "full": 1.0,
    "lora": 1.0,
    "qlora": 1.0,
    "inference": 0.9,
}

# --- Compute (§2.1) ---
TRAIN_FLOPS_PER_PARAM_TOKEN = 6  # C ≈ 6·N·D (Kaplan; Chinchilla); MFU is defined on this count (PaLM)
INFERENCE_FLOPS_PER_PARAM_TOKEN = 2  # ≈ 2·N per generated token

# Default MFU by task and GPU class (§2.1 "MFU values" and "MFU default suggestions").
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
class ModelShape:
    """Transformer shape used for activations and the KV cache."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int = VOCAB_SIZE


@dataclass(frozen=True)
class Estimate:
    """One workload estimate. GB are decimal (1e9 bytes), like GPU memory as marketed."""

    task: str
    params: float
    tokens: float | None
    precision: str
    seq_len: int
    batch: int
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
    gpu_hours: float | None = None
    wall_hours: float | None = None
    bound: str | None = None  # "compute" or "memory bandwidth" (inference decode)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus ``formulas``: how each number was computed, for ``--explain``."""
        data = asdict(self)
        data["notes"] = list(self.notes)
        data["formulas"] = formulas(self.task)
        return data


def formulas(task: str) -> dict[str, str]:
    """The formula behind each number of an estimate for ``task``, in words (sources in this module)."""
    _check_task(task)
    if task in ("pretrain", "full"):
        states = "weights + gradients + optimizer = 2 + 2 + 12 bytes per parameter (fp32: 4 + 4 + 8)"
    elif task == "inference":
        states = "weights = params × bytes per parameter of the precision"
    else:
        states = "frozen base × bytes per parameter + adapters (r·18·h per layer) × 16 bytes"
    acts = {
        "selective": "34·seq·batch·hidden·layers (selective recomputation) + vocab·seq·batch·4",
        "checkpoint": "2·seq·batch·hidden·layers + 34·seq·batch·hidden (checkpointing) + vocab·seq·batch·4",
    }
    compute = "2·N·D" if task == "inference" else "6·N·D"
    return {
        "model_states": states,
        "activations": acts[ACTIVATION_MODE[task]] if task in ACTIVATION_MODE else "in overhead",
        "kv_cache": "2·layers·kv_heads·head_dim·seq·batch·2 bytes" if task == "inference" else "none",
        "overhead": "1.5 GB" if task == "inference" else "10% of the rest",
        "gpus_needed": "ceil(memory_gb / (GPU memory × usable fraction))",
        "flops": compute,
        "gpu_hours": "flops / (peak dense TFLOPS × 1e12 × mfu × 3600)"
        + (", or decode steps × (weights + KV bytes) / bandwidth if larger" if task == "inference" else ""),
        "wall_hours": "gpu_hours / gpus",
    }


def default_shape(params: float, kv_heads: int | None = None) -> ModelShape:
    """A standard shape for N parameters: N ≈ 12·L·d², d/L = 128, head_dim 128 (see the constants)."""
    _check_positive(params, "params")
    layers = max(1, round((params / (12 * ASPECT_RATIO**2)) ** (1 / 3)))
    hidden = HEAD_DIM * max(1, round(math.sqrt(params / (12 * layers)) / HEAD_DIM))
    heads = hidden // HEAD_DIM
    if kv_heads is not None and not 1 <= kv_heads <= heads:
        raise UsageError(f"kv_heads must be between 1 and {heads} for this model, got {kv_heads}")
    return ModelShape(layers, hidden, heads, kv_heads or heads, HEAD_DIM)


def kv_cache_bytes(
    shape: ModelShape, seq_len: int, batch: int, bytes_per_elem: float = KV_CACHE_BYTES
) -> float:
    """KV cache: 2·layers·kv_heads·head_dim·seq·batch·bytes (§2.5; the 2 is K and V)."""
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * seq_len * batch * bytes_per_elem


def lora_params(shape: ModelShape, rank: int = LORA_RANK) -> float:
    """Adapter parameters with rank ``rank`` on every linear layer: r·18·h per layer."""
    return LORA_PARAMS_PER_RANK_HIDDEN * rank * shape.hidden * shape.layers


def activation_bytes(task: str, shape: ModelShape, seq_len: int, batch: int) -> float:
    """Training activations (Korthikanti et al. 2022) plus the fp32 logits buffer; 0 for inference."""
    if task == "inference":
        return 0.0
    sbh = seq_len * batch * shape.hidden
    if ACTIVATION_MODE[task] == "selective":
        per_model = SELECTIVE_ACT_BYTES_PER_SBH * sbh * shape.layers
    else:
        per_model = CHECKPOINT_ACT_BYTES_PER_SBH * sbh * shape.layers + SELECTIVE_ACT_BYTES_PER_SBH * sbh
    return per_model + shape.vocab * seq_len * batch * LOGIT_BYTES


def memory_breakdown(
    task: str, params: float, precision: str, seq_len: int, batch: int, shape: ModelShape
) -> dict[str, float]:
    """Memory by component in GB for the whole job (all GPUs together)."""
    _check_task_precision(task, precision)
    if task in ("pretrain", "full"):
        w, g, o = ADAM_STATE_BYTES[precision]
        weights, grads, optim = params * w, params * g, params * o
    elif task in ("lora", "qlora"):
        adapters = lora_params(shape)
        w, g, o = LORA_STATE_BYTES
        weights = params * BYTES_PER_PARAM[precision] + adapters * w
        grads, optim = adapters * g, adapters * o
    else:
        weights, grads, optim = params * BYTES_PER_PARAM[precision], 0.0, 0.0
    kv = 0.0
    if task == "inference":
        kv = kv_cache_bytes(shape, seq_len, batch, 4 if precision == "fp32" else KV_CACHE_BYTES)
    acts = activation_bytes(task, shape, seq_len, batch)
    parts = {
        "weights": weights,
        "gradients": grads,
        "optimizer_states": optim,
        "activations": acts,
        "kv_cache": kv,
    }
    gb = {k: v / BYTES_PER_GB for k, v in parts.items()}
    if task == "inference":
        gb["overhead"] = INFERENCE_OVERHEAD_GB
    else:
        gb["overhead"] = TRAINING_OVERHEAD_FRACTION * sum(gb.values())
    return gb


def gpus_needed(memory_gb: float, gpu_memory_gb: float, usable_fraction: float = 1.0) -> int:
    """Fewest GPUs whose usable memory (``usable_fraction`` of each) holds ``memory_gb``, split evenly."""
    if gpu_memory_gb <= 0:
        raise UsageError(f"GPU memory must be positive, got {gpu_memory_gb}")
    return max(1, math.ceil(memory_gb / (gpu_memory_gb * usable_fraction) - 1e-9))


def gpu_class(gpu: GpuModel) -> str:
    """``"consumer"`` for GeForce cards (RTX 20xx-50xx), else ``"datacenter"`` (incl. workstation cards)."""
    family = gpu.family.upper().replace(" ", "")
    return "consumer" if _GEFORCE.fullmatch(family) else "datacenter"


_GEFORCE = re.compile(r"RTX[2-5]0[5-9]0(TI|D|SUPER)*")  # RTX 2080 Ti ... 5090 D; not RTX A6000 / 6000 Ada


def default_mfu(task: str, gpu: GpuModel) -> float:
    """The default MFU for a task on this GPU's class (see DEFAULT_MFU for the sources)."""
    _check_task(task)
    return DEFAULT_MFU[(task, gpu_class(gpu))]


def job_flops(task: str, params: float, tokens: float) -> float:
    """C ≈ 6·N·D for training, 2·N·D for inference (D = tokens processed or generated), §2.1."""
    _check_task(task)
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
) -> Estimate:
    """Estimate memory, GPUs and time for ``task`` on a model of ``params`` parameters.

    ``tokens`` is D: training tokens, or tokens generated for inference; without it there is no
    FLOP or time answer. Without ``gpu`` only the memory is answered. ``gpus`` (K) defaults to the
    fewest that hold the memory. ``shape`` overrides the shape derived from ``params``.
    """
    _check_task(task)
    _check_positive(params, "params")
    precision = (precision or DEFAULT_PRECISION[task]).lower()
    _check_task_precision(task, precision)
    seq_len = DEFAULT_SEQ_LEN if seq_len is None else _check_int(seq_len, "seq_len")
    batch = DEFAULT_BATCH if batch is None else _check_int(batch, "batch")
    if tokens is not None:
        _check_positive(tokens, "tokens")
    if gpus is not None:
        _check_int(gpus, "gpus")
    if mfu is not None and not 0 < mfu <= 1:
        raise UsageError(f"mfu must be in (0, 1], got {mfu}", "e.g. --mfu 0.4")
    if shape is None:
        shape = default_shape(params, kv_heads)
    elif kv_heads is not None:
        shape = replace(shape, kv_heads=kv_heads)
    breakdown = memory_breakdown(task, params, precision, seq_len, batch, shape)
    memory_gb = sum(breakdown.values())
    result = Estimate(task, params, tokens, precision, seq_len, batch, shape, memory_gb, breakdown)
    flops = job_flops(task, params, tokens) if tokens is not None else None
    if gpu is None:
        return replace(result, flops=flops, mfu=mfu)
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
    )
    fields.update(flops=flops, peak_tflops=peak)
    if flops is not None and peak is None:
        notes.append(f"the catalog has no dense TFLOPS figure for {gpu.name}: no time estimate")
    elif flops is not None and peak is not None:
        hours = gpu_hours_for(flops, peak, mfu)
        bound = "compute"
        bw_hours = _decode_gpu_hours(result, gpu)
        if bw_hours is not None and bw_hours > hours:
            hours, bound = bw_hours, "memory bandwidth"
            notes.append("decode is limited by memory bandwidth, not compute (§2.6)")
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


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise UsageError(f"unknown task {task!r}", f"choose one of {', '.join(TASKS)}")


def _check_task_precision(task: str, precision: str) -> None:
    _check_task(task)
    if precision not in PRECISIONS:
        raise UsageError(f"unknown precision {precision!r}", f"choose one of {', '.join(PRECISIONS)}")
    if precision not in TASK_PRECISIONS[task]:
        allowed = ", ".join(TASK_PRECISIONS[task])
        hint = f"{task} runs in {allowed}"
        if task == "qlora":
            hint += "; for an 8-bit or 16-bit base use --task lora"
        raise UsageError(f"task {task!r} cannot use precision {precision!r}", hint)


def _check_positive(value: float, name: str) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise UsageError(f"{name} must be a positive number, got {value!r}", "e.g. 7B or 2e12")


def _check_int(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a whole number of at least 1, got {value!r}")
    return value
