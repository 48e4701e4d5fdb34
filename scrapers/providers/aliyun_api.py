"""Aliyun ECS OpenAPI (2014-05-26) calls used in account mode, signed ACS3-HMAC-SHA256.

- ``DescribeInstanceTypes``: GPU specs (GPUSpec, GPUAmount, GPUMemorySize), paged by NextToken.
- ``DescribeAvailableResource``: sold-out status per zone; must go to the region's own endpoint, else it
  answers 500 UnknownError or silently nothing (ChangJi comment, providers.md §2.1).
- ``DescribeSpotPriceHistory``: spot prices, CNY per hour on the China site.

Throttling arrives as an error body with ``Code: Throttling`` and is retried by the HTTP client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from scrapers.base import ScrapeError
from scrapers.http import HttpClient, HttpResponse
from scrapers.signing.acs3 import Acs3Signer
from scrapers.stock import Stock, best_of, word, worst
from scrapers.types import ItemSkipped, optional_number, optional_price

VERSION = "2014-05-26"
CENTRAL = "https://ecs.aliyuncs.com/"


# Stock words: ``SupportedResource.Status`` (Available | SoldOut) and ``StatusCategory`` (WithStock |
# ClosedWithStock | WithoutStock | ClosedWithoutStock), DescribeAvailableResource API doc (providers.md
# §2.1); the SDK (alibabacloud_ecs20140526 7.11.8) types both as plain ``str``.
ALIYUN_STATUS: dict[str, Stock] = {"Available": Stock.AVAILABLE, "SoldOut": Stock.SOLD_OUT}
# "Closed" = the type is no longer sold to new buyers there; WithStock/WithoutStock = stock left or not.
ALIYUN_STATUS_CATEGORY: dict[str, Stock] = {
    "WithStock": Stock.AVAILABLE,
    "ClosedWithStock": Stock.AVAILABLE,
    "WithoutStock": Stock.SOLD_OUT,
    "ClosedWithoutStock": Stock.SOLD_OUT,
}


def aliyun_stock(status: Any, status_category: Any) -> Stock:
    """Aliyun ``Status`` with ``StatusCategory``: ``Available`` + ``WithoutStock`` is sold out."""
    return worst(word(ALIYUN_STATUS, status), word(ALIYUN_STATUS_CATEGORY, status_category))


@dataclass(frozen=True)
class GpuSpec:
    """What DescribeInstanceTypes says about one type's GPUs."""

    gpu_name: str
    gpu_count: int
    gpu_memory_gb: float | None
    vcpus: int | None
    memory_gb: float | None


def _throttled(resp: HttpResponse) -> bool:
    return b'"Throttling' in resp.content[:2000]


