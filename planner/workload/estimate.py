"""Workload estimates: memory, the GPUs that hold it, FLOPs and GPU-hours for one training or inference job.

Pure functions over numbers, a catalog ``GpuModel`` and a catalog ``ModelSpec`` (``planner.workload.architectures``); no
I/O. The memory model is ``planner.workload.memory`` and decode speed ``planner.workload.inference``; this module adds
compute (§2.1 of ``shared/reference/workloads.md`` plus the attention term), the default MFU by GPU
generation, scale and task (calibrated in docs/calibration.md), and the ``Estimate`` record with
``explain`` (every number with its formula and inputs). The same formulas apply to every model: a
catalog model only supplies its published shape and parameter counts.

    >>> from planner.catalog import get_model
    >>> e = estimate(model="llama-2-7b", task="pretrain", tokens=2e12, seq_len=4096, gpu=get_model("A100-80GB"))
    >>> round(e.gpu_hours, -4)
    200000.0
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from planner.errors import QuantityError, UsageError
from planner.units import BYTES_PER_GB, MAX_GPUS, format_count
from planner.wording import Phrase
from planner.workload.architectures import ModelSpec, get_spec
from planner.workload.communication import step_time
from planner.workload.hf_config import looks_like_config, read_config
from planner.workload.inference import (
    ServingLayout,
    decode_step_seconds,
    decode_tokens_per_s,
    layout_for_count,
    prefill_tokens_per_s,
    serving_layout,
    weight_bytes_read,
)
from planner.workload.memory import (
    BYTES_PER_PARAM,
    DEFAULT_BATCH,
    DEFAULT_LOSS,
    DEFAULT_PRECISION,
    DEFAULT_SEQ_LEN,
    DEFAULT_ZERO_STAGE,
    LORA_RANK,
    LOSS_BYTES,
    TRAINING_OVERHEAD_FRACTION,
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
    replicated_gb,
)
from planner.workload.precision import has_fp8, has_precision, nearest_precision, refuse

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel

# Bounds on what a person can mean. Below 1M parameters the suffix was forgotten ("--params 7"); the
# largest published models are about 2T parameters and 36T tokens, so 100T and 1,000T leave room.
MIN_PARAMS = 1e6
MAX_PARAMS = 1e14
MAX_TOKENS = 1e15
MAX_SEQ_LEN = 10_000_000
MAX_BATCH = 100_000

# --- Compute (§2.1) ---
TRAIN_FLOPS_PER_PARAM_TOKEN = 6  # C ≈ 6·N·D (Kaplan; Chinchilla); MFU is defined on this count (PaLM)
INFERENCE_FLOPS_PER_PARAM_TOKEN = 2  # ≈ 2·N per generated token
# LoRA and QLoRA train adapters on frozen weights: the forward pass (2·N) and the gradients with respect
# to the activations (2·N) are computed, the weight gradients (2·N) are not (Hu et al. 2021 §4; NeMo
# AutoModel counts its LoRA "model TFLOPs" this way). The adapters themselves add ~0.1-1% and are left out.
ADAPTER_FLOPS_PER_PARAM_TOKEN = 4
FLOPS_PER_PARAM_TOKEN: dict[str, int] = {
    "pretrain": TRAIN_FLOPS_PER_PARAM_TOKEN,
    "full": TRAIN_FLOPS_PER_PARAM_TOKEN,
    "lora": ADAPTER_FLOPS_PER_PARAM_TOKEN,
    "qlora": ADAPTER_FLOPS_PER_PARAM_TOKEN,
    "inference": INFERENCE_FLOPS_PER_PARAM_TOKEN,
}
# Attention scores and values grow with the context: PaLM (Chowdhery et al. 2022, App. B) counts
# 6·N + 12·L·H·Q·T FLOPs per trained token (L layers, H·Q attention width, T sequence length), the
# convention its MFU is defined on; Megatron's 72·B·s·l·h²·(s/6h) term is the same. The forward pass
# alone is a third of it: 4·L·H·Q·T per generated token over a context of T.
TRAIN_ATTENTION_FLOPS = 12
INFERENCE_ATTENTION_FLOPS = 4

# --- Utilisation (MFU) by GPU generation, scale and task, calibrated on published runs ---
# docs/calibration.md lists the runs (LLaMA 1/2/3/3.1/3.2, BLOOM, MPT, StarCoder, Pythia, TinyLlama,
# DeepSeek LLM/V2/V3) and tests/workload/test_calibration.py recomputes it. MFU here is the throughput while
# training; restarts, evaluation and checkpointing come on top (DEFAULT_OVERHEAD).
# Each generation's pretraining MFU is a curve through (active parameters, MFU) anchors, linear in
# log(active parameters) between them and flat beyond the ends (``pretrain_mfu``): a step between
# scale bands made a 2.9B model cost more GPU-hours than a 3.0B one. Every slope is below the MFU itself,
# so N / MFU(N), and with it the GPU-hours at fixed tokens, never falls as N grows.
PRETRAIN_MFU_ANCHORS: dict[str, tuple[tuple[float, float], ...]] = {
    # A100/A800 runs show no trend with size: LLaMA 7-65B 0.46-0.55, Llama 2 0.43-0.46, MPT-7B 0.39,
    # StarCoder 0.33, BLOOM-176B 0.33, Pythia 0.28-0.38, TinyLlama 0.60 (hours-implied, overhead
    # included): 0.46 before the 10% overhead is the middle.
    "ampere": ((1e9, 0.46),),
    # H100/H800/H200: steady-state throughput, not model-card hours (issue 27). Megatron's published
    # H100 tables hold about 0.37-0.40 of the FP8 peak at every scale: NeMo 24.07 (DGX-H100, FP8) GPT3-5B
    # 770, Llama 2 7B 767, 13B 760, 70B 763 model TFLOP/s per GPU; Megatron-Bridge 25.09/25.11 Llama 3 8B
    # 725-744, 70B 719-728, 405B 737-763. At FP8_MFU_FACTOR's 1.4x FP8 gain that is 0.52-0.55 of the BF16
    # peak; NeMo AutoModel (PyTorch FSDP, BF16, H100) LoRA of Llama 3 8B and Qwen2.5 7B on one GPU ran at
    # 0.49-0.51 of peak on the 4·N count. So 0.50 from 5B to 70B. At 405B, BF16 on 8-16K H100s held 0.38-0.43
    # (Llama 3 paper, Table 4): 0.41. Below 5B no table: 0.40 at 1B (assumption: smaller GEMMs).
    # The Llama 3/3.1 8B model-card hours imply 0.21: they include far more than steady-state training
    # (shown, not calibrated on; docs/calibration.md); restarts and lost time are --overhead's.
    "hopper": ((1e9, 0.40), (5e9, 0.50), (70e9, 0.50), (405e9, 0.41)),
    # B200: Megatron-Bridge 25.11 DGX-B200 Llama 3 8B FP8 1,576 model TFLOP/s = 0.35 of its 4,500 FP8
    # peak, Hopper's share (0.38): Hopper's curve.
    "blackwell": ((1e9, 0.40), (5e9, 0.50), (70e9, 0.50), (405e9, 0.41)),
    # Assumptions, no published run: Ada data-centre cards (L40S, L20, L4) have no NVLink; V100/T4:
    # Megatron-LM (Shoeybi et al. 2019) sustained 30% of V100 peak on one GPU and 77% scaling
    # efficiency, about 0.25.
    "ada": ((1e9, 0.35),),
    "volta": ((1e9, 0.25),),
}
# GPU families by generation. The H20 keeps Hopper's memory and NVLink with 15% of its compute, so its
# kernels are not starved the way an H100's are: it takes the Ampere figures (assumption).
GENERATIONS: dict[str, tuple[str, ...]] = {
    "ampere": (
        "A100",
        "A800",
        "A10",
        "A30",
        "RTXA6000",
        "RTXA4000",
        "RTX3090",
        "RTX3080TI",
        "RTX3080",
        "H20",
    ),
    "hopper": ("H100", "H800", "H200"),
    "blackwell": ("B200", "RTX5090", "RTX5090D", "RTXPRO6000", "RTXPRO6000D"),
    "ada": ("L40S", "L40", "L20", "L4", "RTX4090", "RTX4090D", "RTX6000ADA"),
    "volta": ("V100", "T4", "P100", "P40", "P4", "RTX2080TI"),
}
# Fine-tuning and inference on A100-class GPUs. Fine-tuning on other generations scales by their
# pretraining curve over Ampere's at the same active parameters; inference is not scaled.
TASK_MFU: dict[tuple[str, str], float] = {
    ("pretrain", "consumer"): 0.30,  # assumption: PCIe-only scaling, below data-centre
    ("full", "datacenter"): 0.35,  # low end of §2.1's 0.35-0.45: smaller scale, less tuned than pretraining
    # LoRA on the 4·N count (ADAPTER_FLOPS_PER_PARAM_TOKEN): NeMo AutoModel's LoRA of Llama 3 8B and
    # Qwen2.5 7B on one H100 ran at 0.49-0.51 of peak; over Hopper's pretraining curve at 8B (0.50/0.46
    # of Ampere's) that is 0.45-0.47 on Ampere: 0.42, the lower end (their runs are tuned, packed, no padding).
    ("lora", "datacenter"): 0.42,
    # A measured QLoRA run of a 7B model on one A100 (issue 15) ran at 0.36 of peak on the 6·N count,
    # 0.24 on the 4·N count: the 4-bit weights are dequantised for every multiply.
    ("qlora", "datacenter"): 0.24,
    ("inference", "datacenter"): 0.30,  # assumption: prefill and large-batch decode; small batches are
    # bandwidth-bound (planner.workload.inference)
    ("inference", "consumer"): 0.20,  # assumption
}
# GeForce cards fine-tuning on one card: the data-centre figure × this (assumption, no published run:
# no communication on one card, smaller micro-batches in 24-32 GB). The old 0.15/0.10/0.08 had no source
# and made a 7B LoRA on a 4090 cost 7.6x an A100's GPU-hours; now 2.4x (312 × 0.42 / (165 × 0.34)).
# Across several GeForce cards the PCIe link is counted by planner.workload.communication.
CONSUMER_FINE_TUNING_FACTOR = 0.8
# MoE training by granularity (issue 27: one flat factor made fine-grained MoE too cheap). Per token and
# layer, expert parallelism moves top_k copies of the hidden state (all-to-all dispatch and combine) and
# runs top_k small expert GEMMs, against a compute of active parameters / layers: the MFU is divided by
# 1 + MOE_GRANULARITY_COST × top_k × hidden × layers / active parameters. The constant is fitted on
# DeepSeek-V2 (160 experts, top-6, 21B active) against the dense DeepSeek 67B on the same H800 cluster
# (DeepSeek-V2 paper §4: 172.8K against 300.6K H800 hours per trillion tokens, 0.74x with attention
# counted). It gives Mixtral 8x7B (top-2 of 8) 0.93, DeepSeek-V3 0.74, Qwen3-30B-A3B (top-8 of 128,
# 3.3B active) 0.52; NeMo AutoModel's BF16 H100 tables measure Qwen3-30B-A3B at 277 model TFLOP/s, 0.56
# of its dense 0.50 (docs/calibration.md).
MOE_GRANULARITY_COST = 3800.0
# FP8 training runs at the FP8 peak (2x BF16 on Hopper, Ada and Blackwell) with this share of the BF16
# MFU: only the GEMMs speed up. Measured, not assumed: NVIDIA's H100 FP8 tables hold 0.37-0.39 of the FP8
# peak from 5B to 405B (NeMo 24.07: 755-802 model TFLOP/s; Megatron-Bridge 25.11: 719-744), 0.75 of the
# BF16 steady state of 0.50 (a 1.5x gain); DeepSeek-V3 (FP8) ran 1.46x faster per active-parameter FLOP
# than DeepSeek-V2 (BF16) on the same H800s; Megatron-Bridge's DeepSeek-V3 on GB200 gained 1.28x
# (782 → 1,003 model TFLOP/s), on GB300 1.13x. 0.75, i.e. 1.5x.
FP8_MFU_FACTOR = 0.75
# FP8 peak = 2x the dense BF16 figure on every GPU with FP8 (gpu_specs.csv fp8_dense_tflops; GeForce
# included with FP32 accumulate). Which GPUs have FP8: planner.workload.precision.
FP8_PEAK_RATIO = 2.0
# Restarts, evaluation and checkpointing, as a share of the compute time. Published pretraining hours
# include them; Llama 3 (Dubey et al. 2024 §3.3.4) reports more than 90% effective training time over
# 54 days with 466 interruptions: 0.10. Fine-tuning and inference jobs are short: none (assumption).
DEFAULT_OVERHEAD: dict[str, float] = {
    "pretrain": 0.10,
    "full": 0.0,
    "lora": 0.0,
    "qlora": 0.0,
    "inference": 0.0,
}
MAX_OVERHEAD = 10.0  # --overhead 10 = 11x the compute time: beyond that it is a typo
# Fine-tuning steps wait for their collectives over the rental's links (planner.workload.communication);
# pretraining's calibrated utilisation already holds its cluster's communication.
COMMUNICATING_TASKS = ("full", "lora", "qlora")
# An MoE given by --params/--active-params without --experts-per-token: 8, the routed experts per token
# of DeepSeek-V3, Qwen3-MoE and Kimi-K2 (their config.json files), the common fine-grained choice.
ASSUMED_EXPERTS_PER_TOKEN = 8
MAX_NETWORK_GBPS = 10_000.0  # 10 Tbit/s per machine: beyond any cluster fabric


@dataclass(frozen=True)
class Estimate:
    """One workload estimate. GB are decimal (1e9 bytes), like GPU memory as marketed."""

    task: str
    params: float  # every parameter the weights hold (the total for MoE)
    tokens: float | None
    precision: str
    seq_len: int
    batch: int
    checkpointing: bool  # gradient checkpointing (only layer inputs kept); False for inference
    shape: ModelShape
    memory_gb: float
    breakdown: dict[str, float]  # component -> GB: weights, gradients, optimizer_states, activations,
    # kv_cache, overhead
    active_params: float = 0.0  # parameters one token computes with (= params for dense models)
    model: str | None = None  # catalog name, or None when the shape was derived from --params
    model_source: str | None = None
    experts: int | None = None
    experts_per_token: int | None = None  # routed experts each token uses (MoE)
    flops_per_token: float | None = (
        None  # 6·N_active (LoRA 4·N_active) + attention (training), 2·N_active + attention
    )
    attention_flops_per_token: float | None = None
    lora_rank: int | None = None
    optimizer_8bit: bool = False
    loss: str | None = None  # how the loss is computed (training): fused, chunked or plain
    pure_bf16: bool = False  # full training without an fp32 master copy (8 bytes per parameter)
    zero_stage: int = DEFAULT_ZERO_STAGE
    cpu_offload_gb: float = 0.0  # optimizer states and gradients held in CPU memory instead (--cpu-offload)
    overhead: float = 0.0  # restarts, evaluation, checkpointing as a share of compute time
    gpu: str | None = None
    gpu_memory_gb: float | None = None
    usable_memory_fraction: float | None = None  # share of each GPU's memory counted as usable
    gpus_needed: int | None = None  # None with a GPU: no count holds it (ZeRO stage below 3; see notes)
    gpus: int | None = None  # GPUs the time is computed on (the user's K, else gpus_needed)
    tensor_parallel: int | None = None  # inference: GPUs per pipeline stage (splitting the heads)
    pipeline_stages: int | None = None  # inference: consecutive groups of layers (1 = none)
    fits: bool | None = None  # whether `gpus` hold memory_gb
    per_gpu_gb: float | None = None  # memory on each of `gpus_needed` GPUs
    flops: float | None = None
    peak_tflops: float | None = None
    mfu: float | None = None
    mfu_source: str | None = None  # "given" or how the default was chosen
    gpu_hours: float | None = None
    wall_hours: float | None = None
    bound: str | None = (
        None  # "compute", "communication" (fine-tuning) or "memory bandwidth"/"latency" (decode)
    )
    gpus_per_machine: int | None = None  # GPUs each machine holds (default: up to 8)
    network_gbps: float | None = None  # Gbit/s between machines (default communication.DEFAULT_NETWORK_GBPS)
    link: str | None = None  # the links a fine-tuning step's collectives run over
    comm_slowdown: float | None = None  # step time over compute time (1 = communication hidden)
    tokens_per_gpu_s: float | None = None  # inference: generated tokens per second per GPU
    prefill_tokens_per_gpu_s: float | None = None  # inference: prompt tokens per second per GPU
    assumed: tuple[str, ...] = field(default_factory=tuple)  # what a bare parameter count made us assume
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_moe(self) -> bool:
        return bool(self.experts) or self.active_params < self.params

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus ``formulas``: each number with its formula and inputs (``explain``)."""
        data = asdict(self)
        data["notes"] = list(self.notes)
        data["assumed"] = list(self.assumed)
        data["formulas"] = explain(self)
        return data


