"""Plans: every GPU model that can run a workload, the GPUs it needs, the hours, and the cheapest way to
rent them (``planner.answers.rental``), cheapest first, with the fastest and the Pareto options marked.

All latest prices come from one indexed query for every GPU model at once (``db.queries.latest_prices``);
price history and stock are read only for the options shown.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from planner import catalog
from planner.answers.rental import rental_dict, rentals
from planner.errors import QuantityError, UsageError
from planner.pricing.cost import (
    MAX_GPUS,
    MAX_HOURS,
    JobCost,
    Offer,
    OfferQuery,
    offers_in_and_out_of_scope,
)
from planner.pricing.offer import NOTHING_RENTABLE
from planner.pricing.query import chosen_scope
from planner.pricing.query import models as models_of
from planner.pricing.rank import LeftOut, rank, rank_costs, stocked_to_top_each
from planner.pricing.recent import HISTORY_DAYS, recent_prices
from planner.wording import Phrase
from planner.workload.estimate import Estimate, estimate
from planner.workload.inference import (
    cny_per_million_tokens,
    job_cny_per_million_tokens,
    paid_cny_per_gpu_hour,
    serving_gpus,
)
from planner.workload.memory import DEFAULT_ZERO_STAGE, replicated_gb
from planner.workload.precision import PrecisionError, nearest_precision
from planner.workload.serving import ServingLoad, ServingSize, size_serving

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection

    from planner.catalog import GpuModel
    from planner.config import Config


# The shortest deadline a plan takes: providers bill at least an hour and machines take minutes to start,
# so a deadline under an hour plans tens of thousands of GPUs for seconds of work (issue 25).
MIN_DEADLINE_HOURS = 1.0


@dataclass(frozen=True)
class Workload:
    """The job ``planner plan`` and ``planner estimate`` describe (see ``planner.workload.estimate.estimate``)."""

    params: float | None
    task: str
    tokens: float | None
    precision: str | None = None
    seq_len: int | None = None
    batch: int | None = None
    mfu: float | None = None
    kv_heads: int | None = None
    checkpointing: bool | None = None
    model: str | None = None  # a planner.workload.architectures catalog name, instead of params
    lora_rank: int | None = None
    optimizer_8bit: bool = False
    overhead: float | None = None
    zero_stage: int | None = None  # ZeRO stage 0-3 (None: estimate's default, 3)
    cpu_offload: bool = False  # gradients and optimizer states in CPU memory (ZeRO-Offload)
    network_gbps: float | None = None  # Gbit/s between machines (planner.workload.communication)
    active_params: float | None = None  # an MoE given by its parameters: those one token computes with
    experts: int | None = None
    experts_per_token: int | None = None
    loss: str | None = None  # fused, chunked or plain (training)
    pure_bf16: bool = False  # full training without an fp32 master copy
    # Serving (planner.workload.serving): a load kept online instead of a number of tokens.
    concurrency: int | None = None
    requests_per_s: float | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    hours_per_day: float | None = None
    stream_tokens_per_s: float | None = None

    @property
    def serving(self) -> ServingLoad | None:
        """The serving load, when the workload is one (a concurrency or a request rate was given)."""
        if self.concurrency is None and self.requests_per_s is None:
            return None
        defaults = ServingLoad.__dataclass_fields__
        return ServingLoad(
            self.concurrency,
            self.requests_per_s,
            self.prompt_tokens or defaults["prompt_tokens"].default,  # type: ignore[arg-type]
            self.output_tokens or defaults["output_tokens"].default,  # type: ignore[arg-type]
            self.hours_per_day or defaults["hours_per_day"].default,  # type: ignore[arg-type]
            self.stream_tokens_per_s or defaults["stream_tokens_per_s"].default,  # type: ignore[arg-type]
        )

    def replica(self, gpu: GpuModel, batch: int) -> Estimate:
        """One serving replica on ``gpu`` holding ``batch`` streams at the load's full context."""
        load = self.serving
        assert load is not None
        return replace(self, seq_len=load.context, batch=batch, tokens=None).on(gpu)

    def on(
        self, gpu: GpuModel | None = None, gpus: int | None = None, gpus_per_machine: int | None = None
    ) -> Estimate:
        return estimate(
            self.params,
            self.task,
            tokens=self.tokens,
            gpu=gpu,
            gpus=gpus,
            precision=self.precision,
            mfu=self.mfu,
            seq_len=self.seq_len,
            batch=self.batch,
            kv_heads=self.kv_heads,
            checkpointing=self.checkpointing,
            model=self.model,
            lora_rank=self.lora_rank,
            optimizer_8bit=self.optimizer_8bit,
            overhead=self.overhead,
            zero_stage=self.zero_stage,
            cpu_offload=self.cpu_offload,
            gpus_per_machine=gpus_per_machine,
            network_gbps=self.network_gbps,
            active_params=self.active_params,
            experts=self.experts,
            experts_per_token=self.experts_per_token,
            loss=self.loss,
            pure_bf16=self.pure_bf16,
        )


