"""Plans: every GPU model that can run a workload, the GPUs it needs, the hours, and the cheapest way to
rent them (``planner.rental``), cheapest first, with the fastest and the Pareto options marked.

All latest prices come from one indexed query for every GPU model at once (``db.queries.latest_prices``);
price history and stock are read only for the options shown.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from db import queries
from planner import catalog
from planner.billing import SPOT, canonical_billing
from planner.errors import UsageError
from planner.estimate import Estimate, NoFp8Error, estimate
from planner.inference import cny_per_million_tokens, paid_cny_per_gpu_hour, serving_gpus
from planner.providers import MARKET_MACHINE_GPUS, MARKETPLACES, canonical_provider
from planner.quote import MAX_HOURS
from planner.rental import (
    HISTORY_DAYS,
    Rental,
    first_available,
    recent_prices,
    rental_cost,
    rental_key,
    with_stock,
)

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection

    from db.queries import LatestPrice
    from planner.catalog import GpuModel

STOCK_CANDIDATES = 5  # per GPU model, the cheapest rentals whose stock is checked
ACROSS_INSTANCES = " + network"  # GPUs on different machines talk over the provider's network
NETWORK_ONLY = "network only"  # one GPU per instance: nothing but the network joins them
ONE_MACHINE = " (one machine)"  # a marketplace's GPUs, as many as one of its machines holds


def link_between(
    model: GpuModel, gpus_per_instance: int, instances: int, per_gpu_listing: bool = False
) -> tuple[str | None, float | None]:
    """How the GPUs of a rental talk: (label, NVLink GB/s they use), or (None, None) for a single GPU.

    Inside one instance, the model's link (``catalog.interconnect_label``, per GPU model: the instance's
    actual packaging, SXM or PCIe, is not known); across instances, the provider's network too, so
    ``link_between(H800, 8, 2) == ("NVLink (cut) 400 GB/s + network", 400.0)`` and 1-GPU instances give
    ``("network only", None)``. A marketplace's per-GPU listings (``per_gpu_listing``, AutoDL) are GPUs
    of shared machines: up to ``MARKET_MACHINE_GPUS`` of them can be rented on one machine and talk over
    its link, more need the network too.
    """
    gpus = gpus_per_instance * instances
    if gpus <= 1:
        return None, None
    if per_gpu_listing and gpus_per_instance == 1:
        if gpus <= MARKET_MACHINE_GPUS:
            return catalog.interconnect_label(model) + ONE_MACHINE, model.nvlink_gbps_bidir
        return catalog.interconnect_label(model) + ACROSS_INSTANCES, model.nvlink_gbps_bidir
    if gpus_per_instance <= 1:
        return NETWORK_ONLY, None
    label = catalog.interconnect_label(model) + (ACROSS_INSTANCES if instances > 1 else "")
    return label, model.nvlink_gbps_bidir


@dataclass(frozen=True)
class Workload:
    """The job ``planner plan`` and ``planner estimate`` describe (see ``planner.estimate.estimate``)."""

    params: float | None
    task: str
    tokens: float
    precision: str | None = None
    seq_len: int | None = None
    batch: int | None = None
    mfu: float | None = None
    kv_heads: int | None = None
    checkpointing: bool | None = None
    model: str | None = None  # a planner.models catalog name, instead of params
    lora_rank: int | None = None
    optimizer_8bit: bool = False
    overhead: float | None = None

    def on(self, gpu: GpuModel | None = None, gpus: int | None = None) -> Estimate:
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
        )


@dataclass(frozen=True)
class PlanOption:
    """One GPU model's cheapest rental for the workload, and the estimate on the GPUs it runs on."""

    estimate: Estimate
    rental: Rental
    gpus_needed: int  # fewest GPUs that hold the job (and meet the deadline, if one was given)
    fastest: bool = False
    pareto: bool = False  # no other option is both cheaper and faster
    cny_per_million_tokens: float | None = None  # inference: planner.inference.cny_per_million_tokens

    @property
    def link(self) -> tuple[str | None, float | None]:
        """(interconnect label, NVLink GB/s in use) of the option's GPUs; see ``link_between``."""
        r = self.rental
        listing = r.provider in MARKETPLACES
        return link_between(catalog.get_model(r.gpu_model), r.gpus_per_instance, r.instances, listing)

    def to_dict(self) -> dict[str, Any]:
        e = self.estimate
        interconnect, nvlink = self.link
        return {
            "gpu_model": e.gpu,
            "china_variant": bool(catalog.get_model(e.gpu).variant_of) if e.gpu else False,
            "gpus_needed": self.gpus_needed,
            "gpus": self.rental.gpus,
            "gpu_memory_gb": e.gpu_memory_gb,
            "peak_tflops": e.peak_tflops,
            "mfu": e.mfu,
            "gpu_hours": e.gpu_hours,
            "wall_hours": self.rental.hours,
            "total_cny": self.rental.total_cny,
            "cny_per_gpu_hour": self.rental.cny_per_gpu_hour,
            "link": interconnect,
            "nvlink_gbps_bidir": nvlink,
            "fastest": self.fastest,
            "pareto": self.pareto,
            "cny_per_million_tokens": self.cny_per_million_tokens,
            "rental": self.rental.to_dict(),
        }