def formulas(task: str, checkpointing: bool | None = None, loss: str | None = None) -> dict[str, str]:
    """The formula behind each number of an estimate for ``task``, in words (sources in planner.workload.memory)."""
    check_task(task)
    if task in ("pretrain", "full"):
        states = "weights + gradients + optimizer = 2 + 2 + 12 bytes per parameter (fp32: 4 + 4 + 8)"
    elif task == "inference":
        states = "weights = params × bytes per parameter of the precision"
    else:
        states = "frozen base × bytes per parameter + adapters (r·18·h per layer) × 16 bytes"
    logits = f"{LOSS_BYTES[loss]:g} ({loss} loss)" if loss else "8 (fp32 logits and log-softmax)"
    if task == "inference":
        acts = "in overhead"
    elif checkpointing_for(task, checkpointing):
        acts = f"2·seq·batch·hidden·layers + 34·seq·batch·hidden (checkpointing) + vocab·seq·batch·{logits}"
    else:
        acts = f"34·seq·batch·hidden·layers (selective recomputation) + vocab·seq·batch·{logits}"
    if task == "inference":
        compute = "(2·N_active + 4·layers·seq·attention width)·D"
        kv = (
            "2·layers·kv_heads·head_dim·seq·batch·2 bytes (MLA: layers·(kv_lora_rank + rope dim)·seq·batch·2)"
        )
    else:
        per = FLOPS_PER_PARAM_TOKEN[task]
        compute = f"({per}·N_active + 12·layers·seq·attention width)·D"
        kv = "none"
    return {
        "model_states": states,
        "activations": acts,
        "kv_cache": kv,
        "overhead": "1.5 GB" if task == "inference" else "10% of the rest",
        "gpus_needed": "ceil(memory_gb / (GPU memory × usable fraction))"
        + (
            ", rounded up to a serving split: tensor parallelism over 1, 2, 4 or 8 GPUs that divide the "
            "attention heads (KV heads divide, or are replicated over a multiple of them), then pipeline stages"
            if task == "inference"
            else ""
        ),
        "flops": compute,
        "gpu_hours": "flops / (peak dense TFLOPS × 1e12 × mfu × 3600) × (1 + overhead)"
        + (
            "; decode: tokens ÷ (batch ÷ step) with step = max((weights read + KV bytes) / (bandwidth × 0.8), "
            "batch FLOPs / (peak × mfu)) + 3 ms + 2 × layers × 40 µs on several GPUs"
            if task == "inference"
            else ""
        ),
        "wall_hours": "gpu_hours / gpus",
        **(
            {
                "communication": "fine-tuning on several GPUs: × max(1, collectives ÷ compute) per step "
                "(planner.workload.communication)"
            }
            if task in COMMUNICATING_TASKS
            else {}
        ),
    }


