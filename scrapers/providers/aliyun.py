"""Aliyun ECS GPU prices.

Public mode (no account): the price calculator's CDN file
``https://g.alicdn.com/aliyun/ecs-price-info/<version>/price/download/instancePrice.json`` (list prices,
CNY, every region and type: hour, week, month and 1-5 years). ``<version>`` is found by regex on the
pricing page HTML (as cloudpilot-ai/priceserver does); the last version that worked is remembered in a
small JSON state file, and a built-in version is the last resort. The file names no GPU: GPU model and
count come from :mod:`scrapers.providers.aliyun_families`.

Account mode (``ALIBABA_CLOUD_ACCESS_KEY_ID`` / ``ALIBABA_CLOUD_ACCESS_KEY_SECRET``): the same list prices,
plus GPU specs from DescribeInstanceTypes, sold-out status from DescribeAvailableResource and spot prices
from DescribeSpotPriceHistory (:mod:`scrapers.providers.aliyun_api`).

Options (``settings.options``): ``state_path`` (file remembering the last good CDN version),
``cdn_version`` (pin a version, skip discovery), ``spot`` (bool, default True; account mode only).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.providers.aliyun_api import AliyunApi, GpuSpec
from scrapers.providers.aliyun_families import FAMILIES, family_of, gpu_count_from_name, looks_like_gpu
from scrapers.types import Issue, ItemSkipped, ProviderMode, ProviderSettings, optional_price

PRICING_PAGE = "https://www.aliyun.com/price/ecs/ecs-pricing/zh"
CDN_URL = "https://g.alicdn.com/aliyun/ecs-price-info/{version}/price/download/instancePrice.json"
# Newest version seen in public code (a repo fetching bandWidthPrice.json from 2.0.211; date unknown).
FALLBACK_VERSION = "2.0.211"
# The China-site file's folder, wherever the page names it: followed by "/price/...", a quote, a
# space or the end (not only "/"); "ecs-price-info-intl" (USD) does not match. Never a longer number.
_VERSION_IN_PAGE = re.compile(r"(?<![\w-])ecs-price-info/(\d+(?:\.\d+){1,3})(?!\.?\d)")
ENV_ID, ENV_SECRET = "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
# CDN period lists → (billing, unit). Only 1-unit periods: a 3-year total is not a price per unit.
_PERIODS = {
    "hours": ("on_demand", "hour"),
    "weeks": ("weekly", "week"),
    "months": ("monthly", "month"),
    "years": ("yearly", "year"),
}


def discover_version(html: str) -> str | None:
    """The newest ``ecs-price-info/<version>`` the pricing page links to, or None."""
    versions = set(_VERSION_IN_PAGE.findall(html))
    return max(versions, key=lambda v: tuple(int(p) for p in v.split("."))) if versions else None


class AliyunScraper:
    """Aliyun ECS: on-demand, weekly, monthly, yearly list prices; with an account also spot and stock."""

    name: ClassVar[str] = "aliyun"
    credential_env: ClassVar[tuple[str, ...]] = (ENV_ID, ENV_SECRET)
    credential_help: ClassVar[str] = (
        "an AccessKey pair of a RAM user (RAM console > Users > Create AccessKey) with read-only ECS access "
        "(the AliyunECSReadOnlyAccess policy)"
    )
    # ECS allows about 20 QPS (Max-Cheng throttles to 18); five a second is plenty for us.
    http_policy: ClassVar[HttpPolicy] = HttpPolicy(min_interval_s=0.2, read_timeout_s=120)
    # The options a --from-raw replay takes from the manifest, and their kind (planner/ingest/manifest.py).
    replay_options: ClassVar[dict[str, str]] = {"cdn_version": "version", "spot": "bool"}

    @staticmethod
    def check(client: HttpClient, settings: ProviderSettings) -> str:
        """``planner providers --check``: the cheapest request of the mode in use, and what it answered."""
        creds = settings.credentials
        if creds.get(ENV_ID) and creds.get(ENV_SECRET):
            data = AliyunApi(client, creds[ENV_ID], creds[ENV_SECRET]).call("DescribeRegions", {})
            regions = (
                (data.get("Regions") or {}).get("Region") if isinstance(data.get("Regions"), dict) else None
            )
            return f"DescribeRegions answered with {len(regions) if isinstance(regions, list) else 0} regions"
        version = discover_version(client.get(PRICING_PAGE).text)
        if version is None:
            return (
                "the pricing page answered but names no price-file version (the remembered one will be used)"
            )
        return f"the pricing page names price file {version}"

    @staticmethod
    def state_options(state_dir: Path) -> dict[str, Any]:
        """Options of a live run: the file remembering the last good price-file version."""
        return {"state_path": str(state_dir / "aliyun.json")}

    def mode(self, env: Mapping[str, str]) -> ProviderMode:
        if env.get(ENV_ID) and env.get(ENV_SECRET):
            return ProviderMode(
                "account",
                True,
                "List prices from the public price file, GPU specs, spot "
                "prices and sold-out status from the ECS API; not your account's discounts.",
            )
        return ProviderMode(
            "public",
            False,
            "List prices from the public price file; no spot prices, no "
            "stock, GPU counts from type names (vGPU slices skipped).",
            (ENV_ID, ENV_SECRET),
        )

    def scrape(self, client: HttpClient, settings: ProviderSettings) -> Iterator[RawOffer | Issue]:
        price_file, version, notes = self._price_file(client, settings.options)
        yield from notes
        api = specs = None
        if settings.credentials.get(ENV_ID) and settings.credentials.get(ENV_SECRET):
            api = AliyunApi(client, settings.credentials[ENV_ID], settings.credentials[ENV_SECRET])
            try:
                specs = api.gpu_specs()
            except ScrapeError as exc:
                yield Issue("region_failed", f"GPU specs unavailable, using the family table: {exc}")
        by_region: dict[str, list[RawOffer]] = {}
        for item in parse_price_file(price_file, version, settings.regions, specs or {}):
            if isinstance(item, Issue):
                yield item
            else:
                by_region.setdefault(item.region, []).append(item)
        for region, region_offers in sorted(by_region.items()):
            if api is None:
                yield from region_offers
                continue
            yield from self._account_extras(api, region, region_offers, settings.options.get("spot", True))
        if api is not None and api.left_out:
            yield Issue(
                "warning", f"aliyun API: {len(api.left_out)} items left out; the first: {api.left_out[0]}"
            )

    def _account_extras(
        self, api: AliyunApi, region: str, offers: list[RawOffer], spot: bool
    ) -> Iterator[RawOffer | Issue]:
        try:
            stock, left_out = api.availability(region)
        except ScrapeError as exc:
            stock, left_out = {}, []
            yield Issue("region_failed", f"aliyun {region} stock unknown: {exc}", region)
        if left_out:
            yield Issue(
                "skipped", f"aliyun {region} stock: {len(left_out)} entries left out ({left_out[0]})", region
            )
        for offer in offers:
            status = stock.get(offer.instance_type)
            yield replace(offer, stock_status=status) if status and offer.billing == "on_demand" else offer
        if not spot:
            return
        for offer in (o for o in offers if o.billing == "on_demand"):
            try:
                zones = api.spot_prices(region, offer.instance_type)
            except ScrapeError as exc:
                yield Issue("region_failed", f"aliyun {region} spot: {exc}", region, offer.instance_type)
                continue
            for zone, price in sorted(zones.items()):
                yield replace(
                    offer,
                    zone=zone,
                    billing="spot",
                    price=price,
                    unit="hour",
                    is_list_price=False,
                    source="aliyun:api DescribeSpotPriceHistory",
                    tiers=(),
                )

    def _price_file(self, client: HttpClient, options: Mapping[str, Any]) -> tuple[dict, str, list[Issue]]:
        notes: list[Issue] = []
        state = Path(options["state_path"]) if options.get("state_path") else None
        candidates: list[str] = []
        if options.get("cdn_version"):
            candidates.append(str(options["cdn_version"]))
        else:
            try:
                found = discover_version(client.get(PRICING_PAGE).text)
            except ScrapeError as exc:
                found = None
                notes.append(Issue("warning", f"price file version not discovered: {exc}"))
            if found:
                candidates.append(found)
            elif not notes:
                notes.append(Issue("warning", "price file version not found in the pricing page"))
            candidates += [v for v in (_read_state(state), FALLBACK_VERSION) if v and v not in candidates]
        errors = []
        for version in candidates:
            if not re.fullmatch(r"\d+(?:\.\d+){1,3}", version):
                errors.append(f"version {version[:20]!r} malformed")
                continue
            try:
                data = client.get(CDN_URL.format(version=version)).json()
            except ScrapeError as exc:
                errors.append(str(exc))
                continue
            if not isinstance(data, dict) or not isinstance(data.get("pricingInfo"), dict):
                errors.append(f"price file {version} has no pricingInfo object")
                continue
            if errors:
                notes.append(Issue("warning", f"using price file {version}: " + "; ".join(errors)))
            if state:
                _write_state(state, version)
            return data, version, notes
        raise ScrapeError("aliyun: no usable price file: " + "; ".join(errors))


def parse_price_file(
    data: Mapping[str, Any], version: str, regions: tuple[str, ...], specs: Mapping[str, GpuSpec]
) -> Iterator[RawOffer | Issue]:
    """Offers for every GPU type of the wanted regions (default: all ``cn-*``) in a CDN price file."""
    if not isinstance(data, Mapping) or not isinstance(data.get("pricingInfo"), Mapping):
        raise ScrapeError("aliyun price file: no pricingInfo object")
    currency = data.get("currency", "CNY")
    if not (isinstance(currency, str) and re.fullmatch(r"[A-Z]{3}", currency)):
        raise ScrapeError(f"aliyun price file: currency {currency!r} unknown")
    source = f"aliyun:cdn ecs-price-info/{version} instancePrice.json"
    for key, periods in data["pricingInfo"].items():
        parts = str(key).split("::")
        if len(parts) != 5 or not isinstance(periods, dict):
            raise ScrapeError(f"aliyun price file: key {str(key)[:60]!r} is not region::type::net::os::io")
        region, instance_type, network, os_type, _io = parts
        if network != "vpc" or os_type != "linux" or (regions and region not in regions):
            continue
        if not regions and not region.startswith("cn-"):
            continue
        spec = specs.get(instance_type)
        family = FAMILIES.get(family_of(instance_type) or "")
        if spec is None and not looks_like_gpu(instance_type):
            continue
        if spec is None and family is None:
            yield Issue(
                "skipped", f"aliyun {instance_type}: GPU family not in the table", region, instance_type
            )
            continue
        count = spec.gpu_count if spec else gpu_count_from_name(instance_type)
        if count is None:
            yield Issue(
                "skipped", f"aliyun {instance_type}: GPU count unknown from the name", region, instance_type
            )
            continue
        name = spec.gpu_name if spec else family.gpu_name  # type: ignore[union-attr]
        memory = spec.gpu_memory_gb if spec else family.gpu_memory_gb  # type: ignore[union-attr]
        note = None
        if spec is None and family is not None and family.inferred:
            note = f"GPU inferred from the {family_of(instance_type)} family, not stated by Aliyun"
        for period_key, (billing, unit) in _PERIODS.items():
            entries = periods.get(period_key) or []
            if not isinstance(entries, list):
                yield Issue("skipped", f"aliyun {key}: {period_key} is not a list", region, instance_type)
                continue
            for entry in entries:
                if not isinstance(entry, dict) or str(entry.get("period", "1")) != "1":
                    continue
                try:  # prices are strings in this file ("9.5326"); null or absent = not sold
                    price = optional_price(entry.get("price"), f"aliyun {key} {period_key} price")
                except ItemSkipped as exc:
                    yield Issue("skipped", str(exc), region, instance_type)
                    continue
                if not price:
                    continue  # 0 means "not sold", never free (priceserver data, gn6v-c8g1.4xlarge)
                yield RawOffer(
                    provider="aliyun",
                    region=region,
                    instance_type=instance_type,
                    gpu_name=name,
                    gpu_count=float(count),
                    gpu_memory_gb=memory,
                    billing=billing,
                    price=price,
                    unit=unit,
                    currency=currency,
                    vcpus=spec.vcpus if spec else None,
                    memory_gb=spec.memory_gb if spec else None,
                    source=source,
                    gpu_note=note,
                )


def _read_state(path: Path | None) -> str | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("cdn_version") if path else None
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _write_state(path: Path, version: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"cdn_version": version}), encoding="utf-8")
    except OSError:
        pass  # remembering is a convenience; a read-only disk must not fail the run
