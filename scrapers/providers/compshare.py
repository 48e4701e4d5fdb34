"""优云智算 CompShare (UCloud's GPU marketplace): whole-machine prices per GPU type and count, idle cards.

Sources (read 2026-12-01): the UCloud API protocol (docs.ucloud.cn/api/summary/signature) on
``https://api.compshare.cn`` (the official compshare-cli's default endpoint), the ``ucompshare`` schemas
of the official ``ucloud-sdk-python3`` (HEAD 2026-05-20), the UCloud docs page of
``DescribeCompShareGpuInventory`` and the official ``compshare-cli`` (2026-07-31), which reads the
credentials from ``COMPSHARE_PUBLIC_KEY`` / ``COMPSHARE_PRIVATE_KEY`` (the names used here).

Protocol: every call is a GET of ``https://api.compshare.cn/?Action=...&PublicKey=...&<params>&Signature=``
where ``Signature`` is the SHA1 hex digest of every parameter sorted by name, each name followed by its
value with no separator and no URL escaping, then the private key (:func:`sign`; UCloud's worked
example is a test). Answers carry ``RetCode`` (0 = success) and ``Message``.

Per region (``DEFAULT_REGIONS`` unless configured): ``DescribeCompShareSupportZone`` (zones and their
numeric ids), ``DescribeCompShareGpuInventory`` (idle cards per pool, zone id and GPU type:
``{"Exclusive": {"10027": {"4090": 10}}, "Spot": {...}}``), then per zone
``DescribeAvailableCompShareInstanceTypes`` (GPU types with ``Status`` ``Normal``/``Soldout``, their
``GraphicsMemory.Value`` in GB and ``MachineSizes``: GPU counts with CPU/memory collections, memory in
GiB), then ``GetCompShareInstancePrice`` per GPU type and count, with the size's first CPU figure and
smallest memory, **once per charge type** (:data:`PRICE_CHARGE_TYPES`). The price call's docs (SDK
docstring, the same words as UHost's ``GetUHostInstancePrice``) name ``Year``, ``Month``, ``Dynamic``
(hourly) and ``Day``, and say a call without ``ChargeType`` "默认返回月付价格" (returns the monthly price);
the official CLI's price command leaves it out and reads one row per charge type. Asked once per mode,
every mode arrives under either reading: from each answer we take the row of the mode asked and ignore
the others. ``Postpay`` (hourly, postpaid) and ``Spot`` are named by ``CreateCompShareInstance``'s docs
and the CLI, not by the price call's: asked too (``Spot`` not for a type in ``SpotUnsupportedGpuTypes``);
an answer with no row for the mode asked counts as "not sold that way" in a note. ``Instance`` is the
machine (GPUs, CPU, memory; disks and image priced apart), in CNY per unit of the charge type:
``Postpay``/``Dynamic`` per hour, ``Spot`` per hour (interruptible), ``Day``, ``Month``, ``Year`` per
period (units assumed from the mode names; no answer of the live API was read).

GPU type ``Status`` (SDK: 可售|Normal, 公测|Beta, 售罄|Soldout, 隐藏|Hidden): ``Beta`` (public beta) types
are priced and stored like ``Normal`` ones, marked "公测 public beta" in the offer's source and
``extra["status"]``; ``Hidden`` and unknown words are skipped with a counted reason.

Key-name drift, both accepted: the docs and the SDK say ``PriceDetail``, the official CLI reads
``PriceDetails``; the docs and the SDK say ``GpuInventoryByZone`` (the SDK types it as a string, so a JSON
string is decoded too), a user's note reports the live API answering ``GpuInventory``.

A null or missing field skips one item (a GPU type, a price row) with a counted reason; an answer that
is not a UCloud envelope, or a price answer without either detail list, is a ScrapeError.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.stock import known_count
from scrapers.types import Issue, ProviderMode, ProviderSettings, to_price
from vocab import StockStatus

PROVIDER = "compshare"
API_URL = "https://api.compshare.cn/"
ENV_PUBLIC = "COMPSHARE_PUBLIC_KEY"
ENV_PRIVATE = "COMPSHARE_PRIVATE_KEY"
# Regions whose zones the official CLI's examples use (cn-wlcb-01 乌兰察布, cn-sh2-02 上海); an assumption:
# set [providers.compshare] regions to read others.
DEFAULT_REGIONS = ("cn-wlcb", "cn-sh2")
# ChargeType -> (canonical billing, unit)
CHARGE_TYPES: dict[str, tuple[str, str]] = {
    "Postpay": ("on_demand", "hour"),
    "Dynamic": ("on_demand", "hour"),
    "Spot": ("spot", "hour"),
    "Day": ("daily", "day"),
    "Month": ("monthly", "month"),
    "Year": ("yearly", "year"),
}
# The modes a price call is asked for, one call each (the docs' Year, Month, Dynamic, Day, then the
# CLI's and CreateCompShareInstance's Postpay and Spot). Uncertain: which of them a live account answers.
PRICE_CHARGE_TYPES = ("Dynamic", "Postpay", "Spot", "Day", "Month", "Year")
PRICED_STATUSES = {
    "Normal": StockStatus.AVAILABLE,
    "Beta": StockStatus.AVAILABLE,  # 公测: rentable, marked public beta in the offer's source
    "Soldout": StockStatus.SOLD_OUT,
}
BETA = "Beta"
BETA_NOTE = "公测 public beta (CompShare Status Beta)"
MAX_CNY_PER_GPU_HOUR = Decimal(200)  # an H800 rents for ~9 CNY per GPU-hour; 200 means a unit changed
REFUSED = "CompShare refused the keys (RetCode {}: {}): check COMPSHARE_PUBLIC_KEY and COMPSHARE_PRIVATE_KEY"
AUTH_RETCODES = frozenset({171, 172, 174})  # UCloud: signature error, public key error, no permission


class SkipItem(Exception):
    """One GPU type or price row cannot be used; the message is the counted reason."""


def encode_value(value: Any) -> str:
    """A parameter as UCloud signs it: bools as true/false, whole floats without ".0"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def sign(params: Mapping[str, Any], private_key: str) -> str:
    """UCloud's ``Signature``: SHA1 hex of the sorted name+value pairs followed by the private key."""
    text = "".join(f"{name}{encode_value(params[name])}" for name in sorted(params)) + private_key
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class GpuType:
    """One GPU type of a zone and the machine sizes it is sold in: (gpus, vcpus, memory GiB)."""

    name: str
    memory_gb: float | None
    status: str
    sizes: tuple[tuple[int, int, int], ...]


