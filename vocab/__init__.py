"""The planner's vocabulary: billing modes, price units, run, stock and check statuses, the providers, the
columns of a price row, how a moment is written in a file (:func:`iso_time` for programs,
:func:`sheet_time` for the CSVs people open) and how many places a number of money gets there
(:func:`sheet_places`).

This is the one leaf every package may import (``planner``, ``scrapers``, ``db``, ``reports``): it imports
nothing of ours, so no package cycle can run through it. The words live here once; the rules that use
them (how a billing mode is spelt by people, what a price per month costs per hour, when a run counts as
interrupted) stay with the code that owns them.

The statuses are :class:`enum.StrEnum`, so a member *is* its string: ``RunStatus.OK == "ok"``, it hashes
like ``"ok"``, and it is stored and written to JSON and CSV as ``ok``, exactly as the bare strings were.

Providers: :data:`PROVIDER_TABLE` is the scrapers' registry without the scrapers. Each line names a
provider, the class that scrapes it (as ``module:Class``, imported only by ``scrapers.registry``), the
other names people call it, whether it is a marketplace and how its regions are named. Adding a
provider touches one new scraper
module and one line here; ``planner --provider`` checks and ``--help`` read the same table without
importing ``requests`` or any scraper.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from vocab.words import ENGLISH, say, word


class BillingMode(StrEnum):
    """How a price is charged: per hour (``on_demand``, ``spot``) or per paid period."""

    ON_DEMAND = "on_demand"
    SPOT = "spot"
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    YEARLY = "yearly"


class RunStatus(StrEnum):
    """A ``scrape_runs`` row's status."""

    RUNNING = "running"  # started, not finished (yet, or ever: see INTERRUPTED)
    OK = "ok"
    PARTIAL = "partial"  # some regions failed; the rest is stored
    FAILED = "failed"  # nothing stored
    SKIPPED = "skipped"  # disabled in the config, or nothing to do
    INTERRUPTED = "interrupted"  # was still running when its process died


# A provider run that stored data (its prices count as observed).
STORED_RUN_STATUSES: tuple[RunStatus, ...] = (RunStatus.OK, RunStatus.PARTIAL)
# The statuses a report or an alert digest calls a problem.
PROBLEM_RUN_STATUSES: tuple[RunStatus, ...] = (
    RunStatus.FAILED,
    RunStatus.PARTIAL,
    RunStatus.RUNNING,
    RunStatus.INTERRUPTED,
)


class StockStatus(StrEnum):
    """What a provider says about stock, in our words. ``UNKNOWN`` is stored as no verdict (NULL)."""

    AVAILABLE = "available"
    LOW = "low"  # rentable now, about to run out
    SOLD_OUT = "sold_out"
    UNKNOWN = "unknown"


class CheckStatus(StrEnum):
    """What a provider's cheap check (``planner providers --check``, ``scrapers.check``) found."""

    WORKS = "works"
    REFUSED = "refused"  # the provider answered no: credentials, login, permission
    FAILED = "failed"  # no usable answer: network, or a shape we do not understand
    SKIPPED = "skipped"  # disabled in the config, or no cheap check for this provider


# Checks that say a provider is broken (the command exits non-zero).
BROKEN_CHECK_STATUSES: tuple[CheckStatus, ...] = (CheckStatus.REFUSED, CheckStatus.FAILED)


# The verdicts ``availability.stock_status`` stores (UNKNOWN is stored as NULL).
STORED_STOCK_STATUSES: tuple[StockStatus, ...] = (
    StockStatus.AVAILABLE,
    StockStatus.LOW,
    StockStatus.SOLD_OUT,
)

HOURS_PER_DAY = 24
HOURS_PER_WEEK = 168
HOURS_PER_YEAR = 8760
HOURS_PER_MONTH = 730  # 8760 / 12, the convention the providers' own calculators use

# The unit a price of each billing mode is quoted per, and the hours in each unit.
UNIT_OF_MODE: dict[str, str] = {
    BillingMode.ON_DEMAND: "hour",
    BillingMode.SPOT: "hour",
    BillingMode.DAILY: "day",
    BillingMode.WEEKLY: "week",
    BillingMode.MONTHLY: "month",
    BillingMode.YEARLY: "year",
}
HOURS_PER_UNIT: dict[str, int] = {
    "hour": 1,
    "day": HOURS_PER_DAY,
    "week": HOURS_PER_WEEK,
    "month": HOURS_PER_MONTH,
    "year": HOURS_PER_YEAR,
}


