"""``planner estimate``, ``planner plan``, ``planner models`` and ``planner tco``: from a workload to memory, GPUs and hours,
to the cheapest way to rent them, to whether buying the cards would pay.

Thin shells over ``planner.workload.estimate`` and ``planner.answers.plan``; ``tco`` is in ``rent_or_buy.py``. Numbers are
parsed by the option types of ``arguments.py``, so ``7B``, ``6.7e9`` and ``50K`` work and nonsense is one
line with a hint (exit 2).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import click

from planner.commands.arguments import Count, Number
from planner.commands.emit import emit, reading_engine
from planner.commands.flags import typed
from planner.commands.options import (
    billing_option,
    chosen_scope,
    format_option,
    gpu_filter_option,
    provider_option,
    scope_option,
    single_gpu_option,
)
from planner.commands.rent_or_buy import tco
from planner.errors import UsageError
from planner.output import money, short, table
from planner.pricing.freshness import age_cell, age_legend, prices_line, stale_warning
from planner.pricing.offer import NOTHING_RENTABLE
from planner.providers import MARKET_MACHINE_GPUS
from planner.units import format_count
from planner.views.notes import star_note

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.plan import Plan
    from planner.workload.estimate import Estimate

# planner.cli registers estimate, plan and tco in this module; tco lives in rent_or_buy.py.
__all__ = ["estimate", "models", "plan", "tco"]


def workload_options(tokens_required: bool):  # noqa: ANN201 - a decorator
    """The options that describe a job, shared by estimate and plan."""

    def decorate(fn):  # noqa: ANN001, ANN202
        options = [
            click.option(
                "--model",
                metavar="NAME",
                help="A catalog model (`planner models`), e.g. qwen2.5-7b, llama-3.1-70b, deepseek-v3.",
            ),
            click.option(
                "--params",
                type=Count("7B"),
                metavar="N",
                help="Any other model: its parameters (7B, 6.7e9, 500M); a dense model of standard shape is assumed.",
            ),
            click.option(
                "--task", required=True, metavar="TASK", help="pretrain, full, lora, qlora or inference."
            ),
            click.option(
                "--tokens",
                required=tokens_required,
                type=Count("2B"),
                metavar="D",
                help="Tokens trained on (or generated, for inference): 2B, 1.4T.",
            ),
            click.option(
                "--precision", metavar="P", help="fp32, bf16, fp16, fp8, int8 or int4 (default per task)."
            ),
            click.option(
                "--mfu",
                type=Number("0.4"),
                metavar="X",
                help="Model FLOPs utilisation in (0, 1] (default by task, GPU generation and model scale).",
            ),
            click.option(
                "--seq-len",
                type=Count("4096", whole=True),
                metavar="S",
                help="Sequence length (default 2048).",
            ),
            click.option(
                "--batch", type=Count("8", whole=True), metavar="B", help="Micro-batch in flight (default 1)."
            ),
            click.option(
                "--kv-heads",
                type=Count("8", whole=True),
                metavar="K",
                help="KV heads for the KV cache (GQA, e.g. 8); default: the model's, or one per head with --params.",
            ),
            click.option(
                "--checkpointing/--no-checkpointing",
                default=None,
                help="Gradient checkpointing (default: on for full, lora, qlora; selective recomputation for pretrain).",
            ),
            click.option(
                "--lora-rank",
                type=Count("64", whole=True),
                metavar="R",
                help="LoRA/QLoRA adapter rank on every linear layer (default 16).",
            ),
            click.option(
                "--optimizer-8bit",
                is_flag=True,
                help="8-bit Adam (bitsandbytes): optimizer states 6 instead of 12 bytes per trained parameter.",
            ),
            click.option(
                "--overhead",
                type=Number("0.1"),
                metavar="X",
                help="Restarts, evaluation and checkpointing as a share of compute time (default 0.1 pretrain, else 0).",
            ),
            click.option(
                "--zero-stage",
                type=click.IntRange(0, 3),
                metavar="S",
                help="ZeRO stage 0-3: what is split over the GPUs (default 3: weights, gradients and optimizer states).",
            ),
            click.option(
                "--cpu-offload", is_flag=True, help="Keep the optimizer states in CPU memory (ZeRO-Offload)."
            ),
        ]

        @functools.wraps(fn)
        def with_workload(*args: Any, **kwargs: Any) -> Any:
            given = {k: kwargs.pop(k) for k in WORKLOAD_KEYS}
            return fn(*args, workload=_workload_args(**given), **kwargs)

        command = with_workload
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


WORKLOAD_KEYS = (
    "model",
    "params",
    "task",
    "tokens",
    "precision",
    "mfu",
    "seq_len",
    "batch",
    "kv_heads",
    "checkpointing",
    "lora_rank",
    "optimizer_8bit",
    "overhead",
    "zero_stage",
    "cpu_offload",
)


def _workload_args(
    model,
    params,
    task,
    tokens,
    precision,
    mfu,
    seq_len,
    batch,
    kv_heads,
    checkpointing,
    lora_rank,
    optimizer_8bit,
    overhead,
    zero_stage,
    cpu_offload,
) -> dict[str, Any]:  # noqa: ANN001
    """The workload options as keyword arguments of ``planner.workload.estimate.estimate``."""
    if model is None and params is None:
        raise UsageError(
            "give --model NAME or --params N", "e.g. --model qwen2.5-7b; `planner models` lists the catalog"
        )
    if model is not None and params is not None:
        raise UsageError("give --model or --params, not both", "--model knows its parameters")
    if model is not None:
        from planner.workload.architectures import get_spec

        model = get_spec(model).name  # an unknown name is refused here, with near names
    return dict(
        model=model,
        params=params,
        task=task.strip().lower(),
        tokens=tokens,
        precision=precision.strip().lower() if precision else None,
        mfu=float(mfu) if mfu is not None else None,
        seq_len=seq_len,
        batch=batch,
        kv_heads=kv_heads,
        checkpointing=checkpointing,
        lora_rank=lora_rank,
        optimizer_8bit=optimizer_8bit,
        overhead=float(overhead) if overhead is not None else None,
        zero_stage=zero_stage,
        cpu_offload=cpu_offload,
    )


# --- planner estimate ---


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
    fewest GPUs of the chosen model that hold it, FLOPs ((6·N_active + attention)·D training,
    (2·N_active + attention)·D inference), GPU-hours at the GPU's dense BF16/FP16 (or FP8) peak × MFU,
    and the wall-clock hours on K GPUs. Inference adds tokens/s per GPU (decode bound by memory
    bandwidth or compute, prefill by compute). Without --tokens, memory only; without --gpu, no GPU
    count or hours. --model takes a catalog model (`planner models`); --params any other.

    \b
    Examples:
      planner estimate --model llama-3.1-70b --task inference --gpu A100-80GB
      planner estimate --model qwen2.5-7b --tokens 2B --task lora --gpu RTX4090
      planner estimate --model deepseek-v3 --task inference --precision fp8 --gpu H20
      planner estimate --model llama-2-7b --task pretrain --tokens 2T --gpu A100-80GB --gpus 512 --explain
      planner estimate --model qwen3-8b --task pretrain --tokens 1T --gpu H800 --precision fp8
      planner estimate --params 13B --task full --gpu A100-80GB --zero-stage 2 --optimizer-8bit
    """
    from planner import catalog
    from planner.workload.estimate import estimate as run_estimate

    if gpus is not None and gpu is None:
        raise UsageError("--gpus needs --gpu", "e.g. --gpu A100-80GB --gpus 8")
    if workload["mfu"] is not None and (workload["tokens"] is None or gpu is None):
        raise UsageError(
            "--mfu changes only the hours, which need --tokens and --gpu", "e.g. --tokens 2B --gpu A100-80GB"
        )
    gpu_model = catalog.get_model(catalog.canonical_name(gpu)) if gpu else None
    result = run_estimate(gpu=gpu_model, gpus=gpus, **workload)
    emit(
        result,
        fmt,
        table=lambda r: render_estimate(r, explain),
        csv=lambda r: ([_estimate_row(r)], ESTIMATE_COLUMNS),
    )


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