def envelope(payload: bytes, action: str) -> dict[str, Any]:
    """A UCloud answer with ``RetCode`` 0; a refused key or an unknown shape raises ScrapeError."""
    try:
        body = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ScrapeError(f"CompShare {action}: the answer is not JSON") from None
    if not isinstance(body, dict) or type(body.get("RetCode")) is not int:
        raise ScrapeError(f"CompShare {action}: no RetCode (not a UCloud answer; shape changed?)")
    code, message = body["RetCode"], str(body.get("Message") or "")[:120]
    if code in AUTH_RETCODES:
        raise ScrapeError(REFUSED.format(code, message))
    if code != 0:
        raise SkipItem(f"{action} RetCode {code}: {message}")
    return body


def parse_zones(body: dict[str, Any]) -> dict[str, str]:
    """``DescribeCompShareSupportZone`` -> {zone name: zone id as text}."""
    zones = body.get("ZoneInfo")
    if not isinstance(zones, list):
        raise ScrapeError("CompShare DescribeCompShareSupportZone: no ZoneInfo list (shape changed?)")
    return {
        str(z["Zone"]): str(z.get("ZoneId", ""))
        for z in zones
        if isinstance(z, dict) and isinstance(z.get("Zone"), str) and z["Zone"]
    }


def parse_inventory(body: dict[str, Any]) -> dict[str, dict[str, dict[str, int | None]]] | None:
    """Idle cards: {pool: {zone id: {GPU type: cards}}}; None when the answer has no inventory. A count
    that is not one (negative, fractional, text) is kept as None: that type's idle cards are unknown,
    where leaving it out would read as none free (sold out)."""
    raw = body.get("GpuInventoryByZone", body.get("GpuInventory"))
    if isinstance(raw, str):  # the SDK declares the field a string
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            return None
    if not isinstance(raw, dict):
        return None
    pools: dict[str, dict[str, dict[str, int | None]]] = {}
    for pool, zones in raw.items():
        if not isinstance(zones, dict):
            continue
        pools[str(pool)] = {
            str(zone): {str(g): known_count(n) for g, n in cards.items()}
            for zone, cards in zones.items()
            if isinstance(cards, dict)
        }
    return pools


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _size(entry: Any) -> tuple[int, int, int]:
    if not isinstance(entry, dict) or type(entry.get("Gpu")) is not int or not 0 < entry["Gpu"] <= 64:
        raise SkipItem("a MachineSizes entry has no GPU count")
    collections = [c for c in _list(entry.get("Collection")) if isinstance(c, dict)]
    for collection in collections:
        memories = [m for m in _list(collection.get("Memory")) if type(m) is int and m > 0]
        if type(collection.get("Cpu")) is int and collection["Cpu"] > 0 and memories:
            return entry["Gpu"], collection["Cpu"], min(memories)
    raise SkipItem(f"no CPU/memory size for {entry['Gpu']} GPUs")


