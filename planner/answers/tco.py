"""Rent against buy: total cost of owning GPUs over a horizon against renting the same GPU-hours.

Pure functions over numbers and a catalog ``GpuModel``; the caller brings the rental price (the cheapest
figure from the rental engine, with its billing mode and source). Money is ``Decimal`` throughout and
rounded only in ``TcoResult.to_dict`` for display. Prices are taken as quoted in China, VAT included
(13% on goods, 6% on cloud services) and not reclaimed, on both sides.

Buying N GPUs for Y years costs::

    N·(price + host share) + N·hosting·Y + power − N·price·resale
    power = TDP·(1 + host power)·PUE·tariff·(busy GPU-hours·1 + idle GPU-hours·idle fraction)

which is a fixed part plus a part per busy GPU-hour, so the break-even against renting at r CNY per
GPU-hour is ``fixed / (r − variable)``, where both totals are exactly equal. When the rental price
itself depends on the hours (subscriptions, Tencent's hourly tiers), ``rent_rate_at`` gives it and the
break-even is solved against that curve.

Every default below is also a setting in ``[tco]`` of ``config.toml`` (a test keeps them equal).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from planner import catalog
from planner.answers.rental import describe, rental_curve, rental_dict
from planner.billing import HOURS_PER_YEAR
from planner.catalog import purchase_price, stale_purchase_price_note
from planner.config import packaged_defaults
from planner.errors import QuantityError, UsageError
from planner.pricing.cost import OfferQuery
from planner.pricing.query import chosen_scope, scope_words
from planner.pricing.recent import check_basis
from planner.units import MAX_GPUS
from planner.wording import Phrase
from planner.workload.estimate import gpu_class

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from planner.answers.rental import RentalCurve
    from planner.catalog import GpuModel
    from planner.config import Config
    from planner.pricing.cost import JobCost

# The default figures are written once, in defaults.toml [tco] (what config.toml documents); their
# sources are the comments below.
_TCO_DEFAULTS = packaged_defaults()["tco"]


def _packaged(key: str) -> Decimal:
    value = _TCO_DEFAULTS[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # "years = 3.0" is the 3 years an answer prints, not "3.0 years"
    return Decimal(str(value))


# China business electricity: US$0.09/kWh in March 2024 (Statista, "Business electricity prices in
# China 2019-2024") and US$0.088/kWh average industrial rate in 2024 (China Briefing, "China's
# Industrial Power Rates"), at 7.10 CNY/USD (defaults.toml [fx]): about 0.64 CNY/kWh. Peak-hour tariffs
# in coastal cities run to 1.0-1.1 CNY/kWh; override with --electricity.
ELECTRICITY_CNY_PER_KWH = _packaged("electricity_cny_per_kwh")
ELECTRICITY_SOURCE = "Statista Mar 2024 (US$0.09/kWh) and China Briefing 2024 (US$0.088/kWh) at 7.10 CNY/USD"
# NDRC/MIIT action plan for green data centres (issued 2024-07-23, Xinhua 2024-07-24): national average
# PUE "lowered to less than 1.5" by 2025. New large data centres must reach 1.3.
PUE = _packaged("pue")
PUE_SOURCE = "NDRC/MIIT data-centre action plan, 2024-07-23: national average PUE below 1.5 by 2025"
# Assumptions (no source found): a busy GPU draws its TDP; an idle one 20% of it; the host (CPUs, RAM,
# NICs, fans) adds 30% to the GPUs' draw.
BUSY_POWER_FRACTION = Decimal("1")
IDLE_POWER_FRACTION = _packaged("idle_power_fraction")
HOST_POWER_FRACTION = _packaged("host_power_fraction")
# Host share per GPU (CPU, RAM, chassis, network), by GPU class.
# Data centre [derived]: an 8-GPU H20 server ~1.2M CNY (Huxiu, Jul 2024) / 8 = 150k per GPU, less the
# card's ~110k CNY (Reuters, Jan 2024) = 40k CNY per GPU.
# Consumer [assumption]: a 4-GPU workstation's CPU, board, RAM, 2 kW PSU and case ~20k CNY = 5k per GPU.
HOST_CNY_PER_GPU: dict[str, Decimal] = {
    c: _packaged(f"host_cny_per_gpu_{c}") for c in ("datacenter", "consumer")
}
HOST_SOURCE: dict[str, str] = {
    "datacenter": "derived: H20 8-GPU server ~1.2M CNY (Huxiu, Jul 2024) / 8 − card ~110k (Reuters, 2024-01)",
    "consumer": "assumption: a 4-GPU workstation host ~20k CNY",
}
# Hosting and maintenance per GPU-year, electricity excluded [assumption]: a colocation cabinet share
# and repairs for a server GPU; desk space and repairs for a workstation card.
HOSTING_CNY_PER_GPU_YEAR: dict[str, Decimal] = {
    c: _packaged(f"hosting_cny_per_gpu_year_{c}") for c in ("datacenter", "consumer")
}
# Resale [assumption]: China's second-hand GPU market is active, but no price series was found. A card
# keeps 67% of its value a year, i.e. 30% after the default 3 years (0.67³ ≈ 0.30).
RESALE_ANNUAL_RETENTION = _packaged("resale_annual_retention")
DEFAULT_YEARS = _packaged("years")
ASSUMPTION = "assumption (no source found)"

# Bounds on what a person can mean.
MAX_YEARS = Decimal(10)  # the rental engine quotes at most ten years
MAX_PURCHASE_CNY = Decimal(10_000_000)  # per GPU; an 8-GPU H100 server is ~2.7M CNY
MAX_RENT_CNY_PER_GPU_HOUR = Decimal(10_000)
MAX_ELECTRICITY_CNY_PER_KWH = Decimal(10)
MAX_PUE = Decimal(3)
BREAK_EVEN_ITERATIONS = 20
BREAK_EVEN_TOLERANCE = Decimal("1e-5")  # rental totals are rounded to fen, so the rate jitters below this


@dataclass(frozen=True)
class Assumption:
    """One input of the answer, with its value and where it came from, for display."""

    name: str
    value: str
    source: str


@dataclass(frozen=True)
class TcoResult:
    """Buy against rent for ``gpu_hours`` busy GPU-hours on ``gpus`` GPUs over ``years``.

    ``hours`` and ``break_even_hours`` are busy hours per GPU (``planner tco --hours``); the
    ``*_gpu_hours`` fields are the same for all GPUs together.
    """

    gpu: str
    gpus: int
    years: Decimal
    hours: Decimal
    gpu_hours: Decimal
    utilization: Decimal
    capacity_gpu_hours: Decimal
    buy_total_cny: Decimal
    rent_total_cny: Decimal
    buy_cny_per_gpu_hour: Decimal
    rent_cny_per_gpu_hour: Decimal
    break_even_hours: Decimal | None  # busy hours per GPU where both totals are equal; None: never
    break_even_gpu_hours: Decimal | None
    break_even_utilization: Decimal | None
    break_even_rent_cny_per_gpu_hour: Decimal | None  # the rental price at the break-even hours
    recommendation: str  # "rent" or "buy"
    summary: str
    buy_breakdown: dict[str, Decimal]  # purchase, host, hosting, power, resale (negative)
    assumptions: tuple[Assumption, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: money rounded to fen, hours to 0.1, fractions to 4 places."""
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if key == "buy_breakdown":
                out[key] = {k: _round(v, 2) for k, v in value.items()}
            elif key == "assumptions":
                out[key] = [a.__dict__.copy() for a in value]
            elif key == "notes":
                out[key] = list(value)
            elif isinstance(value, Decimal):
                places = 2 if key.endswith("cny") or "cny_per" in key else 4 if "utilization" in key else 1
                out[key] = _round(value, places)
            else:
                out[key] = value
        return out


