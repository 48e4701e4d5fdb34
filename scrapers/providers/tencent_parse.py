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
from scrapers.stock import Stock, word, worst
from scrapers.types import Issue, ItemSkipped, optional_number, optional_price
from vocab import TENCENT_TIER_HOURS

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
# "8 * NVIDIA H20" (Externals.GPUDesc): the count before the star, when there is one.
_DESC_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[*×xX]\s*")
_TIER_FROM_HOUR = dict(zip(("SecondStep", "ThirdStep"), TENCENT_TIER_HOURS, strict=True))

# Where an item names its GPU, in the order we believe them (most specific first):
# 1. Externals.GPUDesc (str, "8 * NVIDIA H20"), 2. Externals.GpuAttr.Type (str) - both sent by the
# console workbench, not in the SDK's Externals model (tencentcloud-sdk-python-cvm 3.1.178 documents
# only ReleaseAddress, UnsupportNetworks, StorageBlockAttr); their shape is that of a Go struct in a
# Tencent-copyrighted package (GPUDesc string; GpuAttr {Ratio float64, Type string}), via the code index.
# 3. Remark (str, SDK: "实例备注信息", e.g. "8 * NVIDIA A100"). 4. The family table above.
GPU_NAME_SOURCES = ("Externals.GPUDesc", "Externals.GpuAttr.Type", "Remark")

_REQUIRED = ("InstanceType", "Zone", "InstanceChargeType", "Price")


# Stock words: ``InstanceTypeQuotaItem.Status`` (SELL | SOLD_OUT) and ``StatusCategory`` (EnoughStock |
# NormalStock | UnderStock | WithoutStock), tencentcloud-sdk-python-cvm 3.1.178, models.py.
TENCENT_STATUS: dict[str, Stock] = {"SELL": Stock.AVAILABLE, "SOLD_OUT": Stock.SOLD_OUT}
TENCENT_STATUS_CATEGORY: dict[str, Stock] = {
    "EnoughStock": Stock.AVAILABLE,
    "NormalStock": Stock.AVAILABLE,
    "UnderStock": Stock.LOW,
    "WithoutStock": Stock.SOLD_OUT,
}


def tencent_stock(status: Any, status_category: Any) -> Stock:
    """Tencent ``Status`` with ``StatusCategory``; either may be null or a value we do not know."""
    return worst(word(TENCENT_STATUS, status), word(TENCENT_STATUS_CATEGORY, status_category))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def gpu_texts(item: Mapping[str, Any]) -> dict[str, str]:
    """The text of every place an item may name its GPU (empty when absent, null or not a string)."""
    externals = item.get("Externals")
    externals = externals if isinstance(externals, dict) else {}
    attr = externals.get("GpuAttr")
    attr = attr if isinstance(attr, dict) else {}
    return {
        "Externals.GPUDesc": _text(externals.get("GPUDesc")),
        "Externals.GpuAttr.Type": _text(attr.get("Type")),
        "Remark": _text(item.get("Remark")),
    }


def gpu_model(item: Mapping[str, Any]) -> tuple[str, float | None, str] | None:
    """(raw GPU name, GiB per card, where it came from) in the order of ``GPU_NAME_SOURCES``, then the
    family table; None when no place names it."""
    family_gpu = FAMILY_GPU.get(_text(item.get("InstanceFamily")).upper())
    for source, text in gpu_texts(item).items():
        match = _REMARK_GPU.search(text)
        if match:
            name = match.group(1).strip()
            memory = family_gpu[1] if family_gpu and family_gpu[0] == name else None
            return name, memory, source
    if family_gpu:
        return family_gpu[0], family_gpu[1], "family table"
    return None


def gpu_count(item: Mapping[str, Any], where: str) -> float:
    """``GpuCount`` (float, 0.25 = a quarter-card vGPU), else ``Gpu`` (int), else the count in
    ``Externals.GPUDesc``; 0 for a CPU-only type. Null and numeric strings are read; junk skips the item."""
    for key in ("GpuCount", "Gpu"):
        value = optional_number(item.get(key), f"{where}: {key}", limit=1e6)
        if value:
            return value
    match = _DESC_COUNT.match(gpu_texts(item)["Externals.GPUDesc"])
    return float(match.group(1)) if match and 0 < float(match.group(1)) <= 64 else 0.0


def parse_quota_set(response: Any, *, region: str, source: str) -> Iterator[RawOffer | Issue]:
    """Offers for every GPU item of one ``Response`` object.

    A response we cannot read at all (an ``Error``, no ``InstanceTypeQuotaSet`` list) is a ScrapeError
    for the region; one item we cannot read (a required field missing, a price that is not a number)
    is an ``Issue("skipped")`` naming the item and the field, and the rest of the region is kept.
    """
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
        name = item.get("InstanceType") if isinstance(item, dict) else None
        itype = name if isinstance(name, str) and name else "?"
        where = f"tencent {region} {itype}"
        try:
            if not isinstance(item, dict):
                raise ItemSkipped(f"{where}: item is not an object")
            missing = [k for k in _REQUIRED if item.get(k) in (None, "")]
            if missing or itype == "?":
                raise ItemSkipped(f"{where}: item lacks {', '.join(missing or ['InstanceType'])}")
            count = gpu_count(item, where)
            if count == 0:
                continue  # a CPU-only type
            model = gpu_model(item)
            if model is None:
                family = _text(item.get("InstanceFamily")) or "?"
                raise ItemSkipped(
                    f"{where}: GPU model unknown: none of {', '.join(GPU_NAME_SOURCES)} names it "
                    f"and family {family} is not in the table"
                )
            offers = list(_offers(item, region, count, model, source, where))
        except ItemSkipped as exc:
            yield Issue("skipped", str(exc), region, None if itype == "?" else itype)
            continue
        yield from offers


def _offers(
    item: dict[str, Any],
    region: str,
    count: float,
    model: tuple[str, float | None, str],
    source: str,
    where: str,
) -> Iterator[RawOffer]:
    """The item's prices. Every ItemPrice field "may return null" (SDK) and some examples carry strings:
    null, absent and 0 all mean "not for this charge type"; a value that is not a number skips the item."""
    price = item["Price"]
    if not isinstance(price, dict):
        raise ItemSkipped(f"{where}: Price is not an object")

    def field(name: str) -> Decimal:
        return optional_price(price.get(name), f"{where} Price.{name}") or Decimal(0)

    gpu_note = None
    if model[2] == "family table":
        gpu_note = (
            f"GPU from the {_text(item.get('InstanceFamily'))} family table: "
            f"{', '.join(GPU_NAME_SOURCES)} name no GPU"
        )
    cpu, memory = item.get("Cpu"), item.get("Memory")
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
        vcpus=cpu if isinstance(cpu, int) and not isinstance(cpu, bool) else None,
        memory_gb=float(memory) if isinstance(memory, int | float) and not isinstance(memory, bool) else None,
        source=source,
        stock_status=tencent_stock(item.get("Status"), item.get("StatusCategory")),
        gpu_note=gpu_note,
        extra={
            "gpu_source": model[2],
            **{
                k: str(item[k])
                for k in ("Status", "StatusCategory", "SoldOutReason", "Remark")
                if item.get(k)
            },
        },
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