def explain(e: Estimate) -> dict[str, str]:
    """Each number of ``e`` as "formula = inputs = result", so every printed figure can be traced."""
    f = formulas(e.task, e.checkpointing, e.loss)
    s = e.shape
    b = e.breakdown
    if e.model:
        shape = f"{e.model} ({e.model_source})"
    else:
        shape = "N ≈ 12·layers·hidden², hidden/layers ≈ 128, head_dim 128"
    out = {
        "shape": f"{shape} → {s.layers} layers, hidden {s.hidden}, {s.heads} heads, {s.kv_heads} KV heads",
        "model_states": f"{f['model_states']} = {b['weights'] + b['gradients'] + b['optimizer_states']:.1f} GB",
        "activations": f"{f['activations']} = {b['activations']:.2f} GB",
        "kv_cache": f"{f['kv_cache']} = {b['kv_cache']:.2f} GB",
        "overhead": f"{f['overhead']} = {b['overhead']:.2f} GB",
        "memory_gb": f"sum of the above = {e.memory_gb:.1f} GB",
    }
    if e.gpus_needed is not None and e.gpu_memory_gb is not None and e.usable_memory_fraction is not None:
        held = gpus_needed(e.memory_gb, e.gpu_memory_gb, e.usable_memory_fraction)
        out["gpus_needed"] = (
            f"ceil({e.memory_gb:.1f} / ({e.gpu_memory_gb:g} × {e.usable_memory_fraction:g})) = {held}"
        )
        if e.task == "inference":
            layout = serving_layout(held, *_heads(e))
            if layout.gpus != held or layout.pipeline_stages > 1:
                out["gpus_needed"] += f" → {e.gpus_needed} ({layout.describe()})"
    if e.flops is not None and e.tokens is not None and e.flops_per_token is not None:
        per = FLOPS_PER_PARAM_TOKEN[e.task]
        out["flops"] = (
            f"{f['flops']} = ({per} × {e.active_params:.3g} + {e.attention_flops_per_token:.3g}) "
            f"× {e.tokens:.3g} = {e.flops:.3g}"
        )
    if e.gpu_hours is not None and e.peak_tflops is not None and e.flops is not None:
        compute = f"{e.flops:.3g} / ({e.peak_tflops:g}e12 × {e.mfu:g} × 3600) × {1 + e.overhead:g}"
        if e.task == "inference" and e.tokens_per_gpu_s:
            out["gpu_hours"] = (
                f"{e.tokens:.3g} tokens / {e.tokens_per_gpu_s:,.1f} tokens/s per GPU / 3600 = {e.gpu_hours:,.1f} "
                f"(decode step bound by {e.bound}; compute alone: {compute})"
            )
        else:
            out["gpu_hours"] = f"{compute} = {e.gpu_hours:,.1f}"
        if e.wall_hours is not None:  # None when no count of the GPU holds the job (a low ZeRO stage)
            out["wall_hours"] = f"{e.gpu_hours:,.1f} / {e.gpus} = {e.wall_hours:,.1f}"
    return out


