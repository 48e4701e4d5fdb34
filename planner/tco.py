"""Rent against buy: total cost of owning GPUs over a horizon against renting the same GPU-hours.

Pure functions over numbers and a catalog ``GpuModel``; the caller brings the rental price (the cheapest
figure from the quote engine, with its billing mode and source). Money is ``Decimal`` throughout and
rounded only in ``TcoResult.to_dict`` for display. Prices are taken as quoted in China, VAT included
(13% on goods, 6% on cloud services) and not reclaimed, on both sides.

Buying N GPUs for Y years costs::

    N·(price + host share) + N·hosting·Y + power − N·price·resale
    power = N·TDP·(1 + host power)·PUE·tariff·(busy hours·1 + idle hours·idle fraction) / N

which is a fixed part plus a part per busy GPU-hour, so the break-even against renting at r CNY per
GPU-hour is ``fixed / (r − variable)``, where both totals are exactly equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from planner.billing import HOURS_PER_YEAR
from planner.errors import UsageError
from planner.estimate import gpu_class

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel

# China business electricity: US$0.09/kWh in March 2024 (Statista, "Business electricity prices in
# China 2019-2024") and US$0.088/kWh average industrial rate in 2024 (China Briefing, "China's
# Industrial Power Rates"), at 7.10 CNY/USD (defaults.toml [fx]): about 0.64 CNY/kWh. Peak-hour tariffs
# in coastal cities run to 1.0-1.1 CNY/kWh; override with --electricity.
ELECTRICITY_CNY_PER_KWH = Decimal("0.64")
ELECTRICITY_SOURCE = "Statista Mar 2024 (US$0.09/kWh) and China Briefing 2024 (US$0.088/kWh) at 7.10 CNY/USD"
# NDRC/MIIT action plan for green data centres (issued 2024-07-23, Xinhua 2024-07-24): national average
# PUE "lowered to less than 1.5" by 2025. New large data centres must reach 1.3.
PUE = Decimal("1.5")
PUE_SOURCE = "NDRC/MIIT data-centre action plan, 2024-07-23: national average PUE below 1.5 by 2025"
# Assumptions (no source found): a busy GPU draws its TDP; an idle one 20% of it; the host (CPUs, RAM,
# NICs, fans) adds 30% to the GPUs' draw.
BUSY_POWER_FRACTION = Decimal("1")
IDLE_POWER_FRACTION = Decimal("0.2")
HOST_POWER_FRACTION = Decimal("0.3")
# Host share per GPU (CPU, RAM, chassis, network), by GPU class.
# Data centre [derived]: an 8-GPU H20 server ~1.2M CNY (Huxiu, Jul 2024) / 8 = 150k per GPU, less the
# card's ~110k CNY (Reuters, Jan 2024) = 40k CNY per GPU.
# Consumer [assumption]: a 4-GPU workstation's CPU, board, RAM, 2 kW PSU and case ~20k CNY = 5k per GPU.
HOST_CNY_PER_GPU: dict[str, Decimal] = {"datacenter": Decimal("40000"), "consumer": Decimal("5000")}
HOST_SOURCE: dict[str, str] = {
    "datacenter": "derived: H20 8-GPU server ~1.2M CNY (Huxiu, Jul 2024) / 8 − card ~110k (Reuters, 2024-01)",
    "consumer": "assumption: a 4-GPU workstation host ~20k CNY",
}
# Hosting and maintenance per GPU-year, electricity excluded [assumption]: a colocation cabinet share
# and repairs for a server GPU; desk space and repairs for a workstation card.
HOSTING_CNY_PER_GPU_YEAR: dict[str, Decimal] = {"datacenter": Decimal("8000"), "consumer": Decimal("500")}
# Resale [assumption]: China's second-hand GPU market is active, but no price series was found. A card
# keeps 67% of its value a year, i.e. 30% after the default 3 years (0.67³ ≈ 0.30).
RESALE_ANNUAL_RETENTION = Decimal("0.67")
DEFAULT_YEARS = Decimal("3")
ASSUMPTION = "assumption (no source found)"


@dataclass(frozen=True)
class Assumption:
    """One input of the answer, with its value and where it came from, for display."""

    name: str
    value: str
    source: str


@dataclass(frozen=True)
class TcoResult:
    """Buy against rent for ``gpu_hours`` of work on ``gpus`` GPUs over ``years``."""

    gpu: str
    gpus: int
    years: Decimal
    gpu_hours: Decimal
    utilization: Decimal
    capacity_gpu_hours: Decimal
    buy_total_cny: Decimal
    rent_total_cny: Decimal
    buy_cny_per_gpu_hour: Decimal | None
    rent_cny_per_gpu_hour: Decimal
    break_even_hours: Decimal | None  # busy GPU-hours where both totals are equal; None: never
    break_even_utilization: Decimal | None
    recommendation: str  # "rent" or "buy"
    summary: str
    buy_breakdown: dict[str, Decimal]  # purchase, host, power, hosting, resale (negative)
    assumptions: tuple[Assumption, ...] = field(default_factory=tuple)
    rent_billing_mode: str | None = None
    rent_source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: money rounded to fen, hours to 0.1, fractions to 4 places."""
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if key == "buy_breakdown":
                out[key] = {k: _round(v, 2) for k, v in value.items()}
            elif key == "assumptions":
                out[key] = [a.__dict__.copy() for a in value]
            elif isinstance(value, Decimal):
                places = 2 if key.endswith("cny") or "cny_per" in key else 4 if "utilization" in key else 1
                out[key] = _round(value, places)
            else:
                out[key] = value
        return out


