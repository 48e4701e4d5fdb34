"""The memory a training or inference job needs, by component, and the fewest GPUs that hold it.

Pure functions over numbers; no I/O. Every formula and default names its source in
``shared/reference/workloads.md`` (the "§" numbers) or says it is our assumption. The user gives only the
parameter count N, so the transformer's shape is derived from N by one rule (``default_shape``); the same
formulas apply to every input, with no special cases for named models.

    >>> round(memory_breakdown("inference", 7e9, "bf16", 2048, 1, default_shape(7e9))["weights"], 1)
    14.0
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass

from planner.errors import QuantityError, UnknownNameError, UsageError
from planner.units import BYTES_PER_GB
from planner.wording import Phrase

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
# Precisions each task can run in. Full training keeps 16-bit or fp32 master weights (ZeRO §3.1); fp8
# training (Transformer Engine, DeepSeek-V3) runs the matrix multiplies in FP8 but keeps bf16 weights and
# fp32 master weights and moments, so its memory is counted as bf16's;
# QLoRA is 4-bit by definition (an 8-bit base is --task lora --precision int8).
TASK_PRECISIONS: dict[str, tuple[str, ...]] = {
    "pretrain": ("bf16", "fp16", "fp32", "fp8"),
    "full": ("bf16", "fp16", "fp32", "fp8"),
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
    "fp8": (2.0, 2.0, 12.0),  # see TASK_PRECISIONS: FP8 compute, bf16/fp32 storage
}
# 8-bit Adam (bitsandbytes, Dettmers et al. 2022): momentum and variance in 1 byte each; the fp32
# master copy (4 bytes) stays, so 12 -> 6 bytes per trained parameter.
OPTIMIZER_8BIT_BYTES = 6.0

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
# Full recomputation (gradient checkpointing): only each layer's input, 2·s·b·h, plus one layer's full
# 34·s·b·h while it is recomputed.
CHECKPOINT_ACT_BYTES_PER_SBH = 2
# Logits, vocab × seq × batch × 8 bytes: §2.3 says reserve 2-4 bytes for the logits themselves, but the
# common training code (Hugging Face's causal-LM heads) upcasts them to fp32 for the loss and the fp32
# log-softmax of the cross-entropy is kept for the backward pass, so two fp32 copies live until then.
# With a 128K vocabulary this is the largest activation at long context (issue 15: long-context
# fine-tuning memory was ~25% low with 4 bytes).
LOGIT_BYTES = 8
# Issue 27: at large vocabularies the loss dominates long-context fine-tuning memory, and how much depends
# on how it is computed (bytes per vocabulary entry and token):
# - "plain" (Hugging Face Trainer, LLaMA-Factory and PEFT by default): the bf16 logits (2), their fp32
#   upcast (4), the fp32 log-softmax kept for the backward pass (4) and its gradient (4): 14;
# - "chunked" (torchtune, Unsloth: the loss over slices of the sequence): the bf16 logits and their
#   gradient for the whole sequence, fp32 only a slice at a time: 4 (assumption);
# - "fused" (Liger's fused linear cross-entropy): the logits are never materialised whole: 0.
LOSS_BYTES: dict[str, float] = {"plain": 14.0, "chunked": 4.0, "fused": 0.0}
DEFAULT_LOSS = "plain"  # what the common trainers do
# Pure-bf16 training (no fp32 master copy): bf16 weights 2 + gradients 2 + Adam moments in bf16 2 + 2 = 8
# bytes per parameter (issue 27), against mixed precision's 16.
PURE_BF16_STATE_BYTES = (2.0, 2.0, 4.0)
# Gradient checkpointing by default for fine-tuning: QLoRA trains with it (§2.4), and it is how a 7B
# model is fine-tuned on one 24 GB card in practice (assumption: the common fine-tuning recipes turn
# it on). Pretraining keeps Megatron's selective recomputation (Korthikanti et al.), which is faster.
# --checkpointing / --no-checkpointing overrides.
DEFAULT_CHECKPOINTING: dict[str, bool] = {"pretrain": False, "full": True, "lora": True, "qlora": True}

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


@dataclass(frozen=True)
class ModelShape:
    """Transformer shape used for activations and the KV cache."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int = VOCAB_SIZE
    # Multi-head latent attention (DeepSeek-V2/V3): the cache holds a compressed latent of kv_lora_rank
    # plus the decoupled RoPE key of qk_rope_head_dim per layer and token, shared by all heads.
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int = 0

    @property
    def attention_dim(self) -> int:
        """Width the attention scores and values are computed in: heads × head_dim. MLA's query/key
        heads are head_dim + qk_rope_head_dim wide and its values head_dim, so half the RoPE part is
        added (the mean of the QK and AV widths)."""
        return self.heads * (self.head_dim + self.qk_rope_head_dim // 2)


def default_shape(params: float, kv_heads: int | None = None) -> ModelShape:
    """A standard shape for N parameters: N ≈ 12·L·d², d/L = 128, head_dim 128 (see the constants)."""
    check_positive(params, "params")
    layers = max(1, round((params / (12 * ASPECT_RATIO**2)) ** (1 / 3)))
    hidden = HEAD_DIM * max(1, round(math.sqrt(params / (12 * layers)) / HEAD_DIM))
    heads = hidden // HEAD_DIM
    if kv_heads is not None and not 1 <= kv_heads <= heads:
        raise QuantityError(
            "kv_heads",
            f"must be from 1 to {heads} (the attention heads) for this model, got {kv_heads}",
            "8 for grouped-query attention",
        )
    return ModelShape(layers, hidden, heads, kv_heads or heads, HEAD_DIM)


def kv_cache_bytes(
    shape: ModelShape, seq_len: int, batch: int, bytes_per_elem: float = KV_CACHE_BYTES
) -> float:
    """KV cache: 2·layers·kv_heads·head_dim·seq·batch·bytes (§2.5; the 2 is K and V); for MLA
    layers·(kv_lora_rank + qk_rope_head_dim)·seq·batch·bytes (DeepSeek-V2 §2.1: one latent per token)."""
    if shape.kv_lora_rank:
        return shape.layers * (shape.kv_lora_rank + shape.qk_rope_head_dim) * seq_len * batch * bytes_per_elem
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * seq_len * batch * bytes_per_elem


def lora_params(shape: ModelShape, rank: int | None = None) -> float:
    """Adapter parameters with rank ``rank`` on every linear layer: r·18·h per layer."""
    return LORA_PARAMS_PER_RANK_HIDDEN * (rank or LORA_RANK) * shape.hidden * shape.layers


def checkpointing_for(task: str, checkpointing: bool | None) -> bool:
    """Whether ``task`` keeps only layer inputs (gradient checkpointing); None means the task's default."""
    check_task(task)
    if task == "inference":
        return False
    return DEFAULT_CHECKPOINTING[task] if checkpointing is None else checkpointing


def activation_bytes(
    task: str,
    shape: ModelShape,
    seq_len: int,
    batch: int,
    checkpointing: bool | None = None,
    loss: str | None = None,
) -> float:
    """Training activations (Korthikanti et al. 2022) plus the logits and loss (LOSS_BYTES: plain by
    default for fine-tuning; pretraining keeps LOGIT_BYTES, Megatron's fused fp32 cross-entropy); 0 for
    inference."""
    if task == "inference":
        return 0.0
    sbh = seq_len * batch * shape.hidden
    if checkpointing_for(task, checkpointing):
        per_model = CHECKPOINT_ACT_BYTES_PER_SBH * sbh * shape.layers + SELECTIVE_ACT_BYTES_PER_SBH * sbh
    else:
        per_model = SELECTIVE_ACT_BYTES_PER_SBH * sbh * shape.layers
    if loss is not None:
        per_token = LOSS_BYTES[loss]
    else:
        per_token = LOGIT_BYTES if task == "pretrain" else LOSS_BYTES[DEFAULT_LOSS]
    return per_model + shape.vocab * seq_len * batch * per_token


def memory_breakdown(
    task: str,
    params: float,
    precision: str,
    seq_len: int,
    batch: int,
    shape: ModelShape,
    checkpointing: bool | None = None,
    lora_rank: int | None = None,
    optimizer_8bit: bool = False,
    loss: str | None = None,
    pure_bf16: bool = False,
) -> dict[str, float]:
    """Memory by component in GB for the whole job (all GPUs together). ``params`` is every parameter
    the weights hold (the total for MoE models)."""
    check_task_precision(task, precision)
    if task in ("pretrain", "full"):
        w, g, o = PURE_BF16_STATE_BYTES if pure_bf16 else ADAM_STATE_BYTES[precision]
        if optimizer_8bit:
            o = OPTIMIZER_8BIT_BYTES if precision != "fp32" else o - 6.0
        weights, grads, optim = params * w, params * g, params * o
    elif task in ("lora", "qlora"):
        adapters = lora_params(shape, lora_rank)
        w, g, o = LORA_STATE_BYTES
        if optimizer_8bit:
            o = OPTIMIZER_8BIT_BYTES
        weights = params * BYTES_PER_PARAM[precision] + adapters * w
        grads, optim = adapters * g, adapters * o
    else:
        weights, grads, optim = params * BYTES_PER_PARAM[precision], 0.0, 0.0
    kv = 0.0
    if task == "inference":
        kv = kv_cache_bytes(shape, seq_len, batch, 4 if precision == "fp32" else KV_CACHE_BYTES)
    acts = activation_bytes(task, shape, seq_len, batch, checkpointing, loss)
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


ZERO_STAGES = (0, 1, 2, 3)
DEFAULT_ZERO_STAGE = 3  # model states split over every GPU (ZeRO-3 / FSDP), as the totals assume


def replicated_gb(breakdown: dict[str, float], zero_stage: int) -> float:
    """Per-GPU GB that ZeRO stage ``zero_stage`` keeps whole on every GPU (ZeRO §5: stage 1 shards the
    optimizer states, 2 also the gradients, 3 also the weights; stage 0 is plain data parallelism)."""
    if zero_stage not in ZERO_STAGES:
        raise QuantityError("zero_stage", f"must be 0, 1, 2 or 3, got {zero_stage}", "2")
    kept = ("weights", "gradients", "optimizer_states")[: 3 - zero_stage]
    return sum(breakdown[k] for k in kept) * (1 + TRAINING_OVERHEAD_FRACTION)


def gpus_needed(memory_gb: float, gpu_memory_gb: float, usable_fraction: float = 1.0) -> int:
    """Fewest GPUs whose usable memory (``usable_fraction`` of each) holds ``memory_gb``, split evenly."""
    if gpu_memory_gb <= 0:
        raise UsageError(f"GPU memory must be positive, got {gpu_memory_gb}")
    return max(1, math.ceil(memory_gb / (gpu_memory_gb * usable_fraction) - 1e-9))


def check_task(task: str) -> None:
    """Raise UnknownNameError with near names unless ``task`` is one of TASKS."""
    if task not in TASKS:
        raise UnknownNameError("task", task, _near(task, TASKS))


def check_task_precision(task: str, precision: str) -> None:
    """Raise a UsageError unless ``precision`` is known and ``task`` can run in it."""
    check_task(task)
    if precision not in PRECISIONS:
        raise UnknownNameError("precision", precision, _near(precision, PRECISIONS))
    if precision not in TASK_PRECISIONS[task]:
        allowed = ", ".join(TASK_PRECISIONS[task])
        hint = f"{task} runs in {allowed}"
        if task == "qlora":
            hint = Phrase("{runs}; for an 8-bit or 16-bit base use {task} lora", runs=hint)
        raise UsageError(f"task {task!r} cannot use precision {precision!r}", hint)


def check_positive(value: float, quantity: str, example: str = "7B or 2e12") -> None:
    """A finite number above zero; ``example`` is a good value of ``quantity`` for the hint."""
    if isinstance(value, bool) or not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise QuantityError(quantity, f"must be a positive number, got {value!r}", example)


def check_int(value: int, quantity: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise QuantityError(quantity, f"must be a whole number of at least 1, got {value!r}")
    return value


def _near(name: str, choices: tuple[str, ...]) -> list[str]:
    return difflib.get_close_matches(str(name).lower(), choices, n=3, cutoff=0.5) or list(choices)
