"""``planner estimate``, ``planner plan`` and ``planner tco``: from a workload to memory, GPUs and hours,
to the cheapest way to rent them, to whether buying the cards would pay.

Thin shells over ``planner.estimate`` and ``planner.plan``; ``tco`` is in ``rent_or_buy.py``. Numbers are
parsed by the option types of ``arguments.py``, so ``7B``, ``6.7e9`` and ``50K`` work and nonsense is one
line with a hint (exit 2).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import click

from planner.commands.arguments import Count, Number
from planner.commands.options import billing_option, format_option, gpu_filter_option, provider_option
from planner.commands.rent_or_buy import tco
from planner.errors import UsageError
from planner.output import csv_text, dumps_json, money, short, table
from planner.providers import MARKET_MACHINE_GPUS
from planner.units import format_count

if TYPE_CHECKING:  # pragma: no cover
    from planner.estimate import Estimate
    from planner.plan import Plan

# planner.cli registers estimate, plan and tco in this module; tco lives in rent_or_buy.py.
__all__ = ["estimate", "plan", "tco"]


def workload_options(tokens_required: bool):  # noqa: ANN201 - a decorator
    """The options that describe a job, shared by estimate and plan."""

    def decorate(fn):  # noqa: ANN001, ANN202
        options = [
            click.option(
                "--params",
                required=True,
                type=Count("7B"),
                metavar="N",
                help="Parameters (active ones for MoE): 7B, 6.7e9, 500M.",
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
                help="Model FLOPs utilisation in (0, 1] (default per task and GPU class).",
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
                help="KV heads for the KV cache (GQA, e.g. 8); default: one per attention head.",
            ),
            click.option(
                "--checkpointing/--no-checkpointing",
                default=None,
                help="Gradient checkpointing (default: on for full, lora, qlora; selective recomputation for pretrain).",
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
    "params",
    "task",
    "tokens",
    "precision",
    "mfu",
    "seq_len",
    "batch",
    "kv_heads",
    "checkpointing",
)


def _workload_args(
    params, task, tokens, precision, mfu, seq_len, batch, kv_heads, checkpointing
) -> dict[str, Any]:  # noqa: ANN001
    """The workload options as keyword arguments of ``planner.estimate.estimate``."""
    return dict(
        params=params,
        task=task.strip().lower(),
        tokens=tokens,
        precision=precision.strip().lower() if precision else None,
        mfu=float(mfu) if mfu is not None else None,
        seq_len=seq_len,
        batch=batch,
        kv_heads=kv_heads,
        checkpointing=checkpointing,
    )


# --- planner estimate ---


@click.command()
@workload_options(tokens_required=False)
@click.option("--gpu", metavar="GPU", help="GPU model, e.g. RTX4090 or A100-80GB: GPUs needed and hours.")
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
    fewest GPUs of the chosen model that hold it, FLOPs (6·N·D training, 2·N·D inference), GPU-hours at
    the GPU's dense BF16/FP16 peak × MFU, and the wall-clock hours on K GPUs. Without --tokens, memory
    only; without --gpu, no GPU count or hours.

    \b
    Examples:
      planner estimate --params 7B --tokens 2B --task lora --gpu RTX4090
      planner estimate --params 70B --task qlora --gpu RTXA6000
      planner estimate --params 7B --task pretrain --tokens 2T --gpu A100-80GB --gpus 512 --explain
      planner estimate --params 13B --task inference --seq-len 4096 --batch 8 --format json
    """
    from planner import catalog
    from planner.estimate import estimate as run_estimate

    if gpus is not None and gpu is None:
        raise UsageError("--gpus needs --gpu", "e.g. --gpu A100-80GB --gpus 8")
    if workload["mfu"] is not None and (workload["tokens"] is None or gpu is None):
        raise UsageError(
            "--mfu changes only the hours, which need --tokens and --gpu", "e.g. --tokens 2B --gpu A100-80GB"
        )
    model = catalog.get_model(catalog.canonical_name(gpu)) if gpu else None
    result = run_estimate(gpu=model, gpus=gpus, **workload)
    if fmt == "json":
        click.echo(dumps_json(result.to_dict()))
    elif fmt == "csv":
        click.echo(csv_text([_estimate_row(result)], ESTIMATE_COLUMNS), nl=False)
    else:
        click.echo(render_estimate(result, explain))


