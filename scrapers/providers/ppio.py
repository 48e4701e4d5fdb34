"""PPIO 派欧云 GPU instances: every product's per-GPU prices (postpaid, spot, prepaid months) and stock.

Source: the official v2 API, ``GET https://api.ppio.com/gpus/v2/products?type=gpu&category=instance``
with ``Authorization: Bearer $PPIO_API_KEY`` (ppio.com/docs/gpus/reference-v2-list-gpu-products, read
2026-12). Its documented example (``tests/fixtures/ppio/products_v2.doc-example.verbatim.json``) fixes
the shape and the units:

- ``pricing.precision`` is the number of decimal places of every integer price: precision 3, postpaid
  ``final_price`` 12600 ``unit: "per_hour"`` = 12.600 CNY per hour, and the 1-month prepaid
  ``final_price`` 9072000 = 9,072.000 CNY = 12.6 x 720 h, so the integers are thousandths of a yuan
  there and the prepaid prices are per whole period.
- ``final_price`` is what a renter pays, ``base_price`` the list price before PPIO's discount.
- ``resource_spec.gpu``: ``min``/``max`` GPUs per instance, ``available`` (idle cards) and
  ``max_available`` (assumed: the most cards one instance can get now); ``inventory_state`` is
  ``"normal"`` in the example (other values are not documented).

**Assumed, not documented** (said again in the fixture README): that a product's price is for one GPU
(the product is sold in 1..``max`` cards, and v1 names its figures ``cpuPerGpu``/``memoryPerGpu``; a
per-machine price would make an A100 1.6 CNY per GPU-hour); that CPU and memory are included in it
(the product lists ``cpu``/``memory_gb`` and a separate ``storage_price_per_gb``); that products page
with ``next_cursor``/``has_more`` and a ``cursor`` query parameter, as ``GET /gpus/v2/instances``
documents; and that a month is the 720 h of the example (the planner itself counts 730 h a month).

Whether an offer can be had at all (the documented example carries both, ``true``; their meaning is
v1's and the field names', not spelled out for v2):

- ``deployable`` (v1 ``availableDeploy``: "whether an instance can be created"). ``false`` stores every
  offer of the product **sold out**, its source saying why (``not deployable``), and counts it in a note:
  the price is kept (the history stays whole) but no quote calls it rentable. Absent or not a bool: no
  verdict from it (the inventory fields decide, as before).
- ``activity`` ``{is_activity_product, active, purchasable}``. Assumed: while a product is in an activity
  (``is_activity_product`` or ``active`` true), ``final_price`` is the activity's (promotion) price and
  ``base_price`` the regular one. A promotion with ``purchasable: false`` cannot be bought, so the
  regular ``base_price`` is stored for that mode instead (the source says so); a mode with no
  ``base_price`` has no price one can pay and is stored sold out with that reason. No promotion limits
  (per-account caps, end dates) are documented in the v2 example; none are read.
- Inventory: ``max_available`` (the most cards one instance can get), else ``available``, else
  ``inventory_state``, decide sold out per GPU count (below).

Per product and GPU count n in 1, 2, 4, 8 (within ``min``..``max``) we yield ``per="gpu"`` offers
with ``gpu_count=n``: on_demand and spot per hour, monthly (1-month prepaid) and yearly (12-month
prepaid) per period. Other prepaid lengths (3, 6 months) are not a billing mode the planner models
and are counted in a note. A product with a null or missing field we need is skipped with a counted
reason; an answer that is not ``{"data": [...]}`` is a ScrapeError.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar

from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.types import Issue, ProviderMode, ProviderSettings, to_price
from vocab import StockStatus

PROVIDER = "ppio"
PRODUCTS_URL = "https://api.ppio.com/gpus/v2/products"
ENV_KEY = "PPIO_API_KEY"
QUERY = {"type": "gpu", "category": "instance"}
GPU_COUNTS = (1, 2, 4, 8)
MAX_PAGES = 50  # a few dozen products fit one page; 50 pages means the cursor loops
MAX_PRECISION = 6  # prices are stored with six decimal places
# An hourly price above this per GPU means the precision was misread (an H200 rents for ~30 CNY/h).
MAX_CNY_PER_GPU_HOUR = Decimal(200)
# prepaid duration_months -> (canonical billing, unit)
PREPAID_MODES: dict[int, tuple[str, str]] = {1: ("monthly", "month"), 12: ("yearly", "year")}
HOURLY_MODES: dict[str, str] = {"postpaid": "on_demand", "spot": "spot"}
SOLD_OUT_STATES = frozenset({"sold_out", "soldout", "out_of_stock", "none", "empty"})
NOT_DEPLOYABLE = "not deployable (PPIO deployable: false: an instance cannot be created)"
PROMO_UNBUYABLE = "promotion not purchasable (activity.purchasable: false)"
REFUSED = "PPIO refused the API key (HTTP {}): check PPIO_API_KEY (ppio.com console, API 密钥管理)"


class SkipProduct(Exception):
    """One product cannot be priced honestly; the message is the counted reason."""


@dataclass(frozen=True)
class Product:
    """One PPIO GPU product, prices already in CNY per GPU."""

    product_id: str
    name: str
    gpu_name: str
    gpu_memory_gb: float | None
    min_gpus: int
    max_gpus: int
    available: int | None
    max_available: int | None
    inventory_state: str | None
    region_ids: tuple[str, ...]
    vcpus: int | None
    memory_gb: float | None
    # billing -> (price per GPU per unit, list price or None, unit)
    prices: dict[str, tuple[Decimal, Decimal | None, str]]
    unmodelled: tuple[str, ...]  # prepaid lengths we do not store, e.g. "prepaid 3 months"
    deployable: bool | None = None  # None: not stated
    # billing -> why that mode cannot be had at the stored price (stored sold out with this reason)
    not_rentable: dict[str, str] = field(default_factory=dict)
    # billing -> a word on the price stored (the regular price standing in for an unbuyable promotion)
    price_notes: dict[str, str] = field(default_factory=dict)

    @property
    def not_deployable(self) -> bool:
        return self.deployable is False


def parse_page(payload: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """One products page -> (raw product dicts, the next cursor or None). An unknown shape raises."""
    try:
        body = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ScrapeError("PPIO gpus/v2/products: the answer is not JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        keys = sorted(body)[:5] if isinstance(body, dict) else type(body).__name__
        raise ScrapeError(f"PPIO gpus/v2/products: no data list (got {keys}; shape changed?)")
    cursor = body.get("next_cursor")
    more = body.get("has_more")
    if not isinstance(cursor, str) or not cursor or more is False:
        cursor = None
    return [p for p in body["data"] if isinstance(p, dict)], cursor


def _int(value: Any, what: str, low: int = 0, high: int = 10**12) -> int:
    if type(value) is not int or not low <= value <= high:
        raise SkipProduct(f"{what} {repr(value)[:20]} is not a whole number in [{low}, {high}]")
    return value


def _opt_int(value: Any) -> int | None:
    return value if type(value) is int and 0 <= value <= 10_000_000 else None


def _opt_number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e7
    return float(value) if ok else None


def _scaled(value: Any, precision: int, what: str) -> Decimal:
    """An integer price at ``precision`` decimal places as yuan: (12600, 3) -> Decimal("12.6")."""
    if type(value) is not int:
        raise SkipProduct(f"{what} {repr(value)[:20]} is not an integer price")
    return to_price(value, f"PPIO {what}") / Decimal(10) ** precision


def parse_product(raw: dict[str, Any]) -> Product:
    """One entry of ``data`` -> Product; SkipProduct names what is missing or null."""
    spec = raw.get("resource_spec")
    gpu = spec.get("gpu") if isinstance(spec, dict) else None
    pricing = raw.get("pricing")
    if not isinstance(gpu, dict):
        raise SkipProduct("resource_spec.gpu missing")
    if not isinstance(pricing, dict):
        raise SkipProduct("pricing missing")
    name = gpu.get("name") or raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SkipProduct("no GPU name")
    precision = _int(pricing.get("precision"), "pricing.precision", 0, MAX_PRECISION)
    min_gpus = _int(gpu.get("min", 1), "gpu.min", 1, 64)
    max_gpus = _int(gpu.get("max", min_gpus), "gpu.max", min_gpus, 64)
    prices: dict[str, tuple[Decimal, Decimal | None, str]] = {}
    for key, billing in HOURLY_MODES.items():
        block = pricing.get(key)
        if block is None:
            continue  # not sold this way (the product's billing_methods say the same)
        if not isinstance(block, dict):
            raise SkipProduct(f"pricing.{key} is not an object")
        unit = block.get("unit")
        if unit != "per_hour":
            raise SkipProduct(f"pricing.{key}.unit {str(unit)[:20]!r} is not per_hour")
        final = _scaled(block.get("final_price"), precision, f"pricing.{key}.final_price")
        base = block.get("base_price")
        listed = _scaled(base, precision, f"pricing.{key}.base_price") if base is not None else None
        if final > MAX_CNY_PER_GPU_HOUR:
            # Every price shares the precision: one absurd figure means all are misread.
            raise ScrapeError(
                f"PPIO product {raw.get('id')}: {key} {final} CNY per GPU-hour is absurd "
                f"(precision {precision} misread?)"
            )
        prices[billing] = (final, listed, "hour")
    unmodelled: list[str] = []
    prepaid = pricing.get("prepaid") or []
    if not isinstance(prepaid, list):
        raise SkipProduct("pricing.prepaid is not a list")
    for entry in prepaid:
        if not isinstance(entry, dict):
            raise SkipProduct("a pricing.prepaid entry is not an object")
        months = _int(entry.get("duration_months"), "prepaid.duration_months", 1, 120)
        if months not in PREPAID_MODES:
            unmodelled.append(f"prepaid {months} months")
            continue
        billing, unit = PREPAID_MODES[months]
        final = _scaled(entry.get("final_price"), precision, f"prepaid {months}m final_price")
        base = entry.get("base_price")
        listed = _scaled(base, precision, f"prepaid {months}m base_price") if base is not None else None
        prices[billing] = (final, listed, unit)
    if not prices:
        raise SkipProduct("no postpaid, spot or 1/12-month prepaid price")
    not_rentable: dict[str, str] = {}
    price_notes: dict[str, str] = {}
    if _promotion_unbuyable(raw.get("activity")):
        for billing, (final, listed, unit) in list(prices.items()):
            if listed is not None and listed > 0:
                prices[billing] = (listed, None, unit)
                price_notes[billing] = f"{PROMOTION_FALLBACK}; promotion price {final} not stored"
            else:
                not_rentable[billing] = f"{PROMO_UNBUYABLE}, and no regular price given"
    deployable = raw.get("deployable")
    state = raw.get("inventory_state")
    regions = raw.get("region_ids")
    return Product(
        product_id=str(raw.get("id") or name),
        name=str(raw.get("name") or name),
        gpu_name=name.strip(),
        gpu_memory_gb=_opt_number(gpu.get("memory_gb")),
        min_gpus=min_gpus,
        max_gpus=max_gpus,
        available=_opt_int(gpu.get("available")),
        max_available=_opt_int(gpu.get("max_available")),
        inventory_state=state if isinstance(state, str) else None,
        region_ids=tuple(str(r) for r in regions if isinstance(r, str) and r)
        if isinstance(regions, list)
        else (),
        vcpus=_opt_int(spec.get("cpu")) if isinstance(spec, dict) else None,
        memory_gb=_opt_number(spec.get("memory_gb")) if isinstance(spec, dict) else None,
        prices=prices,
        unmodelled=tuple(unmodelled),
        deployable=deployable if isinstance(deployable, bool) else None,
        not_rentable=not_rentable,
        price_notes=price_notes,
    )


PROMOTION_FALLBACK = f"{PROMO_UNBUYABLE}: the regular base_price stored"


def _promotion_unbuyable(activity: Any) -> bool:
    """A promotion is on (``is_activity_product`` or ``active``) and says it cannot be bought.

    ``purchasable: false`` outside an activity is not read as anything: the example shows the flag only
    beside the activity ones, and then ``final_price`` is no promotion to fall back from.
    """
    if not isinstance(activity, dict):
        return False
    on = activity.get("is_activity_product") is True or activity.get("active") is True
    return on and activity.get("purchasable") is False


def _stock(product: Product, gpus: int) -> str | None:
    """Whether an instance of ``gpus`` cards can be created now, where PPIO says."""
    if product.not_deployable:
        return StockStatus.SOLD_OUT  # idle cards or not, PPIO says no instance can be created
    if product.max_available is not None:
        return StockStatus.AVAILABLE if product.max_available >= gpus else StockStatus.SOLD_OUT
    if product.available is not None:
        return StockStatus.AVAILABLE if product.available >= gpus else StockStatus.SOLD_OUT
    state = (product.inventory_state or "").lower()
    if state == "normal":
        return StockStatus.AVAILABLE
    return StockStatus.SOLD_OUT if state in SOLD_OUT_STATES else None


def offers_of(product: Product) -> list[RawOffer]:
    """The product's offers: per region (one offer per region the product lists) and GPU count."""
    regions = product.region_ids or ("default",)
    # ``available`` counts the product's idle cards over all its regions: only a single-region
    # product can say how many of them are in that region.
    idle = product.available if len(regions) == 1 else None
    counts = [n for n in GPU_COUNTS if product.min_gpus <= n <= product.max_gpus] or [product.min_gpus]
    offers = []
    for region in regions:
        for n in counts:
            for billing, (price, listed, unit) in sorted(product.prices.items()):
                extra = {"product_id": product.product_id}
                if listed is not None and listed != price:
                    extra["list_price_per_gpu"] = str(listed)
                stock = _stock(product, n)
                words = [product.price_notes[billing]] if billing in product.price_notes else []
                why_not = [NOT_DEPLOYABLE] if product.not_deployable else []
                if billing in product.not_rentable:
                    why_not.append(product.not_rentable[billing])
                if why_not:
                    stock = StockStatus.SOLD_OUT
                    extra["not_rentable"] = "; ".join(why_not)
                    words += [f"stored sold out: {w}" for w in why_not]
                source = (
                    "ppio gpus/v2/products final_price per GPU (CPU and memory included; "
                    "per-GPU pricing assumed)"
                )
                if billing in product.price_notes:
                    source = source.replace("final_price", "base_price", 1)
                offers.append(
                    RawOffer(
                        provider=PROVIDER,
                        region=region,
                        instance_type=f"{product.name} x{n}",
                        gpu_name=product.gpu_name,
                        gpu_count=float(n),
                        billing=billing,
                        price=price,
                        unit=unit,
                        per="gpu",
                        gpu_memory_gb=product.gpu_memory_gb,
                        vcpus=product.vcpus * n if product.vcpus else None,
                        memory_gb=product.memory_gb * n if product.memory_gb else None,
                        stock_status=stock,
                        idle_gpus=idle,
                        # the reason first: a table cuts the source short
                        source=f"{'; '.join(words)}; {source}" if words else source,
                        extra=extra,
                    )
                )
    return offers