@dataclass(frozen=True)
class Excluded:
    gpu_model: str
    reason: str


@dataclass(frozen=True)
class Plan:
    workload: Workload
    memory: Estimate  # the workload without a GPU: memory and FLOPs
    options: tuple[PlanOption, ...]  # cheapest first
    excluded: tuple[Excluded, ...]  # GPU models with prices that were left out, and why
    unpriced: tuple[str, ...]  # GPU models without any matching price
    gpus_max: int | None = None
    budget_cny: Decimal | None = None
    deadline_hours: float | None = None

    @property
    def as_of(self) -> dt.datetime | None:
        return max((o.rental.observed_at for o in self.options), default=None)

    @property
    def from_snapshot(self) -> bool:
        return any(o.rental.from_snapshot for o in self.options)

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
                "memory_gb": m.memory_gb,
                "breakdown": m.breakdown,
                "flops": m.flops,
            },
            "filters": {
                "gpus_max": self.gpus_max,
                "budget_cny": self.budget_cny,
                "deadline_hours": self.deadline_hours,
            },
            "as_of": self.as_of,
            "from_snapshot": self.from_snapshot,
            "options": [o.to_dict() for o in self.options],
            "excluded": [e.__dict__.copy() for e in self.excluded],
            "unpriced": list(self.unpriced),
        }


def plan(
    conn: Connection,
    workload: Workload,
    fx: Mapping[str, object],
    *,
    gpus_max: int | None = None,
    budget_cny: Decimal | float | None = None,
    deadline_hours: float | None = None,
    gpus: Sequence[str] = (),
    providers: Sequence[str] = (),
    regions: Sequence[str] = (),
    billing: Sequence[str] = (),
    history_days: int = HISTORY_DAYS,
) -> Plan:
    """Every GPU model with prices that can run ``workload``, its cheapest rental, cheapest first.

    Per model: the fewest GPUs that hold the job (with ``deadline_hours``, also enough to finish in
    time, at most ``gpus_max``), the hours on them, and the cheapest instance and billing mode. Options
    over ``budget_cny`` are dropped. ``fastest`` and ``pareto`` mark the shown options.
    """
    if workload.tokens is None:
        raise UsageError("a plan needs the tokens the job processes", "e.g. --tokens 2B")
    memory = workload.on()  # checks the workload
    budget, deadline = check_plan_filters(gpus_max, budget_cny, deadline_hours)
    models = models_for(gpus)
    modes = tuple(dict.fromkeys(canonical_billing(b) for b in billing))
    rows = queries.latest_prices(
        conn,
        gpu_models=[m.name for m in models],
        providers=[canonical_provider(p) for p in providers] or None,
        regions=list(regions) or None,
        billing=list(modes) or None,
    )
    by_model: dict[str, list[LatestPrice]] = {}
    for row in rows:
        if row.billing != SPOT or SPOT in modes:
            by_model.setdefault(row.gpu_model, []).append(row)
    excluded: list[Excluded] = []
    candidates: dict[str, tuple[GpuModel, int, list[Rental]]] = {}
    for model in models:
        if model.name not in by_model:
            continue
        found = _rentals_for(workload, model, by_model[model.name], fx, gpus_max, deadline)
        if isinstance(found, str):
            excluded.append(Excluded(model.name, found))
        else:
            candidates[model.name] = (model, found[0], found[1][:STOCK_CANDIDATES])
    stocked = iter(with_stock(conn, [r for _, _, rentals in candidates.values() for r in rentals]))
    options: list[PlanOption] = []
    for name, (model, needed, rentals) in candidates.items():
        best = first_available([next(stocked) for _ in rentals])
        assert best is not None
        if budget is not None and best.total_cny > budget:
            excluded.append(Excluded(name, f"cheapest is {best.total_cny:,.2f} CNY, over the budget"))
        else:
            on = workload.on(model, best.gpus)
            options.append(PlanOption(on, best, needed, cny_per_million_tokens=per_million_tokens(on, best)))
    if workload.task == "inference":  # serving: cheapest per token first, then by total
        options.sort(
            key=lambda o: (o.cny_per_million_tokens or math.inf, *rental_key(o.rental), o.estimate.gpu)
        )
    else:
        options.sort(key=lambda o: (*rental_key(o.rental), o.estimate.gpu))
    recent = recent_prices(conn, [_row_of(o.rental, by_model) for o in options], history_days)
    options = [
        replace(o, rental=replace(o.rental, recent=recent.get((o.rental.instance_id, o.rental.billing))))
        for o in options
    ]
    return Plan(
        workload=workload,
        memory=memory,
        options=tuple(mark(options)),
        excluded=tuple(excluded),
        unpriced=tuple(m.name for m in models if m.name not in by_model),
        gpus_max=gpus_max,
        budget_cny=budget,
        deadline_hours=deadline,
    )