def tco(
    gpu: GpuModel,
    rent_cny_per_gpu_hour: Decimal | float | str,
    hours: float | Decimal | None = None,
    *,
    gpus: int = 1,
    years: float | Decimal | None = None,
    utilization: float | Decimal | None = None,
    purchase_price_cny: Decimal | float | str | None = None,
    cny_per_usd: Decimal | float | str | None = None,
    host_cny_per_gpu: Decimal | float | str | None = None,
    hosting_cny_per_gpu_year: Decimal | float | str | None = None,
    electricity_cny_per_kwh: Decimal | float | str | None = None,
    pue: Decimal | float | str | None = None,
    resale_fraction: Decimal | float | str | None = None,
    resale_annual_retention: Decimal | float | str | None = None,
    idle_power_fraction: Decimal | float | str | None = None,
    host_power_fraction: Decimal | float | str | None = None,
    rent_rate_at: Callable[[Decimal], Decimal | None] | None = None,
    rent_note: str | None = None,
    origins: Mapping[str, str] | None = None,
    today: dt.date | None = None,
) -> TcoResult:
    """Compare buying ``gpus`` × ``gpu`` for ``years`` with renting the same busy GPU-hours.

    Give the work as ``hours`` (busy hours of each GPU over the horizon, as in ``planner quote``) or
    as ``utilization`` (the busy share of the bought GPUs' hours), not both. Any default left as None
    comes from the constants above or the catalog; each is listed in ``assumptions``, with its origin
    taken from ``origins`` (parameter name -> "config.toml [tco]", "--pue", ...) when given, else
    "given" for a value passed in and the constant's source for a default. ``rent_rate_at(gpu_hours)``
    is the rental price for that many GPU-hours when it is not one flat rate. A catalog purchase price
    over a year old on ``today`` (default: the UTC date) adds a note saying so.
    """
    given = dict(origins or {})

    def origin(name: str, value: object, default_source: str = ASSUMPTION) -> str:
        return given.get(name, "given") if value is not None else default_source

    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= MAX_GPUS:
        raise QuantityError("gpus", f"must be a whole number from 1 to {MAX_GPUS:,}, got {gpus!r}", "8")
    years_d = _bounded(DEFAULT_YEARS if years is None else years, "years", Decimal(0), MAX_YEARS, "e.g. 3")
    rent = _bounded(
        rent_cny_per_gpu_hour, "rental price (CNY per GPU-hour)", Decimal(0), MAX_RENT_CNY_PER_GPU_HOUR
    )
    capacity = Decimal(gpus) * years_d * HOURS_PER_YEAR
    work = _work_gpu_hours(hours, utilization, capacity, gpus, years_d)

    cls = gpu_class(gpu)
    price, price_note, server_included = _purchase_price(gpu, purchase_price_cny, cny_per_usd)
    price_note = given.get("purchase_price_cny", price_note) if purchase_price_cny is not None else price_note
    if host_cny_per_gpu is not None:
        host = _bounded(host_cny_per_gpu, "host share", Decimal(0), MAX_PURCHASE_CNY, allow_zero=True)
        host_note = origin("host_cny_per_gpu", host_cny_per_gpu)
    elif server_included:
        host, host_note = Decimal(0), "0: the purchase price already includes the server"
    else:
        host, host_note = HOST_CNY_PER_GPU[cls], HOST_SOURCE[cls]
    hosting = _default(hosting_cny_per_gpu_year, HOSTING_CNY_PER_GPU_YEAR[cls], "hosting", MAX_PURCHASE_CNY)
    tariff = _default(
        electricity_cny_per_kwh, ELECTRICITY_CNY_PER_KWH, "electricity", MAX_ELECTRICITY_CNY_PER_KWH
    )
    pue_d = _default(pue, PUE, "pue", MAX_PUE)
    if pue_d < 1:
        raise QuantityError(
            "pue", f"must be at least 1, got {pue_d}", hint="a data centre's PUE is typically 1.2-1.6"
        )
    idle = _default(idle_power_fraction, IDLE_POWER_FRACTION, "idle power fraction", Decimal(1))
    host_power = _default(host_power_fraction, HOST_POWER_FRACTION, "host power fraction", Decimal(2))
    if resale_fraction is None:
        retention = _default(resale_annual_retention, RESALE_ANNUAL_RETENTION, "resale retention", Decimal(1))
        resale = retention**years_d
        resale_note = f"{retention} of the value kept per year, {origin('resale_annual_retention', resale_annual_retention)}"
    else:
        resale = _bounded(
            resale_fraction, "resale", Decimal(0), Decimal(1), "e.g. 0.3 for 30%", allow_zero=True
        )
        resale_note = origin("resale_fraction", resale_fraction)
    if not gpu.tdp_watts:
        raise UsageError(f"the catalog has no TDP for {gpu.name}", "choose a GPU with a known power figure")

    n = Decimal(gpus)
    at_tdp = Decimal(str(gpu.tdp_watts)) / 1000 * (1 + host_power) * pue_d * tariff  # CNY per GPU-hour
    variable = at_tdp * (BUSY_POWER_FRACTION - idle)  # CNY per busy GPU-hour above idle
    idle_power = at_tdp * idle * capacity
    fixed_parts = {
        "purchase": n * price,
        "host": n * host,
        "hosting": n * hosting * years_d,
        "resale": -n * price * resale,
    }
    fixed = sum(fixed_parts.values()) + idle_power
    buy_total = fixed + variable * work
    breakdown = {**fixed_parts, "power": idle_power + variable * work}
    rent_total = rent * work
    break_even, rate_at_be, notes = _break_even(fixed, variable, rent, rent_rate_at)
    stale = None if purchase_price_cny is not None else stale_purchase_price_note(gpu, today or _utc_today())
    notes = [*notes, stale] if stale else notes
    verdict = "buy" if buy_total < rent_total else "rent"
    assumptions = (
        Assumption("purchase price per GPU", f"{price:,.0f} CNY", price_note),
        Assumption("VAT", "included, not reclaimed", "prices as quoted in China"),
        Assumption("host share per GPU", f"{host:,.0f} CNY", host_note),
        Assumption(
            "hosting and maintenance",
            f"{hosting:,.0f} CNY per GPU-year",
            origin("hosting_cny_per_gpu_year", hosting_cny_per_gpu_year),
        ),
        Assumption(
            "electricity",
            f"{tariff} CNY/kWh",
            origin("electricity_cny_per_kwh", electricity_cny_per_kwh, ELECTRICITY_SOURCE),
        ),
        Assumption("PUE", f"{pue_d}", origin("pue", pue, PUE_SOURCE)),
        Assumption(
            "GPU power",
            f"{gpu.tdp_watts:g} W TDP busy, {idle:.0%} of it idle",
            origin("idle_power_fraction", idle_power_fraction),
        ),
        Assumption(
            "host power",
            f"+{host_power:.0%} of GPU power",
            origin("host_power_fraction", host_power_fraction),
        ),
        Assumption("resale at the end", f"{resale:.0%} of the purchase price", resale_note),
        Assumption("horizon", f"{years_d:g} years, {gpus} GPU(s)", origin("years", years, "default")),
        Assumption("rental price", f"{rent:,.4f} CNY per GPU-hour", rent_note or "given"),
    )
    per_hour = buy_total / work
    return TcoResult(
        gpu=gpu.name,
        gpus=gpus,
        years=years_d,
        hours=work / n,
        gpu_hours=work,
        utilization=work / capacity,
        capacity_gpu_hours=capacity,
        buy_total_cny=buy_total,
        rent_total_cny=rent_total,
        buy_cny_per_gpu_hour=per_hour,
        rent_cny_per_gpu_hour=rent,
        break_even_hours=break_even / n if break_even is not None else None,
        break_even_gpu_hours=break_even,
        break_even_utilization=break_even / capacity if break_even is not None else None,
        break_even_rent_cny_per_gpu_hour=rate_at_be if break_even is not None else None,
        recommendation=verdict,
        summary=_summary(verdict, per_hour, rent, break_even, capacity, n),
        buy_breakdown=breakdown,
        assumptions=assumptions,
        notes=tuple(notes),
    )


