"""Volcengine (火山引擎) ECS GPU prices: the public pricing calculator, plus the ECS OpenAPI for GPU facts.

Without an account we read the calculator backend ``/anonymous-api/trade/price`` (``ListTemplate`` for
specs, regions and zones; ``GetTable`` for hourly, monthly and yearly CNY list prices). Shapes come from
fuzzbuster/ec2instances.info ``volcengine/scrape.go`` (ECS template ``CLT7310571628986405164``) and a
public MCP adapter that discovers per-product templates (``GPU_Server``, ``HPC_GPU``) from the pricing
page's SSR loader and reads ``GetTable`` as ``Result.TableList[].Rows[]`` (both read 2026 via the search
index; unofficial, undocumented). Whether GPU types appear in any template is NOT verified: when none
do, the run says so in an Issue instead of returning nothing silently.

With ``VOLCENGINE_ACCESS_KEY``/``VOLCENGINE_SECRET_KEY`` the signed ``DescribeInstanceTypes`` says which
types carry which GPU, how many and how much memory (:mod:`scrapers.providers.volc_openapi`). Without it, only
types documented with their GPU count (``DOCUMENTED_TYPES``) are priced; other GPU families are skipped
with the reason, never guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar

from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.providers.volc_openapi import (
    OPENAPI_URL,
    Credentials,
    GpuSpec,
    VolcSigner,
    describe_instance_types,
    parse_instance_types,
)
from scrapers.types import Issue, ItemSkipped, ProviderMode, ProviderSettings, optional_price
from vocab import EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED

PROVIDER = "volcengine"
CALC_URL = "https://www.volcengine.com/anonymous-api/trade/price"
PRICING_PAGE_URL = "https://www.volcengine.com/pricing"
ENV_AK, ENV_SK = "VOLCENGINE_ACCESS_KEY", "VOLCENGINE_SECRET_KEY"
# Origin/Referer as the calculator page sends them (fuzzbuster volcengine/scrape.go, 2026-Q1).
CALC_HEADERS = {
    "Accept": "application/json",
    "Origin": "https://www.volcengine.com",
    "Referer": "https://www.volcengine.com/pricing?product=ECS&tab=2",
}
NO_GPU_TYPES = "the public Volcengine calculator lists no GPU instance types"
ECS_TEMPLATE_CODE = "CLT7310571628986405164"  # fuzzbuster volcengine/scrape.go, 2026-Q1
GPU_PRICING_PRODUCTS = ("GPU_Server", "HPC_GPU")  # pricing-page product codes, MCP adapter, 2026
MAX_CNY_PER_INSTANCE_HOUR = Decimal(2000)  # an 8-GPU H800 box is ~200/h; above this the shape changed

# Family -> GPU. "verified" per providers.md §3.3 (public repo READMEs, a helm doc); the rest inferred.
# Used for messages only: a price needs a GPU *count*, which only the API or DOCUMENTED_TYPES gives.
FAMILY_GPU: dict[str, tuple[str, str]] = {
    "gni2": ("NVIDIA A10", "verified"),
    "hpcpni3ln": ("NVIDIA H20", "verified"),
    "ini2": ("NVIDIA A30", "inferred"),
    "g1ve": ("NVIDIA V100", "inferred"),
    "g1tl": ("NVIDIA T4", "inferred"),
    "g1ie": ("NVIDIA T4", "inferred"),
    "pni2": ("NVIDIA A100/A800", "inferred"),
    "hpcpni2": ("NVIDIA A100/A800", "inferred"),
}
_GPU_FAMILY_HINT = re.compile(r"gn|pni|ini|g1ve|g1tl|g1ie|gpu")


DOCUMENTED_TYPES: dict[str, GpuSpec] = {
    # ecs.gni2.3xlarge = 14 vCPU / 56 GB / 1x A10 (public repo READMEs, providers.md §3.3)
    "ecs.gni2.3xlarge": GpuSpec("NVIDIA A10", 1, 24.0, "documented type (providers.md §3.3)"),
    # ecs.hpcpni3ln.45xlarge = 8x H20 (volcengine helm doc, providers.md §3.3)
    "ecs.hpcpni3ln.45xlarge": GpuSpec("NVIDIA H20", 8, 96.0, "documented type (providers.md §3.3)"),
}

# (Period, Times) -> (billing, unit). Times 24/36 (2- and 3-year totals) are deliberately not kept.
_PERIODS = {("hourly", 1): ("on_demand", "hour"), ("monthly", 1): ("monthly", "month")}
_PERIODS[("monthly", 12)] = ("yearly", "year")
_HOURS = {"hour": 1, "month": 730, "year": 8760}


@dataclass(frozen=True)
class CalcItem:
    """One instance type in one region, as the calculator template describes it."""

    instance_type: str
    region: str
    zones: tuple[str, ...] = ()
    vcpus: int | None = None
    memory_gb: float | None = None
    gpu: GpuSpec | None = None


@dataclass(frozen=True)
class PriceRow:
    """One ``GetTable`` price: instance type, region, canonical billing mode, unit and CNY."""

    instance_type: str
    region: str
    billing: str
    unit: str
    price: Decimal


@dataclass
class Outcome:
    """Offers plus what was left out and why (``skipped``: item -> reason)."""

    offers: list[RawOffer] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def _json(payload: bytes, what: str) -> Any:
    try:
        return json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ScrapeError(f"Volcengine {what}: the answer is not JSON (an HTML page?)") from None


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object nested anywhere in ``value`` (the calculator nests its objects unevenly)."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from _walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from _walk(child)


def _instance_type(code: Any) -> str | None:
    """``ecs.g3i.large.month`` -> ``ecs.g3i.large``; anything not shaped like an ECS type -> None."""
    if not isinstance(code, str):
        return None
    code = code.removesuffix(".month")
    return code if re.fullmatch(r"ecs\.[a-z0-9-]+\.[a-z0-9-]+", code) else None


def _leading_number(text: str) -> float | None:
    match = re.match(r"\s*(\d+(?:\.\d+)?)", text)
    return float(match.group(1)) if match else None


def _gpu_from_ability(value: str) -> GpuSpec | None:
    # Not seen in any sourced template; tolerated in case a GPU template carries "1 * NVIDIA A10".
    match = re.fullmatch(r"\s*(\d+)\s*[*×xX]\s*(.+?)\s*", value)
    if match:
        return GpuSpec(match.group(2), float(match.group(1)), None, "calculator template")
    match = re.fullmatch(r"\s*(.+?)\s*[*×xX]\s*(\d+)\s*", value)
    if match:
        return GpuSpec(match.group(1), float(match.group(2)), None, "calculator template")
    return None


def parse_list_template(payload: bytes) -> dict[tuple[str, str], CalcItem]:
    """``ListTemplate`` -> {(type, region): CalcItem}; ``Result.List[0].Template`` is a JSON string."""
    data = _json(payload, "ListTemplate")
    try:
        template = json.loads(data["Result"]["List"][0]["Template"])
    except (KeyError, IndexError, TypeError, ValueError, RecursionError) as exc:
        raise ScrapeError(f"Volcengine ListTemplate: no Result.List[0].Template string ({exc!r})") from None
    items: dict[tuple[str, str], CalcItem] = {}
    for obj in _walk(template):
        itype, region = _instance_type(obj.get("ConfigurationCode")), obj.get("Region")
        if itype is None or not isinstance(region, str) or not region:
            continue
        old = items.get((itype, region), CalcItem(itype, region))
        vcpus, memory_gb, gpu = old.vcpus, old.memory_gb, old.gpu
        attrs = obj.get("AbilityAttrs")
        for attr in attrs if isinstance(attrs, list) else []:
            if not isinstance(attr, dict):
                continue  # specs are a nicety beside the prices; an odd entry is left out
            ability, value = str(attr.get("Ability", "")).lower(), str(attr.get("Value", ""))
            if ability == "vcpu" and (n := _leading_number(value)) is not None and n < 100_000:
                vcpus = int(n)
            elif ability == "memory":
                memory_gb = _leading_number(value)
            elif "gpu" in ability:
                gpu = _gpu_from_ability(value) or gpu
        zones = old.zones
        try:
            zones += tuple(str(z["ZoneCode"]) for z in json.loads(obj.get("AvailableZone") or "[]"))
        except (ValueError, TypeError, KeyError, RecursionError):
            pass  # zones are a nicety; a malformed list must not cost the prices
        items[(itype, region)] = CalcItem(itype, region, tuple(dict.fromkeys(zones)), vcpus, memory_gb, gpu)
    if not items:
        raise ScrapeError("Volcengine ListTemplate: the template lists no ECS instance types (changed?)")
    return items


def parse_get_table(payload: bytes) -> tuple[list[PriceRow], dict[str, str]]:
    """``GetTable`` -> (price rows, skipped). Region is the ``ChargeItemCode`` suffix after the last ``_``."""
    rows: list[PriceRow] = []
    skipped: dict[str, str] = {}
    seen_any = False
    for obj in _walk(_json(payload, "GetTable")):
        if "PriceInfoList" not in obj:
            continue
        seen_any = True
        itype, charge_item = _instance_type(obj.get("ConfigurationCode")), obj.get("ChargeItemCode")
        if itype is None or not isinstance(charge_item, str) or "_" not in charge_item:
            continue  # not an instance row (disks, images, bandwidth share the table)
        region = charge_item.rsplit("_", 1)[1]
        infos = obj.get("PriceInfoList") or []
        if not isinstance(infos, list) or not all(isinstance(i, dict) for i in infos):
            skipped[f"{itype} {region}"] = "PriceInfoList is not a list of objects"
            continue
        for info in infos:
            period, times = info.get("Period"), info.get("Times")
            key = (period, times) if isinstance(period, str) and type(times) is int else None
            if key not in _PERIODS:
                if period not in ("hourly", "monthly"):
                    skipped[f"period {str(period)[:20]!r}"] = "unknown calculator period, not kept"
                continue
            billing, unit = _PERIODS[key]
            try:  # a CNY string ("253.38"); null or absent = no price for that period
                price = optional_price(info.get("Price"), f"Volcengine GetTable {itype} {region} {billing}")
            except ItemSkipped as exc:
                skipped[f"{itype} {region} {billing}"] = str(exc)
                continue
            if price is None:
                skipped[f"{itype} {region} {billing}"] = "no price in the calculator (null)"
                continue
            if price / _HOURS[unit] > MAX_CNY_PER_INSTANCE_HOUR:
                raise ScrapeError(f"Volcengine GetTable: {itype} {region} {billing} = {price} CNY is absurd")
            if price == 0:
                skipped[f"{itype} {region} {billing}"] = "price 0 in the calculator (not sold?)"
                continue
            rows.append(PriceRow(itype, region, billing, unit, price))
    if not seen_any:
        raise ScrapeError("Volcengine GetTable: no PriceInfoList anywhere in the answer (shape changed?)")
    return rows, skipped


def parse_template_codes(payload: bytes, product: str) -> list[str]:
    """Pricing-page SSR loader -> template codes, preferring ``Type == 1`` templates with tables."""
    data = _json(payload, f"pricing page {product}")
    try:
        templates = data["activeProductInfo"]["TemplateInfoList"]
        ranked = sorted(templates, key=lambda t: not (t.get("Type") == 1 and t.get("TableCodeList")))
        codes = [t["TemplateCode"] for t in ranked if isinstance(t.get("TemplateCode"), str)]
    except (KeyError, TypeError, AttributeError):
        raise ScrapeError(
            f"Volcengine pricing page {product}: no activeProductInfo.TemplateInfoList"
        ) from None
    if not codes:
        raise ScrapeError(f"Volcengine pricing page {product}: no template code")
    return codes


def build_offers(
    items: dict[tuple[str, str], CalcItem],
    rows: list[PriceRow],
    api_specs: dict[str, GpuSpec | None] | None,
    source: str,
) -> Outcome:
    """Join calculator prices with GPU facts. ``api_specs`` is None without an account."""
    out = Outcome()
    for row in rows:
        item = items.get((row.instance_type, row.region), CalcItem(row.instance_type, row.region))
        family = row.instance_type.split(".")[1]
        if api_specs is not None and row.instance_type in api_specs:
            gpu = api_specs[row.instance_type]
        else:
            gpu = item.gpu or DOCUMENTED_TYPES.get(row.instance_type)
        if gpu is None:
            if family in FAMILY_GPU:
                model, status = FAMILY_GPU[family]
                out.skipped[row.instance_type] = (
                    f"GPU family {family} ({model}, {status}) but its GPU count is unknown here; "
                    "set VOLCENGINE_ACCESS_KEY/VOLCENGINE_SECRET_KEY so DescribeInstanceTypes can say"
                )
            elif _GPU_FAMILY_HINT.search(family) and (
                api_specs is None or row.instance_type not in api_specs
            ):
                out.skipped[row.instance_type] = f"family {family} looks like a GPU family but is unmapped"
            continue  # otherwise a CPU type: not our business
        out.offers.append(
            RawOffer(
                provider=PROVIDER,
                region=row.region,
                instance_type=row.instance_type,
                gpu_name=gpu.name,
                gpu_count=gpu.count,
                billing=row.billing,
                price=row.price,
                unit=row.unit,
                gpu_memory_gb=gpu.memory_gb,
                vcpus=item.vcpus,
                memory_gb=item.memory_gb,
                # The calculator's AvailableZone lists where a type is sold, not what is in stock
                # now: no stock is claimed (quote would print "available"); the zones ride in extra.
                stock_status=None,
                source=source,
                extra={"gpu_source": gpu.source, "zones": ",".join(item.zones)}
                | _undocumented_size(gpu.memory_size_undocumented),
            )
        )
    return out


def _undocumented_size(size: float | None) -> dict[str, str]:
    return {} if size is None else {EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED: f"{size:g}"}


class VolcengineScraper:
    """Volcengine ECS GPU list prices. Options: ``pricing_products`` (default ``GPU_PRICING_PRODUCTS``)."""

    name: ClassVar[str] = PROVIDER
    credential_env: ClassVar[tuple[str, ...]] = (ENV_AK, ENV_SK)
    credential_help: ClassVar[str] = (
        "an AccessKey pair (IAM console > key management, ideally of a sub-user with read-only ECS access)"
    )
    http_policy: ClassVar[HttpPolicy] = HttpPolicy(min_interval_s=0.2)
    # The options a --from-raw replay takes from the manifest, and their kind (planner/ingest/manifest.py).
    replay_options: ClassVar[dict[str, str]] = {"pricing_products": "names"}

    @staticmethod
    def check(client: HttpClient, settings: ProviderSettings) -> str:
        """``planner providers --check``: the cheapest request of the mode in use, and what it answered."""
        creds = settings.credentials
        if creds.get(ENV_AK) and creds.get(ENV_SK):
            signer = VolcSigner(
                Credentials(creds[ENV_AK], creds[ENV_SK]),
                region="cn-beijing",
                service="ecs",
            )
            params = {"Action": "DescribeInstanceTypes", "Version": "2020-04-01", "MaxResults": "1"}
            specs, _ = parse_instance_types(client.get(OPENAPI_URL, params=params, signer=signer).content)
            return f"DescribeInstanceTypes answered ({len(specs)} type on the first page)"
        params = {"Action": "ListTemplate", "Version": "2020-01-01", "TemplateCode": ECS_TEMPLATE_CODE}
        items = parse_list_template(client.get(CALC_URL, params=params, headers=CALC_HEADERS).content)
        return f"the pricing calculator answered ({len(items)} instance types in the ECS template)"

    def mode(self, env: Mapping[str, str]) -> ProviderMode:
        """``account`` when both keys are set: GPU facts for every type from DescribeInstanceTypes."""
        if env.get(ENV_AK) and env.get(ENV_SK):
            return ProviderMode(
                "account",
                True,
                "calculator list prices (hourly, monthly, yearly) with GPU model, count and memory from "
                "DescribeInstanceTypes; no account discounts",
            )
        return ProviderMode(
            "public",
            False,
            "calculator list prices only for GPU types whose GPU count is documented (gni2.3xlarge, "
            "hpcpni3ln.45xlarge); other GPU families are reported as skipped",
            unlock_env=(ENV_AK, ENV_SK),
        )

    def scrape(self, client: HttpClient, settings: ProviderSettings) -> Iterator[RawOffer | Issue]:
        """Calculator templates (ECS + discovered GPU ones) joined with API GPU facts when keys are set."""
        creds = settings.credentials
        api_specs = None
        if creds.get(ENV_AK) and creds.get(ENV_SK):
            api_specs = describe_instance_types(client, Credentials(creds[ENV_AK], creds[ENV_SK]))
        templates = [(ECS_TEMPLATE_CODE, "ECS")]
        for product in settings.options.get("pricing_products", GPU_PRICING_PRODUCTS):
            params = {
                "product": product,
                "tab": "1",
                "__loader": "__ssr_without_user/pricing/page",
                "__ssrDirect": "true",
            }
            try:
                page = client.get(PRICING_PAGE_URL, params=params, headers={"Accept": "application/json"})
                code = parse_template_codes(page.content, product)[0]
            except ScrapeError as exc:
                yield Issue("warning", f"calculator product {product} not read: {exc}")
                continue
            if code not in (c for c, _ in templates):
                templates.append((code, product))
        offers: dict[tuple[str, str, str], RawOffer] = {}
        skipped: dict[str, str] = {}
        for code, label in templates:
            params = {"Action": "ListTemplate", "Version": "2020-01-01", "TemplateCode": code}
            items = parse_list_template(client.get(CALC_URL, params=params, headers=CALC_HEADERS).content)
            table = client.post(
                CALC_URL,
                params={"Action": "GetTable", "Version": "2020-01-01"},
                json_body={"TemplateCode": code},
                headers=CALC_HEADERS,
            )
            rows, row_skips = parse_get_table(table.content)
            outcome = build_offers(items, rows, api_specs, f"calculator {label} {code}")
            skipped |= row_skips | outcome.skipped
            for offer in outcome.offers:
                offers.setdefault((offer.instance_type, offer.region, offer.billing), offer)
        wanted = set(settings.regions)
        kept = [o for o in offers.values() if not wanted or o.region in wanted]
        yield from kept
        for item, reason in sorted(skipped.items()):
            yield Issue("skipped", reason, instance_type=item)
        if not kept:
            where = ", ".join(f"{label} {code}" for code, label in templates)
            yield Issue("note", f"{NO_GPU_TYPES} we can price (templates read: {where})")