def tco(
    gpu: GpuModel,
    rent_cny_per_gpu_hour: Decimal | float | str,
    gpu_hours: float | Decimal | None = None,
    *,
    gpus: int = 1,
    years: float | Decimal = DEFAULT_YEARS,
    utilization: float | Decimal | None = None,
    purchase_price_cny: Decimal | float | str | None = None,
    cny_per_usd: Decimal | float | str | None = None,
    host_cny_per_gpu: Decimal | float | str | None = None,
    hosting_cny_per_gpu_year: Decimal | float | str | None = None,
    electricity_cny_per_kwh: Decimal | float | str | None = None,
    pue: Decimal | float | str | None = None,
    resale_fraction: Decimal | float | str | None = None,
    rent_billing_mode: str | None = None,
    rent_source: str | None = None,
) -> TcoResult:
    """Compare buying ``gpus`` × ``gpu`` for ``years`` with renting the same busy GPU-hours.

    Give the work as ``gpu_hours`` (busy GPU-hours over the horizon) or as ``utilization`` (the share
    of the bought GPUs' hours that are busy), not both. Any default left as None comes from the
    constants above or the catalog; each is listed in ``assumptions``.
    """
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise UsageError(f"gpus must be a whole number of at least 1, got {gpus!r}")
    years_d = _positive(years, "years")
    rent = _positive(rent_cny_per_gpu_hour, "rental price (CNY per GPU-hour)")
    capacity = Decimal(gpus) * years_d * HOURS_PER_YEAR
    hours = _work_hours(gpu_hours, utilization, capacity, gpus, years_d)

    cls = gpu_class(gpu)
    price, price_note, server_included = _purchase_price(gpu, purchase_price_cny, cny_per_usd)
    if host_cny_per_gpu is not None:
        host, host_note = _non_negative(host_cny_per_gpu, "host share"), "given"
    elif server_included:
        host, host_note = Decimal(0), "0: the purchase price already includes the server"
    else:
        host, host_note = HOST_CNY_PER_GPU[cls], HOST_SOURCE[cls]
    hosting = _default(hosting_cny_per_gpu_year, HOSTING_CNY_PER_GPU_YEAR[cls], "hosting", allow_zero=True)
    tariff = _default(electricity_cny_per_kwh, ELECTRICITY_CNY_PER_KWH, "electricity price", allow_zero=True)
    pue_d = _default(pue, PUE, "PUE")
    if pue_d < 1:
        raise UsageError(f"PUE must be at least 1, got {pue_d}", "a data centre's PUE is typically 1.2-1.6")
    if resale_fraction is None:
        resale, resale_note = RESALE_ANNUAL_RETENTION**years_d, "assumption: 0.67 per year kept"
    else:
        resale, resale_note = _fraction(resale_fraction, "resale fraction"), "given"
    if not gpu.tdp_watts:
        raise UsageError(f"the catalog has no TDP for {gpu.name}", "choose a GPU with a known power figure")

    n = Decimal(gpus)
    at_tdp = Decimal(str(gpu.tdp_watts)) / 1000 * (1 + HOST_POWER_FRACTION) * pue_d * tariff  # CNY/h
    variable = at_tdp * (BUSY_POWER_FRACTION - IDLE_POWER_FRACTION)  # CNY per busy GPU-hour above idle
    idle_power = at_tdp * IDLE_POWER_FRACTION * capacity
    fixed_parts = {
        "purchase": n * price,
        "host": n * host,
        "hosting": n * hosting * years_d,
        "resale": -n * price * resale,
    }
    fixed = sum(fixed_parts.values()) + idle_power
    buy_total = fixed + variable * hours
    breakdown = {**fixed_parts, "power": idle_power + variable * hours}
    rent_total = rent * hours
    break_even = fixed / (rent - variable) if rent > variable else None
    verdict = "buy" if buy_total < rent_total else "rent"
    assumptions = (
        Assumption("purchase price per GPU", f"{price:,.0f} CNY", price_note),
        Assumption("VAT", "included, not reclaimed", "prices as quoted in China"),
        Assumption("host share per GPU", f"{host:,.0f} CNY", host_note),
        Assumption(
            "hosting and maintenance", f"{hosting:,.0f} CNY per GPU-year", _note(hosting_cny_per_gpu_year)
        ),
        Assumption("electricity", f"{tariff} CNY/kWh", _note(electricity_cny_per_kwh, ELECTRICITY_SOURCE)),
        Assumption("PUE", f"{pue_d}", _note(pue, PUE_SOURCE)),
        Assumption("GPU power", f"{gpu.tdp_watts:g} W TDP busy, {IDLE_POWER_FRACTION:.0%} idle", ASSUMPTION),
        Assumption("host power", f"+{HOST_POWER_FRACTION:.0%} of GPU power", ASSUMPTION),
        Assumption("resale at the end", f"{resale:.0%} of the purchase price", resale_note),
        Assumption(
            "horizon", f"{years_d} years, {gpus} GPU(s)", "given" if years != DEFAULT_YEARS else "default"
        ),
        Assumption("rental price", f"{rent} CNY per GPU-hour", _rent_note(rent_billing_mode, rent_source)),
    )
    per_hour = (buy_total / hours) if hours > 0 else None
    return TcoResult(
        gpu=gpu.name,
        gpus=gpus,
        years=years_d,
        gpu_hours=hours,
        utilization=hours / capacity,
        capacity_gpu_hours=capacity,
        buy_total_cny=buy_total,
        rent_total_cny=rent_total,
        buy_cny_per_gpu_hour=per_hour,
        rent_cny_per_gpu_hour=rent,
        break_even_hours=break_even,
        break_even_utilization=break_even / capacity if break_even is not None else None,
        recommendation=verdict,
        summary=_summary(verdict, hours, per_hour, rent, break_even, capacity),
        buy_breakdown=breakdown,
        assumptions=assumptions,
        rent_billing_mode=rent_billing_mode,
        rent_source=rent_source,
    )