def gpu_class(gpu: GpuModel) -> str:
    """``"consumer"`` for GeForce cards (RTX 20xx-50xx), else ``"datacenter"`` (incl. workstation cards)."""
    family = gpu.family.upper().replace(" ", "")
    return "consumer" if _GEFORCE.fullmatch(family) else "datacenter"


_GEFORCE = re.compile(r"RTX[2-5]0[5-9]0(TI|D|SUPER)*")  # RTX 2080 Ti ... 5090 D; not RTX A6000 / 6000 Ada


def generation(gpu: GpuModel) -> str:
    """The MFU generation of a GPU family (see GENERATIONS); unknown families count as Ampere."""
    family = gpu.family.upper().replace(" ", "")
    return next((g for g, families in GENERATIONS.items() if family in families), "ampere")


def pretrain_mfu(gen: str, active_params: float) -> float:
    """Pretraining MFU of generation ``gen`` at ``active_params``: linear in log(active parameters)
    between the PRETRAIN_MFU_ANCHORS, flat beyond the first and last anchor."""
    anchors = PRETRAIN_MFU_ANCHORS[gen]
    if active_params <= anchors[0][0]:
        return anchors[0][1]
    for (n0, m0), (n1, m1) in zip(anchors, anchors[1:], strict=False):
        if active_params <= n1:
            return m0 + (m1 - m0) * math.log(active_params / n0) / math.log(n1 / n0)
    return anchors[-1][1]


def moe_mfu_factor(hidden: int, layers: int, active_params: float, experts_per_token: int | None) -> float:
    """MoE training MFU over a dense model's at the same active parameters (MOE_GRANULARITY_COST): 1 for
    dense models, lower the more hidden states each token sends to experts per parameter it computes."""
    if not experts_per_token:
        return 1.0
    granularity = experts_per_token * hidden * layers / active_params
    return 1.0 / (1.0 + MOE_GRANULARITY_COST * granularity)