def parse_gpu_types(body: dict[str, Any]) -> tuple[list[GpuType], Counter[str]]:
    """``DescribeAvailableCompShareInstanceTypes`` -> priced GPU types, and skip reasons counted."""
    types = body.get("AvailableInstanceTypes")
    if not isinstance(types, list):
        raise ScrapeError("CompShare DescribeAvailableCompShareInstanceTypes: no AvailableInstanceTypes list")
    out, skipped = [], Counter[str]()
    for raw in types:
        try:
            if not isinstance(raw, dict) or not isinstance(raw.get("Name"), str) or not raw["Name"]:
                raise SkipItem("a GPU type without Name")
            status = raw.get("Status")
            if not isinstance(status, str) or status not in PRICED_STATUSES:
                raise SkipItem(f"status {str(status)[:20]!r}")
            graphics = raw.get("GraphicsMemory")
            memory: Any = graphics.get("Value") if isinstance(graphics, dict) else None
            memory_gb = float(memory) if _number(memory) and 0 < memory < 10_000 else None
            sizes = tuple(sorted({_size(s) for s in _list(raw.get("MachineSizes"))}))
            if not sizes:
                raise SkipItem("no MachineSizes")
            out.append(GpuType(raw["Name"], memory_gb, str(status), sizes))
        except SkipItem as reason:
            skipped[f"GPU type {str(raw.get('Name') if isinstance(raw, dict) else raw)[:20]}: {reason}"] += 1
    return out, skipped


def parse_price(body: dict[str, Any], asked: str | None = None) -> tuple[dict[str, Decimal], Counter[str]]:
    """``GetCompShareInstancePrice`` -> {ChargeType: Instance price}, and unusable rows counted.

    ``asked``: the ChargeType the call named; only its rows are read (an answer may carry every mode's
    row, as the CLI reads it, or the asked one only, as the docs say).
    """
    details = body.get("PriceDetail", body.get("PriceDetails"))
    if not isinstance(details, list):
        raise ScrapeError(
            "CompShare GetCompShareInstancePrice: neither PriceDetail nor PriceDetails (shape changed?)"
        )
    prices: dict[str, Decimal] = {}
    skipped = Counter[str]()
    for row in details:
        if not isinstance(row, dict):
            skipped["a price row that is not an object"] += 1
            continue
        charge, value = row.get("ChargeType"), row.get("Instance")
        if asked is not None and charge != asked:
            continue  # another mode's row: read from the call that asks for it
        if not isinstance(charge, str) or charge not in CHARGE_TYPES:
            skipped[f"charge type {str(charge)[:20]!r} unknown"] += 1
        elif not _number(value):
            skipped[f"{charge} Instance price {str(value)[:20]!r}"] += 1
        else:
            prices[charge] = to_price(value, f"CompShare {charge} Instance price")
    return prices, skipped