@dataclass(frozen=True)
class PlanRequest:
    """What ``planner plan`` asks: a workload, the limits on its options and the offers to consider
    (``plan``'s arguments, as one record)."""

    workload: Workload
    query: OfferQuery = field(default_factory=OfferQuery)
    gpus_max: int | None = None
    budget_cny: Decimal | float | None = None
    deadline_hours: float | None = None
    history_days: int = HISTORY_DAYS

    @classmethod
    def from_flags(cls, given: Mapping[str, Any], config: Config) -> PlanRequest:
        """The request a command's flags make, checked before any database work.

        ``given`` holds the flags, None or absent for one not typed: the :class:`Workload` fields,
        ``gpus_max``, ``budget``, ``deadline_hours``, and the offers' ``gpus`` (GPU names), ``providers``,
        ``billing`` and ``scope`` as ``OfferQuery.build`` takes them. ``scope`` not typed comes from
        ``[quote] scope`` of ``config``, ``history_days`` from ``[quote]`` always.
        """
        workload = Workload(**{f.name: given[f.name] for f in fields(Workload) if f.name in given})
        workload.on()  # refuse a bad workload first
        check_serving(workload, given.get("deadline_hours"))
        gpus_max, budget, deadline = given.get("gpus_max"), given.get("budget"), given.get("deadline_hours")
        check_plan_filters(gpus_max, budget, deadline)
        query = OfferQuery.build(
            given.get("gpus") or (),
            given.get("providers") or (),
            (),
            given.get("billing") or (),
            scope=chosen_scope(given.get("scope"), config),
        )
        return cls(
            workload,
            query,
            gpus_max=gpus_max,
            budget_cny=budget,
            deadline_hours=float(deadline) if deadline is not None else None,
            history_days=config.section("quote")["history_days"],
        )


def plan_for(conn: Connection, request: PlanRequest, fx: Mapping[str, object]) -> Plan:
    """:func:`plan` of a :class:`PlanRequest`."""
    return plan(
        conn,
        request.workload,
        fx,
        gpus_max=request.gpus_max,
        budget_cny=request.budget_cny,
        deadline_hours=request.deadline_hours,
        query=request.query,
        history_days=request.history_days,
    )