def default_mfu_and_source(
    task: str, gpu: GpuModel, active_params: float = 7e9, moe_factor: float = 1.0, precision: str = "bf16"
) -> tuple[float, str]:
    """The default MFU and a few words on how it was chosen (generation, scale, task, MoE, FP8)."""
    check_task(task)
    cls, gen = gpu_class(gpu), generation(gpu)
    scale = f"{format_count(active_params)} active parameters"
    if task == "pretrain" and cls == "datacenter":
        mfu, how = pretrain_mfu(gen, active_params), f"pretraining on {gen} GPUs at {scale}"
    elif task == "inference":
        # Serving runs on one tensor-parallel group, not a training cluster: no generation scaling.
        mfu, how = (
            TASK_MFU[(task, cls)],
            f"inference on {'consumer' if cls == 'consumer' else 'data-centre'} GPUs",
        )
    elif cls == "datacenter":
        ratio = pretrain_mfu(gen, active_params) / pretrain_mfu("ampere", active_params)
        mfu, how = TASK_MFU[(task, cls)] * ratio, f"{task} on {gen} data-centre GPUs at {scale}"
    elif task == "pretrain":
        mfu, how = TASK_MFU[(task, cls)], f"{task} on consumer GPUs"
    else:
        mfu = TASK_MFU[(task, "datacenter")] * CONSUMER_FINE_TUNING_FACTOR
        how = f"{task} on a consumer GPU ({CONSUMER_FINE_TUNING_FACTOR} × data-centre Ampere)"
    if moe_factor != 1.0 and task != "inference":
        mfu, how = mfu * moe_factor, how + f", × {moe_factor:.2f} for MoE granularity"
    if precision == "fp8" and task != "inference":
        mfu, how = mfu * FP8_MFU_FACTOR, how + f", × {FP8_MFU_FACTOR} at the FP8 peak"
    return round(mfu, 4), "default for " + how


def default_mfu(task: str, gpu: GpuModel, active_params: float = 7e9, moe_factor: float = 1.0) -> float:
    """The default MFU for a task on this GPU (see default_mfu_and_source)."""
    return default_mfu_and_source(task, gpu, active_params, moe_factor)[0]


def job_flops(task: str, params: float, tokens: float) -> float:
    """C ≈ 6·N·D for training (4·N·D for LoRA/QLoRA), 2·N·D for inference (D = tokens processed or generated), §2.1; without
    the attention term (``attention_flops_per_token``)."""
    check_task(task)
    per = FLOPS_PER_PARAM_TOKEN[task]
    return per * params * tokens


def attention_flops_per_token(task: str, shape: ModelShape, seq_len: int) -> float:
    """12·L·(H·Q)·T per trained token (PaLM App. B), 4·L·(H·Q)·T per generated token at context T."""
    per = INFERENCE_ATTENTION_FLOPS if task == "inference" else TRAIN_ATTENTION_FLOPS
    return per * shape.layers * shape.attention_dim * seq_len


def router_params(shape: ModelShape, experts: int | None) -> float:
    """An MoE router is a hidden × experts matrix per layer, computed for every token."""
    return shape.layers * shape.hidden * experts if experts else 0.0


def gpu_hours_for(flops: float, peak_tflops: float, mfu: float, overhead: float = 0.0) -> float:
    """GPU-hours = C / (peak · MFU · 3600) × (1 + overhead), §2.1."""
    return flops / (peak_tflops * 1e12 * mfu * 3600) * (1 + overhead)