def _workload_line(e: Estimate) -> str:
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
    from planner import catalog

    return catalog.get_model(name).dense_tflops if name else None


def memory_notes(e: Estimate) -> list[str]:
    """What --cpu-offload and a ZeRO stage below 3 did to the memory (estimate and plan say the same)."""
    from planner.workload.memory import DEFAULT_ZERO_STAGE

    lines = []
    if e.cpu_offload_gb:
        lines.append(f"Optimizer states in CPU memory (--cpu-offload): {e.cpu_offload_gb:,.1f} GB")
    if e.zero_stage != DEFAULT_ZERO_STAGE and e.task != "inference":
        lines.append(f"ZeRO stage {e.zero_stage}: the unsharded model states sit whole on every GPU")
    return lines


def render_estimate(e: Estimate, explain: bool = False) -> str:
    lines = [f"Workload: {_workload_line(e)}", _shape_line(e), ""]
    names = {"optimizer_states": "optimizer states", "kv_cache": "KV cache"}
    rows = [[names.get(k, k), f"{v:,.2f}" if v else "-"] for k, v in e.breakdown.items()]
    rows.append(["total", f"{e.memory_gb:,.1f}"])
    lines.append(table(rows, ["memory (all GPUs)", "GB"], align_right=(1,)))
    lines += memory_notes(e)
    if e.flops is not None:
        per = "2·N_active" if e.task == "inference" else "6·N_active"
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
            lines.append(
                f"  GPU-hours         {e.gpu_hours:,.1f}"
                + (" (memory-bandwidth bound)" if e.bound == "memory bandwidth" else "")
            )
            lines.append(
                f"  Wall-clock hours  {e.wall_hours:,.1f} on {e.gpus} GPU(s) ({e.wall_hours / 24:,.1f} days)"
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
        from planner.workload.estimate import explain as explain_lines

        lines += ["", "How each number was computed:"]
        lines += [f"  {k}: {v}" for k, v in explain_lines(e).items()]
    return "\n".join(lines)


# --- planner plan ---


@click.command()
@workload_options(tokens_required=True)
@click.option("--gpus-max", type=Count("8", whole=True), metavar="K", help="Use at most K GPUs.")
@click.option("--budget", type=Count("50K"), metavar="CNY", help="Drop options costing more than this (CNY).")
@click.option(
    "--deadline-hours",
    type=Count("72"),
    metavar="H",
    help="Finish within H wall-clock hours (more GPUs if need be).",
)
@gpu_filter_option
@provider_option
@billing_option
@scope_option
@format_option
@click.pass_obj
def plan(
    app,
    workload,
    gpus_max,
    budget,
    deadline_hours,
    gpus,
    providers,
    billing,
    scope,
    fmt,
) -> None:  # noqa: ANN001
    """Every GPU model that can run a job, with the cheapest way to rent it, cheapest first.

    For each GPU model with prices: the fewest GPUs that hold the job (with --deadline-hours, enough
    to finish in time), the wall-clock hours, and the cheapest provider, instance and billing mode from
    the price database. Whole instances are rented and all their GPUs work on the job. The fastest
    option is marked, and so is every Pareto option (no other option is both cheaper and faster).
    Beside every multi-GPU option, the link between its GPUs: NVLink and its bandwidth (cut on the
    A800/H800), PCIe only, and the network between instances.
    Mainland China regions only unless --scope all (or [quote] scope); a cheaper option outside is
    named in one line. "(old)" marks a price over 90 days old; the Cheapest line warns when its price
    is over a year old. --zero-stage and --cpu-offload mean what they mean to estimate: a GPU that no
    count holds at a low ZeRO stage is left out, with the reason.

    \b
    For --task inference, options are ranked by CNY per million generated tokens (the GPU-hour price
    times the GPU-hours a token takes, without whole-period rounding), then by total, and serving GPU
    counts are those tensor parallelism can split a model over: 1, 2, 4, 8, then multiples of 8.

    \b
    Examples:
      planner plan --model qwen2.5-7b --task inference --tokens 1B
      planner plan --model qwen2.5-7b --task inference --tokens 1B --batch 32
      planner plan --model llama-3.1-8b --tokens 1B --task lora
      planner plan --params 7B --tokens 1B --task lora
      planner plan --params 70B --tokens 20B --task full --gpus-max 64
      planner plan --params 13B --tokens 5B --task full --budget 200K --deadline-hours 72
      planner plan --params 13B --tokens 1B --task full --zero-stage 2 --cpu-offload
      planner plan --params 7B --tokens 1B --task qlora --gpu 4090 --gpu A100 --format json
    """
    from planner.answers import plan as planning
    from planner.pricing.cost import OfferQuery

    job = planning.Workload(**workload)
    job.on()  # refuse a bad workload before touching the database
    planning.check_plan_filters(gpus_max, budget, deadline_hours)
    query = OfferQuery.build(gpus, providers, (), billing, scope=chosen_scope(app, scope))
    engine = reading_engine(app)
    with engine.connect() as conn:
        result = planning.plan(
            conn,
            job,
            app.config.section("fx"),
            gpus_max=gpus_max,
            budget_cny=budget,
            deadline_hours=float(deadline_hours) if deadline_hours is not None else None,
            query=query,
            history_days=app.config.section("quote")["history_days"],
        )
    emit(
        result,
        fmt,
        table=render_plan,
        csv=lambda r: ([_plan_row(i, o) for i, o in enumerate(r.options, 1)], PLAN_COLUMNS),
    )


PLAN_COLUMNS = (
    "rank", "gpu_model", "gpus_needed", "gpus", "gpus_per_instance", "instances", "wall_hours",
    "gpu_hours", "mfu", "provider", "region", "instance_type", "billing", "unit_price", "unit", "currency",
    "total_cny", "cny_per_gpu_hour", "stock_state", "unavailable", "link", "nvlink_gbps_bidir", "fastest",
    "pareto", "trend",
    "observed_at", "age_days", "source", "from_snapshot", "cny_per_million_tokens_job",
    "cny_per_million_tokens_steady_state",
)  # fmt: skip


def _plan_row(rank: int, o: Any) -> dict[str, Any]:
    from planner.answers.rental import rental_dict

    r = o.rental
    described = rental_dict(r)
    row = {k: described[k] for k in PLAN_COLUMNS if k in described}
    row.update(
        rank=rank,
        gpu_model=o.estimate.gpu,
        gpus_needed=o.gpus_needed,
        wall_hours=r.hours,
        gpu_hours=o.estimate.gpu_hours,
        mfu=o.estimate.mfu,
        fastest=o.fastest,
        pareto=o.pareto,
        trend=r.history.trend if r.history else None,
        cny_per_million_tokens_job=o.cny_per_million_tokens_job,
        cny_per_million_tokens_steady_state=o.cny_per_million_tokens_steady_state,
    )
    row["link"], row["nvlink_gbps_bidir"] = o.link
    return row


def _per_m(cny: float | None) -> str:
    return f"{cny:,.2f}" if cny is not None else "-"


def render_plan(p: Plan) -> str:
    m = p.memory
    lines = [f"Plan: {_workload_line(m)}: {m.memory_gb:,.1f} GB in all, {m.flops:.2e} FLOPs"]
    lines += memory_notes(m)
    filters = []
    if p.gpus_max:
        filters.append(f"at most {p.gpus_max} GPUs")
    if p.budget_cny is not None:
        filters.append(f"at most {money(p.budget_cny, 0)} CNY")
    if p.deadline_hours is not None:
        filters.append(f"done within {p.deadline_hours:g} h")
    if filters:
        lines.append("Limits: " + ", ".join(filters))
    if p.options:
        lines.append(prices_line([o.rental.offer for o in p.options]))
    if not p.options:
        lines.append(
            "No GPU with prices can run this job within the limits." if p.excluded else "No prices match."
        )
    else:
        rows = [_plan_table_row(i, o) for i, o in enumerate(p.options, 1)]
        headers = ["#", "gpu", "GPUs", "instances", "link", "wall h", "provider", "region", "instance",
                   "billing", "total CNY", "CNY/GPU-h", "30d", "observed", "age", "marks"]  # fmt: skip
        right: tuple[int, ...] = (0, 2, 5, 10, 11)
        if m.task == "inference":
            headers[10:10] = ["CNY/M tok (this job)", "CNY/M tok (steady state)"]
            for row, o in zip(rows, p.options, strict=True):
                row[10:10] = [
                    _per_m(o.cny_per_million_tokens_job),
                    _per_m(o.cny_per_million_tokens_steady_state),
                ]
            right = (0, 2, 5, 10, 11, 12, 13)
            lines.append(
                "Ranked by CNY per million generated tokens in this job (total ÷ tokens, whole billing periods "
                "included); steady state is the paid GPU-hour price × GPU-hours per token, what a server kept "
                f"busy all period pays. Decode at batch {m.batch}, context {m.seq_len} (raise --batch for a "
                "busier server). Serving GPU counts are what tensor parallelism can split the heads over."
            )
        lines += ["", table(rows, headers, align_right=right)]
        best, fastest = p.cheapest, next(o for o in p.options if o.fastest)
        if best is None:
            lines += ["", f"Cheapest: none can be rented now: {NOTHING_RENTABLE} "
                      f"(the cheapest: {_option_line(p.options[0])})."]  # fmt: skip
        else:
            warning = stale_warning(best.rental.offer)
            lines += ["", f"Cheapest: {_option_line(best)}" + (f".{warning}" if warning else "")]
        if fastest is not best:
            lines.append(
                f"Fastest:  {_option_line(fastest)}"
                + ("" if fastest.rental.rentable else f" ({fastest.rental.availability.words})")
            )
        pareto = [o.rental.offer.gpu_model for o in p.options if o.pareto]
        lines.append(f"Pareto (no other option is both cheaper and faster): {', '.join(pareto)}")
    if p.outside is not None:
        from planner.pricing.query import scope_words

        where = scope_words(p.scope)
        lines.append(
            f"A cheaper option outside {where}: {p.outside.rental.offer.region}, "
            f"{_option_line(p.outside)}; use --scope all."
        )
    reasons: dict[str, list[str]] = {}
    for ex in p.excluded:
        reasons.setdefault(ex.reason, []).append(ex.gpu_model)
    for reason, models in reasons.items():
        lines.append(f"Left out: {', '.join(models)}: {typed(reason)}.")
    if p.unpriced:
        lines.append(f"No prices: {', '.join(p.unpriced)}.")
    if star := star_note(o.rental.offer.gpu_note for o in p.options):
        lines.append(star)
    if p.priced_outside_only:
        from planner.pricing.query import scope_words

        lines.append(
            f"Priced only outside {scope_words(p.scope)}: {', '.join(p.priced_outside_only)} (--scope all "
            "plans them)."
        )
    if p.options:
        lines.append(
            (
                "Hours assume tensor parallelism splits the model evenly, decode at 80% of memory bandwidth or "
                "the inference MFU, whichever is slower"
                if m.task == "inference"
                else "Hours assume the GPUs split the job evenly (ZeRO-3/FSDP) at the default MFU for the task, "
                "GPU generation and model scale (docs/calibration.md)"
            )
            + " (--mfu to change); 'instances' is count x GPUs each. '30d' is the price trend over 30 days."
        )
    lines.extend(age_legend([o.rental.offer for o in p.options]))
    if any(o.rental.gpus > 1 for o in p.options):
        lines.append(
            "'link': how an option's GPUs talk, per GPU model (NVLink is per GPU, both directions; a "
            "PCIe-packaged instance may have less, a bridge joins pairs only); '+ network' and 'network only': "
            "between instances, over the provider's network, not NVLink, so expect a lower MFU; '(one machine)': "
            f"a marketplace's (AutoDL) GPUs rented together on one of its machines (up to {MARKET_MACHINE_GPUS}), "
            "which needs that many idle on one machine."
        )
    return "\n".join(lines)


def _plan_table_row(rank: int, o: Any) -> list[str]:
    r = o.rental
    marks = ", ".join(
        m
        for m, on in (("fastest", o.fastest), ("pareto", o.pareto), (r.availability.words, not r.rentable))
        if on
    )
    return [
        str(rank),
        o.estimate.gpu + ("*" if r.offer.gpu_note else ""),
        str(r.gpus),
        f"{r.instances} x {r.offer.gpus_per_instance:g}",
        o.link[0] or "-",
        f"{r.hours:,.1f}",
        r.offer.provider,
        short(r.offer.region, 14),
        short(r.offer.instance_type, 24),
        r.offer.billing + (" (spot)" if r.offer.interruptible else ""),
        money(r.total_cny),
        money(r.cny_per_gpu_hour),
        r.history.trend if r.history else "-",
        f"{r.offer.observed_at:%Y-%m-%d}",
        age_cell(r.offer),
        marks,
    ]


def _option_line(o: Any) -> str:
    r = o.rental
    link = f"; {o.link[0]}" if o.link[0] else ""
    return (
        f"{r.gpus} x {o.estimate.gpu} for {r.hours:,.1f} h, CNY {money(r.total_cny)} "
        f"({r.instances} x {r.offer.provider} {r.offer.instance_type}, {r.offer.billing}{link})"
    )


# --- planner models ---

MODEL_COLUMNS = (
    "name", "family", "total_params", "active_params", "experts", "experts_per_token", "layers", "hidden",
    "heads", "kv_heads", "head_dim", "attention", "kv_lora_rank", "qk_rope_head_dim", "intermediate",
    "vocab", "context", "aliases", "source",
)  # fmt: skip


@click.command()
@click.option("--family", metavar="NAME", help="Only this family, e.g. Qwen3, DeepSeek, Llama.")
@format_option
def models(family, fmt) -> None:  # noqa: ANN001
    """The model catalog for --model: each model's published architecture and its source.

    Layers, hidden size, attention and KV heads, head dim, vocabulary, total and active parameters,
    experts (MoE), attention type (MHA, GQA, MQA, MLA with its KV latent and RoPE dims) and context
    length, from each model's published config.json (or paper). Any name or alias works with
    `estimate --model` and `plan --model`; for a model not listed, use --params.

    \b
    Examples:
      planner models
      planner models --family Qwen3
      planner models --format json
      planner estimate --model qwen3-30b-a3b --task inference --gpu L20
    """
    from planner.workload.architectures import all_specs

    specs = all_specs()
    if family:
        families = sorted({s.family for s in specs})
        specs = [s for s in specs if s.family.casefold() == family.strip().casefold()]
        if not specs:
            import difflib

            from planner.errors import UnknownNameError

            near = difflib.get_close_matches(family, families, n=3, cutoff=0.4) or families
            raise UnknownNameError("model family", family, near)
    emit(
        [s.to_dict() for s in specs],
        fmt,
        table=_render_models,
        csv=lambda rows: ([r | {"aliases": "|".join(r["aliases"])} for r in rows], MODEL_COLUMNS),
    )


def _render_models(rows: list[dict]) -> str:
    body = []
    for r in rows:
        size = format_count(r["total_params"])
        if r["experts"]:
            size += f" ({format_count(r['active_params'])} active, {r['experts_per_token']}/{r['experts']} experts)"
        kv = (
            str(r["kv_heads"])
            if r["attention"] != "MLA"
            else f"latent {r['kv_lora_rank']}+{r['qk_rope_head_dim']}"
        )
        body.append([r["name"], size, str(r["layers"]), str(r["hidden"]), f"{r['heads']}", kv,
                     str(r["head_dim"]), r["attention"], f"{r['vocab']:,}", f"{r['context']:,}"])  # fmt: skip
    headers = ["model", "parameters", "layers", "hidden", "heads", "KV heads", "head dim", "attention",
               "vocab", "context"]  # fmt: skip
    return "\n".join(
        [
            table(body, headers, align_right=(2, 3, 4, 6, 8, 9)),
            f"{len(rows)} models; sources (each model's config.json) in --format json or csv. "
            "Use a name with `planner estimate --model NAME`; --params N for any other model.",
        ]
    )