@dataclass(frozen=True)
class PlanOption:
    """One GPU model's cheapest rental for the workload, and the estimate on the GPUs it runs on."""

    estimate: Estimate
    rental: JobCost  # the offer, the GPUs and hours it runs on, the total
    gpus_needed: int  # fewest GPUs that hold the job (and meet the deadline, if one was given)
    fastest: bool = False
    pareto: bool = False  # no other option is both cheaper and faster
    # Inference: CNY per million generated tokens in this job (its total ÷ tokens, the ranking) and in
    # steady state (the paid GPU-hour rate, without the unused part of whole periods).
    cny_per_million_tokens_job: float | None = None
    cny_per_million_tokens_steady_state: float | None = None
    serving: ServingSize | None = None  # a serving plan: replicas, streams, tokens a month

    @property
    def link(self) -> tuple[str | None, float | None]:
        """(interconnect label, NVLink GB/s in use) of the option's GPUs (``interconnect.link_between``)."""
        return self.rental.link

    def to_dict(self) -> dict[str, Any]:
        e = self.estimate
        interconnect, nvlink = self.link
        return {
            "gpu_model": e.gpu,
            "china_variant": bool(catalog.get_model(e.gpu).variant_of) if e.gpu else False,
            "gpus_needed": self.gpus_needed,
            "gpus": self.rental.gpus,
            "gpu_memory_gb": e.gpu_memory_gb,
            "precision": e.precision,  # the workload's, or the nearest this GPU has (BF16 → FP16 on a V100)
            "peak_tflops": e.peak_tflops,
            "mfu": e.mfu,
            "gpu_hours": e.gpu_hours,
            "wall_hours": self.rental.hours,
            "total_cny": self.rental.total_cny.quantize(Decimal("0.01")),
            "cny_per_gpu_hour": self.rental.cny_per_gpu_hour.quantize(Decimal("0.0001")),
            "stock_state": self.rental.availability.value,
            "link": interconnect,
            "nvlink_gbps_bidir": nvlink,
            "fastest": self.fastest,
            "pareto": self.pareto,
            "cny_per_million_tokens_job": self.cny_per_million_tokens_job,
            "cny_per_million_tokens_steady_state": self.cny_per_million_tokens_steady_state,
            "serving": self._serving_dict(),
            "rental": rental_dict(self.rental),
        }

    def _serving_dict(self) -> dict[str, Any] | None:
        if self.serving is None:
            return None
        monthly = float(self.rental.total_cny)
        out, every = self.serving.cny_per_million_tokens(monthly)
        return self.serving.to_dict() | {
            "gpus_rented": self.rental.gpus,
            "cny_per_month": round(monthly, 2),
            "cny_per_million_output_tokens": out,
            "cny_per_million_tokens": every,
        }


@dataclass(frozen=True)
class Plan:
    workload: Workload
    memory: Estimate  # the workload without a GPU: memory and FLOPs
    options: tuple[PlanOption, ...]  # cheapest first
    excluded: tuple[LeftOut, ...]  # GPU models with prices that were left out, and why
    unpriced: tuple[str, ...]  # GPU models without any matching price
    gpus_max: int | None = None
    budget_cny: Decimal | None = None
    deadline_hours: float | None = None
    scope: str = "all"
    outside: PlanOption | None = None  # a cheaper option outside ``scope``, not ranked among options
    priced_outside_only: tuple[str, ...] = ()  # GPU models with prices outside ``scope`` only
    history_days: int = HISTORY_DAYS  # the window of each option's price trend ([quote] history_days)

    @property
    def as_of(self) -> dt.datetime | None:
        return max((o.rental.offer.observed_at for o in self.options), default=None)

    @property
    def from_snapshot(self) -> bool:
        return any(o.rental.offer.from_snapshot for o in self.options)

    @property
    def cheapest(self) -> PlanOption | None:
        """The cheapest option that can be rented now (options are ranked rentable first)."""
        return next((o for o in self.options if o.rental.rentable), None)

    def to_dict(self) -> dict[str, Any]:
        m = self.memory
        return {
            "workload": {
                "model": m.model,
                "params": m.params,
                "active_params": m.active_params,
                "task": m.task,
                "tokens": m.tokens,
                "precision": m.precision,
                "seq_len": m.seq_len,
                "batch": m.batch,
                "checkpointing": m.checkpointing,
                "zero_stage": m.zero_stage,
                "cpu_offload_gb": m.cpu_offload_gb,
                "memory_gb": m.memory_gb,
                "breakdown": m.breakdown,
                "flops": m.flops,
            },
            "filters": {
                "gpus_max": self.gpus_max,
                "budget_cny": self.budget_cny,
                "deadline_hours": self.deadline_hours,
                "scope": self.scope,
            },
            "as_of": self.as_of,
            "from_snapshot": self.from_snapshot,
            "cheapest": self.options.index(self.cheapest) + 1 if self.cheapest else None,
            "no_cheapest": None if self.cheapest or not self.options else NOTHING_RENTABLE,
            "options": [o.to_dict() for o in self.options],
            "cheaper_outside_scope": self.outside.to_dict() if self.outside else None,
            "excluded": [e.to_dict() for e in self.excluded],
            "unpriced": list(self.unpriced),
            "priced_outside_scope_only": list(self.priced_outside_only),
        }


