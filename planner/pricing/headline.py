"""The headline price: one number per question, defined once, with its basis in words.

Two questions have an answer in CNY per GPU-hour, and each has one figure in every command:

- **the list price per GPU-hour** of an offer: a period's price over all its hours (730 a month, 8,760
  a year), over the instance's GPUs (``Offer.cny_per_gpu_hour``). ``gpus --value``, the report (its
  cheapest table, chart, CSV and e-mail), the digest and the alerts show it, named with its billing
  mode ("monthly, 730 h a month");
- **a job's cost per GPU-hour** on an offer: the total for H hours (whole periods, whole instances,
  Tencent's tiers) over the job's GPU-hours (``JobCost.cny_per_gpu_hour``). ``quote`` and ``tco`` show
  it, named with the hours ("monthly, for 720 h"). For H = the hours of the period it is the list price.

A GPU model's headline is the list price of its cheapest offer that can be rented now on the billing
modes asked for (``cheapest_by_model``: never an offer its provider no longer lists); its on-demand
headline, the one the report's chart ends on and ``gpus --value`` ranks by, is the same on on-demand
prices only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from planner.pricing.offer import Offer
from vocab import gpu_hour_basis

UNIT = "CNY/GPU-h"


class JobCost(Protocol):
    """What ``job_price`` reads of ``planner.pricing.cost.JobCost`` (which imports this module)."""

    @property
    def offer(self) -> Offer: ...
    @property
    def cny_per_gpu_hour(self) -> Decimal: ...
    @property
    def hours(self) -> float: ...


@dataclass(frozen=True)
class Headline:
    """One figure in CNY per GPU-hour and what it is: an offer's list price (``hours`` None) or a job's
    cost for ``hours`` hours on it."""

    offer: Offer
    cny_per_gpu_hour: Decimal  # unrounded
    hours: float | None = None

    @property
    def basis(self) -> str:
        """ "monthly, 730 h a month" (a list price) or "monthly, for 720 h" (a job's cost)."""
        return gpu_hour_basis(self.offer.billing, self.hours)

    @property
    def label(self) -> str:
        """ "CNY/GPU-h (monthly, 730 h a month)": a column or a line that shows the figure."""
        return f"{UNIT} ({self.basis})"


def list_price(offer: Offer) -> Headline:
    """An offer's list price per GPU-hour: the figure a price table, ``gpus --value`` and the report show."""
    return Headline(offer, offer.cny_per_gpu_hour)


def job_price(cost: JobCost) -> Headline:
    """What a job costs per GPU-hour of its work on the offer it was costed on: ``quote`` and ``tco``."""
    return Headline(cost.offer, cost.cny_per_gpu_hour, cost.hours)


def list_label(billing: tuple[str, ...] | list[str]) -> str:
    """ "CNY/GPU-h (list, on_demand)": the column of a table of list prices on these billing modes."""
    return f"{UNIT} (list, {'/'.join(billing)})"


def hours_label(hours: float) -> str:
    """ "CNY/GPU-h for 720 h": the column of a table whose rows are one job's costs."""
    return f"{UNIT} for {hours:,g} h"


def listed(offers: Iterable[Offer]) -> list[Offer]:
    """The offers their provider still lists: an offer it no longer lists is never a headline."""
    return [o for o in offers if o.unlisted_at is None]