def gpu_hour_basis(billing: str, hours: float | None = None, lang: str = "en") -> str:
    """What a CNY-per-GPU-hour figure is, in words, for every column and label that shows one: a list
    price per GPU-hour names its billing mode and the hours of its period ("monthly, 730 h a month";
    "on_demand, per hour"); a job's cost per GPU-hour names the hours it was costed for ("monthly,
    for 720 h"). The one wording: ``planner.pricing.headline`` and ``reports`` both use it. In Chinese
    (``lang="zh"``) the mode is the team's word for it: "包月，每月 730 小时"."""
    if lang != ENGLISH:  # the billing mode in the team's words: 包月，每月 730 小时
        return _basis_words(billing, hours, lang)
    if hours is not None:
        return f"{billing}, for {hours:,g} h"
    unit = UNIT_OF_MODE.get(billing, "hour")
    if unit == "hour":
        return f"{billing}, per hour"
    return f"{billing}, {HOURS_PER_UNIT[unit]:,} h a {unit}"


def _basis_words(billing: str, hours: float | None, lang: str) -> str:
    mode = word("billing", billing, lang)
    if hours is not None:
        return say("basis.for_hours", lang, billing=mode, hours=f"{hours:,g}")
    unit = UNIT_OF_MODE.get(billing, "hour")
    if unit == "hour":
        return say("basis.per_hour", lang, billing=mode)
    return say(
        "basis.period", lang, billing=mode, hours=f"{HOURS_PER_UNIT[unit]:,}", unit=say(f"unit.{unit}", lang)
    )


# --- A price row, as every file spells it ---------------------------------------------------------------
#
# Declared once: ``planner import`` reads these columns, ``planner export`` and ``db.queries.export_rows``
# write and select them, the bundled snapshot and ``bench/generate.py`` write them, and ``planner prices
# --format csv`` starts its rows with PRICE_COLUMNS.

# One price of one instance: the instance (provider, region, instance type), its GPUs, the billing mode
# and the price per instance and billing unit, in its currency.
PRICE_COLUMNS: tuple[str, ...] = (
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "billing",
    "price",
    "currency",
)
IMPORT_REQUIRED_COLUMNS: tuple[str, ...] = (*PRICE_COLUMNS, "observed_at")
IMPORT_OPTIONAL_COLUMNS: tuple[str, ...] = ("vcpus", "memory_gb", "source")
IMPORT_COLUMNS: tuple[str, ...] = IMPORT_REQUIRED_COLUMNS + IMPORT_OPTIONAL_COLUMNS
# What ``planner export`` adds so that export -> import loses nothing a quote uses: the GPU note, the
# hourly tiers after the first (JSON [[from_hour, "price"], ...], Tencent's TENCENT_TIER_HOURS steps), a
# marketplace's median listing, and the stock seen with the price (kept for the newest row of each
# instance and billing mode: the database keeps one stock row per instance, billing mode and run). A file
# written before a column was added (max_*_per_machine: 2026-12) still imports; the column is then empty.
LOSSLESS_COLUMNS: tuple[str, ...] = (
    "gpu_note",
    "tiers",
    "median_price",
    "stock_status",
    "idle_gpus",
    "total_gpus",
    "orderable_gpus",
    "max_idle_gpus_per_machine",
    "max_orderable_gpus_per_machine",
    # Since 2026-12: when the price was last confirmed (observed_at is when it was first seen), when the
    # provider stopped listing the offer (by the source, or its latest refresh), and whether it came
    # from the bundled snapshot (imported into a run of kind "snapshot", as it was).
    "confirmed_at",
    "unlisted_at",
    "from_snapshot",
)
EXPORT_COLUMNS: tuple[str, ...] = IMPORT_COLUMNS + LOSSLESS_COLUMNS


# RawOffer.extra key: a GPU memory size as the provider sent it, in a unit it does not document
# (Volcengine's Memory.Size). The pipeline checks it against the catalog (planner.ingest.normalize).
EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED = "gpu_memory_size_unit_undocumented"


RegionNaming = Literal["cn-prefix", "area-city", "c-area", "mainland"]


@dataclass(frozen=True)
class Provider:
    """One line of the provider table."""

    name: str
    scraper: str  # "module:Class", imported by scrapers.registry alone
    aliases: tuple[str, ...] = ()  # other names, compared lower-cased without spaces or underscores
    # A marketplace sells the GPUs of shared machines one by one: its "instance" is one GPU
    # (normalize.py), and a job of N GPUs can sit on one machine while N fits it.
    marketplace: bool = False
    # How its region names tell mainland China from elsewhere (planner.regions): "cn-prefix" (cn-<city>,
    # Hong Kong excepted), "area-city" (Tencent's ap-<city>), "c-area" (PPIO's c-<area>-<n>) or
    # "mainland" (every region is).
    region_naming: RegionNaming = "cn-prefix"


