"""Pure parsing of Tencent Cloud ``DescribeZoneInstanceConfigInfos`` payloads into RawOffers.

Shapes per ``reference/providers.md`` §1.1 and the tccli example (samples/, file changed 2025-09-23).
Both the official API and the workbench CGI return the same ``InstanceTypeQuotaSet`` items.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import Any

from scrapers.base import RawOffer, ScrapeError
from scrapers.types import Issue, to_price

# Family → (GPU in Tencent's words, GiB per card), providers.md §1.3 (Tencent docs lineage, 2024-2026).
# Only used when Remark does not name the GPU. PNV6/PNV6s/HCCPNV4h are [I] there, so left out: an
# unnamed GPU is reported as skipped rather than guessed.
FAMILY_GPU: dict[str, tuple[str, float | None]] = {
    "GT4": ("NVIDIA A100", 40),
    "GN10X": ("NVIDIA V100", 32),
    "GN10XP": ("NVIDIA V100", 32),
    "GN8": ("NVIDIA P40", 24),
    "GN7": ("NVIDIA T4", 16),
    "GI3X": ("NVIDIA T4", 16),
    "GN7VW": ("NVIDIA T4", 16),
    "GN6": ("NVIDIA P4", 8),
    "GN6S": ("NVIDIA P4", 8),
    "PNV4": ("NVIDIA A10", 24),
    "PNV5B": ("NVIDIA L20", 48),
    "HCCG5V": ("NVIDIA V100", 32),
    "HCCPNV5": ("NVIDIA H800", 80),
    "BMG5V": ("NVIDIA V100", None),
    "BMGNV4": ("NVIDIA A10", None),
    "BMG5T": ("NVIDIA T4", None),
    "BMG5N": ("NVIDIA RTX 3090", 24),
}

# "8 * NVIDIA A100", "1/4 * NVIDIA T4", "NVIDIA A10 24GB": the model is the vendor word plus what follows
# up to a separator or a memory figure.
_REMARK_GPU = re.compile(
    r"\b((?:NVIDIA|Nvidia|AMD|Tesla)\s+[A-Za-z0-9][A-Za-z0-9 \-]*?)\s*(?=\d+\s*G|[,，;；()（）]|$)"
)
_TIER_FROM_HOUR = {"SecondStep": 96, "ThirdStep": 360}  # hours 96-360 and >360 (api.json descriptions)

_REQUIRED = ("InstanceType", "Zone", "InstanceChargeType", "Price", "Status")


def gpu_model(item: Mapping[str, Any]) -> tuple[str, float | None] | None:
    """(raw GPU name, GiB per card) from Remark, else the family table; None when unknown."""
    family_gpu = FAMILY_GPU.get(str(item.get("InstanceFamily", "")).upper())
    match = _REMARK_GPU.search(str(item.get("Remark") or ""))
    if match:
        name = match.group(1).strip()
        memory = family_gpu[1] if family_gpu and family_gpu[0] == name else None
        return name, memory
    return family_gpu


def gpu_count(item: Mapping[str, Any], where: str) -> float:
    """``GpuCount`` (a float: 0.25 is a quarter-card vGPU) or, when absent/zero, the integer ``Gpu``."""
    for key in ("GpuCount", "Gpu"):
        value = item.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e6:
            raise ScrapeError(f"{where}: {key}={value!r} is not a GPU count")
        if value > 0:
            return float(value)
    return 0.0


def parse_quota_set(response: Any, *, region: str, source: str) -> Iterator[RawOffer | Issue]:
    """Offers for every GPU item of one ``Response`` object; ScrapeError on any shape we do not know."""
    if not isinstance(response, dict):
        raise ScrapeError(f"tencent {region}: Response is not an object")
    if "Error" in response:
        error = response["Error"] if isinstance(response["Error"], dict) else {}
        raise ScrapeError(
            f"tencent {region}: {error.get('Code', 'Error')}: {error.get('Message', '')}".strip()
        )
    items = response.get("InstanceTypeQuotaSet")
    if not isinstance(items, list):
        raise ScrapeError(f"tencent {region}: no InstanceTypeQuotaSet list in the response")
    for item in items:
        where = f"tencent {region} {item.get('InstanceType', '?') if isinstance(item, dict) else '?'}"
        if not isinstance(item, dict) or any(k not in item for k in _REQUIRED):
            raise ScrapeError(f"{where}: item lacks one of {', '.join(_REQUIRED)}")
        count = gpu_count(item, where)
        if count == 0:
            continue  # a CPU-only type
        model = gpu_model(item)
        if model is None:
            yield Issue(
                "skipped",
                f"{where}: GPU model unknown (family {item.get('InstanceFamily')})",
                region,
                str(item["InstanceType"]),
            )
            continue
        yield from _offers(item, region, count, model, source, where)


def _offers(
    item: dict[str, Any], region: str, count: float, model: tuple[str, float | None], source: str, where: str
) -> Iterator[RawOffer]:
    price = item["Price"]
    if not isinstance(price, dict):
        raise ScrapeError(f"{where}: Price is not an object")

    def field(name: str) -> Decimal:
        return to_price(price.get(name, 0), f"{where} Price.{name}")

    status = item["Status"]
    base = RawOffer(
        billing="",
        price=Decimal(0),
        unit="",
        provider="tencent",
        region=region,
        zone=str(item["Zone"]),
        instance_type=str(item["InstanceType"]),
        gpu_name=model[0],
        gpu_count=count,
        gpu_memory_gb=model[1],
        vcpus=item["Cpu"] if isinstance(item.get("Cpu"), int) else None,
        memory_gb=float(item["Memory"]) if isinstance(item.get("Memory"), int | float) else None,
        source=source,
        stock_status="sold_out" if status == "SOLD_OUT" else "available" if status == "SELL" else None,
        extra={k: str(item[k]) for k in ("StatusCategory", "SoldOutReason", "Remark") if item.get(k)},
    )
    charge = item["InstanceChargeType"]
    if charge == "POSTPAID_BY_HOUR":
        for prefix, is_list in (("UnitPrice", True), ("UnitPriceDiscount", False)):
            first = field(prefix)
            if first == 0 or (not is_list and first == field("UnitPrice")):
                continue  # 0 = not applicable; a "discount" equal to list adds nothing
            tiers = tuple(
                (h, field(prefix + step)) for step, h in _TIER_FROM_HOUR.items() if field(prefix + step)
            )
            yield replace(
                base, billing="on_demand", price=first, unit="hour", is_list_price=is_list, tiers=tiers
            )
    elif charge == "PREPAID":
        for name, unit, is_list in (
            ("OriginalPrice", "month", True),
            ("DiscountPrice", "month", False),
            ("OriginalPriceOneYear", "year", True),
            ("DiscountPriceOneYear", "year", False),
        ):
            value = field(name)
            list_twin = field(name.replace("Discount", "Original"))
            if value == 0 or (not is_list and value == list_twin):
                continue
            yield replace(
                base,
                billing="monthly" if unit == "month" else "yearly",
                price=value,
                unit=unit,
                is_list_price=is_list,
            )
    elif charge == "SPOTPAID":
        # The spot price is UnitPriceDiscount; UnitPrice is the on-demand list price (ChangJi, ~2025).
        value = field("UnitPriceDiscount")
        if value:
            yield replace(base, billing="spot", price=value, unit="hour", is_list_price=False)
    # CDHPAID / CDCPAID (dedicated hosts/clusters) are out of scope.