def estimate(
    params: float | None = None,
    task: str = "",
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
    *,
    model: str | ModelSpec | None = None,
    lora_rank: int | None = None,
    optimizer_8bit: bool = False,
    zero_stage: int | None = None,
    cpu_offload: bool = False,
    overhead: float | None = None,
    gpus_per_machine: int | None = None,
    network_gbps: float | None = None,
    active_params: float | None = None,
    experts: int | None = None,
    experts_per_token: int | None = None,
    loss: str | None = None,
    pure_bf16: bool = False,
) -> Estimate:
    """Estimate memory, GPUs and time for ``task`` on a catalog ``model`` or a model of ``params``.

    ``model`` (a catalog name or ModelSpec) gives the real shape, the total parameters (memory) and the
    active ones (compute); ``params`` alone assumes a dense model of a standard shape (``assumed`` says
    what). ``tokens`` is D: training tokens, or tokens generated for inference; without it there is no
    FLOP or time answer. Without ``gpu`` only the memory is answered. ``gpus`` (K) defaults to the
    fewest that hold the memory. ``shape`` overrides the shape; ``checkpointing`` the task's default
    activation strategy (see planner.workload.memory). ``zero_stage`` (default 3) and ``cpu_offload`` change
    what each GPU must hold; ``overhead`` the restarts-and-evaluation share (DEFAULT_OVERHEAD).
    ``gpus_per_machine`` and ``network_gbps`` (Gbit/s per machine) say how the GPUs are linked, for the
    communication of a fine-tuning step (planner.workload.communication).
    """
    check_task(task)
    spec = _spec(model)
    if spec is not None and params is not None:
        raise UsageError(
            Phrase("give {model} or {params}, not both"),
            Phrase("{model} {name} knows its parameters", name=spec.name),
        )
    if spec is None and params is None:
        raise UsageError(
            "a model is needed", Phrase("e.g. {model} qwen2.5-7b, or {params} 7B for another model")
        )
    if spec is not None:
        params = spec.total_params
        if active_params is not None or experts is not None or experts_per_token is not None:
            raise UsageError(
                Phrase("{model} {name} knows its active parameters and experts", name=spec.name),
                Phrase("drop {active_params}, {experts} and {experts_per_token}"),
            )
    assert params is not None
    _check_range(params, "params", MIN_PARAMS, MAX_PARAMS, "7B or 6.7e9")
    if active_params is not None:
        _check_range(active_params, "active_params", MIN_PARAMS, params, "37B (at most the total)")
    if experts is not None:
        _check_range(check_int(experts, "experts"), "experts", 2, 4096, "256")
    if experts_per_token is not None:
        _check_range(
            check_int(experts_per_token, "experts_per_token"), "experts_per_token", 1, experts or 4096, "8"
        )
    substituted = None  # (default, what the GPU runs instead) when the GPU lacks the task's default
    if precision is None:
        precision = DEFAULT_PRECISION[task]
        if gpu is not None and not has_precision(gpu, precision):
            substituted = (precision, nearest_precision(gpu, precision, task))
            precision = substituted[1]
    precision = precision.lower()
    check_task_precision(task, precision)
    if gpu is not None and not has_precision(gpu, precision):
        raise refuse(gpu, precision, task)
    seq_len = DEFAULT_SEQ_LEN if seq_len is None else check_int(seq_len, "seq_len")
    batch = DEFAULT_BATCH if batch is None else check_int(batch, "batch")
    _check_range(seq_len, "seq_len", 1, MAX_SEQ_LEN, "4096")
    _check_range(batch, "batch", 1, MAX_BATCH, "8")
    if tokens is not None:
        _check_range(tokens, "tokens", 1, MAX_TOKENS, "2B or 1.4T")
    if gpus is not None:
        check_int(gpus, "gpus")
        _check_range(gpus, "gpus", 1, MAX_GPUS, "8")
    if gpus_per_machine is not None:
        _check_range(check_int(gpus_per_machine, "gpus_per_machine"), "gpus_per_machine", 1, 64, "8")
    if network_gbps is not None:
        _check_range(network_gbps, "network_gbps", 1, MAX_NETWORK_GBPS, "25")
    if mfu is not None and not (isinstance(mfu, int | float) and 0 < mfu <= 1):
        raise QuantityError("mfu", f"must be in (0, 1], got {mfu}", "0.4")
    if overhead is not None and not (isinstance(overhead, int | float) and 0 <= overhead <= MAX_OVERHEAD):
        raise QuantityError("overhead", f"must be from 0 to {MAX_OVERHEAD:g}, got {overhead}", "0.1")
    if lora_rank is not None:
        _check_range(check_int(lora_rank, "lora_rank"), "lora_rank", 1, 4096, "64")
        if task not in ("lora", "qlora"):
            raise UsageError(
                Phrase("{lora_rank} applies to {task} lora or qlora"),
                Phrase("e.g. {task} lora with {lora_rank} 64"),
            )
    zero_stage = DEFAULT_ZERO_STAGE if zero_stage is None else zero_stage
    replicated_gb({"weights": 0, "gradients": 0, "optimizer_states": 0}, zero_stage)  # checks the stage
    if (zero_stage != DEFAULT_ZERO_STAGE or cpu_offload or optimizer_8bit) and task == "inference":
        raise UsageError(
            "ZeRO, CPU offload and 8-bit optimizers are training options", "drop them for inference"
        )
    assumed: list[str] = []
    if shape is None and spec is not None:
        shape = spec.shape
    moe_given = spec is None and active_params is not None and active_params < params
    if spec is None and (experts is not None or experts_per_token is not None) and not moe_given:
        raise UsageError(
            Phrase("{experts} and {experts_per_token} describe an MoE: give {active_params} too"),
            Phrase("e.g. {params} 671B {active_params} 37B {experts} 256 {experts_per_token} 8"),
        )
    if shape is None and moe_given:
        assert active_params is not None
        shape = default_shape(active_params, kv_heads)
        assumed.append(
            Phrase(
                "an MoE of {n} parameters, {a} active per token, {k} experts a token"
                + ("" if experts_per_token else " (assumed: the common fine-grained choice)")
                + "; attention and layers shaped as a dense model of the active parameters (N ≈ 12·layers·hidden², "
                "hidden/layers = 128): {layers} layers, hidden {hidden}, {kv} KV heads of 128",
                n=format_count(params),
                a=format_count(active_params),
                k=experts_per_token or ASSUMED_EXPERTS_PER_TOKEN,
                layers=shape.layers,
                hidden=shape.hidden,
                kv=shape.kv_heads,
            )
        )
    elif shape is None:
        shape = default_shape(params, kv_heads)
        assumed.append(
            Phrase(
                "a dense model (not MoE) of {n} parameters shaped by N ≈ 12·layers·hidden² with hidden/layers "
                "= 128: {layers} layers, hidden {hidden}, {kv} KV heads of 128 ("
                + ("{kv_heads})" if kv_heads else "one per attention head, MHA)")
                + "; for an MoE give {active_params}",
                n=format_count(params),
                layers=shape.layers,
                hidden=shape.hidden,
                kv=shape.kv_heads,
            )
        )
    elif kv_heads is not None:
        if not 1 <= kv_heads <= shape.heads:
            raise QuantityError("kv_heads", f"must be from 1 to {shape.heads}, got {kv_heads}", "8")
        shape = replace(shape, kv_heads=kv_heads, kv_lora_rank=None, qk_rope_head_dim=0)
    active = spec.active_params if spec is not None else (active_params if moe_given else params)
    assert active is not None
    top_k = spec.experts_per_token if spec is not None else None
    if spec is not None:
        experts = spec.experts
    elif moe_given:
        top_k = experts_per_token or ASSUMED_EXPERTS_PER_TOKEN
    compute_params = active + router_params(shape, experts)
    checkpointing = checkpointing_for(task, checkpointing)
    if loss is not None:
        if loss not in LOSS_BYTES:
            raise UsageError(f"unknown loss {loss!r}", Phrase("{loss} fused, chunked or plain"))
        if task == "inference":
            raise UsageError(Phrase("{loss} is a training option"), "drop it for inference")
    if pure_bf16 and (task not in ("pretrain", "full") or precision != "bf16"):
        raise UsageError(
            Phrase("{pure_bf16} is full training in bf16 without an fp32 master copy"),
            Phrase("use it with {task} full or pretrain and {precision} bf16"),
        )
    breakdown = memory_breakdown(
        task, params, precision, seq_len, batch, shape, checkpointing, lora_rank, optimizer_8bit, loss,
        pure_bf16,
    )  # fmt: skip
    offloaded = 0.0
    if cpu_offload:
        # ZeRO-Offload as DeepSpeed defines it (Ren et al. 2021 §4; DeepSpeed's offload_optimizer): the
        # 16-bit gradients go to CPU memory as they are made, and the fp32 master weights, Adam states and
        # the update live there; only the 16-bit weights (and activations) stay on the GPU (issue 27: only the
        # optimizer states moved before).
        offloaded = breakdown["optimizer_states"] + breakdown["gradients"]
        breakdown = {**breakdown, "optimizer_states": 0.0, "gradients": 0.0}
        breakdown["overhead"] = TRAINING_OVERHEAD_FRACTION * sum(
            v for k, v in breakdown.items() if k != "overhead"
        )
    memory_gb = sum(breakdown.values())
    per_token = FLOPS_PER_PARAM_TOKEN[task] * compute_params
    attention = attention_flops_per_token(task, shape, seq_len)
    result = Estimate(
        task, params, tokens, precision, seq_len, batch, checkpointing, shape, memory_gb, breakdown,
        active_params=active,
        model=spec.name if spec else None,
        model_source=spec.source if spec else None,
        experts=experts,
        experts_per_token=top_k,
        flops_per_token=per_token + attention,
        attention_flops_per_token=attention,
        lora_rank=(lora_rank or LORA_RANK) if task in ("lora", "qlora") else None,
        optimizer_8bit=optimizer_8bit,
        loss=loss or (DEFAULT_LOSS if task in ("full", "lora", "qlora") else None),
        pure_bf16=pure_bf16,
        zero_stage=zero_stage,
        cpu_offload_gb=offloaded,
        overhead=DEFAULT_OVERHEAD[task] if overhead is None else float(overhead),
        gpus_per_machine=gpus_per_machine,
        network_gbps=float(network_gbps) if network_gbps is not None else None,
        assumed=tuple(assumed),
    )  # fmt: skip
    flops = (per_token + attention) * tokens if tokens is not None else None
    notes = _workload_notes(result, spec)
    if substituted is not None and gpu is not None:
        notes += (
            f"{gpu.name} has no {substituted[0].upper()}: it runs {substituted[1].upper()} (the same memory)",
        )
    if gpu is None:
        return replace(
            result, flops=flops, mfu=mfu, mfu_source="given" if mfu is not None else None, notes=notes
        )
    return _on_gpu(replace(result, notes=notes), gpu, gpus, flops, mfu)