def plan(
    conn: Connection,
    workload: Workload,
    fx: Mapping[str, object],
    *,
    gpus_max: int | None = None,
    budget_cny: Decimal | float | None = None,
    deadline_hours: float | None = None,
    query: OfferQuery | None = None,
    history_days: int = HISTORY_DAYS,
) -> Plan:
    """Every GPU model with prices that can run ``workload``, its cheapest rental, cheapest first,
    among the offers ``query`` admits (``OfferQuery.build``: GPU models, providers, regions, billing).

    Per model: the fewest GPUs that hold the job (with ``deadline_hours``, also enough to finish in
    time, at most ``gpus_max``), the hours on them, and the cheapest instance and billing mode. Options
    over ``budget_cny`` are dropped. ``fastest`` and ``pareto`` mark the shown options. With a region
    scope, the same plan over the offers outside it gives ``outside``: its first rentable option, when
    that beats the cheapest inside on the total (for inference, the same as this job's CNY per million
    tokens).
    """
    check_serving(workload, deadline_hours)
    if workload.tokens is None and workload.serving is None:
        raise UsageError(
            "a plan needs the tokens the job processes, or a serving load",
            Phrase("e.g. {tokens} 2B, or {task} inference {concurrency} 20"),
        )
    memory = workload.on()  # checks the workload
    budget, deadline = check_plan_filters(gpus_max, budget_cny, deadline_hours)
    query = query if query is not None else OfferQuery()
    models = models_of(query)[0]
    inside, outside = offers_in_and_out_of_scope(conn, query, fx, stock=False)
    away_models = {o.gpu_model for o in outside}
    by_model = _by_model(inside)
    excluded: list[LeftOut] = []
    options = _options(conn, workload, models, by_model, gpus_max, deadline, budget, excluded)
    cheaper = None
    if outside:  # the same plan on the offers outside the scope: its first rentable option, if cheaper
        away = _options(conn, workload, models, _by_model(outside), gpus_max, deadline, budget, [])
        first = next((o for o in away if o.rental.rentable), None)
        best = next((o for o in options if o.rental.rentable), None)
        if first is not None and (best is None or _order_key(first) < _order_key(best)):
            cheaper = first
    recent = recent_prices(conn, [o.rental.offer for o in options], history_days)
    options = [replace(o, rental=replace(o.rental, history=recent.get(o.rental.offer.key))) for o in options]
    return Plan(
        workload=workload,
        memory=memory,
        options=tuple(mark(options)),
        excluded=tuple(excluded),
        unpriced=tuple(m.name for m in models if m.name not in by_model and m.name not in away_models),
        priced_outside_only=tuple(m.name for m in models if m.name not in by_model and m.name in away_models),
        gpus_max=gpus_max,
        budget_cny=budget,
        deadline_hours=deadline,
        scope=query.scope,
        outside=cheaper,
        history_days=history_days,
    )


def _by_model(offers: Sequence[Offer]) -> dict[str, list[Offer]]:
    by_model: dict[str, list[Offer]] = {}
    for offer in offers:
        by_model.setdefault(offer.gpu_model, []).append(offer)
    return by_model