ESTIMATE_COLUMNS = (
    "task", "params", "tokens", "precision", "seq_len", "batch", "checkpointing", "memory_gb",
    "weights_gb", "gradients_gb", "optimizer_states_gb", "activations_gb", "kv_cache_gb", "overhead_gb",
    "gpu", "gpus_needed", "gpus", "fits", "flops", "peak_tflops", "mfu", "gpu_hours", "wall_hours",
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
    return f"{e.task} of a {format_count(e.params)}-parameter model{tokens} ({how})"


def render_estimate(e: Estimate, explain: bool = False) -> str:
    s = e.shape
    lines = [
        f"Workload: {_workload_line(e)}",
        f"Shape assumed from N: {s.layers} layers, hidden {s.hidden}, {s.heads} heads, {s.kv_heads} KV heads",
        "",
    ]
    names = {"optimizer_states": "optimizer states", "kv_cache": "KV cache"}
    rows = [[names.get(k, k), f"{v:,.2f}" if v else "-"] for k, v in e.breakdown.items()]
    rows.append(["total", f"{e.memory_gb:,.1f}"])
    lines.append(table(rows, ["memory (all GPUs)", "GB"], align_right=(1,)))
    if e.flops is not None:
        per = "2·N·D" if e.task == "inference" else "6·N·D"
        lines += ["", f"FLOPs: {e.flops:.2e} ({per})"]
    if e.gpu is not None:
        tflops = f"{e.peak_tflops:g} dense TFLOPS" if e.peak_tflops else "no TFLOPS figure"
        lines += ["", f"On {e.gpu} ({e.gpu_memory_gb:g} GB, {tflops}):"]
        split = " each, split evenly" if e.gpus_needed and e.gpus_needed > 1 else ""
        per_gpu = e.memory_gb / e.gpus_needed if e.gpus_needed else e.memory_gb
        lines.append(f"  GPUs needed       {e.gpus_needed} ({per_gpu:,.1f} of {e.gpu_memory_gb:g} GB{split})")
        if e.gpu_hours is not None and e.wall_hours is not None:
            lines.append(f"  MFU               {e.mfu:g} ({e.mfu_source}; --mfu to change)")
            lines.append(
                f"  GPU-hours         {e.gpu_hours:,.1f}"
                + (" (memory-bandwidth bound)" if e.bound == "memory bandwidth" else "")
            )
            lines.append(
                f"  Wall-clock hours  {e.wall_hours:,.1f} on {e.gpus} GPU(s) ({e.wall_hours / 24:,.1f} days)"
            )
    for note in e.notes:
        lines.append(f"Note: {note}")
    if e.tokens is None:
        lines.append("Give --tokens D (and --gpu) for FLOPs, GPU-hours and wall-clock hours.")
    elif e.gpu is None:
        lines.append(
            "Give --gpu G for the GPUs needed and the hours, or run `planner plan` to compare every GPU."
        )
    if explain:
        from planner.estimate import explain as explain_lines

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
    fmt,
) -> None:  # noqa: ANN001
    """Every GPU model that can run a job, with the cheapest way to rent it, cheapest first.

    For each GPU model with prices: the fewest GPUs that hold the job (with --deadline-hours, enough
    to finish in time), the wall-clock hours, and the cheapest provider, instance and billing mode from
    the price database. Whole instances are rented and all their GPUs work on the job. The fastest
    option is marked, and so is every Pareto option (no other option is both cheaper and faster).
    Beside every multi-GPU option, the link between its GPUs: NVLink and its bandwidth (cut on the
    A800/H800), PCIe only, and the network between instances.

    \b
    Examples:
      planner plan --params 7B --tokens 1B --task lora
      planner plan --params 70B --tokens 20B --task full --gpus-max 64
      planner plan --params 13B --tokens 5B --task full --budget 200K --deadline-hours 72
      planner plan --params 7B --tokens 1B --task qlora --gpu 4090 --gpu A100 --format json
    """
    from planner import plan as planning
    from planner.pricing import OfferQuery

    job = planning.Workload(**workload)
    job.on()  # refuse a bad workload before touching the database
    planning.check_plan_filters(gpus_max, budget, deadline_hours)
    query = OfferQuery.build(gpus, providers, (), billing)
    engine, loaded = app.reading_engine()
    if loaded:
        click.echo(f"Database empty: loaded the {loaded.label} ({loaded.rows} prices).", err=True)
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
    if fmt == "json":
        click.echo(dumps_json(result.to_dict()))
    elif fmt == "csv":
        click.echo(
            csv_text([_plan_row(i, o) for i, o in enumerate(result.options, 1)], PLAN_COLUMNS), nl=False
        )
    else:
        click.echo(render_plan(result))