def _spec(model: str | ModelSpec | None) -> ModelSpec | None:
    if model is None or isinstance(model, ModelSpec):
        return model
    if looks_like_config(model):
        return read_config(model)
    return get_spec(model)


def _workload_notes(e: Estimate, spec: ModelSpec | None) -> tuple[str, ...]:
    notes = []
    if spec is not None and spec.is_moe:
        notes.append(
            f"MoE: memory holds all {format_count(e.params)} parameters, compute uses "
            f"{format_count(e.active_params)} active ({spec.experts_per_token} of {spec.experts} experts) plus "
            "the router; across several GPUs the experts are split by expert parallelism"
        )
    if spec is not None and e.seq_len > spec.context:
        notes.append(
            Phrase(
                "{seq_len} {n} is longer than {name}'s context of {context}",
                n=e.seq_len,
                name=spec.name,
                context=spec.context,
            )
        )
    if e.shape.kv_lora_rank:
        notes.append(
            f"MLA: the KV cache holds one {e.shape.kv_lora_rank + e.shape.qk_rope_head_dim}-wide latent per "
            "layer and token instead of full keys and values"
        )
    return tuple(notes)


def _on_gpu(
    result: Estimate, gpu: GpuModel, gpus: int | None, flops: float | None, mfu: float | None
) -> Estimate:
    usable = USABLE_MEMORY_FRACTION[result.task]
    notes: list[str] = list(result.notes)
    needed: int | None
    raw: int | None = None  # inference: the GPUs that hold it before rounding to a serving layout
    layout: ServingLayout | None = None
    if result.task == "inference":
        raw = gpus_needed(result.memory_gb, gpu.memory_gb, usable)
        layout = serving_layout(raw, *_heads(result))
        needed = layout.gpus
        _serving_notes(result, raw, layout, notes)
        if gpus is not None:
            layout = layout_for_count(gpus, *_heads(result))
            if layout is not None and layout.pipeline_stages > result.shape.layers:
                # More stages than layers leaves GPUs with nothing to hold: a count nobody can mean.
                most = layout.tensor_parallel * result.shape.layers
                raise QuantityError(
                    "gpus",
                    f"{gpus:,} is more than one copy of the model can use: "
                    f"{result.shape.layers} layers, at most {layout.tensor_parallel} × {result.shape.layers} = {most:,}",
                    str(needed),
                )
            if layout is None:
                notes.append(
                    f"tensor parallelism cannot split a model over {gpus} GPUs (1, 2, 4, 8, then multiples of 8)"
                )
            elif layout.pipeline_stages > 1 and result.model:
                notes.append(f"{gpus} GPUs serve {result.model} as {layout.describe()}")
    else:
        needed = _training_gpus(result, gpu, usable, notes)
    k = gpus or needed
    if needed is None:
        pass  # no count holds it (a note says why)
    elif k is not None and k < (raw or needed):
        notes.append(f"{k} × {gpu.name} cannot hold {result.memory_gb:.1f} GB; at least {needed} are needed")
    fp8 = result.precision == "fp8"  # estimate() refused FP8 on a GPU without it
    if mfu is not None:
        source = "given"
    else:
        mfu, source = default_mfu_and_source(
            result.task, gpu, result.active_params, _moe_factor(result), result.precision
        )
    if result.precision == "fp32":
        peak = gpu.fp32_tflops
    elif fp8 and has_fp8(gpu) and gpu.dense_tflops is not None:
        peak = gpu.dense_tflops * FP8_PEAK_RATIO
    else:
        peak = gpu.dense_tflops
    fields: dict[str, Any] = dict(
        gpu=gpu.name,
        gpu_memory_gb=gpu.memory_gb,
        usable_memory_fraction=usable,
        gpus_needed=needed,
        gpus=k,
        fits=needed is not None
        and k is not None
        and k >= (raw or needed)
        and (result.task != "inference" or layout is not None),
        tensor_parallel=layout.tensor_parallel if layout else None,
        pipeline_stages=layout.pipeline_stages if layout else None,
        per_gpu_gb=_per_gpu_gb(result, needed) if needed else None,
        mfu=mfu,
        mfu_source=source,
    )
    fields.update(flops=flops, peak_tflops=peak)
    if peak is not None and result.task == "inference" and gpu.bandwidth_gbps:
        tps, bound = _decode_rate(result, gpu, peak, mfu, k or 1, layout.pipeline_stages if layout else 1)
        fields.update(
            tokens_per_gpu_s=tps,
            prefill_tokens_per_gpu_s=prefill_tokens_per_s(result.flops_per_token or 1.0, peak, mfu),
            bound=bound,
        )
    if flops is not None and peak is None:
        notes.append(f"the catalog has no dense TFLOPS figure for {gpu.name}: no time estimate")
    elif flops is not None and peak is not None and result.tokens is not None:
        if fields.get("tokens_per_gpu_s"):
            hours = result.tokens / fields["tokens_per_gpu_s"] / 3600 * (1 + result.overhead)
            if fields["bound"] == "memory bandwidth":
                notes.append(
                    Phrase("decode is limited by memory bandwidth, not compute (§2.6): raise {batch}")
                )
            elif fields["bound"] == "latency":
                notes.append(
                    Phrase("decode is limited by per-step latency, not bandwidth or compute: raise {batch}")
                )
        else:
            hours = gpu_hours_for(flops, peak, mfu, result.overhead)
            fields["bound"] = "compute"
            if result.task in COMMUNICATING_TASKS and k and k > 1 and result.flops_per_token:
                step = step_time(
                    result.task, result.params, result.zero_stage, result.flops_per_token,
                    result.seq_len * result.batch, peak, mfu, gpu, k, result.gpus_per_machine,
                    result.network_gbps, sharded=needed is None or needed > 1,
                )  # fmt: skip
                fields.update(link=step.link, comm_slowdown=step.slowdown)
                if step.slowdown > 1:
                    hours *= step.slowdown
                    fields["bound"] = "communication"
                    notes.append(
                        Phrase(
                            "communication-bound: each step moves weights for {comm:.2f} s against {compute:.2f} s "
                            "of compute over {link}, so it takes {slow:.1f}x its compute"
                            + (
                                "; on a provider's RDMA cluster give its speed with {network_gbps}"
                                if "network" in step.link
                                else ""
                            ),
                            comm=step.comm_s,
                            compute=step.compute_s,
                            link=step.link,
                            slow=step.slowdown,
                        )
                    )
        fields.update(gpu_hours=hours, wall_hours=hours / k if k else None)
    return replace(result, notes=tuple(notes), **fields)


