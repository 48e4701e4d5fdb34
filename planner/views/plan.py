"""``planner plan`` for people: the job, one row per GPU model that can run it, the cheapest, the fastest
and the Pareto options, what was left out and why, and the legend."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.output import money, short, table
from planner.pricing.freshness import age_cell, age_legend, prices_line, stale_warning
from planner.pricing.offer import NOTHING_RENTABLE
from planner.pricing.query import scope_words
from planner.pricing.words import ONE_MACHINE_NOTE
from planner.views.estimate import memory_notes, workload_line
from planner.views.notes import no_match_line, star_note
from planner.views.typed import typed

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.near import NearMatch
    from planner.answers.plan import Plan, PlanOption


def _per_m(cny: float | None) -> str:
    return f"{cny:,.2f}" if cny is not None else "-"


def render_plan(p: Plan, near: NearMatch | None = None) -> str:
    """The plan for people; ``near`` (no option matched): what is stored near the query, as a hint."""
    if p.workload.serving is not None:
        return render_serving_plan(p)
    m = p.memory
    lines = [f"Plan: {workload_line(m)}: {m.memory_gb:,.1f} GB in all, {m.flops:.2e} FLOPs"]
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
            "No GPU with prices can run this job within the limits."
            if p.excluded
            else no_match_line("No prices match.", near, variants_flag=False)
        )
    else:
        rows = [_plan_table_row(i, o) for i, o in enumerate(p.options, 1)]
        headers = ["#", "gpu", "GPUs", "instances", "link", "wall h", "provider", "region", "instance",
                   "billing", "total CNY", "CNY/GPU-h", f"{p.history_days}d", "observed", "age", "marks"]  # fmt: skip
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
                "Ranked by total CNY, the same order as CNY per million generated tokens in this job (total ÷ "
                "tokens, whole billing periods included); steady state is the paid GPU-hour price × GPU-hours per "
                "token, what a server kept busy all period pays, never more than this job's. Each option's hours "
                "and GPU-hours (GPUs × hours) are `planner estimate --gpus` on the GPUs it rents. "
                f"Decode at batch {m.batch}, context {m.seq_len} (raise --batch for a "
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
        where = scope_words(p.scope)
        lines.append(
            f"A cheaper option outside {where}: {p.outside.rental.offer.region}, "
            f"{_option_line(p.outside)}; use --scope all."
        )
    substituted: dict[str, list[str]] = {}  # precision run instead -> GPU models (a default they lack)
    for o in p.options:
        if o.estimate.precision != m.precision and o.estimate.gpu not in substituted.get(
            o.estimate.precision, []
        ):
            substituted.setdefault(o.estimate.precision, []).append(o.estimate.gpu or "")
    for ran, gpus in substituted.items():
        lines.append(
            f"No {m.precision.upper()} on {', '.join(gpus)}: run in {ran.upper()} (the same memory)."
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
                + (
                    "; a fine-tuning step takes the longer of its compute and its collectives over each option's "
                    "links (NVLink or PCIe inside a machine, an assumed 25 Gbit/s network between machines: "
                    "--network-gbps)"
                    if m.task in ("full", "lora", "qlora") and any(o.rental.gpus > 1 for o in p.options)
                    else ""
                )
            )
            + f" (--mfu to change); 'instances' is count x GPUs each. '{p.history_days}d' is the price trend"
            f" over {p.history_days} days."
        )
    lines.extend(age_legend([o.rental.offer for o in p.options]))
    if any(o.rental.gpus > 1 for o in p.options):
        lines.append(
            "'link': how an option's GPUs talk, per GPU model (NVLink is per GPU, both directions; a "
            "PCIe-packaged instance may have less, a bridge joins pairs only); '+ network' and 'network only': "
            "between instances, over the provider's network, not NVLink, so expect a lower MFU; '(one machine)': "
            f"{ONE_MACHINE_NOTE}"
        )
    return "\n".join(lines)


def _plan_table_row(rank: int, o: PlanOption) -> list[str]:
    r = o.rental
    marks = ", ".join(
        m
        for m, on in (("fastest", o.fastest), ("pareto", o.pareto), (r.availability.words, not r.rentable))
        if on
    )
    return [
        str(rank),
        f"{o.estimate.gpu}{'*' if r.offer.gpu_note else ''}",  # an option's estimate is on its GPU
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


def _option_line(o: PlanOption) -> str:
    r = o.rental
    link = f"; {o.link[0]}" if o.link[0] else ""
    return (
        f"{r.gpus} x {o.estimate.gpu} for {r.hours:,.1f} h, CNY {money(r.total_cny)} "
        f"({r.instances} x {r.offer.provider} {r.offer.instance_type}, {r.offer.billing}{link})"
    )


def render_serving_plan(p: Plan) -> str:
    """A serving plan: per GPU model, the replicas that hold and keep up with the load, and a month online."""
    load = p.workload.serving
    assert load is not None
    m = p.memory
    name = m.model or f"a {m.params / 1e9:,.1f}B-parameter model"
    lines = [f"Serving plan: {name} ({m.precision}): {load.describe()}"]
    output, prompt = load.tokens_per_month()
    lines.append(
        f"Load: {load.output_tokens_per_s:,.0f} output tokens/s while online: {output / 1e6:,.0f}M output and "
        f"{prompt / 1e6:,.0f}M prompt tokens a month."
    )
    if not p.options:
        lines.append(
            "No GPU with prices can serve this load within the limits." if p.excluded else "No prices match."
        )
    else:
        lines.append(prices_line([o.rental.offer for o in p.options]))
        rows = []
        for i, o in enumerate(p.options, 1):
            size, r = o.serving, o.rental
            assert size is not None
            out, every = size.cny_per_million_tokens(float(r.total_cny))
            rows.append([
                str(i), f"{o.estimate.gpu}{'*' if r.offer.gpu_note else ''}", str(size.gpus),
                f"{size.replicas} x {size.gpus_per_replica}", str(size.streams_per_replica),
                f"{size.stream_tokens_per_s:,.1f}", str(r.gpus), f"{r.instances} x {r.offer.gpus_per_instance:g}",
                r.offer.provider, short(r.offer.instance_type, 24), r.offer.billing, money(r.total_cny),
                f"{out:,.2f}", f"{every:,.2f}", age_cell(r.offer),
            ])  # fmt: skip
        headers = ["#", "gpu", "GPUs", "replicas", "streams each", "tok/s each", "rented", "instances",
                   "provider", "instance", "billing", "CNY/month", "CNY/M out tok", "CNY/M tok", "age"]  # fmt: skip
        lines += ["", table(rows, headers, align_right=(0, 2, 4, 5, 6, 11, 12, 13)), ""]
        best = p.cheapest or p.options[0]
        assert best.serving is not None
        out, every = best.serving.cny_per_million_tokens(float(best.rental.total_cny))
        lines.append(
            f"Cheapest: {best.rental.gpus} x {best.estimate.gpu} ({best.serving.replicas} replica(s) of "
            f"{best.serving.gpus_per_replica}), CNY {money(best.rental.total_cny)} a month, {out:,.2f} CNY per million "
            f"output tokens ({every:,.2f} per million tokens with the prompts) at this load."
        )
        lines.append(
            "GPUs: the fewest that hold each replica's weights and its streams' KV cache and keep every stream at "
            f"≥ {load.stream_tokens_per_s:g} tokens/s once prompts take their share (prefill at the inference MFU, "
            "decode at 80% of memory bandwidth); 'rented' is what whole instances give. CNY/month: those GPUs "
            f"for {load.online_hours_per_month:,.0f} h online (a monthly rental pays the whole month)."
        )
    reasons: dict[str, list[str]] = {}
    for ex in p.excluded:
        reasons.setdefault(ex.reason, []).append(ex.gpu_model)
    for reason, models in reasons.items():
        lines.append(f"Left out: {', '.join(models)}: {typed(reason)}.")
    if p.unpriced:
        lines.append(f"No prices: {', '.join(p.unpriced)}.")
    lines.extend(age_legend([o.rental.offer for o in p.options]))
    return "\n".join(lines)