def per_million_tokens(e: Estimate, rental: Rental) -> float | None:
    """Inference: CNY per million generated tokens at the rental's paid GPU-hour rate (None for training)."""
    if e.task != "inference" or e.gpu_hours is None or not e.tokens:
        return None
    rate = paid_cny_per_gpu_hour(rental.total_cny, rental.units_paid, rental.billing, rental.gpus)
    return cny_per_million_tokens(rate, e.gpu_hours, e.tokens)


def check_plan_filters(
    gpus_max: int | None, budget_cny: Decimal | float | None, deadline_hours: float | None
) -> tuple[Decimal | None, float | None]:
    """Refuse nonsense filters before any database work; returns (budget, deadline)."""
    from planner.quote import MAX_GPUS

    if gpus_max is not None and (isinstance(gpus_max, bool) or not 1 <= gpus_max <= MAX_GPUS):
        raise UsageError(f"--gpus-max must be from 1 to {MAX_GPUS:,}, got {gpus_max}", "e.g. --gpus-max 8")
    budget = None
    if budget_cny is not None:
        budget = Decimal(str(budget_cny))
        if not budget.is_finite() or budget <= 0:
            raise UsageError(
                f"--budget must be a positive amount of CNY, got {budget_cny}", "e.g. --budget 50000"
            )
    if deadline_hours is not None and not (0 < deadline_hours <= MAX_HOURS):
        raise UsageError(
            f"--deadline-hours must be more than 0 and at most {MAX_HOURS:,} (ten years), got {deadline_hours:g}",
            "e.g. --deadline-hours 72",
        )
    return budget, deadline_hours


def models_for(queries_: Sequence[str]) -> list[GpuModel]:
    """The catalog models the ``--gpu`` filters name (every model without filters), in catalog order."""
    if not queries_:
        return catalog.all_models()
    chosen = {s.model.name for q in queries_ for s in catalog.resolve_query(q)}
    return [m for m in catalog.all_models() if m.name in chosen]


def _rentals_for(
    workload: Workload,
    model: GpuModel,
    rows: list[LatestPrice],
    fx: Mapping[str, object],
    gpus_max: int | None,
    deadline: float | None,
) -> tuple[int, list[Rental]] | str:
    """(GPUs needed, the model's rentals cheapest first), or why there is none."""
    try:
        base = workload.on(model)
    except NoFp8Error:  # FP8 training on an A100, say
        return "no FP8 tensor cores for --precision fp8"
    if base.gpu_hours is None:
        return "the catalog has no dense TFLOPS figure for it, so no hours"
    needed = base.gpus_needed or 1
    if deadline is not None:
        needed = max(needed, math.ceil(base.gpu_hours / deadline - 1e-9))
        if workload.task == "inference":
            needed = serving_gpus(needed)
    if gpus_max is not None and needed > gpus_max:
        why = (
            f"to finish in {deadline:g} h"
            if needed > (base.gpus_needed or 1)
            else f"to hold {base.memory_gb:.0f} GB"
        )
        return f"needs {needed} GPUs {why}; --gpus-max is {gpus_max}"
    rentals = [r for r in (rental_cost(row, base.gpu_hours, needed, fx, gpus_max) for row in rows) if r]
    if not rentals:
        if all(row.gpu_count < 1 for row in rows):
            return "only vGPU slices are offered"
        if base.gpu_hours / needed > MAX_HOURS:
            return f"would run more than ten years on {needed} GPUs; give --deadline-hours to use more"
        return f"every instance has more GPUs than --gpus-max {gpus_max}"
    return needed, sorted(rentals, key=rental_key)


def mark(options: Sequence[PlanOption]) -> list[PlanOption]:
    """Mark the fastest option (cheapest among equally fast) and every Pareto option (cost and time)."""
    if not options:
        return []
    fastest = min(options, key=lambda o: (o.rental.hours, o.rental.total_cny))
    out = []
    for o in options:
        dominated = any(
            p.rental.total_cny <= o.rental.total_cny
            and p.rental.hours <= o.rental.hours
            and (p.rental.total_cny < o.rental.total_cny or p.rental.hours < o.rental.hours)
            for p in options
        )
        out.append(replace(o, fastest=o is fastest, pareto=not dominated))
    return out


def _row_of(rental: Rental, by_model: Mapping[str, list[LatestPrice]]) -> LatestPrice:
    return next(
        r
        for r in by_model[rental.gpu_model]
        if r.instance_id == rental.instance_id and r.billing == rental.billing
    )