def _options(
    conn: Connection,
    workload: Workload,
    models: Sequence[GpuModel],
    by_model: Mapping[str, list[Offer]],
    gpus_max: int | None,
    deadline: float | None,
    budget: Decimal | None,
    excluded: list[LeftOut],
) -> list[PlanOption]:
    """Each model's cheapest rental among ``by_model``'s offers, ranked; models left out go to
    ``excluded`` with the reason."""
    candidates: dict[str, tuple[GpuModel, int, list[JobCost]]] = {}
    sizes: dict[str, ServingSize] = {}  # serving: each model's replicas and streams
    for model in models:
        if model.name not in by_model:
            continue
        found: tuple[int, list[JobCost]] | str
        if workload.serving is not None:
            served = _serve_for(workload, model, by_model[model.name], gpus_max)
            if not isinstance(served, str):
                sizes[model.name] = served[2]
                served = served[:2]  # type: ignore[assignment]
            found = served  # type: ignore[assignment]
        else:
            found = _work_for(workload, model, by_model[model.name], gpus_max, deadline)
        if isinstance(found, str):
            excluded.append(LeftOut(model.name, found))
        else:
            candidates[model.name] = (model, found[0], found[1])
    # Stock is read for each model's cheapest rentals only, as far as the first that can be rented
    # (one query a round for every model).
    costed = [costs for _, _, costs in candidates.values()]
    options: list[PlanOption] = []
    stocked = stocked_to_top_each(conn, costed, 1)
    for (name, (model, needed, _)), costs in zip(candidates.items(), stocked, strict=True):
        best = rank_costs(costs)[0]
        if budget is not None and best.total_cny > budget:
            excluded.append(LeftOut(name, f"cheapest is {best.total_cny:,.2f} CNY, over the budget"))
        elif name in sizes:
            size = sizes[name]
            out, _ = size.cny_per_million_tokens(float(best.total_cny))
            options.append(
                PlanOption(size.replica, best, needed, cny_per_million_tokens_job=out, serving=size)
            )
        else:
            on = workload.on(model, best.gpus, _per_machine(best.offer, best.gpus))
            job, steady = per_million_tokens(on, best)
            options.append(
                PlanOption(
                    on,
                    best,
                    needed,
                    cny_per_million_tokens_job=job,
                    cny_per_million_tokens_steady_state=steady,
                )
            )
    # By total; for inference that is by this job's CNY per million tokens (total ÷ tokens), so the two agree.
    return rank(options, lambda o: o.rental)


def _order_key(option: PlanOption) -> tuple:
    """What plan ranks by: the total (for inference the same order as this job's CNY per million tokens,
    the total ÷ the tokens)."""
    return (option.rental.total_cny,)


def per_million_tokens(e: Estimate, rental: JobCost) -> tuple[float | None, float | None]:
    """Inference: (CNY per million generated tokens in this job, in steady state); (None, None) for
    training. See planner.workload.inference.job_cny_per_million_tokens and cny_per_million_tokens."""
    if e.task != "inference" or e.gpu_hours is None or not e.tokens:
        return None, None
    rate = paid_cny_per_gpu_hour(rental.total_cny, rental.units_paid, rental.offer.billing, rental.gpus)
    return job_cny_per_million_tokens(rental.total_cny, e.tokens), cny_per_million_tokens(
        rate, e.gpu_hours, e.tokens
    )


def check_plan_filters(
    gpus_max: int | None, budget_cny: Decimal | float | None, deadline_hours: float | None
) -> tuple[Decimal | None, float | None]:
    """Refuse nonsense filters before any database work; returns (budget, deadline)."""
    if gpus_max is not None and (isinstance(gpus_max, bool) or not 1 <= gpus_max <= MAX_GPUS):
        raise QuantityError("gpus_max", f"must be from 1 to {MAX_GPUS:,}, got {gpus_max}", "8")
    budget = None
    if budget_cny is not None:
        budget = Decimal(str(budget_cny))
        if not budget.is_finite() or budget <= 0:
            raise QuantityError("budget", f"must be a positive amount of CNY, got {budget_cny}", "50000")
    if deadline_hours is not None and not (MIN_DEADLINE_HOURS <= deadline_hours <= MAX_HOURS):
        raise QuantityError(
            "deadline_hours",
            f"must be from {MIN_DEADLINE_HOURS:g} (a rental's shortest billed hour) to {MAX_HOURS:,} (ten years), "
            f"got {deadline_hours:g}",
            "72",
        )
    return budget, deadline_hours