class CompshareScraper:
    """CompShare marketplace (needs both keys: every UCloud API call is signed)."""

    name: ClassVar[str] = PROVIDER
    credential_env: ClassVar[tuple[str, ...]] = (ENV_PUBLIC, ENV_PRIVATE)
    credential_help: ClassVar[str] = (
        "the API public and private key of a CompShare account (console.compshare.cn, API 密钥), as the "
        "official compshare-cli reads them"
    )
    http_policy: ClassVar[HttpPolicy] = HttpPolicy(min_interval_s=0.2)

    def __init__(self) -> None:
        self.rows_used = self.rows_unused = 0  # price rows of the last scrape, usable or not
        self.no_row: Counter[str] = Counter()  # asked modes answered with no row of their own

    def mode(self, env: Mapping[str, str]) -> ProviderMode:
        """``account`` with both keys: prices of every GPU type and size, idle cards; else nothing."""
        if env.get(ENV_PUBLIC) and env.get(ENV_PRIVATE):
            return ProviderMode(
                "account", True, "whole-machine prices of every GPU type and size (hour, spot, day, month, "
                "year) and idle cards per zone"
            )  # fmt: skip
        return ProviderMode(
            "public",
            False,
            "nothing: every CompShare API call is signed with an account's keys (quotes use the last known prices)",
            unlock_env=(ENV_PUBLIC, ENV_PRIVATE),
        )

    def scrape(self, client: HttpClient, settings: ProviderSettings) -> Iterator[RawOffer | Issue]:
        """Per region: zones, inventory, GPU types per zone, then one price call per type and size."""
        public = settings.credentials.get(ENV_PUBLIC, "").strip()
        private = settings.credentials.get(ENV_PRIVATE, "").strip()
        if not (public and private):
            yield Issue("note", f"no {ENV_PUBLIC}/{ENV_PRIVATE}: every CompShare API call needs both")
            return
        skipped: Counter[str] = Counter()
        self.rows_used = self.rows_unused = 0
        self.no_row = Counter()
        for region in settings.regions or DEFAULT_REGIONS:
            try:
                yield from self._region(client, public, private, region, skipped)
            except SkipItem as failure:  # one region answered an error: the others go on
                yield Issue("region_failed", f"CompShare {region}: {failure}", region=region)
        if self.rows_unused and not self.rows_used:
            reasons = "; ".join(f"{n} x {why}" for why, n in skipped.most_common(3))
            raise ScrapeError(
                f"CompShare: none of {self.rows_unused} price rows was usable (shape changed?): {reasons}"
            )
        for reason, count in sorted(skipped.items()):
            yield Issue("skipped", f"CompShare: {count} x {reason}")
        if self.no_row:
            text = ", ".join(f"{charge} in {n}" for charge, n in sorted(self.no_row.items()))
            yield Issue("note", f"CompShare: asked per charge type, no price row (not sold that way): {text}")

    def _call(
        self, client: HttpClient, public: str, private: str, action: str, **params: Any
    ) -> dict[str, Any]:
        query = {"Action": action, "PublicKey": public, **{k: encode_value(v) for k, v in params.items()}}
        query["Signature"] = sign(query, private)
        return envelope(client.get(API_URL, params=query).content, action)

    def _region(
        self, client: HttpClient, public: str, private: str, region: str, skipped: Counter[str]
    ) -> Iterator[RawOffer | Issue]:
        zones = parse_zones(
            self._call(client, public, private, "DescribeCompShareSupportZone", Region=region)
        )
        stock_body = self._call(client, public, private, "DescribeCompShareGpuInventory", Region=region)
        inventory = parse_inventory(stock_body)
        no_spot = {g for g in _list(stock_body.get("SpotUnsupportedGpuTypes")) if isinstance(g, str)}
        if inventory is None:
            yield Issue("note", f"CompShare {region}: no GPU inventory in the answer; idle cards unknown")
        for zone, zone_id in sorted(zones.items()):
            try:
                body = self._call(
                    client,
                    public,
                    private,
                    "DescribeAvailableCompShareInstanceTypes",
                    Region=region,
                    Zone=zone,
                )
            except SkipItem as failure:
                yield Issue("region_failed", f"CompShare {zone}: {failure}", region=region)
                continue
            gpu_types, bad = parse_gpu_types(body)
            skipped.update(bad)
            for gpu in gpu_types:
                for gpus, vcpus, memory_gib in gpu.sizes:
                    prices: dict[str, Decimal] = {}
                    for charge in PRICE_CHARGE_TYPES:
                        if charge == "Spot" and gpu.name in no_spot:
                            continue  # listed as not sold as spot: asking would mislead
                        try:
                            answer = self._call(
                                client, public, private, "GetCompShareInstancePrice",
                                Region=region, Zone=zone, GpuType=gpu.name, Gpu=gpus, Cpu=vcpus,
                                Memory=memory_gib * 1024, MachineType="G", ChargeType=charge,
                            )  # fmt: skip
                        except SkipItem as failure:
                            skipped[f"{gpu.name} x{gpus} {charge} not priced ({failure})"] += 1
                            continue
                        found, bad_rows = parse_price(answer, charge)
                        self.rows_used += len(found)
                        self.rows_unused += sum(bad_rows.values())
                        skipped.update({f"{gpu.name} x{gpus}: {r}": n for r, n in bad_rows.items()})
                        if not found and not bad_rows:
                            self.no_row[charge] += 1
                        prices.update(found)
                    yield from self._offers(
                        region, zone, zone_id, gpu, gpus, vcpus, memory_gib, prices, inventory
                    )

    def _offers(
        self,
        region: str,
        zone: str,
        zone_id: str,
        gpu: GpuType,
        gpus: int,
        vcpus: int,
        memory_gib: int,
        prices: dict[str, Decimal],
        inventory: dict[str, dict[str, dict[str, int | None]]] | None,
    ) -> Iterator[RawOffer]:
        for charge, price in sorted(prices.items()):
            billing, unit = CHARGE_TYPES[charge]
            if unit == "hour" and price / gpus > MAX_CNY_PER_GPU_HOUR:
                raise ScrapeError(
                    f"CompShare {gpu.name} x{gpus} {charge}: {price} CNY per hour is absurd (unit changed?)"
                )
            pool = "Spot" if billing == "spot" else "Exclusive"
            zone_cards = (inventory or {}).get(pool, {}).get(zone_id)
            # The inventory lists a zone's free cards per type: a type it leaves out has none free; a
            # count that is not one (-1) says nothing (None): the type's status word decides.
            idle = None if zone_cards is None else zone_cards.get(gpu.name, 0)
            stock = PRICED_STATUSES[gpu.status]
            if stock == StockStatus.AVAILABLE and idle is not None and idle < gpus:
                stock = StockStatus.SOLD_OUT
            yield RawOffer(
                provider=PROVIDER,
                region=region,
                zone=zone,
                instance_type=f"{gpu.name} x{gpus}",
                gpu_name=gpu.name,
                gpu_count=float(gpus),
                billing=billing,
                price=price,
                unit=unit,
                gpu_memory_gb=gpu.memory_gb,
                vcpus=vcpus,
                memory_gb=float(memory_gib),
                stock_status=stock,
                idle_gpus=idle,
                source=(
                    f"compshare GetCompShareInstancePrice {charge} Instance (whole machine: GPUs, "
                    f"{vcpus} vCPU, {memory_gib} GiB; disks excluded)"
                    + (f"; {BETA_NOTE}" if gpu.status == BETA else "")
                ),
                extra={"zone_id": zone_id, "status": gpu.status},
            )