PLAN_COLUMNS = (
    "rank", "gpu_model", "gpus_needed", "gpus", "gpus_per_instance", "instances", "wall_hours",
    "gpu_hours", "mfu", "provider", "region", "instance_type", "billing", "unit_price", "unit", "currency",
    "total_cny", "cny_per_gpu_hour", "link", "nvlink_gbps_bidir", "fastest", "pareto", "trend",
    "observed_at", "source", "from_snapshot",
)  # fmt: skip


def _plan_row(rank: int, o: Any) -> dict[str, Any]:
    from planner.rental import rental_dict

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
    )
    row["link"], row["nvlink_gbps_bidir"] = o.link
    return row


def render_plan(p: Plan) -> str:
    m = p.memory
    lines = [f"Plan: {_workload_line(m)}: {m.memory_gb:,.1f} GB in all, {m.flops:.2e} FLOPs"]
    filters = []
    if p.gpus_max:
        filters.append(f"at most {p.gpus_max} GPUs")
    if p.budget_cny is not None:
        filters.append(f"at most {money(p.budget_cny, 0)} CNY")
    if p.deadline_hours is not None:
        filters.append(f"done within {p.deadline_hours:g} h")
    if filters:
        lines.append("Limits: " + ", ".join(filters))
    if p.from_snapshot:
        first = min(o.rental.offer.observed_at for o in p.options)
        lines.append(
            f"Prices from the bundled snapshot (observed {first:%Y-%m-%d} to {p.as_of:%Y-%m-%d}); "
            "run `planner refresh` for today's prices."
        )
    if not p.options:
        lines.append(
            "No GPU with prices can run this job within the limits." if p.excluded else "No prices match."
        )
    else:
        rows = [_plan_table_row(i, o) for i, o in enumerate(p.options, 1)]
        headers = ["#", "gpu", "GPUs", "instances", "link", "wall h", "provider", "region", "instance",
                   "billing", "total CNY", "CNY/GPU-h", "30d", "observed", "marks"]  # fmt: skip
        lines += ["", table(rows, headers, align_right=(0, 2, 5, 10, 11))]
        best, fastest = p.cheapest, next(o for o in p.options if o.fastest)
        if best is None:
            lines += ["", "Cheapest: none can be rented now: every option is sold out or short of idle GPUs "
                      f"at its provider's last refresh (the cheapest: {_option_line(p.options[0])})."]  # fmt: skip
        else:
            lines += ["", f"Cheapest: {_option_line(best)}"]
        if fastest is not best:
            lines.append(
                f"Fastest:  {_option_line(fastest)}" + ("" if fastest.rental.rentable else " (sold out)")
            )
        pareto = [o.rental.offer.gpu_model for o in p.options if o.pareto]
        lines.append(f"Pareto (no other option is both cheaper and faster): {', '.join(pareto)}")
    reasons: dict[str, list[str]] = {}
    for ex in p.excluded:
        reasons.setdefault(ex.reason, []).append(ex.gpu_model)
    for reason, models in reasons.items():
        lines.append(f"Left out: {', '.join(models)}: {reason}.")
    if p.unpriced:
        lines.append(f"No prices: {', '.join(p.unpriced)}.")
    if p.options:
        lines.append(
            "Hours assume the GPUs split the job evenly (ZeRO-3/FSDP) at the default MFU for the task and GPU "
            "class (--mfu to change); 'instances' is count x GPUs each. '30d' is the price trend over 30 days."
        )
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
        m for m, on in (("fastest", o.fastest), ("pareto", o.pareto), ("sold out", not r.rentable)) if on
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
        marks,
    ]


def _option_line(o: Any) -> str:
    r = o.rental
    link = f"; {o.link[0]}" if o.link[0] else ""
    return (
        f"{r.gpus} x {o.estimate.gpu} for {r.hours:,.1f} h, CNY {money(r.total_cny)} "
        f"({r.instances} x {r.offer.provider} {r.offer.instance_type}, {r.offer.billing}{link})"
    )
