"""The plausibility band: the lowest CNY per GPU-hour a GPU model can believably be rented at, one
floor per model, for every source (scrapers, imports, the snapshot). A price below it is a unit or
precision mistake (a price in yuan divided as if it were in 厘, an hourly figure in the monthly column),
never a bargain.

The floor of a model is the higher of two figures:

- its class floor, from the catalog's memory type: a data-centre accelerator with HBM (A100, H100,
  H20, V100, A30...) 0.50 CNY per GPU-hour, any other card (GeForce, RTX workstation, T4, L20, A10, and
  a card whose memory type the catalog leaves blank, such as the P100) 0.10. The lowest legitimate
  prices seen (marketplace spot prices included, ``docs/promises.md``): HBM cards from 2.28 (V100-32GB at AutoDL, snapshot) and 3.28 (A100-40GB at AutoDL); other cards from
  0.60 (RTX 5090 spot at PPIO, fixtures), 0.69 (RTX 3090 spot at PPIO) and 0.88 (RTX 2080 Ti at
  AutoDL). Each class floor is at least four times under its lowest legitimate price;
- its purchase floor, where the catalog has a China purchase price: that price over twenty years of
  hours (``PAYBACK_HOURS``), the rent that would take twenty years of renting the card every hour
  just to pay for it (H100 337,500 CNY: 1.93; RTX 5090 42,500 CNY: 0.24, under half its lowest
  legitimate price, PPIO's spot 0.60).

A price 1,000 times too cheap (an integer read at the wrong precision) falls far under every floor: an
RTX 4090 at 0.00099 instead of 0.99, an H100 at 0.0095 instead of 9.5.
"""

from __future__ import annotations

import functools
from decimal import Decimal

from planner import catalog
from planner.money import PriceRejected

HBM_FLOOR = Decimal("0.50")  # CNY per GPU-hour: data-centre accelerators (HBM memory)
OTHER_FLOOR = Decimal("0.10")  # CNY per GPU-hour: every other card
PAYBACK_HOURS = 20 * 8760  # a purchase price spread over twenty years of every hour


@functools.cache
def floor_of(gpu_model: str) -> tuple[Decimal, str]:
    """(the lowest believable CNY per GPU-hour of ``gpu_model``, where that floor comes from)."""
    model = catalog.get_model(gpu_model)
    hbm = (model.memory_type or "").upper().startswith("HBM")
    floor, why = (
        (HBM_FLOOR, "a data-centre GPU with HBM") if hbm else (OTHER_FLOOR, "a GPU not listed with HBM")
    )
    if model.purchase_price_cny is not None:
        payback = (model.purchase_price_cny / PAYBACK_HOURS).quantize(Decimal("0.01"))
        if payback > floor:
            floor, why = payback, f"its purchase price {model.purchase_price_cny:,} CNY over twenty years"
    return floor, why


def check_plausible(gpu_model: str, cny_per_gpu_hour: Decimal, what: str = "price") -> None:
    """PriceRejected when ``cny_per_gpu_hour`` is below the floor of ``gpu_model``, saying both."""
    floor, why = floor_of(gpu_model)
    if cny_per_gpu_hour < floor:
        raise PriceRejected(
            f"{what} is {cny_per_gpu_hour:.6g} CNY per GPU-hour, below the {floor} floor of {gpu_model} "
            f"({why}): too cheap to be true (a unit or precision mistake?)"
        )
