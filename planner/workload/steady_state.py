"""Published steady-state training throughput (tokens per second per GPU) the default utilisation is
checked against: pretraining, MoE and LoRA on Hopper, from NVIDIA's performance tables (docs/calibration.md).

Unlike the model-card GPU-hours of ``planner.workload.calibration.RUNS``, these are measured over a few
hundred steps with synthetic data: no restarts, evaluation or lost time, so each case is estimated with
``overhead=0``. The ratio is estimated GPU-hours ÷ published GPU-hours for the same tokens, i.e. the
published tokens/s ÷ the estimated tokens/s.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from planner.catalog import get_model
from planner.workload.estimate import estimate

# NeMo 24.07 performance summary, DGX-H100, FP8 (the NVIDIA/NeMo repository's performance summary page).
NEMO_2407 = "NeMo 24.07 perf. summary, DGX-H100"
# Megatron-Bridge 25.11 performance summary, DGX-H100 (NVIDIA-NeMo/Megatron-Bridge, its performance summary page).
MBRIDGE_2511 = "Megatron-Bridge 25.11 perf. summary, DGX-H100"
# NeMo AutoModel performance summary (2025-10-02), DGX-H100, BF16, PyTorch FSDP (its performance summary page).
AUTOMODEL = "NeMo AutoModel perf. summary (2025-10), DGX-H100"
TOKENS = 1e9  # any amount: the ratio does not depend on it


@dataclass(frozen=True)
class ThroughputCase:
    """A published steady-state throughput: tokens/s per GPU for ``task`` on ``gpus`` × ``gpu``."""

    label: str
    model: str
    task: str
    seq_len: int
    gpus: int
    precision: str
    published_tokens_per_gpu_s: float
    source: str
    gpu: str = "H100-80GB"
    not_calibrated: str = ""  # why it is shown but not held to the bounds; "" = calibrated


TP_PP_LORA = (
    "a 70B LoRA split by tensor (2) and pipeline (4, interleaved 10) parallelism, which the estimate does "
    "not model (it assumes ZeRO-3/FSDP data parallelism); the 7-8B runs on one GPU and the 32B on 8 are "
    "within the bounds"
)

THROUGHPUT: tuple[ThroughputCase, ...] = (
    ThroughputCase("Llama 2 7B pretrain", "llama-2-7b", "pretrain", 4096, 8, "fp8", 16_634, NEMO_2407),
    ThroughputCase("Llama 2 13B pretrain", "llama-2-13b", "pretrain", 4096, 16, "fp8", 8_715, NEMO_2407),
    ThroughputCase("Llama 2 70B pretrain", "llama-2-70b", "pretrain", 4096, 64, "fp8", 1_717, NEMO_2407),
    ThroughputCase("Llama 3 8B pretrain", "llama-3-8b", "pretrain", 8192, 8, "fp8", 14_451, MBRIDGE_2511),
    ThroughputCase("Llama 3 70B pretrain", "llama-3-70b", "pretrain", 8192, 64, "fp8", 1_602, MBRIDGE_2511),
    ThroughputCase("Llama 3.1 405B pretrain", "llama-3.1-405b", "pretrain", 8192, 1024, "fp8", 292, MBRIDGE_2511),
    ThroughputCase("Qwen3-30B-A3B pretrain (MoE)", "qwen3-30b-a3b", "pretrain", 4096, 8, "bf16", 12_040, AUTOMODEL),
    ThroughputCase("DeepSeek-V3 pretrain (MoE)", "deepseek-v3", "pretrain", 4096, 256, "bf16", 1_002, AUTOMODEL),
    ThroughputCase("Llama 3 8B LoRA", "llama-3-8b", "lora", 4096, 1, "bf16", 12_472.87, AUTOMODEL),
    ThroughputCase("Qwen2.5 7B LoRA", "qwen2.5-7b", "lora", 4096, 1, "bf16", 14_110.05, AUTOMODEL),
    ThroughputCase("Qwen2.5 32B LoRA", "qwen2.5-32b", "lora", 4096, 8, "bf16", 1_950.93, AUTOMODEL),
    ThroughputCase("Llama 3 70B LoRA", "llama-3-70b", "lora", 4096, 8, "bf16", 658.62, AUTOMODEL,
                   not_calibrated=TP_PP_LORA),
)  # fmt: skip


def throughput_rows(calibrated_only: bool = False) -> list[dict[str, Any]]:
    """One row per published throughput: the default estimate's tokens/s per GPU and estimated ÷
    published GPU-hours."""
    rows = []
    for c in THROUGHPUT:
        if calibrated_only and c.not_calibrated:
            continue
        e = estimate(
            model=c.model, task=c.task, tokens=TOKENS, seq_len=c.seq_len, gpu=get_model(c.gpu), gpus=c.gpus,
            precision=c.precision, overhead=0.0,
        )  # fmt: skip
        assert e.gpu_hours is not None
        speed = TOKENS / (e.gpu_hours * 3600)
        rows.append(
            dict(case=c.label, gpu=c.gpu, gpus=c.gpus, precision=c.precision, published=c.published_tokens_per_gpu_s,
                 estimate=speed, ratio=c.published_tokens_per_gpu_s / speed, mfu=e.mfu, source=c.source,
                 not_calibrated=c.not_calibrated)
        )  # fmt: skip
    return rows


def throughput_table() -> str:
    """The steady-state table with its median line (over the calibrated cases; † marks the others)."""
    rows = throughput_rows()
    lines = [
        "| case | GPUs | precision | published tokens/s/GPU | estimate | ratio (GPU-hours) | default MFU | source |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        case = f"{r['case']} †" if r["not_calibrated"] else r["case"]
        lines.append(
            f"| {case} | {r['gpus']} × {r['gpu']} | {r['precision']} | {r['published']:,.0f} | "
            f"{r['estimate']:,.0f} | {r['ratio']:.2f} | {r['mfu']:g} | {r['source']} |"
        )
    return "\n".join(lines + ratio_summary(rows, "cases")) + "\n"


def ratio_summary(rows: list[dict[str, Any]], noun: str) -> list[str]:
    """A calibration table's closing lines: the median, lowest and highest ratio over its calibrated
    rows, then one line per row shown but not calibrated on (marked † in the table), with why."""
    ratios = [r["ratio"] for r in rows if not r["not_calibrated"]]
    lines = [
        "",
        f"Median ratio {statistics.median(ratios):.2f}; lowest {min(ratios):.2f}, highest {max(ratios):.2f} "
        f"({len(ratios)} calibrated {noun}).",
    ]
    excluded = [r for r in rows if r["not_calibrated"]]
    lines += [""] if excluded else []
    lines += [
        f"- † {r['case']} (ratio {r['ratio']:.2f}): shown, not calibrated on: {r['not_calibrated']}."
        for r in excluded
    ]
    return lines