def _work_hours(
    gpu_hours: float | Decimal | None,
    utilization: float | Decimal | None,
    capacity: Decimal,
    gpus: int,
    years: Decimal,
) -> Decimal:
    if (gpu_hours is None) == (utilization is None):
        raise UsageError("give the GPU-hours of work or the utilisation, exactly one", "e.g. --hours 20000")
    if utilization is not None:
        return capacity * _fraction(utilization, "utilisation")
    hours = _non_negative(gpu_hours, "GPU-hours")  # type: ignore[arg-type]
    if hours > capacity:
        raise UsageError(
            f"{gpus} GPU(s) over {years} years offer at most {capacity:,.0f} GPU-hours, not {hours:,.0f}",
            "raise --gpus or --years",
        )
    return hours


def _purchase_price(
    gpu: GpuModel, given: Decimal | float | str | None, cny_per_usd: Decimal | float | str | None
) -> tuple[Decimal, str, bool]:
    """(price per GPU in CNY, where it came from, whether it includes the server)."""
    if given is not None:
        return _positive(given, "purchase price"), "given", False
    source = gpu.purchase_price_source or "catalog"
    dated = f"catalog, {gpu.purchase_price_date or 'undated'}: {source}"
    included = "server included" in source.lower() or "incl. server" in source.lower()
    if gpu.purchase_price_cny is not None:
        return Decimal(gpu.purchase_price_cny), dated, included
    if gpu.purchase_price_usd is not None and cny_per_usd is not None:
        fx = _positive(cny_per_usd, "CNY per USD")
        note = f"US price {gpu.purchase_price_usd} USD at {fx} CNY/USD, no China premium; {dated}"
        return Decimal(gpu.purchase_price_usd) * fx, note, included
    raise UsageError(
        f"the catalog has no purchase price for {gpu.name}", "give one with --purchase-price CNY"
    )