def settings_for(gpu: GpuModel, section: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``tco`` keyword arguments from a ``[tco]`` config section, and where each came from.

    A setting equal to the module's default is left out, so the answer cites the default's source; a
    changed one is passed with the origin "config.toml [tco] <key>".
    """
    cls = gpu_class(gpu)
    pairs = {
        "years": ("years", DEFAULT_YEARS),
        "electricity_cny_per_kwh": ("electricity_cny_per_kwh", ELECTRICITY_CNY_PER_KWH),
        "pue": ("pue", PUE),
        "resale_annual_retention": ("resale_annual_retention", RESALE_ANNUAL_RETENTION),
        "idle_power_fraction": ("idle_power_fraction", IDLE_POWER_FRACTION),
        "host_power_fraction": ("host_power_fraction", HOST_POWER_FRACTION),
        f"host_cny_per_gpu_{cls}": ("host_cny_per_gpu", HOST_CNY_PER_GPU[cls]),
        f"hosting_cny_per_gpu_year_{cls}": ("hosting_cny_per_gpu_year", HOSTING_CNY_PER_GPU_YEAR[cls]),
    }
    kwargs: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for key, (name, default) in pairs.items():
        if key in section and _to_decimal(section[key], key) != default:
            kwargs[name] = _to_decimal(section[key], key)
            origins[name] = f"config.toml [tco] {key}"
    return kwargs, origins


def _break_even(
    fixed: Decimal,
    variable: Decimal,
    rate: Decimal,
    rate_at: Callable[[Decimal], Decimal | None] | None,
) -> tuple[Decimal | None, Decimal, list[str]]:
    """Busy GPU-hours where buying and renting cost the same, and the rental price there.

    Buying is ``fixed + variable·h``, renting ``r(h)·h``. With one flat rate that is one division; when
    the rate depends on the hours, iterate ``h = fixed / (r(h) − variable)`` from the flat answer until
    it settles, so that renting and buying at the returned hours cost the same.
    """
    if rate <= variable:
        return None, rate, []
    hours = fixed / (rate - variable)
    if rate_at is None:
        return hours, rate, []
    for _ in range(BREAK_EVEN_ITERATIONS):
        there = rate_at(hours)
        if there is None:
            return hours, rate, ["the rental price beyond these hours is unknown; break-even at today's rate"]
        if there <= variable:
            return None, there, []
        following = fixed / (there - variable)
        if abs(following - hours) <= hours * BREAK_EVEN_TOLERANCE:
            return following, there, []
        hours, rate = following, there
    return hours, rate, ["the rental price changes with the hours; the break-even is approximate"]


def _work_gpu_hours(
    hours: float | Decimal | None,
    utilization: float | Decimal | None,
    capacity: Decimal,
    gpus: int,
    years: Decimal,
) -> Decimal:
    if (hours is None) == (utilization is None):
        raise UsageError(
            Phrase("give {hours} or {utilization}, exactly one"),
            Phrase("e.g. {hours} 3000 or {utilization} 0.5"),
        )
    if utilization is not None:
        u = _bounded(utilization, "utilization", Decimal(0), Decimal(1), "e.g. 0.5 for 50% busy")
        return capacity * u
    assert hours is not None
    per_gpu = _bounded(hours, "hours", Decimal(0), MAX_YEARS * HOURS_PER_YEAR, "e.g. 3000 hours")
    if per_gpu * gpus > capacity:
        raise UsageError(
            f"a GPU is busy at most {capacity / gpus:,.0f} hours in {years:g} years, not {per_gpu:,.0f}",
            Phrase("raise {years}, or give the hours each GPU is busy"),
        )
    return per_gpu * gpus


def _purchase_price(
    gpu: GpuModel, given: Decimal | float | str | None, cny_per_usd: Decimal | float | str | None
) -> tuple[Decimal, str, bool]:
    """(price per GPU in CNY, where it came from, whether it includes the server)."""
    if given is not None:
        return _bounded(given, "purchase_price", Decimal(0), MAX_PURCHASE_CNY, "e.g. 12999"), "given", False
    source = gpu.purchase_price_source or "catalog"
    listed = purchase_price(gpu)
    how = f" ({listed.how})" if listed is not None else ""
    dated = f"catalog, {gpu.purchase_price_date or 'undated'}{how}: {source}"
    included = "server included" in source.lower() or "incl. server" in source.lower()
    if listed is not None and listed.basis == "cny":
        return listed.amount, dated, included
    if listed is not None and cny_per_usd is not None:
        fx = _bounded(cny_per_usd, "CNY per USD", Decimal(0), Decimal(1000))
        note = f"US price {listed.amount} USD at {fx} CNY/USD, no China premium; {dated}"
        return listed.amount * fx, note, included
    raise UsageError(
        f"the catalog has no purchase price for {gpu.name}",
        Phrase("give one with {purchase_price} CNY (per GPU)"),
    )


def _utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def _summary(
    verdict: str, per_hour: Decimal, rent: Decimal, be: Decimal | None, cap: Decimal, n: Decimal
) -> str:
    head = f"{verdict}: buying costs {per_hour:,.2f} CNY per used GPU-hour against {rent:,.2f} renting"
    if be is None:
        return f"{head}; buying never breaks even at this rental price"
    if be > cap:
        return (
            f"{head}; buying would break even only at {be / n:,.0f} busy hours per GPU, "
            f"more than the {cap / n:,.0f} in the horizon"
        )
    return f"{head}; break-even at {be / n:,.0f} busy hours per GPU ({be / cap:.0%} utilisation)"


def _to_decimal(value: Decimal | float | str | int, name: str) -> Decimal:
    if isinstance(value, bool):
        raise QuantityError(name, f"is not a number: {value!r}")
    try:
        d = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except ArithmeticError as exc:  # decimal.InvalidOperation
        raise QuantityError(name, f"is not a number: {value!r}") from exc
    if not d.is_finite():
        raise QuantityError(name, f"must be finite, got {value!r}")
    return d


def _bounded(
    value: Decimal | float | str | int,
    name: str,
    low: Decimal,
    high: Decimal,
    hint: str | None = None,
    allow_zero: bool = False,
) -> Decimal:
    """``value`` as a Decimal in (low, high], or [low, high] with ``allow_zero``; else a UsageError."""
    d = _to_decimal(value, name)
    shown = f"{d:g}"  # the user's number, never a Python repr such as Decimal('2')
    if (low, high) == (0, 1) and not (low < d <= high or (allow_zero and d == low)):
        raise QuantityError(
            name, f"must be between 0 and 1, got {shown}", hint=hint or "a fraction, e.g. 0.6"
        )
    if d < low or (d == low and not allow_zero):
        word = "cannot be negative" if allow_zero and low == 0 else f"must be more than {low:g}"
        raise QuantityError(name, f"{word}, got {shown}", hint=hint or "give a positive number")
    if d > high:
        raise QuantityError(name, f"must be at most {high:g}, got {shown}", hint=hint or f"at most {high:g}")
    return d


def _default(value: Decimal | float | str | None, default: Decimal, name: str, high: Decimal) -> Decimal:
    return default if value is None else _bounded(value, name, Decimal(0), high, allow_zero=True)


def _round(value: Decimal, places: int) -> float:
    return float(round(value, places))


def rent_vs_buy(
    curve: RentalCurve,
    gpu: GpuModel,
    hours: float | Decimal | None,
    utilization: float | Decimal | None,
    years: float | Decimal | None,
    **buy: Any,
) -> tuple[TcoResult, JobCost]:
    """``tco`` with the rental price of ``curve`` (``planner.answers.rental``) for the same work; also the
    rental used.

    ``buy`` holds tco's keyword arguments for the buying side (purchase price, power, resale, ...).
    The rental is the first by ``planner.pricing.rank.rank`` for the same busy GPU-hours run as one
    continuous job, all GPUs of the rented instances busy.
    """
    checked = check_tco(gpu, hours, utilization, curve.gpus, years, **buy)
    best = curve.cheapest(checked.gpu_hours)
    if best is None:
        raise UsageError(
            Phrase(
                "no rental price for {gpu} in the database"
                + (" in {where}" if curve.outside else "")
                + (" for this much work" if curve.offers else "")
                + (" with these {provider}/{billing} filters" if curve.filtered else "")
                + ("; there are prices outside {where}" if curve.outside else ""),
                gpu=gpu.name,
                where=scope_words(curve.scope),
            ),
            Phrase(
                ("rent them with {scope} all, " if curve.outside else "")
                + "give one with {rent_price} CNY per GPU-hour, or load prices: planner refresh / planner import"
            ),
        )
    rate_at: Callable[[Decimal], Decimal | None] = curve.rate_at
    result = tco(
        gpu,
        best.total_cny / checked.gpu_hours,
        hours,
        gpus=curve.gpus,
        years=years,
        utilization=utilization,
        rent_rate_at=rate_at,
        rent_note=describe(best),
        **buy,
    )
    return result, best


def check_tco(
    gpu: GpuModel,
    hours: float | Decimal | None,
    utilization: float | Decimal | None,
    gpus: int,
    years: float | Decimal | None,
    **buy: Any,
) -> TcoResult:
    """Refuse bad rent-against-buy inputs before any database work: the pure model at a placeholder
    rental price checks every input and says how much work it is."""
    return tco(gpu, Decimal(1), hours, gpus=gpus, years=years, utilization=utilization, **buy)


# The buying-side flags of ``planner tco``: the tco argument each sets (its origin is the flag's spelling).
_BUY_FLAGS = {
    "years": "years",
    "electricity": "electricity_cny_per_kwh",
    "pue": "pue",
    "resale": "resale_fraction",
    "purchase_price": "purchase_price_cny",
}


@dataclass(frozen=True)
class TcoRequest:
    """What ``planner tco`` asks, checked: ``gpus`` × ``gpu`` for ``hours`` (or ``utilization``) over
    ``years``, bought on the terms of ``buy`` (``tco``'s buying-side keyword arguments, each from
    ``origins``), against renting at ``rent_price`` or, without one, the cheapest rental ``query``
    admits on its ``basis`` price."""

    gpu: GpuModel
    hours: float | Decimal | None
    utilization: float | Decimal | None
    gpus: int
    years: float | Decimal | None  # None: the module's default, cited as such
    buy: dict[str, Any]
    origins: dict[str, str]
    basis: str
    query: OfferQuery
    rent_price: float | Decimal | None = None
    rent_note: str | None = None

    @classmethod
    def from_flags(cls, given: Mapping[str, Any], config: Config) -> TcoRequest:
        """The request a command's flags make, checked before any database work.

        ``given`` holds the flags, None or absent for one not typed: ``gpu``, ``hours``,
        ``utilization``, ``gpus``, ``rent_price``, ``price_basis``, ``providers``, ``billing``, ``scope``,
        and the buying terms ``years``, ``electricity``, ``pue``, ``resale`` and ``purchase_price``. A
        term not typed comes from ``[tco]`` of ``config`` (or the module's default), the price basis from
        ``[tco] price_basis``, the scope from ``[quote] scope`` and the USD rate from ``[fx]``; each term
        typed is cited by its flag (``--pue``).
        """
        model = catalog.get_model(catalog.canonical_name(given["gpu"]))
        section = config.section("tco")
        buy, origins = settings_for(model, section)
        for flag, name in _BUY_FLAGS.items():
            if (value := given.get(flag)) is not None:
                buy[name], origins[name] = value, "--" + flag.replace("_", "-")
        buy["cny_per_usd"] = config.section("fx").get("USD")
        years = buy.pop("years", None)
        if given.get("price_basis"):
            basis = check_basis(given["price_basis"])
        else:
            basis = check_basis(section.get("price_basis", "median"), "[tco] price_basis in the config")
        hours, utilization, gpus = given.get("hours"), given.get("utilization"), given.get("gpus", 1)
        check_tco(model, hours, utilization, gpus, years, origins=origins, **buy)
        query = OfferQuery.build(
            (),
            given.get("providers") or (),
            (),
            given.get("billing") or (),
            scope=chosen_scope(given.get("scope"), config),
        )
        rent_price = given.get("rent_price")
        return cls(model, hours, utilization, gpus, years, buy, origins, basis, query, rent_price,
                   "--rent-price" if rent_price is not None else None)  # fmt: skip


@dataclass(frozen=True)
class TcoAnswer:
    """Rent against buy, the rental it was costed on (None with a rental price given) and a cheaper
    rental outside the region scope, if any."""

    result: TcoResult
    rental: JobCost | None
    outside: JobCost | None
    scope: str
    basis: str

    def to_dict(self) -> dict[str, Any]:
        return self.result.to_dict() | {
            "scope": self.scope,
            "rental": rental_dict(self.rental) if self.rental else None,
            "cheaper_outside_scope": rental_dict(self.outside) if self.outside else None,
            "from_snapshot": bool(self.rental and self.rental.offer.from_snapshot),
        }


def rent_or_buy(request: TcoRequest, fx: Mapping[str, object], engine: Callable[[], Engine]) -> TcoAnswer:
    """The answer to ``request``: on its rental price when it has one (no database), else on the
    cheapest rental of the same work in the database ``engine()`` opens (called only then), with the
    cheaper rental outside the scope."""
    r = request
    rental = outside = None
    if r.rent_price is not None:
        result = tco(r.gpu, r.rent_price, r.hours, gpus=r.gpus, years=r.years, utilization=r.utilization,
                     rent_note=r.rent_note, origins=r.origins, **r.buy)  # fmt: skip
    else:
        with engine().connect() as conn:
            curve = rental_curve(conn, r.gpu, r.gpus, fx, r.basis, r.query)
            result, rental = rent_vs_buy(
                curve, r.gpu, r.hours, r.utilization, r.years, origins=r.origins, **r.buy
            )
            outside = curve.cheaper_outside(conn, result.gpu_hours)
    return TcoAnswer(result, rental, outside, r.query.scope, r.basis)