PROVIDER_TABLE: tuple[Provider, ...] = (
    Provider(
        "aliyun", "scrapers.providers.aliyun:AliyunScraper", ("alibaba", "alibabacloud", "alicloud", "阿里云")
    ),
    Provider(
        "tencent",
        "scrapers.providers.tencent:TencentScraper",
        ("tencentcloud", "qcloud", "腾讯云"),
        region_naming="area-city",
    ),
    Provider(
        "volcengine", "scrapers.providers.volcengine:VolcengineScraper", ("volc", "bytedance", "火山引擎")
    ),
    Provider("autodl", "scrapers.providers.autodl:AutodlScraper", marketplace=True, region_naming="mainland"),
    Provider("ppio", "scrapers.providers.ppio:PpioScraper", ("派欧云", "ppinfra"), region_naming="c-area"),
    Provider("compshare", "scrapers.providers.compshare:CompshareScraper", ("优云智算", "ucompshare")),
)
PROVIDER_NAMES: tuple[str, ...] = tuple(p.name for p in PROVIDER_TABLE)
MARKETPLACES: frozenset[str] = frozenset(p.name for p in PROVIDER_TABLE if p.marketplace)
REGION_NAMING: dict[str, RegionNaming] = {p.name: p.region_naming for p in PROVIDER_TABLE}
# GPUs on one marketplace machine: AutoDL's market search lists machines with gpu_number 8
# (shared/reference/samples/autodl_machine_search.json).
MARKET_MACHINE_GPUS = 8
# Tencent's hourly tiers: the hour its on-demand price steps down, to SecondStep then ThirdStep
# (Tencent's api.json descriptions: hours 96-360 and >360).
TENCENT_TIER_HOURS: tuple[int, int] = (96, 360)


def iso_time(value: dt.datetime) -> str:
    """ISO 8601 with its zone: ``2026-11-30T02:00:00Z``. The database stores naive UTC, so a naive time
    is UTC; an aware one keeps its offset (``+08:00``), ``Z`` when it is UTC. Every time the planner
    writes (JSON, CSV, the reports' files) is spelt this way."""
    if value.tzinfo is None:
        return value.isoformat() + "Z"
    if value.utcoffset() == dt.timedelta(0):
        return value.replace(tzinfo=None).isoformat() + "Z"
    return value.isoformat()


# --- The CSVs people open in Excel or WPS (the report's files, every command's --format csv) ---------


def sheet_time(value: dt.datetime) -> str:
    """A moment as Excel, WPS and LibreOffice read a date and time from a CSV: ``2026-11-30 02:00:00``,
    to the second, in UTC (an aware time is converted; a naive one is UTC already, as the database
    stores it).

    No ``T`` and no zone: a spreadsheet reads ``2026-11-30T02:00:00Z`` as text. So the zone is said by
    the column instead (the report's ``*_utc`` columns; docs/commands.md: "CSV times are UTC")."""
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%d %H:%M:%S")


MONEY_PLACES = 2  # an amount of money: 12948.00
# A price per hour under 1 (CNY 0.3500 a GPU-hour), or per another unit of use (0.0731 per million tokens):
# 2 places would make 0.35 and 0.354 one price, and 0.0731 a rounded 0.07.
SMALL_RATE_PLACES = 4
PERCENT_PLACES = 2  # a change in percent: -12.50
# The words of a column name (split at "_") that make it money when they come before any "per": "price",
# "unit_price", "purchase_price_cny", "total_cny", "cny_per_gpu_hour", "cny_per_million_tokens_job".
# Not "tflops_per_cny_hour" (compute per CNY, not CNY), nor a count such as "prices_stored" ("prices" is
# no word of theirs).
_MONEY_WORDS = frozenset({"price", "cny", "usd"})
_PERCENT_WORDS = frozenset({"pct", "percent"})


def sheet_places(column: str, value: float, unit: str | None = None) -> int | None:
    """The decimal places of a number in a CSV for people, by the name of its column: money 2 places,
    a price per hour (or per another unit of use) under 1 (CNY) 4, a percentage 2; None for any other
    number (a count, GPUs, GB, seconds, TFLOPS per CNY), which is written as it is.

    A price per unit of use is a money column per something (``cny_per_gpu_hour``,
    ``rent_cny_per_gpu_hour``, ``cny_per_million_tokens_job``) or a price column (``price``,
    ``unit_price``, ``old_price``, ...) whose row's ``unit`` is ``hour``.
    The one rule: the report's files (``reports.csvfile``) and ``--format csv`` (``planner.output``)."""
    words = column.split("_")
    if _PERCENT_WORDS.intersection(words):
        return PERCENT_PLACES
    numerator = words[: words.index("per")] if "per" in words else words
    if not _MONEY_WORDS.intersection(numerator):
        return None
    rate = "per" in words or ("price" in numerator and unit == "hour")
    return SMALL_RATE_PLACES if rate and abs(value) < 1 else MONEY_PLACES


def sheet_number(column: str, value: float, unit: str | None = None) -> str | None:
    """``value`` to :func:`sheet_places` places as text (``"17.74"``, ``"0.3500"``); None where the
    column keeps its number as it is."""
    places = sheet_places(column, value, unit)
    if places is None:
        return None
    text = f"{value:.{places}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # -0.00 is 0.00