class AliyunApi:
    """Signed ECS calls for one access key; every answer is checked before use."""

    def __init__(self, client: HttpClient, access_key_id: str, access_key_secret: str) -> None:
        self.client = client
        self._id, self._secret = access_key_id, access_key_secret
        # Items and rows left out of the answers so far, each with its reason (one bad item, never
        # the whole call): the scraper reports them.
        self.left_out: list[str] = []

    def __repr__(self) -> str:
        return "AliyunApi(<credentials hidden>)"

    def call(self, action: str, params: Mapping[str, str], region: str | None = None) -> dict[str, Any]:
        url = f"https://ecs.{region}.aliyuncs.com/" if region else CENTRAL
        signer = Acs3Signer(self._id, self._secret, action=action, version=VERSION)
        data = self.client.get(url, params=params, signer=signer, retry_if=_throttled).json()
        if not isinstance(data, dict):
            raise ScrapeError(f"aliyun {action}: answer is not an object")
        if "Code" in data and "Message" in data:  # an error body that came with HTTP 200
            raise ScrapeError(f"aliyun {action}: {data['Code']}: {str(data['Message'])[:160]}")
        return data

    def gpu_specs(self) -> dict[str, GpuSpec]:
        """Every instance type with GPUAmount > 0, keyed by InstanceTypeId."""
        specs: dict[str, GpuSpec] = {}
        token = ""
        for _page in range(100):  # a runaway NextToken must not loop forever
            params = {"MaxResults": "100", **({"NextToken": token} if token else {})}
            data = self.call("DescribeInstanceTypes", params)
            items = _path(data, "InstanceTypes", "InstanceType", action="DescribeInstanceTypes")
            for item in items:
                itype = item.get("InstanceTypeId") if isinstance(item, dict) else None
                if not isinstance(itype, str) or not itype:
                    self.left_out.append("DescribeInstanceTypes: an item without InstanceTypeId")
                    continue
                try:  # SDK: GPUAmount int, GPUSpec str, GPUMemorySize float; any may be absent or null
                    amount = optional_number(item.get("GPUAmount"), f"{itype} GPUAmount", limit=64) or 0
                except ItemSkipped as exc:
                    self.left_out.append(f"DescribeInstanceTypes: {exc}")
                    continue
                spec_name = item.get("GPUSpec")
                if amount and isinstance(spec_name, str) and spec_name.strip() and amount == int(amount):
                    specs[itype] = GpuSpec(
                        spec_name.strip(),
                        int(amount),
                        _number(item.get("GPUMemorySize")),
                        _whole(item.get("CpuCoreCount")),
                        _number(item.get("MemorySize")),
                    )
            token = str(data.get("NextToken") or "")
            if not token or not items:
                return specs
        raise ScrapeError("aliyun DescribeInstanceTypes: more than 100 pages")

    def availability(self, region: str) -> tuple[dict[str, Stock], list[str]]:
        """(instance type -> stock, reasons for entries left out). Per zone, ``Status`` and
        ``StatusCategory`` combine in :func:`aliyun_stock` ("Available" beside
        "WithoutStock" is sold out); over zones the best one decides. An entry without ``Value`` is
        left out with a reason, never the region."""
        params = {"RegionId": region, "DestinationResource": "InstanceType", "InstanceChargeType": "PostPaid"}
        data = self.call("DescribeAvailableResource", params, region)
        per_zone: dict[str, list[Stock]] = {}
        left_out: list[str] = []
        for zone in _path(data, "AvailableZones", "AvailableZone", action="DescribeAvailableResource"):
            for resource in _path(
                zone, "AvailableResources", "AvailableResource", action="DescribeAvailableResource"
            ):
                for supported in _path(
                    resource, "SupportedResources", "SupportedResource", action="DescribeAvailableResource"
                ):
                    value = supported.get("Value") if isinstance(supported, dict) else None
                    if not isinstance(value, str) or not value:
                        left_out.append("a SupportedResource without Value")
                        continue
                    stock = aliyun_stock(supported.get("Status"), supported.get("StatusCategory"))
                    per_zone.setdefault(value, []).append(stock)
        return {itype: best_of(states) for itype, states in per_zone.items()}, left_out

    def spot_prices(self, region: str, instance_type: str) -> dict[str, Decimal]:
        """Zone → the latest spot price (CNY per hour) for one type; empty when spot is not offered."""
        params = {
            "RegionId": region,
            "InstanceType": instance_type,
            "NetworkType": "vpc",
            "OSType": "linux",
            "IoOptimized": "optimized",
        }
        data = self.call("DescribeSpotPriceHistory", params, region)
        latest: dict[str, tuple[str, Decimal]] = {}
        for row in _path(data, "SpotPrices", "SpotPriceType", action="DescribeSpotPriceHistory"):
            zone = row.get("ZoneId") if isinstance(row, dict) else None
            when = row.get("Timestamp") if isinstance(row, dict) else None
            if not isinstance(zone, str) or not zone or not isinstance(when, str) or not when:
                self.left_out.append(
                    f"DescribeSpotPriceHistory {instance_type}: a row lacks ZoneId/Timestamp"
                )
                continue
            try:  # SDK: SpotPrice float; null means no price in that row
                price = optional_price(
                    row.get("SpotPrice"), f"spot {region} {zone} {instance_type} SpotPrice"
                )
            except ItemSkipped as exc:
                self.left_out.append(f"DescribeSpotPriceHistory: {exc}")
                continue
            if price and (zone not in latest or when > latest[zone][0]):
                latest[zone] = (when, price)
        return {zone: price for zone, (_, price) in latest.items()}


def _number(value: Any) -> float | None:
    """A positive finite size (GiB, cores) or None: a spec figure of the wrong type is left out, not trusted."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e7:
        return None
    return float(value)


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 100_000 else None


def _path(data: Any, outer: str, inner: str, *, action: str) -> list[Any]:
    """``data[outer][inner]`` as a list (Aliyun wraps every list this way); a missing key is an error."""
    value = data.get(outer) if isinstance(data, dict) else None
    value = value.get(inner) if isinstance(value, dict) else None
    if not isinstance(value, list):
        raise ScrapeError(f"aliyun {action}: no {outer}.{inner} list in the answer")
    return value