def _work_for(
    workload: Workload,
    model: GpuModel,
    offers: list[Offer],
    gpus_max: int | None,
    deadline: float | None,
) -> tuple[int, list[JobCost]] | str:
    """(GPUs needed, each offer that can serve the job costed on the GPUs it rents), or why there is none.

    One workload computation: each offer rents whole instances, at least ``needed`` GPUs, and its hours
    are the estimate's wall-clock hours on exactly that count (``Workload.on(model, count)``), so an
    option's GPU-hours are its GPUs × its hours, as ``planner estimate --gpus`` gives them.
    """
    try:
        base = workload.on(model)
    except PrecisionError:  # FP8 on an A100, say: never planned (planner.workload.precision)
        asked = (workload.precision or "").lower()
        near = nearest_precision(model, asked, workload.task)
        what = "FP8 tensor cores" if asked == "fp8" else asked.upper()
        return f"no {what} for {asked.upper()} precision (the nearest it has: {near})"
    if base.gpu_hours is None:
        return "the catalog has no dense TFLOPS figure for it, so no hours"
    if base.gpus_needed is None:  # a ZeRO stage below 3 keeps more on every GPU than it has
        return _held_by_none(base, model)
    needed = base.gpus_needed
    if deadline is not None:
        needed = max(needed, math.ceil(base.gpu_hours / deadline - 1e-9))
        if (
            workload.task == "inference"
        ):  # a catalog model's heads must split evenly (planner.workload.inference)
            heads = (base.shape.heads, base.shape.kv_heads) if base.model else (None, None)
            needed = serving_gpus(needed, *heads)
    why = (
        f"to finish in {deadline:g} h"
        if needed > (base.gpus_needed or 1)
        else f"to hold {base.memory_gb:.0f} GB"
    )
    if needed > MAX_GPUS:  # more than any plan rents: the deadline (or the model) is out of reach
        return f"needs {needed:,} GPUs {why}, more than the {MAX_GPUS:,} a plan considers"
    if gpus_max is not None and needed > gpus_max:
        return f"needs {needed} GPUs {why}, more than the {gpus_max} allowed"
    by_count: dict[tuple[int, int], list[Offer]] = {}  # (GPUs, GPUs on each machine) -> offers
    for offer in offers:
        if not offer.is_vgpu:
            per = int(offer.gpus_per_instance)
            count = math.ceil(needed / per) * per
            by_count.setdefault((count, _per_machine(offer, count)), []).append(offer)
    costs: list[JobCost] = []
    slow: list[tuple[int, float]] = []  # (GPUs, wall hours) of counts that miss the deadline
    for (count, per_machine), group in sorted(by_count.items()):
        if (gpus_max is not None and count > gpus_max) or count > MAX_GPUS:
            continue
        on = workload.on(model, count, per_machine)
        if on.wall_hours is None or on.gpu_hours is None:
            continue
        if deadline is not None and on.wall_hours > deadline * (1 + 1e-9):
            slow.append((count, on.wall_hours))
            continue
        costs += rentals(group, on.gpu_hours, count, gpus_max)
    if not costs:
        if all(o.is_vgpu for o in offers):
            return "only vGPU slices are offered"
        if slow:
            count, hours = slow[0]
            return f"takes {hours:,.1f} h on {count} GPUs, over the {deadline:g} h deadline"
        if base.gpu_hours / needed > MAX_HOURS:
            return f"would run more than ten years on {needed} GPUs; a deadline would use more"
        return f"every instance has more GPUs than the {gpus_max} allowed"
    return needed, costs


