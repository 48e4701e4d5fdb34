"""``planner estimate`` for people: the workload, memory by component, and GPUs and hours on one GPU.

``workload_line`` and ``memory_notes`` are shared with the plan view, which says the same of its job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner import catalog
from planner.output import table
from planner.units import format_count
from planner.views.typed import typed
from planner.workload.calibration import checked_against
from planner.workload.estimate import FLOPS_PER_PARAM_TOKEN, generation
from planner.workload.estimate import explain as explain_lines
from planner.workload.memory import DEFAULT_ZERO_STAGE

if TYPE_CHECKING:  # pragma: no cover
    from planner.workload.estimate import Estimate
    from planner.workload.serving import ServingSize


def workload_line(e: Estimate) -> str:
    tokens = f" on {format_count(e.tokens)} tokens" if e.tokens else ""
    if e.task == "inference":
        tokens = f", {format_count(e.tokens)} tokens generated" if e.tokens else ""
        how = f"{e.precision}, context {e.seq_len} × batch {e.batch}"
    else:
        ckpt = "gradient checkpointing" if e.checkpointing else "selective recomputation"
        how = f"{e.precision}, seq {e.seq_len} × batch {e.batch}, {ckpt}"
        if e.lora_rank:
            how += f", LoRA rank {e.lora_rank}"
        if e.optimizer_8bit:
            how += ", 8-bit Adam"
    if e.model:
        size = format_count(e.params)
        if e.is_moe:
            size += f" total, {format_count(e.active_params)} active"
        return f"{e.task} of {e.model}, {size} parameters{tokens} ({how})"
    return f"{e.task} of a {format_count(e.params)}-parameter model{tokens} ({how})"


def _shape_line(e: Estimate) -> str:
    s = e.shape
    kv = f"{s.kv_heads} KV heads of {s.head_dim}"
    if s.kv_lora_rank:
        kv = f"MLA (KV latent {s.kv_lora_rank} + RoPE {s.qk_rope_head_dim})"
    text = f"{s.layers} layers, hidden {s.hidden}, {s.heads} heads, {kv}, vocabulary {s.vocab:,}"
    if e.model:
        return f"Architecture: {text} (from {e.model_source})"
    return f"Assumed for --params: {typed(e.assumed[0]) if e.assumed else text}"


def gpu_bf16_tflops(name: str | None) -> float | None:
    """The catalog's dense BF16/FP16 figure for a GPU name (to say when a peak is FP8's instead)."""
    return catalog.get_model(name).dense_tflops if name else None


def memory_notes(e: Estimate) -> list[str]:
    """What --cpu-offload and a ZeRO stage below 3 did to the memory (estimate and plan say the same)."""
    lines = []
    if e.cpu_offload_gb:
        lines.append(
            f"Gradients and optimizer states in CPU memory (--cpu-offload, ZeRO-Offload): {e.cpu_offload_gb:,.1f} GB"
        )
    if e.zero_stage != DEFAULT_ZERO_STAGE and e.task != "inference":
        lines.append(f"ZeRO stage {e.zero_stage}: the unsharded model states sit whole on every GPU")
    return lines


def render_estimate(e: Estimate, explain: bool = False) -> str:
    lines = [f"Workload: {workload_line(e)}", _shape_line(e), ""]
    names = {"optimizer_states": "optimizer states", "kv_cache": "KV cache"}
    rows = [[names.get(k, k), f"{v:,.2f}" if v else "-"] for k, v in e.breakdown.items()]
    rows.append(["total", f"{e.memory_gb:,.1f}"])
    lines.append(table(rows, ["memory (all GPUs)", "GB"], align_right=(1,)))
    lines += memory_notes(e)
    if e.flops is not None:
        per = f"{FLOPS_PER_PARAM_TOKEN[e.task]}·N_active"
        attention = e.attention_flops_per_token or 0.0
        share = attention / e.flops_per_token if e.flops_per_token else 0.0
        lines += [
            "",
            f"FLOPs: {e.flops:.2e} (({per} + attention)·D; attention {share:.0%} at {e.seq_len} tokens)",
        ]
    if e.gpu is not None:
        kind = "FP8" if e.precision == "fp8" and e.peak_tflops != gpu_bf16_tflops(e.gpu) else ""
        tflops = (
            f"{e.peak_tflops:g} dense {kind + ' ' if kind else ''}TFLOPS"
            if e.peak_tflops
            else "no TFLOPS figure"
        )
        lines += ["", f"On {e.gpu} ({e.gpu_memory_gb:g} GB, {tflops}):"]
        if e.gpus_needed is None:
            lines.append(f"  GPUs needed       none: no count of {e.gpu} holds it (see the note)")
        else:
            how = " each, split evenly" if e.zero_stage == 3 or e.task == "inference" else " each"
            split = how if e.gpus_needed > 1 else ""
            per_gpu = e.per_gpu_gb if e.per_gpu_gb is not None else e.memory_gb
            lines.append(
                f"  GPUs needed       {e.gpus_needed} ({per_gpu:,.1f} of {e.gpu_memory_gb:g} GB{split})"
            )
        if e.tokens_per_gpu_s is not None:
            lines.append(
                f"  Decode            {e.tokens_per_gpu_s:,.1f} tokens/s per GPU at batch {e.batch} "
                f"({e.bound} bound)"
            )
            lines.append(
                f"  Prefill           {e.prefill_tokens_per_gpu_s:,.0f} prompt tokens/s per GPU (compute bound)"
            )
        if e.gpu_hours is not None and e.wall_hours is not None:
            lines.append(f"  MFU               {e.mfu:g} ({e.mfu_source}; --mfu to change)")
            if e.overhead:
                lines.append(
                    f"  Overhead          {e.overhead:.0%} for restarts, evaluation, checkpoints (--overhead)"
                )
            if e.link:
                lines.append(
                    f"  Links             {e.link} (assumed; step = max(compute, collectives): "
                    f"{e.comm_slowdown or 1:.2f}x compute)"
                )
            lines.append(
                f"  GPU-hours         {e.gpu_hours:,.1f}"
                + (" (memory-bandwidth bound)" if e.bound == "memory bandwidth" else "")
                + (" (communication bound)" if e.bound == "communication" else "")
            )
            lines.append(
                f"  Wall-clock hours  {e.wall_hours:,.1f} on {e.gpus} GPU(s) ({e.wall_hours / 24:,.1f} days)"
            )
    if e.gpu_hours is not None and e.gpu is not None:
        checks = checked_against(e.task, generation(catalog.get_model(e.gpu)))
        if checks:
            lines.append("Checked against (estimate ÷ published, docs/calibration.md):")
            lines += [f"  {c}" for c in checks]
        else:
            lines.append(
                f"Checked against: no published {e.task} run in the calibration set; the default MFU is "
                "docs/calibration.md's stated figure for the task."
            )
    for note in e.notes:
        lines.append(f"Note: {typed(note)}")
    if e.tokens is None:
        lines.append("Give --tokens D (and --gpu) for FLOPs, GPU-hours and wall-clock hours.")
    elif e.gpu is None:
        lines.append(
            "Give --gpu G for the GPUs needed and the hours, or run `planner plan` to compare every GPU."
        )
    if explain:
        lines += ["", "How each number was computed:"]
        lines += [f"  {k}: {v}" for k, v in explain_lines(e).items()]
    return "\n".join(lines)


def render_serving(size: ServingSize) -> str:
    """A serving estimate: the load, the replicas and GPUs that serve it, and the tokens a month."""
    e, load = size.replica, size.load
    output, prompt = load.tokens_per_month()
    lines = [
        f"Serving: {workload_line(e).split(' (')[0].replace('inference of ', '')}: {load.describe()}",
        _shape_line(e),
        "",
        f"On {size.gpu}: {size.gpus} GPUs = {size.replicas} replica(s) × {size.gpus_per_replica} "
        f"({e.memory_gb:,.1f} GB each replica: weights and the KV cache of {size.streams_per_replica} streams "
        f"at {load.context:,} tokens)",
        f"  Each stream       {size.stream_tokens_per_s:,.1f} tokens/s (decode at batch {size.streams_per_replica}, "
        f"{size.prefill_share:.0%} of the time on prompts)",
        f"  Output            {load.output_tokens_per_s:,.0f} tokens/s while online; {output / 1e6:,.0f}M output and "
        f"{prompt / 1e6:,.0f}M prompt tokens a month",
        f"  GPU-hours         {size.gpu_hours_per_month:,.0f} a month ({size.gpus} GPUs × "
        f"{load.online_hours_per_month:,.0f} h online)",
    ]
    for note in e.notes:
        lines.append(f"Note: {typed(note)}")
    lines.append("`planner plan` with the same options prices it: CNY a month and per million tokens.")
    return "\n".join(lines)
