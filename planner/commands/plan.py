"""``planner plan``: from a workload to the cheapest way to rent the GPUs it needs, every GPU model that
can run it compared.

A thin shell over ``planner.answers.plan``; the workload options are ``workload_options.py``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from planner.answers.near import would_match
from planner.answers.plan import PlanRequest, plan_for
from planner.answers.rental import rental_dict
from planner.commands.arguments import Count
from planner.commands.emit import emit, reading_engine
from planner.commands.options import (
    billing_option,
    format_option,
    gpu_filter_option,
    provider_option,
    scope_option,
)
from planner.commands.workload_options import workload_options
from planner.views.plan import render_plan

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.plan import PlanOption


@click.command()
@workload_options(tokens_required=False)
@click.option("--gpus-max", type=Count("8", whole=True), metavar="K", help="Use at most K GPUs.")
@click.option("--budget", type=Count("50K"), metavar="CNY", help="Drop options costing more than this (CNY).")
@click.option(
    "--deadline-hours",
    type=Count("72"),
    metavar="H",
    help="Finish within H wall-clock hours, at least 1 (more GPUs if need be).",
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
    Every option is one workload computation: its hours are the estimate's wall-clock hours on the GPUs
    it rents (what `planner estimate --gpus K` says) and its GPU-hours are GPUs x hours. Options that can be
    rented now come first, each part ranked by total CNY. For --task inference that is the same order as "CNY/M tok (this job)" (the
    total / the tokens, whole billing periods included); "CNY/M tok (steady state)" is the paid
    GPU-hour price x the GPU-hours per million tokens, never more than this job's. Serving GPU counts
    are those tensor parallelism can split a model over: 1, 2, 4, 8, then multiples of 8.

    \b
    Serving: --concurrency N (or --requests-per-s R) instead of --tokens sizes a service kept online
    --hours-per-day H for N streams of --prompt-tokens P and --output-tokens O at --stream-tokens-per-s
    S or more each: per GPU model, the replicas and GPUs that hold and keep up with it, and the cheapest
    month of them online, with CNY per million output tokens at that load; ranked by CNY a month.

    \b
    Examples:
      planner plan --model qwen2.5-72b --task inference --concurrency 20 --hours-per-day 8
      planner plan --model qwen2.5-7b --task inference --tokens 1B
      planner plan --model qwen2.5-7b --task inference --tokens 1B --batch 32
      planner plan --model llama-3.1-8b --tokens 1B --task lora
      planner plan --params 7B --tokens 1B --task lora
      planner plan --params 70B --tokens 20B --task full --gpus-max 64
      planner plan --params 13B --tokens 5B --task full --budget 200K --deadline-hours 72
      planner plan --params 13B --tokens 1B --task full --zero-stage 2 --cpu-offload
      planner plan --params 7B --tokens 1B --task qlora --gpu 4090 --gpu A100 --format json
    """
    flags = {"gpus_max": gpus_max, "budget": budget, "deadline_hours": deadline_hours, "gpus": gpus,
             "providers": providers, "billing": billing, "scope": scope}  # fmt: skip
    request = PlanRequest.from_flags(workload | flags, app.config)  # refused here before the database
    engine = reading_engine(app)
    with engine.connect() as conn:
        result = plan_for(conn, request, app.config.section("fx"))
        near = None if result.options or result.excluded else would_match(conn, request.query)
    emit(
        result,
        fmt,
        table=lambda r: render_plan(r, near),
        csv=lambda r: ([_plan_row(i, o) for i, o in enumerate(r.options, 1)], PLAN_COLUMNS),
    )
    if not result.options:  # nothing to recommend: not an answer a script may act on (docs/commands.md)
        click.get_current_context().exit(1)


PLAN_COLUMNS = (
    "rank", "gpu_model", "gpus_needed", "gpus", "gpus_per_instance", "instances", "wall_hours",
    "gpu_hours", "mfu", "provider", "region", "instance_type", "billing", "unit_price", "unit", "currency",
    "total_cny", "cny_per_gpu_hour", "stock_state", "unavailable", "link", "nvlink_gbps_bidir", "fastest",
    "pareto", "trend",
    "observed_at", "age_days", "source", "from_snapshot", "cny_per_million_tokens_job",
    "cny_per_million_tokens_steady_state",
)  # fmt: skip


def _plan_row(rank: int, o: PlanOption) -> dict[str, Any]:
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