def _moe_factor(result: Estimate) -> float:
    return moe_mfu_factor(
        result.shape.hidden, result.shape.layers, result.active_params, result.experts_per_token
    )


def _heads(result: Estimate) -> tuple[int | None, int | None]:
    """(attention heads, KV heads) a serving split must divide: a catalog model's; none for --params,
    whose heads are assumed to split over 1, 2, 4, 8 or a multiple of 8 GPUs."""
    if result.model is None:
        return None, None
    return result.shape.heads, result.shape.kv_heads


def _serving_notes(result: Estimate, raw: int, layout: ServingLayout, notes: list[str]) -> None:
    """Say how a model is split for serving when the count is not simply the GPUs that hold it."""
    if result.model is None:
        if layout.gpus != raw:
            notes.append(
                Phrase(
                    "{raw} GPUs would hold it, but tensor parallelism splits a model over 1, 2, 4, 8 or a "
                    "multiple of 8 GPUs: {gpus} (assumed: its heads divide evenly; giving {model} checks them)",
                    raw=raw,
                    gpus=layout.gpus,
                )
            )
        return
    heads, kv_heads = result.shape.heads, result.shape.kv_heads
    if layout.pipeline_stages > 1:
        notes.append(
            f"{raw} GPUs would hold it; {result.model}'s {heads} attention heads ({kv_heads} KV heads) split "
            f"evenly over at most {layout.tensor_parallel} GPUs, so it needs pipeline parallelism: "
            f"{layout.describe()} = {layout.gpus} GPUs"
        )
    elif layout.gpus != raw:
        notes.append(
            f"{raw} GPUs would hold it, but tensor parallelism needs a count that splits {result.model}'s "
            f"{heads} attention heads ({kv_heads} KV heads) evenly: {layout.gpus}"
        )


def _per_gpu_gb(result: Estimate, gpus: int) -> float:
    """Memory on each of ``gpus`` GPUs: an even split, plus what a ZeRO stage below 3 keeps whole."""
    if result.task == "inference" or result.zero_stage == DEFAULT_ZERO_STAGE:
        return result.memory_gb / gpus
    whole = replicated_gb(result.breakdown, result.zero_stage)
    return whole + (result.memory_gb - whole) / gpus


def _training_gpus(result: Estimate, gpu: GpuModel, usable: float, notes: list[str]) -> int | None:
    """Fewest GPUs that hold a training job: everything split evenly at ZeRO-3; at a lower stage the
    unsharded model states sit whole on every GPU and only the rest is split."""
    if result.zero_stage == DEFAULT_ZERO_STAGE:
        return gpus_needed(result.memory_gb, gpu.memory_gb, usable)
    whole = replicated_gb(result.breakdown, result.zero_stage)
    room = gpu.memory_gb * usable - whole
    if room <= 0:
        notes.append(
            Phrase(
                "with ZeRO stage {stage} every GPU holds {whole:.1f} GB of model states, more than a {gpu} has: "
                "use {zero_stage} 3 or {cpu_offload}",
                stage=result.zero_stage,
                whole=whole,
                gpu=gpu.name,
            )
        )
        return None
    return max(1, math.ceil((result.memory_gb - whole) / room - 1e-9))


def _decode_rate(
    result: Estimate, gpu: GpuModel, peak: float, mfu: float, gpus: int, stages: int
) -> tuple[float, str]:
    """Generated tokens per second per GPU, and what bounds it (planner.workload.inference). KV at full context."""
    bytes_per_param = BYTES_PER_PARAM[result.precision]
    weights = weight_bytes_read(result.params, result.active_params, result.batch, bytes_per_param)
    kv = result.breakdown["kv_cache"] * BYTES_PER_GB
    assert gpu.bandwidth_gbps is not None and result.flops_per_token is not None
    args = (
        weights,
        kv,
        result.batch,
        result.flops_per_token,
        gpu.bandwidth_gbps,
        peak,
        mfu,
        gpus,
        result.shape.layers,
        stages,
    )
    _, bound = decode_step_seconds(*args)
    return decode_tokens_per_s(*args), bound


def _check_range(value: float, quantity: str, low: float, high: float, example: str) -> None:
    check_positive(value, quantity, example)
    if value < low:
        suffix = "; a suffix is needed for large counts" if quantity == "params" else ""
        raise QuantityError(
            quantity, f"{format_count(value)} is less than {format_count(low)}", example + suffix
        )
    if value > high:
        raise QuantityError(quantity, f"{format_count(value)} is more than {format_count(high)}", example)