def _summary(
    verdict: str, hours: Decimal, per_hour: Decimal | None, rent: Decimal, be: Decimal | None, cap: Decimal
) -> str:
    cost = f"{per_hour:,.2f}" if per_hour is not None else "n/a"
    head = f"{verdict}: buying costs {cost} CNY per used GPU-hour against {rent:,.2f} renting"
    if be is None:
        return f"{head}; buying never breaks even at this rental price"
    if be > cap:
        return (
            f"{head}; buying would break even only at {be:,.0f} GPU-hours, more than the {cap:,.0f} available"
        )
    return f"{head}; break-even at {be:,.0f} GPU-hours ({be / cap:.0%} utilisation)"


def _note(given: object, default_source: str = ASSUMPTION) -> str:
    return "given" if given is not None else default_source


def _rent_note(mode: str | None, source: str | None) -> str:
    return ", ".join(x for x in (mode, source) if x) or "given"


def _to_decimal(value: Decimal | float | str | int, name: str) -> Decimal:
    try:
        d = value if isinstance(value, Decimal) else Decimal(str(value))
    except ArithmeticError as exc:  # decimal.InvalidOperation
        raise UsageError(f"{name} is not a number: {value!r}") from exc
    if not d.is_finite():
        raise UsageError(f"{name} must be finite, got {value!r}")
    return d


def _positive(value: Decimal | float | str | int, name: str) -> Decimal:
    d = _to_decimal(value, name)
    if d <= 0:
        raise UsageError(f"{name} must be positive, got {value!r}")
    return d


def _non_negative(value: Decimal | float | str | int, name: str) -> Decimal:
    d = _to_decimal(value, name)
    if d < 0:
        raise UsageError(f"{name} cannot be negative, got {value!r}")
    return d


def _fraction(value: Decimal | float | str, name: str) -> Decimal:
    d = _to_decimal(value, name)
    if not 0 <= d <= 1:
        raise UsageError(f"{name} must be between 0 and 1, got {value!r}", "e.g. 0.3 for 30%")
    return d


def _default(
    value: Decimal | float | str | None, default: Decimal, name: str, allow_zero: bool = False
) -> Decimal:
    if value is None:
        return default
    return _non_negative(value, name) if allow_zero else _positive(value, name)


def _round(value: Decimal, places: int) -> float:
    return float(round(value, places))
