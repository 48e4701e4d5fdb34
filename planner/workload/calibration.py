"""Published training runs, memory figures and decode speeds the estimator is checked against
(docs/calibration.md).

Each case is run through ``planner.workload.estimate.estimate`` with default settings (only the model, task,
tokens, sequence length, GPU and precision of the published run), and the estimate is divided by the
published figure. ``python -m planner.workload.calibration`` prints the tables that docs/calibration.md holds (``--write
docs/calibration.md`` updates them in place);
tests/workload/test_calibration.py checks that the two agree and that the ratios stay in bounds.
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass
from typing import Any

from planner.catalog import get_model
from planner.workload.estimate import estimate, generation
from planner.workload.steady_state import THROUGHPUT, ratio_summary, throughput_rows, throughput_table

# Qwen2.5 speed benchmark (QwenLM/Qwen2.5 docs/source/benchmark/speed_benchmark.rst): batch 1, BF16, one
# A100-80GB per GPU, 2048 tokens generated after an input of 1 to 30720 tokens; speed with vLLM 0.6.3,
# peak memory with Transformers 4.46.
QWEN25_SPEED = "Qwen2.5 speed benchmark"
GENERATED = 2048  # tokens each benchmark run generates: the KV cache ends at input + 2048


@dataclass(frozen=True)
class RunCase:
    """A published pretraining run: GPU-hours for ``tokens`` on ``gpu``."""

    label: str
    model: str
    tokens: float
    seq_len: int
    gpu: str
    published_gpu_hours: float
    source: str
    precision: str = "bf16"
    # Why the run is shown but not calibrated on (its hours are not pretraining alone); "" = calibrated.
    not_calibrated: str = ""


# Llama 3.2's hours include distillation: the logits of Llama 3.1 8B and 70B were targets in part of
# the training, so the teachers' forward passes are in them and the 1B and 3B look slower than they are.
LLAMA_32_DISTILLED = "hours include distillation from Llama 3.1 8B/70B logits"
# Issue 27: the Llama 3/3.1 8B model-card hours imply 0.21 of the H100's peak, under half the steady state
# NVIDIA publishes for the same model on H100s (Megatron-Bridge 25.11: 14,451 tokens/s per GPU in FP8;
# docs/calibration.md, steady state); the default is fitted to steady-state throughput, restarts and lost
# time are --overhead's.
LLAMA_3_8B_CARD = (
    "the card's hours imply 0.21 of peak, under half the steady-state throughput NVIDIA publishes for "
    "this model on H100s (see the steady-state table): they hold more than steady-state pretraining"
)


@dataclass(frozen=True)
class MemoryCase:
    """A published memory figure (GB) for one job."""

    label: str
    model: str
    task: str
    precision: str
    seq_len: int
    published_gb: float
    source: str
    lora_rank: int | None = None


RUNS: tuple[RunCase, ...] = (
    # LLaMA paper (Touvron et al. 2023) Table 15 "GPU-Hours", A100-80GB; 65B: 380 tokens/s/GPU.
    RunCase("LLaMA 7B", "llama-7b", 1.0e12, 2048, "A100-80GB", 82_432, "LLaMA paper Table 15"),
    RunCase("LLaMA 13B", "llama-13b", 1.0e12, 2048, "A100-80GB", 135_168, "LLaMA paper Table 15"),
    RunCase("LLaMA 33B", "llama-33b", 1.4e12, 2048, "A100-80GB", 530_432, "LLaMA paper Table 15"),
    RunCase("LLaMA 65B", "llama-65b", 1.4e12, 2048, "A100-80GB", 1_022_362, "LLaMA paper Table 15"),
    # Llama 2 model card, "Time (GPU hours)", A100-80GB, 2T tokens, 4K context.
    RunCase("Llama 2 7B", "llama-2-7b", 2.0e12, 4096, "A100-80GB", 184_320, "Llama 2 model card"),
    RunCase("Llama 2 13B", "llama-2-13b", 2.0e12, 4096, "A100-80GB", 368_640, "Llama 2 model card"),
    RunCase("Llama 2 70B", "llama-2-70b", 2.0e12, 4096, "A100-80GB", 1_720_320, "Llama 2 model card"),
    # BLOOM: 384 A100-80GB for about 117 days, 1,082,990 GPU-hours (Luccioni et al. 2022); 366B tokens.
    RunCase(
        "BLOOM 176B", "bloom-176b", 366e9, 2048, "A100-80GB", 1_082_990, "Luccioni et al. 2022; model card"
    ),
    # MPT-7B: 440 A100-40GB for 9.5 days on 1T tokens (MosaicML release post, May 2023).
    RunCase("MPT-7B", "mpt-7b", 1.0e12, 2048, "A100-40GB", 440 * 9.5 * 24, "MosaicML MPT-7B post"),
    # StarCoderBase: 1T tokens at 8K context on 512 A100-80GB, 320,256 GPU-hours (StarCoder paper).
    RunCase("StarCoderBase 15.5B", "starcoder-15b", 1.0e12, 8192, "A100-80GB", 320_256, "StarCoder paper"),
    # Pythia (Biderman et al. 2023) appendix: GPU-hours on A100-40GB for 300B tokens.
    RunCase("Pythia 1B", "pythia-1b", 300e9, 2048, "A100-40GB", 4_830, "Pythia paper appendix"),
    RunCase("Pythia 6.9B", "pythia-6.9b", 300e9, 2048, "A100-40GB", 33_500, "Pythia paper appendix"),
    RunCase("Pythia 12B", "pythia-12b", 300e9, 2048, "A100-40GB", 72_300, "Pythia paper appendix"),
    # TinyLlama README: 24k tokens/s per A100-40G; 3,456 A100 GPU-hours per 300B tokens in its comparison
    # table (which gives Pythia-1B 4,830, the figure above); 3T tokens.
    RunCase("TinyLlama 1.1B", "tinyllama-1.1b", 3.0e12, 2048, "A100-40GB", 34_560, "TinyLlama README"),
    # Llama 3 / 3.1 model cards, H100-80GB, 15T tokens (15.6T for 405B), 8K context.
    RunCase(
        "Llama 3 8B",
        "llama-3-8b",
        15e12,
        8192,
        "H100-80GB",
        1.3e6,
        "Llama 3 model card",
        not_calibrated=LLAMA_3_8B_CARD,
    ),
    RunCase("Llama 3 70B", "llama-3-70b", 15e12, 8192, "H100-80GB", 6.4e6, "Llama 3 model card"),
    RunCase(
        "Llama 3.1 8B",
        "llama-3.1-8b",
        15e12,
        8192,
        "H100-80GB",
        1.46e6,
        "Llama 3.1 model card",
        not_calibrated=LLAMA_3_8B_CARD,
    ),
    RunCase("Llama 3.1 70B", "llama-3.1-70b", 15e12, 8192, "H100-80GB", 7.0e6, "Llama 3.1 model card"),
    RunCase("Llama 3.1 405B", "llama-3.1-405b", 15.6e12, 8192, "H100-80GB", 30.84e6, "Llama 3.1 model card"),
    # Llama 3.2 model card: 370K (1B) and 460K (3B) H100 hours for up to 9T tokens, distillation included.
    RunCase(
        "Llama 3.2 1B",
        "llama-3.2-1b",
        9e12,
        8192,
        "H100-80GB",
        370_000,
        "Llama 3.2 model card",
        not_calibrated=LLAMA_32_DISTILLED,
    ),
    RunCase(
        "Llama 3.2 3B",
        "llama-3.2-3b",
        9e12,
        8192,
        "H100-80GB",
        460_000,
        "Llama 3.2 model card",
        not_calibrated=LLAMA_32_DISTILLED,
    ),  # fmt: skip
    # DeepSeek-V2 paper §4: 300.6K H800 hours per trillion tokens for DeepSeek 67B (2T tokens),
    # 172.8K for DeepSeek-V2 (8.1T tokens).
    RunCase(
        "DeepSeek LLM 67B", "deepseek-llm-67b", 2.0e12, 4096, "H800-80GB", 601_200, "DeepSeek-V2 paper §4"
    ),
    RunCase("DeepSeek-V2 (MoE)", "deepseek-v2", 8.1e12, 4096, "H800-80GB", 1_399_680, "DeepSeek-V2 paper §4"),
    # DeepSeek-V3 technical report Table 1: 2,664K H800 hours of pretraining on 14.8T tokens in FP8
    # (2,788K with context extension and post-training).
    RunCase(
        "DeepSeek-V3 (MoE, FP8)",
        "deepseek-v3",
        14.8e12,
        4096,
        "H800-80GB",
        2.664e6,
        "DeepSeek-V3 report Table 1",
        "fp8",
    ),
)


@dataclass(frozen=True)
class DecodeCase:
    """A published single-stream decode speed (tokens/s) on ``gpus`` GPUs."""

    label: str
    model: str
    input_tokens: int
    gpus: int
    published_tokens_per_s: float
    source: str = QWEN25_SPEED


MEMORY: tuple[MemoryCase, ...] = (
    # Hugging Face "Welcome Mixtral" post (Dec 2023): "you need about 90 GB of VRAM in half-precision".
    MemoryCase(
        "Mixtral-8x7B inference fp16", "mixtral-8x7b", "inference", "fp16", 2048, 90, "HF Mixtral blog"
    ),
    # DeepSeek-V2 model card: "To utilize DeepSeek-V2 in BF16 format for inference, 80GB*8 GPUs are required."
    MemoryCase(
        "DeepSeek-V2 inference bf16", "deepseek-v2", "inference", "bf16", 2048, 640, "DeepSeek-V2 model card"
    ),
    # Qwen (1.0) README: peak memory encoding 2048 tokens and generating one, BF16, one A100.
    MemoryCase("Qwen-7B inference bf16", "qwen-7b", "inference", "bf16", 2048, 16.99, "Qwen-7B README"),
    MemoryCase("Qwen-72B inference bf16", "qwen-72b", "inference", "bf16", 2048, 144.69, "Qwen-72B README"),
    # QLoRA paper: "finetune a 65B parameter model on a single 48GB GPU".
    MemoryCase("LLaMA 65B QLoRA", "llama-65b", "qlora", "int4", 2048, 48, "QLoRA paper abstract"),
    # LoRA paper §4: GPT-3 175B with LoRA r=4 on q and v "from 1.2TB to 350GB" of VRAM.
    MemoryCase("GPT-3 175B LoRA r=4", "gpt-3-175b", "lora", "fp16", 2048, 350, "LoRA paper §4", lora_rank=4),
    MemoryCase("Qwen2.5-7B inference, input 1", "qwen2.5-7b", "inference", "bf16", 1 + GENERATED, 14.38, QWEN25_SPEED),
    MemoryCase("Qwen2.5-7B inference, input 30720", "qwen2.5-7b", "inference", "bf16", 30720 + GENERATED, 19.97, QWEN25_SPEED),
    MemoryCase("Qwen2.5-14B inference, input 1", "qwen2.5-14b", "inference", "bf16", 1 + GENERATED, 28.08, QWEN25_SPEED),
    MemoryCase("Qwen2.5-14B inference, input 30720", "qwen2.5-14b", "inference", "bf16", 30720 + GENERATED, 36.85, QWEN25_SPEED),
    MemoryCase("Qwen2.5-72B inference, input 1", "qwen2.5-72b", "inference", "bf16", 1 + GENERATED, 136.20, QWEN25_SPEED),
    MemoryCase("Qwen2.5-72B inference, input 30720", "qwen2.5-72b", "inference", "bf16", 30720 + GENERATED, 164.79, QWEN25_SPEED),
)  # fmt: skip

DECODE: tuple[DecodeCase, ...] = (
    DecodeCase("Qwen2.5-0.5B, input 1", "qwen2.5-0.5b", 1, 1, 311.55),
    DecodeCase("Qwen2.5-1.5B, input 1", "qwen2.5-1.5b", 1, 1, 183.33),
    DecodeCase("Qwen2.5-3B, input 1", "qwen2.5-3b", 1, 1, 127.61),
    DecodeCase("Qwen2.5-7B, input 1", "qwen2.5-7b", 1, 1, 84.28),
    DecodeCase("Qwen2.5-7B, input 14336", "qwen2.5-7b", 14336, 1, 77.69),
    DecodeCase("Qwen2.5-14B, input 1", "qwen2.5-14b", 1, 1, 46.30),
    DecodeCase("Qwen2.5-14B, input 30720", "qwen2.5-14b", 30720, 1, 37.18),
    DecodeCase("Qwen2.5-72B, input 1, 2 GPUs (eager)", "qwen2.5-72b", 1, 2, 18.19),
    DecodeCase("Qwen2.5-72B, input 1, 4 GPUs", "qwen2.5-72b", 1, 4, 31.37),
    DecodeCase("Qwen2.5-72B, input 30720, 4 GPUs", "qwen2.5-72b", 30720, 4, 27.53),
)


def run_rows(calibrated_only: bool = False) -> list[dict[str, Any]]:
    """One row per published run: the estimate with defaults, and estimate / published. With
    ``calibrated_only``, without the runs shown for reference only (``RunCase.not_calibrated``)."""
    rows = []
    for c in RUNS:
        if calibrated_only and c.not_calibrated:
            continue
        e = estimate(
            model=c.model, task="pretrain", tokens=c.tokens, seq_len=c.seq_len, gpu=get_model(c.gpu),
            precision=c.precision,
        )  # fmt: skip
        assert e.gpu_hours is not None
        rows.append(
            dict(case=c.label, gpu=c.gpu, published=c.published_gpu_hours, estimate=e.gpu_hours,
                 ratio=e.gpu_hours / c.published_gpu_hours, mfu=e.mfu, source=c.source,
                 not_calibrated=c.not_calibrated)
        )  # fmt: skip
    return rows


def memory_rows() -> list[dict[str, Any]]:
    """One row per published memory figure: the estimate (GB, all GPUs) and estimate / published."""
    rows = []
    for c in MEMORY:
        e = estimate(
            model=c.model, task=c.task, precision=c.precision, seq_len=c.seq_len, lora_rank=c.lora_rank
        )
        rows.append(
            dict(case=c.label, published=c.published_gb, estimate=e.memory_gb,
                 ratio=e.memory_gb / c.published_gb, source=c.source)
        )  # fmt: skip
    return rows


def decode_rows() -> list[dict[str, Any]]:
    """One row per published decode speed: tokens/s of one stream on all its GPUs, estimate / published."""
    rows = []
    for c in DECODE:
        e = estimate(
            model=c.model, task="inference", seq_len=c.input_tokens + GENERATED, gpu=get_model("A100-80GB"),
            gpus=c.gpus,
        )  # fmt: skip
        assert e.tokens_per_gpu_s is not None
        speed = e.tokens_per_gpu_s * c.gpus
        rows.append(
            dict(case=c.label, published=c.published_tokens_per_s, estimate=speed,
                 ratio=speed / c.published_tokens_per_s, bound=e.bound, source=c.source)
        )  # fmt: skip
    return rows


@functools.cache
def _checks() -> tuple[tuple[str, str, str, float], ...]:
    """(task, GPU generation, case, ratio) of every calibrated run and steady-state case."""
    out = [("pretrain", generation(get_model(r["gpu"])), f"{r['case']} ({r['gpu']}, {r['source']})", r["ratio"])
           for r in run_rows(calibrated_only=True)]  # fmt: skip
    out += [(c.task, generation(get_model(c.gpu)), f"{c.label} ({c.gpus} × {c.gpu}, {c.source})", r["ratio"])
            for c, r in zip([c for c in THROUGHPUT if not c.not_calibrated], throughput_rows(True), strict=True)]  # fmt: skip
    out += [
        ("inference", "ampere", f"{r['case']} decode (A100-80GB, {r['source']})", r["ratio"])
        for r in decode_rows()
    ]
    return tuple(out)


def checked_against(task: str, gpu_generation: str, most: int = 3) -> list[str]:
    """The published cases an estimate of ``task`` on a GPU of ``gpu_generation`` rests on: the same task
    and generation, else the same task; each with its ratio (estimate ÷ published). Empty when none."""
    cases = [c for c in _checks() if c[0] == task]
    same = [c for c in cases if c[1] == gpu_generation] or cases
    return [f"{case}: ×{ratio:.2f}" for _, _, case, ratio in same[:most]]


def median_ratio(rows: list[dict[str, Any]]) -> float:
    return statistics.median(r["ratio"] for r in rows)


def markdown_tables() -> str:
    """The three tables of docs/calibration.md, as generated from the cases above."""
    return run_table() + "\n" + memory_table() + "\n" + decode_table()


def decode_table() -> str:
    """The decode-speed table with its median line."""
    rows = decode_rows()
    lines = [
        "| case (A100-80GB, batch 1) | published tokens/s | estimate | ratio | bound | source |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['published']:,.2f} | {r['estimate']:,.2f} | {r['ratio']:.2f} | {r['bound']} | "
            f"{r['source']} |"
        )
    lines += [
        "",
        f"Median ratio {median_ratio(rows):.2f}; lowest {min(r['ratio'] for r in rows):.2f}, "
        f"highest {max(r['ratio'] for r in rows):.2f} ({len(rows)} cases).",
    ]
    return "\n".join(lines) + "\n"


def run_table() -> str:
    """The pretraining table with its median line (over the calibrated runs; † marks the others)."""
    runs = run_rows()
    lines = [
        "| case | GPU | published GPU-hours | estimate | ratio | default MFU | source |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for r in runs:
        case = f"{r['case']} †" if r["not_calibrated"] else r["case"]
        lines.append(
            f"| {case} | {r['gpu']} | {r['published']:,.0f} | {r['estimate']:,.0f} | "
            f"{r['ratio']:.2f} | {r['mfu']:g} | {r['source']} |"
        )
    return "\n".join(lines + ratio_summary(runs, "runs")) + "\n"


def memory_table() -> str:
    """The memory table with its median line."""
    memory = memory_rows()
    lines = [
        "| case | published GB | estimate GB | ratio | source |",
        "|---|---:|---:|---:|---|",
    ]
    for r in memory:
        lines.append(
            f"| {r['case']} | {r['published']:,.2f} | {r['estimate']:,.2f} | {r['ratio']:.2f} | {r['source']} |"
        )
    lines += [
        "",
        f"Median ratio {median_ratio(memory):.2f}; lowest {min(r['ratio'] for r in memory):.2f}, "
        f"highest {max(r['ratio'] for r in memory):.2f} ({len(memory)} cases).",
    ]
    return "\n".join(lines) + "\n"


def updated_doc(doc: str) -> str:
    """``doc`` with the text between ``<!-- runs -->``/``<!-- /runs -->`` and ``<!-- memory -->``/
    ``<!-- /memory -->`` replaced by freshly computed tables."""
    tables = (("runs", run_table()), ("steady", throughput_table()), ("memory", memory_table()),
              ("decode", decode_table()))  # fmt: skip
    for tag, body in tables:
        start, end = f"<!-- {tag} -->\n", f"<!-- /{tag} -->"
        head, rest = doc.split(start, 1)
        doc = head + start + body + end + rest.split(end, 1)[1]
    return doc


if __name__ == "__main__":  # pragma: no cover
    import sys
    from pathlib import Path

    if sys.argv[1:2] == ["--write"]:  # python -m planner.workload.calibration --write docs/calibration.md
        path = Path(sys.argv[2])
        path.write_text(updated_doc(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(markdown_tables(), end="")
