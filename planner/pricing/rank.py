"""Ranking job costs (``planner.pricing.cost`` costs them): rentable first, cheapest
first on unrounded totals, totals within ``TIE_SHARE`` or ``TIE_CNY`` of each other to fewer machines, then to the
wider NVLink; the stock read only as far down as the options that can be shown (``stocked_to_top``);
and the one cheaper option outside a region scope (``cheaper_outside``). ``LeftOut``: a GPU model an
answer does not rank, and why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, TypeVar

from planner.pricing.cost import JobCost, with_stock

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection

TIE_SHARE = Decimal("0.005")  # totals this close (or within TIE_CNY) are a tie: fewer machines win
TIE_CNY = Decimal(1)
T = TypeVar("T")


@dataclass(frozen=True)
class LeftOut:
    """A GPU model an answer does not rank, and why (``plan``'s excluded, ``gpus --value``'s not ranked)."""

    gpu_model: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"gpu_model": self.gpu_model, "reason": self.reason}


def price_key(cost: JobCost) -> tuple:
    o = cost.offer
    return (cost.total_cny, cost.idle_gpus, o.provider, o.region, o.instance_type, o.billing)


def tie_key(cost: JobCost) -> tuple:
    """Among near-equal totals: fewer machines, then inside one NVLink domain, then the cheaper."""
    return (cost.machines, not cost.one_nvlink_domain, *price_key(cost))


def is_tie(cheaper: Decimal, dearer: Decimal) -> bool:
    """Whether two totals are within ``TIE_SHARE`` (or ``TIE_CNY``) of each other."""
    return dearer - cheaper <= max(cheaper * TIE_SHARE, TIE_CNY)


def rank_costs(costs: Iterable[JobCost]) -> list[JobCost]:
    """``rank`` for job costs themselves."""
    return rank(costs, lambda c: c)


def rank(items: Iterable[T], cost_of: Callable[[T], JobCost]) -> list[T]:
    """Rentable first, then the rest; each part cheapest first on unrounded totals, where a run of
    totals within a tie of its cheapest is ordered by ``tie_key`` (fewer machines, wider NVLink)."""
    items = list(items)
    out: list[T] = []
    for part in ([i for i in items if cost_of(i).rentable], [i for i in items if not cost_of(i).rentable]):
        ordered = sorted(part, key=lambda i: price_key(cost_of(i)))
        start = 0
        while start < len(ordered):
            head = cost_of(ordered[start]).total_cny
            end = start + 1
            while end < len(ordered) and is_tie(head, cost_of(ordered[end]).total_cny):
                end += 1
            cluster = ordered[start:end]
            out += sorted(cluster, key=lambda i: tie_key(cost_of(i))) if len(cluster) > 1 else cluster
            start = end
    return out


def cheapest_per_instance(costs: Iterable[JobCost]) -> list[JobCost]:
    """Each instance once, on its best billing mode for the job: the cheapest it can be rented on now
    (the cheapest of all when none). One instance's modes share its machines, so ``rank``'s tie rule
    has nothing to add."""
    best: dict[int, tuple[tuple, JobCost]] = {}
    for cost in costs:
        key = (not cost.rentable, *price_key(cost))
        iid = cost.offer.instance_id
        if iid not in best or key < best[iid][0]:
            best[iid] = (key, cost)
    return [cost for _, cost in best.values()]


Bounds = Mapping[tuple[int, str], tuple[Decimal, Decimal]]


def stocked_to_top(
    conn: Connection, costs: list[JobCost], top: int, bounds: Bounds | None = None
) -> list[JobCost]:
    """The costs of the instances that can be shown among the ``top``, with their stock read.

    ``bounds`` holds each offer's lowest and highest total over its price window (a median or min
    basis lies between them); without it both are the total. Instances are read cheapest first until
    ``top`` of them can be rented and the next one's lowest total is beyond a tie of the top-th
    rentable highest total: nothing after that can be shown, so its stock is never read.
    """
    return stocked_to_top_each(conn, [costs], top, bounds)[0]


def stocked_to_top_each(
    conn: Connection, groups: Sequence[list[JobCost]], top: int, bounds: Bounds | None = None
) -> list[list[JobCost]]:
    """``stocked_to_top`` for several groups at once (a plan's GPU models): each round reads the
    stock every unfinished group still needs in one query."""

    def low(c: JobCost) -> Decimal:
        return bounds[c.offer.key][0] if bounds else c.total_cny

    def high(c: JobCost) -> Decimal:
        return bounds[c.offer.key][1] if bounds else c.total_cny

    states = []
    for costs in groups:
        by_instance: dict[int, list[JobCost]] = {}
        for cost in costs:
            by_instance.setdefault(cost.offer.instance_id, []).append(cost)
        lowest = {iid: min(low(c) for c in found) for iid, found in by_instance.items()}
        states.append((by_instance, lowest, sorted(lowest, key=lowest.__getitem__)))
    read = [0] * len(groups)
    done: list[list[JobCost] | None] = [None] * len(groups)
    window = 2 * top  # one read is usually enough: a query for 20 instances costs what 10 do
    while any(d is None for d in done):
        wanted = []
        for g, (_, _, order) in enumerate(states):
            if done[g] is None:
                wanted += [(g, iid) for iid in order[read[g] : read[g] + window]]
        stocked = iter(with_stock(conn, [c.offer for g, iid in wanted for c in states[g][0][iid]]))
        for g, iid in wanted:
            by_instance = states[g][0]
            by_instance[iid] = [replace(c, offer=next(stocked)) for c in by_instance[iid]]
        for g, (by_instance, lowest, order) in enumerate(states):
            if done[g] is not None:
                continue
            read[g] = min(len(order), read[g] + window)
            highs = sorted(
                min(high(c) for c in by_instance[iid] if c.rentable)
                for iid in order[: read[g]]
                if any(c.rentable for c in by_instance[iid])
            )
            if len(highs) >= top:
                bound = highs[top - 1] + max(highs[top - 1] * TIE_SHARE, TIE_CNY)
                if read[g] == len(order) or lowest[order[read[g]]] > bound:
                    done[g] = [c for iid in order if lowest[iid] <= bound for c in by_instance[iid]]
                    continue
            if read[g] == len(order):
                done[g] = [c for iid in order for c in by_instance[iid]]
        window *= 2
    return [d for d in done if d is not None]


def cheaper_outside(conn: Connection, best: JobCost | None, outside: Iterable[JobCost]) -> JobCost | None:
    """The cheapest of ``outside`` (options outside the asked-for scope) that can be rented now, when
    it costs less than ``best`` (or ``best`` is None): the one line that says the scope cost money."""
    costs = rank_costs(stocked_to_top(conn, list(outside), 1))
    found = next((c for c in costs if c.rentable), None)
    if found is None or (best is not None and found.total_cny >= best.total_cny):
        return None
    return found