class PpioScraper:
    """PPIO GPU products (needs PPIO_API_KEY: the list is not public)."""

    name: ClassVar[str] = PROVIDER
    credential_env: ClassVar[tuple[str, ...]] = (ENV_KEY,)
    credential_help: ClassVar[str] = (
        "an API key from the PPIO console (ppio.com, 设置 > API 密钥管理), sent as Authorization: Bearer"
    )
    http_policy: ClassVar[HttpPolicy] = HttpPolicy(min_interval_s=0.5)

    def mode(self, env: Mapping[str, str]) -> ProviderMode:
        """``account`` with PPIO_API_KEY: every GPU product's prices and stock; without it nothing."""
        if env.get(ENV_KEY):
            return ProviderMode(
                "account", True, "every GPU product: per-GPU postpaid, spot and prepaid prices, idle cards"
            )
        return ProviderMode(
            "public",
            False,
            "nothing: PPIO lists its products only to an API key (quotes use the last known prices)",
            unlock_env=(ENV_KEY,),
        )

    def scrape(self, client: HttpClient, settings: ProviderSettings) -> Iterator[RawOffer | Issue]:
        """Every products page, then one offer per product, region, GPU count and billing mode."""
        key = settings.credentials.get(ENV_KEY, "").strip().removeprefix("Bearer ").strip()
        if not key:
            yield Issue("note", f"no {ENV_KEY}: PPIO lists its GPU products only to an API key")
            return
        wanted = set(settings.regions)
        skipped: Counter[str] = Counter()
        unmodelled: Counter[str] = Counter()
        not_deployable: list[str] = []
        unbuyable_promos: list[str] = []
        cursor: str | None = None
        yielded = priced = 0
        for _ in range(MAX_PAGES):
            params = dict(QUERY, **({"cursor": cursor} if cursor else {}))
            try:
                resp = client.get(PRODUCTS_URL, params=params, headers={"Authorization": f"Bearer {key}"})
            except ScrapeError as exc:
                for status in ("401", "403"):
                    if f"HTTP {status}" in str(exc):
                        raise ScrapeError(REFUSED.format(status)) from None
                raise
            products, cursor = parse_page(resp.content)
            for raw in products:
                try:
                    product = parse_product(raw)
                except SkipProduct as reason:
                    skipped[str(reason)] += 1
                    yield Issue("skipped", f"PPIO product {str(raw.get('id'))[:40]}: {reason}")
                    continue
                priced += 1
                unmodelled.update(product.unmodelled)
                if product.not_deployable:
                    not_deployable.append(product.product_id)
                if product.price_notes or product.not_rentable:
                    unbuyable_promos.append(product.product_id)
                for offer in offers_of(product):
                    if not wanted or offer.region in wanted:
                        yielded += 1
                        yield offer
            if cursor is None:
                break
        else:
            raise ScrapeError(f"PPIO gpus/v2/products: more than {MAX_PAGES} pages (the cursor loops?)")
        seen = sum(skipped.values()) + priced
        if seen and not priced:
            reasons = "; ".join(f"{n} x {why}" for why, n in skipped.most_common(3))
            raise ScrapeError(
                f"PPIO: none of the {seen} products could be priced (shape changed?): {reasons}"
            )
        if not_deployable:
            yield Issue(
                "note",
                f"{len(not_deployable)} product(s) {NOT_DEPLOYABLE}: stored sold out "
                f"({', '.join(not_deployable[:5])})",
            )
        if unbuyable_promos:
            yield Issue(
                "note",
                f"{len(unbuyable_promos)} product(s) with a {PROMO_UNBUYABLE}: the regular price stored "
                f"(sold out where none is given) ({', '.join(unbuyable_promos[:5])})",
            )
        if unmodelled:
            text = ", ".join(f"{n} x {what}" for what, n in sorted(unmodelled.items()))
            yield Issue("note", f"prepaid lengths not stored (only 1 and 12 months are): {text}")
        if not yielded and not skipped:
            yield Issue("note", "PPIO lists no priced GPU product" + (" in those regions" if wanted else ""))