def _serve_for(
    workload: Workload, model: GpuModel, offers: list[Offer], gpus_max: int | None
) -> tuple[int, list[JobCost], ServingSize] | str:
    """(GPUs needed, each offer costed for a month online on the GPUs it rents, the sizing), or why none."""
    load = workload.serving
    assert load is not None
    try:
        size = size_serving(lambda batch: workload.replica(model, batch), load, model.name)
    except PrecisionError:
        asked = (workload.precision or "").lower()
        return f"no {asked.upper()} (the nearest it has: {nearest_precision(model, asked, 'inference')})"
    if isinstance(size, str):
        return size
    needed = size.gpus
    if needed > MAX_GPUS or (gpus_max is not None and needed > gpus_max):
        return f"needs {needed:,} GPUs to serve the load, more than the {gpus_max or MAX_GPUS:,} allowed"
    by_count: dict[int, list[Offer]] = {}
    for offer in offers:
        if not offer.is_vgpu:
            per = int(offer.gpus_per_instance)
            by_count.setdefault(math.ceil(needed / per) * per, []).append(offer)
    costs: list[JobCost] = []
    for count, group in sorted(by_count.items()):
        if gpus_max is None or count <= gpus_max:
            # A month online on every GPU rented: what the service pays, busy or not.
            costs += rentals(group, count * load.online_hours_per_month, count, gpus_max)
    if not costs:
        return (
            "only vGPU slices are offered"
            if all(o.is_vgpu for o in offers)
            else "no instance fits the limits"
        )
    return needed, costs, size


def check_serving(workload: Workload, deadline_hours: float | None) -> None:
    """Refuse a serving load on a task other than inference, with tokens, or with a deadline."""
    load = workload.serving  # builds and checks the load
    if load is None:
        return
    if workload.task != "inference":
        raise UsageError(Phrase("a serving load is for {task} inference"), Phrase("use {task} inference"))
    if workload.tokens is not None:
        raise UsageError(
            Phrase("give {tokens} for a job, or a serving load, not both"),
            "a serving load's tokens follow from it",
        )
    if deadline_hours is not None:
        raise UsageError(Phrase("a service has no deadline"), Phrase("drop {deadline_hours}"))


def _per_machine(offer: Offer, gpus: int) -> int:
    """GPUs on each machine when ``gpus`` of ``offer`` are rented (whole instances; a marketplace's
    per-GPU listings share machines of up to eight)."""
    instances = math.ceil(gpus / int(offer.gpus_per_instance))
    return math.ceil(gpus / offer.machines(instances))


def _held_by_none(base: Estimate, model: GpuModel) -> str:
    """Why no count of ``model`` holds the job (the estimate found none)."""
    if base.task != "inference" and base.zero_stage != DEFAULT_ZERO_STAGE:
        whole = replicated_gb(base.breakdown, base.zero_stage)
        return (
            f"with ZeRO stage {base.zero_stage} every GPU holds {whole:.1f} GB of model states, more than "
            f"its {model.memory_gb:g} GB"
        )
    return f"no number of {model.name} holds {base.memory_gb:.0f} GB"


def mark(options: Sequence[PlanOption]) -> list[PlanOption]:
    """Mark the fastest option (cheapest among equally fast) and every Pareto option (cost and time),
    among those that can be rented now (among all when none can)."""
    if not options:
        return []
    pool = [o for o in options if o.rental.rentable] or list(options)
    in_pool = {id(o) for o in pool}
    fastest = min(pool, key=lambda o: (o.rental.hours, o.rental.total_cny))
    out = []
    for o in options:
        dominated = id(o) not in in_pool or any(
            p.rental.total_cny <= o.rental.total_cny
            and p.rental.hours <= o.rental.hours
            and (p.rental.total_cny < o.rental.total_cny or p.rental.hours < o.rental.hours)
            for p in pool
        )
        out.append(replace(o, fastest=o is fastest, pareto=not dominated))
    return out
